// SPDX-License-Identifier: MIT
// speedscope.mjs: a file of sp-fold --format speedscope read by speedscope
// itself.  Run by tests/bats/formats.bats:
//
//   node speedscope.mjs --validate FILE      check FILE against the JSON
//                                            schema speedscope publishes
//   node speedscope.mjs FILE NAME [PNG]      validate, then open FILE in the
//                                            speedscope app (its npm
//                                            package) in chromium, and wait
//                                            for the profile NAME on the page
//
// The app and the file are served from one loopback server and the file is
// opened with #profileURL=, as speedscope documents.  An import error
// (an alert, a page error, no profile shown) fails.  Exits 0 or 1.
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { launch, serve } from "./lib.mjs";

const require = createRequire(import.meta.url);
const validateOnly = process.argv[2] === "--validate";
const args = process.argv.slice(validateOnly ? 3 : 2);
const [file, name, png] = args;
if (!file || (!validateOnly && !name)) {
	console.error("usage: node speedscope.mjs --validate FILE | FILE NAME [PNG]");
	process.exit(64);
}

const release = join(dirname(require.resolve("speedscope/package.json")),
		     "dist", "release");
const Ajv = require("ajv");
const schema = JSON.parse(readFileSync(join(release, "file-format-schema.json")));
const profile = JSON.parse(readFileSync(file, "utf8"));
const ajv = new Ajv({ allErrors: true, strict: false });
if (!ajv.validate(schema, profile)) {
	console.error(`${file}: not valid by speedscope's schema: ${ajv.errorsText(ajv.errors)}`);
	process.exit(1);
}
console.log(`ok - ${file} is valid by speedscope's file-format-schema.json`);
if (validateOnly)
	process.exit(0);

// the app's files and the profile, side by side in one served directory
const dir = mkdtempSync(join(tmpdir(), "sp-speedscope-"));
for (const f of readdirSync(release))
	symlinkSync(join(release, f), join(dir, f));
symlinkSync(resolve(file), join(dir, "profile.json"));
const server = await serve(dir);
const browser = await launch();
const problems = [];
try {
	const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
	page.on("dialog", (d) => {
		problems.push(`the app said: ${d.message()}`);
		d.dismiss().catch(() => {});
	});
	page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
	const url = `${server.url}index.html#profileURL=${encodeURIComponent(server.url + "profile.json")}`;
	await page.goto(url);
	try {
		await page.getByText(name, { exact: false }).first().waitFor({ timeout: 30000 });
		console.log(`ok - speedscope shows the profile '${name}'`);
	} catch {
		const text = await page.evaluate(() => document.body.innerText);
		problems.push(`no '${name}' on the page, which says: ${text.replace(/\s+/g, " ").slice(0, 300)}`);
	}
	if (png)
		await page.screenshot({ path: png });
} finally {
	await browser.close();
	await server.close();
	rmSync(dir, { recursive: true, force: true });
}
if (problems.length) {
	console.error(problems.join("\n"));
	process.exit(1);
}
