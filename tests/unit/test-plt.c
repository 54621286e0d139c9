/* SPDX-License-Identifier: MIT */
/*
 * test-plt.c: PLT stubs named TARGET@plt, on ELF images built here byte by
 * byte in the layouts GNU ld makes: the lazy .plt with .plt.got, the IBT
 * layout (.plt of endbr64/push/jmp entries, .plt.sec, a 16-byte .plt.got),
 * an IFUNC slot (R_X86_64_IRELATIVE); damaged ones (an index past
 * .rela.plt, a slot no relocation names, a symbol index past .dynsym, a
 * PLT beyond the file); another machine.  And the rule of symtab.h that
 * an unsized symbol (_init) ends with its section; the vDSO, which has no
 * PLT, keeps the names of its functions.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "elf/elfcache.h"
#include "unit.h"

/* An ELF image: file offset == vaddr, one PT_LOAD over all of it. */
struct img {
	uint8_t b[0x4000];
	size_t len;
	Elf64_Shdr sh[24];
	int nsh;
	char shstr[512];
	size_t nshstr;
};

static void img_init(struct img *im)
{
	memset(im, 0, sizeof(*im));
	im->len = 0x100;	/* headers */
	im->nsh = 1;		/* SHN_UNDEF */
	im->nshstr = 1;
}

/* Adds a section of data at the next offset aligned to align (its vaddr). */
static int sec(struct img *im, const char *name, uint32_t type, uint64_t flags,
	       const void *data, size_t len, uint64_t entsize, uint32_t link,
	       size_t align)
{
	Elf64_Shdr *s = &im->sh[im->nsh];
	size_t off = (im->len + align - 1) & ~(align - 1);

	s->sh_name = (uint32_t)im->nshstr;
	strcpy(im->shstr + im->nshstr, name);
	im->nshstr += strlen(name) + 1;
	s->sh_type = type;
	s->sh_flags = flags;
	s->sh_addr = off;
	s->sh_offset = off;
	s->sh_size = len;
	s->sh_entsize = entsize;
	s->sh_link = link;
	s->sh_addralign = align;
	if (data && type != SHT_NOBITS)
		memcpy(im->b + off, data, len);
	im->len = off + (type == SHT_NOBITS ? 0 : len);
	return im->nsh++;
}

static uint64_t sec_addr(const struct img *im, int i)
{
	return im->sh[i].sh_addr;
}

/* Headers, .shstrtab and the section table; returns the image's size. */
static size_t img_finish(struct img *im, uint16_t machine)
{
	Elf64_Ehdr eh = { .e_type = ET_DYN, .e_machine = machine,
			  .e_version = EV_CURRENT, .e_phoff = 0x40,
			  .e_ehsize = sizeof(Elf64_Ehdr),
			  .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 1,
			  .e_shentsize = sizeof(Elf64_Shdr) };
	Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
			  .p_align = 0x1000 };
	char name[] = ".shstrtab";
	int i;

	memcpy(im->shstr + im->nshstr, name, sizeof(name));
	i = sec(im, ".shstrtab", SHT_STRTAB, 0, NULL, 0, 0, 0, 1);
	im->sh[i].sh_name = (uint32_t)im->nshstr;
	im->sh[i].sh_size = im->nshstr + sizeof(name);
	im->sh[i].sh_addr = 0;
	memcpy(im->b + im->sh[i].sh_offset, im->shstr, im->sh[i].sh_size);
	im->len = (im->sh[i].sh_offset + im->sh[i].sh_size + 7) & ~(size_t)7;
	eh.e_shoff = im->len;
	eh.e_shnum = (uint16_t)im->nsh;
	eh.e_shstrndx = (uint16_t)i;
	memcpy(im->b + im->len, im->sh, im->nsh * sizeof(Elf64_Shdr));
	im->len += im->nsh * sizeof(Elf64_Shdr);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(im->b, &eh, sizeof(eh));
	ph.p_filesz = ph.p_memsz = im->len;
	memcpy(im->b + 0x40, &ph, sizeof(ph));
	return im->len;
}

/* Code of stubs, written with their rip-relative displacements. */
struct code {
	uint8_t b[256];
	size_t n;
	uint64_t base;		/* vaddr of b[0] */
};

static void put(struct code *c, const void *p, size_t n)
{
	memcpy(c->b + c->n, p, n);
	c->n += n;
}

