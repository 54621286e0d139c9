#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sp-flame.bats: flame graph SVGs from folded stacks: well-formed XML, the
# counts of every frame as the input says, what each option changes,
# differential graphs, hostile names, the same bytes for the same input,
# the input it refuses, and a real recording drawn.  tests/bats/browser.bats
# opens the SVGs in chromium.

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
load common

setup() {
	[[ -x $SP_FLAME ]] || fail "sp-flame is not built at $SP_FLAME: run make"
	command -v xmllint >/dev/null ||
		fail "xmllint is missing: install libxml2-utils (make deps does)"
	T=$BATS_TEST_TMPDIR
	# shared prefixes, recursion (eval;apply;eval;apply), fractional counts
	# (exact in binary, so any order of sums agrees), a stack that is a
	# prefix of others (main;parse), the same stack twice, annotations
	cat >"$T/in.folded" <<'EOF_IN'
main;parse;lex 30
main;parse;lex;memcpy 10.25
main;parse 5
main;eval;apply;eval;apply 20
main;eval 15.5
main;eval;apply;eval;apply 4
main;run_[j] 7.75
idle;[unknown] 12.5
idle;do_idle_[k] 3
EOF_IN
}

# Expected "all;frame;... COUNT SELF" of folded input FILE, computed here
# from the lines: every prefix of a stack gets its count (cumulative), the
# stack itself its count as self; annotations dropped from the names as
# sp-flame shows them; DEC fraction digits.
expected_paths() {
	awk -v dec="$2" '
		{
			n = $NF
			stack = substr($0, 1, length($0) - length(n) - 1)
			k = split(stack, f, ";")
			path = "all"
			total[path] += n
			for (i = 1; i <= k; i++) {
				sub(/_\[[kjiw]\]$/, "", f[i])
				path = path ";" f[i]
				total[path] += n
			}
			self[path] += n
		}
		END {
			for (p in total)
				printf "%s %." dec "f %." dec "f\n", p, total[p], self[p]
		}' "$1" | LC_ALL=C sort
}

# The red, green and blue of a "#rrggbb" fill.
rgb() {
	printf '%d %d %d\n' "0x${1:1:2}" "0x${1:3:2}" "0x${1:5:2}"
}

# fill_of SVG NAME: the fill of the first frame called NAME.
fill_of() {
	svg_frames "$1" | awk -F '\t' -v n="$2" '$2 == n { print $6; exit }'
}

@test "sp-flame: options and their exit statuses" {
	# args | status | stream | ERE the stream must match
	local bad=0 args want where re text
	while IFS='|' read -r args want where re; do
		# shellcheck disable=SC2086
		run --separate-stderr "$SP_FLAME" $args <"$T/in.folded"
		text=$output
		[[ $where == stderr ]] && text=$stderr
		if ((status != want)); then
			echo "# sp-flame $args: exit $status, want $want ($stderr)"
		elif ! [[ $text =~ $re ]]; then
			echo "# sp-flame $args: $where does not match /$re/: $text"
		else
			continue
		fi
		bad=$((bad + 1))
	done <<'EOF_CASES'
-h|0|stdout|^usage: sp-flame .*Exit status
--help|0|stdout|--minwidth N
-V|0|stdout|^sp-flame [0-9]+\.[0-9]+
--bogus|64|stderr|try 'sp-flame --help'
--width|64|stderr|^sp-flame: option .--width. needs a value
--width 50|64|stderr|^sp-flame: invalid --width '50': must be 100\.\.1000000
--height x|64|stderr|^sp-flame: invalid --height 'x'
--minwidth x|64|stderr|^sp-flame: invalid --minwidth 'x': must be pixels
--minwidth 1.2.3|64|stderr|^sp-flame: invalid --minwidth
--minwidth 101%|64|stderr|^sp-flame: invalid --minwidth '101%'
--minwidth %|64|stderr|^sp-flame: invalid --minwidth
--colors pink|64|stderr|^sp-flame: invalid --colors 'pink': must be one of hot, mem
--countname=|64|stderr|^sp-flame: invalid --countname
--diff|64|stderr|^sp-flame: --diff needs two inputs: BEFORE AFTER
--diff a|64|stderr|^sp-flame: --diff needs two inputs
/nonexistent/in.folded|2|stderr|^sp-flame: cannot open '/nonexistent/in.folded': No such file
-o /nonexistent/dir/out.svg|2|stderr|^sp-flame: cannot open '/nonexistent/dir/out.svg'
EOF_CASES
	((bad == 0)) || fail "$bad option cases failed"
}

