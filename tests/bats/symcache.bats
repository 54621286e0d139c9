#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# symcache.bats: sp-symbolize's symbol cache (lib/elf/symcache.h).  A
# second run over the same binaries names every address from the cache:
# the same output, no symbol table or DWARF read.  Answers of other
# settings (--no-lines, ...) are kept in files of their own.  A cache that
# is damaged, cut or of other debug files is never trusted, and is
# replaced; one that cannot be written costs a warning, never the output;
# every one counts against the build-id cache's size.  Programs are built here; streams are
# recorded live or built by tests/bats/mkstream.pl.

load common

setup_file() {
	D=$BATS_FILE_TMPDIR
	local cc=${WL_CC:-cc}
	"$cc" -O2 -g -fomit-frame-pointer -I"$WL_SRC" -o "$D/sym-inline" "$WL_SRC/sym-inline.c"
	cat >"$D/sc.c" <<'EOF_C'
static inline __attribute__((always_inline)) int sc_inl(int x)
{
	return x * 7 + 3;
}
int __attribute__((noinline)) sc_leaf(int x)
{
	return sc_inl(x) ^ x;
}
int __attribute__((noinline)) sc_mid(int x)
{
	return sc_leaf(x) + 1;
}
int __attribute__((noinline)) sc_other(int x)
{
	return sc_mid(x) - 2;
}
int main(int c, char **v)
{
	(void)v;
	return sc_other(c) + sc_mid(c);
}
EOF_C
	"$cc" -no-pie -O2 -g -fomit-frame-pointer -Wl,--build-id -o "$D/sc" "$D/sc.c"
}

setup() {
	require_tools
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
	CACHE=$XDG_CACHE_HOME/stackpulse
}

# build_id BIN: the GNU build-id of BIN in hex.
build_id() {
	readelf -n "$1" | awk '/Build ID:/ { print $3 }'
}

# symbols_of BIN [DIR]: where DIR (default the default cache) keeps the
# symbol cache of BIN's build-id.
symbols_of() {
	local bid
	bid=$(build_id "$1")
	echo "${2:-$CACHE}/buildid/${bid:0:2}/${bid:2}/symbols"
}

sym_addr() {
	printf '0x%x' "0x$(nm "$1" | awk -v n="$2" '$3 == n { print $1 }')"
}

# sc_stream OUT [FUNCTION...]: a stream of one stack per FUNCTION (default
# sc_leaf) of $D/sc, each called from main, mapped as the loader maps a
# non-PIE program; from the file $SC_BIN if set (a copy of $D/sc).
sc_stream() {
	local out=$1 f i=0 main bin=${SC_BIN:-$D/sc}
	shift
	main=$(sym_addr "$D/sc" main)
	{
		echo 'header cpu-clock freq 99'
		echo 'comm 100 100 sc exec'
		echo "mmap 100 0x401000 0x1000 0x1000 5 $bin $(build_id "$bin")"
		for f in "${@:-sc_leaf}"; do
			i=$((i + 1))
			echo "stack 100 $i root - $(($(sym_addr "$D/sc" "$f") + 1)),$((main + 8)) 100"
			echo "samples 2 100 $i"
		done
		echo "summary $((2 * i)) $i"
	} | perl "$BATS_TEST_DIRNAME/mkstream.pl" >"$out"
}

# symbolize OUT ARGS...: sp-symbolize --stats ARGS into OUT; run's status,
# stderr in $stderr.
symbolize() {
	local out=$1
	shift
	run --separate-stderr "$SP_SYMBOLIZE" --kallsyms /dev/null --stats \
		-o "$out" "$@"
}

# cache_stats USED HITS STALE DAMAGED WRITTEN: the --stats line of the
# last symbolize says these.
cache_stats() {
	[[ $stderr =~ symbol\ cache:\ $1\ files\ used,\ $2\ addresses\ named\ from\ them,\ $3\ of\ other\ settings,\ $4\ damaged,\ $5\ written ]] ||
		fail "want symbol cache: $1 used, $2 named, $3 stale, $4 damaged, $5 written; stderr: $stderr"
}