static void put32(struct code *c, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 24) };

	put(c, b, 4);
}

static void endbr64(struct code *c)
{
	put(c, "\xf3\x0f\x1e\xfa", 4);
}

/* jmp *slot(%rip), with a bnd prefix if bnd */
static void jmp_slot(struct code *c, uint64_t slot, int bnd)
{
	if (bnd)
		put(c, "\xf2", 1);
	put(c, "\xff\x25", 2);
	put32(c, (uint32_t)(slot - (c->base + c->n + 4)));
}

static void push(struct code *c, uint32_t n)
{
	put(c, "\x68", 1);
	put32(c, n);
}

static void pad(struct code *c, size_t to)
{
	while (c->n % to)
		put(c, "\x90", 1);
}

/* PLT0: push GOT+8; jmp *GOT+16 */
static void plt0(struct code *c, uint64_t got, int bnd)
{
	put(c, "\xff\x35", 2);
	put32(c, (uint32_t)(got + 8 - (c->base + c->n + 4)));
	jmp_slot(c, got + 16, bnd);
	pad(c, 16);
}

static const char dynstr[] = "\0f\0g\0h\0ifn\0_Znwm\0";
enum { S_F = 1, S_G = 3, S_H = 5, S_IFN = 7, S_NEW = 11 };
static const char symstr[] = "\0_init\0ifn\0asm_fn\0ifn_impl\0";
enum { Y_INIT = 1, Y_IFN = 7, Y_ASM = 11, Y_IMPL = 18 };

#define GOT	0x1800		/* .got: slots of 8 bytes from here */
#define IFN	0x1500		/* ifn's resolver in .text */

static Elf64_Sym fsym(uint32_t name, uint64_t value, uint64_t size, int type,
		      int bind, uint16_t shndx)
{
	return (Elf64_Sym){ .st_name = name,
			    .st_info = (uint8_t)ELF64_ST_INFO(bind, type),
			    .st_shndx = shndx, .st_value = value,
			    .st_size = size };
}

static Elf64_Rela rela(uint64_t slot, uint32_t sym, uint32_t type,
		       int64_t addend)
{
	return (Elf64_Rela){ .r_offset = slot,
			     .r_info = ELF64_R_INFO(sym, type),
			     .r_addend = addend };
}

/*
 * The common parts: .dynsym (f, g, h, _Znwm undefined, ifn an IFUNC),
 * .dynstr, .rela.dyn (g and _Znwm GLOB_DAT, an IRELATIVE to ifn's
 * resolver), .rela.plt (f, h, and a relocation whose symbol index is past
 * .dynsym), .init with an unsized _init, .text with an unsized asm_fn and
 * ifn, .symtab; the PLT sections come from the caller between .init and
 * .text.
 */
struct layout {
	int dynsym, text, init;
};

static void common_head(struct img *im, struct layout *l)
{
	Elf64_Sym ds[] = {
		{ 0 },
		fsym(S_F, 0, 0, STT_FUNC, STB_GLOBAL, SHN_UNDEF),
		fsym(S_G, 0, 0, STT_FUNC, STB_GLOBAL, SHN_UNDEF),
		fsym(S_H, 0, 0, STT_FUNC, STB_GLOBAL, SHN_UNDEF),
		fsym(S_IFN, IFN, 0x10, STT_GNU_IFUNC, STB_GLOBAL, 0),
		fsym(S_NEW, 0, 0, STT_FUNC, STB_GLOBAL, SHN_UNDEF),
	};
	Elf64_Rela dyn[] = {
		rela(GOT + 0x40, 2, R_X86_64_GLOB_DAT, 0),
		rela(GOT + 0x48, 0, R_X86_64_IRELATIVE, IFN),
		rela(GOT + 0x50, 5, R_X86_64_GLOB_DAT, 0),
		rela(GOT + 0x58, 0, R_X86_64_RELATIVE, 0x10),
	};
	Elf64_Rela plt[] = {
		rela(GOT + 0x18, 1, R_X86_64_JUMP_SLOT, 0),
		rela(GOT + 0x20, 3, R_X86_64_JUMP_SLOT, 0),
		rela(GOT + 0x28, 99, R_X86_64_JUMP_SLOT, 0),
	};
	uint8_t init[0x17];
	int str, ds_i;

	memset(init, 0x90, sizeof(init));
	str = sec(im, ".dynstr", SHT_STRTAB, SHF_ALLOC, dynstr, sizeof(dynstr),
		  0, 0, 1);
	ds_i = sec(im, ".dynsym", SHT_DYNSYM, SHF_ALLOC, ds, sizeof(ds),
		   sizeof(Elf64_Sym), (uint32_t)str, 8);
	sec(im, ".rela.dyn", SHT_RELA, SHF_ALLOC, dyn, sizeof(dyn),
	    sizeof(Elf64_Rela), (uint32_t)ds_i, 8);
	sec(im, ".rela.plt", SHT_RELA, SHF_ALLOC | SHF_INFO_LINK, plt,
	    sizeof(plt), sizeof(Elf64_Rela), (uint32_t)ds_i, 8);
	l->dynsym = ds_i;
	l->init = sec(im, ".init", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
		      init, sizeof(init), 0, 0, 4);
	/* .init ends at ...17; the PLT starts 16-aligned after a gap */
}