@test "sp-flame: the SVG is well-formed, self-contained XML" {
	run_io "$SP_FLAME" "$T/in.folded" "$T/out.svg"
	assert_success
	[[ -z $stderr ]] || fail "unexpected stderr: $stderr"
	run xmllint --noout --nonet "$T/out.svg"
	assert_success
	# one <svg>, the script inside; nothing fetched from anywhere
	run xmllint --xpath 'count(/*[local-name()="svg"]/*[local-name()="script"])' "$T/out.svg"
	assert_output 2
	run grep -cE '(href|src)=|@import|url\((https?:|//)' "$T/out.svg"
	assert_output 0
	run grep -c '<!DOCTYPE' "$T/out.svg"
	assert_output 0
}

@test "sp-flame: every frame's count and every stack's count are the input's" {
	# minwidth 0: every frame drawn, however narrow
	run "$SP_FLAME" --minwidth 0 -o "$T/out.svg" "$T/in.folded"
	assert_success
	expected_paths "$T/in.folded" 2 >"$T/want"
	svg_paths "$T/out.svg" | LC_ALL=C sort >"$T/got"
	diff -u "$T/want" "$T/got"
	# and a few by hand: 12.5 + 3 under idle, recursion counted once
	grep -qx 'all 108.00 0.00' "$T/got"
	grep -qx 'all;idle 15.50 0.00' "$T/got"
	grep -qx 'all;main;eval 39.50 15.50' "$T/got"
	grep -qx 'all;main;eval;apply;eval;apply 24.00 24.00' "$T/got"
	# the tooltip's share: 39.5 of 108
	grep -qF '<title>eval (39.50 samples, 36.57%)</title>' "$T/out.svg"

	# integer counts print as integers, and a larger input of sp-fold's kind
	awk 'BEGIN { for (i = 0; i < 300; i++)
		printf "prog;f%d;g%d;h%d %d\n", i % 7, i % 13, i, i % 50 + 1 }' >"$T/int.folded"
	run "$SP_FLAME" --minwidth 0 -o "$T/int.svg" "$T/int.folded"
	assert_success
	expected_paths "$T/int.folded" 0 >"$T/want"
	svg_paths "$T/int.svg" | LC_ALL=C sort >"$T/got"
	diff -u "$T/want" "$T/got"
}

@test "sp-flame: frames narrower than --minwidth are merged or left out, counted above" {
	awk 'BEGIN { print "main;big 10000"
		for (i = 0; i < 40; i++) printf "main;small;s%02d 1\n", i }' >"$T/mw.folded"
	# default 0.1 px: each 1-sample frame is 1180 / 10040 = 0.12 px: drawn
	run "$SP_FLAME" -o "$T/a.svg" "$T/mw.folded"
	assert_success
	[[ $(svg_frames "$T/a.svg" | wc -l) == 44 ]]
	# at 0.2 px each is too narrow, the 40 together are not: one grey box
	# where they were, so that small has no samples of its own to show
	run "$SP_FLAME" --minwidth 0.2 -o "$T/b.svg" "$T/mw.folded"
	assert_success
	svg_frames "$T/b.svg" | cut -f2 | paste -sd, - >"$T/names"
	assert_equal "$(cat "$T/names")" "all,main,big,small,[40 narrow frames]"
	grep -qF '<title>small (40 samples, 0.40%)</title>' "$T/b.svg"
	grep -qF '<title>[40 narrow frames] (40 samples, 0.40%)</title>' "$T/b.svg"
	x_small=$(grep -F '<title>small ' "$T/b.svg" | sed 's/.*<rect x="\([0-9.]*\)".*/\1/')
	x_merged=$(grep -F '<title>[40 narrow' "$T/b.svg" | sed 's/.*<rect x="\([0-9.]*\)".*/\1/')
	assert_equal "$x_merged" "$x_small"
	grep -F '<title>[40 narrow' "$T/b.svg" | grep -qE 'fill="#([0-9a-f]{2})\1\1"' ||
		fail "the merged box is not grey: $(grep -F '<title>[40 narrow' "$T/b.svg")"
	# 1% of all: small goes too, and a lone narrow frame is not merged
	run "$SP_FLAME" --minwidth 1% -o "$T/c.svg" "$T/mw.folded"
	assert_success
	svg_frames "$T/c.svg" | cut -f2 | paste -sd, - >"$T/names"
	assert_equal "$(cat "$T/names")" "all,main,big"
	grep -qF '<title>main (10040 samples, 100.00%)</title>' "$T/c.svg"
}

