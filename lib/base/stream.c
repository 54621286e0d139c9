/* SPDX-License-Identifier: MIT */
/* stream.c: which of stackpulse's streams a magic names. */
#include <string.h>

#include "stream.h"

static const struct {
	const char *magic;
	const char *kind;
} kinds[] = {
	{ SP_RAW_MAGIC, "raw" },
	{ SP_UNW_MAGIC, "unwound" },
	{ SP_SPOOL_MAGIC, "spool" },
	{ SP_SYMCACHE_MAGIC, "symbol cache" },
	{ SP_SYMTEXT_MAGIC, "symbolized" },	/* its first 8 bytes */
};

const char *sp_stream_kind(const char magic[SP_MAGIC_LEN])
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!memcmp(magic, kinds[i].magic, SP_MAGIC_LEN))
			return kinds[i].kind;
	return NULL;
}
