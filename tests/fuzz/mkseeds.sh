#!/bin/bash
# SPDX-License-Identifier: MIT
# mkseeds.sh: (re)make the real-* seeds of the file and text readers'
# corpora (tests/fuzz/corpus/{perfmap,jitdump,kallsyms,procmaps,elf,
# gopclntab,symcache,dwarf,dwline}) from what this machine makes and has: perf maps and
# jitdump files written by the suite's JIT workloads and by node, slices of
# /proc/kallsyms, /proc maps and status files, a small C program built
# here, this machine's vDSO, the function table of a Go hello program, and
# the symbol cache sp-symbolize (built) writes for a workload, and the
# debug sections of a workload in DWARF 4 and 5, and line tables of every
# version gcc, clang and Go write.
# Each is kept under 64 KB but the Go table, of which one is kept whole.
# A part whose tool (node, go) is missing is skipped and says so.
# Hand-made seeds (edge-*) are left alone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
c=$here/corpus
wl=$here/../workloads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
have() {
	command -v "$1" >/dev/null && return 0
	echo "mkseeds: no $1: $2 seeds not remade" >&2
	return 1
}
mkdir -p "$c"/{perfmap,jitdump,kallsyms,procmaps,elf,gopclntab,symcache,dwarf,dwline}

cat >"$tmp/jit.js" <<'EOF'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
class Point { constructor(x, y) { this.x = x; this.y = y; }
	norm() { return Math.sqrt(this.x * this.x + this.y * this.y); } }
let s = 0;
for (let i = 0; i < 200000; i++) s += new Point(i, i + 1).norm();
s += fib(25);
console.log(s > 0 ? 'ok' : 'no');
EOF

# perf maps: the workloads' and node's (the JIT leaves them in /tmp)
for w in wl-jit sym-jit; do
	cc -O2 -g -fomit-frame-pointer -pthread -o "$tmp/$w" "$wl/$w.c"
done
"$tmp/wl-jit" 0.1 & pid=$!; wait $pid
mv "/tmp/perf-$pid.map" "$c/perfmap/real-wl-jit"
"$tmp/sym-jit" perfmap 0.2 & pid=$!; wait $pid
mv "/tmp/perf-$pid.map" "$c/perfmap/real-sym-jit-grown"
if have node "node's perf map and jitdump"; then
	node --perf-basic-prof "$tmp/jit.js" >/dev/null & pid=$!; wait $pid
	{ head -60 "/tmp/perf-$pid.map"; grep 'JS:' "/tmp/perf-$pid.map" | sed -n 1,120p; } \
		>"$c/perfmap/real-node-perf-basic-prof"
	rm -f "/tmp/perf-$pid.map"
fi

# jitdump files: sym-jit's three kinds, and node's cut to some records
mkdir "$tmp/jd"
for kind in jitdump jitcfi jitnocfi; do
	"$tmp/sym-jit" $kind "$tmp/jd" 0.05 & pid=$!; wait $pid
	mv "$tmp/jd/jit-$pid.dump" "$c/jitdump/real-sym-jit-$kind"
done
if have node "node's jitdump" && have python3 "node's jitdump"; then
	(cd "$tmp/jd" && node --perf-prof --perf-prof-unwinding-info "$tmp/jit.js" >/dev/null)
	# header, then CODE_LOADs with the DEBUG_INFO and UNWINDING_INFO
	# records before them: the first few and those of jit.js's functions,
	# or those with line tables
	python3 - "$tmp"/jd/jit-*.dump "$c/jitdump" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
def cut(name, keep):
    out = bytearray(d[:struct.unpack_from('<I', d, 8)[0]])
    off, pend, n = len(out), [], 0
    while off + 16 <= len(d):
        rid, size = struct.unpack_from('<II', d, off)
        if size < 16 or off + size > len(d):
            break
        rec, off = d[off:off + size], off + size
        if rid in (2, 4):
            pend.append(rec)
            continue
        if rid == 0:
            fn = rec[56:rec.index(b'\0', 56)]
            if keep(n, fn, pend) and len(out) + size + sum(map(len, pend)) < 60000:
                out += b''.join(pend) + rec
            n, pend = n + 1, []
    open(sys.argv[2] + '/' + name, 'wb').write(out)
