// SPDX-License-Identifier: MIT
// bw-jit: a JIT that keeps writing its perf map, for the soak
// (bench/soak.sh).  Every 200 ms it makes a new function (new Function:
// new code, hence new lines in /tmp/perf-PID.map) and runs it hot for about
// 40 ms, so that V8 compiles it:
//
//   jit_round -> jit_fn_N	N = 0, 1, 2, ...
//
// usage: node --perf-basic-prof bw-jit.js SECONDS
'use strict';

const seconds = Number(process.argv[2] || 10);
const end = Date.now() + seconds * 1000;
let sink = 0, n = 0;

function jit_round() {
	const f = new Function('x', `
		return function jit_fn_${n}(k) {
			let v = x;
			for (let i = 0; i < k; i++)
				v = (v * 31 + i + ${n}) | 0;
			return v;
		};`)(n);
	const stop = Date.now() + 40;
	while (Date.now() < stop)
		sink = f(sink & 0xffff) + f(1000);
	n++;
	if (Date.now() < end)
		setTimeout(jit_round, 160);
}

jit_round();
