/* SPDX-License-Identifier: MIT */
/* perf.c: perf_event_open(2), event names and ring-buffer reading. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf.h"

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
};

int sp_perf_event_lookup(const char *name, uint32_t *type, uint64_t *config)
{
	size_t i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		if (!strcmp(name, events[i].name)) {
			*type = events[i].type;
			*config = events[i].config;
			return 0;
		}
	}
	return -EINVAL;
}

const char *sp_perf_event_names(void)
{
	return "cpu-clock, task-clock, cycles or instructions";
}

int sp_perf_open(struct perf_event_attr *attr, pid_t tid, int cpu)
{
	long fd = syscall(SYS_perf_event_open, attr, tid, cpu, -1,
			  PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

int sp_perf_open_cgroup(struct perf_event_attr *attr, int cgroup_fd, int cpu)
{
	long fd = syscall(SYS_perf_event_open, attr, cgroup_fd, cpu, -1,
			  PERF_FLAG_FD_CLOEXEC | PERF_FLAG_PID_CGROUP);

	return fd < 0 ? -errno : (int)fd;
}

static int perf_ioctl(int fd, unsigned long req, unsigned long arg)
{
	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

int sp_perf_set_output(int fd, int target)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, (unsigned long)target);
}

int sp_perf_disable(int fd)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

int sp_perf_enable(int fd)
{
	return perf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

int sp_perf_parse_cpus(const char *list, int *cpus, int max)
{
	const char *p = list;
	int n = 0;

	while (*p && *p != '\n') {
		char *end;
		long lo, hi;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		lo = strtol(p, &end, 10);
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			hi = strtol(p, &end, 10);
			p = end;
		}
		if (hi < lo || hi > 1 << 20)
			return -EINVAL;
		for (; lo <= hi; lo++) {
			if (n == max)
				return -E2BIG;
			cpus[n++] = (int)lo;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return n ? n : -EINVAL;
}

int sp_perf_online_cpus(int *cpus, int max)
{
	char buf[4096];
	ssize_t n;
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = 0;
	return sp_perf_parse_cpus(buf, cpus, max);
}

#define SCRATCH_SIZE 65536	/* perf_event_header.size is a u16 */

struct sp_ring {
	int fd;
	struct perf_event_mmap_page *meta;
	size_t map_len;
	uint8_t *data;
	uint64_t size, mask;
	uint64_t head, tail;	/* snapshot, and how far we have read */
	uint64_t damaged;
	uint8_t *scratch;
};

struct sp_ring *sp_ring_new(int fd, unsigned pages)
{
	long page = sysconf(_SC_PAGESIZE);
	struct sp_ring *r;
	void *p;

	if (!pages || (pages & (pages - 1))) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->scratch = malloc(SCRATCH_SIZE);
	if (!r->scratch)
		goto err;
	r->map_len = (size_t)(pages + 1) * (size_t)page;
	p = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto err;
	r->fd = fd;
	r->meta = p;
	r->data = (uint8_t *)p + page;
	r->size = (uint64_t)pages * (uint64_t)page;
	r->mask = r->size - 1;
	r->tail = r->head = __atomic_load_n(&r->meta->data_tail,
					    __ATOMIC_ACQUIRE);
	return r;
err:
	{
		int e = errno;

		free(r->scratch);
		free(r);
		errno = e;
	}
	return NULL;
}

void sp_ring_free(struct sp_ring *r)
{
	if (!r)
		return;
	munmap(r->meta, r->map_len);
	free(r->scratch);
	free(r);
}

int sp_ring_fd(const struct sp_ring *r)
{
	return r->fd;
}

size_t sp_ring_size(const struct sp_ring *r)
{
	return (size_t)r->size;
}

uint64_t sp_ring_damaged(const struct sp_ring *r)
{
	return r->damaged;
}

size_t sp_ring_begin(struct sp_ring *r)
{
	/* pairs with the kernel's store of data_head after writing records */
	r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	return (size_t)(r->head - r->tail);
}

const struct perf_event_header *sp_ring_next(struct sp_ring *r)
{
	struct perf_event_header h;
	uint64_t avail = r->head - r->tail;
	uint64_t off = r->tail & r->mask;
	uint64_t first;

	if (avail < sizeof(h))
		return NULL;
	/* records are 8-byte aligned, so a header never straddles the end */
	memcpy(&h, r->data + off, sizeof(h));
	if (h.size < sizeof(h) || h.size % 8 || h.size > avail) {
		r->damaged++;
		r->tail = r->head;
		return NULL;
	}
	r->tail += h.size;
	if (off + h.size <= r->size)
		return (const struct perf_event_header *)(r->data + off);
	first = r->size - off;
	memcpy(r->scratch, r->data + off, first);
	memcpy(r->scratch + first, r->data, h.size - first);
	return (const struct perf_event_header *)r->scratch;
}

void sp_ring_end(struct sp_ring *r)
{
	/* our reads of the records must happen before the kernel reuses them */
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}
