// SPDX-License-Identifier: MIT
/*
 * fuzz-procs.c: the address spaces of elf/procs.h as sp-unwind and
 * sp-symbolize replay them from a stream's records.  Plain bytes would not
 * get past a stream's framing, so the input is read as a small grammar of
 * records, each checked by sp_rec_check_common() as the readers do and
 * then applied in the order given:
 *
 *	op	(op % 5) COMM, MMAP, FORK, EXIT, IMAGE; (op / 5 % 8) how
 *		far the stream's clock moves before it, from 0 to 1000 s
 *	pid	a small range, so that records meet the same processes
 *	...	per op: flags, addresses and lengths of a few pages (or near
 *		the top of the address space), a file from a fixed list
 *		(anonymous memory, [vdso], a missing file, this program),
 *		a build-id (none, this program's, or bytes of the input),
 *		image bytes (this process's [vDSO] or bytes of the input)
 *
 * No path comes from the input: the files opened are this program and
 * paths that do not exist.  After each record every process's mappings
 * must be sorted, disjoint and non-empty, and lookups at their ends must
 * agree with them.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include <fcntl.h>

#include "elf/buildid.h"
#include "elf/procs.h"
#include "fuzz.h"

#define NPIDS 6
#define PAGE 0x1000ull

struct input {
	const uint8_t *p;
	size_t n;
	uint64_t time;		/* of the next record, ns */
};

static uint8_t byte(struct input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint64_t u64(struct input *in)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v |= (uint64_t)byte(in) << (8 * i);
	return v;
}

/* This program and its build-id: a real ELF file to map. */
static char exe[4096];
static uint8_t exe_bid[SP_BUILD_ID_MAX];
static size_t exe_bid_len;

