// SPDX-License-Identifier: MIT
// A scripted debuginfod server for tests/e2e/symbolize_debuginfod.sh: it
// answers GET /buildid/<hex>/debuginfo the way one of the failures cprof must
// count (and survive) would, or well. Plain Node, no packages. Every request
// is logged as a JSON line. The real server (Debian's `debuginfod`) is the
// reference for the good case; this one plays the bad ones.
//
//   node debuginfod.cjs --mode MODE --log FILE --port-file FILE [--file F]
//                       [--build-id HEX]
//
// With --build-id, other build IDs get a plain 404 (the other files of the
// profiled process: its libc, its loader).
//
// MODE:
//   good           200 with the bytes of --file
//   late           the same, --delay-ms after the request (default 2500)
//   notfound       404
//   error          500
//   stall          accepts, reads the request, never answers
//   drip           200 with a Content-Length, then one byte a second
//   oversize       200 with 64 MiB of zeros (chunked; no length announced)
//   garbage        200 with bytes that are no ELF file
//   truncated      200 with a Content-Length, half the bytes of --file, then a close
//   redirect       302 to /r/buildid/..., which serves --file
//   redirect-loop  302 to itself, forever
//   wrong          200 with --file, whose build ID is not the one asked for
//   any            200 for any build ID: --file with its build ID (--file-build-id)
//                  replaced by the one asked for, then --pad-mb MiB of zeros, as a
//                  server an attacker runs (or fills) answers every binary it made
"use strict";
const fs = require("fs");
const http = require("http");

const o = { mode: "good" };
for (let i = 2; i < process.argv.length; i++) {
	const a = process.argv[i], v = process.argv[i + 1];
	switch (a) {
	case "--mode": o.mode = v; i++; break;
	case "--log": o.log = v; i++; break;
	case "--port-file": o.portFile = v; i++; break;
	case "--file": o.file = v; i++; break;
	case "--build-id": o.buildId = v; i++; break;
	case "--delay-ms": o.delayMs = Number(v); i++; break;
	case "--file-build-id": o.fileBuildId = v; i++; break;
	case "--pad-mb": o.padMb = Number(v); i++; break;
	default: throw new Error(`unknown argument ${a}`);
	}
}
if (!o.log) throw new Error("--log is required");
if (["good", "late", "truncated", "redirect", "wrong", "any"].includes(o.mode) && !o.file)
	throw new Error(`--mode ${o.mode} needs --file`);

function record(entry) {
	fs.appendFileSync(o.log, JSON.stringify({ t: Date.now(), mode: o.mode, ...entry }) + "\n");
}

const PATH = /^(\/r)?\/buildid\/([0-9a-f]+)\/debuginfo$/;
const sockets = new Set();

function handle(req, res) {
	const m = PATH.exec(req.url);
	record({ method: req.method, url: req.url });
	if (!m || (o.buildId && m[2] !== o.buildId)) {
		res.writeHead(404).end("Not found\n");
		return;
	}
	const body = () => fs.readFileSync(o.file);
	switch (o.mode) {
	case "good":
	case "wrong":
		res.writeHead(200, { "Content-Type": "application/octet-stream" }).end(body());
		break;
	case "late":
		setTimeout(() => res.writeHead(200).end(body()), o.delayMs ?? 2500);
		break;
	case "notfound":
		res.writeHead(404).end("Not found\n");
		break;
	case "error":
		res.writeHead(500).end("Internal server error\n");
		break;
	case "stall":
		break; // the socket stays open until the client gives up
	case "drip": {
		res.writeHead(200, { "Content-Length": "1000000" });
		const t = setInterval(() => res.write("x"), 1000);
		res.on("close", () => clearInterval(t));
		break;
	}
	case "oversize": {
		res.writeHead(200, { "Content-Type": "application/octet-stream" });
		const chunk = Buffer.alloc(1 << 20);
		let left = 64;
		const more = () => {
			while (left > 0) {
				left--;
				if (!res.write(chunk)) return res.once("drain", more);
			}
			res.end();
		};
		res.on("error", () => {});
		more();
		break;
	}
	case "garbage":
		res.writeHead(200).end(Buffer.from("this is not an ELF file\n".repeat(100)));
		break;
	case "truncated": {
		const b = body();
		res.writeHead(200, { "Content-Length": String(b.length) });
		res.write(b.subarray(0, b.length >> 1), () => res.socket.destroy());
		break;
	}
	case "redirect":
		if (m[1]) res.writeHead(200).end(body());
		else res.writeHead(302, { Location: "/r" + req.url }).end();
		break;
	case "any": {
		const b = Buffer.from(body());
		const at = b.indexOf(Buffer.from(o.fileBuildId, "hex"));
		const id = Buffer.from(m[2], "hex");
		if (at < 0 || id.length !== o.fileBuildId.length / 2) {
			res.writeHead(404).end("Not found\n");
			break;
		}
		id.copy(b, at);
		const pad = Buffer.alloc((o.padMb ?? 0) << 20);
		res.writeHead(200, { "Content-Length": String(b.length + pad.length) });
		res.end(Buffer.concat([b, pad]));
		break;
	}
	case "redirect-loop":
		res.writeHead(302, { Location: req.url }).end();
		break;
	default:
		res.writeHead(500).end(`unknown mode ${o.mode}\n`);
	}
}

const server = http.createServer(handle);
server.requestTimeout = 0;
server.on("connection", (s) => {
	sockets.add(s);
	s.on("close", () => sockets.delete(s));
});
server.listen(0, "127.0.0.1", () => {
	const port = server.address().port;
	if (o.portFile) {
		fs.writeFileSync(o.portFile + ".tmp", String(port));
		fs.renameSync(o.portFile + ".tmp", o.portFile);
	}
	process.stderr.write(`scripted debuginfod (${o.mode}) on 127.0.0.1:${port}\n`);
});
process.on("SIGTERM", () => {
	for (const s of sockets) s.destroy();
	server.close(() => process.exit(0));
});
