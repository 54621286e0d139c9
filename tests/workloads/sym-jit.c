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
 * "jitcfi DIR": runs frameless JIT code instead, with no frame pointer:
 *
 *	main -> call_jit -> jit_fl_outer -> jit_fl_hot
 *
 * each doing sub $24,%rsp and storing a decoy there, the return address of
 * a call in decoy_site(), that a scan of the stack for return addresses
 * takes for the caller.  The jitdump has an UNWINDING_INFO record before
 * each CODE_LOAD: .eh_frame (CFA rsp+32 in the body) and .eh_frame_hdr,
 * also copied after the code as perf's genelf lays them out.  Only with
 * that CFI can an unwinder get from the JIT frames to call_jit and main.
 * "jitnocfi DIR" is the same without the UNWINDING_INFO records.
 *
 * "perfmap": writes /tmp/perf-PID.map with jit_outer and jit_hot, then after
 * half the run appends jit_late_hot, a copy of jit_hot at another address,
 * and runs that instead: the map grows while it is being recorded.
 *
 * Ready (wl_ready) once the jitdump or map is written, released
 * (wl_wait_go) before the loop: SECONDS, and the half of them after which
 * jit_late_hot is announced, count from the release.
 *
 * usage: sym-jit jitdump|jitcfi|jitnocfi DIR [SECONDS] | sym-jit perfmap [SECONDS]
 */
#include "wl.h"
#include "wl-jit.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>


/* frameless: n in %rdi, the decoy in %rsi */
static const uint8_t jit_fl_hot_code[] = {
	0x48, 0x83, 0xec, 0x18,	/* sub $24,%rsp */
	0x48, 0x89, 0x34, 0x24,	/* mov %rsi,(%rsp) */
	0x48, 0x89, 0xf8,	/* mov %rdi,%rax */
	0x48, 0xff, 0xc8,	/* 1: dec %rax */
	0x75, 0xfb,		/* jnz 1b */
	0x48, 0x83, 0xc4, 0x18,	/* add $24,%rsp */
	0xc3,			/* ret */
};

static const uint8_t jit_fl_outer_code[] = {
	0x48, 0x83, 0xec, 0x18,	/* sub $24,%rsp */
	0x48, 0x89, 0x34, 0x24,	/* mov %rsi,(%rsp) */
	0x48, 0x89, 0x74, 0x24, 0x08,	/* mov %rsi,8(%rsp) */
	0xe8, 0, 0, 0, 0,	/* call jit_fl_hot (rel32 patched below) */
	0x48, 0x83, 0xc4, 0x18,	/* add $24,%rsp */
	0xc3,			/* ret */
};

/* where sub and add end in each: CFA rsp+32 between them */
#define FL_HOT_SUB_END 4
#define FL_HOT_ADD_END 20
#define FL_OUTER_SUB_END 4
#define FL_OUTER_ADD_END 22

#define HOT_OFF 0
#define LATE_OFF 128
#define OUTER_OFF 64
#define CALL_AT (OUTER_OFF + 4)
#define FL_HOT_OFF 256
#define FL_OUTER_OFF 512
#define FL_CALL_AT (FL_OUTER_OFF + 13)

typedef uint64_t (*jit_fn)(uint64_t, uint64_t);

static jit_fn jit_entry;
static uint8_t *page;
static uint64_t decoy;

NOINLINE uint64_t decoy_ret(void)
{
	BARRIER();
	return (uint64_t)(uintptr_t)__builtin_return_address(0);
}

/* a return address right after a call, in file-backed code */
NOINLINE void decoy_site(void)
{
	decoy = decoy_ret();
	BARRIER();
}

