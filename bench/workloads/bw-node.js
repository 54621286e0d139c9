// SPDX-License-Identifier: MIT
// bw-node: the JavaScript benchmark workload, run as node --perf-basic-prof.
// A fixed amount of work through known nested functions, started by
// SIGUSR1 so that a profiler can attach first (-p):
//
//   run_work -> level_1 .. level_6 -> mix -> leaf_a   2/3 of the work
//                                     mix -> leaf_b   1/3
//
// (V8 compiles them; each appears under the name of its perf map line,
// such as "JS:*leaf_a /path/bw-node.js:20:16", above node's C++ frames;
// --no-turbo-inlining keeps every one a frame of its own).  A listener on
// SIGUSR1 keeps node from starting its inspector on it.
//
// usage: node --perf-basic-prof --no-turbo-inlining bw-node.js ROUNDS [WAIT_S]
//   prints "ready PID", waits for SIGUSR1 (at most WAIT_S s, default 20),
//   runs ROUNDS rounds, prints "work_s SECONDS" and exits.
'use strict';

function leaf_a(n) {
	let v = 0;
	for (let i = 0; i < n; i++)
		v = (v * 33 + i) % 1000003;
	return v;
}

function leaf_b(n) {
	let v = 1;
	for (let i = 0; i < n; i++)
		v = (v * 31 + i) % 1000033;
	return v;
}

function mix() { return leaf_a(20000) + leaf_b(10000); }
function level_6() { return mix() + 1; }
function level_5() { return level_6() + 1; }
function level_4() { return level_5() + 1; }
function level_3() { return level_4() + 1; }
function level_2() { return level_3() + 1; }
function level_1() { return level_2() + 1; }

function run_work(rounds) {
	let s = 0;
	for (let r = 0; r < rounds; r++)
		s += level_1();
	return s;
}

const rounds = Number(process.argv[2]);
const wait_s = Number(process.argv[3] || 20);
let started = false;

function go() {
	if (started)
		return;
	started = true;
	const t0 = process.hrtime.bigint();
	run_work(rounds);
	const s = Number(process.hrtime.bigint() - t0) / 1e9;
	process.stdout.write(`work_s ${s.toFixed(6)}\n`, () => process.exit(0));
}

process.on('SIGUSR1', go);
setTimeout(go, wait_s * 1000);
process.stdout.write(`ready ${process.pid}\n`);
