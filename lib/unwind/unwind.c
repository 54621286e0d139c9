/* SPDX-License-Identifier: MIT */
/* unwind.c: remote libunwind over a sample's registers and stack copy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <libunwind-x86_64.h>

#include "base/clock.h"
#include "elf/jitdump.h"
#include "gostep.h"
#include "memo.h"
#include "missing.h"
#include "outermost.h"
#include "splice.h"
#include "unwind.h"

/* Exported by libunwind-x86_64 but missing from its public headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as,
					      unw_word_t ip,
					      unw_dyn_info_t *di,
					      unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

/* PERF_REG_X86_* numbers (arch/x86/include/uapi/asm/perf_regs.h). */
enum {
	PR_AX, PR_BX, PR_CX, PR_DX, PR_SI, PR_DI, PR_BP, PR_SP, PR_IP,
	PR_FLAGS, PR_CS, PR_SS, PR_DS, PR_ES, PR_FS, PR_GS,
	PR_R8, PR_R9, PR_R10, PR_R11, PR_R12, PR_R13, PR_R14, PR_R15,
	PR_MAX
};

/* libunwind's register numbers (DWARF order) to perf's. */
static const int unw_to_perf[] = {
	[UNW_X86_64_RAX] = PR_AX, [UNW_X86_64_RDX] = PR_DX,
	[UNW_X86_64_RCX] = PR_CX, [UNW_X86_64_RBX] = PR_BX,
	[UNW_X86_64_RSI] = PR_SI, [UNW_X86_64_RDI] = PR_DI,
	[UNW_X86_64_RBP] = PR_BP, [UNW_X86_64_RSP] = PR_SP,
	[UNW_X86_64_R8] = PR_R8, [UNW_X86_64_R9] = PR_R9,
	[UNW_X86_64_R10] = PR_R10, [UNW_X86_64_R11] = PR_R11,
	[UNW_X86_64_R12] = PR_R12, [UNW_X86_64_R13] = PR_R13,
	[UNW_X86_64_R14] = PR_R14, [UNW_X86_64_R15] = PR_R15,
	[UNW_X86_64_RIP] = PR_IP,
};

struct sp_unwinder {
	unw_accessors_t acc;
	int regidx[PR_MAX];	/* position in a sample's regs, or -1 */
	uint32_t stack_size;
	struct sp_u64map outermost;	/* sp_outermost()'s answers */
	int no_memo;
	uint64_t memo_hits;
};

/* What the accessors see while one sample is unwound. */
struct ctx {
	struct sp_unwinder *u;
	struct sp_proc *proc;
	uint64_t regs[PR_MAX];	/* by perf register number */
	uint32_t have;		/* bit per register in regs */
	uint64_t sp;
	const uint8_t *stack;
	uint32_t stack_len;
	struct sp_splice *splice;	/* the stack beyond the copy */
	int truncated;
	const struct sp_map *mod;	/* last module hit */
	struct as_slot *slot;
	/* unwind data of the JIT code find_proc_info last answered for */
	const uint8_t *blob;
	uint64_t blob_start, blob_len;
	/* the memo (memo.h): this run, and the thread's last; NULL: none */
	struct sp_memo_run *run;
	const struct sp_memo_run *last;
	int replaying;		/* reads asked again of this sample: not noted */
};

/* Per process: libunwind's address space and the process's jitdump. */
struct as_slot {
	unw_addr_space_t as;
	unsigned generation;
	struct sp_jitdump *jd;
	char *jd_path;		/* what jd was read from */
	off_t jd_size;		/* its size then, -1 before the first read */
	uint64_t jd_checked;	/* CLOCK_MONOTONIC ns of the last stat */
	struct sp_memo memo;	/* the last unwinding of its threads */
	/*
	 * Addresses of its files that no FDE covers (V8's builtins in node,
	 * say, below every JavaScript frame): libunwind remembers only the
	 * rules it found, and would search the table again at each step.
	 */
	struct sp_u64map no_fde;
};

/* How often a miss may stat a jitdump to see whether it grew. */
#define JD_RECHECK_NS 100000000ull

static const struct sp_map *module_of(struct ctx *c, uint64_t addr)
{
	if (c->mod && addr >= c->mod->start && addr < c->mod->end)
		return c->mod;
	c->mod = sp_proc_module(c->proc, addr);
	return c->mod;
}

