/* SPDX-License-Identifier: MIT */
/* missing.c: stacks end at the mappings of files that are not at hand. */
#include "missing.h"

/* The mapping of frame i: a return address belongs to the call before it. */
static const struct sp_map *frame_map(const struct sp_proc *proc,
				      const struct sp_frames *out, unsigned i)
{
	uint64_t ip = out->ips[i];

	if (!(out->flags[i] & SP_FRAME_PRECISE) && ip)
		ip--;
	return sp_proc_map(proc, ip);
}

int sp_unwind_stop_missing(const struct sp_proc *proc, struct sp_frames *out)
{
	if (!out->nr_user ||
	    !sp_map_no_buildid(frame_map(proc, out, out->nr_user - 1)))
		return 0;
	out->end = SP_END_NOINFO;
	out->stack_flags |= SP_STACK_NO_BUILDID;
	return 1;
}

long sp_unwind_missing_file(const struct sp_procs *procs, uint32_t pid,
			    const struct sp_frames *out)
{
	const struct sp_proc *proc = sp_procs_find(procs, pid);
	const struct sp_map *m;

	if (!proc || !out->nr_user)
		return -1;
	m = frame_map(proc, out, out->nr_user - 1);
	return sp_map_no_buildid(m) ? (long)m->missing - 1 : -1;
}
