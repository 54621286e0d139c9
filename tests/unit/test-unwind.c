/* SPDX-License-Identifier: MIT */
/*
 * test-unwind: unwind this very process from a snapshot of its registers
 * and stack, as sp-unwind does for a sample, and check the frames.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "elf/procs.h"
#include "unwind/unwind.h"
#include "unit.h"
#include "../jittramp.h"

#define STACK_COPY 32768

static uint64_t regs[20];		/* perf order for mask 0xff0fff */
static uint8_t stack[STACK_COPY];
static uint32_t stack_len;
static uint64_t stack_top;
static volatile int sink;

/*
 * Registers in perf's order: AX BX CX DX SI DI BP SP IP ... R8..R15 at 12..
 * The stack is copied word by word, as the kernel does, past the
 * sanitizer's red zones.
 */
__attribute__((noinline, no_sanitize_address)) static void capture(void)
{
	uint64_t sp, i;

	__asm__ volatile(
		"mov %%rbx, 8(%0)\n\t"
		"mov %%rbp, 48(%0)\n\t"
		"mov %%rsp, 56(%0)\n\t"
		"lea 0(%%rip), %%rax\n\t"
		"mov %%rax, 64(%0)\n\t"
		"mov %%r12, 128(%0)\n\t"
		"mov %%r13, 136(%0)\n\t"
		"mov %%r14, 144(%0)\n\t"
		"mov %%r15, 152(%0)\n\t"
		: : "r"(regs) : "rax", "memory");
	sp = regs[7];
	stack_len = stack_top - sp < STACK_COPY ? stack_top - sp : STACK_COPY;
	for (i = 0; i < stack_len; i += 8)
		*(volatile uint64_t *)(stack + i) = *(volatile uint64_t *)(sp + i);
}

__attribute__((noinline)) static void chain_c(void)
{
	capture();
	sink++;
}

__attribute__((noinline)) static void chain_b(void)
{
	chain_c();
	sink++;
}

__attribute__((noinline)) static void chain_a(void)
{
	chain_b();
	sink++;
}

/* (sinks of their own, or the compiler merges them with chain_*) */
__attribute__((noinline)) static void jit_c(void)
{
	capture();
	sink += 3;
}

__attribute__((noinline)) static void jit_b(void)
{
	jit_c();
	sink += 5;
}

/* Replay this process's executable mappings into procs. */
static void load_maps(struct sp_procs *procs, uint32_t pid)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];

	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perm[8], path[4096] = "";
		union {
			struct sp_mmap_rec m;
			uint8_t b[8192];
		} u;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &lo, &hi,
			   perm, &off, path) < 4)
			continue;
		if (!strcmp(path, "[stack]"))
			stack_top = hi;
		if (perm[2] != 'x')
			continue;
		memset(&u, 0, sizeof(u));
		u.m.hdr.type = SP_REC_MMAP;
		u.m.hdr.size = sp_align8(sizeof(u.m) + strlen(path) + 1);
		u.m.pid = u.m.tid = pid;
		u.m.start = lo;
		u.m.len = hi - lo;
		u.m.pgoff = off;
		u.m.prot = PROT_READ | PROT_EXEC;
		strcpy(u.m.filename, path);
		CHECK(sp_rec_check_common(&u.m.hdr) == NULL);
		sp_procs_apply(procs, &u.m.hdr);
		if (!strcmp(path, "[vdso]")) {
			struct sp_image_rec *im = malloc(sizeof(*im) + (hi - lo));

			im->hdr.type = SP_REC_IMAGE;
			im->hdr.size = sp_align8(sizeof(*im) + (hi - lo));
			im->pid = pid;
			im->start = lo;
			im->len = hi - lo;
			memcpy(im->data, (void *)lo, hi - lo);
			sp_procs_apply(procs, &im->hdr);
			free(im);
		}
	}
	fclose(f);
}

static const char *name_of(struct sp_proc *proc, uint64_t ip)
{
	const struct sp_map *m = sp_proc_map(proc, ip);
	enum sp_frame_origin o;
	const struct sp_sym *s;

	if (!m || !m->elf)
		return "?";
	s = sp_symtab_find(sp_elf_symtab(m->elf, &o), ip - m->bias);
	return s ? s->name : "?";
}

static int find_frames(struct sp_proc *proc, const struct sp_frames *f,
		       const char *const *want, int nwant)
{
	unsigned i;
	int w = 0;

	for (i = 0; i < f->nr_user && w < nwant; i++) {
		uint64_t ip = f->ips[i] - (f->flags[i] & SP_FRAME_PRECISE ? 0 : 1);

		if (!strcmp(name_of(proc, ip), want[w]))
			w++;
	}
	return w == nwant;
}

static int same_frames(const struct sp_frames *a, const struct sp_frames *b)
{
	return a->nr_user == b->nr_user && a->end == b->end &&
	       a->stack_flags == b->stack_flags &&
	       !memcmp(a->ips, b->ips, a->nr_user * sizeof(a->ips[0])) &&
	       !memcmp(a->flags, b->flags, a->nr_user);
}

