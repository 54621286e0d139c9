#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# buildid.bats: the whole pipeline unwinds and names with the files that
# ran, found by their recorded build-ids.  A library replaced on disk after
# the recording is never used: its frames are [unknown build-id ...], its
# stacks noinfo, exit 1.  One replaced or deleted while recorded is copied
# into the build-id cache by sp-record and unwound and named from the copy;
# without the cache it is missing.  And the cache's options and size cap.
# Debian's debuginfod, started on 127.0.0.1, serves a library that is gone
# and its debug file, fetched once each when DEBUGINFOD_URLS names it.
# The workloads are built here: tests/workloads/bid-main.c over bid-lib.c
# (libwlv.so, in two builds with the same names and other code).

load common

# The chain every sample of bid-main runs (wl_burn is inlined in its leaf).
CHAIN='main;drive;wlv_run;wlv_outer;wlv_leaf'

setup_file() {
	local d=$BATS_FILE_TMPDIR cc=${WL_CC:-cc}
	local flags=(-O2 -g -fomit-frame-pointer -I"$WL_SRC")
	mkdir -p "$d/v1" "$d/v2"
	"$cc" "${flags[@]}" -fPIC -shared -Wl,--build-id -Wl,-soname,libwlv.so \
		-o "$d/v1/libwlv.so" "$WL_SRC/bid-lib.c"
	"$cc" "${flags[@]}" -fPIC -shared -Wl,--build-id -Wl,-soname,libwlv.so \
		-DWLV_VARIANT=2 -o "$d/v2/libwlv.so" "$WL_SRC/bid-lib.c"
	# it finds libwlv.so beside itself, wherever a test puts the two
	"$cc" "${flags[@]}" -DWLV_LINKED -Wl,--build-id -o "$d/bid-linked" \
		"$WL_SRC/bid-main.c" -L"$d/v1" -lwlv -Wl,-rpath,'$ORIGIN'
	"$cc" "${flags[@]}" -Wl,--build-id -o "$d/bid-dlopen" "$WL_SRC/bid-main.c"
}

setup() {
	require_tools
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
	BID1=$(build_id "$D/v1/libwlv.so")
	BID2=$(build_id "$D/v2/libwlv.so")
	[[ -n $BID1 && -n $BID2 ]] || fail "the linker wrote no build-id"
	[[ $BID1 != "$BID2" ]] || fail "the two builds of libwlv.so have one build-id"
	# no test reads or writes the cache of the user running it
	export XDG_CACHE_HOME=$T/xdg
}

# build_id FILE: its GNU build-id in hex.
build_id() {
	readelf -n "$1" | awk '/Build ID:/ { print $3 }'
}

# copy_of DIR BID: where the build-id cache DIR keeps BID's copy.
copy_of() {
	echo "$1/buildid/${2:0:2}/${2:2}/elf"
}

# start_linked [ACTION ARGS...]: $T/bin/bid-linked with build 1 of
# libwlv.so beside it, held until released, for 1 s of CPU time.
start_linked() {
	mkdir -p "$T/bin"
	cp "$D/bid-linked" "$D/v1/libwlv.so" "$T/bin/"
	WL_CLOCK=cpu start_cmd --go "$T/bin/bid-linked" 1 "$@"
}

# kept_or_gone COPY PID: COPY exists; fatal when sp-record PID ended first.
kept_or_gone() {
	[[ -f $1 ]] && return 0
	if gone "$2"; then
		[[ -f $1 ]] && return 0
		fatal "sp-record ended without keeping $1: $(cat "$T/run.raw.err")"
		return
	fi
	return 1
}

# record_until_kept COPY ARGS...: sp-record -p $TARGET_PID -o $T/run.raw
# ARGS; release the target (started with WL_STOP=$T/stop), wait until the
# cache holds COPY, then let the target end.  Sets status, and stderr and
# output (sp-record's stderr) as run would.
record_until_kept() {
	local copy=$1 pid
	shift
	"$SP_RECORD" -p "$TARGET_PID" -o "$T/run.raw" "$@" 2>"$T/run.raw.err" 3>&- &
	pid=$!
	recording_started "$T/run.raw" "$pid"
	release_target
	wait_until 60 "a copy in the build-id cache ($copy)" kept_or_gone "$copy" "$pid"
	: >"$T/stop"
	status=0
	wait "$pid" || status=$?
	stderr=$(cat "$T/run.raw.err")
	output=$stderr
}

