#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# formats.bats: sp-fold --format pprof and --format speedscope, and
# --names, each read back by its real consumer: go tool pprof (Debian's
# golang-go), speedscope's JSON schema and the speedscope app in headless
# chromium (tests/browser/).  The recordings are made once, in setup_file,
# of workloads of known call structure: wl-single (designed leaf shares),
# wl-threads (four named threads), sym-inline (an inline chain with lines)
# and sym-cxx (C++ templates).

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
load common

# symbolized FILE RAW: sp-unwind < RAW | sp-symbolize > FILE
symbolized() {
	"$SP_UNWIND" <"$2" 2>/dev/null | "$SP_SYMBOLIZE" --kallsyms /dev/null \
		>"$1" 2>/dev/null || true
	[[ -s $1 ]]
}

setup_file() {
	require_tools
	need_perf_events
	build_workloads
	D=$BATS_FILE_TMPDIR
	"${WL_CC:-cc}" -O2 -g -fomit-frame-pointer -I"$WL_SRC" \
		-o "$D/sym-inline" "$WL_SRC/sym-inline.c"
	"${WL_CXX:-g++}" -O2 -g -o "$D/sym-cxx" "$WL_SRC/sym-cxx.cc"

	# whole CPU-time budgets, released once the recorder attached
	WL_CLOCK=cpu start_target --go wl-single 2
	date +%s%N >"$D/single.before"
	record_released "$D/single.raw" -F 999
	date +%s%N >"$D/single.after"
	WL_CLOCK=cpu start_target --go wl-threads 2
	record_released "$D/threads.raw" -F 499
	start_cmd --go "$D/sym-inline" 1
	record_released "$D/inline.raw" -F 999
	start_cmd "$D/sym-cxx" 30
	"$SP_RECORD" -p "$TARGET_PID" -d 1 -F 999 -o "$D/cxx.raw" 2>/dev/null
	kill "$TARGET_PID"
	local r
	for r in single threads inline cxx; do
		symbolized "$D/$r.sym" "$D/$r.raw"
	done
}

setup() {
	require_tools
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
	for r in single threads inline cxx; do
		[[ -s $D/$r.sym ]] || fail "the $r recording of setup_file is missing"
	done
}

pprof() {
	HOME=$T GOCACHE=$T/gocache "$GO" tool pprof "$@" 2>"$T/pprof.err"
}

# build_id BIN: the GNU build-id of BIN in hex.
build_id() {
	readelf -n "$1" | awk '/Build ID:/ { print $3 }'
}

# cum_share TOP NAME: the cum% pprof -top gives NAME, rounded.
cum_share() {
	awk -v n="$2" '$6 == n { sub(/%/, "", $5); printf "%d\n", $5 + 0.5; f = 1 }
		END { if (!f) print -1 }' "$1"
}

# chains TRACES: each trace of pprof -traces as one line, " leaf ... root"
# (the inline marks dropped).
chains() {
	awk '/^-----/ { if (t != "") print t; t = ""; on = 1; next }
		!on || /^ *[a-z_]+: / { next }
		{ sub(/ \(inline\)$/, ""); t = t " " $NF }
		END { if (t != "") print t }' "$1"
}

