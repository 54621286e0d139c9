/* SPDX-License-Identifier: MIT */
/*
 * missing.h: where unwinding stops for want of the file a recording mapped.
 *
 * A mapping whose recorded build-id no file at hand has (elf/procs.h:
 * replaced or deleted since, with no copy in the build-id cache) gives no
 * code and no CFI: stepping out of it by frame pointer or by the CFI of
 * another build would make up callers.  The stack ends at its first frame
 * there, as NOINFO with SP_STACK_NO_BUILDID, and the file is counted.
 */
#ifndef SP_UNWIND_MISSING_H
#define SP_UNWIND_MISSING_H

#include "elf/procs.h"
#include "unwind.h"

/*
 * When the last frame of out (its leaf, or a return address) lies in such a
 * mapping of proc, end out there and return 1; else return 0.
 */
int sp_unwind_stop_missing(const struct sp_proc *proc, struct sp_frames *out);

/*
 * The file a stack of pid with SP_STACK_NO_BUILDID ended in: its index in
 * sp_procs_missing(), or -1 when out ends elsewhere.
 */
long sp_unwind_missing_file(const struct sp_procs *procs, uint32_t pid,
			    const struct sp_frames *out);

#endif
