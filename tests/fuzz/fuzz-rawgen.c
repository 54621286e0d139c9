// SPDX-License-Identifier: MIT
/*
 * fuzz-rawgen.c: the unwinder (lib/unwind/) over raw streams that are
 * valid, built from the input by a small grammar of records.  With
 * RAWGEN_SYMBOLIZE defined to 1 (fuzz-rawsym.c) the symbolizer reads what
 * the unwinder writes and sp-fold's reader what the symbolizer writes:
 * sp-unwind | sp-symbolize | sp-fold in one process.
 *
 * Mutated bytes of a real recording rarely get past the record checks, and
 * when they do their registers point nowhere: fuzz-raw tests the checks,
 * this harness what lies behind them.  The records map real files where
 * this process has them (libc, the dynamic loader, this very binary
 * through /proc/self/exe, the vDSO as an IMAGE of its bytes) or at fixed
 * addresses (the go tool when it is there, anonymous JIT memory with
 * PERFMAP text), and the samples' registers and stack words are built from
 * words that point into that code (at the starts of its functions as
 * .eh_frame_hdr lists them, or anywhere in it), into the stack copy, or
 * anywhere; or a sample is a snapshot of this process's own stack, a few
 * words changed.  The table of files and the snapshot are made on the
 * first input and never change: nothing of an input is kept.  The grammar:
 *
 *	input   = opts *op
 *	opts    = u8   bits 0-1: register mask (all 20, all but BP, only SP
 *	               and IP); bit 2: 65528-byte stack copies (else 8192);
 *	               bit 3: no mappings made first; bit 5: no summary;
 *	               bit 6: a 112-byte header; with RAWGEN_SYMBOLIZE, bit 4:
 *	               --no-lines, bit 7: --no-inline
 *	op      = u8 (which record) and its arguments: SAMPLE (with its TAIL
 *	          when asked), COMM, MMAP (with the IMAGE of the vDSO), FORK,
 *	          EXIT, LOST, THROTTLE, KSYM, PERFMAP, SWITCH, PYCODE, a
 *	          SAMPLE with its PYSTACK, or any record as bytes
 *	word    = u8 (kind) and its bytes: u64 | code pointer | stack address
 *	          | small number
 *
 * When the input runs out every field reads as 0.  Everything a stage
 * writes must be accepted by the next: a record refused there is a
 * finding.  Without the symbolizer, the stream is unwound a second time
 * with the unwinder's memo off (unwind/memo.h), which must change nothing
 * that is written.  Files are read, never written (fuzz.h).
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/io.h"
#include "elf/buildid.h"
#include "format/python.h"
#include "format/raw.h"
#include "format/tail.h"
#include "symbolize/symstream.h"
#include "unwind/unwstream.h"
#include "fuzz.h"
#include "../jittramp.h"

#ifndef RAWGEN_SYMBOLIZE
#define RAWGEN_SYMBOLIZE 0
#endif

/* perf's x86_64 register numbers */
#define R_BP	6
#define R_SP	7
#define R_IP	8

#define STACK_BASE	0x7ffe00000000ull
#define KERNEL_BASE	0xffffffff81000000ull
#define ANON_START	0x7f2000000000ull
#define ANON_LEN	0x100000ull
#define NPIDS		4

/*
 * A snapshot of this process's own registers and stack, taken once: with
 * the files mapped where this process has them, a sample made of it
 * unwinds through real frames (libFuzzer's or replay.c's, main, libc's
 * start) to _start, and the input changes words of it.
 */
static struct {
	uint64_t regs[24];	/* by perf register number */
	uint8_t stack[65528];
	uint32_t len;
} live;

/* A file whose code the streams map, and the starts of its functions. */
struct file {
	const char *path;
	const char *loaded;	/* its name among this process's objects */
	uint64_t base;		/* where a shared object or PIE is loaded:
				   where this process has it, if it does */
	uint64_t start, len, pgoff;	/* its executable mapping */
	uint8_t bid[SP_BUILD_ID_MAX];
	int bid_len;
	uint64_t *fdes;		/* function starts, addresses */
	size_t nfdes;
	const uint8_t *image;	/* the bytes, for the vDSO */
};

