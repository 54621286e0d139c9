/* SPDX-License-Identifier: MIT */
/*
 * wl-jitstub: a JIT leaf without a frame, for honest stack ends.
 *
 *	main -> run -> call_stub -> jit_stub	(jit_stub in a JIT page)
 *
 * jit_stub (wl-jit.h) is shaped like Python 3.12's perf trampoline: no
 * CFI, no frame of its own, and %rbp zero while it spins, so that an
 * unwinder stepping out of it by frame pointer stops as if the stack ended
 * there.  Nearly all samples land in its loop.  It is announced in
 * /tmp/perf-PID.map, which is left behind for a later symbolization; the
 * tests remove it.
 *
 * usage: wl-jitstub [SECONDS]	(default 5); prints nothing
 * Ready (wl_ready) once the map is written, released (wl_wait_go) before run.
 */
#include "wl.h"
#include "wl-jit.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef uint64_t (*jit_fn)(uint64_t);

static jit_fn jit_entry;

NOINLINE void call_stub(uint64_t n)
{
	wl_sink += jit_entry(n);
	BARRIER();
}

NOINLINE void run(double seconds)
{
	double end = wl_now() + seconds;

	do {
		call_stub(1000000);
		BARRIER();
	} while (wl_now() < end);
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_seconds(argc, argv, 1, 5);
	size_t size = (size_t)sysconf(_SC_PAGESIZE);
	char path[64];
	uint8_t *page;
	FILE *f;

	page = mmap(NULL, size, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("wl-jitstub: mmap");
		return 1;
	}
	memset(page, 0xcc, size);	/* int3 after the stub */
	memcpy(page, jit_stub_code, sizeof(jit_stub_code));
	__builtin___clear_cache((char *)page, (char *)page + size);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f || fprintf(f, "%lx %zx jit_stub\n", (unsigned long)page,
			  sizeof(jit_stub_code)) < 0 || fclose(f)) {
		perror("wl-jitstub: /tmp/perf-PID.map");
		return 1;
	}
	jit_entry = (jit_fn)(void *)page;
	wl_ready();
	wl_wait_go();
	run(seconds);
	BARRIER();
	return 0;
}
