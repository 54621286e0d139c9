/* SPDX-License-Identifier: MIT */
/*
 * test-symbolize.c: ELF, perf-map and kallsyms lookups, hidden frames,
 * names, and what is forgotten with a process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/symbolize.h"
#include "unit.h"

int main(void);

static char dir[] = "/tmp/test-symbolize.XXXXXX";
static char path[4200];

/* A function of this executable, to be found in its .symtab. */
__attribute__((noinline)) int sp_test_target(int x);
__attribute__((noinline)) int sp_test_target(int x)
{
	return x * 7 + 1;
}

/*
 * Start-up glue of this executable's own, by name, with a function
 * inlined into it: glue_where() returns an address inside the inlined
 * glue_inner(), in start_thread.  GCC's noipa keeps start_thread() and
 * not_glue(), the same code, from being folded into one; clang folds
 * nothing at compile time and does not know the attribute.
 */
#ifdef __clang__
#define TEST_NOIPA __attribute__((noinline))
#else
#define TEST_NOIPA __attribute__((noinline, noipa))
#endif

TEST_NOIPA static uintptr_t glue_callee(void)
{
	return (uintptr_t)__builtin_return_address(0);
}

__attribute__((always_inline)) static inline uintptr_t glue_inner(void)
{
	return glue_callee();
}

TEST_NOIPA static uintptr_t start_thread(void)
{
	uintptr_t r = glue_inner();

	__asm__ volatile("" ::: "memory");	/* no tail call */
	return r;
}

TEST_NOIPA static uintptr_t not_glue(void)
{
	uintptr_t r = glue_inner();

	__asm__ volatile("" ::: "memory");	/* no tail call */
	return r;
}

static void write_file(const char *name, const char *text, const char *mode)
{
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, mode);
	CHECK(fp != NULL);
	if (!fp)
		return;
	fputs(text, fp);
	fclose(fp);
}

/* Replay this process's executable file mappings as MMAP records. */
static void load_self(struct sp_procs *procs, uint32_t pid)
{
	char line[4600];
	FILE *fp = fopen("/proc/self/maps", "r");
	union {
		struct sp_mmap_rec m;
		char buf[sizeof(struct sp_mmap_rec) + 4104];
	} u;

	CHECK(fp != NULL);
	while (fp && fgets(line, sizeof(line), fp)) {
		unsigned long long start, end, off;
		char perms[8], file[4096] = "";
		size_t n;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start,
			   &end, perms, &off, file) < 4 || perms[2] != 'x' ||
		    file[0] != '/')
			continue;
		memset(&u, 0, sizeof(u));
		n = strlen(file) + 1;
		u.m.hdr.type = SP_REC_MMAP;
		u.m.hdr.size = sp_align8(sizeof(u.m) + n);
		u.m.pid = u.m.tid = pid;
		u.m.start = start;
		u.m.len = end - start;
		u.m.pgoff = off;
		u.m.prot = PROT_READ | PROT_EXEC;
		u.m.mflags = MAP_PRIVATE;
		memcpy(u.m.filename, file, n);
		CHECK(sp_rec_check_common(&u.m.hdr) == NULL);
		CHECK(sp_procs_apply(procs, &u.m.hdr) == 0);
	}
	if (fp)
		fclose(fp);
}