@test "a second run names every address from the symbol cache: the same output, no DWARF opened" {
	need_perf_events
	start_cmd "$D/sym-inline" 3
	run "$SP_RECORD" -p "$TARGET_PID" -d 1 -F 499 -o "$T/run.raw"
	assert_success
	"$SP_UNWIND" -o "$T/run.unw" "$T/run.raw" 2>/dev/null
	symbolize "$T/first.sym" "$T/run.unw"
	assert_success
	grep -q $'\tinline\tsymtab\t' "$T/first.sym" || fail "no inline frame named: $(head "$T/first.sym")"
	[[ $stderr =~ ([0-9]+)\ distinct\ addresses\ resolved ]] || fail "stderr: $stderr"
	local n=${BASH_REMATCH[1]}
	[[ $stderr =~ ([1-9][0-9]*)\ DWARF\ opened ]] || fail "the first run opened no DWARF: $stderr"
	[[ $stderr =~ 0\ files\ used.*\ ([1-9][0-9]*)\ written ]] || fail "nothing written: $stderr"
	[[ -f $(symbols_of "$D/sym-inline") ]] || fail "no symbol cache of sym-inline: $(find "$CACHE")"

	symbolize "$T/second.sym" "$T/run.unw"
	assert_success
	cmp "$T/first.sym" "$T/second.sym" || fail "the cache named differently: $(diff "$T/first.sym" "$T/second.sym" | head)"
	[[ $stderr =~ \ $n\ distinct\ addresses\ resolved ]] || fail "not $n addresses: $stderr"
	[[ $stderr =~ \ 0\ DWARF\ opened\ \(0\ units\) ]] || fail "the second run opened DWARF: $stderr"
	# every address of a cached file from the cache: none named anew, so
	# nothing written (an address in no file or in the vDSO, where a
	# sample may land, is named without one)
	[[ $stderr =~ files\ used,\ [1-9][0-9]*\ addresses\ named\ from\ them,\ 0\ of\ other\ settings,\ 0\ damaged,\ 0\ written ]] ||
		fail "not all $n from the cache: $stderr"

	# and exactly what a run without it names
	symbolize "$T/none.sym" --no-symbol-cache "$T/run.unw"
	assert_success
	cmp "$T/first.sym" "$T/none.sym" || fail "--no-symbol-cache named differently"
	cache_stats 0 0 0 0 0
}

@test "answers of several runs add up: each run's new addresses join the cache" {
	sc_stream "$T/a.unw" sc_leaf
	sc_stream "$T/b.unw" sc_mid sc_other
	sc_stream "$T/ab.unw" sc_leaf sc_mid sc_other
	symbolize "$T/ref.sym" --no-symbol-cache "$T/ab.unw"
	assert_success
	symbolize "$T/a.sym" "$T/a.unw"
	cache_stats 0 0 0 0 1
	symbolize "$T/b.sym" "$T/b.unw"
	# main's return address is known; the rest are new
	cache_stats 1 1 0 0 1
	symbolize "$T/ab.sym" "$T/ab.unw"
	assert_success
	cache_stats 1 4 0 0 0
	cmp "$T/ref.sym" "$T/ab.sym" || fail "named differently: $(diff "$T/ref.sym" "$T/ab.sym")"
	grep -q $'\tinline\tsymtab\t-\t0x[0-9a-f]*\tsc_inl\t' "$T/ab.sym" || fail "sc_inl not named inline: $(cat "$T/ab.sym")"
}

@test "an address the file names nothing at is kept too, and named by each run's mapping" {
	strip -o "$T/sc-strip" "$D/sc"
	[[ $(build_id "$T/sc-strip") == "$(build_id "$D/sc")" ]] || skip "strip dropped the build-id"
	cp "$T/sc-strip" "$T/sc-moved"
	SC_BIN=$T/sc-strip sc_stream "$T/a.unw" sc_leaf sc_other
	SC_BIN=$T/sc-moved sc_stream "$T/b.unw" sc_leaf sc_other
	symbolize "$T/a.sym" "$T/a.unw"
	assert_success
	cache_stats 0 0 0 0 1
	grep -q $'\tnone\t-\t0x[0-9a-f]*\t\[sc-strip\]+0x' "$T/a.sym" ||
		fail "no address named by its mapping: $(cat "$T/a.sym")"
	# another path to the same build-id: every address from the cache, named
	# by the new path, as a run without the cache names them
	symbolize "$T/b.sym" "$T/b.unw"
	assert_success
	cache_stats 1 3 0 0 0
	symbolize "$T/ref.sym" --no-symbol-cache "$T/b.unw"
	cmp "$T/ref.sym" "$T/b.sym" || fail "named differently: $(diff "$T/ref.sym" "$T/b.sym")"
	grep -q '\[sc-moved\]+0x' "$T/b.sym" || fail "not named by the new mapping: $(cat "$T/b.sym")"
	! grep -q 'sc-strip' "$T/b.sym" || fail "the first run's path came back: $(cat "$T/b.sym")"
}

