// SPDX-License-Identifier: MIT
// flame.js: what makes the SVG of sp-flame interactive.  The Makefile turns
// this file into a C array; sp-flame writes it at the end of every SVG,
// after the frames and after "var spflame = {...}", the numbers of the
// layout.  docs/formats.md describes the document it works on.
//
// The frames are the <g> children of #frames, in the order of a walk of the
// tree (a frame, then its children), each with a <title> "NAME (COUNT
// COUNTNAME, PCT%...)", a <rect> and, when wide enough, a <text> label.
// Their depth comes from the y of the rect, so the tree is rebuilt here
// without a number more in the document.
//
// Functions for people and for scripts (tests call them too):
//   zoom(frame)     frame (an index or a <g>) spans the width; the frames
//                   below it widen with it, its ancestors fade, others hide
//   unzoom()        back to the whole graph
//   search(re)      highlight the frames whose name matches the regular
//                   expression re; returns the percentage of all COUNTNAME
//                   in them (frames inside a matching frame count once)
//   resetSearch()   remove the highlight
// A click on a frame zooms, on "Reset Zoom" unzooms; "Search" or ctrl-F
// prompts for a regular expression, "ic" toggles ignoring case.
"use strict";

var frames = [];	// {g, rect, text, x, w, y, name, count, depth, end, up, fill}
var zoomed = -1;
var searchTerm = null;
var ignoreCase = false;

var details = document.getElementById("details");
var unzoomButton = document.getElementById("unzoom");
var searchButton = document.getElementById("search");
var caseButton = document.getElementById("ignorecase");
var matchedText = document.getElementById("matched");

function escapeRegExp(s) {
	return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// Read the frames and rebuild the tree: frames[i].up is the parent's index,
// frames[i].end the index after its subtree.
function init() {
	var title = new RegExp("^([\\s\\S]*) \\(([0-9.]+) " +
		escapeRegExp(spflame.countname) + ", ");
	var gs = document.getElementById("frames").children;
	var path = [];
	for (var i = 0; i < gs.length; i++) {
		var g = gs[i], rect = g.querySelector("rect");
		var t = g.querySelector("title").textContent;
		var m = title.exec(t);
		var y = parseFloat(rect.getAttribute("y"));
		var f = {
			g: g, rect: rect, text: g.querySelector("text"),
			x: parseFloat(rect.getAttribute("x")),
			w: parseFloat(rect.getAttribute("width")),
			y: y,
			name: m ? m[1] : t,
			count: m ? parseFloat(m[2]) : 0,
			depth: Math.round((y - spflame.y0) / spflame.dy),
			end: gs.length, up: -1,
			fill: rect.getAttribute("fill")
		};
		while (path.length && frames[path[path.length - 1]].depth >= f.depth)
			frames[path.pop()].end = i;
		f.up = path.length ? path[path.length - 1] : -1;
		path.push(i);
		g.spIndex = i;
		frames.push(f);
	}
}

// The label a frame of width w shows: the name, cut with ".." to fit.
function labelOf(name, w) {
	var n = Math.floor(w / (spflame.fontSize * spflame.fontWidth));
	if (n < 3)
		return "";
	return name.length <= n ? name : name.substring(0, n - 2) + "..";
}

function place(f, x, w) {
	f.rect.setAttribute("x", x.toFixed(2));
	f.rect.setAttribute("width", w.toFixed(2));
	var label = labelOf(f.name, w);
	if (!f.text) {
		if (!label)
			return;
		f.text = document.createElementNS("http://www.w3.org/2000/svg", "text");
		f.text.setAttribute("y", f.y + spflame.ty);
		f.g.appendChild(f.text);
	}
	f.text.setAttribute("x", (x + 3).toFixed(2));
	f.text.textContent = label;
}

function indexOf(frame) {
	return typeof frame === "number" ? frame : frame.spIndex;
}

function zoom(frame) {
	var i = indexOf(frame), z = frames[i];
	if (i === 0)
		return unzoom();
	var full = spflame.width - 2 * spflame.xpad;
	var ratio = full / z.w;
	var ancestor = {};
	for (var a = z.up; a >= 0; a = frames[a].up)
		ancestor[a] = true;
	for (var j = 0; j < frames.length; j++) {
		var f = frames[j], cls = f.g.classList;
		if (j >= i && j < z.end) {
			// widths from the counts, exact; where they start from the
			// pixels, which know of the frames too narrow to draw
			cls.remove("hide", "parent");
			place(f, spflame.xpad + (f.x - z.x) * ratio,
				z.count > 0 ? full * f.count / z.count : f.w * ratio);
		} else if (ancestor[j]) {
			cls.remove("hide");
			cls.add("parent");
			place(f, spflame.xpad, full);
		} else {
			cls.add("hide");
		}
	}
	zoomed = i;
	unzoomButton.classList.remove("hide");
}

function unzoom() {
	for (var j = 0; j < frames.length; j++) {
		var f = frames[j];
		f.g.classList.remove("hide", "parent");
		place(f, f.x, f.w);
	}
	zoomed = -1;
	unzoomButton.classList.add("hide");
}

function resetSearch() {
	for (var j = 0; j < frames.length; j++)
		frames[j].rect.setAttribute("fill", frames[j].fill);
	searchTerm = null;
	searchButton.classList.remove("show");
	searchButton.textContent = "Search";
	matchedText.textContent = " ";
}

function search(re) {
	var rx;
	try {
		rx = new RegExp(re, ignoreCase ? "i" : "");
	} catch (e) {
		matchedText.textContent = "Bad regular expression";
		return null;
	}
	resetSearch();
	searchTerm = re;
	var sum = 0, inside = 0;
	// the root is "all", no function: it never matches
	for (var j = 1; j < frames.length; j++) {
		var f = frames[j];
		if (!rx.test(f.name))
			continue;
		f.rect.setAttribute("fill", spflame.searchColour);
		if (j >= inside) {
			// not inside a frame that matched: its samples count
			sum += f.count;
			inside = f.end;
		}
	}
	var pct = spflame.total > 0 ? 100 * sum / spflame.total : 0;
	searchButton.classList.add("show");
	searchButton.textContent = "Reset Search";
	matchedText.textContent = "Matched: " + pct.toFixed(2) + "%";
	return pct;
}

function searchPrompt() {
	if (searchTerm !== null) {
		resetSearch();
		return;
	}
	var re = prompt("Search for a regular expression" +
		(ignoreCase ? ", ignoring case" : "") + ":", "");
	if (re !== null && re !== "")
		search(re);
}

function frameOf(node) {
	for (; node && node.parentNode; node = node.parentNode)
		if (node.parentNode.id === "frames")
			return node;
	return null;
}

init();

window.addEventListener("click", function (e) {
	var g = frameOf(e.target);
	if (g)
		zoom(g);
	else if (e.target === unzoomButton)
		unzoom();
	else if (e.target === searchButton)
		searchPrompt();
	else if (e.target === caseButton) {
		ignoreCase = !ignoreCase;
		caseButton.classList.toggle("show", ignoreCase);
		if (searchTerm !== null)
			search(searchTerm);
	}
});

window.addEventListener("mouseover", function (e) {
	var g = frameOf(e.target);
	if (g)
		details.textContent = spflame.nametype + " " +
			g.querySelector("title").textContent;
});

window.addEventListener("mouseout", function (e) {
	if (frameOf(e.target))
		details.textContent = " ";
});

window.addEventListener("keydown", function (e) {
	if (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) {
		// F3 or ctrl-F
		e.preventDefault();
		searchPrompt();
	} else if (e.key === "Escape") {
		unzoom();
	}
});
