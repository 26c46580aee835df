// SPDX-License-Identifier: MIT
//
// Assertions on what the test server received (its JSON-lines log), for the
// e2e tests. Exits 0 when the check holds; otherwise prints why and exits 1.
//
//   check.cjs LOG accepted N            exactly N requests were accepted
//   check.cjs LOG attempts N            exactly N requests arrived (any outcome)
//   check.cjs LOG outcomes              prints the outcomes in order
//   check.cjs LOG label NAME VALUE      every accepted series has NAME=VALUE
//                                       (VALUE "*": any non-empty value)
//   check.cjs LOG some-label NAME REGEX at least one series has a matching NAME
//   check.cjs LOG function NAME         some accepted profile has function NAME
//   check.cjs LOG field NAME VALUE      every accepted request had header field
//                                       NAME (authorization, tenant) = VALUE
//   check.cjs LOG intervals N           the accepted requests are N intervals,
//                                       each once, in order, back to back
//   check.cjs LOG ordered N             N intervals, each once, in order (gaps allowed)
//   check.cjs LOG function-in I NAME    accepted request I (negative: from the
//                                       last) has function NAME
//   check.cjs LOG no-function-in I NAME ... has no function NAME
//   check.cjs LOG function-after I NAME some accepted request after I has NAME
"use strict";

const fs = require("node:fs");

const [, , log, check, ...args] = process.argv;
const records = fs.existsSync(log)
	? fs.readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
	: [];
const accepted = records.filter((r) => r.outcome === "accepted");
const series = accepted.flatMap((r) => r.series);

function fail(msg) {
	console.log(msg);
	process.exit(1);
}

function count(what, got, want) {
	if (got !== Number(want)) fail(`${what}: ${got}, want ${want} (outcomes: ${outcomes()})`);
}

function outcomes() {
	return records.map((r) => r.outcome).join(",") || "none";
}

// One interval per request: every series of a request covers the same time.
function intervalOf(r) {
	const ts = new Set(r.series.flatMap((s) => s.profiles.map((p) => `${p.timeNanos}/${p.durationNanos}`)));
	if (ts.size !== 1) fail(`a request mixes time ranges: ${[...ts].join(" ")}`);
	const [t, d] = [...ts][0].split("/").map(BigInt);
	return { t, d };
}

switch (check) {
case "accepted":
	count("accepted requests", accepted.length, args[0]);
	break;
case "attempts":
	count("requests", records.length, args[0]);
	break;
case "outcomes":
	console.log(outcomes());
	break;
case "label": {
	if (!series.length) fail("no accepted series");
	for (const s of series) {
		const v = s.labels[args[0]];
		if (args[1] === "*" ? !v : v !== args[1])
			fail(`series ${JSON.stringify(s.labels)}: ${args[0]}=${v}, want ${args[1]}`);
	}
	break;
}
case "some-label": {
	const re = new RegExp(args[1]);
	if (!series.some((s) => s.labels[args[0]] !== undefined && re.test(s.labels[args[0]])))
		fail(`no series has ${args[0]} matching /${args[1]}/; seen: ` +
			JSON.stringify([...new Set(series.map((s) => s.labels[args[0]]))].slice(0, 20)));
	break;
}
case "function":
	if (!series.some((s) => s.profiles.some((p) => p.functions.includes(args[0]))))
		fail(`no accepted profile has a function named ${args[0]}`);
	break;
case "function-in":
case "no-function-in": {
	// args: INDEX (negative: from the last) and NAME, of the accepted requests in order.
	const i = Number(args[0]) < 0 ? accepted.length + Number(args[0]) : Number(args[0]);
	const r = accepted[i];
	if (!r) fail(`no accepted request ${args[0]} (${accepted.length} accepted)`);
	const has = r.series.some((s) => s.profiles.some((p) => p.functions.includes(args[1])));
	if (has !== (check === "function-in"))
		fail(`accepted request ${args[0]} ${has ? "has" : "has no"} function named ${args[1]}`);
	break;
}
case "function-after": {
	// The last interval may be a short tail with no sample in NAME: any later one will do.
	const named = accepted.map((r) => r.series.some((s) => s.profiles.some((p) => p.functions.includes(args[1]))));
	if (!named.slice(Number(args[0]) + 1).some(Boolean))
		fail(`no accepted request after ${args[0]} has function ${args[1]} (named: ${named.join(",")})`);
	break;
}
case "field":
	if (!accepted.length) fail("no accepted request");
	for (const r of accepted)
		if (r[args[0]] !== args[1]) fail(`${args[0]}: ${r[args[0]]}, want ${args[1]}`);
	break;
case "ordered":
case "intervals": {
	const iv = accepted.map(intervalOf);
	const seen = new Set();
	for (let i = 0; i < iv.length; i++) {
		const key = String(iv[i].t);
		if (seen.has(key)) fail(`interval starting at ${key} arrived twice`);
		seen.add(key);
		if (i > 0 && iv[i].t <= iv[i - 1].t) fail(`interval ${i} arrived out of order`);
		if (check === "intervals" && i > 0 && iv[i - 1].t + iv[i - 1].d !== iv[i].t)
			fail(`a gap or overlap between intervals ${i - 1} and ${i}: ` +
				`${iv[i - 1].t}+${iv[i - 1].d} != ${iv[i].t}`);
	}
	count("intervals received", iv.length, args[0]);
	break;
}
default:
	fail(`unknown check ${check}`);
}
