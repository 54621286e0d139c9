// SPDX-License-Identifier: MIT
/*
 * fuzz-elf.c: the parts of an ELF file stackpulse reads itself, over an
 * image in memory as the ELF cache holds a [vdso] (elf/elfcache.h): the
 * program headers and what the cache derives from them (extent, bias, the
 * bytes at an address, .eh_frame_hdr), the build-id notes (elf/buildid.h,
 * also through a file descriptor as sp-record reads them), the symbol
 * table and its ranking with the PLT stubs (elf/symtab.h, elf/plt.h), and
 * Go's function table (elf/gopclntab.h).  Lookups are made at the 64-bit
 * words of the input, where the symbols' values and the section addresses
 * are, and their neighbours.  libelf parses the headers; what is checked
 * is what stackpulse does with them.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "elf/elfcache.h"
#include "elf/gopclntab.h"
#include "elf/plt.h"
#include "elf/symtab.h"
#include "fuzz.h"

#define MAX_WORDS 512

/* A symbol's answer holds the address: its size, or its span unsized. */
static void check_sym(const struct sp_sym *s, uint64_t addr)
{
	uint64_t span;

	if (!s)
		return;
	span = s->size ? s->size : s->span ? s->span : SP_SYM_UNSIZED_SPAN;
	if (addr - s->start >= span || !s->name || !*s->name)
		abort();
	if ((s->flags & SP_SYM_PLT) &&
	    (!(s->flags & SP_SYM_SYNTH) || !strstr(s->name, "@plt")))
		abort();
}

static void probe_syms(const struct sp_symtab *t, uint64_t addr)
{
	const struct sp_sym *s;
	uint64_t at;

	check_sym(sp_symtab_find(t, addr), addr);
	s = sp_symtab_at(t, addr);
	if (s && s->start != addr)
		abort();
	s = sp_symtab_lookup(t, addr, 0, &at);
	if (s && at != addr && at != addr - 1)
		abort();
	check_sym(s, at);
	s = sp_symtab_lookup(t, addr, 1, &at);
	if (s && at != addr)
		abort();
	check_sym(s, at);
}

/* What the cache gives of the bytes at addr must be readable. */
static void probe_bytes(const struct sp_elf *e, uint64_t addr)
{
	static const size_t lens[] = { 1, 16, 4096 };
	volatile uint8_t sink;
	size_t i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		const uint8_t *p = sp_elf_at(e, addr, lens[i]);

		if (p) {
			sink = p[0];
			sink = p[lens[i] - 1];
			(void)sink;
		}
	}
}

static void probe_go(const struct sp_gopclntab *t, uint64_t pc)
{
	struct sp_gofunc f;
	const char *file;
	uint32_t line;
	int32_t sp;

	if (sp_gopclntab_find(t, pc, &f))
		return;
	if (pc < f.entry || pc >= f.end || !f.name)
		abort();
	(void)strlen(f.name);
	(void)sp_gofunc_is_top(t, &f);
	(void)sp_gofunc_is_switch(t, &f);
	(void)sp_gopclntab_pcsp(t, &f, pc, &sp);
	if (!sp_gopclntab_line(t, &f, pc, &file, &line) && (!file || !line))
		abort();
}

/* The build-id by every way stackpulse reads one must be the same. */
static void check_build_id(struct sp_elf *e, const uint8_t *data, size_t size)
{
	uint8_t bid[SP_BUILD_ID_MAX], bid2[SP_BUILD_ID_MAX];
	const uint8_t *b = NULL;
	size_t n = e ? sp_elf_get_build_id(e, &b) : 0;
	int fd = fz_memfd(data, size), m;
	char hex[2 * SP_BUILD_ID_MAX + 1], *copy;
	Elf *elf;

	m = sp_build_id_fd(fd, bid);
	close(fd);
	if (m < 0 || m > SP_BUILD_ID_MAX)
		abort();
	/* libelf may write to what it is given: a copy */
	copy = malloc(size ? size : 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	elf = elf_memory(copy, size);
	if (elf) {
		size_t k = elf_kind(elf) == ELF_K_ELF ?
			   sp_elf_build_id(elf, bid2) : 0;

		if (k != (size_t)m || memcmp(bid, bid2, k))
			abort();
		elf_end(elf);
	}
	free(copy);
	if (e && (n != (size_t)m || memcmp(b, bid, n)))
		abort();
	sp_build_id_hex(bid, (size_t)m, hex);
	if (strlen(hex) != 2 * (size_t)m)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_elf_cache *c = sp_elf_cache_new();
	const struct sp_symtab *syms;
	struct sp_gopclntab *go;
	enum sp_frame_origin origin;
	struct sp_plt plt = { 0 };
	uint64_t lo, hi, v, bias, ehf, ehf_size;
	size_t i, n;
	struct sp_elf *e;

	if (!c)
		abort();
	e = sp_elf_cache_image(c, data, size);
	check_build_id(e, data, size);
	if (!e)
		goto out;

	sp_elf_extent(e, &lo, &hi);
	if (lo > hi)
		abort();
	(void)sp_elf_has_code(e);
	if (!sp_elf_eh_frame_hdr(e, &ehf, &ehf_size))
		probe_bytes(e, ehf);
	if (!sp_elf_bias(e, 0x7f0000000000, 0, &bias))
		probe_bytes(e, 0x7f0000000000 - bias);

	syms = sp_elf_symtab(e, &origin);
	if (syms && !sp_symtab_count(syms))
		abort();
	/* the stubs alone, with no table to name IFUNCs by */
	if (sp_plt_read(&plt, e, NULL, 0))
		abort();
	for (i = 0; i < plt.n; i++)
		check_sym(&plt.syms[i], plt.syms[i].start);
	sp_plt_release(&plt);

	go = sp_gopclntab_from_elf(sp_elf_handle(e), data, size);
	if (go && (!sp_gopclntab_nfunc(go) || !sp_gopclntab_layout(go)))
		abort();

	/* the 64-bit words of the input: symbol values, section addresses */
	n = size / 8;
	for (i = 0; i < n && i < MAX_WORDS; i++) {
		memcpy(&v, data + 8 * i, 8);
		probe_syms(syms, v);
		probe_syms(syms, v + 1);
		probe_bytes(e, v);
		if (go) {
			probe_go(go, v);
			probe_go(go, v + 1);
		}
	}
	probe_syms(syms, 0);
	probe_syms(syms, UINT64_MAX);
	probe_syms(syms, lo);
	probe_syms(syms, hi - 1);
	sp_gopclntab_free(go);
out:
	sp_elf_cache_free(c);
	return 0;
}
