// SPDX-License-Identifier: MIT
//
// Test server for `cprof --server`. It answers the way the real servers do
// because it is built on real implementations, not on cprof's own code:
//
//   - Parca's ProfileStoreService/WriteRaw and Pyroscope's PusherService/Push
//     are served by @connectrpc/connect-node (Connect, gRPC and gRPC-Web over
//     HTTP/1.1) from the servers' .proto files in proto/, compiled at install
//     time by protoc into a descriptor set (api.binpb);
//   - every pprof is gunzipped and decoded by pprof-format, a complete
//     profile.proto reader, then checked the way Parca's normalizer and
//     Pyroscope's validation check it (dense IDs, label names, __name__ ...);
//   - /ingest is Pyroscope's legacy HTTP endpoint (name, from, until, format).
//
// Each request appends one JSON line to --log, accepted or not, so a test
// can assert what arrived, how often, and in which order. Faults are
// injected per request, in this order: --drop N (close the connection
// mid-response), --garbage N (answer bytes that are not HTTP), --fail N
// (HTTP 500), --unavailable N (the RPC error "unavailable"), then
// --reject MSG (every request: "invalid_argument"). --delay-ms N delays
// every answer.
//
// With --tls-cert and --tls-key it serves https (node:https) instead: the
// same handlers and log, and each accepted request's line adds tls (the
// protocol version), sni (the server name the client sent, if any) and
// clientCert (the subject CN of a client certificate, if any). A handshake
// that fails, on either side, is a line of its own: outcome
// "handshake-failed" with Node's error code, e.g.
// ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE, or the alert the client sent,
// e.g. ERR_SSL_TLSV1_ALERT_UNKNOWN_CA. --tls-max-version 1.2 makes a
// TLS-1.2-only server; --tls-client-ca FILE refuses every client without a
// certificate signed by a CA in FILE: with an alert when it sends none, by
// closing the connection at the end of the handshake when its certificate
// fails verification (code: the verify error, e.g.
// UNABLE_TO_VERIFY_LEAF_SIGNATURE).
// --stall-handshake accepts connections and never answers, TLS options or
// not: each is logged (outcome "stalled") once its first bytes, the
// ClientHello, arrive.
//
// Usage: node server.cjs --descriptors api.binpb --log FILE [--port N]
//        [--port-file FILE] [--only parca|pyroscope|ingest]... [--delay-ms N]
//        [--drop N] [--garbage N] [--fail N] [--unavailable N] [--reject MSG]
//        [--tls-cert FILE --tls-key FILE [--tls-max-version 1.2|1.3]
//        [--tls-client-ca FILE]] [--stall-handshake]
"use strict";

const fs = require("node:fs");
const http = require("node:http");
const https = require("node:https");
const net = require("node:net");
const zlib = require("node:zlib");
const crypto = require("node:crypto");
const { fromBinary, createFileRegistry } = require("@bufbuild/protobuf");
const { FileDescriptorSetSchema } = require("@bufbuild/protobuf/wkt");
const { ConnectError, Code, createContextKey, createContextValues } = require("@connectrpc/connect");
const { connectNodeAdapter } = require("@connectrpc/connect-node");
const { Profile } = require("pprof-format");

function parseArgs(argv) {
	const o = { port: 0, only: [], delayMs: 0, drop: 0, garbage: 0, fail: 0, unavailable: 0, reject: null };
	for (let i = 2; i < argv.length; i++) {
		const a = argv[i], v = argv[i + 1];
		switch (a) {
		case "--descriptors": o.descriptors = v; i++; break;
		case "--log": o.log = v; i++; break;
		case "--port": o.port = Number(v); i++; break;
		case "--port-file": o.portFile = v; i++; break;
		case "--only": o.only.push(v); i++; break;
		case "--delay-ms": o.delayMs = Number(v); i++; break;
		case "--drop": o.drop = Number(v); i++; break;
		case "--garbage": o.garbage = Number(v); i++; break;
		case "--fail": o.fail = Number(v); i++; break;
		case "--unavailable": o.unavailable = Number(v); i++; break;
		case "--reject": o.reject = v; i++; break;
		case "--tls-cert": o.tlsCert = v; i++; break;
		case "--tls-key": o.tlsKey = v; i++; break;
		case "--tls-max-version": o.tlsMaxVersion = v; i++; break;
		case "--tls-client-ca": o.tlsClientCa = v; i++; break;
		case "--stall-handshake": o.stallHandshake = true; break;
		default: throw new Error(`unknown argument ${a}`);
		}
	}
	if (!o.descriptors || !o.log) throw new Error("--descriptors and --log are required");
	if (!o.tlsCert !== !o.tlsKey) throw new Error("--tls-cert and --tls-key go together");
	if ((o.tlsMaxVersion || o.tlsClientCa) && !o.tlsCert)
		throw new Error("--tls-max-version and --tls-client-ca need --tls-cert");
	if (o.tlsMaxVersion && !["1.2", "1.3"].includes(o.tlsMaxVersion))
		throw new Error("--tls-max-version is 1.2 or 1.3");
	return o;
}