# samples_recorded: the sample count of sp-record's report in $stderr.
samples_recorded() {
	sed -n 's/^sp-record: \([0-9]*\) samples, .*/\1/p' <<<"$stderr"
}

# unwind_and_symbolize ARGS...: sp-unwind ARGS < $T/run.raw > $T/run.unw,
# then sp-symbolize ARGS and sp-fold into $T/run.sym and $T/run.folded;
# their statuses in UNW_STATUS and SYM_STATUS, stderr in UNW_ERR and
# SYM_ERR.
unwind_and_symbolize() {
	UNW_STATUS=0 SYM_STATUS=0
	"$SP_UNWIND" "$@" <"$T/run.raw" >"$T/run.unw" 2>"$T/unw.err" || UNW_STATUS=$?
	"$SP_SYMBOLIZE" --kallsyms /dev/null "$@" <"$T/run.unw" >"$T/run.sym" \
		2>"$T/sym.err" || SYM_STATUS=$?
	"$SP_FOLD" <"$T/run.sym" >"$T/run.folded" || fail "sp-fold failed"
	UNW_ERR=$(cat "$T/unw.err")
	SYM_ERR=$(cat "$T/sym.err")
	# sp-fold given the recording does both stages itself: the same
	# stacks, the same warnings, the worse of the two statuses
	FOLD_STATUS=0
	"$SP_FOLD" --kallsyms /dev/null "$@" "$T/run.raw" >"$T/one.folded" \
		2>"$T/fold.err" || FOLD_STATUS=$?
	FOLD_ERR=$(cat "$T/fold.err")
	cmp -s "$T/run.folded" "$T/one.folded" || {
		diff "$T/run.folded" "$T/one.folded" | head -20
		fail "sp-fold RAW folded otherwise than the pipeline"
	}
	((FOLD_STATUS == (UNW_STATUS > SYM_STATUS ? UNW_STATUS : SYM_STATUS))) ||
		{ show; fail "sp-fold RAW exited $FOLD_STATUS"; }
	diff <(cat "$T/unw.err" "$T/sym.err" |
		grep -e '^sp-unwind: no file' -e '^sp-symbolize: ' |
		sed 's/^sp-[a-z]*: //') <(sed 's/^sp-fold: //' "$T/fold.err") ||
		fail "sp-fold RAW warned otherwise than the pipeline"
}

# unwound COUNT-NAME: a count of sp-unwind's report line ("complete", ...).
unwound() {
	grep '^sp-unwind: [0-9]* samples, ' <<<"$UNW_ERR" | grep -o "[0-9]* $1" |
		head -1 | cut -d' ' -f1
}

unwound_samples() {
	sed -n 's/^sp-unwind: \([0-9]*\) samples, .*/\1/p' <<<"$UNW_ERR"
}

show() {
	echo "# sp-unwind exited $UNW_STATUS:"
	sed 's/^/#   /' <<<"$UNW_ERR"
	echo "# sp-symbolize exited $SYM_STATUS:"
	sed 's/^/#   /' <<<"$SYM_ERR"
	echo "# sp-fold RAW exited $FOLD_STATUS:"
	sed 's/^/#   /' <<<"$FOLD_ERR"
	show_folded "$T/run.folded"
}