static void common_tail(struct img *im, struct layout *l)
{
	uint8_t text[0x200], got[0x80];
	Elf64_Sym ys[5];
	int str, text_i;

	memset(text, 0xcc, sizeof(text));
	memset(got, 0, sizeof(got));
	im->len = IFN - 0x100;
	text_i = sec(im, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
		     text, sizeof(text), 0, 0, 16);
	l->text = text_i;
	im->len = GOT;
	sec(im, ".got", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, got, sizeof(got),
	    8, 0, 8);
	ys[0] = (Elf64_Sym){ 0 };
	ys[1] = fsym(Y_INIT, sec_addr(im, l->init), 0, STT_FUNC, STB_GLOBAL,
		     (uint16_t)l->init);
	ys[2] = fsym(Y_IFN, IFN, 0x10, STT_GNU_IFUNC, STB_GLOBAL,
		     (uint16_t)text_i);
	ys[3] = fsym(Y_ASM, sec_addr(im, text_i), 0, STT_FUNC, STB_LOCAL,
		     (uint16_t)text_i);
	ys[4] = fsym(Y_IMPL, IFN, 0x10, STT_FUNC, STB_LOCAL, (uint16_t)text_i);
	str = sec(im, ".strtab", SHT_STRTAB, 0, symstr, sizeof(symstr), 0, 0,
		  1);
	sec(im, ".symtab", SHT_SYMTAB, 0, ys, sizeof(ys), sizeof(Elf64_Sym),
	    (uint32_t)str, 8);
}

/* The name of the symbol at vaddr, "(none)" if none; *origin its origin. */
static const char *name_at(const struct sp_symtab *t, enum sp_frame_origin to,
			   uint64_t vaddr, unsigned *origin)
{
	const struct sp_sym *s = sp_symtab_find(t, vaddr);

	if (origin)
		*origin = !s ? SP_FO_NONE : (s->flags & SP_SYM_SYNTH) ?
			  s->origin : to;
	return s ? s->name : "(none)";
}

/* Every byte of [a, a + len) is named want, with origin o. */
static void check_stub(const struct sp_symtab *t, enum sp_frame_origin to,
		       uint64_t a, uint64_t len, const char *want, unsigned o)
{
	uint64_t i;
	unsigned got;

	for (i = 0; i < len; i++) {
		CHECK_STR(name_at(t, to, a + i, &got), want);
		CHECK(got == o);
	}
}