NOINLINE void call_jit(uint64_t n)
{
	wl_sink += jit_entry(n, decoy);
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

/*
 * Unwinding data for code at addr of size bytes: .eh_frame (a CIE, one FDE,
 * a terminator) and then .eh_frame_hdr, laid out to sit at
 * addr + ALIGN_8(size) as perf's genelf places them.  Returns the bytes put
 * in buf (at least 96), the header's size in *hdr_size.
 */
static size_t make_cfi(uint8_t *buf, uint64_t addr, uint64_t size,
		       int sub_end, int add_end, uint64_t *hdr_size)
{
	static const uint8_t cie[24] = {
		20, 0, 0, 0,		/* length */
		0, 0, 0, 0,		/* CIE id */
		1, 'z', 'R', 0,		/* version, augmentation */
		1, 0x78, 16,		/* code align 1, data align -8, ra r16 */
		1, 0x1b,		/* augmentation: FDE pcrel|sdata4 */
		0x0c, 7, 8,		/* def_cfa rsp+8 */
		0x90, 1,		/* offset r16 at cfa-8 */
		0, 0,			/* nop */
	};
	uint64_t eh = addr + ((size + 7) & ~7ull), fde = eh + 24, hdr;
	uint8_t *f = buf + 24, *h;
	int32_t v;
	uint32_t u;

	memcpy(buf, cie, sizeof(cie));
	memset(f, 0, 24 + 4);
	f[0] = 20;			/* length */
	f[4] = 28;			/* CIE pointer: back to the CIE */
	v = (int32_t)(addr - (fde + 8));	/* pc_begin, pcrel */
	memcpy(f + 8, &v, 4);
	u = (uint32_t)size;		/* pc_range */
	memcpy(f + 12, &u, 4);
	f[16] = 0;			/* augmentation data length */
	f[17] = 0x40 | (uint8_t)sub_end;	/* advance_loc */
	f[18] = 0x0e;			/* def_cfa_offset 32 */
	f[19] = 32;
	f[20] = 0x40 | (uint8_t)(add_end - sub_end);
	f[21] = 0x0e;			/* def_cfa_offset 8 */
	f[22] = 8;
	/* f[23] nop, then a zero terminator */
	hdr = fde + 24 + 4;
	h = buf + 52;
	h[0] = 1;			/* version */
	h[1] = 0x1b;			/* eh_frame_ptr: pcrel|sdata4 */
	h[2] = 0x03;			/* fde_count: udata4 */
	h[3] = 0x3b;			/* table: datarel|sdata4 */
	v = (int32_t)(eh - (hdr + 4));
	memcpy(h + 4, &v, 4);
	u = 1;
	memcpy(h + 8, &u, 4);
	v = (int32_t)(addr - hdr);	/* initial location */
	memcpy(h + 12, &v, 4);
	v = (int32_t)(fde - hdr);	/* FDE address */
	memcpy(h + 16, &v, 4);
	*hdr_size = 20;
	return 52 + 20;
}

static int jd_unwind(int fd, const uint8_t *data, uint64_t len,
		     uint64_t hdr_size)
{
	struct jd_rec h = { 4, 0, now_ns() };
	uint64_t mapped = len;
	size_t pad = (8 - (len % 8)) % 8;
	static const uint8_t zero[8];

	h.total_size = (uint32_t)(sizeof(h) + 24 + len + pad);
	return put(fd, &h, sizeof(h)) | put(fd, &len, 8) |
	       put(fd, &hdr_size, 8) | put(fd, &mapped, 8) |
	       put(fd, data, len) | put(fd, zero, pad);
}

/* the frameless pair, with their CFI when cfi is set */
static int write_fl(int fd, int cfi)
{
	uintptr_t base = (uintptr_t)page;
	uint8_t buf[128];
	uint64_t hsz;
	size_t n;
	int r = 0;

	if (cfi) {
		n = make_cfi(buf, base + FL_HOT_OFF, sizeof(jit_fl_hot_code),
			     FL_HOT_SUB_END, FL_HOT_ADD_END, &hsz);
		memcpy(page + FL_HOT_OFF + ((sizeof(jit_fl_hot_code) + 7) & ~7ul),
		       buf, n);
		r |= jd_unwind(fd, buf, n, hsz);
	}
	r |= jd_load(fd, "jit_fl_hot", base + FL_HOT_OFF,
		     sizeof(jit_fl_hot_code), 3);
	if (cfi) {
		n = make_cfi(buf, base + FL_OUTER_OFF, sizeof(jit_fl_outer_code),
			     FL_OUTER_SUB_END, FL_OUTER_ADD_END, &hsz);
		memcpy(page + FL_OUTER_OFF +
		       ((sizeof(jit_fl_outer_code) + 7) & ~7ul), buf, n);
		r |= jd_unwind(fd, buf, n, hsz);
	}
	r |= jd_load(fd, "jit_fl_outer", base + FL_OUTER_OFF,
		     sizeof(jit_fl_outer_code), 4);
	return r;
}

static int write_jitdump(const char *dir, int fl, int cfi)
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
	if (fl)
		return write_fl(fd, cfi) | close(fd) | r;
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
	int cfi = argc > 1 && !strcmp(argv[1], "jitcfi");
	int fl = cfi || (argc > 1 && !strcmp(argv[1], "jitnocfi"));
	int jitdump = fl || (argc > 1 && !strcmp(argv[1], "jitdump"));
	int perfmap = argc > 1 && !strcmp(argv[1], "perfmap");
	double seconds = wl_arg_seconds(argc, argv, jitdump ? 3 : 2, 5);
	double end, half;
	int late = 0;

	if ((!jitdump && !perfmap) || (jitdump && argc < 3)) {
		fprintf(stderr, "usage: sym-jit jitdump|jitcfi|jitnocfi DIR [SECONDS] | sym-jit perfmap [SECONDS]\n");
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
	memcpy(page + FL_HOT_OFF, jit_fl_hot_code, sizeof(jit_fl_hot_code));
	memcpy(page + FL_OUTER_OFF, jit_fl_outer_code, sizeof(jit_fl_outer_code));
	{
		int32_t rel = FL_HOT_OFF - (FL_CALL_AT + 5);

		memcpy(page + FL_CALL_AT + 1, &rel, sizeof(rel));
	}
	__builtin___clear_cache((char *)page, (char *)page + 4096);
	decoy_site();
	if (jitdump && write_jitdump(argv[2], fl, cfi)) {
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
	jit_entry = (jit_fn)(void *)(page + (fl ? FL_OUTER_OFF : OUTER_OFF));
	wl_ready();
	wl_wait_go();
	end = wl_now() + seconds;
	half = end - seconds / 2;
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
