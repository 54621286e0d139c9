#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# symbolize-depth.bats: sp-symbolize in depth: inline chains with lines,
# separate debug files (debuglink, build-id, MiniDebugInfo), files
# replaced since the recording, demangled C++, kernel, jitdump and perf-map JIT frames, JIT
# frames unwound by a jitdump's CFI, Python glue hidden, and every
# module's debug info read once.  Programs are built here
# (tests/workloads/sym-*); streams are either recorded live or built
# byte by byte by tests/bats/mkstream.pl (lib/format/records.h, lib/format/unwound.h).

load common

setup_file() {
	D=$BATS_FILE_TMPDIR
	local cc=${WL_CC:-cc}
	"$cc" -O2 -g -fomit-frame-pointer -I"$WL_SRC" -o "$D/sym-inline" "$WL_SRC/sym-inline.c"
	"${WL_CXX:-g++}" -O2 -g -o "$D/sym-cxx" "$WL_SRC/sym-cxx.cc"
	"$cc" -O2 -g -I"$WL_SRC" -o "$D/sym-jit" "$WL_SRC/sym-jit.c"
	# a non-PIE program (bias 0) to strip in the ways distributions do
	cat >"$D/dbg.c" <<'EOF_C'
int __attribute__((noinline)) dbg_leaf(int x)
{
	return x * 3 + 1;	/* LINE:dbg_leaf */
}
static int __attribute__((noinline)) dbg_local(int x)
{
	return dbg_leaf(x) + 2;
}
int main(int c, char **v)
{
	(void)v;
	return dbg_local(c);
}
EOF_C
	"$cc" -no-pie -O1 -g -Wl,--build-id -o "$D/dbg" "$D/dbg.c"
}

setup() {
	require_tools
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
}

mkstream() {
	perl "$BATS_TEST_DIRNAME/mkstream.pl" >"$1"
}

# sym_addr BIN NAME: the address of NAME in BIN's .symtab, as 0x hex.
sym_addr() {
	printf '0x%x' "0x$(nm "$1" | awk -v n="$2" '$3 == n { print $1 }')"
}

# build_id BIN: the GNU build-id of BIN in hex.
build_id() {
	readelf -n "$1" | awk '/Build ID:/ { print $3 }'
}

# line_of FILE MARK: the line number of the "LINE:MARK" comment in FILE.
line_of() {
	grep -n "LINE:$2 " "$1" | cut -d: -f1
}

# A stream with one stack in BIN, its executable segment mapped at 0x401000
# from file offset 0x1000 as the loader maps it (bias 0): dbg_leaf,
# dbg_local, main; 3 samples.  BIN's build-id recorded when BID is given.
dbg_stream() {
	local bin=$1 bid=${2:-} leaf local main
	leaf=$(sym_addr "$D/dbg" dbg_leaf) local=$(sym_addr "$D/dbg" dbg_local)
	main=$(sym_addr "$D/dbg" main)
	mkstream "$T/in.unw" <<EOF_IN
header cpu-clock freq 99
comm 100 100 dbg exec
mmap 100 0x401000 0x1000 0x1000 5 $bin $bid
stack 100 1 root - $((leaf + 1)),$((local + 8)),$((main + 8)) 100
samples 3 100 1
summary 3 1
EOF_IN
}

symbolize() {
	run --separate-stderr "$SP_SYMBOLIZE" --kallsyms /dev/null \
		--no-system-debug "$@"
}

# frame_field OUT INDEX FIELD: field (1-based, of the frame line) of frame
# INDEX of the first stack in the symbolized OUT.
frame_field() {
	awk -F'\t' -v i="$2" -v f="$3" '$1 == "frame" && $4 == i { print $f; exit }' "$1"
}

record_target() {
	need_perf_events
	sp_pipeline "$T/out.folded" -p "$TARGET_PID" -d 2 -F 499 "$@"
	assert_pipeline_ok "$T/out.folded"
}

# record_released_target: record the target started with start_cmd --go to
# its end, releasing it once sp-record has attached.
record_released_target() {
	need_perf_events
	sp_pipeline_start "$T/out.folded" -p "$TARGET_PID" -F 499
	recording_started
	release_target
	sp_pipeline_wait
	assert_pipeline_ok "$T/out.folded"
}

# The symbolized stream of the recording sp_pipeline left in OUT.raw.
resymbolize() {
	"$SP_UNWIND" <"$T/out.folded.raw" 2>/dev/null |
		"$SP_SYMBOLIZE" --kallsyms /dev/null "$@" >"$T/out.sym" 2>"$T/sym.err" || true
}