@test "pprof: go tool pprof -top gives wl-single's designed shares" {
	need_go
	run sp_fold --format pprof -o "$T/p.pb.gz" "$D/single.sym"
	assert_success
	[[ $(head -c2 "$T/p.pb.gz" | od -An -tx1 | tr -d ' ') == 1f8b ]] ||
		fail "not gzip-compressed"
	pprof -top -nodecount=100 "$T/p.pb.gz" >"$T/top" ||
		fail "pprof -top failed: $(cat "$T/pprof.err")"
	cat "$T/top"
	for f in leaf_a:$WL_SINGLE_SHARE_A leaf_b:$WL_SINGLE_SHARE_B \
		leaf_c:$WL_SINGLE_SHARE_C; do
		s=$(cum_share "$T/top" "${f%%:*}")
		((s >= ${f#*:} - WL_SHARE_TOLERANCE && s <= ${f#*:} + WL_SHARE_TOLERANCE)) ||
			fail "${f%%:*}: $s%, designed ${f#*:}%"
	done
	# the same samples as the folded output, in both sample types
	n=$(sp_fold "$D/single.sym" | awk '{ s += $NF } END { print s }')
	grep -q "Type: cpu" "$T/top" || fail "default sample type is not cpu"
	pprof -top -sample_index=samples "$T/p.pb.gz" >"$T/top2"
	grep -qE "Total samples = $n\b|of $n total" "$T/top2" ||
		fail "pprof counts $(grep -E 'total' "$T/top2"), folded $n"
}

@test "pprof: -traces shows the full chain from main, leaf first" {
	need_go
	sp_fold --format pprof -o "$T/p.pb.gz" "$D/single.sym"
	pprof -traces "$T/p.pb.gz" >"$T/traces"
	chains "$T/traces" >"$T/chains"
	# frames leaf first; wl_burn is inlined into each leaf
	grep -q '^ wl_burn leaf_a middle_a outer_a run main$' "$T/chains" ||
		fail "no trace leaf_a..main: $(head -5 "$T/chains")"
	grep -q '^ wl_burn leaf_b outer_b run main$' "$T/chains" ||
		fail "no trace leaf_b..main"
}

@test "pprof: period, duration, sample types and comment from the recording" {
	need_go
	sp_fold --format pprof -o "$T/p.pb.gz" "$D/single.sym"
	pprof -raw "$T/p.pb.gz" >"$T/raw"
	grep -qx 'PeriodType: cpu nanoseconds' "$T/raw" || fail "$(head "$T/raw")"
	# 999 Hz: a period of 1e9 / 999 ns
	grep -qx 'Period: 1001001' "$T/raw" || fail "$(grep Period "$T/raw")"
	grep -qx 'samples/count cpu/nanoseconds' "$T/raw" ||
		fail "sample types: $(sed -n '/^Samples:/{n;p}' "$T/raw")"
	grep -qx 'Comment: stackpulse .*' "$T/raw"
	# the duration of the recording (2 s of CPU, at least 1.9 s long)
	d=$(sed -n 's/^Duration: //p' "$T/raw")
	awk -v d="$d" 'BEGIN { exit !(d + 0 >= 1.9 && d + 0 < 60) }' ||
		fail "duration $d"
	# each sample's cpu value is its sampled period: about count * period
	awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
		on && $2 ~ /^[0-9]+:?$/ { sub(/:/, "", $2); c += $1; ns += $2 }
		END { r = ns / (c * 1001001); exit !(c > 0 && r > 0.8 && r < 1.25) }' "$T/raw" ||
		fail "cpu nanoseconds do not follow the sample counts"
}

@test "pprof: an inline chain is one location of several lines, innermost first" {
	need_go
	sp_fold --format pprof -o "$T/p.pb.gz" "$D/inline.sym"
	pprof -raw "$T/p.pb.gz" >"$T/raw"
	src=$WL_SRC/sym-inline.c
	# Locations: "ID: 0xADDR M=N FUNC FILE:LINE s=0" then indented lines
	awk '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 }
		on && /^ +[0-9]+: / { loc = $1; sub(/.*M=[0-9]+ /, ""); print loc, $1, $2; next }
		on { print loc, $1, $2 }' "$T/raw" >"$T/lines"
	leaf=$(grep -n 'LINE:leaf ' "$src" | cut -d: -f1)
	# every location whose innermost line is leaf_inl's (the samples may
	# have hit several addresses of that line): its chain, one per line
	run awk -v l="tests/workloads/sym-inline.c:$leaf" '
		$1 != loc { loc = $1; first = 1 }
		first && $2 == "leaf_inl" && $3 ~ l"$" { want[loc] = 1; n++ }
		{ first = 0; chain[loc] = chain[loc] " " $2 }
		END { for (k in want) print chain[k]; exit !n }' "$T/lines"
	[[ $status == 0 && -z $(grep -vx ' leaf_inl mid_inl outer_inl run' <<<"$output") ]] ||
		fail "chains of leaf_inl's locations: '$output'; $(cat "$T/lines")"
	pprof -lines -top "$T/p.pb.gz" >"$T/top"
	grep -q " leaf_inl [^ ]*/sym-inline.c:$leaf (inline)\$" "$T/top" ||
		fail "-lines has no leaf_inl at sym-inline.c:$leaf: $(cat "$T/top")"
	grep -q '\[IN\]' "$T/raw" || fail "mapping not marked as having inline frames"
}

@test "pprof: mappings have the file, its range and its build-id" {
	need_go
	sp_fold --format pprof -o "$T/p.pb.gz" "$D/single.sym"
	pprof -raw "$T/p.pb.gz" >"$T/raw"
	bin=$WL_DIR/wl-single
	bid=$(build_id "$bin")
	[[ -n $bid ]] || fail "no build-id in $bin"
	line=$(sed -n '/^Mappings/,$p' "$T/raw" | grep -F " $bin ")
	[[ -n $line ]] || fail "no mapping of $bin: $(sed -n '/^Mappings/,$p' "$T/raw")"
	[[ $line == *" $bid "* || $line == *" $bid" ]] ||
		fail "mapping of $bin without its build-id $bid: $line"
	[[ $line == *'[FN][FL][LN]'* ]] || fail "symbolized flags missing: $line"
	# its range holds the addresses of its locations
	read -r start limit < <(sed -E 's|^[0-9]+: (0x[0-9a-f]+)/(0x[0-9a-f]+)/.*|\1 \2|' <<<"$line")
	id=${line%%:*}
	n=0
	while read -r addr; do
		((addr >= start && addr < limit)) || fail "location $addr outside its mapping $line"
		n=$((n + 1))
	done < <(awk -v m="M=$id" '$3 == m { print $2 }' "$T/raw")
	((n > 0)) || fail "no location in $line"
}

@test "pprof: pid, tid and thread_name labels; -tagfocus picks one thread" {
	need_go
	sp_fold --format pprof -o "$T/p.pb.gz" "$D/threads.sym"
	pprof -tags "$T/p.pb.gz" >"$T/tags"
	for n in 1 2 3 4; do
		grep -q "worker-$n" "$T/tags" || fail "no thread_name worker-$n: $(cat "$T/tags")"
	done
	grep -q '^ *pid:' "$T/tags" && grep -q '^ *tid:' "$T/tags" ||
		fail "no pid or tid labels: $(cat "$T/tags")"
	pprof -top -tagfocus=thread_name=worker-2 "$T/p.pb.gz" >"$T/top"
	grep -q ' spin_2$' "$T/top" || fail "worker-2 without spin_2: $(cat "$T/top")"
	! grep -qE ' spin_[134]$' "$T/top" || fail "-tagfocus kept other threads"
	# a numeric label selects as well: the tid of worker-3
	tid=$(awk -F'\t' '$1 == "comm" && $5 == "worker-3" { print $4; exit }' "$D/threads.sym")
	pprof -top -tagfocus="tid=$tid" "$T/p.pb.gz" >"$T/top3"
	grep -q ' spin_3$' "$T/top3" && ! grep -qE ' spin_[124]$' "$T/top3" ||
		fail "-tagfocus=tid=$tid: $(cat "$T/top3")"
}

@test "pprof: short names, the mangled symbol as system_name, the start line" {
	need_go
	sp_fold --format pprof -o "$T/p.pb.gz" "$D/cxx.sym"
	pprof -raw "$T/p.pb.gz" >"$T/raw"
	# Locations: "NAME FILE:LINE s=START(SYSTEM NAME)"
	start=$(grep -n 'NOINLINE std::uint64_t hot(' "$WL_SRC/sym-cxx.cc" | cut -d: -f1)
	grep -qE " app::detail::hot<std::pair<int, long> > [^ ]*sym-cxx.cc:[0-9]+ s=$start\(_ZN3app6detail3hotISt4pairIilEEEmPT_m\)\$" "$T/raw" ||
		fail "no short name, start line $start and mangled name: $(sed -n '/^Locations/,/^Mappings/p' "$T/raw" | head)"
	# pprof shows the short name as it is, not its own simplification
	pprof -top -symbolize=none "$T/p.pb.gz" >"$T/top"
	grep -qF ' app::detail::hot<std::pair<int, long> >' "$T/top" ||
		fail "pprof does not show the short name: $(cat "$T/top")"
	sp_fold --format pprof --names full -o "$T/full.pb.gz" "$D/cxx.sym"
	pprof -raw "$T/full.pb.gz" >"$T/raw"
	grep -qF ' unsigned long app::detail::hot<std::pair<int, long> >(std::pair<int, long>*, unsigned long) ' "$T/raw" ||
		fail "--names full: $(sed -n '/^Locations/,/^Mappings/p' "$T/raw" | head)"
}

@test "pprof: --pid roots stacks at comm-PID and hidden frames stay out, as in folded" {
	need_go
	pid=$(awk -F'\t' '$1 == "sample" { print $3; exit }' "$D/single.sym")
	sp_fold --format pprof --pid -o "$T/p.pb.gz" "$D/single.sym"
	pprof -traces "$T/p.pb.gz" >"$T/traces"
	chains "$T/traces" >"$T/chains"
	grep -q " run main wl-single-$pid\$" "$T/chains" ||
		fail "no wl-single-$pid root: $(head -5 "$T/chains")"
	! grep -qE ' (_start|__libc_start_[a-z_]*)( |$)' "$T/chains" ||
		fail "hidden frames in the profile"
	sp_fold --format pprof --hidden -o "$T/h.pb.gz" "$D/single.sym"
	pprof -traces "$T/h.pb.gz" >"$T/traces"
	chains "$T/traces" >"$T/chains"
	grep -q " main __libc_start_call_main .*_start\$" "$T/chains" ||
		fail "--hidden: no _start root: $(head -5 "$T/chains")"
}

@test "pprof: the same input gives the same bytes; a terminal is refused" {
	sp_fold --format pprof -o "$T/a.pb.gz" "$D/threads.sym"
	sp_fold --format pprof -o "$T/b.pb.gz" "$D/threads.sym"
	cmp "$T/a.pb.gz" "$T/b.pb.gz"
	run sp_fold --format pprof -o /dev/tty "$D/threads.sym"
	# without a terminal /dev/tty cannot be opened at all: either way no bytes
	assert_failure
	run sp_fold --format pprof --top 5 "$D/threads.sym"
	assert_failure 64
	run sp_fold --format svg "$D/threads.sym"
	assert_failure 64
	assert_output --partial "invalid --format 'svg'"
}

@test "symbolized stream: a start line on the wall clock, map lines with build-ids" {
	# REALTIME lies between the wall clock read before and after recording
	read -r time rt < <(awk -F'\t' '$1 == "start" { print $2, $3 }' "$D/single.sym")
	(($(sed -n 3p "$D/single.sym" | cut -f1 | grep -c '^start$') == 1)) ||
		fail "start is not the line after the event line"
	((rt >= $(cat "$D/single.before") && rt <= $(cat "$D/single.after"))) ||
		fail "start REALTIME $rt not between $(cat "$D/single.before") and $(cat "$D/single.after")"
	# the executable mappings of the workload and libc, with their build-ids
	for f in "$WL_DIR/wl-single" "$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)"; do
		bid=$(readelf -n "$f" | awk '/Build ID:/ { print $3 }')
		awk -F'\t' -v f="$f" -v b="$bid" '$1 == "map" && $7 == b && $8 == f { ok = 1 }
			END { exit !ok }' "$D/single.sym" ||
			fail "no map line of $f with build-id $bid: $(grep '^map' "$D/single.sym")"
	done
	# every native frame lies in a map line of its process
	python3 - "$D/single.sym" <<'EOF_PY' || fail "native frames outside every map line"
import sys
maps, bad = [], 0
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "map":
        maps.append((f[2], int(f[3], 16), int(f[4], 16)))
    elif f[0] == "frame" and f[4] == "native":
        a = int(f[7], 16)
        if not any(p == f[1] and s <= a < e for p, s, e in maps):
            print(line, end="")
            bad += 1
sys.exit(bad > 0)
EOF_PY
	# a spool keeps the start; a raw stream of the first version has none
	"$SP_UNWIND" <"$D/single.raw" 2>/dev/null | "$SP_BIN/sp-spool/sp-spool" write "$T/s.spool"
	"$SP_BIN/sp-spool/sp-spool" cat "$T/s.spool" | "$SP_SYMBOLIZE" --kallsyms /dev/null 2>/dev/null |
		grep -qx "start	$time	$rt" || fail "the spool lost the start time"
	# the first version's 112-byte header, as older recorders wrote it
	{ head -c 12 "$D/single.raw"; printf '\160\0\0\0'; tail -c +17 "$D/single.raw" | head -c 96
	  tail -c +121 "$D/single.raw"; } >"$T/old.raw"
	"$SP_UNWIND" <"$T/old.raw" 2>/dev/null | "$SP_SYMBOLIZE" --kallsyms /dev/null 2>/dev/null >"$T/old.sym"
	grep -qx "start	$time	0" "$T/old.sym" || fail "old header: $(sed -n 3p "$T/old.sym")"
	[[ $(grep -c '^sample' "$T/old.sym") == $(grep -c '^sample' "$D/single.sym") ]]
	sp_fold --format pprof -o "$T/p.pb.gz" "$D/single.sym"
	need_go
	pprof -raw "$T/p.pb.gz" | grep -q "^Time: $(date -d @"${rt:0:10}" +%Y-%m-%d)" ||
		fail "pprof shows no recording time: $(head -5 "$T/pprof.err")"
}

# py EXPR-FILE: run python3 on the speedscope file in $T/s.json
ss_py() {
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); $1" "$T/s.json"
}

@test "speedscope: valid by speedscope's schema, one profile per thread" {
	need_browser
	run sp_fold --format speedscope -o "$T/s.json" "$D/threads.sym"
	assert_success
	run node "$BROWSER_DIR/speedscope.mjs" --validate "$T/s.json"
	assert_success
	# a profile per worker, named comm PID/TID, its weights the thread's
	# samples as folded --tid counts them
	sp_fold --tid "$D/threads.sym" |
		awk '{ split($1, a, ";"); n[a[1]] += $NF } END { for (t in n) print t, n[t] }' |
		sort >"$T/want"
	ss_py 'print("\n".join(sorted("%s %d" % (p["name"].replace(" ", "-", 1).replace(" ", ""), sum(p["weights"])) for p in d["profiles"])))' >"$T/got"
	diff "$T/want" "$T/got"
	for n in 1 2 3 4; do
		grep -q "^worker-$n-" "$T/got" || fail "no profile for worker-$n"
	done
	# samples root first: a worker's work is under its thread entry (a
	# sample may catch the thread's start or end, outside both)
	ss_py '
f = d["shared"]["frames"]
for p in d["profiles"]:
    if p["name"].startswith("worker-"):
        n = p["name"][7]
        inside = 0
        for s, w in zip(p["samples"], p["weights"]):
            names = [f[i]["name"] for i in s]
            if "work_" + n in names:
                assert names.index("work_" + n) > names.index("thread_main_" + n), names
                inside += w
        assert inside >= 0.9 * sum(p["weights"]), (p["name"], inside)
'
}

@test "speedscope: a thread renamed after its first sample is named as it ended" {
	# worker-1 renamed just after its first sample, as a thread sampled
	# before it names itself (or an exec) is: one profile, the new name
	awk -F'\t' -v OFS='\t' '$1 == "comm" && $5 ~ /^worker-1/ { tid = $4 }
		{ print }
		$1 == "sample" && $4 == tid && !done { print "comm", $2, $3, $4, "renamed", "-"; done = 1 }' \
		"$D/threads.sym" >"$T/renamed.sym"
	grep -q '	renamed	' "$T/renamed.sym" || fail "no sample of worker-1 to rename after"
	run sp_fold --format speedscope -o "$T/s.json" "$T/renamed.sym"
	assert_success
	ss_py '
names = [p["name"].split()[0] for p in d["profiles"]]
assert "renamed" in names and not [n for n in names if n.startswith("worker-1")], names
'
}

@test "speedscope: time order kept, equal neighbours merged; --weight in nanoseconds" {
	run sp_fold --format speedscope -o "$T/s.json" "$D/single.sym"
	assert_success
	n=$(awk -F'\t' '$1 == "sample"' "$D/single.sym" | wc -l)
	ss_py "
p = d['profiles'][0]
assert p['unit'] == 'none' and p['startValue'] == 0 and p['endValue'] == $n, p['endValue']
assert sum(p['weights']) == $n
assert len(p['samples']) < $n
assert all(a != b for a, b in zip(p['samples'], p['samples'][1:]))
"
	# the stacks in the order the samples came: the first and the last
	first=$(awk -F'\t' '$1 == "sample" { print $7; exit }' "$D/single.sym")
	last=$(awk -F'\t' '$1 == "sample" { s = $7 } END { print s }' "$D/single.sym")
	for w in first:$first last:$last; do
		# its innermost frame shown (a C name, the same short): the last
		# sample may be anywhere, even in exit() or in the start-up
		# glue speedscope leaves out like every default view
		leaf=$(awk -F'\t' -v id="${w#*:}" '$1 == "frame" && $3 == id && $7 !~ /hidden/ { if (!n++ || $4 < min) { min = $4; name = $9 } } END { print name }' "$D/single.sym")
		i=$([[ ${w%%:*} == first ]] && echo 0 || echo -1)
		if [[ -z $leaf ]]; then
			ss_py "assert d['profiles'][0]['samples'][$i] == [], d['profiles'][0]['samples'][$i]"
			continue
		fi
		ss_py "f = d['shared']['frames']; s = d['profiles'][0]['samples'][$i]; assert '$leaf' in [f[x]['name'] for x in s], ('$leaf', [f[x]['name'] for x in s])"
	done
	sp_fold --format speedscope --weight -o "$T/s.json" "$D/single.sym"
	w=$(awk -F'\t' '$1 == "sample" { s += $6 } END { print s }' "$D/single.sym")
	ss_py "
p = d['profiles'][0]
assert p['unit'] == 'nanoseconds', p['unit']
assert sum(p['weights']) == $w
assert p['endValue'] - p['startValue'] == $w
"
}

@test "speedscope: frames have source file and line, short C++ names" {
	sp_fold --format speedscope -o "$T/s.json" "$D/cxx.sym"
	ss_py '
f = d["shared"]["frames"]
hot = [x for x in f if x["name"] == "app::detail::hot<std::pair<int, long> >"]
assert hot and all(x["file"].endswith("sym-cxx.cc") and x["line"] > 0 for x in hot), hot
'
	sp_fold --format speedscope --names full -o "$T/s.json" "$D/cxx.sym"
	ss_py '
assert any(x["name"] == "unsigned long app::detail::hot<std::pair<int, long> >(std::pair<int, long>*, unsigned long)" for x in d["shared"]["frames"])
'
}

@test "speedscope: the speedscope app in headless chromium shows the profile" {
	need_browser
	sp_fold --format speedscope -o "$T/s.json" "$D/threads.sym"
	# the active profile is the thread with the most samples
	want=$(ss_py 'print(d["profiles"][d["activeProfileIndex"]]["name"])')
	run node "$BROWSER_DIR/speedscope.mjs" "$T/s.json" "$want" "$T/shot.png"
	assert_success
	[[ -s $T/shot.png ]] || fail "no screenshot"
}