static int encoded_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x03:	/* udata4 */
	case 0x0b:	/* sdata4 */
		return 4;
	case 0x04:	/* udata8 */
	case 0x0c:	/* sdata8 */
		return 8;
	default:
		return -1;
	}
}

/*
 * (Re)read the process's jitdump when it is another file than the one read,
 * or, at most every JD_RECHECK_NS, when it has grown: a JIT appends to it
 * while it runs.  Returns 1 when a new dump replaced the old one, else 0.
 */
static int jd_refresh(struct ctx *c, const char *path, int force)
{
	struct as_slot *s = c->slot;
	struct sp_jitdump *j;
	struct stat sb;
	uint64_t now;
	char *p;
	int err;

	if (s->jd_path && !strcmp(s->jd_path, path)) {
		if (!force)
			return 0;
		now = sp_clock_ns(CLOCK_MONOTONIC_COARSE);
		if (now - s->jd_checked < JD_RECHECK_NS)
			return 0;
		s->jd_checked = now;
	} else {
		p = strdup(path);
		if (!p)
			return 0;
		free(s->jd_path);
		s->jd_path = p;
		s->jd_size = -1;
		s->jd_checked = sp_clock_ns(CLOCK_MONOTONIC_COARSE);
	}
	if (stat(path, &sb) || !S_ISREG(sb.st_mode) || sb.st_size == s->jd_size)
		return 0;
	j = sp_jitdump_load(path, &err);
	if (!j)
		return 0;
	c->blob = NULL;		/* it pointed into the old dump */
	sp_jitdump_free(s->jd);
	s->jd = j;
	s->jd_size = sb.st_size;
	/* an address may hold other code now: drop cached rules */
	unw_flush_cache(s->as, 0, 0);
	return 1;
}

/* The jitdump code load holding ip, or NULL. */
static const struct sp_jit_code *jit_code(struct ctx *c, uint64_t ip)
{
	const char *path = sp_proc_jitdump(c->proc);
	const struct sp_jit_code *code = NULL;

	if (!path || !c->slot)
		return NULL;
	jd_refresh(c, path, 0);
	if (c->slot->jd)
		code = sp_jitdump_find(c->slot->jd, ip);
	if (!code && jd_refresh(c, path, 1))
		code = sp_jitdump_find(c->slot->jd, ip);
	return code;
}

/*
 * Check an .eh_frame_hdr of n bytes at h: version 1, a datarel|sdata4
 * table that fits.  Sets the table's offset in h and its entry count.
 */
static int eh_frame_hdr_table(const uint8_t *h, uint64_t n, uint64_t *table,
			      uint64_t *count)
{
	int ptr_size, count_size;
	uint64_t fde_count = 0;

	if (n < 4 || h[0] != 1 || h[3] != 0x3b)
		return -1;
	ptr_size = encoded_size(h[1]);
	count_size = encoded_size(h[2]);
	if (ptr_size < 0 || count_size < 0 ||
	    n < 4 + (uint64_t)ptr_size + (uint64_t)count_size)
		return -1;
	memcpy(&fde_count, h + 4 + ptr_size, (size_t)count_size);
	*table = 4 + (uint64_t)ptr_size + (uint64_t)count_size;
	if (fde_count > (n - *table) / 8)
		return -1;
	*count = fde_count;
	return 0;
}

/*
 * CFI of JIT code from its jitdump UNWINDING_INFO.  The .eh_frame and
 * .eh_frame_hdr encode their addresses relative to themselves (pcrel FDE
 * starts, datarel table), so they must be served at the addresses the JIT
 * computed them for, not at made-up ones: perf's genelf places .eh_frame
 * right after the code, at code_addr + ALIGN_8(code_size), and the header
 * after .eh_frame, which is where V8 and CPython put (and compute) them.
 * access_mem serves those bytes from the dump while this frame is parsed;
 * we have no other bytes of JIT memory to confuse them with.
 */
