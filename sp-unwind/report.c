/* SPDX-License-Identifier: MIT */
/* report.c: sp-unwind's report on standard error (report.h). */
#include <stdio.h>

#include "cli/cli.h"
#include "elf/buildid.h"
#include "elf/locate.h"
#include "report.h"

void unwind_report(const struct sp_unwstream *u)
{
	const struct sp_unw_summary *sum = sp_unwstream_summary(u);
	const struct sp_unwstream_stats *st = sp_unwstream_stats(u);
	const uint64_t *e = sum->ends;

	fprintf(stderr, "sp-unwind: %llu samples, %llu stacks: %llu complete, %llu truncated, %llu noinfo, %llu error",
		(unsigned long long)sum->samples,
		(unsigned long long)sum->stacks,
		(unsigned long long)e[SP_END_COMPLETE],
		(unsigned long long)e[SP_END_TRUNCATED],
		(unsigned long long)e[SP_END_NOINFO],
		(unsigned long long)e[SP_END_ERROR]);
	if (e[SP_END_DEPTH] || e[SP_END_NOREGS])
		fprintf(stderr, ", %llu depth, %llu noregs",
			(unsigned long long)e[SP_END_DEPTH],
			(unsigned long long)e[SP_END_NOREGS]);
	fprintf(stderr, ", %llu spliced\n", (unsigned long long)st->spliced);
}

/* The files stacks ended at because no file had their recorded build-id. */
void unwind_report_missing(struct sp_unwstream *u)
{
	const struct sp_missing_file *m;
	char hex[2 * sizeof(m->build_id) + 1];
	const char *servers = sp_locator_debuginfod(sp_unwstream_locator(u),
						    NULL) ? ", nor on the debuginfod servers" : "";
	uint64_t samples;
	size_t n, i;

	m = sp_unwstream_missing(u, &n);
	for (i = 0; i < n; i++) {
		samples = sp_unwstream_missing_samples(u, i);
		if (!samples)
			continue;
		sp_build_id_hex(m[i].build_id, m[i].build_id_size, hex);
		sp_warn("no file with build-id %s for '%s' (replaced or deleted since the recording, and not in the build-id cache%s%s): %llu samples end there",
			hex, m[i].path, servers,
			m[i].debug_only ? "; its debug file has no code" : "",
			(unsigned long long)samples);
	}
}