cut('real-node-perf-prof', lambda n, fn, p: n < 4 or any(k in fn for k in (b'fib', b'Point', b'norm')))
cut('real-node-perf-prof-debuginfo', lambda n, fn, p: any(r[:4] == b'\2\0\0\0' for r in p))
EOF
fi

# kallsyms: its start, a run of padding symbols, its end, hidden
k=/proc/kallsyms
head -300 $k >"$c/kallsyms/real-proc-kallsyms-head"
line=$(grep -n '__pfx_' $k | sed -n 5000p | cut -d: -f1)
sed -n "$line,$((line + 299))p" $k >"$c/kallsyms/real-proc-kallsyms-pfx"
tail -300 $k >"$c/kallsyms/real-proc-kallsyms-modules"
head -40 $k | sed 's/^[0-9a-f]*/0000000000000000/' >"$c/kallsyms/real-proc-kallsyms-hidden"

# /proc maps and status
cat /proc/self/maps >"$c/procmaps/real-maps-cat"
cat /proc/self/status >"$c/procmaps/real-status-cat"
if have node "node's maps"; then
	node -e 'process.stdout.write(require("fs").readFileSync("/proc/self/maps"))' \
		>"$c/procmaps/real-maps-node"
fi

# ELF files: a C program with PLT calls, an IFUNC and an address-taken
# import, in three PLT layouts, stripped and as a debug file; a library
cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int add(int a, int b) { return a + b; }
static int (*resolve_add(void))(int, int) { return add; }
int ifn(int, int) __attribute__((ifunc("resolve_add")));
int (*taken)(const char *) = puts;
int main(int argc, char **argv)
{
	char *s = malloc(strlen(argv[0]) + 1);

	strcpy(s, argv[0]);
	printf("%d %zu\n", ifn(argc, 2), strlen(s));
	taken(s);
	free(s);
	return 0;
}
EOF
e=$c/elf
cc -O2 -o "$e/real-c-O2-plt" "$tmp/prog.c"
cc -O2 -Wl,-z,now -o "$e/real-c-O2-bindnow" "$tmp/prog.c"
cc -O2 -fcf-protection=full -Wl,-z,ibtplt -o "$e/real-c-O2-ibt-plt" "$tmp/prog.c"
strip -o "$e/real-c-O2-stripped" "$e/real-c-O2-plt"
objcopy --only-keep-debug "$e/real-c-O2-plt" "$e/real-c-O2-debug-file"
cc -O2 -shared -fPIC -o "$e/real-plt-lib-so" "$wl/plt-lib.c"
cat >"$tmp/vdso.c" <<'EOF'
#include <elf.h>
#include <stdio.h>
#include <sys/auxv.h>
int main(void)
{
	const unsigned char *v = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)v;

	return !v || fwrite(v, 1, eh->e_shoff + (size_t)eh->e_shnum *
			    eh->e_shentsize, stdout) == 0;
}
EOF
cc -o "$tmp/vdso" "$tmp/vdso.c"
"$tmp/vdso" >"$e/real-vdso"
chmod 644 "$e"/real-*

# Go's function table of a hello program (go1.19: the layout of 1.18)
if have go "the Go table"; then
	printf 'package main\n\nfunc main() { println("hi") }\n' >"$tmp/hello.go"
	(cd "$tmp" && GOCACHE=$tmp/gocache GO111MODULE=off go build -o hello hello.go)
	v=$(go env GOVERSION | sed 's/^\(go[0-9]*\.[0-9]*\).*/\1/')
	objcopy -O binary --only-section=.gopclntab "$tmp/hello" \
		"$c/gopclntab/real-$v-hello"
	chmod 644 "$c/gopclntab/real-$v-hello"
fi