static struct file files[] = {
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6", 0x7f0000000000ull },
	{ "/lib64/ld-linux-x86-64.so.2", "ld-linux-x86-64.so.2", 0x7f0100000000ull },
	{ "/proc/self/exe", "", 0x555500000000ull },
	{ "/usr/lib/go/bin/go", NULL, 0x7f0200000000ull },
	{ "[vdso]", NULL, 0x7fff00000000ull },
	{ "//anon", NULL, 0 },
	/* Debian's, stripped: _PyEval_EvalFrameDefault by .dynsym */
	{ "/usr/bin/python3.11", NULL, 0x7f0300000000ull },
};

#define NFILES (sizeof(files) / sizeof(files[0]))
#define VDSO (&files[4])
#define ANON (&files[5])

/* Bytes of a file, or of memory for the vDSO. */
static int get(const struct file *f, int fd, uint64_t off, void *buf,
	       size_t n)
{
	if (f->image) {
		memcpy(buf, f->image + off, n);
		return 0;
	}
	return pread(fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

static int enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x03: case 0x0b: return 4;
	case 0x04: case 0x0c: return 8;
	default: return -1;
	}
}

/* The function starts of the binary search table of .eh_frame_hdr. */
static void read_fdes(struct file *f, int fd, const Elf64_Phdr *eh)
{
	uint8_t *h;
	uint64_t count = 0, i, table;
	int ps, cs;

	if (eh->p_filesz < 4 || eh->p_filesz > (64u << 20))
		return;
	h = malloc(eh->p_filesz);
	if (!h || get(f, fd, eh->p_offset, h, eh->p_filesz) || h[0] != 1 ||
	    h[3] != 0x3b || (ps = enc_size(h[1])) < 0 ||
	    (cs = enc_size(h[2])) < 0 || eh->p_filesz < 4u + ps + cs) {
		free(h);
		return;
	}
	memcpy(&count, h + 4 + ps, (size_t)cs);
	table = 4 + (uint64_t)ps + (uint64_t)cs;
	if (count > (eh->p_filesz - table) / 8)
		count = (eh->p_filesz - table) / 8;
	f->fdes = malloc((count ? count : 1) * sizeof(*f->fdes));
	if (!f->fdes)
		abort();
	for (i = 0; i < count; i++) {
		int32_t loc;

		memcpy(&loc, h + table + 8 * i, 4);
		f->fdes[i] = f->base + eh->p_vaddr + (uint64_t)(int64_t)loc;
	}
	f->nfdes = count;
	free(h);
}

/* Where this process has loaded the object called f->loaded. */
static int find_base(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct file *f = arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *slash = strrchr(name, '/');

	if (strcmp(slash ? slash + 1 : name, f->loaded))
		return 0;
	f->base = info->dlpi_addr;
	return 1;
}

/* Where f's code is mapped, its build-id and its functions. */
static void load_file(struct file *f)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph, frame = { 0 };
	int fd = -1, i, text = 0;

	if (f == ANON) {
		f->start = ANON_START;
		f->len = ANON_LEN;
		f->pgoff = ANON_START;
		return;
	}
	if (f == VDSO) {
		f->image = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
		f->base = (uint64_t)(uintptr_t)f->image;
	} else {
		fd = open(f->path, O_RDONLY | O_CLOEXEC);
	}
	if (f->loaded)
		dl_iterate_phdr(find_base, f);
	if ((!f->image && fd < 0) || get(f, fd, 0, &eh, sizeof(eh)) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	if (eh.e_type == ET_EXEC)
		f->base = 0;
	for (i = 0; i < eh.e_phnum; i++) {
		if (get(f, fd, eh.e_phoff + (uint64_t)i * sizeof(ph), &ph,
			sizeof(ph)))
			goto out;
		if (ph.p_type == PT_LOAD && ph.p_flags & PF_X && !text) {
			f->start = f->base + (ph.p_vaddr & ~0xfffull);
			f->len = ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull) -
				 (ph.p_vaddr & ~0xfffull);
			f->pgoff = ph.p_offset & ~0xfffull;
			text = 1;
		}
		if (ph.p_type == PT_GNU_EH_FRAME)
			frame = ph;
	}
	if (frame.p_type)
		read_fdes(f, fd, &frame);
	if (fd >= 0) {
		int n = sp_build_id_fd(fd, f->bid);

		f->bid_len = n > 0 ? n : 0;
	}
out:
	if (!text)
		f->len = 0;	/* not there: never mapped */
	if (fd >= 0)
		close(fd);
}

/*
 * Registers in perf's order and the stack above them, copied word by word
 * as the kernel does, past the sanitizer's red zones.
 */