static void find_exe(void)
{
	ssize_t n;
	int fd, r;

	if (exe[0])
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		abort();
	exe[n] = 0;
	fd = open(exe, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		abort();
	r = sp_build_id_fd(fd, exe_bid);
	exe_bid_len = r > 0 ? (size_t)r : 0;
	close(fd);
}

static const char *file_of(uint8_t b)
{
	static const char *const names[] = {
		"", "//anon", "[vdso]", "[stack]", "/memfd:jit (deleted)",
		"[anon:v8]", "/nonexistent/lib.so", "/nonexistent/jit-7.dump",
		"/nonexistent/gone (deleted)", NULL,
	};
	size_t n = sizeof(names) / sizeof(names[0]);

	return names[b % n] ? names[b % n] : exe;
}

/* An address: a few pages apart, so that mappings overlap; or the top. */
static uint64_t addr_of(struct input *in)
{
	uint8_t b = byte(in);

	if (b >= 0xf8)
		return UINT64_MAX - (uint64_t)(0xff - b) * PAGE;
	if (b >= 0xf0)
		return u64(in);
	return 0x400000 + (uint64_t)(b % 32) * PAGE;
}

static uint64_t len_of(struct input *in)
{
	uint8_t b = byte(in);

	if (b >= 0xf0)
		return u64(in);
	return (uint64_t)(b % 8) * PAGE;
}

static int apply(struct sp_procs *p, const struct sp_rec_hdr *h)
{
	if (sp_rec_check_common(h))
		return 0;
	return sp_procs_apply(p, h);
}

static int comm(struct sp_procs *p, struct input *in, uint32_t pid)
{
	struct sp_comm_rec c = { { SP_REC_COMM, sizeof(c) } };
	uint8_t f = byte(in);
	size_t i;

	c.time = in->time;
	c.pid = pid;
	c.tid = f & 0x80 ? pid + 1 : pid;
	c.flags = f & (SP_REC_SYNTH | SP_COMM_EXEC);
	if (f & 0x40) {
		/* unterminated names are refused by the check */
		for (i = 0; i < sizeof(c.comm); i++)
			c.comm[i] = (char)byte(in);
	} else {
		memcpy(c.comm, "proc", 4);
	}
	return apply(p, &c.hdr);
}

static int mmap_rec(struct sp_procs *p, struct input *in, uint32_t pid)
{
	union {
		struct sp_mmap_rec m;
		uint8_t b[sizeof(struct sp_mmap_rec) + 4096 + 8];
	} u;
	uint8_t f = byte(in), bid = byte(in);
	const char *name = file_of(byte(in));
	size_t i;

	memset(&u, 0, sizeof(u));
	u.m.hdr.type = SP_REC_MMAP;
	u.m.hdr.size = sp_align8(sizeof(u.m) + strlen(name) + 1);
	u.m.time = in->time;
	u.m.pid = pid;
	u.m.tid = pid;
	u.m.start = addr_of(in);
	u.m.len = len_of(in);
	u.m.pgoff = (uint64_t)(f >> 4) * PAGE;
	u.m.prot = PROT_READ | (f & 1 ? 0 : PROT_EXEC) | (f & 2 ? PROT_WRITE : 0);
	u.m.flags = f & 4 ? SP_REC_SYNTH : 0;
	switch (bid % 4) {
	case 0:
		break;
	case 1:
		u.m.build_id_size = (uint8_t)exe_bid_len;
		memcpy(u.m.build_id, exe_bid, exe_bid_len);
		break;
	default:
		u.m.build_id_size = bid / 4 % 26;	/* 25: bad */
		for (i = 0; i < sizeof(u.m.build_id); i++)
			u.m.build_id[i] = byte(in);
	}
	strcpy(u.m.filename, name);
	return apply(p, &u.m.hdr);
}

static int task(struct sp_procs *p, struct input *in, uint32_t pid,
		uint32_t type)
{
	struct sp_task_rec t = { { type, sizeof(t) } };
	uint8_t f = byte(in);

	t.time = in->time;
	t.pid = pid;
	t.ppid = 1 + (f & 0x7f) % NPIDS;
	t.tid = f & 0x80 ? pid + 100 : pid;
	t.ptid = t.ppid;
	t.flags = f & 0x80 ? SP_REC_SYNTH : 0;
	return apply(p, &t.hdr);
}

static int image(struct sp_procs *p, struct input *in, uint32_t pid)
{
	const uint8_t *vdso = (const uint8_t *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
	uint8_t f = byte(in);
	const uint8_t *data;
	struct sp_image_rec *r;
	size_t len;
	int e;

	if (f & 1 && vdso) {
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *)vdso;

		data = vdso;
		len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	} else {
		/* the rest of the input, or as much of it as the next byte says */
		len = f & 2 ? in->n : byte(in) * 16u;
		data = in->p;
		if (len > in->n)
			len = in->n;
		in->p += len;
		in->n -= len;
	}
	r = calloc(1, sizeof(*r) + sp_align8(len));
	if (!r)
		abort();
	r->hdr.type = SP_REC_IMAGE;
	r->hdr.size = (uint32_t)(sizeof(*r) + sp_align8(len));
	r->time = in->time;
	r->pid = pid;
	r->start = f & 4 ? 0x7ffff7fc0000ull : addr_of(in);
	r->len = len;
	memcpy(r->data, data, len);
	e = apply(p, &r->hdr);
	free(r);
	return e;
}

static void check_maps(const struct sp_proc *proc)
{
	const struct sp_map *m, *at;
	size_t n, i;

	m = sp_proc_maps(proc, &n);
	for (i = 0; i < n; i++) {
		if (m[i].start >= m[i].end || (i && m[i - 1].end > m[i].start) ||
		    !m[i].name)
			abort();
		(void)strlen(m[i].name);
		if (sp_proc_map(proc, m[i].start) != &m[i] ||
		    sp_proc_map(proc, m[i].end - 1) != &m[i])
			abort();
		at = sp_proc_map(proc, m[i].end);
		if (at && at != &m[i + 1])
			abort();
		at = sp_proc_module(proc, m[i].start);
		if (at && (m[i].start < at->start || m[i].start >= at->end ||
			   !at->name))
			abort();
	}
	m = sp_proc_modules(proc, &n);
	for (i = 0; i < n; i++) {
		if (m[i].start >= m[i].end || (i && m[i - 1].end > m[i].start) ||
		    !m[i].name || !m[i].elf)
			abort();
		if (sp_proc_module(proc, m[i].start) != &m[i] ||
		    sp_proc_module(proc, m[i].end - 1) != &m[i])
			abort();
	}
	(void)strlen(sp_proc_comm(proc));
	if (sp_proc_jitdump(proc))
		(void)strlen(sp_proc_jitdump(proc));
}

static void check(const struct sp_procs *p)
{
	const struct sp_missing_file *mf;
	struct sp_proc *proc;
	size_t n, i;
	uint32_t pid;

	for (pid = 1; pid <= NPIDS + 1; pid++)
		if ((proc = sp_procs_find(p, pid)))
			check_maps(proc);
	mf = sp_procs_missing(p, &n);
	for (i = 0; i < n; i++)
		if (!mf[i].path || mf[i].build_id_size > sizeof(mf[i].build_id))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_elf_cache *cache = sp_elf_cache_new();
	struct input in = { data, size };
	struct sp_procs *p;
	int records = 0;

	find_exe();
	if (!cache || !(p = sp_procs_new(cache)))
		abort();
	/* files at the paths of the list only, nowhere else */
	if (sp_locator_set_store(sp_procs_locator(p), NULL))
		abort();
	sp_locator_set_system_debug(sp_procs_locator(p), 0);

	while (in.n && records++ < 256) {
		static const uint64_t ticks[8] = {
			0, 1000, 1000000, 100000000, 1000000000ull,
			5000000000ull, 60000000000ull, 1000000000000ull,
		};
		uint8_t op = byte(&in);
		uint32_t pid = 1 + byte(&in) % NPIDS;
		int e;

		in.time += ticks[op / 5 % 8];

		switch (op % 5) {
		case 0:
			e = comm(p, &in, pid);
			break;
		case 1:
			e = mmap_rec(p, &in, pid);
			break;
		case 2:
			e = task(p, &in, pid, SP_REC_FORK);
			break;
		case 3:
			e = task(p, &in, pid, SP_REC_EXIT);
			break;
		default:
			e = image(p, &in, pid);
		}
		if (e)
			abort();	/* only -ENOMEM is an error */
		check(p);
	}
	sp_procs_free(p);
	sp_elf_cache_free(cache);
	return 0;
}
