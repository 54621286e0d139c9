#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# go.bats: Go programs (tests/workloads/wl-go.go, built here with Debian's
# go) through sp-record -- CMD | sp-unwind | sp-symbolize | sp-fold:
# stripped binaries named from their pclntab, Go frames stepped by pcsp,
# stacks complete only at Go's outermost frames (TOPFRAME) and truncated
# at Go's stack switches, checked against go tool addr2line.
#
# wl-go is built three times, each as .../NAME/wl-go so that its comm (the
# folded stacks' first frame) is the same: plain (symbols and DWARF),
# stripped (-ldflags='-s -w': only the pclntab names anything) and nodwarf
# (-ldflags=-w: symbols, but lines only in the pclntab).

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
load common

# Go's outermost frames on linux/amd64 (TEXT ...|TOPFRAME in go1.19's
# runtime/asm_amd64.s and sys_linux_amd64.s) and its stack switches.
GO_TOP='^runtime\.(goexit|mstart|rt0_go|sigtramp)$'
GO_SWITCH='^runtime\.(systemstack|mcall|morestack|asmcgocall|cgocallback)$'

# go_build NAME [GO-BUILD-ARGS...]: build wl-go.go into $GODIR/NAME/wl-go,
# offline, with Go's caches in $GODIR.
go_build() {
	local name=$1
	shift
	mkdir -p "$GODIR/$name" || return 1
	(cd "$GODIR" && HOME=$GODIR GOCACHE=$GODIR/cache GOPATH=$GODIR/gopath \
		GO111MODULE=off GOFLAGS='' GOPROXY=off CGO_ENABLED=0 \
		"$GO" build "$@" -o "$name/wl-go" "$WL_SRC/wl-go.go")
}

# go_record NAME: record $GODIR/NAME/wl-go from its first instruction, 2 s
# spinning then 1 s allocating (of CPU time: the same work however loaded
# the machine), through the pipeline; the unwound stream in $D/NAME.unw,
# the symbolized one in $D/NAME.sym, the folded one in $D/NAME.folded.
go_record() {
	local name=$1
	PIPE_OUT=$D/$name.folded
	WL_CLOCK=cpu stage sp-record "$SP_RECORD" -F 999 -m 8192 -- "$GODIR/$name/wl-go" 2 1 |
		stage tee-raw tee "$D/$name.raw" |
		stage sp-unwind "$SP_UNWIND" |
		stage tee-unw tee "$D/$name.unw" |
		stage sp-symbolize "$SP_SYMBOLIZE" --no-inline |
		stage tee-sym tee "$D/$name.sym" |
		stage sp-fold "$SP_FOLD" >"$PIPE_OUT"
	collect_stages sp-record tee-raw sp-unwind tee-unw sp-symbolize tee-sym sp-fold
	assert_pipeline_ok "$PIPE_OUT"
	cp "$PIPE_OUT.sp-unwind.err" "$D/$name.unwind.err"
}

setup_file() {
	require_tools
	need_perf_events
	need_go
	D=$BATS_FILE_TMPDIR
	GODIR=${SP_WORK:-$BATS_RUN_TMPDIR}/go
	export D GODIR GO
	go_build plain || fail "go build of wl-go failed"
	go_build stripped -ldflags='-s -w' || fail "go build -ldflags='-s -w' of wl-go failed"
	go_build nodwarf -ldflags=-w || fail "go build -ldflags=-w of wl-go failed"
	readelf -S "$GODIR/stripped/wl-go" | grep -q '\.symtab' &&
		fail "the stripped build has a symbol table"
	go_record plain
	go_record stripped
	go_record nodwarf
}

setup() {
	[[ -n ${GO:-} ]] || need_go
	T=$BATS_TEST_TMPDIR
	for r in plain stripped nodwarf; do
		[[ -s $D/$r.sym ]] || fail "the $r recording of setup_file is missing"
	done
}