__attribute__((noinline, no_sanitize_address)) static void capture(void)
{
	pthread_attr_t a;
	uint64_t top, sp, i;
	size_t size;
	void *lo;

	__asm__ volatile(
		"mov %%rbx, 8(%0)\n\t"
		"mov %%rbp, 48(%0)\n\t"
		"mov %%rsp, 56(%0)\n\t"
		"lea 0(%%rip), %%rax\n\t"
		"mov %%rax, 64(%0)\n\t"
		"mov %%r12, 160(%0)\n\t"
		"mov %%r13, 168(%0)\n\t"
		"mov %%r14, 176(%0)\n\t"
		"mov %%r15, 184(%0)\n\t"
		: : "r"(live.regs) : "rax", "memory");
	if (pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &lo, &size)) {
		top = (uint64_t)(uintptr_t)lo + size;
		sp = live.regs[R_SP];
		live.len = top - sp < sizeof(live.stack) ?
			   (uint32_t)(top - sp) & ~7u : sizeof(live.stack);
		for (i = 0; i < live.len; i += 8)
			*(volatile uint64_t *)(live.stack + i) =
				*(volatile uint64_t *)(uintptr_t)(sp + i);
	}
	pthread_attr_destroy(&a);
}

/*
 * The snapshot is taken through a JIT trampoline (../jittramp.h): its
 * samples restart libunwind above it, as Python's do, and those of one
 * thread in a row are what the unwinder's memo is for, which check_memo()
 * holds to changing nothing.
 */
static void snapshot(void)
{
	if (jit_setup())
		abort();
	jit_call(capture);
}

static void load_files(void)
{
	static int done;
	size_t i;

	if (done)
		return;
	done = 1;
	for (i = 0; i < NFILES; i++)
		load_file(&files[i]);
	snapshot();
}

/* The input, read field by field; 0 once it runs out. */
struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, size_t n)
{
	uint64_t v = 0;

	if (n > in->n)
		n = in->n;
	memcpy(&v, in->p, n);
	in->p += n;
	in->n -= n;
	return v;
}

#define U8(in)	((uint8_t)take(in, 1))
#define U16(in)	((uint16_t)take(in, 2))
#define U32(in)	((uint32_t)take(in, 4))
#define U64(in)	take(in, 8)

/* The stream being built. */
struct gen {
	uint8_t *buf;
	size_t len, cap;
	size_t last;		/* offset of the record added last */
	uint64_t regs_mask;
	uint32_t stack_size;
	uint64_t time;
	uint64_t samples;
};

/*
 * The stream's buffer, kept from one input to the next: growing it anew
 * for each input (megabytes, with 64 KiB stack copies) had ASan map and
 * unmap it every time, a sixth of the harness's time in TLB flushes.  The
 * readers never see it: they read a memfd copy of its first len bytes.
 */
static uint8_t *stream_buf;
static size_t stream_cap;

static void *add(struct gen *g, uint32_t type, size_t size)
{
	struct sp_rec_hdr *h;

	size = sp_align8(size);
	if (g->len + size > g->cap) {
		g->cap = 2 * (g->len + size);
		g->buf = realloc(g->buf, g->cap);
		if (!g->buf)
			abort();
		stream_buf = g->buf;
		stream_cap = g->cap;
	}
	h = (struct sp_rec_hdr *)(g->buf + g->len);
	g->last = g->len;
	memset(h, 0, size);
	h->type = type;
	h->size = (uint32_t)size;
	g->len += size;
	return h;
}

static const struct file *pick_file(uint8_t b)
{
	const struct file *f = &files[b % NFILES];

	return f->len ? f : &files[0];
}

/* A code address: a function's start and a little after, or anywhere. */
static uint64_t code_addr(struct in *in, const struct file *f)
{
	uint16_t k = U16(in);

	if (!f->len)
		return 0;
	if (f->nfdes)
		return f->fdes[k % f->nfdes] + U8(in) % 64;
	return f->start + ((uint64_t)k * 64) % f->len;
}

/* A word of a register or of a stack: see the grammar above. */
static uint64_t word(struct in *in, uint64_t sp, uint64_t span)
{
	uint8_t s;

	if (!in->n)
		return 0;
	s = U8(in);
	switch (s & 3) {
	case 0:
		return U64(in);
	case 1:
		return code_addr(in, pick_file(s >> 2));
	case 2:
		return sp + ((uint64_t)U16(in) * 8) % (span + 64);
	default:
		return s >> 2;
	}
}