/*
 * A sample through JIT code finishes from its thread's last stack above
 * the restart (memo.h) only where that changes nothing: samples whose
 * stacks above it differ in random words, in the words the unwinding
 * reads above all, come out the same from an unwinder with the memo and
 * one without.
 */
static void test_memo(struct sp_procs *procs, uint32_t pid)
{
	static const char *const want[] = {
		"capture", "jit_c", "jit_b", "jit_call_asm", "main",
	};
	struct sp_raw_header h = { .regs_mask = 0xff0fff, .stack_size = 65528 };
	struct sp_unwinder *memo = sp_unwinder_new(&h), *plain = sp_unwinder_new(&h);
	struct sp_raw_sample s = { .pid = pid, .tid = pid, .nr_regs = 20 };
	struct sp_raw_sample_view v = { &s, regs, NULL, stack };
	struct sp_frames *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct sp_frames *base_frames = malloc(sizeof(*base_frames));
	struct sp_proc *proc = sp_procs_find(procs, pid);
	static uint8_t base[STACK_COPY];
	uint64_t seed = 0x9e3779b97f4a7c15ull, hits, restart_sp = 0, ret[64];
	unsigned i, k, differ = 0, nret = 0;

	CHECK(memo && plain && a && b && base_frames && proc);
	sp_unwinder_set_memo(plain, 0);
	jit_call(jit_b);
	s.stack_len = stack_len;
	memcpy(base, stack, stack_len);

	CHECK(sp_unwind_sample(plain, proc, &v, b) == 0);
	CHECK(b->end == SP_END_COMPLETE);
	CHECK(find_frames(proc, b, want, 5));
	if (!find_frames(proc, b, want, 5))
		for (i = 0; i < b->nr_user; i++)
			fprintf(stderr, "  #%u %#llx %s\n", i,
				(unsigned long long)b->ips[i],
				name_of(proc, b->ips[i] - (i ? 1 : 0)));
	/* the same sample twice: the second is the first's, from the memo */
	CHECK(sp_unwind_sample(memo, proc, &v, a) == 0 && same_frames(a, b));
	CHECK(sp_unwinder_memo_hits(memo) == 0);
	CHECK(sp_unwind_sample(memo, proc, &v, a) == 0 && same_frames(a, b));
	CHECK(sp_unwinder_memo_hits(memo) == 1);
	*base_frames = *b;

	/*
	 * Where the restart was (the slot above jit_call_asm's return
	 * address), and the slots of the return addresses above it, next to
	 * which the frames keep what the unwinding reads.
	 */
	for (k = 0; k + 8 <= stack_len; k += 8) {
		uint64_t w;

		memcpy(&w, base + k, 8);
		for (i = 1; i < b->nr_user; i++)
			if (w == b->ips[i] && nret < 64) {
				ret[nret++] = k;
				if (!strcmp(name_of(proc, w - 1), "jit_call_asm"))
					restart_sp = regs[7] + k + 8;
			}
	}
	CHECK(restart_sp != 0);

	for (i = 0; i < 3000; i++) {
		unsigned n = (unsigned)(seed >> 60) % 3, j;

		memcpy(stack, base, stack_len);
		/* every other sample as it was, so that the memo is the base's */
		for (j = 0; i % 2 && j <= n; j++) {
			uint64_t off, w;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			/*
			 * Mostly above the restart, where the memo's reads
			 * are: near a return address or anywhere there.
			 */
			switch (seed >> 33 & 3) {
			case 0:
			case 1:
				off = ret[(seed >> 12) % nret] +
				      8 * ((seed >> 24) % 7) - 24;
				if (off > stack_len - 8)
					off = 0;
				break;
			case 2:
				off = restart_sp - regs[7];
				off += (seed >> 8) % (stack_len - off);
				break;
			default:
				off = (seed >> 8) % stack_len;
			}
			off &= ~7ull;
			memcpy(&w, stack + off, 8);
			switch (seed >> 40 & 3) {
			case 0:
				w ^= 1ull << (seed >> 50 & 63);
				break;
			case 1:
				w = b->ips[(seed >> 44) % b->nr_user];
				break;
			case 2:
				w = regs[7] + (seed >> 20) % stack_len;
				break;
			default:
				w = 0;
			}
			memcpy(stack + off, &w, 8);
		}
		CHECK(sp_unwind_sample(plain, proc, &v, b) == 0);
		CHECK(sp_unwind_sample(memo, proc, &v, a) == 0);
		CHECK(same_frames(a, b));
		differ += !same_frames(b, base_frames);
	}
	hits = sp_unwinder_memo_hits(memo);
	/* the base samples were taken from the memo; not every changed one */
	CHECK(hits >= 1000 && hits < 3000);
	/* and the changed words made other stacks, not only the same */
	CHECK(differ >= 100);
	memcpy(stack, base, stack_len);
	free(base_frames);
	free(a);
	free(b);
	sp_unwinder_free(memo);
	sp_unwinder_free(plain);
}

