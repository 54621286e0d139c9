// SPDX-License-Identifier: MIT
/*
 * fuzz-raw.c: the raw stream (docs/streams.md) as sp-unwind reads it: the
 * header checks, every record's framing, and the unwinder over whatever
 * samples, mappings and stack copies get through.
 */
#include <stdlib.h>

#include "base/io.h"
#include "format/raw.h"
#include "unwind/unwstream.h"
#include "fuzz.h"

static int discard(void *arg, const struct sp_rec_hdr *rec)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_raw_header rh;
	const struct sp_rec_hdr *rec;
	struct sp_unwstream *u;
	struct sp_in *in;
	int r;

	in = sp_in_fdopen(fz_memfd(data, size), "fuzz");
	if (!in)
		abort();
	if (sp_in_header(in, SP_RAW_MAGIC, SP_RAW_VERSION, &rh,
			 SP_RAW_HEADER_MIN, sizeof(rh)) ||
	    sp_raw_header_check(&rh))
		goto out;
	u = sp_unwstream_new(&rh, discard, NULL);
	if (!u)
		abort();
	while ((r = sp_in_next(in, &rec)) > 0)
		if (sp_unwstream_feed(u, rec))
			break;
	if (r == 0)
		sp_unwstream_finish(u);
	sp_unwstream_free(u);
out:
	sp_in_close(in);
	return 0;
}