static uint32_t pid_of(uint8_t sel)
{
	return 1000 + sel % NPIDS;
}

static uint32_t tid_of(uint8_t sel)
{
	return pid_of(sel) + (sel >> 2) % 3;
}

static void fill_words(struct in *in, uint8_t *p, size_t len, uint64_t sp,
		       uint64_t span)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t w = word(in, sp, span);

		memcpy(p + i, &w, 8);
	}
	for (; i < len; i++)
		p[i] = U8(in);
}

/* A sample of the snapshot, a few of its stack words changed. */
static void op_live(struct gen *g, struct in *in, uint32_t pid, uint32_t tid)
{
	unsigned nregs = (unsigned)__builtin_popcountll(g->regs_mask);
	uint32_t len = live.len < g->stack_size ? live.len : g->stack_size;
	uint8_t npatch = U8(in) % 8, i;
	struct sp_raw_sample *s;
	uint64_t *parts;
	unsigned r, k;

	g->time++;
	s = add(g, SP_REC_SAMPLE, sizeof(*s) + 8 * nregs + len);
	s->time = g->time;
	s->pid = pid;
	s->tid = tid;
	s->misc = 2;
	s->abi = 2;
	s->period = 1000000;
	s->ip = live.regs[R_IP];
	s->nr_regs = (uint16_t)nregs;
	s->stack_len = len;
	parts = (uint64_t *)(s + 1);
	for (r = 0, k = 0; r < 24; r++)
		if (g->regs_mask >> r & 1)
			parts[k++] = live.regs[r];
	memcpy(parts + nregs, live.stack, len);
	for (i = 0; i < npatch && len >= 8; i++) {
		uint32_t at = U16(in) * 8u % len;
		uint64_t w = word(in, live.regs[R_SP], len);

		memcpy((uint8_t *)(parts + nregs) + at, &w, 8);
	}
	g->samples++;
}

/*
 * A sample: sel u8 (pid, tid), fl u8 (bit 0: no registers, 1: a TAIL
 * first, 2: kernel frames, 3: in the kernel, 4: a copy cut inside a word,
 * 5: a huge period, 6: of the snapshot, then op_live()), stack_len u16,
 * sp u8, [cut u8], [tail: len u16, kept u8, words], ip word, bp word,
 * [kernel: n u8, n u16], stack words.
 */
static void op_sample(struct gen *g, struct in *in)
{
	uint8_t sel = U8(in), fl = U8(in);
	uint32_t pid = pid_of(sel), tid = tid_of(sel), stack_len;
	unsigned nregs = fl & 1 ? 0 : (unsigned)__builtin_popcountll(g->regs_mask);
	uint64_t regs[64] = { 0 }, tail_len = 0, kept = 0, sp;
	unsigned nk = 0, i, r, k;
	struct sp_raw_sample *s;
	uint64_t *parts;

	if (fl & 64 && live.len) {
		op_live(g, in, pid, tid);
		return;
	}
	stack_len = U16(in) % (g->stack_size + 1);
	sp = STACK_BASE + ((uint64_t)U8(in) << 4);
	if (fl & 16 && stack_len >= 8)
		stack_len -= 1u + U8(in) % 7;	/* a copy cut inside a word */
	g->time++;
	if (fl & 2) {
		struct sp_tail_rec *t;

		tail_len = U16(in);
		kept = ((uint64_t)U8(in) * 8) % (tail_len + 1);
		t = add(g, SP_REC_TAIL, sizeof(*t) + tail_len - kept);
		t->time = g->time;
		t->pid = pid;
		t->tid = tid;
		t->start = sp + stack_len;
		t->len = (uint32_t)tail_len;
		t->kept = (uint32_t)kept;
		fill_words(in, t->data, tail_len - kept, sp,
			   stack_len + tail_len);
	}
	regs[R_IP] = word(in, sp, stack_len + tail_len);
	regs[R_SP] = sp;
	regs[R_BP] = word(in, sp, stack_len + tail_len);
	if (fl & 4)
		nk = U8(in) % 16;
	s = add(g, SP_REC_SAMPLE, sizeof(*s) + 8 * (nregs + nk) + stack_len);
	s->time = g->time;
	s->pid = pid;
	s->tid = tid;
	s->cpu = sel >> 4;
	s->misc = fl & 8 ? 1 : 2;	/* PERF_RECORD_MISC_KERNEL, _USER */
	s->abi = nregs ? 2 : 0;		/* PERF_SAMPLE_REGS_ABI_64 */
	s->period = fl & 32 ? UINT64_MAX : 1000000;
	s->ip = fl & 8 ? KERNEL_BASE : regs[R_IP];
	s->nr_regs = (uint16_t)nregs;
	s->nr_kernel = (uint16_t)nk;
	s->stack_len = stack_len;
	parts = (uint64_t *)(s + 1);
	for (r = 0, k = 0; r < 64 && nregs; r++)
		if (g->regs_mask >> r & 1)
			parts[k++] = regs[r];
	for (i = 0; i < nk; i++) {
		uint16_t a = U16(in);

		parts[nregs + i] = a & 0x8000 ? 0xffffffffc0001000ull + (a & 0xff) :
				   KERNEL_BASE + (uint64_t)a * 16;
	}
	fill_words(in, (uint8_t *)(parts + nregs + nk), stack_len, sp,
		   stack_len + tail_len);
	g->samples++;
}