# stack_ends NAME: per sampled stack of the NAME recording, one line
#   PID ID END SWITCH SAMPLES OUTERMOST
# END (0 complete, 1 truncated, ...) and SWITCH (1 when its flags have
# SP_STACK_GO_SWITCH) from its STACK record in the unwound stream
# (lib/format/unwound.h), OUTERMOST its outermost user frame's function in
# the symbolized stream, before the synthetic frame of a cut stack ("-" when
# it has none).
stack_ends() {
	# shellcheck disable=SC2016	# perl's variables
	perl -e '
		open(my $f, "<:raw", $ARGV[0]) or die "$ARGV[0]: $!\n";
		read($f, my $h, 16) == 16 or die "$ARGV[0]: no stream header\n";
		seek($f, unpack("x12 L", $h), 0);
		my (%st, %n);
		while (read($f, my $r, 8) == 8) {
			my ($t, $size) = unpack("LL", $r);
			last if $size < 8;
			read($f, my $p, $size - 8) == $size - 8 or last;
			if ($t == 9) {
				my ($pid, $id, $nk, $nu, $end, $fl) = unpack("LLSSCC", $p);
				$st{"$pid $id"} = "$end " . ($fl & 2 ? 1 : 0);
			} elsif ($t == 1) {
				my ($time, $pid, $tid, $cpu, $id) = unpack("QLLLL", $p);
				$n{"$pid $id"}++;
			}
		}
		print "$_ $st{$_} $n{$_}\n" for sort keys %n;' "$D/$1.unw" |
		awk -F'\t' -v sym="$D/$1.sym" '
			BEGIN {
				while ((getline l < sym) > 0) {
					split(l, f, "\t")
					if (f[1] == "frame" && f[5] != "kernel" &&
					    f[5] != "synthetic")
						out[f[2] " " f[3]] = f[9]
				}
			}
			{
				split($0, w, " ")
				k = w[1] " " w[2]
				print $0 " " (k in out ? out[k] : "-")
			}'
}

# unwind_counts NAME: SAMPLES COMPLETE TRUNCATED from sp-unwind's report.
unwind_counts() {
	local re='^sp-unwind: ([0-9]+) samples, [0-9]+ stacks: ([0-9]+) complete, ([0-9]+) truncated'
	[[ $(tail -1 "$D/$1.unwind.err") =~ $re ]] ||
		fail "no report of sp-unwind for $1: $(cat "$D/$1.unwind.err")"
	SAMPLES=${BASH_REMATCH[1]} COMPLETE=${BASH_REMATCH[2]} TRUNCATED=${BASH_REMATCH[3]}
}

@test "go: a stripped Go binary's frames are named by its pclntab" {
	local bin=$GODIR/stripped/wl-go
	# every user frame in the binary is named, from the pclntab
	awk -F'\t' -v bin="$bin" '
		$1 == "frame" && $10 == bin {
			n++
			if ($6 != "gopclntab") { bad++; if (bad < 5) print "# " $0 }
		}
		END {
			printf "# %d frames of %s\n", n, bin
			exit !(n >= 1000 && !bad)
		}' "$D/stripped.sym" || fail "frames of the stripped binary not from its pclntab"
	# main.hotA with its source file and a line of its loop
	first=$(grep -n '^func hotA' "$WL_SRC/wl-go.go" | cut -d: -f1)
	awk -F'\t' -v src="$WL_SRC/wl-go.go" -v lo="$first" '
		$1 == "frame" && $9 == "main.hotA" {
			n++
			if ($11 != src || $12 <= lo || $12 > lo + 6) {
				bad++; if (bad < 5) print "# " $0
			}
		}
		END { exit !(n >= 1 && !bad) }' "$D/stripped.sym" ||
		fail "main.hotA frames lack $WL_SRC/wl-go.go:$((first + 1))..$((first + 6))"
	# the designed chains, hotA about twice hotB
	f=$D/stripped.folded
	assert_share "$f" '^wl-go;runtime\.goexit;runtime\.main;main\.main;main\.run;main\.work;main\.hot[AB]$' 20
	assert_share "$f" '^wl-go;runtime\.goexit;main\.run\.func1;main\.spinner;main\.work;main\.hot[AB]$' 20
	a=$(fold_count "$f" ';main\.work;main\.hotA$')
	b=$(fold_count "$f" ';main\.work;main\.hotB$')
	((b > 0 && a * 10 >= b * 14 && a * 10 <= b * 28)) ||
		fail "main.hotA has $a samples, main.hotB $b: want about 2:1"
	assert_share "$f" ';main\.run;main\.churn(;|$)' 2
}

