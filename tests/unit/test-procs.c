/* SPDX-License-Identifier: MIT */
/* test-procs: address spaces replayed from records. */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/procs.h"
#include "unit.h"

static char exe[4096];

static void mmap_rec(struct sp_procs *p, uint32_t pid, uint64_t start,
		     uint64_t len, uint64_t pgoff, const char *name)
{
	union {
		struct sp_mmap_rec m;
		uint8_t b[8192];
	} u;

	memset(&u, 0, sizeof(u));
	u.m.hdr.type = SP_REC_MMAP;
	u.m.hdr.size = sp_align8(sizeof(u.m) + strlen(name) + 1);
	u.m.pid = u.m.tid = pid;
	u.m.start = start;
	u.m.len = len;
	u.m.pgoff = pgoff;
	u.m.prot = PROT_READ | PROT_EXEC;
	strcpy(u.m.filename, name);
	CHECK(sp_rec_check_common(&u.m.hdr) == NULL);
	CHECK(sp_procs_apply(p, &u.m.hdr) == 0);
}

static void comm_rec(struct sp_procs *p, uint32_t pid, const char *name,
		     uint32_t flags)
{
	struct sp_comm_rec c = { { SP_REC_COMM, sizeof(c) } };

	c.pid = c.tid = pid;
	c.flags = flags;
	strncpy(c.comm, name, sizeof(c.comm) - 1);
	CHECK(sp_procs_apply(p, &c.hdr) == 0);
}

int main(void)
{
	struct sp_elf_cache *cache = sp_elf_cache_new();
	struct sp_procs *p = sp_procs_new(cache);
	struct sp_task_rec fork_rec = { { SP_REC_FORK, sizeof(fork_rec) } };
	const struct sp_map *m;
	struct sp_proc *proc;
	uint64_t lo, hi, bias;
	ssize_t n;
	int i;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n > 0 ? n : 0] = 0;

	mmap_rec(p, 10, 0x10000, 0x1000, 0, "//anon");
	mmap_rec(p, 10, 0x20000, 0x3000, 0, "/nonexistent/lib.so");
	mmap_rec(p, 10, 0x40000, 0x1000, 0, "[vsyscall]");
	proc = sp_procs_find(p, 10);
	CHECK(proc != NULL);
	m = sp_proc_map(proc, 0x10800);
	CHECK(m && m->kind == SP_MAP_ANON && !m->elf);
	m = sp_proc_map(proc, 0x22fff);
	CHECK(m && m->kind == SP_MAP_UNREADABLE);
	CHECK(sp_proc_map(proc, 0x23000) == NULL);
	CHECK(sp_proc_map(proc, 0xffff) == NULL);
	CHECK(sp_proc_map(proc, 0x40000)->kind == SP_MAP_SPECIAL);

	/* a new mapping punches a hole into an old one */
	mmap_rec(p, 10, 0x21000, 0x1000, 0, "//anon");
	CHECK(sp_proc_map(proc, 0x20fff)->kind == SP_MAP_UNREADABLE);
	CHECK(sp_proc_map(proc, 0x21000)->kind == SP_MAP_ANON);
	m = sp_proc_map(proc, 0x22000);
	CHECK(m && m->kind == SP_MAP_UNREADABLE && m->pgoff == 0x2000);
	CHECK(sp_proc_generation(proc) > 0);

	/* a real file: its whole image is a module with a load bias */
	{
		struct sp_elf *e = sp_elf_cache_get(cache, exe);

		CHECK(e != NULL);
		sp_elf_extent(e, &lo, &hi);
		CHECK(hi > lo);
		CHECK(sp_elf_bias(e, 0x7f0000001000, 0x1000, &bias) == 0);
	}
	mmap_rec(p, 10, 0x7f0000001000, 0x1000, 0x1000, exe);
	m = sp_proc_map(proc, 0x7f0000001000);
	CHECK(m && m->kind == SP_MAP_FILE && m->elf && m->bias == bias);
	m = sp_proc_module(proc, bias + lo);
	CHECK(m && m->elf && m->bias == bias);
	CHECK(sp_proc_module(proc, bias + hi) == NULL);
	CHECK(sp_elf_cache_opened(cache) == 1);
	for (i = 0; i < 10; i++)
		mmap_rec(p, 11, 0x7f0000001000, 0x1000, 0x1000, exe);
	CHECK(sp_elf_cache_opened(cache) == 1);

	/* the jitdump a process mapped, the last one; not other files */
	CHECK(sp_proc_jitdump(proc) == NULL);
	mmap_rec(p, 10, 0x50000, 0x1000, 0, "/tmp/jit-10.txt");
	CHECK(sp_proc_jitdump(proc) == NULL);
	mmap_rec(p, 10, 0x50000, 0x1000, 0, "/tmp/jit-9.dump");
	mmap_rec(p, 10, 0x51000, 0x1000, 0, "/tmp/x/jit-10.dump");
	CHECK(sp_proc_map(proc, 0x51000)->kind == SP_MAP_UNREADABLE);
	CHECK_STR(sp_proc_jitdump(proc), "/tmp/x/jit-10.dump");

	/* names; a fork copies the address space; exec drops it */
	comm_rec(p, 10, "parent", 0);
	CHECK_STR(sp_proc_comm(proc), "parent");
	fork_rec.pid = 12;
	fork_rec.ppid = 10;
	fork_rec.tid = 12;
	fork_rec.ptid = 10;
	CHECK(sp_procs_apply(p, &fork_rec.hdr) == 0);
	proc = sp_procs_find(p, 12);
	CHECK(proc && sp_proc_map(proc, 0x10000) &&
	      sp_proc_map(proc, 0x7f0000001000));
	CHECK_STR(sp_proc_comm(proc), "parent");
	CHECK_STR(sp_proc_jitdump(proc), "/tmp/x/jit-10.dump");
	comm_rec(p, 12, "child", SP_COMM_EXEC);
	CHECK_STR(sp_proc_comm(proc), "child");
	CHECK(sp_proc_map(proc, 0x10000) == NULL);
	CHECK(sp_proc_jitdump(proc) == NULL);
	CHECK(sp_proc_map(sp_procs_find(p, 10), 0x10000) != NULL);

	/* an image no address space can hold is refused before it is applied */
	{
		struct sp_image_rec im = { { SP_REC_IMAGE, sizeof(im) } };

		im.start = 0xfffffffffffff000;
		CHECK(sp_rec_check_common(&im.hdr) == NULL);
		im.len = 0x1000;
		im.hdr.size = sizeof(im) + 0x1000;
		CHECK_STR(sp_rec_check_common(&im.hdr), "IMAGE range wraps");
	}

	/* many processes */
	for (i = 0; i < 5000; i++)
		mmap_rec(p, 1000 + i, 0x10000, 0x1000, 0, "//anon");
	for (i = 0; i < 5000; i += 111)
		CHECK(sp_proc_map(sp_procs_find(p, 1000 + i), 0x10000) != NULL);
	CHECK(sp_procs_find(p, 999999) == NULL);

	sp_procs_free(p);
	sp_elf_cache_free(cache);
	return unit_done("test-procs");
}
