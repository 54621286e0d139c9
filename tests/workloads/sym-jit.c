/* SPDX-License-Identifier: MIT */
/*
 * sym-jit: a test JIT that announces its code the two ways JITs do.
 *
 *	main -> run -> call_jit -> jit_outer -> jit_hot	(jit_* in a JIT page)
 *
 * "jitdump DIR": writes DIR/jit-PID.dump as perf's jitdump specification
 * says (header, DEBUG_INFO then CODE_LOAD for each function, the code bytes
 * included) and mmaps it PROT_READ|PROT_EXEC so the recorder sees an MMAP
 * record naming it.  The debug info places jit_hot at "jit-src.js" lines 10
 * and 11, jit_outer at line 20.
 *
 * "perfmap": writes /tmp/perf-PID.map with jit_outer and jit_hot, then after
 * half the run appends jit_late_hot, a copy of jit_hot at another address,
 * and runs that instead: the map grows while it is being recorded.
 *
 * usage: sym-jit jitdump DIR [SECONDS] | sym-jit perfmap [SECONDS]
 */
#include "wl.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static const uint8_t jit_hot_code[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0x48, 0x89, 0xf8,	/* mov %rdi,%rax */
	0x48, 0xff, 0xc8,	/* 1: dec %rax */
	0x75, 0xfb,		/* jnz 1b */
	0x5d,			/* pop %rbp */
	0xc3,			/* ret */
};

static const uint8_t jit_outer_code[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0xe8, 0, 0, 0, 0,	/* call jit_hot (rel32 patched below) */
	0x5d,			/* pop %rbp */
	0xc3,			/* ret */
};

#define HOT_OFF 0
#define LATE_OFF 128
#define OUTER_OFF 64
#define CALL_AT (OUTER_OFF + 4)

typedef uint64_t (*jit_fn)(uint64_t);

static jit_fn jit_entry;
static uint8_t *page;

NOINLINE void call_jit(uint64_t n)
{
	wl_sink += jit_entry(n);
	BARRIER();
}

static void link_outer(int to)
{
	int32_t rel = to - (CALL_AT + 5);

	memcpy(page + CALL_AT + 1, &rel, sizeof(rel));
	__builtin___clear_cache((char *)page, (char *)page + 4096);
}

/* jitdump */

struct jd_rec {
	uint32_t id, total_size;
	uint64_t timestamp;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int put(int fd, const void *p, size_t n)
{
	return write(fd, p, n) == (ssize_t)n ? 0 : -1;
}

static int jd_debug(int fd, uint64_t addr, int nlines, const int *lines,
		    const int *offs)
{
	static const char file[] = "jit-src.js";
	struct jd_rec h = { 2, 0, now_ns() };
	uint64_t a = addr, nr = (uint64_t)nlines;
	int i, r;

	h.total_size = (uint32_t)(sizeof(h) + 16 +
				  (size_t)nlines * (16 + sizeof(file)));
	r = put(fd, &h, sizeof(h)) | put(fd, &a, 8) | put(fd, &nr, 8);
	for (i = 0; i < nlines; i++) {
		uint64_t ea = addr + (uint64_t)offs[i];
		uint32_t line = (uint32_t)lines[i], discrim = 0;

		r |= put(fd, &ea, 8) | put(fd, &line, 4) |
		     put(fd, &discrim, 4) | put(fd, file, sizeof(file));
	}
	return r;
}

static int jd_load(int fd, const char *name, uint64_t addr, uint64_t size,
		   uint64_t index)
{
	struct jd_rec h = { 0, 0, now_ns() };
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)syscall(SYS_gettid);
	int r;

	h.total_size = (uint32_t)(sizeof(h) + 40 + strlen(name) + 1 + size);
	r = put(fd, &h, sizeof(h)) | put(fd, &pid, 4) | put(fd, &tid, 4) |
	    put(fd, &addr, 8) | put(fd, &addr, 8) | put(fd, &size, 8) |
	    put(fd, &index, 8) | put(fd, name, strlen(name) + 1);
	return r | put(fd, (void *)(uintptr_t)addr, size);
}

static int write_jitdump(const char *dir)
{
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} hdr = { 0x4A695444, 1, 40, 62, 0, (uint32_t)getpid(), now_ns(), 0 };
	static const int hot_lines[] = { 10, 11 }, hot_offs[] = { 0, 7 };
	static const int outer_lines[] = { 20 }, outer_offs[] = { 0 };
	uintptr_t base = (uintptr_t)page;
	char path[4096];
	void *m;
	int fd, r;

	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0)
		return -1;
	/* the MMAP record that tells the profiler where the dump is */
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	r = put(fd, &hdr, sizeof(hdr));
	r |= jd_debug(fd, base + HOT_OFF, 2, hot_lines, hot_offs);
	r |= jd_load(fd, "jit_hot", base + HOT_OFF, sizeof(jit_hot_code), 1);
	r |= jd_debug(fd, base + OUTER_OFF, 1, outer_lines, outer_offs);
	r |= jd_load(fd, "jit_outer", base + OUTER_OFF, sizeof(jit_outer_code), 2);
	return close(fd) | r;
}

static int perf_map_add(const char *name, uintptr_t addr, size_t size,
			const char *mode)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, mode);
	if (!f)
		return -1;
	fprintf(f, "%lx %zx %s\n", (unsigned long)addr, size, name);
	return fclose(f);
}

int main(int argc, char **argv)
{
	int jitdump = argc > 1 && !strcmp(argv[1], "jitdump");
	int perfmap = argc > 1 && !strcmp(argv[1], "perfmap");
	double seconds = wl_arg_seconds(argc, argv, jitdump ? 3 : 2, 5);
	double end = wl_now() + seconds, half = wl_now() + seconds / 2;
	int late = 0;

	if ((!jitdump && !perfmap) || (jitdump && argc < 3)) {
		fprintf(stderr, "usage: sym-jit jitdump DIR [SECONDS] | sym-jit perfmap [SECONDS]\n");
		return 64;
	}
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	memset(page, 0xcc, 4096);
	memcpy(page + HOT_OFF, jit_hot_code, sizeof(jit_hot_code));
	memcpy(page + LATE_OFF, jit_hot_code, sizeof(jit_hot_code));
	memcpy(page + OUTER_OFF, jit_outer_code, sizeof(jit_outer_code));
	link_outer(HOT_OFF);
	if (jitdump && write_jitdump(argv[2])) {
		perror("sym-jit: jitdump");
		return 1;
	}
	if (perfmap &&
	    (perf_map_add("jit_outer", (uintptr_t)page + OUTER_OFF,
			  sizeof(jit_outer_code), "w") ||
	     perf_map_add("jit_hot", (uintptr_t)page + HOT_OFF,
			  sizeof(jit_hot_code), "a"))) {
		perror("sym-jit: perf map");
		return 1;
	}
	jit_entry = (jit_fn)(void *)(page + OUTER_OFF);
	do {
		call_jit(1000000);
		BARRIER();
		if (perfmap && !late && wl_now() >= half) {
			late = 1;
			if (perf_map_add("jit_late_hot", (uintptr_t)page + LATE_OFF,
					 sizeof(jit_hot_code), "a"))
				return 1;
			link_outer(LATE_OFF);
		}
	} while (wl_now() < end);
	return 0;
}