const opts = parseArgs(process.argv);
const serves = (p) => opts.only.length === 0 || opts.only.includes(p);

function record(entry) {
	fs.appendFileSync(opts.log, JSON.stringify({ t: Date.now(), ...entry }) + "\n");
}

// Prometheus' label name rule, which both Parca and Pyroscope apply.
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

// Parca's ValidatePprofProfile, and what pprof readers need besides.
function checkProfile(raw) {
	let buf = Buffer.from(raw);
	if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) buf = zlib.gunzipSync(buf);
	else throw new Error("profile is not gzipped");
	const p = Profile.decode(buf);
	const strings = p.stringTable.strings;
	const str = (i) => {
		const n = Number(i);
		if (n < 0 || n >= strings.length) throw new Error(`string index ${n} out of range`);
		return strings[n];
	};
	if (strings.length === 0 || strings[0] !== "") throw new Error("string table must start with \"\"");
	p.mapping.forEach((m, i) => {
		if (Number(m.id) !== i + 1) throw new Error("mapping id is not sequential");
		str(m.filename); str(m.buildId);
	});
	p.function.forEach((f, i) => {
		if (Number(f.id) !== i + 1) throw new Error("function id is not sequential");
		str(f.name); str(f.systemName);
	});
	p.location.forEach((l, i) => {
		if (Number(l.id) !== i + 1) throw new Error("location id is not sequential");
		if (Number(l.mappingId) > p.mapping.length) throw new Error("location has invalid mapping id");
		for (const ln of l.line)
			if (Number(ln.functionId) < 1 || Number(ln.functionId) > p.function.length)
				throw new Error("location has invalid function id");
	});
	if (p.sampleType.length !== 2 || str(p.sampleType[1].type) !== "cpu")
		throw new Error("expected sample types samples/count and cpu/nanoseconds");
	let samples = 0;
	for (const s of p.sample) {
		if (s.value.length !== p.sampleType.length) throw new Error("sample value count mismatch");
		for (const id of s.locationId)
			if (Number(id) < 1 || Number(id) > p.location.length) throw new Error("sample location out of range");
		for (const l of s.label) if (Number(l.key) === 0) throw new Error("sample label has no key");
		samples += Number(s.value[0]);
	}
	if (samples === 0) throw new Error("profile has no samples");
	const names = new Set();
	for (const f of p.function) names.add(str(f.name));
	return {
		samples,
		timeNanos: String(p.timeNanos),
		durationNanos: String(p.durationNanos),
		functions: [...names],
		sha256: crypto.createHash("sha256").update(raw).digest("hex"),
	};
}

function checkLabels(pairs, needServiceName) {
	const labels = {};
	for (const { name, value } of pairs) {
		if (!LABEL_NAME.test(name)) throw new Error(`invalid label name: ${name}`);
		if (name in labels) throw new Error(`duplicate label name: ${name}`);
		labels[name] = value;
	}
	if (!labels.__name__) throw new Error("missing __name__ label");
	if (!METRIC_NAME.test(labels.__name__)) throw new Error("invalid metric name");
	if (needServiceName && !labels.service_name) throw new Error("service name is not provided");
	return labels;
}

// What the TLS handshake of the request's connection settled (nothing over http).
function tlsInfo(socket) {
	if (!socket || !socket.encrypted) return {};
	const peer = socket.getPeerCertificate();
	return {
		tls: socket.getProtocol(),
		sni: socket.servername || undefined,
		clientCert: (peer && peer.subject && peer.subject.CN) || undefined,
	};
}