static void test_elf(struct sp_symbolizer *s, struct sp_procs *procs)
{
	uint64_t fn = (uint64_t)(uintptr_t)&sp_test_target;
	uint32_t pid = (uint32_t)getpid();
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct sp_frame f;

	CHECK(n > 0);
	exe[n > 0 ? n : 0] = 0;
	load_self(procs, pid);
	CHECK(sp_symbolize_user(s, pid, fn, 1, &f) == 0);
	CHECK_STR(f.function, "sp_test_target");
	CHECK_STR(f.module, exe);
	CHECK(f.kind == SP_FK_NATIVE && f.origin == SP_FO_SYMTAB);
	CHECK(f.addr == fn && f.flags == 0);
	/* a return address just past the function's first byte */
	CHECK(sp_symbolize_user(s, pid, fn + 1, 0, &f) == 0);
	CHECK_STR(f.function, "sp_test_target");
	/* again: from the cache, same answer */
	CHECK(sp_symbolize_user(s, pid, fn + 1, 0, &f) == 0);
	CHECK_STR(f.function, "sp_test_target");
	CHECK(sp_symbolize_user(s, pid, (uint64_t)(uintptr_t)&main, 1, &f) == 0);
	CHECK_STR(f.function, "main");
	/*
	 * A return address at main's first byte: the symbol holding the byte
	 * before, if one does, else main itself (padding or a gap before it)
	 */
	CHECK(sp_symbolize_user(s, pid, (uint64_t)(uintptr_t)&main, 0, &f) == 0);
	{
		const struct sp_proc *p = sp_procs_find(procs, pid);
		const struct sp_map *m = sp_proc_map(p, (uint64_t)(uintptr_t)&main);
		enum sp_frame_origin o;
		const struct sp_sym *before = sp_symtab_find(sp_elf_symtab(m->elf, &o),
			(uint64_t)(uintptr_t)&main - 1 - m->bias);

		CHECK_STR(f.function, before ? before->name : "main");
	}
	/* a libc function ASan does not wrap: .symtab or .dynsym */
	CHECK(sp_symbolize_user(s, pid, (uint64_t)(uintptr_t)&getppid, 1, &f) == 0);
	CHECK(f.origin == SP_FO_SYMTAB || f.origin == SP_FO_DYNSYM ||
	      f.origin == SP_FO_BUILDID || f.origin == SP_FO_DEBUGLINK);
	CHECK(strstr(f.module, "libc") != NULL);
	(void)sp_test_target(1);
}

/*
 * Glue is hidden with what was inlined into it; SP_SYM_GLUE_NAME_ONLY names
 * it by its symbol alone, no DWARF read for it.
 */
static void test_glue(struct sp_elf_cache *cache)
{
	uint64_t at = start_thread();
	uint32_t pid = (uint32_t)getpid();
	struct sp_frame chain[8];
	unsigned flags[] = { SP_SYM_NO_LINES, SP_SYM_GLUE_NAME_ONLY };
	size_t k;
	int n, i;

	for (k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		struct sp_procs *procs = sp_procs_new(cache);
		struct sp_symbolizer *s = procs ? sp_symbolizer_new(procs) : NULL;

		CHECK(s != NULL);
		if (!s) {
			sp_procs_free(procs);
			return;
		}
		sp_symbolizer_set_flags(s, flags[k]);
		load_self(procs, pid);
		n = sp_symbolize_user_chain(s, pid, at, 0, chain, 8);
		CHECK(n == (k == 0 ? 2 : 1));
		if (n > 0)
			CHECK_STR(chain[n - 1].function, "start_thread");
		if (n == 2) {
			CHECK_STR(chain[0].function, "glue_inner");
			CHECK(chain[0].kind == SP_FK_INLINE);
		}
		for (i = 0; i < n; i++)
			CHECK(chain[i].flags & SP_SYMF_HIDDEN);
		/* a function that is not glue keeps its inlined frames */
		n = sp_symbolize_user_chain(s, pid, not_glue(), 0, chain, 8);
		CHECK(n == 2);
		if (n == 2) {
			CHECK_STR(chain[0].function, "glue_inner");
			CHECK_STR(chain[1].function, "not_glue");
			CHECK(!(chain[0].flags & SP_SYMF_HIDDEN) &&
			      !(chain[1].flags & SP_SYMF_HIDDEN));
		}
		sp_symbolizer_free(s);
		sp_procs_free(procs);
	}
}

