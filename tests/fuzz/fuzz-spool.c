// SPDX-License-Identifier: MIT
/*
 * fuzz-spool.c: a whole spool file (docs/spool.md) as sp-spool and the
 * public API read it: the header and its checksum, the trailer and its
 * index, every block's header, checksum, inflated size and records, read
 * to the end with every accessor of format/spool.h.  Most mutations stop
 * at a checksum; fuzz-spoolblock.c makes blocks with sound checksums from
 * the input, so that what lies behind them is reached too.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_read_spool(data, size);
	return 0;
}