# only_in ME OTHER: print the stacks of 3% or more of the folded file ME
# that the folded file OTHER lacks; fail when there is one.
only_in() {
	awk -v other="$2" -v me="$1" '
		BEGIN {
			while ((getline l < other) > 0) {
				n = split(l, w, " ")
				seen[substr(l, 1, length(l) - length(w[n]) - 1)] = 1
			}
		}
		{ s = substr($0, 1, length($0) - length($NF) - 1); c[s] = $NF; all += $NF }
		END {
			for (s in c)
				if (c[s] * 100 >= all * 3 && !(s in seen)) {
					print "# only in " me ": " s " " c[s]
					bad++
				}
			exit bad > 0
		}' "$1"
}

@test "go: stripped and unstripped builds fold into the same stacks" {
	local a=$D/plain.folded b=$D/stripped.folded
	# every stack of 3% or more in one is in the other
	only_in "$a" "$b" ||
		fail "a stack of the plain build is missing from the stripped one"
	only_in "$b" "$a" ||
		fail "a stack of the stripped build is missing from the plain one"
	# and the designed shares agree within 10 points
	for re in ';main\.work;main\.hotA$' ';main\.work;main\.hotB$' ';main\.churn(;|$)'; do
		sa=$(fold_share "$a" "$re") sb=$(fold_share "$b" "$re")
		((sa - sb <= 10 && sb - sa <= 10)) ||
			fail "share of /$re/: $sa% plain, $sb% stripped"
	done
}

@test "go: stacks are complete only at Go's outermost frames" {
	local name
	for name in stripped plain; do
		unwind_counts "$name"
		stack_ends "$name" >"$T/$name.ends"
		# complete (end 0) only with a TOPFRAME function outermost
		awk -v top="$GO_TOP" '
			$3 == 0 && $6 !~ top { bad += $5; if (bad < 5) print "# " $0 }
			$3 == 0 { c += $5 }
			END { printf "# %d samples complete\n", c; exit bad > 0 }' \
			"$T/$name.ends" || fail "$name: complete stacks that do not end at a TOPFRAME function"
		# most of the program's time ends at runtime.goexit: its goroutines
		goexit=$(awk '$3 == 0 && $6 == "runtime.goexit" { n += $5 } END { print n + 0 }' "$T/$name.ends")
		((goexit * 100 >= SAMPLES * 50)) ||
			fail "$name: only $goexit of $SAMPLES samples end at runtime.goexit"
		((COMPLETE + TRUNCATED <= SAMPLES && COMPLETE * 100 >= SAMPLES * 50)) ||
			fail "$name: $(tail -1 "$D/$name.unwind.err")"
	done
}

@test "go: what sp-unwind takes from a thread's last stack changes nothing" {
	# every Go frame restarts libunwind above it (pclntab steps)
	same_without_memo "$D/plain.raw"
	same_without_memo "$D/stripped.raw"
	cmp "$D/plain.raw.unw" "$D/plain.unw" ||
		fail "sp-unwind of the kept raw stream differs from the pipeline's"
}