static void test_perf_map(struct sp_symbolizer *s)
{
	struct sp_frame f;

	/* pid 4000000 has no mappings: the perf map is all there is */
	write_file("perf-4000000.map",
		   "1000 100 py::hot:<stdin>\n"
		   "bad line\n"
		   "2000 10 LazyCompile:~fib /x.js:3\n"
		   "1080 10 shadowed later\n", "w");
	CHECK(sp_symbolize_user(s, 4000000, 0x1010, 1, &f) == 0);
	CHECK_STR(f.function, "py::hot:<stdin>");
	CHECK(f.kind == SP_FK_JIT && f.origin == SP_FO_PERFMAP);
	CHECK(f.module == NULL);
	CHECK(sp_symbolize_user(s, 4000000, 0x2005, 1, &f) == 0);
	CHECK_STR(f.function, "LazyCompile:~fib /x.js:3");
	CHECK(sp_symbolize_user(s, 4000000, 0x1085, 1, &f) == 0);
	CHECK_STR(f.function, "shadowed later");
	/* a return address one past the end still belongs to the entry */
	CHECK(sp_symbolize_user(s, 4000000, 0x1100, 0, &f) == 0);
	CHECK_STR(f.function, "py::hot:<stdin>");
	CHECK(sp_symbolize_user(s, 4000000, 0x1100, 1, &f) == 0);
	CHECK_STR(f.function, "[unknown]");
	CHECK(f.kind == SP_FK_UNKNOWN && f.origin == SP_FO_NONE);
	/* the JIT appends; a miss rereads the grown file */
	write_file("perf-4000000.map", "3000 20 late_fn\n", "a");
	CHECK(sp_symbolize_user(s, 4000000, 0x3010, 1, &f) == 0);
	CHECK_STR(f.function, "late_fn");
	CHECK(sp_symbolize_user(s, 4000000, 0x1010, 1, &f) == 0);
	CHECK_STR(f.function, "py::hot:<stdin>");
	/* no perf map at all */
	CHECK(sp_symbolize_user(s, 4000001, 0x1010, 1, &f) == 0);
	CHECK_STR(f.function, "[unknown]");
	unlink(path);
}

static void test_kernel(struct sp_procs *procs)
{
	struct sp_symbolize_stats st;
	struct sp_symbolizer *s;
	struct sp_frame f;

	write_file("kallsyms",
		   "ffffffff81001000 T do_syscall_64\n"
		   "ffffffff81000000 T _stext\n"
		   "ffffffff81002000 d some_data\n"
		   "ffffffff81003000 t helper\n"
		   "ffffffffc0000000 t ext4_read\t[ext4]\n", "w");
	s = sp_symbolizer_new(procs);
	CHECK(sp_symbolizer_set_kallsyms(s, path) == 0);
	CHECK(sp_symbolize_kernel(s, 0xffffffff81001010, 1, &f) == 0);
	CHECK_STR(f.function, "do_syscall_64");
	CHECK_STR(f.module, "[kernel]");
	CHECK(f.kind == SP_FK_KERNEL && f.origin == SP_FO_KALLSYMS);
	/* data symbols are not functions */
	CHECK(sp_symbolize_kernel(s, 0xffffffff81002010, 1, &f) == 0);
	CHECK_STR(f.function, "do_syscall_64");
	/* a return address at the start of helper was a call in the one before */
	CHECK(sp_symbolize_kernel(s, 0xffffffff81003000, 0, &f) == 0);
	CHECK_STR(f.function, "do_syscall_64");
	CHECK(sp_symbolize_kernel(s, 0xffffffffc0000004, 1, &f) == 0);
	CHECK_STR(f.function, "ext4_read");
	CHECK_STR(f.module, "[ext4]");
	CHECK(sp_symbolize_kernel(s, 0x1000, 1, &f) == 0);
	CHECK_STR(f.function, "[kernel]");
	CHECK(f.origin == SP_FO_NONE);
	sp_symbolizer_stats(s, &st);
	CHECK(st.no_kallsyms == 0 && st.unresolved == 1 && st.frames == 5);
	sp_symbolizer_free(s);
	unlink(path);

	/* kptr_restrict: every address is zero */
	write_file("kallsyms", "0000000000000000 T do_syscall_64\n"
		   "0000000000000000 t helper\n", "w");
	s = sp_symbolizer_new(procs);
	CHECK(sp_symbolizer_set_kallsyms(s, path) == 0);
	CHECK(sp_symbolize_kernel(s, 0xffffffff81001010, 1, &f) == 0);
	CHECK_STR(f.function, "[kernel]");
	CHECK(f.kind == SP_FK_KERNEL && f.origin == SP_FO_NONE);
	sp_symbolizer_stats(s, &st);
	CHECK(st.no_kallsyms == 1);
	sp_symbolizer_free(s);
	unlink(path);

	s = sp_symbolizer_new(procs);
	CHECK(sp_symbolizer_set_kallsyms(s, "/nonexistent/kallsyms") == 0);
	CHECK(sp_symbolize_kernel(s, 0xffffffff81001010, 1, &f) == 0);
	CHECK_STR(f.function, "[kernel]");
	sp_symbolizer_free(s);
}