static int jit_proc_info(struct ctx *c, unw_addr_space_t as, unw_word_t ip,
			 unw_proc_info_t *pi, int need_unwind_info)
{
	const struct sp_jit_code *code = jit_code(c, ip);
	uint64_t base, eh_size, table, count, hdr;
	int32_t first;
	unw_dyn_info_t di;
	const uint8_t *h;

	if (!code || !code->unwind || code->size > UINT64_MAX / 2 ||
	    code->addr > UINT64_MAX - code->size - 8 - code->unwind_size)
		return -UNW_ENOINFO;
	eh_size = code->unwind_size - code->eh_frame_hdr_size;
	h = code->unwind + eh_size;
	if (eh_frame_hdr_table(h, code->eh_frame_hdr_size, &table, &count) ||
	    !count)
		return -UNW_ENOINFO;
	base = code->addr + ((code->size + 7) & ~7ull);
	hdr = base + eh_size;
	/* the first FDE must start in this code, or the placement is wrong */
	memcpy(&first, h + table, 4);
	if (hdr + (uint64_t)(int64_t)first - code->addr >= code->size)
		return -UNW_ENOINFO;
	c->blob = code->unwind;
	c->blob_start = base;
	c->blob_len = code->unwind_size;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = code->addr;
	di.end_ip = code->addr + code->size;
	di.u.rti.segbase = hdr;
	di.u.rti.table_data = hdr + table;
	di.u.rti.table_len = count * 8 / sizeof(unw_word_t);
	return dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, c);
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip,
			  unw_proc_info_t *pi, int need_unwind_info, void *arg)
{
	struct ctx *c = arg;
	const struct sp_map *m = sp_proc_map(c->proc, ip);
	unw_dyn_info_t di;
	const uint8_t *h;
	uint64_t hv, hsize, fde_count = 0;
	int ptr_size, count_size, r;

	/* JIT code: its jitdump's CFI, else libunwind steps by frame pointer */
	if (!m || m->kind == SP_MAP_ANON)
		return jit_proc_info(c, as, ip, pi, need_unwind_info);
	if (c->slot && sp_u64map_find(&c->slot->no_fde, ip))
		return -UNW_ENOINFO;
	if (!m->elf || sp_elf_eh_frame_hdr(m->elf, &hv, &hsize))
		return -UNW_ENOINFO;
	h = sp_elf_at(m->elf, hv, 4);
	if (!h || h[0] != 1 || h[3] != 0x3b)	/* datarel|sdata4 table */
		return -UNW_ENOINFO;
	ptr_size = encoded_size(h[1]);
	count_size = encoded_size(h[2]);
	if (ptr_size < 0 || count_size < 0)
		return -UNW_ENOINFO;
	h = sp_elf_at(m->elf, hv + 4 + ptr_size, count_size);
	if (!h)
		return -UNW_ENOINFO;
	memcpy(&fde_count, h, count_size);
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->start;
	di.end_ip = m->end;
	di.u.rti.segbase = m->bias + hv;
	di.u.rti.table_data = m->bias + hv + 4 + ptr_size + count_size;
	di.u.rti.table_len = fde_count * 8 / sizeof(unw_word_t);
	r = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	/* out of memory: only searched again */
	if (r == -UNW_ENOINFO && c->slot)
		sp_u64map_get(&c->slot->no_fde, ip, NULL);
	return r;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi,
			    void *arg)
{
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap,
				  void *arg)
{
	return -UNW_ENOINFO;
}

/*
 * How a read was answered, for the memo: the unwinding goes on the same
 * way only where every read it made is answered the same.  What the files
 * answer (R_FILE) is the same for every sample of the process.
 */
enum { K_WORD, K_MEM, K_SCAN };		/* which of the reads below */
enum { R_STACK, R_NONE, R_BLOB, R_FILE, R_ANON, R_FAIL_HI, R_FAIL_LO };

static void note_read(struct ctx *c, uint8_t kind, uint64_t addr, int r,
		      uint64_t v)
{
	if (c->run && !c->replaying && r != R_FILE)
		sp_memo_read(c->run, addr, v, kind, (uint8_t)r);
}

/* The sample's stack word at addr, from its copy or its tail: R_STACK or R_NONE. */
static int word_at(struct ctx *c, uint64_t addr, uint64_t *v)
{
	if (addr >= c->sp && addr - c->sp <= (uint64_t)c->stack_len &&
	    c->stack_len - (addr - c->sp) >= 8) {
		memcpy(v, c->stack + (addr - c->sp), 8);
		return R_STACK;
	}
	*v = 0;
	return sp_splice_read(c->splice, c->sp, c->stack, c->stack_len, addr,
			      v) == 0 ? R_STACK : R_NONE;
}