# assert_whole N: the N samples unwound complete through the library and
# named by it: the chain in (nearly) every one, no frame of a missing file.
assert_whole() {
	local n=$1 chain
	if ((UNW_STATUS != 0 || SYM_STATUS != 0)) || [[ $(unwound noinfo) != 0 ]] ||
		[[ $(unwound_samples) != "$n" ]] || grep -q 'unknown build-id' "$T/run.folded"; then
		show
		fail "want $n samples unwound and named whole"
	fi
	# all their work is in the chain, or in wlv_run reading the CPU-time
	# clock between bursts (a system call: its share grows with the load)
	chain=$(fold_count "$T/run.folded" "(^|;)($CHAIN|${CHAIN%;wlv_outer;wlv_leaf};wl_now_\\[i\\])(;|\$)")
	((chain * 100 >= n * 95)) || { show; fail "$chain of $n samples in $CHAIN or its clock reads"; }
	(($(unwound complete) * 100 >= n * 95)) || { show; fail "$(unwound complete) of $n stacks complete"; }
	((n >= 50)) || fail "only $n samples in 1 s of CPU at 99 Hz"
}

# assert_missing N PATH BID: of the N samples, those in PATH end there
# as [unknown build-id ...] (nearly all), counted alike by every tool, and
# nothing is named or unwound from the file now at PATH.
assert_missing() {
	local n=$1 path=$2 bid=$3 ended unknown
	ended=$(unwound noinfo)
	unknown=$(fold_count "$T/run.folded" "\\[unknown build-id ${bid:0:12}\\]")
	if ((UNW_STATUS != 1 || SYM_STATUS != 1)) || [[ $(unwound_samples) != "$n" ]] ||
		[[ $ended != "$unknown" ]] || ((unknown * 100 < n * 95)); then
		show
		fail "want ~$n samples ending at [unknown build-id ${bid:0:12}], exit 1 twice ($ended noinfo, $unknown unknown)"
	fi
	grep -qF "sp-unwind: no file with build-id $bid for '$path' (replaced or deleted since the recording, and not in the build-id cache): $ended samples end there" <<<"$UNW_ERR" ||
		{ show; fail "sp-unwind did not name $path"; }
	grep -qF "sp-symbolize: no file with build-id $bid for '$path' (replaced or deleted since the recording, and not in the build-id cache): its frames in $unknown samples are [unknown build-id ${bid:0:12}]" <<<"$SYM_ERR" ||
		{ show; fail "sp-symbolize did not name $path"; }
	# the outermost frame of its stacks: no caller (but a frame saying how
	# the stack ended) was made up past it
	! grep -F "[unknown build-id ${bid:0:12}]" "$T/run.folded" |
		grep -vqE "^[^;]*(;\\[[^];]*\\])*;\\[unknown build-id ${bid:0:12}\\](;| )" ||
		{ show; fail "callers of a missing file's frame"; }
	! grep -qE $'\twlv_(run|outer|leaf)\t' "$T/run.sym" || { show; fail "named from another build"; }
	grep -qE $'^frame\t[0-9]+\t[0-9]+\t0\tnative\tnone\tno-build-id\t0x[0-9a-f]+\t\\[unknown build-id '"${bid:0:12}"$'\\]\t'"$path"$'\t-\t-$' "$T/run.sym" ||
		{ show; fail "no leaf frame [unknown build-id ${bid:0:12}] of $path"; }
}

@test "a library replaced after the recording: never used; [unknown build-id], noinfo, exit 1; the original in the cache is" {
	need_perf_events
	start_linked
	record_released "$T/run.raw" --cache-dir "$T/cache"
	assert_success
	n=$(samples_recorded)
	# nothing was deleted or replaced while recording: nothing kept
	[[ -z $(find "$T/cache" -name elf 2>/dev/null) ]] || fail "a copy was kept: $(find "$T/cache")"
	refute_output --partial "while mapped"
	# the upgrade: another build renamed over it, as package managers do
	cp "$D/v2/libwlv.so" "$T/bin/libwlv.so.new"
	mv -f "$T/bin/libwlv.so.new" "$T/bin/libwlv.so"
	unwind_and_symbolize --cache-dir "$T/cache"
	assert_missing "$n" "$T/bin/libwlv.so" "$BID1"
	# had the cache kept the original, it would serve
	mkdir -p "$(dirname "$(copy_of "$T/cache" "$BID1")")"
	cp "$D/v1/libwlv.so" "$(copy_of "$T/cache" "$BID1")"
	unwind_and_symbolize --cache-dir "$T/cache"
	assert_whole "$n"
	# and so does the original back at its path, without the cache
	cp "$D/v1/libwlv.so" "$T/bin/libwlv.so"
	unwind_and_symbolize --cache-dir "$T/nowhere"
	assert_whole "$n"
}