# The symbol cache of sym-inline (inline chains, lines): sp-symbolize's
# answers for its functions' entries and some addresses inside them, as
# the harness reads it (first byte 0), and with its CRC remade (1)
sym=$here/../../sp-symbolize/sp-symbolize
if [ -x "$sym" ]; then
	cc -O2 -g -fomit-frame-pointer -no-pie -I"$wl" -o "$tmp/sym-inline" \
		"$wl/sym-inline.c"
	{
		echo 'header cpu-clock freq 99'
		echo "mmap 9 0x400000 0x100000 0 5 $tmp/sym-inline"
		nm "$tmp/sym-inline" | perl -ne '
			push @a, hex $1 if /^([0-9a-f]+) [Tt] /;
			END { for $a (@a) { for ($d = 1; $d <= 25; $d += 8) { $k++;
				printf "stack 9 %d root - 0x%x 100\nsamples 1 9 %d\n", $k, $a + $d, $k } }
				print "summary $k $k\n" }'
	} | perl "$here/../bats/mkstream.pl" >"$tmp/sc.unw"
	"$sym" --kallsyms /dev/null --cache-dir "$tmp/sc" -o /dev/null "$tmp/sc.unw"
	f=$(find "$tmp/sc" -name symbols | head -1)
	{ printf '\0'; cat "$f"; } >"$c/symcache/real-sym-inline"
	{ printf '\1'; cat "$f"; } >"$c/symcache/real-sym-inline-fixcrc"
	chmod 644 "$c"/symcache/real-*
else
	echo "mkseeds: no $sym (make first): symbol cache seeds not remade" >&2
fi

# The debug sections of sym-inline (inline chains, lines) as fuzz-dwarf.c
# reads them: a flags byte, then each section's length (u16le) and bytes
for v in 4 5; do
	cc -O2 -g -gdwarf-$v -fomit-frame-pointer -I"$wl" -o "$tmp/dw$v" \
		"$wl/sym-inline.c"
	for s in info abbrev line aranges str line_str rnglists addr str_offsets; do
		: >"$tmp/dw$v.$s"	# stays empty when there is no such section
		objcopy --dump-section ".debug_$s=$tmp/dw$v.$s" "$tmp/dw$v" \
			"$tmp/scratch" 2>/dev/null || :
	done
	for flags in 0 1; do
		name=real-sym-inline-dwarf$v
		[ "$flags" = 0 ] || name=$name-cut
		perl -e 'print chr(shift); for (@ARGV) { local $/; open F, $_ or die;
			$b = <F> // ""; $b = substr($b, 0, 65535);
			print pack("v", length $b), $b }' "$flags" \
			"$tmp/dw$v".{info,abbrev,line,aranges,str,line_str,rnglists,addr,str_offsets} \
			>"$c/dwarf/$name"
	done
done
chmod 644 "$c"/dwarf/real-*

# Line tables as fuzz-dwline.c reads them: a flags byte, the length
# (u16le) and bytes of .debug_line_str, then .debug_line (its first 64 KB)
dwline_seed() {	# NAME FLAGS ELF
	local d=$tmp/dwline
	mkdir -p "$d"
	objcopy --decompress-debug-sections "$3" "$d/plain"
	: >"$d/line_str"
	: >"$d/line"
	objcopy --dump-section .debug_line_str="$d/line_str" "$d/plain" \
		"$d/scratch" 2>/dev/null || :
	objcopy --dump-section .debug_line="$d/line" "$d/plain" "$d/scratch"
	perl -e 'print chr(shift); local $/; open F, shift or die; $s = <F> // "";
		$s = substr($s, 0, 65535); print pack("v", length $s), $s;
		open F, shift or die; $l = <F> // ""; print substr($l, 0, 65536)' \
		"$2" "$d/line_str" "$d/line" >"$c/dwline/$1"
	chmod 644 "$c/dwline/$1"
}
for v in 2 4 5; do	# gcc writes a version 3 table for -gdwarf-2
	cc -O2 -g -gdwarf-$v -fomit-frame-pointer -I"$wl" -o "$tmp/dl$v" \
		"$wl/sym-inline.c"
	dwline_seed real-gcc-dwarf$v 0 "$tmp/dl$v"
done
dwline_seed real-gcc-dwarf5-no-comp-dir 2 "$tmp/dl5"
if have clang "clang's line tables (MD5 of each file)"; then
	clang -O2 -g -I"$wl" -o "$tmp/dlclang" "$wl/sym-inline.c"
	dwline_seed real-clang-dwarf5 0 "$tmp/dlclang"
fi
if have go "Go's line tables"; then
	[ -x "$tmp/hello" ] || (cd "$tmp" && printf 'package main\n\nfunc main() { println("hi") }\n' >hello.go &&
		GOCACHE=$tmp/gocache GO111MODULE=off go build -o hello hello.go)
	dwline_seed real-go-hello 0 "$tmp/hello"
fi