/* word_at() for Go's steps (sp_go_stack): 0, or -1. */
static int stack_word(void *arg, uint64_t addr, uint64_t *v)
{
	struct ctx *c = arg;
	int r = word_at(c, addr, v);

	note_read(c, K_WORD, addr, r, *v);
	return r == R_STACK ? 0 : -1;
}

/* What libunwind reads at addr: from the stack, the files, JIT memory. */
static int mem_at(struct ctx *c, uint64_t addr, uint64_t *v)
{
	const struct sp_map *m;

	if (word_at(c, addr, v) == R_STACK)
		return R_STACK;
	/* libunwind reads aligned words: the blob's edges come zero-padded */
	if (c->blob && addr <= UINT64_MAX - 7 && addr + 8 > c->blob_start &&
	    addr < c->blob_start + c->blob_len) {
		uint8_t w[8] = { 0 };
		int k;

		for (k = 0; k < 8; k++)
			if (addr + k >= c->blob_start &&
			    addr + k - c->blob_start < c->blob_len)
				w[k] = c->blob[addr + k - c->blob_start];
		memcpy(v, w, 8);
		return R_BLOB;
	}
	m = module_of(c, addr);
	if (m && m->elf) {
		const void *p = sp_elf_at(m->elf, addr - m->bias, 8);

		if (p) {
			memcpy(v, p, 8);
			return R_FILE;
		}
	}
	/*
	 * Code we have no bytes of (JIT memory): answer, so that libunwind's
	 * frame-pointer step believes the address and carries on.
	 */
	*v = 0;
	if (sp_proc_map(c->proc, addr))
		return R_ANON;
	return addr >= c->sp ? R_FAIL_HI : R_FAIL_LO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp,
		      int write, void *arg)
{
	struct ctx *c = arg;
	uint64_t v;
	int r;

	if (write)
		return -UNW_EINVAL;
	r = mem_at(c, addr, &v);
	note_read(c, K_MEM, addr, r, v);
	switch (r) {
	case R_FAIL_HI:
		c->truncated = 1;
		/* fall through */
	case R_FAIL_LO:
		return -UNW_EINVAL;
	default:
		*valp = v;
		return 0;
	}
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp,
		      int write, void *arg)
{
	struct ctx *c = arg;
	int i;

	if (write || reg < 0 || reg > UNW_X86_64_RIP)
		return -UNW_EBADREG;
	i = unw_to_perf[reg];
	if (!(c->have & 1u << i))
		return -UNW_EBADREG;
	*valp = c->regs[i];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg,
			unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EINVAL;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cu, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf,
			 size_t len, unw_word_t *offp, void *arg)
{
	return -UNW_EINVAL;
}

struct sp_unwinder *sp_unwinder_new(const struct sp_raw_header *h)
{
	struct sp_unwinder *u = calloc(1, sizeof(*u));
	int i, n = 0;

	if (!u)
		return NULL;
	u->stack_size = h->stack_size;
	for (i = 0; i < PR_MAX; i++)
		u->regidx[i] = (h->regs_mask >> i) & 1 ? n++ : -1;
	u->acc.find_proc_info = find_proc_info;
	u->acc.put_unwind_info = put_unwind_info;
	u->acc.get_dyn_info_list_addr = get_dyn_info_list_addr;
	u->acc.access_mem = access_mem;
	u->acc.access_reg = access_reg;
	u->acc.access_fpreg = access_fpreg;
	u->acc.resume = resume;
	u->acc.get_proc_name = get_proc_name;
	return u;
}

void sp_unwinder_set_memo(struct sp_unwinder *u, int on)
{
	u->no_memo = !on;
}

uint64_t sp_unwinder_memo_hits(const struct sp_unwinder *u)
{
	return u->memo_hits;
}

void sp_unwinder_free(struct sp_unwinder *u)
{
	if (!u)
		return;
	sp_u64map_release(&u->outermost);
	free(u);
}