@test "sp-flame --inverted, --reverse and --flamechart change the drawing" {
	run "$SP_FLAME" -o "$T/flame.svg" "$T/in.folded"
	assert_success
	run "$SP_FLAME" --inverted -o "$T/icicle.svg" "$T/in.folded"
	assert_success
	grep -qF '<text id="title" x="600" y="24">Flame Graph</text>' "$T/flame.svg"
	grep -qF '<text id="title" x="600" y="24">Icicle Graph</text>' "$T/icicle.svg"
	# the root at the bottom of a flame graph, at the top of an icicle graph
	run awk -F '"' '/<g><title>all /  { a = $4 } /<g><title>main / { m = $4 }
		END { exit !(a > m) }' "$T/flame.svg"
	assert_success
	run awk -F '"' '/<g><title>all /  { a = $4 } /<g><title>main / { m = $4 }
		END { exit !(a < m) }' "$T/icicle.svg"
	assert_success
	# the same frames, counts and widths either way up
	cmp <(svg_frames "$T/flame.svg" | cut -f2,3,4,5) \
		<(svg_frames "$T/icicle.svg" | cut -f2,3,4,5)

	# --reverse: leaves first, so the leaves are the roots
	printf 'main;a;leaf 3\nmain;b;leaf 2\nmain;b 1\n' >"$T/rev.folded"
	run "$SP_FLAME" --reverse --minwidth 0 -o "$T/rev.svg" "$T/rev.folded"
	assert_success
	svg_paths "$T/rev.svg" | sort >"$T/got"
	cat >"$T/want" <<'EOF_WANT'
all 6 0
all;b 1 0
all;b;main 1 1
all;leaf 5 0
all;leaf;a 3 0
all;leaf;a;main 3 3
all;leaf;b 2 0
all;leaf;b;main 2 2
EOF_WANT
	diff -u "$T/want" "$T/got"

	# --flamechart keeps the input's order and merges only neighbours
	printf 'a;x 1\nb;y 1\na;z 1\na;z;q 2\n' >"$T/chart.folded"
	run "$SP_FLAME" --flamechart -o "$T/chart.svg" "$T/chart.folded"
	assert_success
	grep -qF '<text id="title" x="600" y="24">Flame Chart</text>' "$T/chart.svg"
	svg_frames "$T/chart.svg" | awk -F '\t' '{ print $1, $2, $3 }' >"$T/got"
	printf '%s\n' '0 all 5' '1 a 1' '2 x 1' '1 b 1' '2 y 1' '1 a 3' '2 z 3' \
		'3 q 2' >"$T/want"
	diff -u "$T/want" "$T/got"
	# a flame graph merges by name and sorts
	run "$SP_FLAME" -o "$T/graph.svg" "$T/chart.folded"
	assert_success
	svg_frames "$T/graph.svg" | awk -F '\t' '{ print $1, $2, $3 }' >"$T/got"
	printf '%s\n' '0 all 5' '1 a 4' '2 x 1' '2 z 3' '3 q 2' '1 b 1' '2 y 1' \
		>"$T/want"
	diff -u "$T/want" "$T/got"
}