int main(void)
{
	static const char *const want[] = {
		"capture", "chain_c", "chain_b", "chain_a", "main",
	};
	struct sp_raw_header h = { .regs_mask = 0xff0fff, .stack_size = 65528 };
	struct sp_elf_cache *cache = sp_elf_cache_new();
	struct sp_procs *procs = sp_procs_new(cache);
	struct sp_unwinder *u = sp_unwinder_new(&h);
	struct sp_raw_sample s = { .pid = 42, .tid = 42, .nr_regs = 20 };
	struct sp_raw_sample_view v = { &s, regs, NULL, stack };
	struct sp_frames *f = malloc(sizeof(*f));
	struct sp_proc *proc;
	unsigned opened;
	int i;

	CHECK(cache && procs && u && f);
	CHECK(jit_setup() == 0);
	load_maps(procs, 42);
	CHECK(stack_top != 0);
	chain_a();
	s.stack_len = stack_len;
	proc = sp_procs_find(procs, 42);
	CHECK(proc != NULL);

	CHECK(sp_unwind_sample(u, proc, &v, f) == 0);
	CHECK(f->end == SP_END_COMPLETE);
	CHECK(f->nr_user >= 6);
	CHECK(f->flags[0] == SP_FRAME_PRECISE && f->flags[1] == 0);
	CHECK(find_frames(proc, f, want, 5));
	if (!find_frames(proc, f, want, 5))
		for (i = 0; i < (int)f->nr_user; i++)
			fprintf(stderr, "  #%d %#llx %s\n", i,
				(unsigned long long)f->ips[i],
				name_of(proc, f->ips[i] - (i ? 1 : 0)));

	/* the same sample again: no file is opened a second time */
	opened = sp_elf_cache_opened(cache);
	for (i = 0; i < 100; i++)
		sp_unwind_sample(u, proc, &v, f);
	CHECK(f->end == SP_END_COMPLETE);
	CHECK(sp_elf_cache_opened(cache) == opened);

	/* a stack copy cut short ends as truncated, with the frames so far */
	s.stack_len = 16;
	CHECK(sp_unwind_sample(u, proc, &v, f) == 0);
	CHECK(f->end == SP_END_TRUNCATED);
	CHECK(f->nr_user >= 1 && f->nr_user < 4);

	/*
	 * The same stack cut after 256 bytes (and after 253: a word across
	 * the cut) and continued by a tail: complete again, marked spliced,
	 * with the same frames.
	 */
	{
		unsigned n = f->nr_user, cut[] = { 256, 253 }, k;
		uint64_t ips[8];

		s.stack_len = stack_len;
		CHECK(sp_unwind_sample(u, proc, &v, f) == 0);
		CHECK(f->stack_flags == 0);
		n = f->nr_user;
		memcpy(ips, f->ips, sizeof(ips));
		for (k = 0; k < 2; k++) {
			s.stack_len = cut[k];
			v.tail = stack + cut[k];
			v.tail_len = stack_len - cut[k];
			CHECK(sp_unwind_sample(u, proc, &v, f) == 0);
			CHECK(f->end == SP_END_COMPLETE);
			CHECK(f->stack_flags == SP_STACK_SPLICED);
			CHECK(f->nr_user == n &&
			      !memcmp(f->ips, ips, 8 * (n < 8 ? n : 8)));
		}
		/* a tail that ends too soon: cut, not spliced */
		v.tail_len = 64;
		CHECK(sp_unwind_sample(u, proc, &v, f) == 0);
		CHECK(f->end == SP_END_TRUNCATED);
		CHECK(f->stack_flags == 0);
		/* a copy that needs no tail does not use it */
		s.stack_len = stack_len;
		v.tail = stack;
		v.tail_len = 64;
		CHECK(sp_unwind_sample(u, proc, &v, f) == 0);
		CHECK(f->end == SP_END_COMPLETE && f->stack_flags == 0);
		v.tail = NULL;
		v.tail_len = 0;
	}

	test_memo(procs, 42);
	chain_a();
	s.stack_len = stack_len;

	/* no registers: nothing to unwind */
	s.nr_regs = 0;
	CHECK(sp_unwind_sample(u, proc, &v, f) == 0);
	CHECK(f->end == SP_END_NOREGS && f->nr_user == 0);

	/*
	 * A process with no known mappings has no CFI: libunwind may only
	 * follow frame pointers, and nothing may be read from files.
	 */
	s.nr_regs = 20;
	s.stack_len = stack_len;
	s.pid = 43;
	proc = sp_procs_get(procs, 43);
	CHECK(proc != NULL);
	CHECK(sp_unwind_sample(u, proc, &v, f) == 0);
	CHECK(f->nr_user >= 1);
	CHECK(sp_elf_cache_opened(cache) == opened);

	free(f);
	sp_unwinder_free(u);
	sp_procs_free(procs);
	sp_elf_cache_free(cache);
	return unit_done("test-unwind");
}