static void as_release(void *data)
{
	struct as_slot *s = data;

	unw_destroy_addr_space(s->as);
	sp_memo_release(&s->memo);
	sp_u64map_release(&s->no_fde);
	sp_jitdump_free(s->jd);
	free(s->jd_path);
	free(s);
}

static struct as_slot *address_space(struct sp_unwinder *u,
				     struct sp_proc *proc)
{
	struct as_slot *s = sp_proc_user(proc, SP_PROC_UNWINDER);

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		s->as = unw_create_addr_space(&u->acc, 0);
		if (!s->as) {
			free(s);
			return NULL;
		}
		unw_set_caching_policy(s->as, UNW_CACHE_GLOBAL);
		s->jd_size = -1;
		s->generation = sp_proc_generation(proc);
		sp_proc_set_user(proc, SP_PROC_UNWINDER, s, as_release);
	} else if (s->generation != sp_proc_generation(proc)) {
		/* mappings changed: cached unwind rules may be stale */
		unw_flush_cache(s->as, 0, 0);
		sp_u64map_release(&s->no_fde);
		s->generation = sp_proc_generation(proc);
	}
	return s;
}

/* Does the code before ret end in a call instruction? */
static int after_call(const struct sp_map *m, uint64_t ret)
{
	const uint8_t *b = m->elf ? sp_elf_at(m->elf, ret - 7 - m->bias, 7) : NULL;
	int k;

	if (!b)
		return 0;
	if (b[2] == 0xe8)			/* call rel32 */
		return 1;
	for (k = 2; k <= 7; k++) {		/* call r/m64: ff /2 */
		const uint8_t *op = b + 7 - k;

		if (op[0] == 0xff && ((op[1] >> 3) & 7) == 2)
			return 1;
	}
	return 0;
}

/* A word of the stack copy alone, for scan_return(): R_STACK or R_NONE. */
static int scan_word(struct ctx *c, uint64_t a, uint64_t *v)
{
	*v = 0;
	if (a < c->sp || a + 8 > c->sp + c->stack_len)
		return R_NONE;
	memcpy(v, c->stack + (a - c->sp), 8);
	return R_STACK;
}

/*
 * Step out of code that has no CFI and no frame pointer, such as Python
 * 3.12's perf trampolines (sub $8,%rsp; call *%rcx; ...): find the nearest
 * word above sp that is a return address into file-backed code right after
 * a call.  Sets *ret and *slot; returns 0, or -1 when there is none.
 */
static int scan_return(struct ctx *c, uint64_t sp, uint64_t *ret,
		       uint64_t *slot)
{
	uint64_t a;

	for (a = sp; a < sp + 64 * 8; a += 8) {
		const struct sp_map *m;
		uint64_t v;
		int r = scan_word(c, a, &v);

		note_read(c, K_SCAN, a, r, v);
		if (r != R_STACK)
			return -1;
		m = sp_proc_map(c->proc, v);
		if (m && m->kind != SP_MAP_ANON && after_call(m, v)) {
			*ret = v;
			*slot = a;
			return 0;
		}
	}
	return -1;
}

static int is_jit(struct ctx *c, uint64_t ip)
{
	const struct sp_map *m = sp_proc_map(c->proc, ip);

	return !m || m->kind == SP_MAP_ANON;
}

static const int callee_saved[] = {
	UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12, UNW_X86_64_R13,
	UNW_X86_64_R14, UNW_X86_64_R15,
};

/*
 * Restart libunwind in the caller of a JIT frame: its IP and SP come from
 * the scan, the callee-saved registers are as libunwind had them.
 */
static int restart_after_jit(struct ctx *c, unw_addr_space_t as,
			     unw_cursor_t *cur, uint64_t sp, uint64_t *ip)
{
	uint64_t saved[6], ret, slot;
	uint32_t have = 0;
	unsigned i;

	if (scan_return(c, sp, &ret, &slot))
		return -1;
	for (i = 0; i < 6; i++) {
		unw_word_t v;

		if (unw_get_reg(cur, callee_saved[i], &v) == 0) {
			saved[i] = v;
			have |= 1u << i;
		}
	}
	c->have &= ~(1u << PR_AX | 1u << PR_CX | 1u << PR_DX | 1u << PR_SI |
		     1u << PR_DI | 1u << PR_R8 | 1u << PR_R9 | 1u << PR_R10 |
		     1u << PR_R11);
	for (i = 0; i < 6; i++) {
		int pr = unw_to_perf[callee_saved[i]];

		if (have & 1u << i)
			c->regs[pr] = saved[i];
		else
			c->have &= ~(1u << pr);
	}
	c->regs[PR_IP] = ret;
	c->regs[PR_SP] = slot + 8;
	if (unw_init_remote(cur, as, c) < 0)
		return -1;
	*ip = ret;
	return 0;
}