@test "sp-flame --title, --subtitle, --countname, --nametype, --width, --height" {
	run "$SP_FLAME" --title 'CPU <hot> & cold' --subtitle 'pid 42' \
		--countname bytes --nametype 'Size of:' --width 800 --height 20 \
		-o "$T/out.svg" "$T/in.folded"
	assert_success
	xmllint --noout "$T/out.svg"
	grep -qF '<text id="title" x="400" y="24">CPU &lt;hot&gt; &amp; cold</text>' "$T/out.svg"
	grep -qF '<text id="subtitle" x="400" y="48">pid 42</text>' "$T/out.svg"
	grep -qF '<title>all (108.00 bytes, 100.00%)</title>' "$T/out.svg"
	grep -qF '"countname": "bytes", "nametype": "Size of:"' "$T/out.svg"
	grep -q '^<svg version="1.1" width="800" ' "$T/out.svg"
	# frames of 20 pixels: 19 high, one apart
	[[ $(grep -c 'height="19" fill=' "$T/out.svg") == $(svg_frames "$T/out.svg" 20 | wc -l) ]]
	run "$SP_FLAME" -o "$T/plain.svg" "$T/in.folded"
	grep -qF '<title>all (108.00 samples, 100.00%)</title>' "$T/plain.svg"
	grep -qF '"nametype": "Function:"' "$T/plain.svg"
	run grep -c 'id="subtitle"' "$T/plain.svg"
	assert_output 0
	# non-ASCII and quotes reach the script as escapes, not raw bytes
	run "$SP_FLAME" --countname $'\xc3\xa9v\xc3\xa9nements "x"' -o "$T/u.svg" "$T/in.folded"
	assert_success
	grep -qF '"countname": "\u00e9v\u00e9nements \u0022x\u0022"' "$T/u.svg"
	xmllint --noout "$T/u.svg"
}

@test "sp-flame --colors: palettes, and frames coloured by their kind" {
	local r g b f
	run "$SP_FLAME" -o "$T/hot.svg" "$T/in.folded"
	assert_success
	# hot: red 205..255, green 0..230, blue 0..55
	read -r r g b < <(rgb "$(fill_of "$T/hot.svg" parse)")
	((r >= 205 && b <= 55)) || fail "parse in hot is $r,$g,$b"
	# JIT green, kernel orange, [unknown] grey
	read -r r g b < <(rgb "$(fill_of "$T/hot.svg" run)")
	((g >= 200 && r <= 110 && b <= 110)) || fail "run_[j] is $r,$g,$b"
	read -r r g b < <(rgb "$(fill_of "$T/hot.svg" do_idle)")
	((r >= 190 && g >= 90 && g <= 155 && b == 0)) || fail "do_idle_[k] is $r,$g,$b"
	read -r r g b < <(rgb "$(fill_of "$T/hot.svg" '[unknown]')")
	((r == g && g == b)) || fail "[unknown] is $r,$g,$b"
	# the annotation is no part of the name shown
	run grep -c '_\[[kj]\]' "$T/hot.svg"
	assert_output 0
	# inlined frames aqua
	printf 'main;inl_[i] 1\n' | "$SP_FLAME" -o "$T/inl.svg"
	read -r r g b < <(rgb "$(fill_of "$T/inl.svg" inl)")
	((r <= 110 && g >= 165 && g == b)) || fail "inl_[i] is $r,$g,$b"

	# a flat palette: every plain frame in its hue
	for f in blue green; do
		run "$SP_FLAME" --colors "$f" -o "$T/$f.svg" "$T/in.folded"
		assert_success
	done
	svg_frames "$T/blue.svg" | cut -f2,6 | while IFS=$'\t' read -r f c; do
		[[ $f == '[unknown]' ]] && continue
		read -r r g b < <(rgb "$c")
		((b >= 205 && r == g && r <= 140)) || fail "$f is $r,$g,$b in blue"
	done
	svg_frames "$T/green.svg" | cut -f2,6 | while IFS=$'\t' read -r f c; do
		[[ $f == '[unknown]' ]] && continue
		read -r r g b < <(rgb "$c")
		((g >= 200 && r == b)) || fail "$f is $r,$g,$b in green"
	done
	# mem: no red at all; io: red equals green
	run "$SP_FLAME" --colors mem -o "$T/mem.svg" "$T/in.folded"
	read -r r g b < <(rgb "$(fill_of "$T/mem.svg" parse)")
	((r == 0 && g >= 190)) || fail "parse in mem is $r,$g,$b"
	run "$SP_FLAME" --colors io -o "$T/io.svg" "$T/in.folded"
	read -r r g b < <(rgb "$(fill_of "$T/io.svg" parse)")
	((r == g && b >= 190)) || fail "parse in io is $r,$g,$b"
	# the background follows the palette
	grep -qF 'stop-color="#e0ffe0"' "$T/mem.svg"
	grep -qF 'stop-color="#eeeeb0"' "$T/hot.svg"
	# java: a C++ name yellow, a Java package green
	printf 'java/lang/Thread.run;Foo::bar 1\n' | "$SP_FLAME" --colors java -o "$T/java.svg"
	read -r r g b < <(rgb "$(fill_of "$T/java.svg" Foo::bar)")
	((r == g && b <= 70)) || fail "Foo::bar in java is $r,$g,$b"
	read -r r g b < <(rgb "$(fill_of "$T/java.svg" java/lang/Thread.run)")
	((g >= 200 && r == b)) || fail "java/lang/Thread.run in java is $r,$g,$b"
}

