#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# plt.bats: frames in PLT stubs are named TARGET@plt, as perf and objdump
# name them, never after the symbol before the PLT (_init).  plt-main
# (tests/workloads/plt-main.c) calls libwlplt.so through its PLT in a tight
# loop, built in each layout GNU ld makes (lazy .plt, -z now, IBT .plt.sec,
# .plt.got), and is recorded through the whole pipeline; and objdump is the
# oracle: every stub it labels, in these programs and in system libraries,
# gets its name from sp-symbolize fed streams made by hand.

load common

# The layouts: NAME and the compiler flags that make it.
plt_flags() {
	case $1 in
	lazy) ;;
	now) echo -Wl,-z,now ;;
	ibt) echo -fcf-protection=full -Wl,-z,ibtplt ;;
	got) echo -DWL_PLT_GOT -Wl,-z,now ;;
	ibtgot) echo -DWL_PLT_GOT -fcf-protection=full -Wl,-z,ibtplt ;;
	esac
}

setup_file() {
	local d=$BATS_FILE_TMPDIR cc=${WL_CC:-cc} v
	"$cc" -O2 -g -fomit-frame-pointer -fPIC -shared \
		-o "$d/libwlplt.so" "$WL_SRC/plt-lib.c"
	for v in lazy now ibt got ibtgot; do
		# shellcheck disable=SC2046	# the flags are words
		"$cc" -O2 -g -fomit-frame-pointer $(plt_flags "$v") \
			-o "$d/plt-$v" "$WL_SRC/plt-main.c" -L"$d" -lwlplt \
			-Wl,-rpath,"$d" 2>"$d/plt-$v.cc-err" ||
			rm -f "$d/plt-$v"
	done
}

setup() {
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
	command -v objdump >/dev/null && command -v readelf >/dev/null ||
		skip "needs objdump and readelf (binutils)"
}

# need_variant NAME: plt-NAME was built, else skip naming what is missing.
need_variant() {
	[[ -x $D/plt-$1 ]] ||
		skip "needs a compiler and linker for $(plt_flags "$1"): $(head -1 "$D/plt-$1.cc-err")"
}

# sections BIN: "NAME ADDR SIZE ENTSIZE" (hex, no 0x) of each section.
sections() {
	readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] //p' |
		awk '$2 != "NULL" { print $1, $3, $5, $6 }'
}