/* The lazy layout: 16-byte .plt entries, an 8-byte .plt.got. */
static size_t build_lazy(struct img *im, uint16_t machine, uint64_t *plt,
			 uint64_t *pltgot, int *init_sec)
{
	struct layout l;
	struct code c = { .n = 0 };
	struct code g = { .n = 0 };

	img_init(im);
	common_head(im, &l);
	*init_sec = l.init;
	*plt = (im->len + 15) & ~(uint64_t)15;
	c.base = *plt;
	plt0(&c, GOT, 0);
	/* f: its slot; jmp to PLT0 is left as nops, never decoded */
	jmp_slot(&c, GOT + 0x18, 0);
	push(&c, 0);
	pad(&c, 16);
	/* h: a slot no relocation names, then push 1: the index names it */
	jmp_slot(&c, GOT + 0x70, 0);
	push(&c, 1);
	pad(&c, 16);
	/* push 7: past .rela.plt */
	jmp_slot(&c, GOT + 0x78, 0);
	push(&c, 7);
	pad(&c, 16);
	/* push 2: a relocation whose symbol index is past .dynsym */
	jmp_slot(&c, GOT + 0x78, 0);
	push(&c, 2);
	pad(&c, 16);
	sec(im, ".plt", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, c.b, c.n, 16,
	    0, 16);
	*pltgot = g.base = (im->len + 7) & ~(uint64_t)7;
	jmp_slot(&g, GOT + 0x40, 0);	/* g: GLOB_DAT */
	pad(&g, 8);
	jmp_slot(&g, GOT + 0x48, 0);	/* the IFUNC's slot */
	pad(&g, 8);
	jmp_slot(&g, GOT + 0x50, 0);	/* _Znwm */
	pad(&g, 8);
	jmp_slot(&g, GOT + 0x58, 0);	/* a RELATIVE slot: no target */
	pad(&g, 8);
	sec(im, ".plt.got", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, g.b, g.n,
	    8, 0, 8);
	common_tail(im, &l);
	return img_finish(im, machine);
}

static void test_lazy(struct sp_elf_cache *c)
{
	static struct img im;
	uint64_t plt, pg;
	int init_sec;
	size_t len = build_lazy(&im, EM_X86_64, &plt, &pg, &init_sec);
	struct sp_elf *e = sp_elf_cache_image(c, im.b, len);
	enum sp_frame_origin o;
	const struct sp_symtab *t;
	const struct sp_sym *s;
	uint64_t init = sec_addr(&im, init_sec);

	CHECK(e != NULL);
	if (!e)
		return;
	t = sp_elf_symtab(e, &o);
	CHECK(t && o == SP_FO_SYMTAB);
	/* _init, asm_fn, ifn (ifn_impl shares its start); 5 + 4 stubs */
	CHECK(sp_symtab_count(t) == 3 + 9);
	check_stub(t, o, plt, 16, "[plt]", SP_FO_NONE);
	check_stub(t, o, plt + 16, 16, "f@plt", SP_FO_DYNSYM);
	check_stub(t, o, plt + 32, 16, "h@plt", SP_FO_DYNSYM);
	check_stub(t, o, plt + 48, 16, "[plt]", SP_FO_NONE);
	check_stub(t, o, plt + 64, 16, "[plt]", SP_FO_NONE);
	CHECK(pg == plt + 80);
	check_stub(t, o, pg, 8, "g@plt", SP_FO_DYNSYM);
	/* an IFUNC: the global name at the resolver, from .symtab */
	check_stub(t, o, pg + 8, 8, "ifn@plt", SP_FO_SYMTAB);
	check_stub(t, o, pg + 16, 8, "_Znwm@plt", SP_FO_DYNSYM);
	check_stub(t, o, pg + 24, 8, "[plt]", SP_FO_NONE);
	s = sp_symtab_find(t, plt + 16);
	CHECK(s && (s->flags & SP_SYM_PLT) && s->size == 16);
	s = sp_symtab_find(t, plt);
	CHECK(s && !(s->flags & SP_SYM_PLT) && (s->flags & SP_SYM_SYNTH));
	/* _init holds .init, not the gap after it nor the PLT */
	check_stub(t, o, init, 0x17, "_init", SP_FO_SYMTAB);
	CHECK_STR(name_at(t, o, init + 0x17, NULL), "(none)");
	CHECK_STR(name_at(t, o, plt - 1, NULL), "(none)");
	/* a return address at PLT0's first byte is not _init's either */
	s = sp_symtab_lookup(t, plt, 0, NULL);
	CHECK(s && !strcmp(s->name, "[plt]"));
	/* an unsized symbol in .text holds to the next symbol */
	CHECK_STR(name_at(t, o, IFN - 0x100 + 0x80, NULL), "asm_fn");
	CHECK_STR(name_at(t, o, IFN + 4, NULL), "ifn");
	CHECK_STR(name_at(t, o, IFN + 0x10, NULL), "(none)");
}