static void test_hidden(void)
{
	CHECK(sp_symbol_hidden("_start"));
	CHECK(sp_symbol_hidden("__libc_start_main"));
	CHECK(sp_symbol_hidden("__libc_start_main_impl"));
	CHECK(sp_symbol_hidden("__libc_start_call_main"));
	CHECK(sp_symbol_hidden("start_thread"));
	CHECK(sp_symbol_hidden("clone"));
	CHECK(sp_symbol_hidden("clone3"));
	CHECK(!sp_symbol_hidden("main"));
	CHECK(!sp_symbol_hidden("_start_x"));
}

static void test_threads(struct sp_symbolizer *s)
{
	struct sp_comm_rec c = { .hdr = { SP_REC_COMM, sizeof(c) }, .time = 5,
		.pid = 500, .tid = 500, .flags = SP_COMM_EXEC };
	struct sp_task_rec t = { .hdr = { SP_REC_FORK, sizeof(t) }, .time = 6,
		.pid = 500, .ppid = 500, .tid = 501, .ptid = 500 };
	struct sp_st_comm comm;

	strcpy(c.comm, "server");
	CHECK(sp_symbolizer_apply(s, &c.hdr, &comm) == 1);
	CHECK_STR(comm.name, "server");
	CHECK(comm.exec == 1 && comm.time == 5 && comm.tid == 500);
	CHECK(sp_symbolizer_apply(s, &t.hdr, &comm) == 1);
	CHECK_STR(comm.name, "server");
	CHECK(comm.pid == 500 && comm.tid == 501 && comm.exec == 0);
	/* the thread renames itself; its child inherits the new name */
	c.tid = 501;
	c.flags = 0;
	strcpy(c.comm, "io worker");
	CHECK(sp_symbolizer_apply(s, &c.hdr, &comm) == 1);
	t.tid = 502;
	t.ptid = 501;
	CHECK(sp_symbolizer_apply(s, &t.hdr, &comm) == 1);
	CHECK_STR(comm.name, "io worker");
	/* a new process of an unknown parent has no name to inherit */
	t.pid = t.tid = 700;
	t.ppid = t.ptid = 699;
	CHECK(sp_symbolizer_apply(s, &t.hdr, &comm) == 0);
	t.hdr.type = SP_REC_EXIT;
	t.pid = 500;
	t.tid = 502;
	CHECK(sp_symbolizer_apply(s, &t.hdr, &comm) == 0);
}

