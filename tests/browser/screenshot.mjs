// SPDX-License-Identifier: MIT
// screenshot.mjs: have chromium's own headless mode render a file, as
// "chromium --headless --screenshot" does for anyone, and count what the
// picture shows.  Run by tests/bats/browser.bats:
//
//   node screenshot.mjs FILE PNG WIDTH HEIGHT
//
// Prints "WIDTH HEIGHT PIXELS NONWHITE WARM GREY": the PNG's size, its
// pixels, those not near white, those of the hot palette (red high, blue
// low) and those grey (r = g = b, not near white or black).  Needs no npm
// package.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromiumArgs, chromiumPath, countPixels, decodePng } from "./lib.mjs";

const [file, png, width, height] = process.argv.slice(2);
if (!height) {
	console.error("usage: node screenshot.mjs FILE PNG WIDTH HEIGHT");
	process.exit(64);
}
const profile = mkdtempSync(join(tmpdir(), "sp-chromium-"));
let run;
try {
	run = spawnSync(chromiumPath, [
		"--headless", ...chromiumArgs, `--user-data-dir=${profile}`,
		"--hide-scrollbars", `--window-size=${width},${height}`,
		`--screenshot=${resolve(png)}`, pathToFileURL(resolve(file)).href,
	], { encoding: "utf8", timeout: 120000 });
} finally {
	rmSync(profile, { recursive: true, force: true });
}
if (run.error || run.status !== 0) {
	console.error(`chromium failed: ${run.error ? run.error.message : `exit ${run.status}`}`);
	console.error(run.stderr);
	process.exit(2);
}
const img = decodePng(readFileSync(png));
const nonwhite = countPixels(img, (r, g, b) => r < 240 || g < 240 || b < 240);
const warm = countPixels(img, (r, g, b) => r >= 200 && b <= 80);
const grey = countPixels(img, (r, g, b) => r === g && g === b && r > 60 && r < 230);
console.log(img.width, img.height, img.width * img.height, nonwhite, warm, grey);