/* The IBT layout: .plt of endbr64/push/bnd jmp, .plt.sec, 16-byte .plt.got. */
static void test_ibt(struct sp_elf_cache *c)
{
	static struct img im;
	struct layout l;
	struct code p = { .n = 0 }, s = { .n = 0 }, g = { .n = 0 };
	enum sp_frame_origin o;
	const struct sp_symtab *t;
	uint64_t plt, sec_, pg;
	struct sp_elf *e;
	size_t len;
	uint32_t i;

	img_init(&im);
	common_head(&im, &l);
	plt = p.base = (im.len + 15) & ~(uint64_t)15;
	plt0(&p, GOT, 1);
	for (i = 0; i < 3; i++) {	/* f, h, then a bad symbol index */
		endbr64(&p);
		push(&p, i);
		put(&p, "\xf2\xe9\0\0\0\0", 6);
		pad(&p, 16);
	}
	sec(&im, ".plt", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, p.b, p.n, 16,
	    0, 16);
	pg = g.base = (im.len + 15) & ~(uint64_t)15;
	endbr64(&g);
	jmp_slot(&g, GOT + 0x40, 1);	/* g */
	pad(&g, 16);
	sec(&im, ".plt.got", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, g.b, g.n,
	    16, 0, 16);
	sec_ = s.base = (im.len + 15) & ~(uint64_t)15;
	endbr64(&s);
	jmp_slot(&s, GOT + 0x18, 1);	/* f */
	pad(&s, 16);
	endbr64(&s);
	jmp_slot(&s, GOT + 0x20, 1);	/* h */
	pad(&s, 16);
	endbr64(&s);
	jmp_slot(&s, GOT + 0x28, 1);	/* the bad symbol index: unnamed */
	pad(&s, 16);
	sec(&im, ".plt.sec", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, s.b, s.n,
	    16, 0, 16);
	common_tail(&im, &l);
	len = img_finish(&im, EM_X86_64);
	e = sp_elf_cache_image(c, im.b, len);
	CHECK(e != NULL);
	if (!e)
		return;
	t = sp_elf_symtab(e, &o);
	check_stub(t, o, plt, 16, "[plt]", SP_FO_NONE);
	check_stub(t, o, plt + 16, 16, "f@plt", SP_FO_DYNSYM);
	check_stub(t, o, plt + 32, 16, "h@plt", SP_FO_DYNSYM);
	check_stub(t, o, plt + 48, 16, "[plt]", SP_FO_NONE);
	check_stub(t, o, pg, 16, "g@plt", SP_FO_DYNSYM);
	check_stub(t, o, sec_, 16, "f@plt", SP_FO_DYNSYM);
	check_stub(t, o, sec_ + 16, 16, "h@plt", SP_FO_DYNSYM);
	check_stub(t, o, sec_ + 32, 16, "[plt]", SP_FO_NONE);
}

/*
 * Damage: a .plt longer than the file (entries past its end are not read),
 * an entry size no stub has, another machine; the file's symbols stay.
 */
static void test_damaged(struct sp_elf_cache *c)
{
	static struct img im;
	uint64_t plt, pg;
	int init_sec, plt_sec = 0, i;
	size_t len = build_lazy(&im, EM_X86_64, &plt, &pg, &init_sec);
	Elf64_Shdr *sh = (Elf64_Shdr *)(im.b + len -
					im.nsh * sizeof(Elf64_Shdr));
	enum sp_frame_origin o;
	const struct sp_symtab *t;
	struct sp_elf *e;

	for (i = 0; i < im.nsh; i++)
		if (sh[i].sh_addr == plt)
			plt_sec = i;
	CHECK(plt_sec > 0);
	sh[plt_sec].sh_size = 0x100000;
	e = sp_elf_cache_image(c, im.b, len);
	t = e ? sp_elf_symtab(e, &o) : NULL;
	CHECK(t != NULL);
	CHECK_STR(name_at(t, o, plt + 16, NULL), "f@plt");
	CHECK_STR(name_at(t, o, pg, NULL), "g@plt");
	CHECK_STR(name_at(t, o, len + 16, NULL), "(none)");

	sh[plt_sec].sh_size = 80;
	sh[plt_sec].sh_entsize = 3;
	e = sp_elf_cache_image(c, im.b, len);
	t = e ? sp_elf_symtab(e, &o) : NULL;
	CHECK(t != NULL);
	CHECK_STR(name_at(t, o, plt + 16, NULL), "(none)");
	CHECK_STR(name_at(t, o, pg, NULL), "g@plt");

	/* no .rela.plt: .plt's stubs unnamed, .plt.got's still named */
	len = build_lazy(&im, EM_X86_64, &plt, &pg, &init_sec);
	sh = (Elf64_Shdr *)(im.b + len - im.nsh * sizeof(Elf64_Shdr));
	for (i = 0; i < im.nsh; i++)
		if (sh[i].sh_type == SHT_RELA && sh[i].sh_flags & SHF_INFO_LINK)
			sh[i].sh_type = SHT_PROGBITS;
	e = sp_elf_cache_image(c, im.b, len);
	t = e ? sp_elf_symtab(e, &o) : NULL;
	CHECK(t != NULL);
	CHECK_STR(name_at(t, o, plt + 16, NULL), "[plt]");
	CHECK_STR(name_at(t, o, pg, NULL), "g@plt");

	/* stubs of another machine are not decoded as x86-64 */
	len = build_lazy(&im, EM_AARCH64, &plt, &pg, &init_sec);
	e = sp_elf_cache_image(c, im.b, len);
	t = e ? sp_elf_symtab(e, &o) : NULL;
	CHECK(t && sp_symtab_count(t) == 3);
	CHECK_STR(name_at(t, o, plt + 16, NULL), "(none)");
	CHECK_STR(name_at(t, o, sec_addr(&im, init_sec), NULL), "_init");
}

