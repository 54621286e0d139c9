// SPDX-License-Identifier: MIT
/*
 * fuzz-unwound.c: the unwound stream (docs/streams.md, section 7) as
 * sp-symbolize reads it: the header checks, every record's framing, and the
 * symbolizer (symbolize/symstream.h) over whatever mappings, names, kernel
 * symbols, perf map text and stacks get through.  The symbolized text it
 * writes for a sound stream must read as sp-fold reads it.
 *
 * Unlike the other harnesses this one opens files: the symbolizer reads
 * the ELF files, jitdump files and /tmp/perf-PID.map files that the
 * stream names, as sp-symbolize does, since a stream naming files is its
 * real attack surface.  Files are opened only if regular (no FIFO can
 * hang it) and never written.  Two things are not as in the tool, to keep
 * it fast and the same from run to run: separate debug files under
 * /usr/lib/debug are not looked for (--no-system-debug), and kernel frames
 * that no KSYM record names are named from fz_kallsyms() instead of
 * /proc/kallsyms, whose 200000 lines would be read again for every input.
 * --no-lines, --no-inline, --no-demangle and naming start-up glue alone
 * (SP_SYM_GLUE_NAME_ONLY, as sp-fold does) come from the input's length.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/io.h"
#include "elf/buildid.h"
#include "symbolize/symstream.h"
#include "fuzz.h"

static int write_rec(void *arg, const struct sp_st_rec *rec)
{
	return sp_st_write(arg, rec);
}

/* What sp-symbolize reports at the end: the files missing and their counts. */
static void report_missing(const struct sp_symbolizer *sym)
{
	const struct sp_missing_file *m;
	char hex[2 * sizeof(m->build_id) + 1];
	uint64_t frames, samples;
	size_t n, i;

	m = sp_symbolizer_missing(sym, &n);
	for (i = 0; i < n; i++) {
		sp_build_id_hex(m[i].build_id, m[i].build_id_size, hex);
		sp_symbolizer_missing_counts(sym, i, &frames, &samples);
		if (strlen(hex) != 2u * m[i].build_id_size || !m[i].path)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_symbolize_stats st;
	struct sp_unw_header hdr;
	const struct sp_rec_hdr *h;
	struct sp_symbolizer *sym;
	struct sp_symstream *ss;
	struct sp_procs *procs;
	struct sp_out *out;
	struct sp_in *in;
	uint8_t *text;
	size_t len;
	int tfd;
	unsigned flags = SP_SYM_NO_SYSTEM_DEBUG;
	int r;

	in = sp_in_fdopen(fz_memfd(data, size), "fuzz");
	if (!in)
		abort();
	if (sp_in_header(in, SP_UNW_MAGIC, SP_UNW_VERSION, &hdr,
			 SP_UNW_HEADER_MIN, sizeof(hdr)))
		goto out;
	if (size & 1)
		flags |= SP_SYM_NO_LINES;
	if (size & 2)
		flags |= SP_SYM_NO_INLINES;
	if (size & 4)
		flags |= SP_SYM_NO_DEMANGLE;
	if (size & 8)
		flags |= SP_SYM_GLUE_NAME_ONLY;
	procs = sp_procs_new(fz_elf_cache());
	sym = procs ? sp_symbolizer_new(procs) : NULL;
	if (!sym || sp_symbolizer_set_kallsyms(sym, fz_kallsyms()))
		abort();
	sp_symbolizer_set_flags(sym, flags);
	out = fz_out_memfd(&tfd);
	ss = sp_symstream_new(sym, write_rec, out);
	if (!ss)
		abort();

	r = sp_st_write_magic(out);
	if (!r)
		r = sp_symstream_header(ss, &hdr);
	while (!r && (r = sp_in_next(in, &h)) > 0)
		r = sp_symstream_feed(ss, h);
	if (r == 0)
		r = sp_symstream_finish(ss);
	if (r == -EINVAL)
		r = sp_in_fail(in, sp_symstream_error(ss));
	if (r == -ENOMEM || (r && r != SP_IN_ERROR))
		abort();
	/* a refusal says what and where */
	if (r == SP_IN_ERROR && !strstr(sp_in_error(in), " at byte "))
		abort();
	sp_symbolizer_stats(sym, &st);
	report_missing(sym);
	if (sp_out_close(out))
		abort();
	if (r == 0) {
		text = fz_read_all(tfd, &len);
		fz_check_symtext(text, len);
		free(text);
	}
	close(tfd);
	sp_symstream_free(ss);
	sp_symbolizer_free(sym);
	sp_procs_free(procs);
out:
	sp_in_close(in);
	return 0;
}
