/* SPDX-License-Identifier: MIT */
/*
 * wl-jit: a tiny JIT.  Two x86_64 functions are copied into anonymous
 * PROT_READ|PROT_WRITE|PROT_EXEC memory and announced in /tmp/perf-PID.map,
 * the way V8 and CPython do it:
 *
 *	main -> run -> call_jit -> jit_outer -> jit_hot	(jit_* in the JIT page)
 *
 * The JIT code keeps frame pointers and has no unwind information, so an
 * unwinder must take a frame-pointer step through jit_hot and jit_outer to
 * reach call_jit, whose CFI takes it on to main.  Nearly all samples land in
 * jit_hot's loop.  The map file is left behind (as the JITs do) so that a
 * later symbolization still finds it; the tests remove it.
 *
 * usage: wl-jit [SECONDS]	(default 5); prints nothing
 * Ready (wl_ready) once the map is written, released (wl_wait_go) before run.
 */
#include "wl.h"
#include "wl-jit.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>


#define HOT_OFF 0
#define OUTER_OFF 64
#define CALL_AT (OUTER_OFF + 4)	/* offset of the call instruction */

typedef uint64_t (*jit_fn)(uint64_t);

static jit_fn jit_entry;

NOINLINE void call_jit(uint64_t n)
{
	wl_sink += jit_entry(n);
	BARRIER();
}

NOINLINE void run(double seconds)
{
	double end = wl_now() + seconds;

	do {
		call_jit(1000000);
		BARRIER();
	} while (wl_now() < end);
}

static int write_perf_map(uintptr_t base)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%lx %zx jit_hot\n", (unsigned long)(base + HOT_OFF),
		sizeof(jit_hot_code));
	fprintf(f, "%lx %zx jit_outer\n", (unsigned long)(base + OUTER_OFF),
		sizeof(jit_outer_code));
	return fclose(f);
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_seconds(argc, argv, 1, 5);
	size_t size = (size_t)sysconf(_SC_PAGESIZE);
	int32_t rel = HOT_OFF - (CALL_AT + 5);
	uint8_t *page;

	page = mmap(NULL, size, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("wl-jit: mmap");
		return 1;
	}
	memset(page, 0xcc, size);	/* int3 between functions */
	memcpy(page + HOT_OFF, jit_hot_code, sizeof(jit_hot_code));
	memcpy(page + OUTER_OFF, jit_outer_code, sizeof(jit_outer_code));
	memcpy(page + CALL_AT + 1, &rel, sizeof(rel));
	__builtin___clear_cache((char *)page, (char *)page + size);
	if (write_perf_map((uintptr_t)page)) {
		perror("wl-jit: /tmp/perf-PID.map");
		return 1;
	}
	jit_entry = (jit_fn)(void *)(page + OUTER_OFF);
	wl_ready();
	wl_wait_go();
	run(seconds);
	BARRIER();
	return 0;
}