/*
 * A .symtab ranked in place: a size too large for the packed form the sort
 * carries (read again when ranked), aliases decided by binding, then by
 * leading underscores, an unsized symbol up to its section's end, padding
 * left out; each with its size and span as the table gave them.
 */
static void test_ranked(struct sp_elf_cache *c)
{
	static const char str[] = "\0big\0big_local\0f\0__f\0f_weak\0un\0"
				  "__pfx_g\0g\0";
	enum { N_BIG = 1, N_BIGL = 5, N_F = 15, N_UF = 17, N_FW = 21,
	       N_UN = 28, N_PFX = 31, N_G = 39 };
	static struct img im;
	uint8_t text[0x200];
	Elf64_Sym ys[9];
	enum sp_frame_origin o;
	const struct sp_symtab *t;
	const struct sp_sym *s;
	struct sp_elf *e;
	uint64_t a;
	int ti, si;

	img_init(&im);
	memset(text, 0xcc, sizeof(text));
	ti = sec(&im, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text,
		 sizeof(text), 0, 0, 16);
	a = sec_addr(&im, ti);
	ys[0] = (Elf64_Sym){ 0 };
	ys[1] = fsym(N_BIGL, a, 0x10000000, STT_FUNC, STB_LOCAL, (uint16_t)ti);
	ys[2] = fsym(N_BIG, a, 0x10000000, STT_FUNC, STB_GLOBAL, (uint16_t)ti);
	ys[3] = fsym(N_FW, a + 0x100, 0x10, STT_FUNC, STB_WEAK, (uint16_t)ti);
	ys[4] = fsym(N_UF, a + 0x100, 0x10, STT_FUNC, STB_GLOBAL, (uint16_t)ti);
	ys[5] = fsym(N_F, a + 0x100, 0x10, STT_FUNC, STB_GLOBAL, (uint16_t)ti);
	ys[6] = fsym(N_UN, a + 0x180, 0, STT_FUNC, STB_GLOBAL, (uint16_t)ti);
	ys[7] = fsym(N_PFX, a + 0x1c0, 0x10, STT_FUNC, STB_GLOBAL, (uint16_t)ti);
	ys[8] = fsym(N_G, a + 0x1d0, 0x10, STT_FUNC, STB_GLOBAL, (uint16_t)ti);
	si = sec(&im, ".strtab", SHT_STRTAB, 0, str, sizeof(str), 0, 0, 1);
	sec(&im, ".symtab", SHT_SYMTAB, 0, ys, sizeof(ys), sizeof(Elf64_Sym),
	    (uint32_t)si, 8);
	e = sp_elf_cache_image(c, im.b, img_finish(&im, EM_X86_64));
	t = e ? sp_elf_symtab(e, &o) : NULL;
	CHECK(t && o == SP_FO_SYMTAB);
	if (!t)
		return;
	CHECK(sp_symtab_count(t) == 4);
	s = sp_symtab_at(t, a);
	CHECK(s && !strcmp(s->name, "big") && s->size == 0x10000000 &&
	      s->rank == 0);
	s = sp_symtab_at(t, a + 0x100);
	CHECK(s && !strcmp(s->name, "f") && s->size == 0x10 && s->rank == 0);
	s = sp_symtab_at(t, a + 0x180);
	CHECK(s && !strcmp(s->name, "un") && !s->size && s->span == 0x80);
	CHECK_STR(name_at(t, o, a + 0xff, NULL), "big");
	CHECK(!sp_symtab_at(t, a + 0x1c0));
	s = sp_symtab_at(t, a + 0x1d0);
	CHECK(s && !strcmp(s->name, "g"));
}

