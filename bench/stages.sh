# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# bench/stages.sh: watching the stages of a long pipeline, for soak.sh and
# host.sh (sourced).  A CSV holds a row per reading: seconds, the last pid
# handed out, then for each stage its resident set and the anonymous part
# of it (KiB) and its CPU time (clock ticks).

# stage_watch PID: "resident,anonymous,cpu" of PID, or ",," when it is gone.
stage_watch() {
	local st
	st=$(cut -d' ' -f14,15 "/proc/$1/stat" 2>/dev/null) || { echo ,,; return; }
	awk -v t="${st% *}" -v s="${st#* }" '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 }
		END { print r "," a "," t + s }' "/proc/$1/status" 2>/dev/null || echo ,,
}

# stage_header NAME...: the CSV's first line.
stage_header() {
	local st
	printf seconds,last_pid
	for st in "$@"; do
		printf ',%s_rss_kib,%s_anon_kib,%s_cpu_ticks' "$st" "$st" "$st"
	done
	echo
}

# stage_row SECONDS PID...: a reading of the stages.
stage_row() {
	local row p
	row="$1,$(cat /proc/sys/kernel/ns_last_pid)"
	shift
	for p in "$@"; do
		row="$row,$(stage_watch "$p")"
	done
	echo "$row"
}

# stage_flat CSV SLACK NAME...: a line "ok|NAME|A|B" or "failed|..." per
# stage: the largest anonymous resident set of the second half of the
# readings (B) within SLACK KiB of the first half's (A).
stage_flat() {
	local csv=$1 slack=$2 IFS=,
	shift 2
	awk -F, -v slack="$slack" -v names="$*" 'NR > 1 && $3 != "" { t[++n] = $0 }
		END {
			k = split(names, name, ",")
			for (s = 1; s <= k; s++) {
				c = 3 * s + 1
				a = b = 0
				for (i = 1; i <= n; i++) {
					split(t[i], f, ",")
					if (i <= n / 2) { if (f[c] > a) a = f[c] }
					else if (f[c] > b) b = f[c]
				}
				printf "%s|%s|%d|%d\n", (n > 1 && b <= a + slack ? "ok" : "failed"), name[s], a, b
			}
		}' "$csv"
}

# stage_table CSV NAME...: a markdown table of each stage's CPU per second
# of the run and its memory at the first, middle and last readings and at
# its largest.
stage_table() {
	local csv=$1 IFS=,
	shift
	awk -F, -v tick="$(getconf CLK_TCK)" -v names="$*" 'NR > 1 && $3 != "" { t[++n] = $0 }
		END {
			k = split(names, name, ",")
			print "| stage | CPU per second | first | middle | last | largest |"
			print "|---|---:|---:|---:|---:|---:|"
			split(t[1], f1, ","); split(t[int((n + 1) / 2)], fm, ",")
			split(t[n], fl, ",")
			for (s = 1; s <= k; s++) {
				c = 3 * s
				m = ma = 0
				for (i = 1; i <= n; i++) {
					split(t[i], f, ",")
					if (f[c] > m) m = f[c]
					if (f[c + 1] > ma) ma = f[c + 1]
				}
				printf "| %s | %.2f%% | %d (%d) | %d (%d) | %d (%d) | %d (%d) |\n",
					name[s], 100 * fl[c + 2] / tick / fl[1],
					f1[c], f1[c + 1], fm[c], fm[c + 1], fl[c], fl[c + 1], m, ma
			}
		}' "$csv"
}

# stage_curve CSV INTERVAL NAME...: the memory of every stage a minute
# apart (and at the last reading), as a block of text.
stage_curve() {
	local csv=$1 interval=$2 st
	shift 2
	echo '```'
	printf '%8s' time
	for st in "$@"; do
		printf '  %-16s' "$st"
	done
	echo
	awk -F, -v every=$((60 / interval)) -v k=$# '
		function row(line, f, s, c) {
			split(line, f, ",")
			printf "%6d s", f[1]
			for (s = 1; s <= k; s++) {
				c = 3 * s
				printf "  %-16s", sprintf("%d (%d)", f[c], f[c + 1])
			}
			printf "\n"
		}
		NR > 1 && $3 != "" {
			last = $0
			if (++n % every == 0 || n == 1) { row($0); shown = n }
		}
		END { if (n && shown != n) row(last) }' "$csv"
	echo '```'
}
