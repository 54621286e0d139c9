/* SPDX-License-Identifier: MIT */
/* test-procs: address spaces replayed from records, and how long they live. */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/procs.h"
#include "records.h"
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
	struct sp_comm_rec c = unit_comm_rec(0, pid, pid, flags, name);

	CHECK(sp_procs_apply(p, &c.hdr) == 0);
}

static void task_rec(struct sp_procs *p, int type, uint64_t time,
		     uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t flags)
{
	struct sp_task_rec t = unit_task_rec(type, time, pid, ppid, tid, flags);

	CHECK(sp_procs_apply(p, &t.hdr) == 0);
}

static void thread_comm(struct sp_procs *p, uint64_t time, uint32_t pid,
			uint32_t tid, uint32_t flags)
{
	struct sp_comm_rec c = unit_comm_rec(time, pid, tid, flags, "t");

	CHECK(sp_procs_apply(p, &c.hdr) == 0);
}

static uint32_t forgotten[16];
static int nforgotten, released;

static void on_forget(void *arg, struct sp_proc *proc)
{
	void *user = sp_proc_user(proc, SP_PROC_STACKS);

	CHECK(arg == (void *)forgotten);
	CHECK(!user || user == (void *)&released);
	if (nforgotten < 16)
		forgotten[nforgotten] = sp_proc_pid(proc);
	nforgotten++;
}

static void release(void *data)
{
	CHECK(data == (void *)&released);
	released++;
}

static void add_user(struct sp_procs *p, uint32_t pid)
{
	struct sp_proc *proc = sp_procs_find(p, pid);

	CHECK(proc != NULL);
	if (proc)
		sp_proc_set_user(proc, SP_PROC_STACKS, &released, release);
}

#define S 1000000000ull		/* a second of stream time */

/*
 * A process goes when format/alive.h says (test-alive), with its mappings
 * and what its users keep in its slots; a process with its pid later
 * starts empty.
 */
static void test_forget(struct sp_elf_cache *cache)
{
	struct sp_procs *p = sp_procs_new(cache);
	struct sp_proc *proc;

	CHECK(p != NULL);
	if (!p)
		return;
	sp_procs_on_forget(p, on_forget, forgotten);
	mmap_rec(p, 100, 0x10000, 0x1000, 0, "//anon");
	task_rec(p, SP_REC_FORK, 1 * S, 200, 100, 200, 0);
	task_rec(p, SP_REC_FORK, 1 * S, 200, 200, 201, 0);
	add_user(p, 200);
	proc = sp_procs_find(p, 200);
	CHECK(proc && sp_proc_map(proc, 0x10000));
	CHECK(sp_procs_count(p) == 2);

	/* the main thread's EXIT alone ends nothing */
	task_rec(p, SP_REC_EXIT, 2 * S, 200, 100, 200, 0);
	task_rec(p, SP_REC_FORK, 4 * S, 300, 100, 300, 0);
	CHECK(sp_procs_find(p, 200) == proc && nforgotten == 0);
	/* the last thread's does; a second later 200 is forgotten */
	task_rec(p, SP_REC_EXIT, 5 * S, 200, 200, 201, 0);
	CHECK(sp_alive_ended(sp_procs_alive(p), 200));
	thread_comm(p, 6 * S - 1, 300, 300, 0);
	CHECK(sp_procs_find(p, 200) == proc && released == 0);
	thread_comm(p, 6 * S, 300, 300, 0);
	CHECK(sp_procs_find(p, 200) == NULL);
	CHECK(nforgotten == 1 && forgotten[0] == 200 && released == 1);
	CHECK(sp_procs_count(p) == 2);
	/* a record of its pid after that: a new process, with nothing */
	proc = sp_procs_get(p, 200);
	CHECK(proc && sp_proc_map(proc, 0x10000) == NULL);
	CHECK(sp_proc_user(proc, SP_PROC_STACKS) == NULL);

	/* a FORK that gives 300's pid to a new process forgets it first */
	add_user(p, 300);
	thread_comm(p, 6 * S, 300, 300, 0);
	mmap_rec(p, 300, 0x20000, 0x1000, 0, "//anon");
	task_rec(p, SP_REC_FORK, 7 * S, 300, 100, 300, 0);
	CHECK(nforgotten == 2 && forgotten[1] == 300 && released == 2);
	proc = sp_procs_find(p, 300);
	CHECK(proc && sp_proc_map(proc, 0x10000) &&
	      !sp_proc_map(proc, 0x20000));
	sp_procs_free(p);
	CHECK(released == 2);	/* freeing the table calls no hook */
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
	test_forget(cache);
	sp_elf_cache_free(cache);
	return unit_done("test-procs");
}