/*
 * The rule of symtab.h worked out the slow way for address a: of the
 * wanted symbols of v, those with the last start at or below a; of them
 * the first by binding, sized, fewest leading underscores, size, name.
 */
static const Elf64_Sym *slow_find(const Elf64_Sym *v, size_t n,
				  const char *str, uint64_t a, uint64_t text_end)
{
	const Elf64_Sym *best = NULL;
	size_t i;

	for (i = 1; i < n; i++) {
		const char *nm = str + v[i].st_name, *bn;
		int r, br;

		if (!*nm || !strncmp(nm, "__pfx_", 6) || v[i].st_value > a ||
		    (!v[i].st_size && v[i].st_value == text_end))
			continue;
		if (!best || v[i].st_value > best->st_value) {
			best = &v[i];
			continue;
		}
		if (v[i].st_value < best->st_value)
			continue;
		bn = str + best->st_name;
		r = ELF64_ST_BIND(v[i].st_info) == STB_GLOBAL ? 0 :
		    ELF64_ST_BIND(v[i].st_info) == STB_WEAK ? 1 : 2;
		br = ELF64_ST_BIND(best->st_info) == STB_GLOBAL ? 0 :
		     ELF64_ST_BIND(best->st_info) == STB_WEAK ? 1 : 2;
		if (r != br) {
			if (r < br)
				best = &v[i];
		} else if (!v[i].st_size != !best->st_size) {
			if (v[i].st_size)
				best = &v[i];
		} else if (strspn(nm, "_") != strspn(bn, "_")) {
			if (strspn(nm, "_") < strspn(bn, "_"))
				best = &v[i];
		} else if (v[i].st_size != best->st_size) {
			if (v[i].st_size > best->st_size)
				best = &v[i];
		} else if (strcmp(nm, bn) < 0) {
			best = &v[i];
		}
	}
	if (best) {
		uint64_t hold = best->st_size ? best->st_size :
				text_end - best->st_value < 4096 ?
				text_end - best->st_value : 4096;

		if (a - best->st_value >= hold)
			best = NULL;
	}
	return best;
}

/*
 * A table large enough to be ranked in parts (symtab.h): clusters of
 * symbols with aliases, padding, nameless and unsized ones, far apart;
 * every address around them named as the rule says, looked up in an
 * order that ranks the parts out of turn.
 */
