// SPDX-License-Identifier: MIT
// flame.mjs: an SVG of sp-flame used as a person would, in chromium: click
// a frame and check the zoom, reset it, search through the Search prompt
// and through search(), check the share it reports.  Run by
// tests/bats/browser.bats:
//
//   node flame.mjs SVG FRAME VISIBLE REGEX PERCENT
//
// FRAME: the name of a frame to click (the first one in the document);
// VISIBLE: the comma-separated names of the frames left shown once it is
// zoomed (its ancestors, itself, what is above it), checked as a set and,
// frame by frame, against the paths this script rebuilds from the frames'
// heights; REGEX and PERCENT: a search and the share of all samples it must
// report ("40.00").
// Prints "ok - ..." per check; exits 1 at the first failure.
import assert from "node:assert/strict";
import { basename, dirname, resolve } from "node:path";
import { launch, serve } from "./lib.mjs";

const [svgArg, zoomName, visibleList, regex, percent] = process.argv.slice(2);
if (!percent) {
	console.error("usage: node flame.mjs SVG FRAME VISIBLE REGEX PERCENT");
	process.exit(64);
}
const svg = resolve(svgArg);
const visible = new Set(visibleList.split(","));

function ok(what) {
	console.log(`ok - ${what}`);
}

// Every frame as the document shows it now, counts read from the titles.
async function frameStates(page) {
	return page.evaluate(() => {
		const out = [];
		for (const g of document.getElementById("frames").children) {
			const rect = g.querySelector("rect");
			const title = g.querySelector("title").textContent;
			const m = /^([\s\S]*) \(([0-9.]+) /.exec(title);
			const text = g.querySelector("text");
			out.push({
				name: m[1],
				count: parseFloat(m[2]),
				x: parseFloat(rect.getAttribute("x")),
				y: parseFloat(rect.getAttribute("y")),
				h: parseFloat(rect.getAttribute("height")),
				w: parseFloat(rect.getAttribute("width")),
				fill: rect.getAttribute("fill"),
				shown: getComputedStyle(g).display !== "none",
				parent: g.classList.contains("parent"),
				label: text ? text.textContent : "",
			});
		}
		return out;
	});
}

// The path "all;a;b" of every frame: frames come in the order of a walk of
// the tree, their depth is their distance from the root in frame heights.
function paths(states) {
	const path = [];
	return states.map((f) => {
		const depth = Math.round(Math.abs(f.y - states[0].y) / (f.h + 1));
		path.length = depth;
		path.push(f.name);
		return path.join(";");
	});
}

// a browser that hangs fails the test instead of holding it forever
setTimeout(() => {
	console.log("not ok - the browser session took over 3 minutes");
	process.exit(1);
}, 180000).unref();

const server = await serve(dirname(svg));
const browser = await launch();
let status = 0;
try {
	const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
	const errors = [];
	page.on("pageerror", (e) => errors.push(e.message));
	// the browser asks for /favicon.ico by itself: the SVG asks for nothing
	page.on("console", (m) => m.type() === "error" &&
		!/^Failed to load resource/.test(m.text()) && errors.push(m.text()));
	page.on("response", (r) => r.status() >= 400 &&
		!r.url().endsWith("/favicon.ico") && errors.push(`${r.status()} for ${r.url()}`));
	page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()}`));
	const requests = [];
	page.on("request", (r) => requests.push(r.url()));

	await page.goto(server.url + encodeURIComponent(basename(svg)));
	const layout = await page.evaluate(() => ({
		width: spflame.width, xpad: spflame.xpad,
	}));
	const full = layout.width - 2 * layout.xpad;
	const start = await frameStates(page);
	assert.ok(start.length > 1, "the graph has frames");
	assert.equal(start[0].name, "all");
	assert.ok(Math.abs(start[0].w - full) < 0.05, `all spans ${full} px`);
	ok(`loaded ${start.length} frames from ${server.url}`);

	// the pointer over a frame: --nametype and its title in the details
	const zi = start.findIndex((f) => f.name === zoomName);
	assert.ok(zi > 0, `a frame named ${zoomName}`);
	const frame = page.locator("#frames > g").nth(zi);
	await frame.locator("rect").hover();
	const nametype = await page.evaluate(() => spflame.nametype);
	const title = await frame.locator("title").textContent();
	assert.equal(await page.locator("#details").textContent(), `${nametype} ${title}`);
	ok(`the pointer over ${zoomName} shows "${nametype} ${title}"`);

	// zoom: click the frame as a person would, on its rectangle
	await frame.locator("rect").click();
	const zoomed = await frameStates(page);
	const z = zoomed[zi];
	assert.ok(Math.abs(z.w - full) < 0.05 && Math.abs(z.x - layout.xpad) < 0.05,
		`${zoomName} spans the width after the click: x ${z.x}, width ${z.w}`);
	assert.ok(!z.parent);
	ok(`clicked ${zoomName}: it spans the full ${full} px`);
	const p = paths(start), zp = p[zi];
	assert.deepEqual(new Set(zoomed.filter((f) => f.shown).map((f) => f.name)), visible,
		"the names shown after the zoom");
	for (const [i, f] of zoomed.entries()) {
		const above = p[i] === zp || p[i].startsWith(zp + ";");
		const below = zp.startsWith(p[i] + ";");
		assert.equal(f.shown, above || below,
			`${p[i]} (frame ${i}) is ${f.shown ? "shown" : "hidden"} after zooming to ${zp}`);
		assert.equal(f.parent, below, `${p[i]} is ${f.parent ? "" : "not "}faded`);
		if (!f.shown)
			continue;
		if (f.parent) {
			// an ancestor: full width, faded
			assert.ok(Math.abs(f.w - full) < 0.05, `ancestor ${f.name} spans the width`);
		} else {
			// what is above it widens by the same ratio, starts where it
			// did relative to the frame clicked (its x known to 0.005 px)
			const ratio = full / start[zi].w;
			const want = (full * f.count) / start[zi].count;
			const x = layout.xpad + (start[i].x - start[zi].x) * ratio;
			assert.ok(Math.abs(f.w - want) < 0.01,
				`${f.name} is ${f.w} px wide after the zoom, want ${want.toFixed(2)}`);
			assert.ok(Math.abs(f.x - x) < 0.005 * ratio + 0.01,
				`${f.name} starts at ${f.x} px after the zoom, want ${x.toFixed(2)}`);
		}
	}
	assert.ok(zoomed.some((f) => f.parent), "the ancestors fade");
	assert.ok(zoomed.some((f) => !f.shown), "frames off the path hide");
	assert.ok(await page.locator("#unzoom").isVisible(), "Reset Zoom is shown");
	ok("zoom: frames above widen, ancestors fade, the rest hide");

	// reset: every frame back where it was
	await page.locator("#unzoom").click();
	const reset = await frameStates(page);
	assert.deepEqual(reset.map((f) => [f.x, f.w, f.shown, f.parent]),
		start.map((f) => [f.x, f.w, true, false]), "Reset Zoom restores the graph");
	assert.ok(!(await page.locator("#unzoom").isVisible()), "Reset Zoom hides again");
	ok("reset zoom restores every frame");

	// search as a person: click Search, type the expression in the prompt
	page.once("dialog", (d) => d.accept(regex));
	await page.locator("#search").click();
	await page.waitForFunction(() => /Matched/.test(document.getElementById("matched").textContent));
	const matched = (await page.locator("#matched").textContent()).trim();
	assert.equal(matched, `Matched: ${percent}%`);
	const rx = new RegExp(regex);
	const searched = await frameStates(page);
	const colour = await page.evaluate(() => spflame.searchColour);
	for (const f of searched.slice(1))
		assert.equal(f.fill === colour, rx.test(f.name),
			`${f.name} is ${f.fill === colour ? "" : "not "}highlighted by /${regex}/`);
	ok(`the Search prompt with /${regex}/ reports ${matched}`);

	// a click on "Reset Search" takes the highlight away
	await page.locator("#search").click();
	const cleared = await frameStates(page);
	assert.deepEqual(cleared.map((f) => f.fill), start.map((f) => f.fill));
	ok("Reset Search restores the colours");

	// the same through the function the SVG exposes
	const share = await page.evaluate((re) => search(re), regex);
	assert.ok(Math.abs(share - parseFloat(percent)) < 0.005,
		`search('${regex}') returns ${share}, want ${percent}`);
	ok(`search('${regex}') returns ${share.toFixed(2)}`);

	// zoomed, a search still counts shares of all samples
	await page.evaluate((i) => zoom(i), zi);
	const share2 = await page.evaluate((re) => search(re), regex);
	assert.ok(Math.abs(share2 - parseFloat(percent)) < 0.005);
	ok("zoom(i) and search() agree with the clicks");

	assert.deepEqual(errors, [], "no script errors");
	const svgUrl = server.url + encodeURIComponent(basename(svg));
	const foreign = requests.filter((u) => u !== svgUrl && u !== server.url + "favicon.ico");
	assert.deepEqual(foreign, [], "no request leaves the test's server");
	ok("no script error, no request but the SVG itself");
} catch (e) {
	console.log(`not ok - ${e.message}`);
	status = 1;
} finally {
	await browser.close();
	await server.close();
}
process.exit(status);