# start_debuginfod DIR: Debian's debuginfod serving the ELF files of DIR,
# on a free port (another if one is taken first), until BID1 is indexed;
# its URL in DEBUGINFOD_URL, its log in $T/debuginfod.log.
start_debuginfod() {
	local port try pid
	command -v debuginfod >/dev/null || skip "debuginfod is not installed (Debian: debuginfod)"
	for try in 1 2 3 4 5; do
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		debuginfod -F "$1" -p "$port" -d "$T/debuginfod.$try.db" -t 0 -g 0 \
			>"$T/debuginfod.log" 2>&1 3>&- &
		pid=$!
		echo "$pid" >>"$T/targets"
		DEBUGINFOD_URL=http://127.0.0.1:$port
		wait_until 60 "debuginfod to serve $BID1" served "$pid" && return
	done
	fail "debuginfod did not start: $(cat "$T/debuginfod.log")"
}

# served PID: debuginfod PID has the executable of BID1; fatal when it
# exited (its port was taken), then start_debuginfod tries another.
served() {
	kill -0 "$1" 2>/dev/null || return 2
	python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1])' \
		"$DEBUGINFOD_URL/buildid/$BID1/executable" 2>/dev/null
}

# requests KIND: the GETs of BID1's KIND (executable, debuginfo) that
# debuginfod answered a client of libdebuginfod, by its log.
requests() {
	grep -c "UA:elfutils.* GET /buildid/$BID1/$1 " "$T/debuginfod.log"
}

@test "a library replaced after the recording, served by debuginfod: fetched once by build-id, unwound and named with its lines" {
	need_perf_events
	start_linked
	record_released "$T/run.raw" --cache-dir "$T/cache"
	assert_success
	n=$(samples_recorded)
	cp "$D/v2/libwlv.so" "$T/bin/libwlv.so.new"
	mv -f "$T/bin/libwlv.so.new" "$T/bin/libwlv.so"
	# the server has build 1 stripped (code and .eh_frame, the exported
	# names) and its debug file (every name, lines), as distributions do
	mkdir -p "$T/srv"
	strip --strip-all -o "$T/srv/libwlv.so" "$D/v1/libwlv.so"
	objcopy --only-keep-debug "$D/v1/libwlv.so" "$T/srv/libwlv.debug"
	start_debuginfod "$T/srv"
	# off without DEBUGINFOD_URLS: nothing asked, the library is missing
	unwind_and_symbolize --cache-dir "$T/cache"
	assert_missing "$n" "$T/bin/libwlv.so" "$BID1"
	[[ $(requests executable) == 0 ]] || fail "asked with DEBUGINFOD_URLS unset"
	export DEBUGINFOD_URLS=$DEBUGINFOD_URL DEBUGINFOD_CACHE_PATH=$T/dcache
	unwind_and_symbolize --cache-dir "$T/cache"
	assert_whole "$n"
	# leaves named from the debug file, with their source lines
	grep -qE $'^frame\t[0-9]+\t[0-9]+\t[0-9]+\tnative\tbuildid\t[^\t]*\t0x[0-9a-f]+\twlv_leaf\t'"$T/bin/libwlv.so"$'\t[^\t]*/bid-lib\\.c\t[0-9]+\t' "$T/run.sym" ||
		{ show; fail "wlv_leaf not named from the debug file with its line"; }
	# one request per file, not one per sample: sp-unwind fetched the
	# executable, sp-symbolize found it in the client's cache (the tools
	# share it, here a fresh one) and fetched the debug file
	[[ $(requests executable) == 1 && $(requests debuginfo) == 1 ]] ||
		fail "requests: $(grep GET "$T/debuginfod.log")"
	"$SP_SYMBOLIZE" --kallsyms /dev/null --cache-dir "$T/cache" --stats \
		<"$T/run.unw" >/dev/null 2>"$T/stats.err" || fail "$(cat "$T/stats.err")"
	grep -qE '^sp-symbolize: debuginfod: [0-9]+ build-ids asked, 2 files found$' "$T/stats.err" ||
		fail "no debuginfod line in sp-symbolize --stats: $(cat "$T/stats.err")"
	# at most a question of each kind per file of the recording
	asked=$(sed -n 's/^sp-symbolize: debuginfod: \([0-9]*\) build-ids asked.*/\1/p' "$T/stats.err")
	files=$(awk -F'\t' '$1 == "map" && $7 != "-" { print $7 }' "$T/run.sym" | sort -u | wc -l)
	((asked <= 2 * files)) || fail "$asked questions for $files files of $n samples"
	# servers that have nothing: still missing, and the tools say where
	# they looked
	DEBUGINFOD_URLS=http://127.0.0.1:1 DEBUGINFOD_CACHE_PATH=$T/dcache2 \
		unwind_and_symbolize --cache-dir "$T/cache"
	((UNW_STATUS == 1 && SYM_STATUS == 1)) || { show; fail "want exit 1 twice"; }
	grep -qF "sp-unwind: no file with build-id $BID1 for '$T/bin/libwlv.so' (replaced or deleted since the recording, and not in the build-id cache, nor on the debuginfod servers): " <<<"$UNW_ERR" ||
		{ show; fail "sp-unwind did not say where it looked"; }
	grep -qF "sp-symbolize: no file with build-id $BID1 for '$T/bin/libwlv.so' (replaced or deleted since the recording, and not in the build-id cache, nor on the debuginfod servers): " <<<"$SYM_ERR" ||
		{ show; fail "sp-symbolize did not say where it looked"; }
}