static void mmap_file(struct gen *g, uint32_t pid, const struct file *f,
		      uint8_t how, uint16_t skip)
{
	static const char deleted[] = " (deleted)";
	size_t plen = strlen(f->path) + (how & 8 ? sizeof(deleted) - 1 : 0);
	uint64_t cut = f->len ? (uint64_t)skip % (f->len / 4096) * 4096 : 0;
	struct sp_mmap_rec *m;

	if (!f->len)
		return;
	m = add(g, SP_REC_MMAP, sizeof(*m) + plen + 1);
	m->time = g->time;
	m->pid = m->tid = pid;
	m->start = f->start + (how & 4 ? cut : 0);
	m->len = f->len - (how & 4 ? cut : 0);
	m->pgoff = f->pgoff + (how & 4 && f != ANON ? cut : 0);
	m->prot = 5;			/* PROT_READ | PROT_EXEC */
	m->mflags = 2;			/* MAP_PRIVATE */
	m->flags = how & 16 ? SP_REC_SYNTH : 0;
	if (how & 1) {
		m->build_id_size = 20;
		memset(m->build_id, 0xee, 20);
	} else if (!(how & 2)) {
		m->build_id_size = (uint8_t)f->bid_len;
		memcpy(m->build_id, f->bid, (size_t)f->bid_len);
	}
	strcpy(m->filename, f->path);
	if (how & 8)
		strcat(m->filename, deleted);
	if (f == VDSO) {
		uint64_t n = how & 32 ? 0 : f->len;
		struct sp_image_rec *im = add(g, SP_REC_IMAGE, sizeof(*im) + n);

		im->time = g->time;
		im->pid = pid;
		im->start = f->start;
		im->len = n;
		memcpy(im->data, f->image, n);
	}
}

static void op_mmap(struct gen *g, struct in *in)
{
	uint8_t sel = U8(in), fsel = U8(in), how = U8(in);

	mmap_file(g, pid_of(sel), pick_file(fsel), how, U16(in));
}

static void op_comm(struct gen *g, struct in *in)
{
	static const char *const names[] = {
		"main", "worker-1", "python3", "0123456789abcde", "",
	};
	uint8_t sel = U8(in), how = U8(in);
	struct sp_comm_rec *c = add(g, SP_REC_COMM, sizeof(*c));

	c->time = g->time;
	c->pid = pid_of(sel);
	c->tid = tid_of(sel);
	c->flags = how & 1 ? SP_COMM_EXEC : 0;
	strcpy(c->comm, names[(how >> 1) % 5]);
}

static void op_task(struct gen *g, struct in *in, uint32_t type)
{
	uint8_t sel = U8(in), parent = U8(in);
	struct sp_task_rec *t = add(g, type, sizeof(*t));

	t->time = g->time;
	t->pid = pid_of(sel);
	t->tid = tid_of(sel);
	t->ppid = pid_of(parent);
	t->ptid = tid_of(parent);
}

static void op_ksym(struct gen *g, struct in *in)
{
	static const char *const names[] = {
		"do_syscall_64", "schedule", "nvme_irq [nvme]", "x",
	};
	uint16_t at = U16(in), size = U16(in);
	const char *name = names[U8(in) % 4];
	struct sp_ksym_rec *k = add(g, SP_REC_KSYM, sizeof(*k) + strlen(name) + 1);

	k->start = KERNEL_BASE + (uint64_t)at * 16;
	k->size = size;
	strcpy(k->name, name);
}