static void test_ranked_in_parts(struct sp_elf_cache *c)
{
	static const char str[] = "\0a\0_a\0__a\0b\0__pfx_a\0zz\0";
	static const uint32_t names[] = { 0, 1, 3, 6, 10, 12, 20 };
	static struct img im;
	static Elf64_Sym ys[400];
	const uint64_t span = 0x100000;
	enum sp_frame_origin o;
	const struct sp_symtab *t;
	uint64_t a, text, seed = 12345;
	struct sp_elf *e;
	size_t i, bad = 0;
	int ti, si;

	img_init(&im);
	/* code nowhere in the file: sized symbols need none, unsized ones
	   only a section to end in */
	ti = sec(&im, ".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, NULL,
		 span, 0, 0, 16);
	text = sec_addr(&im, ti);
	ys[0] = (Elf64_Sym){ 0 };
	for (i = 1; i < sizeof(ys) / sizeof(ys[0]); i++) {
		uint64_t r, at;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		r = seed >> 20;
		/* four clusters; every fifth symbol an alias of the one before */
		at = i % 5 == 0 ? ys[i - 1].st_value :
		     (r % 4) * (span / 4) + (r >> 2) % 0x800 * 16;
		ys[i] = fsym(names[(r >> 14) % 7], text + at,
			     (r >> 17) % 3 ? ((r >> 19) % 4) * 0x20 : 0,
			     STT_FUNC, (int)((r >> 21) % 3) == 2 ? STB_LOCAL :
			     (int)((r >> 21) % 3), (uint16_t)ti);
	}
	/* one reaching over a gap (parts holding no symbol) into a cluster */
	ys[1] = fsym(names[1], text + span / 4 - 0x20000, 0x28000, STT_FUNC,
		     STB_GLOBAL, (uint16_t)ti);
	/* an unsized one at the very end holds nothing and is left out */
	ys[2] = fsym(names[1], text + span, 0, STT_FUNC, STB_GLOBAL,
		     (uint16_t)ti);
	si = sec(&im, ".strtab", SHT_STRTAB, 0, str, sizeof(str), 0, 0, 1);
	sec(&im, ".symtab", SHT_SYMTAB, 0, ys, sizeof(ys), sizeof(Elf64_Sym),
	    (uint32_t)si, 8);
	CHECK(im.len < sizeof(im.b) - 0x400);
	e = sp_elf_cache_image(c, im.b, img_finish(&im, EM_X86_64));
	t = e ? sp_elf_symtab(e, &o) : NULL;
	CHECK(t && o == SP_FO_SYMTAB);
	if (!t)
		return;
	/*
	 * A grid from the top down, so that parts rank out of turn, then
	 * around each symbol: its first and last bytes and past them.
	 */
	for (i = 0; i < (span + 0x2000) / 0x1000 + 8 * 400; i++) {
		static const uint64_t off[8] = { -1ULL, 0, 1, 0x1f, 0x20,
						 0x7f, 0xfff, 0x1000 };
		const struct sp_sym *s;
		const Elf64_Sym *w;

		a = i < (span + 0x2000) / 0x1000 ?
		    text + span + 0x1000 - i * 0x1000 :
		    ys[(i / 8) % 400].st_value + off[i % 8];
		s = sp_symtab_find(t, a);
		w = slow_find(ys, sizeof(ys) / sizeof(ys[0]), str, a,
			      text + span);
		if (!s != !w || (s && (s->start != w->st_value ||
				       strcmp(s->name, str + w->st_name) ||
				       s->size != w->st_size)))
			bad++;
	}
	CHECK(bad == 0);
}

/* This process's vDSO: every function named at each of its bytes. */
static void test_vdso(struct sp_elf_cache *c)
{
	const uint8_t *v =
		(const uint8_t *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)v;
	const Elf64_Shdr *sh;
	enum sp_frame_origin o;
	const struct sp_symtab *t;
	struct sp_elf *e;
	size_t len, i, named = 0;

	if (!v)
		return;		/* no vDSO: nothing to check */
	len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	e = sp_elf_cache_image(c, v, len);
	t = e ? sp_elf_symtab(e, &o) : NULL;
	CHECK(t != NULL && o == SP_FO_DYNSYM);
	if (!t)
		return;
	sh = (const Elf64_Shdr *)(v + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const char *str;
		size_t k;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		sym = (const Elf64_Sym *)(v + sh[i].sh_offset);
		str = (const char *)v + sh[sh[i].sh_link].sh_offset;
		for (k = 1; k < sh[i].sh_size / sizeof(*sym); k++) {
			const struct sp_sym *s;
			uint64_t b;

			if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC ||
			    !sym[k].st_size)
				continue;
			for (b = 0; b < sym[k].st_size; b++) {
				s = sp_symtab_find(t, sym[k].st_value + b);
				CHECK(s && s->start == sym[k].st_value &&
				      !(s->flags & SP_SYM_SYNTH));
			}
			s = sp_symtab_at(t, sym[k].st_value);
			/* the winner of the aliases at this address */
			CHECK(s && (!strcmp(s->name, str + sym[k].st_name) ||
				    s->rank < 2));
			named++;
		}
	}
	CHECK(named > 0);
}

int main(void)
{
	struct sp_elf_cache *c = sp_elf_cache_new();

	CHECK(c != NULL);
	if (!c)
		return unit_done("test-plt");
	test_lazy(c);
	test_ibt(c);
	test_damaged(c);
	test_ranked(c);
	test_ranked_in_parts(c);
	test_vdso(c);
	sp_elf_cache_free(c);
	return unit_done("test-plt");
}