@test "sp-flame --hash: a name has its colour in every graph, alike names alike" {
	printf 'main;alpha_one;zeta 5\nmain;alpha_two 3\n' >"$T/a.folded"
	printf 'other;zeta 1\nother;main;alpha_one 9\nbeta 2\n' >"$T/b.folded"
	run "$SP_FLAME" --hash -o "$T/a.svg" "$T/a.folded"
	assert_success
	run "$SP_FLAME" --hash -o "$T/b.svg" "$T/b.folded"
	assert_success
	local n ca cb
	for n in main alpha_one zeta; do
		ca=$(fill_of "$T/a.svg" "$n")
		cb=$(fill_of "$T/b.svg" "$n")
		[[ -n $ca && $ca == "$cb" ]] || fail "$n is $ca in one graph, $cb in the other"
	done
	# alpha_one and alpha_two start alike: the same green in hot
	local r1 g1 b1 r2 g2 b2
	read -r r1 g1 b1 < <(rgb "$(fill_of "$T/a.svg" alpha_one)")
	read -r r2 g2 b2 < <(rgb "$(fill_of "$T/a.svg" alpha_two)")
	((g1 == g2)) || fail "alpha_one $r1,$g1,$b1 and alpha_two $r2,$g2,$b2 differ in green"
	# without --hash colours are stable per name too, but another mapping
	run "$SP_FLAME" -o "$T/a0.svg" "$T/a.folded"
	run "$SP_FLAME" -o "$T/b0.svg" "$T/b.folded"
	[[ $(fill_of "$T/a0.svg" zeta) == "$(fill_of "$T/b0.svg" zeta)" ]]
	local differ=0
	for n in main alpha_one alpha_two zeta; do
		[[ $(fill_of "$T/a0.svg" "$n") != "$(fill_of "$T/a.svg" "$n")" ]] &&
			differ=$((differ + 1))
	done
	((differ > 0)) || fail "--hash changed no colour"
}