/*
 * Where a frame-pointer step out of JIT code landed is believable: in JIT
 * code again, or in a file right after a call.
 */
static int plausible_return(struct ctx *c, uint64_t ip)
{
	const struct sp_map *m = sp_proc_map(c->proc, ip);

	return m && (m->kind == SP_MAP_ANON || after_call(m, ip));
}

/*
 * libunwind stopped after the last frame of out: say why.  Complete only
 * when the CFI there says there is no caller; a stop in code without CFI
 * proves nothing, and one where the CFI has a caller means its return
 * address read as zero.
 */
static enum sp_unw_end stop_reason(struct sp_unwinder *u, struct ctx *c,
				   const struct sp_frames *out)
{
	unsigned k = out->nr_user - 1;
	uint64_t pc = out->ips[k] - !(out->flags[k] & SP_FRAME_PRECISE);
	const struct sp_map *m = sp_proc_map(c->proc, pc);

	if (!m || !m->elf || m->kind == SP_MAP_ANON)
		return SP_END_NOINFO;
	switch (sp_outermost(&u->outermost, m->elf, pc - m->bias)) {
	case SP_OUTERMOST_YES:
		return SP_END_COMPLETE;
	case SP_OUTERMOST_NO:
		return SP_END_ERROR;
	default:
		return SP_END_NOINFO;
	}
}

/*
 * Go code that no .eh_frame covers (Go's CFI is only in .debug_frame)
 * steps by its pclntab (gostep.c); libunwind restarts in the caller with
 * the IP, SP and BP the step gives, Go keeping no other register for its
 * caller.  Returns -1 when the frame is no such code, 0 when stepped (*ip
 * set), 1 when the stack ends there (out->end and out->stack_flags set).
 */
static int go_frame(struct ctx *c, unw_addr_space_t as, unw_cursor_t *cur,
		    struct sp_frames *out, unw_word_t *ip)
{
	unsigned k = out->nr_user - 1;
	int precise = out->flags[k] & SP_FRAME_PRECISE;
	struct sp_go_stack st = { stack_word, c };
	struct sp_go_code code;
	struct sp_go_regs r = { .ip = out->ips[k] };
	unw_proc_info_t pi;
	unw_word_t v;

	if (!sp_go_code(c->proc, r.ip, precise, &code) ||
	    find_proc_info(as, code.at, &pi, 0, c) == 0)
		return -1;
	if (unw_get_reg(cur, UNW_REG_SP, &v) < 0) {
		out->end = SP_END_ERROR;
		return 1;
	}
	r.sp = v;
	r.have_bp = unw_get_reg(cur, UNW_X86_64_RBP, &v) == 0;
	r.bp = v;
	switch (sp_go_step(c->proc, &code, &st, &r)) {
	case SP_GO_STEPPED:
		break;
	case SP_GO_TOP:
		out->end = SP_END_COMPLETE;
		return 1;
	case SP_GO_SWITCH:
		out->stack_flags |= SP_STACK_GO_SWITCH;
		/* fall through */
	case SP_GO_SPWRITE:
	case SP_GO_TRUNCATED:
		out->end = SP_END_TRUNCATED;
		return 1;
	case SP_GO_NOINFO:
		out->end = SP_END_NOINFO;
		return 1;
	default:
		out->end = SP_END_ERROR;
		return 1;
	}
	c->have &= 1u << PR_IP | 1u << PR_SP | 1u << PR_BP;
	if (!r.have_bp)
		c->have &= ~(1u << PR_BP);
	c->regs[PR_IP] = r.ip;
	c->regs[PR_SP] = r.sp;
	c->regs[PR_BP] = r.bp;
	if (unw_init_remote(cur, as, c) < 0) {
		out->end = SP_END_ERROR;
		return 1;
	}
	*ip = r.ip;
	return 0;
}