static void test_stack(struct sp_symbolizer *s)
{
	struct {
		struct sp_unw_stack st;
		uint64_t ips[3];
		uint8_t uflags[8];
	} rec = { .st = { .hdr = { SP_REC_STACK, sizeof(rec) }, .pid = 4000002,
		.id = 9, .nr_kernel = 1, .nr_user = 2 } };
	struct sp_unw_stack_view v;
	const struct sp_frame *frames;
	size_t n = 0;

	rec.ips[0] = 0x1000;
	rec.ips[1] = 0x2000;
	rec.ips[2] = 0x3000;
	rec.uflags[0] = SP_FRAME_PRECISE;
	CHECK(sp_unw_stack_parse(&rec.st.hdr, &v) == NULL);
	CHECK(!sp_symbolizer_has_stack(s, 4000002, 9));
	CHECK(sp_symbolize_stack(s, &v, &frames, &n) == 0);
	CHECK(n == 3);
	if (n != 3)
		return;
	CHECK(sp_symbolizer_has_stack(s, 4000002, 9));
	CHECK(!sp_symbolizer_has_stack(s, 4000002, 8));
	CHECK(frames[0].kind == SP_FK_KERNEL && frames[0].addr == 0x1000);
	CHECK(frames[1].kind == SP_FK_UNKNOWN && frames[1].addr == 0x2000);
	CHECK(frames[2].addr == 0x3000);
	CHECK_STR(frames[2].function, "[unknown]");
}

/* What the recorder captures: kallsyms text and perf-map snapshots. */
static void test_captured(struct sp_procs *procs)
{
	static const char map1[] = "1000 100 jit_a\n";
	static const char map2[] = "1000 100 jit_b\n2000 10 jit_c\n";
	struct sp_symbolizer *s = sp_symbolizer_new(procs);
	struct sp_frame f;

	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(sp_symbolizer_set_kallsyms(s, "/nonexistent") == 0);
	/* symbols captured by the recorder, in any order */
	CHECK(sp_symbolizer_add_ksym(s, 0xffffffffc0000000, 0x80, "ext4_read [ext4]") == 0);
	CHECK(sp_symbolizer_add_ksym(s, 0xffffffff81001000, 0x100, "do_syscall_64") == 0);
	CHECK(sp_symbolize_kernel(s, 0xffffffff81001010, 1, &f) == 0);
	CHECK_STR(f.function, "do_syscall_64");
	CHECK_STR(f.module, "[kernel]");
	CHECK(f.origin == SP_FO_KALLSYMS);
	CHECK(sp_symbolize_kernel(s, 0xffffffffc0000001, 1, &f) == 0);
	CHECK_STR(f.function, "ext4_read");
	CHECK_STR(f.module, "[ext4]");
	/* past a captured symbol's size is no symbol */
	CHECK(sp_symbolize_kernel(s, 0xffffffff81001200, 1, &f) == 0);
	CHECK_STR(f.function, "[kernel]");
	CHECK(sp_symbolizer_add_ksym(s, 0xffffffff81000000, 0x1000, "_stext") == 0);
	CHECK(sp_symbolize_kernel(s, 0xffffffff81000010, 1, &f) == 0);
	CHECK_STR(f.function, "_stext");
	/* a snapshot stands for the file, which is not there */
	CHECK(sp_symbolizer_set_perf_map_dir(s, "/nonexistent") == 0);
	CHECK(sp_symbolizer_add_perf_map(s, 4100000, 0, map1, sizeof(map1) - 1, 0) == 0);
	CHECK(sp_symbolize_user(s, 4100000, 0x1010, 1, &f) == 0);
	CHECK_STR(f.function, "jit_a");
	CHECK(f.kind == SP_FK_JIT && f.origin == SP_FO_PERFMAP);
	/* appended text: a later line for the same code wins */
	CHECK(sp_symbolizer_add_perf_map(s, 4100000, 0, map2, sizeof(map2) - 1, 0) == 0);
	CHECK(sp_symbolize_user(s, 4100000, 0x1011, 1, &f) == 0);
	CHECK_STR(f.function, "jit_b");
	CHECK(sp_symbolize_user(s, 4100000, 0x2001, 1, &f) == 0);
	CHECK_STR(f.function, "jit_c");
	CHECK(sp_symbolize_user(s, 4100000, 0x3001, 1, &f) == 0);
	CHECK_STR(f.function, "[unknown]");
	/* a rewritten file starts over */
	CHECK(sp_symbolizer_add_perf_map(s, 4100000, 0, "5000 10 jit_d\n", 14, 1) == 0);
	CHECK(sp_symbolize_user(s, 4100000, 0x2002, 1, &f) == 0);
	CHECK_STR(f.function, "[unknown]");
	CHECK(sp_symbolize_user(s, 4100000, 0x5001, 1, &f) == 0);
	CHECK_STR(f.function, "jit_d");
	sp_symbolizer_free(s);
	CHECK(sp_symbol_python_glue("_PyEval_EvalFrameDefault"));
	CHECK(sp_symbol_python_glue("PyObject_Vectorcall"));
	CHECK(sp_symbol_python_glue("py_trampoline_evaluator"));
	CHECK(!sp_symbol_python_glue("PyLong_FromLong"));
}

