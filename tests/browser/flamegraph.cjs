// SPDX-License-Identifier: MIT
//
// A flame graph cprof drew (-o NAME.svg), opened from file:// in a real
// browser (Debian's chromium, headless, driven by puppeteer-core) and used
// as a person would: hover, click to zoom, search with Ctrl-F, reset, reopen
// a link. Prints one line per check in the suite's protocol (ok NAME / not
// ok NAME - REASON), and "info NAME VALUE" lines with figures.
//
//   flamegraph.cjs --chromium PATH --svg FILE --shots DIR --name NAME
//                  [--expect-matched PERCENT]   the whole walk-through, on a
//                      graph with hot_a and hot_b frames; hot_a is PERCENT of all
//                  [--zoom-only]                load and zoom only (an icicle)
//                  [--measure]                  only the time to first paint
//
// Every request the page makes is recorded and, unless it is the file
// itself, refused: the graph must need nothing but itself.
"use strict";

const path = require("node:path");
const fs = require("node:fs");
const os = require("node:os");
const puppeteer = require("puppeteer-core");

const args = {};
for (let i = 2; i < process.argv.length; i++) {
	const a = process.argv[i].replace(/^--/, "");
	const takesValue = ["chromium", "svg", "shots", "name", "expect-matched"].includes(a);
	args[a] = takesValue ? process.argv[++i] : true;
}
const name = args.name || "browser";
const fileUrl = "file://" + path.resolve(args.svg);
let failures = 0;

function ok(check) {
	console.log(`ok ${name}_${check}`);
}
function notOk(check, why) {
	console.log(`not ok ${name}_${check} - ${why}`);
	failures++;
}
function check(checkName, cond, why) {
	if (cond) ok(checkName);
	else notOk(checkName, why);
}

// A new page at url; every request it makes is recorded, and refused unless
// it is for the graph's own file. before(page) runs before it loads.
async function open(browser, url, requests, before) {
	const page = await browser.newPage();
	await page.setViewport({width: 1220, height: 900});
	await page.setRequestInterception(true);
	page.on("request", (r) => {
		requests.push(r.url());
		if (r.url().split("#")[0] === fileUrl) r.continue();
		else r.abort();
	});
	if (before) await before(page);
	await page.goto(url, {waitUntil: "load"});
	return page;
}

