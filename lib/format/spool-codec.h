/* SPDX-License-Identifier: MIT */
/*
 * spool-codec.h: what the spool writer and reader share inside format/:
 * checksums, the checks of the unwound stream's records, and the
 * SP_SPOOL_ENC_DELTA encoding of a block's records (spool.h).
 */
#ifndef SP_SPOOL_CODEC_H
#define SP_SPOOL_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"
#include "spool.h"

#define SP_SPOOL_HDR_CRC_LEN offsetof(struct sp_spool_block, hdr_crc)
#define SP_SPOOL_FOOTER_CRC_LEN (sizeof(struct sp_spool_footer) - 12)

/* zlib's crc32 of n bytes. */
uint32_t sp_spool_crc(const void *p, size_t n);

/* The key of (pid, stack ID) in the tables of defined stacks. */
static inline uint64_t sp_spool_key(uint32_t pid, uint32_t id)
{
	return (uint64_t)pid << 32 | id;
}

/* Framing of one record with room bytes left: NULL when its size is sound. */
const char *sp_spool_rec_framing(const struct sp_rec_hdr *rec, size_t room);

/*
 * What a reader of the unwound stream checks before it looks inside a
 * record, given the stacks defined so far (keys of sp_spool_key()) and
 * whether the summary came: NULL when it is sound.
 */
const char *sp_spool_rec_check(const struct sp_u64map *stacks,
			       int after_summary, const struct sp_rec_hdr *rec);

/*
 * Encode the records of u (ulen bytes) into t, which holds 2 * ulen bytes:
 * samples as tagged varint deltas, every other record tagged as it is.
 * Returns the encoded length.
 */
size_t sp_spool_encode(const uint8_t *u, size_t ulen, uint8_t *t);

/*
 * Decode tsize bytes of t into exactly usize bytes of nrec records at u.
 * Returns NULL, or what is wrong with the encoded bytes.
 */
const char *sp_spool_decode(const uint8_t *t, size_t tsize, uint8_t *u,
			    size_t usize, uint32_t nrec);

#endif