/*
 * What a restart begins from: all libunwind will read of the sample's
 * registers, and whether the stack is known to go on past the copy.
 */
static void restart_state(const struct ctx *c, struct sp_memo_state *st)
{
	int r;

	memset(st, 0, sizeof(*st));
	st->truncated = !!c->truncated;
	for (r = 0; r < SP_MEMO_REGS; r++)
		if (c->have & 1u << unw_to_perf[r]) {
			st->have |= 1u << r;
			st->regs[r] = c->regs[unw_to_perf[r]];
		}
}

/* Does this sample answer every read last made after rs the same? */
static int same_reads(struct ctx *c, const struct sp_memo_run *last,
		      const struct sp_memo_restart *rs)
{
	size_t i;
	int same = 1;

	c->replaying = 1;
	for (i = rs->read; same && i < last->nreads; i++) {
		const struct sp_memo_read *m = &last->reads[i];
		uint64_t v;
		int r;

		switch (m->kind) {
		case K_WORD:
			r = word_at(c, m->addr, &v);
			break;
		case K_MEM:
			r = mem_at(c, m->addr, &v);
			break;
		default:
			r = scan_word(c, m->addr, &v);
			break;
		}
		same = r == m->outcome && v == m->val;
	}
	c->replaying = 0;
	return same;
}

/*
 * Does no file's image overlap the stack copy?  Then what the files answer
 * does not depend on the copy, and a memo may be taken (memo.h).
 */
static int copy_clear(const struct ctx *c)
{
	const struct sp_map *m;
	uint64_t end = c->sp + c->stack_len;
	size_t n, i;

	if (end < c->sp)
		return 0;
	m = sp_proc_modules(c->proc, &n);
	for (i = 0; i < n; i++)
		if (m[i].start < end && m[i].end > c->sp)
			return 0;
	return 1;
}

/*
 * A restart is about to add its frame to out.  When the thread's last run
 * restarted from the same registers, and this sample answers every read
 * that run made from there on the same, the rest of that run is this
 * stack's too: out is finished with it and 1 returned.  Else the restart
 * is noted for the next run and 0 returned.
 */
static int memo_restart(struct ctx *c, struct sp_frames *out)
{
	const struct sp_memo_run *last = c->last;
	struct sp_memo_state st;
	size_t i;

	if (!c->run)
		return 0;
	if (!c->run->nrs && !copy_clear(c)) {
		c->run = NULL;
		return 0;
	}
	restart_state(c, &st);
	for (i = 0; last && !out->stack_flags && i < last->nrs; i++) {
		const struct sp_memo_restart *rs = &last->rs[i];
		unsigned n = last->nframes - rs->frame;

		if (rs->st.have != st.have ||
		    rs->st.truncated != st.truncated ||
		    memcmp(rs->st.regs, st.regs, sizeof(st.regs)))
			continue;
		if (out->nr_user + n > SP_UNWIND_MAX_FRAMES ||
		    !same_reads(c, last, rs))
			break;
		sp_memo_take(c->run, last, rs, out->nr_user);
		memcpy(out->ips + out->nr_user, last->ips + rs->frame,
		       n * sizeof(*out->ips));
		memcpy(out->flags + out->nr_user, last->flags + rs->frame, n);
		out->nr_user += n;
		out->end = last->end;
		c->u->memo_hits++;
		return 1;
	}
	sp_memo_restart(c->run, out->nr_user, &st);
	return 0;
}

/* Step from the sample's registers to the end of the stack, into out. */
static void walk(struct ctx *c, unw_addr_space_t as, unw_cursor_t *cur,
		 struct sp_frames *out)
{
	unw_word_t ip, sp;
	int r, precise_next = 0;