function requestInfo(header, socket) {
	return {
		authorization: header.get("authorization") || undefined,
		tenant: header.get("x-scope-orgid") || undefined,
		userAgent: header.get("user-agent") || undefined,
		// The one extra header the tests send (cprof --header).
		project: header.get("x-project") || undefined,
		...tlsInfo(socket),
	};
}

// The RPC handlers reach the request's socket through this context value.
const socketKey = createContextKey(undefined, { description: "socket" });

// Turns a validation failure into the error code the real servers answer with.
function validated(fn) {
	try {
		return fn();
	} catch (e) {
		throw new ConnectError(e.message, Code.InvalidArgument);
	}
}

const counters = { drop: opts.drop, garbage: opts.garbage, fail: opts.fail, unavailable: opts.unavailable };

function rpcFault(proto) {
	if (counters.unavailable > 0) {
		counters.unavailable--;
		record({ proto, outcome: "unavailable" });
		throw new ConnectError("injected outage", Code.Unavailable);
	}
	if (opts.reject !== null) {
		record({ proto, outcome: "rejected" });
		throw new ConnectError(opts.reject, Code.InvalidArgument);
	}
}

function accept(proto, info, series) {
	record({ proto, outcome: "accepted", ...info, series });
}

function reject(proto, info, err) {
	record({ proto, outcome: "invalid", error: err.rawMessage || err.message, ...info });
	throw err;
}

const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, fs.readFileSync(opts.descriptors)));
const parcaService = registry.getService("parca.profilestore.v1alpha1.ProfileStoreService");
const pushService = registry.getService("push.v1.PusherService");

// One RPC: injected faults first, then the request checked series by series.
async function serveRpc(name, req, ctx, toSeries) {
	const proto = `${name}-${ctx.protocolName}`;
	const info = requestInfo(ctx.requestHeader, ctx.values.get(socketKey));
	rpcFault(proto);
	let series;
	try {
		series = validated(() => req.series.map(toSeries));
	} catch (e) {
		reject(proto, info, e);
	}
	// An empty request is how a client probes for the service.
	if (series.length) accept(proto, info, series);
	return {};
}

function routes(router) {
	if (serves("parca"))
		router.service(parcaService, {
			writeRaw: (req, ctx) => serveRpc("parca", req, ctx, (s) => ({
				labels: checkLabels(s.labels ? s.labels.labels : [], false),
				profiles: s.samples.map((x) => checkProfile(x.rawProfile)),
			})),
		});
	if (serves("pyroscope"))
		router.service(pushService, {
			push: (req, ctx) => serveRpc("pyroscope", req, ctx, (s) => ({
				labels: checkLabels(s.labels, true),
				profiles: s.samples.map((x) => ({ id: x.ID, ...checkProfile(x.rawProfile) })),
			})),
		});
}

// Pyroscope's legacy ingest key: app.name{key=value,...}
function parseIngestName(name) {
	const m = /^([a-zA-Z0-9_.\-/]+)\{(.*)\}$/.exec(name || "");
	if (!m) throw new Error(`invalid name '${name}'`);
	const labels = { service_name: m[1] };
	for (const kv of m[2].split(",").filter(Boolean)) {
		const i = kv.indexOf("=");
		if (i < 1) throw new Error(`invalid label '${kv}'`);
		const k = kv.slice(0, i).trim();
		if (!/^[a-zA-Z0-9_.]+$/.test(k) || k === "__name__") throw new Error(`invalid label key '${k}'`);
		labels[k] = kv.slice(i + 1).trim();
	}
	return labels;
}

function ingest(req, res, body) {
	const url = new URL(req.url, "http://x");
	const info = requestInfo({ get: (h) => req.headers[h] }, req.socket);
	const text = (code, msg) => {
		res.writeHead(code, { "content-type": "text/plain" });
		res.end(msg + "\n");
	};
	if (req.method !== "POST") return text(405, "method not allowed");
	if (counters.unavailable > 0) {
		counters.unavailable--;
		record({ proto: "ingest", outcome: "unavailable" });
		return text(503, "injected outage");
	}
	if (opts.reject !== null) {
		record({ proto: "ingest", outcome: "rejected" });
		return text(400, opts.reject);
	}
	try {
		const q = url.searchParams;
		if (q.get("format") !== "pprof") throw new Error("format must be pprof");
		const from = Number(q.get("from")), until = Number(q.get("until"));
		if (!Number.isInteger(from) || !Number.isInteger(until) || from > until)
			throw new Error("from and until must be UNIX seconds, from <= until");
		const labels = parseIngestName(q.get("name"));
		const profile = checkProfile(body);
		accept("ingest", info, [{ labels, from, until, profiles: [profile] }]);
		text(200, "");
	} catch (e) {
		record({ proto: "ingest", outcome: "invalid", error: e.message, ...info });
		text(400, e.message);
	}
}