@test "--no-symbol-cache reads none and writes none" {
	sc_stream "$T/in.unw"
	symbolize "$T/out.sym" --no-symbol-cache "$T/in.unw"
	assert_success
	cache_stats 0 0 0 0 0
	[[ ! -e $CACHE ]] || fail "wrote $(find "$CACHE")"
	symbolize "$T/out.sym" "$T/in.unw"
	cache_stats 0 0 0 0 1
	symbolize "$T/out.sym" --no-symbol-cache "$T/in.unw"
	cache_stats 0 0 0 0 0
	[[ $stderr =~ \ 1\ DWARF\ opened ]] || fail "stderr: $stderr"
}

@test "a damaged, cut or empty symbol cache is never trusted: counted, the names right, rewritten" {
	local f
	sc_stream "$T/in.unw" sc_leaf sc_other
	symbolize "$T/ref.sym" --no-symbol-cache "$T/in.unw"
	symbolize "$T/out.sym" "$T/in.unw"
	f=$(symbols_of "$D/sc")
	cp "$f" "$T/good"
	# a function's name changed in the strings (the last bytes of the file):
	# only the CRC tells
	grep -q sc_other "$f" || fail "no sc_other in the cache"
	sed -i 's/sc_other/sc_OTHER/' "$f"
	symbolize "$T/out.sym" "$T/in.unw"
	assert_success
	cache_stats 0 0 0 1 1
	cmp "$T/ref.sym" "$T/out.sym" || fail "named from the damaged cache: $(diff "$T/ref.sym" "$T/out.sym")"
	cmp "$T/good" "$f" || fail "not rewritten"
	# cut short, then empty
	head -c 100 "$T/good" >"$f"
	symbolize "$T/out.sym" "$T/in.unw"
	cache_stats 0 0 0 1 1
	cmp "$T/ref.sym" "$T/out.sym" || fail "named from the cut cache"
	: >"$f"
	symbolize "$T/out.sym" "$T/in.unw"
	cache_stats 0 0 0 1 1
	cmp "$T/ref.sym" "$T/out.sym" || fail "named from the empty cache"
	cmp "$T/good" "$f" || fail "not rewritten"
	# a directory where the file should be: nothing to read, nothing written
	rm "$f" && mkdir "$f"
	symbolize "$T/out.sym" "$T/in.unw"
	assert_success
	cmp "$T/ref.sym" "$T/out.sym" || fail "named wrong beside a directory"
	grep -qF "sp-symbolize: cannot write the symbol cache in '$CACHE': " <<<"$stderr" || fail "stderr: $stderr"
}

