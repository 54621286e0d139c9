/* SPDX-License-Identifier: MIT */
/*
 * perf.h: perf_event_open(2) and its mmapped ring buffers.
 *
 * A ring buffer is one metadata page and 2^n data pages.  The kernel writes
 * records at data_head and never overwrites what lies past data_tail, so the
 * reader copies records out and then hands the bytes back by moving the tail.
 * A record may wrap past the end of the data area (its header never does):
 * sp_ring_next() then copies it into a scratch buffer, so the caller always
 * sees one contiguous record.
 */
#ifndef SP_PERF_H
#define SP_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

/*
 * Type and config of an event by name: "cpu-clock", "task-clock", "cycles",
 * "instructions".  Returns 0, or -EINVAL for an unknown name.
 */
int sp_perf_event_lookup(const char *name, uint32_t *type, uint64_t *config);

/* The names sp_perf_event_lookup() knows, for messages. */
const char *sp_perf_event_names(void);

/* perf_event_open(2), close-on-exec.  Returns a descriptor or -errno. */
int sp_perf_open(struct perf_event_attr *attr, pid_t tid, int cpu);

/*
 * The same for the tasks of one cgroup on one CPU: cgroup_fd is an open
 * directory of the cgroup v2 hierarchy (or of v1's perf_event one).
 */
int sp_perf_open_cgroup(struct perf_event_attr *attr, int cgroup_fd, int cpu);

/* Send the records of fd into the ring buffer of target.  0 or -errno. */
int sp_perf_set_output(int fd, int target);

/* Stop or start an event and its inherited children.  0 or -errno. */
int sp_perf_disable(int fd);
int sp_perf_enable(int fd);

/*
 * Parse a CPU list such as "0-3,8,10-11" (the format of
 * /sys/devices/system/cpu/online) into cpus[0..max).  Returns the number of
 * CPUs, or -EINVAL (bad list) or -E2BIG (more than max).
 */
int sp_perf_parse_cpus(const char *list, int *cpus, int max);

/* The online CPUs, as sp_perf_parse_cpus().  Returns the count or -errno. */
int sp_perf_online_cpus(int *cpus, int max);

struct sp_ring;

/*
 * Map the ring buffer of event fd with pages data pages (a power of 2)
 * writable, so the kernel honours data_tail.  Returns NULL with errno set
 * (EPERM or ENOMEM when locked memory is short).  The caller owns the
 * result and frees it with sp_ring_free(); fd stays the caller's.
 */
struct sp_ring *sp_ring_new(int fd, unsigned pages);

/* Unmap and free; NULL is a no-op. */
void sp_ring_free(struct sp_ring *r);

/* The event descriptor the ring belongs to. */
int sp_ring_fd(const struct sp_ring *r);

/* Bytes in the data area. */
size_t sp_ring_size(const struct sp_ring *r);

/*
 * Take a snapshot of data_head (with acquire semantics) and return how many
 * unread bytes lie before it.
 */
size_t sp_ring_begin(struct sp_ring *r);

/*
 * The next record before the snapshot, or NULL when all were read.  The
 * record stays valid until the next call or sp_ring_end().  A record whose
 * size is impossible makes the rest of the snapshot unreadable: it is
 * dropped and counted by sp_ring_damaged().
 */
const struct perf_event_header *sp_ring_next(struct sp_ring *r);

/* Hand the bytes read since sp_ring_begin() back (release semantics). */
void sp_ring_end(struct sp_ring *r);

/* Number of times unreadable data was dropped. */
uint64_t sp_ring_damaged(const struct sp_ring *r);

#endif
