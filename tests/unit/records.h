/* SPDX-License-Identifier: MIT */
/*
 * records.h: the raw stream's task and comm records (format/records.h) as
 * the kernel's events make them, for the tests that replay a stream.
 */
#ifndef SP_UNIT_RECORDS_H
#define SP_UNIT_RECORDS_H

#include <stdint.h>
#include <string.h>

#include "format/records.h"

/* A FORK or EXIT of thread tid of pid, whose parent is ppid. */
static inline struct sp_task_rec unit_task_rec(int type, uint64_t time,
					       uint32_t pid, uint32_t ppid,
					       uint32_t tid, uint32_t flags)
{
	struct sp_task_rec t = { { (uint32_t)type, sizeof(t) } };

	t.time = time;
	t.pid = pid;
	t.ppid = ppid;
	t.tid = tid;
	t.ptid = ppid;
	t.flags = flags;
	return t;
}

/* The COMM of thread tid of pid: its name, flags SP_COMM_EXEC or 0. */
static inline struct sp_comm_rec unit_comm_rec(uint64_t time, uint32_t pid,
					       uint32_t tid, uint32_t flags,
					       const char *name)
{
	struct sp_comm_rec c = { { SP_REC_COMM, sizeof(c) } };

	c.time = time;
	c.pid = pid;
	c.tid = tid;
	c.flags = flags;
	strncpy(c.comm, name, sizeof(c.comm) - 1);
	return c;
}

#endif