@test "answers of other settings are kept beside the usual ones: --no-lines, --no-inline, --no-demangle" {
	local opt f
	sc_stream "$T/in.unw" sc_leaf sc_other
	symbolize "$T/ref.sym" --no-symbol-cache "$T/in.unw"
	symbolize "$T/out.sym" "$T/in.unw"
	cache_stats 0 0 0 0 1
	f=$(symbols_of "$D/sc")
	for opt in --no-lines --no-inline --no-demangle; do
		symbolize "$T/ref-opt.sym" --no-symbol-cache "$opt" "$T/in.unw"
		symbolize "$T/out.sym" "$opt" "$T/in.unw"
		assert_success
		cache_stats 0 0 0 0 1
		cmp "$T/ref-opt.sym" "$T/out.sym" || fail "$opt: named as without it"
		[[ -f $f-${opt//-/} ]] || fail "$opt: not in a file of its own: $(ls "$(dirname "$f")")"
		symbolize "$T/out.sym" "$opt" "$T/in.unw"
		cache_stats 1 3 0 0 0
		cmp "$T/ref-opt.sym" "$T/out.sym" || fail "$opt: named differently from its cache"
	done
	symbolize "$T/out.sym" --no-lines --no-demangle "$T/in.unw"
	cache_stats 0 0 0 0 1
	[[ -f $f-nolines-nodemangle ]] || fail "not in a file of its own: $(ls "$(dirname "$f")")"
	# the usual answers are still there, as they were
	symbolize "$T/out.sym" "$T/in.unw"
	cache_stats 1 3 0 0 0
	cmp "$T/ref.sym" "$T/out.sym" || fail "the usual cache named differently"
}

@test "a symbol cache of other debug files is not used, and is replaced" {
	local bid
	bid=$(build_id "$D/sc")
	strip -o "$T/sc" "$D/sc"
	mkdir -p "$T/root/.build-id/${bid:0:2}"
	cp "$D/sc" "$T/root/.build-id/${bid:0:2}/${bid:2}.debug"
	SC_BIN=$T/sc sc_stream "$T/in.unw" sc_leaf sc_other
	symbolize "$T/bare.sym" --no-system-debug "$T/in.unw"
	cache_stats 0 0 0 0 1
	# with its debug file found, the answers of the bare binary are stale
	symbolize "$T/ref.sym" --no-symbol-cache --debug-dir "$T/root" "$T/in.unw"
	! cmp -s "$T/bare.sym" "$T/ref.sym" || fail "the debug file named nothing more"
	symbolize "$T/out.sym" --debug-dir "$T/root" "$T/in.unw"
	assert_success
	cache_stats 0 0 1 0 1
	cmp "$T/ref.sym" "$T/out.sym" || fail "named from the stale cache"
	symbolize "$T/out.sym" --debug-dir "$T/root" "$T/in.unw"
	cache_stats 1 3 0 0 0
	cmp "$T/ref.sym" "$T/out.sym" || fail "named differently from its cache"
}

@test "a symbol cache that cannot be written: a warning, the whole output, exit 0" {
	sc_stream "$T/in.unw"
	symbolize "$T/ref.sym" --no-symbol-cache "$T/in.unw"
	: >"$T/file"
	symbolize "$T/out.sym" --cache-dir "$T/file/cache" "$T/in.unw"
	assert_success
	grep -qxF "sp-symbolize: cannot write the symbol cache in '$T/file/cache': Not a directory (the next run names its addresses again)" <<<"$stderr" ||
		fail "stderr: $stderr"
	cmp "$T/ref.sym" "$T/out.sym" || fail "the output changed"
}

@test "the symbol cache counts against --cache-size: the least recently used build-ids go, old temporary files too" {
	local old f
	# the build-id cache of earlier runs: copies and symbol caches of 100 KiB
	for old in 0a01/elf 0b02/symbols-nolines 0c03/elf; do
		mkdir -p "$T/cache/buildid/${old:0:2}/${old:2:2}"
		head -c 102400 /dev/zero >"$T/cache/buildid/${old:0:2}/${old:2}"
	done
	touch -d '3 days ago' "$T/cache/buildid/0a/01/elf"
	touch -d '2 days ago' "$T/cache/buildid/0b/02/symbols-nolines"
	# a write cut short long ago, and one under way now
	touch -d '2 hours ago' "$T/cache/buildid/0c/03/symbols.tmp.AbCdEf"
	touch -d '2 hours ago' "$T/cache/buildid/0c/03/symbols-nolines.tmp.MnOpQr"
	touch "$T/cache/buildid/0c/03/symbols.tmp.GhIjKl"
	sc_stream "$T/in.unw"
	symbolize "$T/out.sym" --cache-dir "$T/cache" --cache-size 150K "$T/in.unw"
	assert_success
	cache_stats 0 0 0 0 1
	f=$(symbols_of "$D/sc" "$T/cache")
	[[ -f $f ]] || fail "no symbol cache written"
	# (the program's own build-id may begin with 0a or 0b: the entries of
	# the planted ones, and no directory left empty)
	[[ ! -e $T/cache/buildid/0a/01 && ! -e $T/cache/buildid/0b/02 ]] || fail "the oldest were kept: $(cd "$T/cache" && find . | sort)"
	[[ -z $(find "$T/cache/buildid" -mindepth 1 -type d -empty) ]] || fail "empty directories left: $(cd "$T/cache" && find . | sort)"
	[[ -f $T/cache/buildid/0c/03/elf ]] || fail "the newest copy was evicted"
	[[ ! -e $T/cache/buildid/0c/03/symbols.tmp.AbCdEf &&
	   ! -e $T/cache/buildid/0c/03/symbols-nolines.tmp.MnOpQr ]] || fail "an old temporary file was kept"
	[[ -e $T/cache/buildid/0c/03/symbols.tmp.GhIjKl ]] || fail "a new temporary file was removed"
	# a run that only reads marks its cache as needed
	touch -d '1 day ago' "$f"
	symbolize "$T/out.sym" --cache-dir "$T/cache" "$T/in.unw"
	cache_stats 1 2 0 0 0
	[[ $(stat -c %Y "$f") -gt $(($(date +%s) - 3600)) ]] || fail "not marked as needed"
}
