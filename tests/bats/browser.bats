#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# browser.bats: what stackpulse draws for a browser, opened in one: Debian's
# chromium renders an SVG of sp-flame headless (a screenshot that is not
# blank), and a session scripted with playwright-core (tests/browser/)
# clicks, zooms, resets and searches as a person would.
#
# Needs chromium (Debian's package) and node with tests/browser's packages
# (npm ci there): without them the tests skip, saying what is missing;
# under CI=true they fail instead, since CI installs everything.

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
load common

BROWSER_DIR=$SP_ROOT/tests/browser

setup() {
	[[ -x $SP_FLAME ]] || fail "sp-flame is not built at $SP_FLAME: run make"
	T=$BATS_TEST_TMPDIR
	cat >"$T/in.folded" <<'EOF_IN'
main;parse;lex 30
main;parse;lex;memcpy 10
main;parse 5
main;eval;apply;eval;apply 20
main;eval 15
main;run_[j] 7.5
idle;[unknown] 12.5
EOF_IN
}

# missing WHAT: skip naming WHAT, or fail under CI=true.
missing() {
	[[ ${CI:-} == true ]] && fail "CI lacks $*"
	skip "needs $*"
}

need_chromium() {
	[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] ||
		missing "chromium at ${CHROMIUM:-/usr/bin/chromium} (Debian package chromium; make deps installs it)"
	command -v node >/dev/null || missing "node (Debian package nodejs)"
}

need_playwright() {
	need_chromium
	[[ -f $BROWSER_DIR/node_modules/playwright-core/package.json ]] ||
		missing "playwright-core in $BROWSER_DIR/node_modules (run 'npm ci' there)"
}

# share FOLDED REGEX: percent (two decimals) of the samples whose stack has
# a frame (annotation dropped) that matches REGEX: what a search reports.
share() {
	awk -v re="$2" '
		{
			n = $NF
			k = split(substr($0, 1, length($0) - length(n) - 1), f, ";")
			all += n
			for (i = 1; i <= k; i++) {
				sub(/_\[[kjiw]\]$/, "", f[i])
				if (f[i] ~ re) { sum += n; break }
			}
		}
		END { printf "%.2f\n", 100 * sum / all }' "$1"
}

@test "browser: chromium renders the flame graph, not a blank page" {
	need_chromium
	run "$SP_FLAME" -o "$T/in.svg" "$T/in.folded"
	assert_success
	run node "$BROWSER_DIR/screenshot.mjs" "$T/in.svg" "$T/shot.png" 1200 300
	assert_success
	local w h px nonwhite warm grey
	read -r w h px nonwhite warm grey <<<"$output"
	echo "# ${w}x$h: $nonwhite of $px pixels not white, $warm warm, $grey grey"
	((w == 1200 && h == 300)) || fail "a ${w}x$h screenshot"
	# the graph is 1180 x 7 frames of 16 pixels at the least, in colour
	((nonwhite >= 1180 * 16 * 5)) || fail "only $nonwhite pixels are not white"
	((warm >= 1000)) || fail "only $warm pixels of the hot palette"
	# [unknown] is grey: 147 x 15 pixels
	((grey >= 1000)) || fail "only $grey grey pixels"

	# the same page without frames: the picture has less in it
	printf 'one 1\n' | "$SP_FLAME" -o "$T/one.svg" --colors blue
	run node "$BROWSER_DIR/screenshot.mjs" "$T/one.svg" "$T/one.png" 1200 300
	assert_success
	read -r w h px nonwhite warm grey <<<"$output"
	((warm < 100)) || fail "$warm warm pixels in a blue graph"
}

@test "browser: click to zoom, reset, search through the prompt and search()" {
	need_playwright
	run "$SP_FLAME" -o "$T/in.svg" "$T/in.folded"
	assert_success
	local pct
	pct=$(share "$T/in.folded" '^(lex|memcpy)$')
	assert_equal "$pct" 40.00
	run node "$BROWSER_DIR/flame.mjs" "$T/in.svg" parse all,main,parse,lex,memcpy \
		'^(lex|memcpy)$' "$pct"
	echo "$output"
	assert_success

	# recursion: eval matches twice on a path, counts once
	pct=$(share "$T/in.folded" 'eval')
	assert_equal "$pct" 35.00
	run node "$BROWSER_DIR/flame.mjs" "$T/in.svg" apply all,main,eval,apply eval "$pct"
	echo "$output"
	assert_success
}

@test "browser: an icicle graph and a larger graph zoom and search alike" {
	need_playwright
	run "$SP_FLAME" --inverted --nametype 'Frame:' -o "$T/icicle.svg" "$T/in.folded"
	assert_success
	run node "$BROWSER_DIR/flame.mjs" "$T/icicle.svg" lex all,main,parse,lex,memcpy \
		'^r' "$(share "$T/in.folded" '^r')"
	echo "$output"
	assert_success

	# many frames, fractions: a generated input of sp-fold's shape
	awk 'BEGIN { for (i = 0; i < 400; i++)
		printf "prog;f%d;g%d;h%d %d.5\n", i % 5, i % 7, i % 11, i % 9 + 1 }' >"$T/gen.folded"
	run "$SP_FLAME" --minwidth 0 -o "$T/gen.svg" "$T/gen.folded"
	assert_success
	run node "$BROWSER_DIR/flame.mjs" "$T/gen.svg" f3 all,prog,f3,g0,g1,g2,g3,g4,g5,g6,h0,h1,h2,h3,h4,h5,h6,h7,h8,h9,h10 \
		'^(g1|h3)$' "$(share "$T/gen.folded" '^(g1|h3)$')"
	echo "$output"
	assert_success
}

@test "browser: narrow frames merged into one zoom and search like any frame" {
	need_playwright
	awk 'BEGIN { print "main;big 10000"
		for (i = 0; i < 40; i++) printf "main;small;s%02d 1\n", i }' >"$T/mw.folded"
	run "$SP_FLAME" --minwidth 0.2 -o "$T/mw.svg" "$T/mw.folded"
	assert_success
	run node "$BROWSER_DIR/flame.mjs" "$T/mw.svg" small \
		'all,main,small,[40 narrow frames]' '^big$' 99.60
	echo "$output"
	assert_success
	# the narrow frames themselves are not drawn, so not searched
	run node "$BROWSER_DIR/flame.mjs" "$T/mw.svg" '[40 narrow frames]' \
		'all,main,small,[40 narrow frames]' '^s0' 0.00
	echo "$output"
	assert_success
}
