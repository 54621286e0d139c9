// SPDX-License-Identifier: MIT
// lib.mjs: what stackpulse's browser tests share: Debian's chromium
// launched headless with flags that keep it off the network and out of the
// user's profile, a directory served on a loopback port, and a PNG decoder
// for counting what a screenshot shows.
import { createServer } from "node:http";
import { readFileSync, statSync } from "node:fs";
import { extname, join, normalize, sep } from "node:path";
import { inflateSync } from "node:zlib";

// The browser the tests drive: $CHROMIUM, or Debian's package.
export const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";

// Flags for a browser that talks to nothing but the test's own server
// (playwright adds its own --headless and a fresh --user-data-dir; the
// command line adds "--headless" itself, see headlessArgs).
export const chromiumArgs = [
	"--disable-gpu",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-default-apps",
	"--disable-extensions",
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-quic",
	"--metrics-recording-only",
	"--mute-audio",
	// root may not use chromium's sandbox: it refuses to start with it
	...(process.getuid && process.getuid() === 0 ? ["--no-sandbox"] : []),
];

// Launch chromium through playwright-core (with playwright's own fresh
// profile, removed when the browser closes).  Returns the Browser.
export async function launch() {
	const { chromium } = await import("playwright-core");
	return chromium.launch({
		executablePath: chromiumPath,
		headless: true,
		args: chromiumArgs,
	});
}

const types = {
	".svg": "image/svg+xml",
	".html": "text/html; charset=utf-8",
	".js": "text/javascript",
	".mjs": "text/javascript",
	".json": "application/json",
	".css": "text/css",
	".png": "image/png",
};

// Serve the files under dir on 127.0.0.1 at a port the kernel picks.
// Returns { url, close } (url ends in "/").
export async function serve(dir) {
	const root = normalize(dir + sep);
	const server = createServer((req, res) => {
		const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
		const file = normalize(join(root, path));
		let body;
		try {
			if (!file.startsWith(root) || !statSync(file).isFile())
				throw new Error("not a file");
			body = readFileSync(file);
		} catch {
			res.writeHead(404, { "content-type": "text/plain" });
			res.end("not found\n");
			return;
		}
		res.writeHead(200, {
			"content-type": types[extname(file)] || "application/octet-stream",
			"cache-control": "no-store",
		});
		res.end(body);
	});
	await new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", resolve);
	});
	const { port } = server.address();
	return {
		url: `http://127.0.0.1:${port}/`,
		close: () => new Promise((resolve) => server.close(resolve)),
	};
}

// Decode a PNG of 8-bit samples (grey, RGB, grey+alpha or RGBA, not
// interlaced) into { width, height, channels, pixels }, pixels a Buffer of
// width * height * channels bytes.
export function decodePng(buf) {
	const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
	if (buf.length < 8 || sig.some((b, i) => buf[i] !== b))
		throw new Error("not a PNG");
	let off = 8, width = 0, height = 0, channels = 0;
	const idat = [];
	while (off + 8 <= buf.length) {
		const len = buf.readUInt32BE(off);
		const type = buf.toString("latin1", off + 4, off + 8);
		if (off + 12 + len > buf.length)
			throw new Error(`truncated ${type} chunk at byte ${off}`);
		const data = buf.subarray(off + 8, off + 8 + len);
		if (type === "IHDR") {
			width = data.readUInt32BE(0);
			height = data.readUInt32BE(4);
			const depth = data[8], colour = data[9], interlace = data[12];
			channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[colour];
			if (depth !== 8 || !channels || interlace)
				throw new Error(`unsupported PNG: depth ${depth}, colour type ${colour}, interlace ${interlace}`);
		} else if (type === "IDAT") {
			idat.push(data);
		} else if (type === "IEND") {
			break;
		}
		off += 12 + len;
	}
	const raw = inflateSync(Buffer.concat(idat));
	const stride = width * channels;
	if (raw.length < height * (stride + 1))
		throw new Error("PNG image data is short");
	const pixels = Buffer.alloc(height * stride);
	for (let y = 0; y < height; y++) {
		const filter = raw[y * (stride + 1)];
		const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
		const out = pixels.subarray(y * stride, (y + 1) * stride);
		const prev = y ? pixels.subarray((y - 1) * stride, y * stride) : null;
		for (let i = 0; i < stride; i++) {
			const a = i >= channels ? out[i - channels] : 0;
			const b = prev ? prev[i] : 0;
			const c = prev && i >= channels ? prev[i - channels] : 0;
			let v;
			switch (filter) {
			case 0: v = line[i]; break;
			case 1: v = line[i] + a; break;
			case 2: v = line[i] + b; break;
			case 3: v = line[i] + ((a + b) >> 1); break;
			case 4: {
				const p = a + b - c;
				const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
				v = line[i] + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
				break;
			}
			default:
				throw new Error(`bad PNG filter ${filter} on row ${y}`);
			}
			out[i] = v & 0xff;
		}
	}
	return { width, height, channels, pixels };
}

// Count the pixels of a decoded PNG for which pred(r, g, b) holds.
export function countPixels(png, pred) {
	const { pixels, channels } = png;
	let n = 0;
	for (let i = 0; i < pixels.length; i += channels) {
		const r = pixels[i];
		const g = channels >= 3 ? pixels[i + 1] : r;
		const b = channels >= 3 ? pixels[i + 2] : r;
		if (pred(r, g, b))
			n++;
	}
	return n;
}