// The frames as the page shows them: name, samples, the rect's attributes, the text, the classes.
function frames(page) {
	return page.$$eval("#frames > g", (gs) =>
		gs.map((g) => {
			const r = g.querySelector("rect");
			const m = /^([\s\S]*) \(([\d,]+) samples?, /.exec(g.querySelector("title").textContent);
			return {
				name: m ? m[1] : "",
				count: m ? +m[2].replace(/,/g, "") : 0,
				x: r.getAttribute("x"),
				width: r.getAttribute("width"),
				fill: r.getAttribute("fill"),
				text: g.querySelector("text").textContent,
				cls: g.getAttribute("class") || "",
			};
		}),
	);
}

// The center of the widest frame of that name, in page pixels.
async function centerOf(page, frameName) {
	return page.$$eval(
		"#frames > g",
		(gs, want) => {
			let best = null;
			for (const g of gs) {
				if (!g.querySelector("title").textContent.startsWith(want + " (")) continue;
				const b = g.querySelector("rect").getBoundingClientRect();
				if (!best || b.width > best.width) best = b;
			}
			return best && {x: best.x + best.width / 2, y: best.y + best.height / 2};
		},
		frameName,
	);
}

async function clickId(page, id) {
	const b = await page.$eval(id, (e) => {
		const r = e.getBoundingClientRect();
		return {x: r.x + r.width / 2, y: r.y + r.height / 2};
	});
	await page.mouse.click(b.x, b.y);
}

const text = (page, id) => page.$eval(id, (e) => e.textContent);
const widest = (fs, n) => fs.filter((f) => f.name === n).sort((a, b) => b.count - a.count)[0];

// Answers the next prompt() with answer, after doing what opens it.
async function answerPrompt(page, answer, action) {
	const asked = new Promise((resolve) =>
		page.once("dialog", async (d) => {
			await d.accept(answer);
			resolve(d.type());
		}),
	);
	await action();
	return asked;
}

async function shot(page, file) {
	await page.screenshot({path: path.join(args.shots, file), fullPage: true});
}

async function wellFormed(page) {
	const doc = await page.evaluate(() => ({
		root: document.documentElement.localName,
		ns: document.documentElement.namespaceURI,
		error: !!document.querySelector("parsererror"),
		frames: document.querySelectorAll("#frames > g").length,
	}));
	check("opens_as_svg", doc.root === "svg" && !doc.error && doc.frames > 0,
		`root ${doc.root} (${doc.ns}), parser error ${doc.error}, ${doc.frames} frames`);
}

async function walkThrough(browser, requests) {
	const page = await open(browser, fileUrl, requests);
	await wellFormed(page);
	const before = await frames(page);
	await shot(page, `${name}-before.png`);

	// Hover: name, samples, share of all.
	const a = await centerOf(page, "hot_a");
	await page.mouse.move(a.x, a.y);
	let details = await text(page, "#details");
	check("hover_shows_details", /^hot_a \([\d,]+ samples, \d+\.\d\d% of all\)$/.test(details),
		`details '${details}'`);

	// Search with Ctrl-F: hot_a highlighted, its share matched.
	const kind = await answerPrompt(page, "hot_a", async () => {
		await page.keyboard.down("Control");
		await page.keyboard.press("f");
		await page.keyboard.up("Control");
	});
	let matched = await text(page, "#matched");
	const m = /^Matched: (\d+\.\d)%$/.exec(matched);
	const want = +args["expect-matched"];
	check("ctrl_f_searches", kind === "prompt" && m !== null, `dialog ${kind}, matched '${matched}'`);
	check("search_matches_hot_a_share", m && Math.abs(+m[1] - want) <= 0.1,
		`'${matched}', hot_a is ${want}% of the samples`);
	let now = await frames(page);
	check("search_highlights",
		now.every((f) => (f.name === "hot_a") === (f.fill === "rgb(230,0,230)")),
		"highlighted: " + now.filter((f) => f.fill === "rgb(230,0,230)").map((f) => f.name).join(","));
	await shot(page, `${name}-search.png`);

	// Click hot_b: it spans the whole width, hot_a hides, its callers span it faded.
	const b = await centerOf(page, "hot_b");
	await page.mouse.click(b.x, b.y);
	now = await frames(page);
	const hb = widest(now, "hot_b");
	check("click_zooms", hb.x === "10.00" && hb.width === "1180.00" && hb.text === "hot_b",
		`hot_b at x ${hb.x} width ${hb.width} text '${hb.text}'`);
	check("zoom_hides_others", widest(now, "hot_a").cls.includes("hide") &&
		widest(now, "work").cls.includes("parent") && widest(now, "work").width === "1180.00",
		`hot_a '${widest(now, "hot_a").cls}', work '${widest(now, "work").cls}'`);
	details = await text(page, "#details");
	check("hover_shows_share_of_zoom", / of all, 100\.00% of hot_b\)$/.test(details), `'${details}'`);
	matched = await text(page, "#matched");
	check("search_kept_while_zoomed", /^Matched: \d+\.\d% \(0\.0% of zoom\)$/.test(matched), `'${matched}'`);
	const link = page.url();
	check("view_in_url", /#f=\d+&s=hot_a$/.test(link), `url ${link}`);
	await shot(page, `${name}-zoomed.png`);

	// The link reopens the same view.
	const again = await open(browser, link, requests);
	const reopened = widest(await frames(again), "hot_b");
	check("link_reopens_view", reopened.width === "1180.00" &&
		(await text(again, "#matched")) === matched, `hot_b width ${reopened.width}, '${await text(again, "#matched")}'`);
	await again.close();

	// Reset zoom, then the search: exactly the graph as it was drawn.
	await clickId(page, "#unzoom");
	now = await frames(page);
	const moved = now.filter((f, i) => f.x !== before[i].x || f.width !== before[i].width ||
		f.text !== before[i].text || f.cls !== before[i].cls);
	check("reset_zoom_restores", moved.length === 0,
		`${moved.length} frames differ, e.g. ${JSON.stringify(moved[0])}`);
	await clickId(page, "#search");
	now = await frames(page);
	check("reset_search_restores", now.every((f, i) => f.fill === before[i].fill) &&
		(await text(page, "#search")) === "Search" && !page.url().includes("#"),
		`search button '${await text(page, "#search")}', url ${page.url()}`);
	await shot(page, `${name}-reset.png`);

	// Case: ignored once toggled, then matched again.
	await clickId(page, "#ignorecase");
	await answerPrompt(page, "HOT_A", () => clickId(page, "#search"));
	const ic = await text(page, "#matched");
	await clickId(page, "#ignorecase");
	const cased = await text(page, "#matched");
	check("ignore_case_toggle", ic === `Matched: ${m && m[1]}%` && cased === "Matched: 0.0%",
		`ignoring case '${ic}', then '${cased}'`);
	await page.close();
}

async function zoomOnly(browser, requests) {
	const page = await open(browser, fileUrl, requests);
	await wellFormed(page);
	await shot(page, `${name}-before.png`);
	const b = await centerOf(page, "hot_b");
	await page.mouse.click(b.x, b.y);
	const hb = widest(await frames(page), "hot_b");
	check("click_zooms", hb.x === "10.00" && hb.width === "1180.00", `hot_b at ${hb.x} width ${hb.width}`);
	await shot(page, `${name}-zoomed.png`);
	await page.close();
}

// Time to the first paint of the whole graph: SVG documents get no paint
// timing entries, so it is taken as the second animation frame after the
// document was parsed (its script has run then), from navigation start.
async function measure(browser, requests) {
	const page = await open(browser, fileUrl, requests, (p) => p.evaluateOnNewDocument(() => {
		document.addEventListener("DOMContentLoaded", () => {
			window.cprofParsed = performance.now();
			requestAnimationFrame(() => requestAnimationFrame(() => {
				window.cprofPainted = performance.now();
			}));
		});
	}));
	await page.waitForFunction(() => window.cprofPainted !== undefined, {timeout: 60000});
	const t = await page.evaluate(() => ({
		parsed: window.cprofParsed,
		painted: window.cprofPainted,
		frames: document.querySelectorAll("#frames > g").length,
	}));
	console.log(`info ${name}_frames ${t.frames}`);
	console.log(`info ${name}_parsed_ms ${t.parsed.toFixed(0)}`);
	console.log(`info ${name}_first_paint_ms ${t.painted.toFixed(0)}`);
	check("opens", t.frames > 0, "no frames");
	await shot(page, `${name}.png`);
	await page.close();
}

async function main() {
	const requests = [];
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), "cprof-chromium-"));
	fs.mkdirSync(args.shots, {recursive: true});
	const browser = await puppeteer.launch({
		executablePath: args.chromium,
		headless: true,
		userDataDir: profile,
		// No sandbox: the tests run as root. Nothing of the browser's own reaches out.
		args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-default-apps", "--disable-extensions", "--mute-audio"],
	});
	try {
		if (args.measure) await measure(browser, requests);
		else if (args["zoom-only"]) await zoomOnly(browser, requests);
		else await walkThrough(browser, requests);
		const foreign = requests.filter((u) => u.split("#")[0] !== fileUrl);
		check("no_network_request", foreign.length === 0, "requested: " + foreign.join(" "));
	} finally {
		await browser.close();
		fs.rmSync(profile, {recursive: true, force: true});
	}
}

main().then(
	() => process.exit(failures ? 1 : 0),
	(e) => {
		notOk("runs", String(e && e.stack || e).split("\n").slice(0, 3).join(" | "));
		process.exit(1);
	},
);
