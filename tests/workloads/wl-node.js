// SPDX-License-Identifier: MIT
// wl-node: named JavaScript functions for node --perf-basic-prof.
//
//   sp_outer -> sp_middle -> sp_hot	nearly all of the time
//
// Run with --no-turbo-inlining so that the optimised sp_hot keeps its frame,
// and --interpreted-frames-native-stack so that the interpreted callers have
// frames of their own in /tmp/perf-PID.map.
//
// usage: node --perf-basic-prof --interpreted-frames-native-stack
//             --no-turbo-inlining wl-node.js [SECONDS]	(default 5)
//
// Creates the file $WL_READY names, if set, when it reaches its loop (as
// tests/workloads/wl.h's wl_ready does).
'use strict';

let sink = 0;

function sp_hot(n) {
	let x = sink;
	for (let i = 0; i < n; i++)
		x = (x * 33 + i) % 1000003;
	sink = x;
}

function sp_middle(n) {
	sp_hot(n);
	return sink + 1;
}

function sp_outer(n) {
	sp_middle(n);
	return sink + 1;
}

const end = Date.now() + 1000 * Number(process.argv[2] || 5);
if (process.env.WL_READY)
	require('fs').writeFileSync(process.env.WL_READY, '');
while (Date.now() < end)
	sp_outer(100000);