	for (;;) {
		uint64_t cur_ip = out->ips[out->nr_user - 1];
		int jit = is_jit(c, cur_ip), leaf = out->nr_user == 1;
		int restarted = 0;

		if (out->nr_user == SP_UNWIND_MAX_FRAMES) {
			out->end = SP_END_DEPTH;
			return;
		}
		if (sp_unwind_stop_missing(c->proc, out))	/* missing.c */
			return;
		r = go_frame(c, as, cur, out, &ip);
		if (r > 0)
			return;
		if (r == 0) {
			precise_next = 0;
			restarted = 1;
			goto next;
		}
		if (jit && unw_get_reg(cur, UNW_REG_SP, &sp) < 0)
			jit = 0;
		/* after a signal frame comes an interrupted, exact IP */
		precise_next = unw_is_signal_frame(cur) > 0;
		r = unw_step(cur);
		if (r > 0 && (unw_get_reg(cur, UNW_REG_IP, &ip) < 0 || !ip))
			r = 0;
		/*
		 * Leaving JIT code by frame pointer can fail or land
		 * somewhere unbelievable.  Above a callee, the JIT frame's
		 * caller is found by the return address on the stack.  A
		 * leaf may be a stub without a frame of its own, such as
		 * Python 3.12's perf trampoline, whose stack holds a stale
		 * word next to its return address and no bytes of its code
		 * say which: the stack ends there, cut, rather than guessed.
		 */
		if (jit && (r <= 0 || !plausible_return(c, ip))) {
			if (!leaf && restart_after_jit(c, as, cur, sp,
						       &ip) == 0) {
				r = 1;
				precise_next = 0;
				restarted = 1;
			} else {
				out->end = r < 0 && c->truncated ?
					   SP_END_TRUNCATED : SP_END_NOINFO;
				return;
			}
		}
		if (r == 0) {
			out->end = stop_reason(c->u, c, out);
			return;
		}
		if (r < 0) {
			out->end = c->truncated ? SP_END_TRUNCATED :
				   r == -UNW_ENOINFO ? SP_END_NOINFO :
				   SP_END_ERROR;
			return;
		}
next:
		if (restarted && memo_restart(c, out))
			return;
		out->ips[out->nr_user] = ip;
		out->flags[out->nr_user] = precise_next ? SP_FRAME_PRECISE : 0;
		out->nr_user++;
	}
}

static int unwind_sample(struct sp_unwinder *u, struct sp_proc *proc,
			 const struct sp_raw_sample_view *v,
			 struct sp_frames *out, struct sp_splice *splice)
{
	const struct sp_raw_sample *s = v->s;
	struct ctx c = { 0 };
	unw_cursor_t cur;
	int i;

	out->nr_user = 0;
	out->stack_flags = 0;
	if (!s->nr_regs || u->regidx[PR_SP] < 0 || u->regidx[PR_IP] < 0) {
		out->end = SP_END_NOREGS;
		return 0;
	}
	c.u = u;
	c.proc = proc;
	for (i = 0; i < PR_MAX; i++) {
		if (u->regidx[i] >= 0 && u->regidx[i] < s->nr_regs) {
			c.regs[i] = v->regs[u->regidx[i]];
			c.have |= 1u << i;
		}
	}
	c.sp = c.regs[PR_SP];
	c.stack = v->stack;
	c.stack_len = s->stack_len;
	c.splice = splice;
	c.slot = address_space(u, c.proc);
	if (!c.slot)
		return -ENOMEM;
	out->ips[0] = c.regs[PR_IP];
	out->flags[0] = SP_FRAME_PRECISE;
	out->nr_user = 1;
	if (unw_init_remote(&cur, c.slot->as, &c) < 0) {
		out->end = SP_END_ERROR;
		return 0;
	}
	/* a stack of its own (no tail) that no JIT's dump can change */
	if (!u->no_memo && !v->tail && !sp_proc_jitdump(c.proc)) {
		sp_memo_begin(&c.slot->memo, s->tid);
		c.run = &c.slot->memo.scratch;
		c.last = sp_memo_last(&c.slot->memo, s->tid,
				      c.slot->generation);
		if (c.last && c.last->end == SP_END_DEPTH)
			c.last = NULL;
	}
	walk(&c, c.slot->as, &cur, out);
	if (c.run && !out->stack_flags)
		sp_memo_end(&c.slot->memo, c.slot->generation, out->ips,
			    out->flags, out->nr_user, out->end);
	return 0;
}

int sp_unwind_sample(struct sp_unwinder *u, struct sp_proc *proc,
		     const struct sp_raw_sample_view *v, struct sp_frames *out)
{
	struct sp_splice splice;
	int r;

	sp_splice_init(&splice, v);
	r = unwind_sample(u, proc, v, out, &splice);
	if (!r)
		sp_splice_finish(&splice, out);
	return r;
}
