// SPDX-License-Identifier: MIT
//
// HTTP proxy for the tests of `cprof --server` through a proxy, on
// 127.0.0.1, from Node's built-ins only. It tunnels CONNECT host:port (how
// https goes through a proxy) and forwards absolute-form requests
// (`POST http://host:port/path`, how plain http does).
//
// Each request appends one JSON line to --log: method, target (host:port
// or the absolute URL), proxyAuthorization (the Proxy-Authorization header,
// if any) and outcome: "tunnel" or "forwarded" when it went through, else
// "auth-required" (407), "refused" (403), "bad-request" (400) or
// "bad-gateway" (502: the target did not answer). --require-auth USER:PASS
// answers 407 with Proxy-Authenticate to a request without those Basic
// credentials; --refuse answers 403 to everything.
//
// Usage: node proxy.cjs --log FILE [--port N] [--port-file FILE]
//        [--require-auth USER:PASS] [--refuse]
"use strict";

const fs = require("node:fs");
const http = require("node:http");
const net = require("node:net");

function parseArgs(argv) {
	const o = { port: 0, requireAuth: null, refuse: false };
	for (let i = 2; i < argv.length; i++) {
		const a = argv[i], v = argv[i + 1];
		switch (a) {
		case "--log": o.log = v; i++; break;
		case "--port": o.port = Number(v); i++; break;
		case "--port-file": o.portFile = v; i++; break;
		case "--require-auth": o.requireAuth = v; i++; break;
		case "--refuse": o.refuse = true; break;
		default: throw new Error(`unknown argument ${a}`);
		}
	}
	if (!o.log) throw new Error("--log is required");
	return o;
}

const opts = parseArgs(process.argv);
const wantAuth = opts.requireAuth === null ? null : "Basic " + Buffer.from(opts.requireAuth).toString("base64");

function record(req, outcome, extra) {
	fs.appendFileSync(opts.log, JSON.stringify({
		t: Date.now(),
		method: req.method,
		target: req.url,
		proxyAuthorization: req.headers["proxy-authorization"] || undefined,
		outcome,
		...extra,
	}) + "\n");
}

// The answer to a request the proxy does not let through, or null.
function gate(req) {
	if (opts.refuse) return { outcome: "refused", status: 403, headers: {} };
	if (wantAuth !== null && req.headers["proxy-authorization"] !== wantAuth)
		return {
			outcome: "auth-required", status: 407,
			headers: { "Proxy-Authenticate": 'Basic realm="cprof-test-proxy"' },
		};
	return null;
}

// An answer on a raw socket (CONNECT), after which the connection closes.
function answerRaw(socket, status, headers, body) {
	let head = `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n`;
	for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
	socket.end(head + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n` + body);
}

function answer(res, status, headers, body) {
	res.writeHead(status, { ...headers, "Content-Type": "text/plain", Connection: "close" });
	res.end(body);
}

// CONNECT host:port: a TCP tunnel once the target accepts.
function tunnel(req, client, head) {
	client.on("error", () => {});
	const no = gate(req);
	if (no) {
		record(req, no.outcome);
		return answerRaw(client, no.status, no.headers, `${http.STATUS_CODES[no.status]}\n`);
	}
	const m = /^(.+):(\d+)$/.exec(req.url);
	if (!m) {
		record(req, "bad-request");
		return answerRaw(client, 400, {}, "CONNECT wants host:port\n");
	}
	const target = net.connect(Number(m[2]), m[1].replace(/^\[(.*)\]$/, "$1"));
	let connected = false;
	target.on("connect", () => {
		connected = true;
		record(req, "tunnel");
		client.write("HTTP/1.1 200 Connection established\r\n\r\n");
		if (head.length) target.write(head);
		target.pipe(client);
		client.pipe(target);
	});
	target.on("error", (e) => {
		if (!connected) {
			record(req, "bad-gateway", { error: e.code });
			answerRaw(client, 502, {}, `cannot reach ${req.url}: ${e.code}\n`);
		} else client.destroy();
	});
	client.on("close", () => target.destroy());
	target.on("close", () => client.destroy());
}

const HOP_BY_HOP = ["connection", "keep-alive", "proxy-authorization", "proxy-connection", "te",
	"trailer", "transfer-encoding", "upgrade"];

// GET/POST http://host:port/path: the request sent on, the answer sent back.
function forward(req, res) {
	const no = gate(req);
	if (no) {
		record(req, no.outcome);
		req.resume();
		return answer(res, no.status, no.headers, `${http.STATUS_CODES[no.status]}\n`);
	}
	let url;
	try {
		url = new URL(req.url);
	} catch {
		url = null;
	}
	if (!url || url.protocol !== "http:") {
		record(req, "bad-request");
		req.resume();
		return answer(res, 400, {}, "this proxy forwards absolute-form http:// requests\n");
	}
	const headers = { ...req.headers };
	for (const h of HOP_BY_HOP) delete headers[h];
	const up = http.request({
		host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
		port: url.port || 80,
		method: req.method,
		path: url.pathname + url.search,
		headers,
	}, (ures) => {
		record(req, "forwarded", { status: ures.statusCode });
		const rh = { ...ures.headers };
		for (const h of HOP_BY_HOP) delete rh[h];
		res.writeHead(ures.statusCode, rh);
		ures.pipe(res);
	});
	up.on("error", (e) => {
		record(req, "bad-gateway", { error: e.code });
		if (!res.headersSent) answer(res, 502, {}, `cannot reach ${url.host}: ${e.code}\n`);
		else res.destroy();
	});
	req.pipe(up);
}

const server = http.createServer(forward);
server.on("connect", tunnel);
server.requestTimeout = 0;
server.listen(opts.port, "127.0.0.1", () => {
	const port = server.address().port;
	if (opts.portFile) {
		fs.writeFileSync(opts.portFile + ".tmp", String(port));
		fs.renameSync(opts.portFile + ".tmp", opts.portFile);
	}
	process.stderr.write(`test proxy on 127.0.0.1:${port}\n`);
});
process.on("SIGTERM", () => process.exit(0));