@test "go: samples under the GC end at a Go stack switch, counted truncated" {
	local name
	for name in stripped plain; do
		unwind_counts "$name"
		stack_ends "$name" >"$T/$name.ends"
		# SP_STACK_GO_SWITCH: truncated (1), at a switch
		awk -v sw="$GO_SWITCH" '
			$4 && ($3 != 1 || $6 !~ sw) { bad++; if (bad < 5) print "# " $0 }
			!$4 && $6 ~ sw { bad++; if (bad < 5) print "# not flagged: " $0 }
			$4 { n += $5 }
			END { print n + 0; exit bad > 0 }' "$T/$name.ends" >"$T/$name.switch" ||
			fail "$name: stacks flagged as ending at a Go stack switch that do not: $(cat "$T/$name.switch")"
		switched=$(tail -1 "$T/$name.switch")
		((switched * 100 >= SAMPLES * 2 && switched <= TRUNCATED)) ||
			fail "$name: $switched of $SAMPLES samples end at a Go stack switch ($TRUNCATED truncated)"
	done
	# the GC's work on the g0 stack is among them
	awk -F'\t' '
		$1 == "stack" { k = $2 " " $3; gc[k] = 0 }
		$1 == "frame" && $9 ~ /^runtime\.gcDrain/ { gc[k] = 1 }
		$1 == "sample" && gc[$3 " " $7] { n++ }
		END { exit !(n >= 20) }' "$D/stripped.sym" ||
		fail "fewer than 20 samples in runtime.gcDrain"
	stack_ends stripped | awk '$6 == "runtime.systemstack" && $3 == 1 { n += $5 } END { exit !(n >= 20) }' ||
		fail "fewer than 20 samples end at runtime.systemstack"
	# which the folded stacks show as their cut
	assert_share "$D/stripped.folded" '^wl-go;\[go stack switch\];runtime\.systemstack;' 2
}

@test "go: names and lines agree with go tool addr2line" {
	local bin=$GODIR/stripped/wl-go
	# distinct user frames of the binary, each with the address Go looks
	# up: the leaf's pc, a caller's return address - 1
	awk -F'\t' -v bin="$bin" '
		$1 == "stack" { leaf = 1 }
		$1 == "frame" && $5 != "kernel" {
			if ($10 == bin && !seen[$8 " " leaf]++)
				print $8 "\t" leaf "\t" $9 "\t" $11 ":" $12
			leaf = 0
		}' "$D/stripped.sym" |
		while IFS=$'\t' read -r addr leaf fn pos; do
			printf '0x%x\t%s\t%s\n' $((addr - !leaf)) "$fn" "$pos"
		done >"$T/ours"
	n=$(wc -l <"$T/ours")
	((n >= 30)) || fail "only $n distinct frames to compare"
	cut -f1 "$T/ours" |
		HOME=$T GOCACHE=$T/gocache "$GO" tool addr2line "$bin" >"$T/go" ||
		fail "go tool addr2line failed"
	paste - - <"$T/go" | paste <(cut -f2,3 "$T/ours") - |
		awk -F'\t' '
			{ n++ }
			# a pc no line covers: ours "-:-", go "?:0"
			$2 == "-:-" && $4 == "?:0" { next }
			$1 != $3 || $2 != $4 { bad++; if (bad < 5) print "# ours: " $1 " " $2 ", go: " $3 " " $4 }
			END { printf "# %d frames compared\n", n; exit bad > 0 }' ||
		fail "names or lines differ from go tool addr2line"
}

@test "go: without DWARF (-ldflags=-w) lines come from the pclntab" {
	local bin=$GODIR/nodwarf/wl-go
	readelf -S "$bin" | grep -q '\.debug_info' && fail "the -w build has DWARF"
	first=$(grep -n '^func hotA' "$WL_SRC/wl-go.go" | cut -d: -f1)
	# named by the symbol table, placed by the pclntab
	awk -F'\t' -v src="$WL_SRC/wl-go.go" -v lo="$first" '
		$1 == "frame" && $9 == "main.hotA" {
			n++
			if ($6 != "symtab" || $11 != src || $12 <= lo || $12 > lo + 6) {
				bad++; if (bad < 5) print "# " $0
			}
		}
		END { exit !(n >= 1 && !bad) }' "$D/nodwarf.sym" ||
		fail "main.hotA frames of the -w build lack their line"
	# assembly functions under Go's own names, the symbol as the file has it
	grep -qP '^frame\t[^\t]*\t[^\t]*\t[^\t]*\tnative\tsymtab\t[^\t]*\t[^\t]*\truntime\.goexit\t[^\t]*\t[^\t]*\t[0-9]+\truntime\.goexit\.abi0\t' "$D/nodwarf.sym" ||
		fail "no runtime.goexit frame with its symbol runtime.goexit.abi0"
	# the same stacks as the plain build
	assert_share "$D/nodwarf.folded" '^wl-go;runtime\.goexit;runtime\.main;main\.main;main\.run;main\.work;main\.hot[AB]$' 20
}