/* Lines of a perf map over the JIT memory: START SIZE name. */
static void op_perfmap(struct gen *g, struct in *in)
{
	uint8_t sel = U8(in), how = U8(in), n = how >> 1 & 7, i;
	char text[8 * 64];
	size_t len = 0;
	struct sp_perfmap_rec *m;

	for (i = 0; i < n; i++) {
		uint16_t at = U16(in);
		uint8_t size = U8(in);

		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"%llx %x jit_fn_%u\n",
					(unsigned long long)(ANON_START + at * 16ull),
					size, i);
	}
	m = add(g, SP_REC_PERFMAP, sizeof(*m) + len);
	m->time = g->time;
	m->pid = pid_of(sel);
	m->flags = how & 1 ? SP_PERFMAP_RESET : 0;
	m->len = len;
	memcpy(m->text, text, len);
}

/* Any record, its type and bytes from the input, framed soundly. */
static void op_bytes(struct gen *g, struct in *in)
{
	uint8_t type = U8(in) % SP_REC_TYPE_MAX, n = U8(in);
	struct sp_rec_hdr *h = add(g, type, sizeof(*h) + 8u * n);
	size_t i;

	for (i = 0; i < 8u * n; i++)
		((uint8_t *)(h + 1))[i] = U8(in);
}

/*
 * Time off the CPU: a SWITCH out or in of a thread, or a stack sampled at a
 * switch-out (a sample made OFFCPU), with the thread's next switch-in.
 */
static void op_switch(struct gen *g, struct in *in)
{
	uint8_t sel = U8(in), fl = U8(in);
	struct sp_switch_rec *w;

	if (fl & 1) {
		op_sample(g, in);
		((struct sp_rec_hdr *)(g->buf + g->last))->type = SP_REC_OFFCPU;
		g->samples -= g->samples > 0;
	}
	g->time += fl >> 4;
	/* bit 3: an older SWITCH, without cpu and flags */
	w = add(g, SP_REC_SWITCH, fl & 8 ? sizeof(*w) - 8 : sizeof(*w));
	w->time = g->time;
	w->pid = pid_of(sel);
	w->tid = tid_of(sel);
	if (!(fl & 8)) {
		w->cpu = fl >> 6;
		w->flags = (fl >> 1) & 3;
	}
}

/*
 * CPython's frames: sel u8, fl u8; bit 0: a PYCODE of code ID 1 to 8
 * (fl bits 1-3) with a qualname, file name and location table from the
 * input; else a PYSTACK (flags fl bits 1-2) of up to 16 frames of code IDs
 * 0 to 9 before a sample (op_sample), made the sample's own unless bit 3.
 */
static void op_python(struct gen *g, struct in *in)
{
	uint8_t sel = U8(in), fl = U8(in);
	struct sp_pystack_rec *p;
	const struct sp_raw_sample *s;
	size_t at, i;
	unsigned n;

	if (fl & 1) {
		unsigned q = U8(in) % 24, f = U8(in) % 24, t = U8(in);
		struct sp_pycode_rec *c = add(g, SP_REC_PYCODE,
					      sizeof(*c) + q + f + t);
		uint8_t *d = (uint8_t *)(c + 1);

		c->time = g->time;
		c->pid = pid_of(sel);
		c->id = 1 + (fl >> 1) % 8;
		c->bytecode = ANON_START + ((uint64_t)U16(in) << 4);
		c->firstlineno = U16(in);
		c->qualname_len = q;
		c->filename_len = f;
		c->linetable_len = t;
		for (i = 0; i < q + f; i++)
			d[i] = (uint8_t)('a' + U8(in) % 26);
		for (; i < q + f + t; i++)
			d[i] = U8(in);
		return;
	}
	n = U8(in) % 17;
	at = g->len;
	p = add(g, SP_REC_PYSTACK, sizeof(*p) + 8u * n);
	p->n = (uint16_t)n;
	p->flags = (fl >> 1) & 3;
	for (i = 0; i < n; i++) {
		uint8_t b = U8(in);

		((uint64_t *)(p + 1))[i] = sp_pyf_make(b % 10,
			(uint32_t)(b & 0xc0) << 24 | U16(in));
	}
	op_sample(g, in);
	s = (const void *)(g->buf + g->last);
	p = (void *)(g->buf + at);
	p->pid = pid_of(sel);
	p->tid = tid_of(sel);
	p->time = g->time;
	if (!(fl & 8) && s->hdr.type == SP_REC_SAMPLE) {
		p->pid = s->pid;
		p->tid = s->tid;
		p->time = s->time;
	}
}

