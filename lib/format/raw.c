/* SPDX-License-Identifier: MIT */
/* raw.c: checks of the raw stream's header and samples. */
#include "raw.h"

const char *sp_raw_header_check(const struct sp_raw_header *h)
{
	if (h->stack_size % 8 || h->stack_size > 65528)
		return "bad stack size in raw header";
	if (__builtin_popcountll(h->regs_mask) > 64)
		return "bad register mask in raw header";
	return NULL;
}

const char *sp_raw_sample_parse(const struct sp_raw_header *h,
				const struct sp_rec_hdr *rec,
				struct sp_raw_sample_view *out)
{
	const struct sp_raw_sample *s = (const void *)rec;
	uint64_t need;

	if (rec->size < sizeof(*s))
		return "SAMPLE record too short";
	if (s->nr_regs && s->nr_regs != __builtin_popcountll(h->regs_mask))
		return "SAMPLE register count does not match the header's mask";
	need = sizeof(*s) + 8ull * s->nr_regs + 8ull * s->nr_kernel +
	       sp_align8(s->stack_len);
	if (need > rec->size)
		return "SAMPLE parts exceed its record size";
	if (s->stack_len > h->stack_size)
		return "SAMPLE stack copy larger than requested";
	out->s = s;
	out->regs = (const uint64_t *)(s + 1);
	out->kernel_ips = out->regs + s->nr_regs;
	out->stack = (const uint8_t *)(out->kernel_ips + s->nr_kernel);
	out->tail = NULL;
	out->tail_len = 0;
	return NULL;
}

int sp_raw_reg_index(uint64_t regs_mask, unsigned reg)
{
	if (reg > 63 || !(regs_mask >> reg & 1))
		return -1;
	return __builtin_popcountll(regs_mask & ((1ull << reg) - 1));
}