@test "sym-inline -O2: inline chains, innermost first, with the right lines" {
	start_cmd "$D/sym-inline" 6
	record_target
	assert_share "$T/out.folded" '(^|;)main;run;outer_inl_\[i\];mid_inl_\[i\];leaf_inl_\[i\]($|;)' 80
	resymbolize
	src=$WL_SRC/sym-inline.c
	loop=$(line_of "$src" leafloop) body=$(line_of "$src" leaf)
	rest="inline mid_inl $(line_of "$src" mid);inline outer_inl $(line_of "$src" outer);native run $(line_of "$src" run)"
	# every stack through leaf_inl: its chain from there, as KIND FUNCTION
	# LINE;...  leaf_inl's own line is its loop's test or its body (or
	# what follows, once per 200,000 turns), wherever the sample fell
	chains=$(awk -F'\t' '$1 == "frame" && $9 == "leaf_inl" && !($3 in at) { at[$3] = $4 }
		$1 == "frame" && ($3 in at) && $4 >= at[$3] && $4 < at[$3] + 4 {
			c[$3] = c[$3] (c[$3] == "" ? "" : ";") $5 " " $9 " " $12 }
		END { for (k in c) print c[k] }' "$T/out.sym")
	[[ -n $chains ]] || fail "no stack through leaf_inl"
	while read -r leaf; do
		l=${leaf#inline leaf_inl }
		l=${l%%;*}
		[[ $leaf == "inline leaf_inl $l;$rest" && $l -ge $loop && $l -le $((body + 3)) ]] ||
			fail "chain: $leaf, want: inline leaf_inl $loop..$((body + 3));$rest"
	done <<<"$chains"
	# the body, where most of the time goes, in one stack at least
	grep -qx "inline leaf_inl $body;$rest" <<<"$chains" ||
		fail "no chain with leaf_inl at its body (line $body): $chains"
	grep -q $'\tinline\tsymtab\t-\t0x[0-9a-f]*\tleaf_inl\t'"$D/sym-inline"$'\t'"$src"$'\t' "$T/out.sym" ||
		fail "leaf_inl frame without its module and source file"

	resymbolize --no-inline
	! grep -q $'\tinline\t' "$T/out.sym" || fail "--no-inline wrote inline frames"
	grep -qE $'\tnative\tsymtab\t-\t0x[0-9a-f]*\trun\t[^\t]*\t'"$src"$'\t'"$(line_of "$src" run)"$'(\t[^\t]*\t[^\t]*)?$' "$T/out.sym" ||
		fail "--no-inline: run is not at its call line"
	resymbolize --no-lines
	awk -F'\t' '$1 == "frame" && ($11 != "-" || $12 != "-" || (NF >= 14 && $14 != "-")) { bad++ }
		END { exit bad > 0 }' "$T/out.sym" ||
		fail "--no-lines wrote files or lines"
}

@test "sym-cxx: demangled C++ names, short by default, folded lines valid for flamegraph.pl" {
	start_cmd "$D/sym-cxx" 6
	record_target
	# no return type, no parameters; templates and namespaces kept
	assert_share "$T/out.folded" '(^|;)main;app::engine::Pipeline<app::Vec3<float>, 4>::step;app::detail::hot<std::pair<int, long> >($|;)' 80
	resymbolize
	"$SP_FOLD" --names full "$T/out.sym" >"$T/full.folded"
	assert_share "$T/full.folded" '(^|;)main;app::engine::Pipeline<app::Vec3<float>, 4>::step\(unsigned long\);unsigned long app::detail::hot<std::pair<int, long> >\(std::pair<int, long>\*, unsigned long\)($|;)' 80
	# flamegraph.pl: "stack COUNT", frames split on ';', none empty
	bad=$(awk '{ if ($0 !~ /^[^ ].* [0-9]+$/) { print; next }
		s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";")
		for (i = 1; i <= n; i++) if (f[i] == "") { print; next } }' "$T/out.folded")
	[[ -z $bad ]] || fail "folded lines flamegraph.pl would misread: $bad"
	resymbolize --no-demangle
	grep -q $'\t_ZN3app6detail3hotISt4pairIilEEEmPT_m\t' "$T/out.sym" ||
		fail "--no-demangle: no mangled name for app::detail::hot"
}

@test "demangling: Rust legacy and v0, C++, and names that are not mangled" {
	cat >"$D/rs.c" <<'EOF_C'
void __attribute__((noinline, used)) rs_legacy(void) __asm__("_ZN4core3fmt5write17h0123456789abcdefE");
void rs_legacy(void) { __asm__ volatile(""); }
void __attribute__((noinline, used)) rs_v0(void) __asm__("_RNvCs1234_7mycrate3foo");
void rs_v0(void) { __asm__ volatile(""); }
void __attribute__((noinline, used)) not_mangled_Z(void) { __asm__ volatile(""); }
int main(void) { rs_legacy(); rs_v0(); not_mangled_Z(); return 0; }
EOF_C
	"${WL_CC:-cc}" -no-pie -O1 -o "$D/rs" "$D/rs.c"
	a=$(sym_addr "$D/rs" _ZN4core3fmt5write17h0123456789abcdefE)
	b=$(sym_addr "$D/rs" _RNvCs1234_7mycrate3foo)
	c=$(sym_addr "$D/rs" not_mangled_Z)
	mkstream "$T/in.unw" <<EOF_IN
header cpu-clock freq 99
mmap 7 0x400000 0x10000 0 5 $D/rs
stack 7 1 root - $a,$b,$c 111
summary 0 1
EOF_IN
	symbolize "$T/in.unw"
	assert_success
	got=$(awk -F'\t' '$1 == "frame" { print $9 }' <<<"$output")
	[[ $got == $'core::fmt::write\nmycrate::foo\nnot_mangled_Z' ]] || fail "names: $got"
}

@test "debuglink: a stripped binary named from its .gnu_debuglink file, CRC checked" {
	mkdir -p "$T/bin/.debug"
	objcopy --only-keep-debug "$D/dbg" "$T/dbg.debug"
	objcopy --strip-all "$D/dbg" "$T/bin/dbg"
	(cd "$T" && objcopy --add-gnu-debuglink=dbg.debug "$T/bin/dbg")
	nm "$T/bin/dbg" 2>&1 | grep -q 'no symbols' || fail "not stripped"
	for where in next-to .debug; do
		rm -f "$T/bin/dbg.debug" "$T/bin/.debug/dbg.debug"
		if [[ $where == next-to ]]; then cp "$T/dbg.debug" "$T/bin/"; else cp "$T/dbg.debug" "$T/bin/.debug/"; fi
		dbg_stream "$T/bin/dbg"
		symbolize "$T/in.unw"
		assert_success
		got=$(awk -F'\t' '$1 == "frame" { print $6, $9, $12 }' <<<"$output")
		want=$(printf '%s\n' "debuglink dbg_leaf $(line_of "$D/dbg.c" dbg_leaf)" \
			"debuglink dbg_local -" "debuglink main -")
		[[ ${got%% *} == debuglink && $got =~ dbg_leaf\ $(line_of "$D/dbg.c" dbg_leaf) ]] ||
			fail "$where: frames: $got, want like: $want"
		grep -q $'\tdbg_local\t' <<<"$output" || fail "$where: no dbg_local"
	done
	# a debug file whose CRC does not match is not taken
	printf 'x' >>"$T/bin/.debug/dbg.debug"
	symbolize "$T/in.unw"
	assert_success
	! grep -q debuglink <<<"$output" || fail "a debug file with a bad CRC was used"
	grep -q $'\tnone\t-\t0x[0-9a-f]*\t\[dbg\]+0x' <<<"$output" || fail "want unresolved frames: $output"
}

@test "build-id directory: --debug-dir ROOT/.build-id/xx/rest.debug" {
	bid=$(build_id "$D/dbg")
	[[ -n $bid ]] || skip "the linker wrote no build-id"
	mkdir -p "$T/root/.build-id/${bid:0:2}" "$T/bin"
	objcopy --only-keep-debug "$D/dbg" "$T/root/.build-id/${bid:0:2}/${bid:2}.debug"
	objcopy --strip-all "$D/dbg" "$T/bin/dbg"
	dbg_stream "$T/bin/dbg" "$bid"
	symbolize --debug-dir "$T/root" "$T/in.unw"
	assert_success
	assert_line --regexp $'\tnative\tbuildid\t-\t0x[0-9a-f]+\tdbg_leaf\t[^\t]+\t[^\t]*dbg.c\t'"$(line_of "$D/dbg.c" dbg_leaf)"$'(\t[^\t]*\t[^\t]*)?$'
	assert_line --regexp $'\tbuildid\t-\t0x[0-9a-f]+\tdbg_local\t'
	symbolize "$T/in.unw"
	refute_line --partial buildid
}

@test "MiniDebugInfo: .gnu_debugdata made with objcopy and xz names local functions" {
	command -v xz >/dev/null || skip "needs xz (xz-utils)"
	# as Fedora's find-debuginfo does: the function symbols .dynsym lacks
	nm -D "$D/dbg" --format=posix --defined-only | awk '{ print $1 }' | sort >"$T/dynsyms"
	nm "$D/dbg" --format=posix --defined-only | awk '$2 ~ /[TtWw]/ { print $1 }' | sort >"$T/funcsyms"
	comm -13 "$T/dynsyms" "$T/funcsyms" >"$T/keep"
	objcopy --only-keep-debug "$D/dbg" "$T/full.debug"
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols="$T/keep" "$T/full.debug" "$T/mini"
	xz -f "$T/mini"
	objcopy --strip-all --add-section .gnu_debugdata="$T/mini.xz" "$D/dbg" "$T/dbg"
	dbg_stream "$T/dbg"
	symbolize "$T/in.unw"
	assert_success
	assert_line --regexp $'\tnative\tminidebuginfo\t-\t0x[0-9a-f]+\tdbg_leaf\t'
	assert_line --regexp $'\tnative\tminidebuginfo\t-\t0x[0-9a-f]+\tdbg_local\t'
}

@test "a binary replaced since the recording: never named from the new one, [unknown build-id], exit 1" {
	bid=$(build_id "$D/dbg")
	[[ -n $bid ]] || skip "the linker wrote no build-id"
	mkdir -p "$T/bin"
	sed 's/x \* 3 + 1/x * 5 + 7/' "$D/dbg.c" >"$T/new.c"
	"${WL_CC:-cc}" -no-pie -O1 -g -Wl,--build-id -o "$T/bin/dbg" "$T/new.c"
	new=$(build_id "$T/bin/dbg")
	[[ $new != "$bid" ]] || fail "the rebuild has the same build-id"
	dbg_stream "$T/bin/dbg" "$bid"
	symbolize --cache-dir "$T/cache" --no-system-debug "$T/in.unw"
	assert_failure 1
	[[ $stderr == "sp-symbolize: no file with build-id $bid for '$T/bin/dbg' (replaced or deleted since the recording, and not in the build-id cache): its frames in 3 samples are [unknown build-id ${bid:0:12}]" ]] ||
		fail "stderr: $stderr"
	for i in 0 1 2; do
		assert_line --regexp "^frame"$'\t100\t1\t'"$i"$'\tnative\tnone\tno-build-id\t0x[0-9a-f]+\t\\[unknown build-id '"${bid:0:12}"$'\\]\t'"$T/bin/dbg"$'\t-\t-$'
	done
	refute_line --partial $'\tdbg_'
	refute_line --partial $'\tmain\t'
	# with the recorded build-id's debug file at hand, the names are right
	mkdir -p "$T/root/.build-id/${bid:0:2}"
	objcopy --only-keep-debug "$D/dbg" "$T/root/.build-id/${bid:0:2}/${bid:2}.debug"
	symbolize --cache-dir "$T/cache" --debug-dir "$T/root" "$T/in.unw"
	assert_success
	assert_line --regexp $'\tnative\tbuildid\t-\t0x[0-9a-f]+\tdbg_leaf\t[^\t]+\t[^\t]*dbg.c\t'"$(line_of "$D/dbg.c" dbg_leaf)"
	assert_line --regexp $'\tnative\tbuildid\t-\t0x[0-9a-f]+\tdbg_local\t'
	[[ $stderr == "sp-symbolize: no file with build-id $bid for '$T/bin/dbg': its frames in 3 samples are named from its debug file" ]] ||
		fail "stderr: $stderr"
	# and the original in the build-id cache serves as the file itself
	mkdir -p "$T/cache/buildid/${bid:0:2}/${bid:2}"
	cp "$D/dbg" "$T/cache/buildid/${bid:0:2}/${bid:2}/elf"
	symbolize --cache-dir "$T/cache" --no-system-debug "$T/in.unw"
	assert_success
	assert_line --regexp $'\tnative\tsymtab\t-\t0x[0-9a-f]+\tdbg_leaf\t'
	[[ -z $stderr ]] || fail "stderr: $stderr"
}

@test "kernel frames of a syscall-heavy program, marked _[k]" {
	need_perf_events
	[[ $(cat /proc/sys/kernel/kptr_restrict) == 0 || $(id -u) == 0 ]] ||
		skip "needs readable kernel addresses (kernel.kptr_restrict)"
	head -c 100 /proc/kallsyms | grep -qv '^0000000000000000' ||
		skip "needs readable kernel addresses (/proc/kallsyms shows zeros)"
	# one byte per read(2) and write(2): nearly all of its time is in the kernel
	start_dd
	sp_pipeline "$T/out.folded" -p "$TARGET_PID" -d 2 -F 499
	assert_pipeline_ok "$T/out.folded"
	assert_share "$T/out.folded" '_\[k\]' 30
	assert_share "$T/out.folded" '(^|;)(__)?(read|write|libc_read|libc_write)[^;]*;.*_\[k\]' 20
	"$SP_UNWIND" <"$T/out.folded.raw" 2>/dev/null | "$SP_SYMBOLIZE" >"$T/out.sym"
	grep -q $'\tkernel\tkallsyms\t-\t0xffff' "$T/out.sym" || fail "no kallsyms-named kernel frame"
}

@test "kallsyms captured at record time is read from the recording" {
	need_perf_events
	head -c 100 /proc/kallsyms | grep -qv '^0000000000000000' ||
		skip "needs readable kernel addresses (/proc/kallsyms shows zeros)"
	start_dd
	sp_pipeline "$T/out.folded" -p "$TARGET_PID" -d 2 -F 499
	assert_pipeline_ok "$T/out.folded"
	# the reader may be another machine: no kallsyms file at all
	"$SP_UNWIND" <"$T/out.folded.raw" 2>/dev/null |
		"$SP_SYMBOLIZE" --kallsyms /nonexistent >"$T/out.sym" 2>"$T/sym.err"
	grep -q $'\tkernel\tkallsyms\t-\t0xffff[0-9a-f]*\t[a-z_]' "$T/out.sym" ||
		fail "no kernel frame named from the recording: $(grep -m3 $'\tkernel\t' "$T/out.sym")"
	# every kernel frame, also a caller frame at a function's first byte
	# (the jump target of a retpoline thunk, an interrupted IP), is named
	# from the recording: recorder and symbolizer pick the same symbol
	! grep -q $'\tkernel\tnone\t' "$T/out.sym" ||
		fail "kernel frames left unnamed: $(grep -m3 $'\tkernel\tnone\t' "$T/out.sym")"
}

@test "jitdump: a test JIT's code named from jit-PID.dump with lines (live)" {
	start_cmd "$D/sym-jit" jitdump "$T" 6
	record_target
	rm -f "/tmp/perf-$TARGET_PID.map"
	assert_share "$T/out.folded" '(^|;)main;call_jit;jit_outer_\[j\];jit_hot_\[j\]($|;)' 70
	resymbolize
	grep -qE $'\tjit\tjitdump\t-\t0x[0-9a-f]+\tjit_hot\t[^\t]+\tjit-src.js\t1[01]$' "$T/out.sym" ||
		fail "no jit_hot from the jitdump with its line: $(grep jit_ "$T/out.sym" | head -3)"
	grep -qE $'\tjit\tjitdump\t-\t0x[0-9a-f]+\tjit_outer\t[^\t]+\tjit-src.js\t20$' "$T/out.sym" ||
		fail "no jit_outer from the jitdump"
}

@test "jitdump UNWINDING_INFO: frameless JIT frames unwound by their CFI to main (live)" {
	start_cmd "$D/sym-jit" jitcfi "$T" 6
	record_target
	assert_share "$T/out.folded" '^sym-jit;main;call_jit;jit_fl_outer_\[j\];jit_fl_hot_\[j\]($|;)' 90
	! grep -q decoy_site "$T/out.folded" ||
		fail "a frame came from the decoy return address: $(grep -m3 decoy_site "$T/out.folded")"
}

@test "jitdump without UNWINDING_INFO: frameless JIT frames do not unwind to main (live)" {
	start_cmd "$D/sym-jit" jitnocfi "$T" 6
	record_target
	# by frame pointer or stack scan the decoy wins, never the real caller
	assert_share "$T/out.folded" '(^|;)main;call_jit;jit_fl_outer_\[j\];jit_fl_hot_\[j\]($|;)' 0 5
	assert_share "$T/out.folded" '(^|;)jit_fl_hot_\[j\]($|;)' 90
}

@test "perf map appended while recording: early and late JIT functions both named" {
	# released once sp-record attached: jit_hot for 2 s of CPU time, then
	# jit_late_hot for 2 s more (WL_CLOCK=cpu), all of it recorded
	WL_CLOCK=cpu start_cmd --go "$D/sym-jit" perfmap 4
	record_released_target
	assert_share "$T/out.folded" '(^|;)jit_outer_\[j\];jit_hot_\[j\]($|;)' 10
	assert_share "$T/out.folded" '(^|;)jit_outer_\[j\];jit_late_hot_\[j\]($|;)' 10
}

@test "perf map removed after the recording: names from the recorder's snapshot" {
	WL_CLOCK=cpu start_cmd --go "$D/sym-jit" perfmap 4
	record_released_target
	# the map is gone and the program with it; the recording still names it
	stop_targets || true
	[[ ! -e /tmp/perf-$TARGET_PID.map ]] || fail "the map is still there"
	resymbolize
	"$SP_FOLD" "$T/out.sym" >"$T/again.folded"
	assert_share "$T/again.folded" '(^|;)jit_outer_\[j\];jit_hot_\[j\]($|;)' 10
	assert_share "$T/again.folded" '(^|;)jit_outer_\[j\];jit_late_hot_\[j\]($|;)' 10
}

@test "python3.12 -X perf: glue between py:: frames hidden, shown with --hidden" {
	need_python312
	start_cmd "$PYTHON312" -X perf "$WL_SRC/wl-python.py" 6
	# the perf map's frames alone: with the interpreter's own frames read
	# (python.bats), _PyEval_EvalFrameDefault is replaced by them
	record_target --python off
	assert_share "$T/out.folded" 'py::<module>[^;]*;py::main[^;]*;py::outer[^;]*;py::middle[^;]*;py::inner[^;]*(;|$)' 70
	! grep -q '_PyEval_EvalFrameDefault;[^ ]*py::inner' "$T/out.folded" ||
		fail "interpreter glue between py:: frames: $(head -1 "$T/out.folded")"
	resymbolize
	grep -q $'\tinterp\t[a-z-]*\thidden\t0x[0-9a-f]*\t_PyEval_EvalFrameDefault\t' "$T/out.sym" ||
		fail "no hidden interp frame"
	"$SP_FOLD" --hidden "$T/out.sym" | grep -q 'py::main[^;]*;_PyEval_EvalFrameDefault;' ||
		fail "--hidden does not show the glue"
}

@test "100,000 samples over thousands of functions: each module's DWARF opened once" {
	local n=3000 i
	{
		for ((i = 0; i < n; i++)); do
			echo "int __attribute__((noinline)) f$i(int x) { return x * $i + 1; }"
		done
		echo 'int main(int c, char **v) { (void)v; return f0(c); }'
	} >"$T/many.c"
	"${WL_CC:-cc}" -no-pie -O1 -g -o "$T/many" "$T/many.c"
	nm "$T/many" | awk '$3 ~ /^f[0-9]+$/ { print $1 }' | sort >"$T/addrs"
	[[ $(wc -l <"$T/addrs") -eq $n ]] || fail "not $n functions"
	{
		echo 'header cpu-clock freq 99'
		echo "mmap 9 0x400000 0x100000 0 5 $T/many"
		awk '{ a[NR] = $1 } END {
			for (i = 1; i <= 1000; i++)
				printf "stack 9 %d root - 0x%s,0x%s,0x%s 100\nsamples 100 9 %d\n",
					i, a[(i * 3) % NR + 1], a[(i * 3 + 1) % NR + 1],
					a[(i * 3 + 2) % NR + 1], i
		}' "$T/addrs"
		echo 'summary 100000 1000'
	} | mkstream "$T/in.unw"
	run --separate-stderr "$SP_SYMBOLIZE" --stats --kallsyms /dev/null \
		--no-system-debug -o "$T/out.sym" "$T/in.unw"
	assert_success
	[[ $(grep -c '^sample' "$T/out.sym") -eq 100000 ]] || fail "not 100000 samples"
	# 1000 stacks of 3 frames over 3000 distinct (module, address) pairs
	[[ $stderr =~ 1000\ stacks,\ 3000\ frames\ \(0\ inline,\ 0\ unresolved\),\ 3000\ distinct\ addresses ]] ||
		fail "stats: $stderr"
	[[ $stderr =~ 1\ modules,\ 1\ DWARF\ opened\ \(1\ units\),\ 0\ debug\ files ]] ||
		fail "stats: $stderr"
	awk -F'\t' '$1 == "frame" && $12 == "-" { bad++ } END { exit bad > 0 }' "$T/out.sym" ||
		fail "frames without lines"
}