static void build(struct gen *g, struct in *in, uint8_t opts)
{
	static const uint64_t masks[4] = {
		0xff0fffull, 0xff0fffull, 0xff0fffull & ~(1ull << R_BP),
		1ull << R_SP | 1ull << R_IP,
	};
	struct sp_raw_header *h;
	struct sp_raw_summary *sum;
	size_t i, hsize = opts & 64 ? SP_RAW_HEADER_MIN : sizeof(*h);
	unsigned nrec = 0;

	g->regs_mask = masks[opts & 3];
	g->stack_size = opts & 4 ? 65528 : 8192;
	if (!stream_buf) {
		stream_cap = 65536;
		stream_buf = malloc(stream_cap);
		if (!stream_buf)
			abort();
	}
	g->buf = stream_buf;
	g->cap = stream_cap;
	h = (struct sp_raw_header *)g->buf;
	memset(h, 0, sizeof(*h));
	memcpy(h->h.magic, SP_RAW_MAGIC, SP_MAGIC_LEN);
	h->h.version = SP_RAW_VERSION;
	h->h.header_size = (uint32_t)hsize;
	h->ev.type = 1;			/* PERF_TYPE_SOFTWARE */
	h->ev.flags = SP_EV_FREQ | SP_EV_KERNEL |
		      ((opts & 3) == 3 ? SP_EV_SWITCH | SP_EV_OFFCPU : 0);
	h->ev.freq_or_period = 99;
	h->ev.clockid = 1;
	h->ev.ncpus = 2;
	strcpy(h->ev.name, "cpu-clock");
	h->regs_mask = g->regs_mask;
	h->stack_size = g->stack_size;
	h->start_realtime = 1700000000000000000ull;
	g->len = hsize;

	if (!(opts & 8)) {
		struct sp_comm_rec *c = add(g, SP_REC_COMM, sizeof(*c));

		c->pid = c->tid = pid_of(0);
		c->flags = SP_REC_SYNTH | SP_COMM_EXEC;
		strcpy(c->comm, "prog");
		for (i = 0; i < NFILES; i++)
			mmap_file(g, pid_of(0), &files[i], 16, 0);
	}
	while (in->n && nrec++ < 256) {
		switch (U8(in) % 14) {
		case 0: case 1: case 2: op_sample(g, in); break;
		case 3: op_mmap(g, in); break;
		case 4: op_comm(g, in); break;
		case 5: op_task(g, in, SP_REC_FORK); break;
		case 6: op_task(g, in, SP_REC_EXIT); break;
		case 7: {
			struct sp_lost_rec *l = add(g, SP_REC_LOST, sizeof(*l));

			l->time = g->time;
			l->lost = U32(in);
			break;
		}
		case 8: {
			struct sp_throttle_rec *t = add(g, SP_REC_THROTTLE,
							sizeof(*t));

			t->time = g->time;
			t->throttled = U8(in) & 1;
			break;
		}
		case 9: op_ksym(g, in); break;
		case 10: op_perfmap(g, in); break;
		case 11: op_switch(g, in); break;
		case 12: op_python(g, in); break;
		default: op_bytes(g, in); break;
		}
	}
	if (opts & 32)
		return;
	sum = add(g, SP_REC_SUMMARY, sizeof(*sum));
	sum->samples = g->samples;
	sum->threads = sum->processes = 1;
	sum->start_time = 0;
	sum->end_time = sum->duration_ns = g->time;
}

/* sp-symbolize's side of the pipe, when asked for. */
struct stages {
	struct sp_procs *procs;
	struct sp_symbolizer *sym;
	struct sp_symstream *ss;
	struct sp_out *out;
	int tfd;		/* where out writes */
	uint8_t *recs;		/* without the symbolizer: what was written */
	size_t nrecs, caprecs;
};

static int write_text(void *arg, const struct sp_st_rec *rec)
{
	return sp_st_write(arg, rec);
}

