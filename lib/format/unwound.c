/* SPDX-License-Identifier: MIT */
/* unwound.c: checks of the unwound stream's stack records. */
#include <string.h>

#include "unwound.h"

const char *sp_unw_stack_parse(const struct sp_rec_hdr *rec,
			       struct sp_unw_stack_view *out)
{
	const struct sp_unw_stack *s = (const void *)rec;
	uint64_t need;

	if (rec->size < sizeof(*s))
		return "STACK record too short";
	need = sizeof(*s) + 8ull * (s->nr_kernel + s->nr_user + s->nr_py) +
	       sp_align8(s->nr_user);
	if (need > rec->size)
		return "STACK frames exceed its record size";
	if (s->end >= SP_END_MAX)
		return "STACK end reason unknown";
	if (s->id == 0)
		return "STACK id 0 is reserved";
	out->s = s;
	out->kernel_ips = (const uint64_t *)(s + 1);
	out->user_ips = out->kernel_ips + s->nr_kernel;
	out->uflags = (const uint8_t *)(out->user_ips + s->nr_user);
	out->py = (const uint64_t *)(out->uflags + sp_align8(s->nr_user));
	return NULL;
}

const char *sp_unw_end_name(unsigned end)
{
	static const char *const names[SP_END_MAX] = {
		"complete", "truncated", "noinfo", "error", "depth", "noregs",
	};

	return end < SP_END_MAX ? names[end] : "unknown";
}

const char *sp_unw_flags_text(unsigned flags, char *buf)
{
	static const char *const names[] = {
		"spliced", "go-switch", "no-build-id", "py-truncated",
		"py-fault",
	};
	unsigned i;

	buf[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(flags & 1u << i))
			continue;
		if (buf[0])
			strcat(buf, ",");
		strcat(buf, names[i]);
	}
	return buf[0] ? buf : NULL;
}

const char *sp_unw_end_frame(unsigned end, unsigned flags)
{
	switch (end) {
	case SP_END_TRUNCATED:
		return flags & SP_STACK_GO_SWITCH ? "[go stack switch]" :
		       "[truncated]";
	case SP_END_NOINFO:
		return "[no unwind info]";
	case SP_END_ERROR:
		return "[unwind error]";
	case SP_END_DEPTH:
		return "[truncated]";
	default:
		return NULL;
	}
}