const adapter = connectNodeAdapter({
	routes,
	contextValues: (req) => createContextValues().set(socketKey, req.socket),
	fallback(req, res) {
		const chunks = [];
		req.on("data", (c) => chunks.push(c));
		req.on("end", () => {
			if (serves("ingest") && new URL(req.url, "http://x").pathname === "/ingest")
				return ingest(req, res, Buffer.concat(chunks));
			res.writeHead(404, { "content-type": "text/plain" });
			res.end("404 page not found\n");
		});
	},
});

function isUpload(req) {
	return req.method === "POST" && /WriteRaw$|Push$|^\/ingest/.test(req.url);
}

// Transport-level faults happen before the RPC layer, as a proxy's would.
function transportFault(req, res) {
	if (counters.drop > 0) {
		counters.drop--;
		req.resume();
		req.on("end", () => {
			record({ proto: "transport", outcome: "dropped" });
			res.socket.write("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n" +
				"Content-Length: 1000\r\n\r\npartial");
			res.socket.destroy();
		});
		return true;
	}
	if (counters.garbage > 0) {
		counters.garbage--;
		req.resume();
		req.on("end", () => {
			record({ proto: "transport", outcome: "garbage" });
			res.socket.end("SSH-2.0-not-http\r\n\r\n");
		});
		return true;
	}
	if (counters.fail > 0) {
		counters.fail--;
		req.resume();
		req.on("end", () => {
			record({ proto: "transport", outcome: "http-500" });
			res.writeHead(500, { "content-type": "text/plain" });
			res.end("injected internal server error\n");
		});
		return true;
	}
	return false;
}

function handle(req, res) {
	if (isUpload(req) && transportFault(req, res)) return;
	if (opts.delayMs > 0) setTimeout(() => adapter(req, res), opts.delayMs);
	else adapter(req, res);
}

function tlsOptions() {
	const o = { cert: fs.readFileSync(opts.tlsCert), key: fs.readFileSync(opts.tlsKey) };
	if (opts.tlsMaxVersion) o.maxVersion = `TLSv${opts.tlsMaxVersion}`;
	if (opts.tlsClientCa) {
		o.ca = fs.readFileSync(opts.tlsClientCa);
		o.requestCert = true;
		o.rejectUnauthorized = true;
	}
	return o;
}

// A server that takes the connection and then says nothing, not even to a ClientHello.
function stallingServer() {
	return net.createServer((socket) => {
		socket.on("error", () => {});
		socket.once("data", (d) => record({ proto: "tls", outcome: "stalled", clientHello: d[0] === 0x16 }));
		socket.resume();
	});
}

let server;
if (opts.stallHandshake) server = stallingServer();
else if (opts.tlsCert) {
	server = https.createServer(tlsOptions(), handle);
	// A client certificate that fails verification is not refused by an alert:
	// Node ends the handshake, then closes the connection, and the error is the
	// close (ECONNRESET). The code is then the certificate's verify error.
	server.on("tlsClientError", (err, socket) => {
		record({ proto: "tls", outcome: "handshake-failed", code: socket.authorizationError || err.code,
			error: err.reason || err.message, sni: socket.servername || undefined });
		socket.destroy();
	});
} else server = http.createServer(handle);
// A delayed reply must still reach a client that waits long enough.
server.requestTimeout = 0;
server.listen(opts.port, "127.0.0.1", () => {
	const port = server.address().port;
	if (opts.portFile) {
		fs.writeFileSync(opts.portFile + ".tmp", String(port));
		fs.renameSync(opts.portFile + ".tmp", opts.portFile);
	}
	process.stderr.write(`test server on ${opts.tlsCert ? "https://" : ""}127.0.0.1:${port}\n`);
});
process.on("SIGTERM", () => process.exit(0));