/* What sp-unwind writes goes to sp-symbolize, which must take all of it. */
static int emit(void *arg, const struct sp_rec_hdr *rec)
{
	struct stages *p = arg;

	if (rec->size < 8 || rec->size % 8 || rec->type >= SP_REC_TYPE_MAX ||
	    rec->type == SP_REC_TAIL || rec->type == SP_REC_PYSTACK ||
	    !fz_unwound_ok(rec))
		abort();
	if (p->ss && sp_symstream_feed(p->ss, rec))
		abort();
	if (!RAWGEN_SYMBOLIZE) {
		if (SP_GROW(p->recs, p->caprecs, p->nrecs + rec->size))
			abort();
		memcpy(p->recs + p->nrecs, rec, rec->size);
		p->nrecs += rec->size;
	}
	return 0;
}

/*
 * The stream again through an unwinder that takes nothing from its memo
 * (unwind/memo.h): it must write what the first wrote, byte for byte.
 */
static void check_memo(const struct gen *g, const struct stages *p)
{
	struct stages q = { 0 };
	const struct sp_rec_hdr *rec;
	struct sp_raw_header rh;
	struct sp_unwstream *u;
	struct sp_in *sin;
	int r;

	sin = sp_in_fdopen(fz_memfd(g->buf, g->len), "fuzz");
	if (!sin || sp_in_header(sin, SP_RAW_MAGIC, SP_RAW_VERSION, &rh,
				 SP_RAW_HEADER_MIN, sizeof(rh)))
		abort();
	u = sp_unwstream_new_cached(&rh, fz_elf_cache(), emit, &q);
	if (!u)
		abort();
	sp_unwstream_set_memo(u, 0);
	while ((r = sp_in_next(sin, &rec)) > 0)
		if (sp_unwstream_feed(u, rec))
			abort();
	if (r || sp_unwstream_finish(u) || q.nrecs != p->nrecs || memcmp(q.recs, p->recs, p->nrecs))
		abort();
	sp_unwstream_free(u);
	sp_in_close(sin);
	free(q.recs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct gen g = { 0 };
	struct stages p = { 0 };
	struct sp_raw_header rh;
	struct sp_unw_header uh;
	const struct sp_rec_hdr *rec;
	struct sp_elf_cache *cache;
	struct sp_unwstream *u;
	struct sp_in *sin;
	uint8_t opts;
	int r;

	load_files();
	opts = U8(&in);
	build(&g, &in, opts);
	sin = sp_in_fdopen(fz_memfd(g.buf, g.len), "fuzz");
	if (!sin || sp_in_header(sin, SP_RAW_MAGIC, SP_RAW_VERSION, &rh,
				 SP_RAW_HEADER_MIN, sizeof(rh)) ||
	    sp_raw_header_check(&rh))
		abort();	/* the header is ours: it must pass */
	cache = fz_elf_cache();
	u = sp_unwstream_new_cached(&rh, cache, emit, &p);
	if (!u)
		abort();
	if (RAWGEN_SYMBOLIZE) {
		p.procs = sp_procs_new(cache);
		p.sym = p.procs ? sp_symbolizer_new(p.procs) : NULL;
		if (!p.sym || sp_symbolizer_set_kallsyms(p.sym, fz_kallsyms()))
			abort();
		sp_symbolizer_set_flags(p.sym, SP_SYM_NO_SYSTEM_DEBUG |
					(opts & 16 ? SP_SYM_NO_LINES : 0) |
					(opts & 128 ? SP_SYM_NO_INLINES : 0));
		p.out = fz_out_memfd(&p.tfd);
		p.ss = sp_symstream_new(p.sym, write_text, p.out);
		sp_unwstream_header(u, &uh);
		if (!p.ss || sp_st_write_magic(p.out) ||
		    sp_symstream_header(p.ss, &uh))
			abort();
	}
	while ((r = sp_in_next(sin, &rec)) > 0)
		if (sp_unwstream_feed(u, rec))
			break;
	if (r == 0)
		r = sp_unwstream_finish(u);
	if (r == 0 && !RAWGEN_SYMBOLIZE)
		check_memo(&g, &p);
	if (r == 0 && p.ss) {
		uint8_t *text;
		size_t len;

		/* what sp-symbolize writes, sp-fold reads */
		if (sp_symstream_finish(p.ss) || sp_out_close(p.out))
			abort();
		p.out = NULL;
		text = fz_read_all(p.tfd, &len);
		fz_check_symtext(text, len);
		free(text);
	}
	sp_unwstream_free(u);
	if (p.ss) {
		sp_symstream_free(p.ss);
		sp_out_close(p.out);
		close(p.tfd);
		sp_symbolizer_free(p.sym);
		sp_procs_free(p.procs);
	}
	sp_in_close(sin);
	free(p.recs);
	return 0;
}