@test "sp-flame --diff and two-column input: red grew, blue shrank" {
	printf 'main;grow 10\nmain;shrink 40\nmain;same 5\n' >"$T/before.folded"
	printf 'main;grow 30\nmain;shrink 10\nmain;same 5\n' >"$T/after.folded"
	run "$SP_FLAME" --diff -o "$T/diff.svg" "$T/before.folded" "$T/after.folded"
	assert_success
	xmllint --noout "$T/diff.svg"
	grep -qF '>Differential Flame Graph</text>' "$T/diff.svg"
	local r g b
	read -r r g b < <(rgb "$(fill_of "$T/diff.svg" grow)")
	((r == 255 && g == b && g < 255)) || fail "grow is $r,$g,$b, want red"
	read -r r g b < <(rgb "$(fill_of "$T/diff.svg" shrink)")
	((b == 255 && r == g && r < 255)) || fail "shrink is $r,$g,$b, want blue"
	assert_equal "$(fill_of "$T/diff.svg" same)" '#ffffff'
	# the largest change is the deepest hue: grow +20 of 30 max |change|
	assert_equal "$(fill_of "$T/diff.svg" shrink)" '#0000ff'
	# widths by AFTER; the tooltips say what it was and the change
	grep -qF '<title>grow (30 samples, 66.67%; before 10, self +20, +44.44%)</title>' "$T/diff.svg"
	grep -qF '<title>shrink (10 samples, 22.22%; before 40, self -30, -66.67%)</title>' "$T/diff.svg"
	grep -qF '<title>main (45 samples, 100.00%; before 55, self 0, 0.00%)</title>' "$T/diff.svg"

	# difffolded.pl's two columns, BEFORE AFTER, draw the same graph
	join <(sort "$T/before.folded") <(sort "$T/after.folded") >"$T/two.folded"
	run "$SP_FLAME" -o "$T/two.svg" "$T/two.folded"
	assert_success
	cmp "$T/diff.svg" "$T/two.svg"

	# --negate swaps the hues and the signs
	run "$SP_FLAME" --negate -o "$T/neg.svg" "$T/two.folded"
	assert_success
	read -r r g b < <(rgb "$(fill_of "$T/neg.svg" grow)")
	((b == 255 && r == g && r < 255)) || fail "grow --negate is $r,$g,$b, want blue"
	read -r r g b < <(rgb "$(fill_of "$T/neg.svg" shrink)")
	((r == 255 && g == b && g < 255)) || fail "shrink --negate is $r,$g,$b, want red"
	grep -qF 'self -20, -44.44%)' "$T/neg.svg"

	# a stack only in BEFORE adds nothing to the width; only in AFTER is red
	printf 'main;gone 10\n' >>"$T/before.folded"
	printf 'main;new 10\n' >>"$T/after.folded"
	run "$SP_FLAME" --diff -o "$T/d2.svg" "$T/before.folded" "$T/after.folded"
	assert_success
	run grep -c '<title>gone ' "$T/d2.svg"
	assert_output 0
	grep -qF '<title>new (10 samples, 18.18%; before 0, self +10, +18.18%)</title>' "$T/d2.svg"
	# inputs of --diff have one count each
	run --separate-stderr "$SP_FLAME" --diff "$T/two.folded" "$T/after.folded"
	assert_failure 2
	assert_equal "$stderr" "sp-flame: two counts in an input of --diff: give each side in its own file at line 1 of '$T/two.folded'"
}

@test "sp-flame: names that would break XML are escaped, bad bytes replaced" {
	{
		printf 'main;operator<(a&b, "c") 3\n'
		printf "main;it's ]]> here 2\n"
		printf 'main;ctl\001\002\033x 1\n'
		printf 'main;bad\377\376utf8 1\n'
		printf 'main;caf\303\251;\357\277\276nonchar 1\n'
		printf 'main;cut\303 1\n'
		printf 'main;tab\there 1\n'
		printf 'main;\355\240\200surrogate 1\n'
	} >"$T/nasty.folded"
	run --separate-stderr "$SP_FLAME" --minwidth 0 -o "$T/out.svg" "$T/nasty.folded"
	assert_success
	run xmllint --noout "$T/out.svg"
	assert_success
	# the names read back through an XML parser
	python3 -c '
import sys, xml.etree.ElementTree as ET
for t in ET.parse(sys.argv[1]).iter("{http://www.w3.org/2000/svg}title"):
    sys.stdout.buffer.write(t.text.encode() + b"\n")' "$T/out.svg" >"$T/titles"
	grep -qF 'operator<(a&b, "c") (3 samples' "$T/titles"
	grep -qF "it's ]]> here (2 samples" "$T/titles"
	grep -qF $'ctl\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx (1 samples' "$T/titles"
	grep -qF $'bad\xef\xbf\xbd\xef\xbf\xbdutf8 (1 samples' "$T/titles"
	grep -qF $'caf\xc3\xa9 (1 samples' "$T/titles"
	grep -qF $'\xef\xbf\xbdnonchar (1 samples' "$T/titles"
	grep -qF $'cut\xef\xbf\xbd (1 samples' "$T/titles"
	grep -qF $'\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdsurrogate (1 samples' "$T/titles"
	# labels too, and the raw text holds references, not the characters
	grep -qF '>operator&lt;(a&amp;b, &quot;c&quot;)<' "$T/out.svg"
	grep -qF 'tab&#9;here' "$T/out.svg"
	run grep -c $'\x01' "$T/out.svg"
	assert_output 0
	# a label cut to its width does not cut a character in two
	printf 'main;%s 1\nmain;x 200\n' "$(printf 'é%.0s' {1..40})" >"$T/wide.folded"
	run "$SP_FLAME" --width 300 -o "$T/wide.svg" "$T/wide.folded"
	assert_success
	xmllint --noout "$T/wide.svg"
}

