/* SPDX-License-Identifier: MIT */
/*
 * report.h: what sp-unwind tells on standard error once the input is done,
 * shared with sp-fold, which unwinds in-process when given a raw stream.
 */
#ifndef SP_UNWIND_REPORT_H
#define SP_UNWIND_REPORT_H

#include "unwind/unwstream.h"

/* The counts of samples and stacks, and how the stacks ended: one line. */
void unwind_report(const struct sp_unwstream *u);

/* A warning for each file stacks ended at for want of its build-id. */
void unwind_report_missing(struct sp_unwstream *u);

#endif