static void task(struct sp_symbolizer *s, int type, uint64_t time,
		 uint32_t pid, uint32_t ppid, uint32_t tid)
{
	struct sp_task_rec t = { .hdr = { (uint32_t)type, sizeof(t) },
		.time = time, .pid = pid, .ppid = ppid, .tid = tid,
		.ptid = ppid };
	struct sp_st_comm comm;

	CHECK(sp_symbolizer_apply(s, &t.hdr, &comm) >= 0);
}

/*
 * A process forgotten a second after its end takes its stacks, names and
 * perf map along: a process that gets its pid later starts with none.
 */
static void test_forget(void)
{
	struct sp_elf_cache *cache = sp_elf_cache_new();
	struct sp_procs *procs = cache ? sp_procs_new(cache) : NULL;
	struct sp_symbolizer *s = procs ? sp_symbolizer_new(procs) : NULL;
	struct {
		struct sp_unw_stack st;
		uint64_t ips[1];
		uint8_t uflags[8];
	} rec = { .st = { .hdr = { SP_REC_STACK, sizeof(rec) }, .pid = 600,
		.id = 3, .nr_user = 1 }, .ips = { 0x1010 },
		.uflags = { SP_FRAME_PRECISE } };
	struct sp_comm_rec c = { .hdr = { SP_REC_COMM, sizeof(c) }, .time = 1,
		.pid = 600, .tid = 600 };
	struct sp_unw_stack_view v;
	const struct sp_frame *frames;
	struct sp_st_comm comm;
	struct sp_frame f;
	size_t n;

	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(sp_symbolizer_set_perf_map_dir(s, "/nonexistent") == 0);
	strcpy(c.comm, "short");
	CHECK(sp_symbolizer_apply(s, &c.hdr, &comm) == 1);
	CHECK(sp_symbolizer_add_perf_map(s, 600, 0, "1000 100 jit_e\n", 15, 0) == 0);
	CHECK(sp_unw_stack_parse(&rec.st.hdr, &v) == NULL);
	CHECK(sp_symbolize_stack(s, &v, &frames, &n) == 0 && n == 1);
	CHECK(n == 1 && !strcmp(frames[0].function, "jit_e"));
	CHECK(sp_symbolizer_has_stack(s, 600, 3));
	task(s, SP_REC_EXIT, 2000000000, 600, 1, 600);
	/* it lingers for the records stamped before its end */
	task(s, SP_REC_FORK, 2900000000, 601, 1, 601);
	CHECK(sp_symbolizer_has_stack(s, 600, 3));
	CHECK(sp_symbolize_user(s, 600, 0x1010, 1, &f) == 0);
	CHECK_STR(f.function, "jit_e");
	task(s, SP_REC_FORK, 3000000000, 602, 1, 602);
	CHECK(!sp_symbolizer_has_stack(s, 600, 3));
	CHECK(sp_procs_find(procs, 600) == NULL);
	/* a new process 600 has neither the perf map nor the stacks */
	task(s, SP_REC_FORK, 3000000000, 600, 602, 600);
	CHECK(sp_symbolize_user(s, 600, 0x1010, 1, &f) == 0);
	CHECK_STR(f.function, "[unknown]");
	CHECK(!sp_symbolizer_has_stack(s, 600, 3));
	rec.st.id = 4;
	CHECK(sp_unw_stack_parse(&rec.st.hdr, &v) == NULL);
	CHECK(sp_symbolize_stack(s, &v, &frames, &n) == 0 && n == 1);
	CHECK(n == 1 && !strcmp(frames[0].function, "[unknown]"));
	CHECK(sp_symbolizer_has_stack(s, 600, 4));
	/* a FORK giving the pid to yet another process forgets at once */
	task(s, SP_REC_FORK, 3100000000, 600, 601, 600);
	CHECK(!sp_symbolizer_has_stack(s, 600, 4));
	sp_symbolizer_free(s);
	sp_procs_free(procs);
	sp_elf_cache_free(cache);
}