@test "a library replaced while recorded: the cache keeps the original, stacks whole, names right, the cache stays under --cache-size" {
	need_perf_events
	local copy=$(copy_of "$T/cache" "$BID1") old
	# copies of earlier recordings (100 KiB each): three old, one recent
	for old in 0a01 0b02 0c03 0d04; do
		mkdir -p "$T/cache/buildid/${old:0:2}/${old:2}"
		head -c 102400 /dev/zero >"$T/cache/buildid/${old:0:2}/${old:2}/elf"
	done
	touch -d '3 days ago' "$T/cache/buildid/0a/01/elf"
	touch -d '2 days ago' "$T/cache/buildid/0b/02/elf"
	touch -d '1 day ago' "$T/cache/buildid/0c/03/elf"
	cp "$D/v2/libwlv.so" "$T/new.so"
	WL_STOP=$T/stop start_linked replace "$T/bin/libwlv.so" "$T/new.so"
	record_until_kept "$copy" --cache-dir "$T/cache" --cache-size 250K
	assert_success
	n=$(samples_recorded)
	[[ $(build_id "$T/bin/libwlv.so") == "$BID2" ]] || fail "libwlv.so was not replaced"
	cmp "$copy" "$D/v1/libwlv.so" || fail "the copy is not the original"
	size=$(stat -c %s "$copy")
	kib=$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1024 }')
	grep -qxF "sp-record: '$T/bin/libwlv.so' was replaced while mapped: kept a copy (build-id $BID1, $kib KiB) in '$T/cache'" <<<"$stderr" ||
		fail "stderr: $stderr"
	# 400 KiB + the copy over 250 KiB: the two oldest go, the copy stays
	grep -qxF "sp-record: build-id cache '$T/cache': 2 copies evicted, 3 kept ($(awk -v s="$size" 'BEGIN { printf "%.1f", (204800 + s) / 1048576 }') MiB)" <<<"$stderr" ||
		fail "stderr: $stderr"
	# (libwlv.so's own build-id may begin with 0a: the planted entries)
	[[ ! -e $T/cache/buildid/0a/01 && ! -e $T/cache/buildid/0b/02 ]] || fail "the oldest copies were kept: $(cd "$T/cache" && find . -ls)"
	[[ -f $T/cache/buildid/0c/03/elf && -f $T/cache/buildid/0d/04/elf ]] || fail "newer copies were evicted"
	unwind_and_symbolize --cache-dir "$T/cache"
	assert_whole "$n"
	# the file at the path, another build, is never taken for it
	unwind_and_symbolize --cache-dir "$T/nowhere"
	assert_missing "$n" "$T/bin/libwlv.so" "$BID1"
}