@test "sp-flame: the same input gives the same bytes, whatever its order" {
	awk 'BEGIN { for (i = 0; i < 2000; i++)
		printf "p;f%d;g%d;h%d %d\n", i % 11, i % 17, i % 101, i % 9 + 1 }' >"$T/a.folded"
	run "$SP_FLAME" -o "$T/1.svg" "$T/a.folded"
	assert_success
	run "$SP_FLAME" -o "$T/2.svg" "$T/a.folded"
	assert_success
	cmp "$T/1.svg" "$T/2.svg"
	# shuffled (a fixed shuffle): the same graph
	awk '{ print (NR * 7919) % 2003, $0 }' "$T/a.folded" | sort -n | cut -d' ' -f2- >"$T/b.folded"
	! cmp -s "$T/a.folded" "$T/b.folded"
	run "$SP_FLAME" -o "$T/3.svg" "$T/b.folded"
	assert_success
	cmp "$T/1.svg" "$T/3.svg"
	# nothing of the moment: no dates, no versions of tools in the output
	run grep -cE '20[0-9][0-9]-[01][0-9]-|[0-9]:[0-5][0-9]:[0-5][0-9]' "$T/1.svg"
	assert_output 0
}

@test "sp-flame: bad input is one line naming the input and line, exit 2" {
	# input | the stderr it must print ("IN" is the file's name)
	local bad=0 in want
	while IFS='|' read -r in want; do
		printf '%b' "$in" >"$T/bad.folded"
		run --separate-stderr "$SP_FLAME" -o "$T/out.svg" "$T/bad.folded"
		want=${want//IN/$T/bad.folded}
		if ((status != 2)) || [[ $stderr != "$want" ]] ||
			((${#stderr_lines[@]} != 1)) || [[ -e $T/out.svg ]]; then
			echo "# input '$in': exit $status, stderr: $stderr"
			echo "#   want: $want"
			bad=$((bad + 1))
		fi
	done <<'EOF_CASES'
a;b 1\na;b x\n|sp-flame: the count is not a number at line 2 of 'IN': 'a;b x'
a;b 1\n\n# note\na;b 12x\n|sp-flame: the count is not a number at line 4 of 'IN': 'a;b 12x'
a;b 1\na;b;c\n|sp-flame: no count: want 'frame;...;frame COUNT' at line 2 of 'IN': 'a;b;c'
a;b 1\na;b;c|sp-flame: truncated last line (no newline): no count: want 'frame;...;frame COUNT' at line 2 of 'IN': 'a;b;c'
a;b -1\n|sp-flame: the count is not a number at line 1 of 'IN': 'a;b -1'
a;b 99999999999999999\n|sp-flame: the count is too large (above 2^53 - 1) at line 1 of 'IN': 'a;b 99999999999999999'
a;;b 1\n|sp-flame: empty frame: ';;' in the stack at line 1 of 'IN': 'a;;b 1'
 5\n|sp-flame: no stack before the count at line 1 of 'IN': ' 5'
a 1 2\nb 3\n|sp-flame: one count, but the input has two per line (BEFORE AFTER) at line 2 of 'IN': 'b 3'
a\000b 1\n|sp-flame: NUL byte in the line: not text at line 1 of 'IN': 'a?b 1'
|sp-flame: nothing to draw: no stack with a count above 0 in the input
# only a comment\n\n|sp-flame: nothing to draw: no stack with a count above 0 in the input
a 0\n|sp-flame: nothing to draw: no stack with a count above 0 in the input
EOF_CASES
	((bad == 0)) || fail "$bad bad inputs were not refused as they should"

	# one file of two with one count each, the other of two
	printf 'a 1 2\n' >"$T/two.folded"
	printf 'a 1\n' >"$T/one.folded"
	run --separate-stderr "$SP_FLAME" "$T/one.folded" "$T/two.folded"
	assert_failure 2
	assert_equal "$stderr" "sp-flame: two counts after lines of one: mixed inputs at line 1 of '$T/two.folded'"
}

@test "sp-flame: a stackpulse stream given by mistake says what to run" {
	local tab=$'\t'
	printf 'SPRAW\0\0\0\1\0\0\0\20\0\0\0' >"$T/raw"
	printf 'SPUNWND\0\1\0\0\0\20\0\0\0' >"$T/unw"
	printf 'SPSPOOL\0\1\0\0\0\20\0\0\0' >"$T/spool"
	printf '# stackpulse symbolized 1\nsummary%ssamples=0\n' "$tab" >"$T/sym"
	run --separate-stderr "$SP_FLAME" <"$T/raw"
	assert_failure 2
	assert_equal "$stderr" "sp-flame: 'stdin' is a raw stream: pipe it into sp-unwind, sp-symbolize and sp-fold first"
	run --separate-stderr "$SP_FLAME" <"$T/unw"
	assert_failure 2
	assert_equal "$stderr" "sp-flame: 'stdin' is an unwound stream: pipe it into sp-symbolize and sp-fold first"
	run --separate-stderr "$SP_FLAME" "$T/sym"
	assert_failure 2
	assert_equal "$stderr" "sp-flame: '$T/sym' is a symbolized stream: pipe it into sp-fold first"
	run --separate-stderr "$SP_FLAME" <"$T/spool"
	assert_failure 2
	assert_equal "$stderr" "sp-flame: 'stdin' is a spool file: read it back with 'sp-spool cat' and pipe it into sp-symbolize and sp-fold"
	[[ -z $output ]]
}

@test "sp-flame: a closed pipe ends it quietly" {
	awk 'BEGIN { for (i = 0; i < 5000; i++) printf "p;f%d;g%d %d\n", i, i, i + 1 }' >"$T/a.folded"
	run bash -c "'$SP_FLAME' --minwidth 0 '$T/a.folded' | head -c 100 >/dev/null; echo \${PIPESTATUS[0]}"
	assert_output 0
}

@test "sp-flame: a real recording drawn: the workload's functions, its shares" {
	require_tools
	need_perf_events
	build_workloads
	WL_CLOCK=cpu start_target --go wl-single 2
	sp_pipeline_start "$T/single.folded" -p "$TARGET_PID" -F 999
	recording_started
	release_target
	sp_pipeline_wait
	assert_pipeline_ok "$T/single.folded"

	run sp_flame -o "$T/single.svg" "$T/single.folded"
	assert_success
	xmllint --noout "$T/single.svg"
	# the counts drawn are the folded ones, frame by frame
	expected_paths "$T/single.folded" 0 >"$T/want"
	svg_paths "$T/single.svg" | LC_ALL=C sort >"$T/got"
	# frames under 0.1 px are left out: compare those drawn
	awk 'NR == FNR { want[$1] = $2 " " $3; next }
		!($1 in want) || want[$1] != $2 " " $3 { print "bad: " $0 " want " want[$1]; bad = 1 }
		END { exit bad }' "$T/want" "$T/got"
	# the designed functions with plausible shares of all samples
	local total share f
	total=$(fold_count "$T/single.folded")
	((total >= 1000)) || fail "only $total samples"
	for f in leaf_a:"$WL_SINGLE_SHARE_A" leaf_b:"$WL_SINGLE_SHARE_B" leaf_c:"$WL_SINGLE_SHARE_C"; do
		share=$(svg_frames "$T/single.svg" | awk -F '\t' -v n="${f%%:*}" -v t="$total" \
			'$2 == n { c += $3 } END { printf "%d\n", 100 * c / t + 0.5 }')
		((share >= ${f#*:} - WL_SHARE_TOLERANCE && share <= ${f#*:} + WL_SHARE_TOLERANCE)) ||
			fail "${f%%:*} has $share% of the samples in the SVG, want ${f#*:}"
	done
	grep -qF "<title>main (" "$T/single.svg"
}
