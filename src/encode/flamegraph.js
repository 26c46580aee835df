// The flame graph's interaction, inlined into every SVG cprof draws
// (src/encode/svg.c, which embeds this file at build time with its
// comment lines and indentation left out). No library, no network.
//
// The frames are read back from the document: each <g> of #frames holds
// <title>NAME (N samples, P%)</title>, a <rect> and a <text>, in the order
// svg.c writes them: a parent before its children, the children left to
// right from the parent's left edge. So a frame's first sample is where its
// left sibling's ended, its depth is its row, and zooming places frames by
// sample counts with svg.c's own rule (edges rounded to 1/100 pixel).
//
// The view (zoomed frame, search, case) is kept in the URL's fragment,
// #f=INDEX&s=REGEX&i=1, so a link or a reload reopens it.
"use strict";
(function () {
	var FONT = 12, FONT_W = 0.59, FRAME_H = 16, XPAD = 10, WIDTH = 1180;
	var HIGHLIGHT = "rgb(230,0,230)";
	var KINDS = {k: "kernel", j: "JIT", u: "no symbol", t: "truncated stack",
		l: "lost stack", p: "process", m: "merged", r: ""};
	var el = function (id) { return document.getElementById(id); };
	var area = el("frames"), details = el("details"), matched = el("matched");
	var unzoomBtn = el("unzoom"), searchBtn = el("search"), icBtn = el("ignorecase");
	var frames = [], zoomed = null, term = null, ic = false;

	function read() {
		var gs = area.children, open = [], y0 = null, i, g, r, m, f, up;
		for (i = 0; i < gs.length; i++) {
			g = gs[i];
			r = g.querySelector("rect");
			m = /^([\s\S]*) \(([\d,]+) samples?, [^)]*\)$/.exec(g.querySelector("title").textContent);
			if (!r || !m)
				continue;
			if (y0 === null)
				y0 = +r.getAttribute("y");
			f = {g: g, r: r, t: g.querySelector("text"), name: m[1], i: frames.length,
				count: +m[2].replace(/,/g, ""), fill: r.getAttribute("fill"),
				kind: KINDS[g.getAttribute("class")] || "",
				depth: Math.round(Math.abs(+r.getAttribute("y") - y0) / FRAME_H)};
			up = f.depth ? open[f.depth - 1] : null;
			f.start = up ? up.next : 0;
			if (up)
				up.next += f.count;
			f.next = f.start;
			open[f.depth] = f;
			g.frame = f;
			frames.push(f);
		}
	}

	function commas(n) {
		return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
	}

	function pct(part, whole, digits) {
		return (whole ? 100 * part / whole : 0).toFixed(digits) + "%";
	}

	// A frame's edge at sample s of n, in 1/100 pixel: svg.c's edge().
	function edge(s, n) {
		return XPAD * 100 + Math.floor((s * 200 * WIDTH + n) / (2 * n));
	}

	function fit(name, w) {
		var chars = Math.floor(w / 100 / (FONT * FONT_W));
		if (chars < 3)
			return "";
		return name.length <= chars ? name : name.slice(0, chars - 2) + "..";
	}

	function place(f, x0, x1) {
		f.r.setAttribute("x", (x0 / 100).toFixed(2));
		f.r.setAttribute("width", ((x1 - x0) / 100).toFixed(2));
		f.t.setAttribute("x", (x0 / 100 + 3).toFixed(2));
		f.t.textContent = fit(f.name, x1 - x0);
	}

	function inside(f, z) {
		return f.depth >= z.depth && f.start >= z.start && f.start + f.count <= z.start + z.count;
	}

	// Zooms to z: its frames fill the width, its callers span it faded, the rest hide.
	function zoom(z) {
		var i, f, under, above;
		if (!z.count)
			return;
		zoomed = z.depth ? z : null;
		for (i = 0; i < frames.length; i++) {
			f = frames[i];
			under = inside(f, z);
			above = f.depth < z.depth && f.start <= z.start &&
				f.start + f.count >= z.start + z.count;
			f.g.classList.toggle("hide", !under && !above);
			f.g.classList.toggle("parent", above);
			if (under)
				place(f, edge(f.start - z.start, z.count), edge(f.start + f.count - z.start, z.count));
			else if (above)
				place(f, edge(0, 1), edge(1, 1));
		}
		unzoomBtn.classList.toggle("hide", !zoomed);
		if (term !== null)
			search(term);
		save();
	}

	function describe(f) {
		var s = f.name + (f.kind ? " [" + f.kind + "]" : "") + " (" + commas(f.count) +
			" samples, " + pct(f.count, frames[0].count, 2) + " of all";
		if (zoomed && inside(f, zoomed))
			s += ", " + pct(f.count, zoomed.count, 2) + " of " + fit(zoomed.name, 30000);
		return s + ")";
	}

	// The samples under frames the expression matches: a match under another
	// match (recursion) is inside its span and counted once.
	function search(t) {
		var re = null, hits = [], sum = 0, inZoom = 0, end = -1, z = zoomed || frames[0], i, f, a, b;
		term = t;
		if (t !== null) {
			try {
				re = new RegExp(t, ic ? "i" : "");
			} catch (e) {
				matched.textContent = "Not a regular expression: " + t;
			}
		}
		for (i = 0; i < frames.length; i++) {
			f = frames[i];
			if (re && re.test(f.name)) {
				hits.push(f);
				f.r.setAttribute("fill", HIGHLIGHT);
			} else {
				f.r.setAttribute("fill", f.fill);
			}
		}
		hits.sort(function (x, y) { return x.start - y.start || y.count - x.count; });
		for (i = 0; i < hits.length; i++) {
			f = hits[i];
			if (f.start < end)
				continue;
			end = f.start + f.count;
			sum += f.count;
			a = Math.max(f.start, z.start);
			b = Math.min(end, z.start + z.count);
			if (b > a)
				inZoom += b - a;
		}
		searchBtn.textContent = t === null ? "Search" : "Reset Search";
		if (re)
			matched.textContent = "Matched: " + pct(sum, frames[0].count, 1) +
				(zoomed ? " (" + pct(inZoom, zoomed.count, 1) + " of zoom)" : "");
		else if (t === null)
			matched.textContent = " ";
		save();
	}

	function ask() {
		var t = prompt("Search frames for a regular expression" + (ic ? " (ignoring case)" : ""),
			term || "");
		if (t)
			search(t);
	}

	function save() {
		var p = [], h;
		if (zoomed)
			p.push("f=" + zoomed.i);
		if (term !== null)
			p.push("s=" + encodeURIComponent(term));
		if (ic)
			p.push("i=1");
		h = p.length ? "#" + p.join("&") : "";
		try {
			history.replaceState(null, "", location.href.split("#")[0] + h);
		} catch (e) {
			location.hash = h;
		}
	}

	function restore() {
		var q = {}, parts = location.hash.slice(1).split("&"), i, kv;
		for (i = 0; i < parts.length; i++) {
			kv = parts[i].split("=");
			try {
				q[kv[0]] = decodeURIComponent(kv.slice(1).join("="));
			} catch (e) {
				// A fragment mangled on its way: that part of the view is not restored.
			}
		}
		ic = q.i === "1";
		icBtn.classList.toggle("on", ic);
		if (q.f && frames[+q.f])
			zoom(frames[+q.f]);
		if (q.s)
			search(q.s);
	}

	function frameOf(ev) {
		var g = ev.target.closest && ev.target.closest("#frames > g");
		return g ? g.frame : null;
	}

	read();
	if (!frames.length)
		return;
	area.addEventListener("mouseover", function (ev) {
		var f = frameOf(ev);
		if (f)
			details.textContent = describe(f);
	});
	area.addEventListener("mouseout", function (ev) {
		if (frameOf(ev))
			details.textContent = " ";
	});
	area.addEventListener("click", function (ev) {
		var f = frameOf(ev);
		if (f) {
			zoom(f);
			details.textContent = describe(f);
		}
	});
	unzoomBtn.addEventListener("click", function () {
		zoom(frames[0]);
	});
	searchBtn.addEventListener("click", function () {
		if (term === null)
			ask();
		else
			search(null);
	});
	icBtn.addEventListener("click", function () {
		ic = !ic;
		icBtn.classList.toggle("on", ic);
		if (term !== null)
			search(term);
		else
			save();
	});
	window.addEventListener("keydown", function (ev) {
		if (ev.key === "F3" || ((ev.ctrlKey || ev.metaKey) && (ev.key === "f" || ev.key === "F"))) {
			ev.preventDefault();
			ask();
		} else if (ev.key === "Escape" && zoomed) {
			zoom(frames[0]);
		}
	});
	restore();
})();