@test "a dlopen'ed library deleted while recorded: kept in \$XDG_CACHE_HOME/stackpulse, which every tool reads by default" {
	need_perf_events
	local copy=$(copy_of "$XDG_CACHE_HOME/stackpulse" "$BID1")
	mkdir -p "$T/dl"
	cp "$D/v1/libwlv.so" "$T/dl/libwlv.so"
	WL_CLOCK=cpu WL_STOP=$T/stop start_cmd --go "$D/bid-dlopen" \
		"$T/dl/libwlv.so" 1 delete "$T/dl/libwlv.so"
	record_until_kept "$copy"
	assert_success
	n=$(samples_recorded)
	[[ ! -e $T/dl/libwlv.so ]] || fail "libwlv.so was not deleted"
	cmp "$copy" "$D/v1/libwlv.so" || fail "the copy is not the original"
	grep -qF "sp-record: '$T/dl/libwlv.so' was deleted while mapped: kept a copy (build-id $BID1, " <<<"$stderr" ||
		fail "stderr: $stderr"
	# the kernel reported the mapping, with its build-id, after attaching
	"$SP_UNWIND" <"$T/run.raw" | "$SP_SYMBOLIZE" --kallsyms /dev/null 2>/dev/null |
		grep -qE $'^map\t[0-9]+\t[0-9]+\t0x[0-9a-f]+\t0x[0-9a-f]+\t0x[0-9a-f]+\t'"$BID1"$'\t'"$T/dl/libwlv.so"'( \(deleted\))?$' ||
		fail "no map line of libwlv.so with its build-id"
	unwind_and_symbolize
	assert_whole "$n"
}

@test "a dlopen'ed library deleted while recorded with --no-cache: [unknown build-id], noinfo, exit 1" {
	need_perf_events
	mkdir -p "$T/dl"
	cp "$D/v1/libwlv.so" "$T/dl/libwlv.so"
	WL_CLOCK=cpu start_cmd --go "$D/bid-dlopen" "$T/dl/libwlv.so" 1 \
		delete "$T/dl/libwlv.so"
	record_released "$T/run.raw" --no-cache
	assert_success
	n=$(samples_recorded)
	[[ ! -e $T/dl/libwlv.so ]] || fail "libwlv.so was not deleted"
	refute_output --partial "while mapped"
	[[ ! -e $XDG_CACHE_HOME ]] || fail "--no-cache wrote $(find "$XDG_CACHE_HOME")"
	unwind_and_symbolize
	assert_missing "$n" "$T/dl/libwlv.so" "$BID1"
}

@test "the build-id cache options: bad values are usage errors" {
	while read -r want tool args; do
		# shellcheck disable=SC2086	# args is a list of words
		run --separate-stderr "$SP_BIN/$tool/$tool" $args
		[[ $status == "$want" ]] || fail "$tool $args: exit $status, want $want: $stderr"
		[[ ${stderr_lines[0]} == "$tool: "* ]] || fail "$tool $args: $stderr"
	done <<-'EOF'
		64 sp-record -p 1 --cache-size 12X
		64 sp-record -p 1 --cache-size K
		64 sp-record -p 1 --cache-size 99999999999999999999
		64 sp-record -p 1 --cache-size
		64 sp-record -p 1 --no-cache --cache-dir /tmp
		64 sp-record -p 1 --cache-dir=
		64 sp-unwind --cache-dir=
		64 sp-unwind --cache-dir
		64 sp-symbolize --cache-dir=
		64 sp-symbolize --cache-size 12X
		64 sp-symbolize --cache-size
	EOF
}