/* An exec drops a perf map read before it, not one read after it. */
static void exec_at(struct sp_symbolizer *s, uint64_t time)
{
	struct sp_comm_rec c = { .hdr = { SP_REC_COMM, sizeof(c) }, .time = time,
		.pid = 700, .tid = 700, .flags = SP_COMM_EXEC };
	struct sp_st_comm comm;

	strcpy(c.comm, "jit");
	CHECK(sp_symbolizer_apply(s, &c.hdr, &comm) == 1);
}

static void test_exec_perf_map(void)
{
	struct sp_elf_cache *cache = sp_elf_cache_new();
	struct sp_procs *procs = cache ? sp_procs_new(cache) : NULL;
	struct sp_symbolizer *s = procs ? sp_symbolizer_new(procs) : NULL;
	struct sp_frame f;

	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(sp_symbolizer_set_perf_map_dir(s, "/nonexistent") == 0);
	/* read at 2000, after an exec at 1000 whose record comes later */
	CHECK(sp_symbolizer_add_perf_map(s, 700, 2000, "1000 100 jit_new\n", 17, 0) == 0);
	exec_at(s, 1000);
	CHECK(sp_symbolize_user(s, 700, 0x1010, 1, &f) == 0);
	CHECK_STR(f.function, "jit_new");
	/* the next exec makes it the old program's */
	exec_at(s, 3000);
	CHECK(sp_symbolize_user(s, 700, 0x1010, 1, &f) == 0);
	CHECK_STR(f.function, "[unknown]");
	sp_symbolizer_free(s);
	sp_procs_free(procs);
	sp_elf_cache_free(cache);
}

int main(void)
{
	struct sp_elf_cache *cache;
	struct sp_procs *procs;
	struct sp_symbolizer *s;

	CHECK(mkdtemp(dir) != NULL);
	cache = sp_elf_cache_new();
	procs = cache ? sp_procs_new(cache) : NULL;
	s = procs ? sp_symbolizer_new(procs) : NULL;
	CHECK(s != NULL);
	if (!s)
		return unit_done("test-symbolize");
	CHECK(sp_symbolizer_set_perf_map_dir(s, dir) == 0);
	CHECK(sp_symbolizer_set_kallsyms(s, "/nonexistent") == 0);
	test_elf(s, procs);
	test_perf_map(s);
	test_kernel(procs);
	test_hidden();
	test_glue(cache);
	test_threads(s);
	test_stack(s);
	test_captured(procs);
	test_forget();
	test_exec_perf_map();
	sp_symbolizer_free(s);
	sp_procs_free(procs);
	sp_elf_cache_free(cache);
	rmdir(dir);
	return unit_done("test-symbolize");
}