# stub_of BIN LABEL: "START END SECTION" (decimal file vaddrs) of the stub
# objdump labels <LABEL> in BIN; it holds one entry of its section.
stub_of() {
	local start sec a s e
	read -r start sec < <(objdump -d "$1" | awk -v l="<$2>:" '
		/^Disassembly of section / { s = $4; sub(/:$/, "", s) }
		$2 == l { print $1, s; exit }')
	[[ -n $start ]] || return 1
	read -r _ a s e < <(sections "$1" | awk -v n="$sec" '$1 == n')
	echo "$((0x$start)) $((0x$start + 0x$e)) $sec"
}

# load_bias BIN START PGOFF: what is added to BIN's vaddrs in a mapping at
# START of file offset PGOFF: from the PT_LOAD holding PGOFF, mapped from
# the page that holds its offset (as sp_elf_bias() computes it).
load_bias() {
	local off va fsz al
	while read -r off va fsz al; do
		off=$((off)) va=$((va)) fsz=$((fsz)) al=$((al > 1 ? al : 1))
		if (($3 >= (off & ~(al - 1)) && $3 < off + fsz)); then
			echo $(($2 - $3 + off - va))
			return 0
		fi
	done < <(readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $3, $5, $NF }')
	return 1
}

# plt_record NAME: sp-record launches plt-NAME for 0.4 s of its CPU time;
# sp-unwind | sp-symbolize (kept in $T/NAME.sym) | sp-fold > $T/NAME.folded.
plt_record() {
	PIPE_OUT=$T/$1.folded
	WL_CLOCK=cpu stage sp-record "$SP_RECORD" -F 1999 -- "$D/plt-$1" 0.4 |
		stage sp-unwind "$SP_UNWIND" |
		stage sp-symbolize "$SP_SYMBOLIZE" |
		stage tee tee "$T/$1.sym" |
		stage sp-fold "$SP_FOLD" >"$PIPE_OUT"
	collect_stages sp-record sp-unwind sp-symbolize tee sp-fold
	assert_pipeline_ok "$PIPE_OUT"
}

# module_bias SYM MODULE: the load bias of MODULE in the symbolized stream
# SYM, from its (first) map line.
module_bias() {
	local mstart pgoff
	read -r mstart pgoff < <(awk -F '\t' -v p="$2" \
		'$1 == "map" && $8 == p { print $4, $6; exit }' "$1")
	[[ -n $mstart ]] || return 1
	load_bias "$2" "$((mstart))" "$((pgoff))"
}

# init_ranges SYM: "MODULE<TAB>LO<TAB>HI" (runtime addresses, decimal) of
# .init of each module that a native frame named _init is in.
init_ranges() {
	local mod bias a s
	while IFS= read -r mod; do
		bias=$(module_bias "$1" "$mod") || continue
		read -r _ a s _ < <(sections "$mod" | awk '$1 == ".init"')
		[[ -n $a ]] && printf '%s\t%d\t%d\n' "$mod" \
			$((0x$a + bias)) $((0x$a + 0x$s + bias))
	done < <(awk -F '\t' '$1 == "frame" && $5 == "native" &&
		$9 == "_init" { print $10 }' "$1" | sort -u)
}

# check_recorded NAME SECTION: the samples of plt-NAME in its stub of
# wlplt_step, which is in SECTION, are named wlplt_step@plt, from .dynsym,
# at addresses in the stub and only there, in the stack main;run; no frame
# outside .init is named _init (start-up runs the real one), and no frame
# of the program goes unnamed.
check_recorded() {
	local v=$1 prog=$D/plt-$1 start end sec bias all stub chain
	need_perf_events
	need_variant "$v"
	read -r start end sec < <(stub_of "$prog" wlplt_step@plt) ||
		fail "objdump labels no wlplt_step@plt in $prog"
	[[ $sec == "$2" ]] || fail "plt-$v has its stub in $sec, not $2"
	plt_record "$v"
	bias=$(module_bias "$T/$v.sym" "$prog") ||
		fail "no map line of $prog in $T/$v.sym, or no PT_LOAD for it"
	init_ranges "$T/$v.sym" >"$T/inits"
	# frame lines: FUNCTION $9, MODULE $10, ADDR $8, ORIGIN $6, KIND $5
	run awk -F '\t' -v p="$prog" -v lo=$((start + bias)) -v hi=$((end + bias)) '
		function num(h,   i, c, n) {
			n = 0; h = tolower(substr(h, 3))
			for (i = 1; i <= length(h); i++) {
				c = index("0123456789abcdef", substr(h, i, 1)) - 1
				n = n * 16 + c
			}
			return n
		}
		FILENAME == ARGV[1] { ilo[$1] = $2; ihi[$1] = $3; next }
		$1 != "frame" { next }
		{ a = num($8) }
		$5 == "native" && $9 == "_init" &&
		    !($10 in ilo && a >= ilo[$10] && a < ihi[$10]) {
			print "named _init outside .init: " $0 }
		$10 != p { next }
		{ in_stub = a >= lo && a < hi }
		in_stub && $9 != "wlplt_step@plt" { print "stub frame misnamed: " $0 }
		!in_stub && $9 == "wlplt_step@plt" { print "outside the stub: " $0 }
		$9 == "wlplt_step@plt" && ($6 != "dynsym" || $5 != "native") {
			print "wrong origin or kind: " $0 }
		$9 ~ /^\[plt-/ { print "unnamed: " $0 }' "$T/inits" "$T/$v.sym"
	assert_success
	assert_output ''
	all=$(fold_count "$T/$v.folded")
	stub=$(fold_count "$T/$v.folded" ';wlplt_step@plt(;|$)')
	chain=$(fold_count "$T/$v.folded" \
		"^plt-$v;main;run;wlplt_step@plt(;[^;]*_\\[k\\])*\$")
	if ((stub < 20 || stub * 100 < all * 5 || chain != stub)); then
		show_folded "$T/$v.folded"
		fail "$stub of $all samples in wlplt_step@plt ($chain under main;run): want 20 and 5% at least, all under main;run"
	fi
}

@test "plt: samples in a lazy .plt stub are wlplt_step@plt" {
	check_recorded lazy .plt
}

@test "plt: samples in a -z now stub are wlplt_step@plt" {
	check_recorded now .plt
}

@test "plt: samples in an IBT .plt.sec stub (-fcf-protection) are wlplt_step@plt" {
	check_recorded ibt .plt.sec
}

@test "plt: samples in a .plt.got stub are wlplt_step@plt" {
	check_recorded got .plt.got
}

# plt_oracle BIN [--demangle]: every stub that objdump -d (-dC) labels in
# BIN, at its first byte and 5 bytes in, is named by sp-symbolize
# (--no-demangle) as objdump names it: TARGET@plt; PLT0 (<.plt>, or
# <TARGET@plt-0x10>) "[plt]"; an IFUNC slot (<*ABS*+0xADDR@plt>) after an
# IFUNC symbol at ADDR.  Sets NLABELS.
plt_oracle() {
	local bin=$1 od=-d sym=--no-demangle base=0 hi=0 va msz n=0 a name
	[[ ${2:-} == --demangle ]] && od=-dC sym=
	[[ $(readelf -h "$bin" | awk '$1 == "Type:" { print $2 }') == DYN ]] &&
		base=$((0x7f0000000000))
	while read -r va msz; do
		((va + msz > hi)) && hi=$((va + msz))
	done < <(readelf -lW "$bin" | awk '$1 == "LOAD" { print $3, $6 }')
	objdump "$od" -j .plt -j .plt.sec -j .plt.got -j .plt.bnd "$bin" 2>/dev/null |
		sed -n 's/^\([0-9a-f]*\) <\(.*\)>:$/\1\t\2/p' >"$T/labels"
	NLABELS=$(wc -l <"$T/labels")
	{
		echo "header cpu-clock freq 99"
		echo "comm 100 100 prog exec"
		printf 'mmap 100 0x%x 0x%x 0 5 %s\n' "$base" "$hi" "$bin"
		while IFS=$'\t' read -r a name; do
			printf 'stack 100 %d root - 0x%x 1\n' $((n + 1)) $((base + 0x$a))
			printf 'stack 100 %d root - 0x%x 1\n' $((n + 2)) $((base + 0x$a + 5))
			n=$((n + 2))
		done <"$T/labels"
		echo "summary 0 0"
	} | perl "$BATS_TEST_DIRNAME/mkstream.pl" >"$T/in.unw"
	# shellcheck disable=SC2086	# no option when demangling
	run --separate-stderr "$SP_SYMBOLIZE" $sym -o "$T/out" "$T/in.unw"
	assert_success
	nm -D --defined-only "$bin" 2>/dev/null |
		awk '$2 == "i" { a = $1; sub(/^0+/, "", a); n = $3; sub(/@.*/, "", n); print a "\t" n }' \
			>"$T/ifuncs"
	run awk -F '\t' '
		FILENAME == ARGV[1] { ifunc[$1 "\t" $2] = 1; next }
		FILENAME == ARGV[2] { want[++nl] = $2; next }
		$1 == "frame" { got[++nf] = $9 }
		END {
			for (i = 1; i <= nl; i++) {
				w = want[i]
				if (w == ".plt" || w ~ /@plt-0x[0-9a-f]+$/)
					w = "[plt]"
				for (k = 2 * i - 1; k <= 2 * i; k++) {
					g = got[k]
					if (g == w)
						continue
					if (w ~ /^\*ABS\*\+0x[0-9a-f]+@plt$/) {
						h = substr(w, 9); sub(/@plt$/, "", h)
						t = g; sub(/@plt$/, "", t)
						if (g ~ /@plt$/ && ((h "\t" t) in ifunc))
							continue
					}
					print "<" want[i] "> named " g
				}
			}
			if (nf != 2 * nl)
				print nf " frames for " nl " labels"
		}' "$T/ifuncs" "$T/labels" "$T/out"
	assert_success
	assert_output ''
}

@test "plt: every stub objdump labels in the PLT layouts gets objdump's name" {
	local v n=0
	for v in lazy now ibt got ibtgot; do
		[[ -x $D/plt-$v ]] || continue
		plt_oracle "$D/plt-$v"
		grep -q $'\twlplt_step@plt$' "$T/labels" ||
			fail "objdump labels no wlplt_step@plt in plt-$v"
		n=$((n + 1))
	done
	plt_oracle "$D/libwlplt.so"
	((NLABELS >= 1)) || fail "objdump labels no stub in libwlplt.so"
	((n == 5)) || skip "only $n of 5 layouts could be built"
}

@test "plt: libc's stubs, IFUNCs among them, get objdump's names" {
	local libc
	libc=$(ldd "$D/plt-lazy" 2>/dev/null | awk '$1 ~ /^libc\.so/ { print $3 }')
	[[ -f $libc ]] || skip "needs the C library plt-lazy links (ldd found none)"
	plt_oracle "$libc"
	((NLABELS >= 2)) || skip "$libc has no PLT"
}

@test "plt: libstdc++'s stubs get objdump's names, mangled and demangled" {
	local lib
	lib=$("${WL_CXX:-g++}" -print-file-name=libstdc++.so.6 2>/dev/null)
	[[ $lib == /* && -f $lib ]] || skip "needs libstdc++.so.6 (from g++)"
	plt_oracle "$lib"
	((NLABELS >= 100)) || fail "only $NLABELS stubs labelled in $lib"
	plt_oracle "$lib" --demangle
	grep -q $'\tstd::.*@plt$' "$T/labels" ||
		fail "objdump -dC labels no std:: stub in $lib"
}

@test "plt: libpython3.12's stubs (__tls_get_addr@plt among them) get objdump's names" {
	local lib
	need_python312
	lib=$(dirname "$(dirname "$PYTHON312")")/lib/libpython3.12.so.1.0
	[[ -f $lib ]] || skip "needs libpython3.12.so.1.0 beside $PYTHON312"
	plt_oracle "$lib"
	grep -q $'\t__tls_get_addr@plt$' "$T/labels" ||
		fail "objdump labels no __tls_get_addr@plt in $lib"
}
