/* SPDX-License-Identifier: MIT */
/* gopclntab.c: Go's function table: pc to function, file, line and pcsp. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"

#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

/* A sub-table: [off, end) of the table's bytes. */
struct span {
	uint64_t off, end;
};

struct sp_gopclntab {
	const uint8_t *data;
	uint64_t len;
	uint64_t vaddr;
	unsigned layout;		/* 116, 118, 120 */
	unsigned quantum;
	uint64_t nfunc;
	uint64_t text_start;		/* 1.18+: base of the entry offsets */
	struct span names, cutab, filetab, pctab, ftab;
	unsigned ftab_entry;		/* bytes per functab entry: 16 or 8 */
	unsigned func_size;		/* bytes of a _func without its arrays */
	unsigned fields;		/* offset of nameoff in a _func */
	unsigned funcid_at;		/* offset of funcID in a _func */
	const uint64_t *relocs;		/* (offset, value) pairs */
	size_t nrelocs;
	uint64_t *own_relocs;		/* what sp_gopclntab_from_elf read */
	char goversion[32];
};

static int u32_at(const struct sp_gopclntab *t, uint64_t off, uint32_t *v)
{
	if (off > t->len || t->len - off < 4)
		return -1;
	memcpy(v, t->data + off, 4);
	return 0;
}

/* A pointer-sized word as the loader leaves it: relocated in a PIE. */
static int word_at(const struct sp_gopclntab *t, uint64_t off, uint64_t *v)
{
	size_t lo = 0, hi = t->nrelocs;

	if (off > t->len || t->len - off < 8)
		return -1;
	memcpy(v, t->data + off, 8);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->relocs[2 * mid] == off) {
			*v = t->relocs[2 * mid + 1];
			break;
		}
		if (t->relocs[2 * mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* A NUL-terminated string at off inside sp, or NULL. */
static const char *str_in(const struct sp_gopclntab *t, const struct span *sp,
			  uint64_t off)
{
	const char *s;

	if (off >= sp->end - sp->off)
		return NULL;
	s = (const char *)t->data + sp->off + off;
	return memchr(s, 0, sp->end - sp->off - off) ? s : NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Place the sub-tables: each runs from its offset to the next one in the
 * order of offsets (the linker writes them in a row), the last to the end.
 */
static int place(struct sp_gopclntab *t, const uint64_t *offs, uint64_t hdr)
{
	struct span *spans[5] = { &t->names, &t->cutab, &t->filetab,
				  &t->pctab, &t->ftab };
	uint64_t sorted[5];
	int i, j;

	for (i = 0; i < 5; i++) {
		if (offs[i] < hdr || offs[i] > t->len)
			return -1;
		sorted[i] = offs[i];
	}
	qsort(sorted, 5, sizeof(sorted[0]), cmp_u64);
	for (i = 0; i < 5; i++) {
		spans[i]->off = offs[i];
		spans[i]->end = t->len;
		for (j = 0; j < 5; j++)
			if (sorted[j] > offs[i]) {
				spans[i]->end = sorted[j];
				break;
			}
	}
	/* the functab and the _func records after it run to the end */
	t->ftab.end = t->len;
	return 0;
}

struct sp_gopclntab *sp_gopclntab_new(const uint8_t *data, size_t len,
				      uint64_t vaddr, const uint64_t *relocs,
				      size_t nrelocs, int *err)
{
	struct sp_gopclntab *t;
	uint64_t w[8], offs[5], hdr, room;
	uint32_t magic;
	unsigned nw, i;

	*err = -EINVAL;
	if (len < 8)
		return NULL;
	memcpy(&magic, data, 4);
	if (data[4] || data[5] || data[7] != 8 ||
	    (data[6] != 1 && data[6] != 2 && data[6] != 4))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	t->data = data;
	t->len = len;
	t->vaddr = vaddr;
	t->relocs = relocs;
	t->nrelocs = nrelocs;
	t->quantum = data[6];
	switch (magic) {
	case MAGIC_116:
		t->layout = 116;
		nw = 7;
		t->ftab_entry = 16;
		t->fields = 8;
		t->func_size = 44;
		t->funcid_at = 40;
		break;
	case MAGIC_118:
	case MAGIC_120:
		t->layout = magic == MAGIC_118 ? 118 : 120;
		nw = 8;
		t->ftab_entry = 8;
		t->fields = 4;
		t->func_size = magic == MAGIC_118 ? 40 : 44;
		t->funcid_at = magic == MAGIC_118 ? 36 : 40;
		break;
	default:
		goto bad;
	}
	hdr = 8 + 8ull * nw;
	for (i = 0; i < nw; i++)
		if (word_at(t, 8 + 8ull * i, &w[i]))
			goto bad;
	t->nfunc = w[0];
	if (t->layout == 116) {
		memcpy(offs, w + 2, sizeof(offs));
	} else {
		t->text_start = w[2];
		memcpy(offs, w + 3, sizeof(offs));
	}
	if (place(t, offs, hdr))
		goto bad;
	/* nfunc entries and the end-of-text sentinel */
	room = (t->ftab.end - t->ftab.off) / t->ftab_entry;
	if (!t->nfunc || t->nfunc >= room)
		goto bad;
	return t;
bad:
	free(t);
	return NULL;
}

void sp_gopclntab_free(struct sp_gopclntab *t)
{
	if (!t)
		return;
	free(t->own_relocs);
	free(t);
}

unsigned sp_gopclntab_layout(const struct sp_gopclntab *t)
{
	return t->layout;
}

const char *sp_gopclntab_go_version(const struct sp_gopclntab *t)
{
	return t->goversion[0] ? t->goversion : NULL;
}

uint64_t sp_gopclntab_nfunc(const struct sp_gopclntab *t)
{
	return t->nfunc;
}

/* File vaddr of functab entry i (0..nfunc, the last the end of text). */
static int ftab_pc(const struct sp_gopclntab *t, uint64_t i, uint64_t *pc)
{
	uint64_t at = t->ftab.off + i * t->ftab_entry;
	uint32_t off;

	if (t->layout == 116)
		return word_at(t, at, pc);
	if (u32_at(t, at, &off))
		return -1;
	*pc = t->text_start + off;
	return 0;
}

int sp_gopclntab_find(const struct sp_gopclntab *t, uint64_t pc,
		      struct sp_gofunc *f)
{
	uint64_t lo = 0, hi = t->nfunc, first, last, at, entry, foff;
	uint32_t v32;
	int32_t nameoff;

	if (ftab_pc(t, 0, &first) || ftab_pc(t, t->nfunc, &last))
		return -EINVAL;
	if (pc < first || pc >= last)
		return -ENOENT;
	/* the last entry at or below pc */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2, e;

		if (ftab_pc(t, mid, &e))
			return -EINVAL;
		if (e <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (ftab_pc(t, lo, &f->entry) || ftab_pc(t, lo + 1, &f->end))
		return -EINVAL;
	if (pc < f->entry || pc >= f->end)	/* entries out of order */
		return -EINVAL;
	at = t->ftab.off + lo * t->ftab_entry + t->ftab_entry / 2;
	if (t->layout == 116) {
		if (word_at(t, at, &foff))
			return -EINVAL;
	} else {
		if (u32_at(t, at, &v32))
			return -EINVAL;
		foff = v32;
	}
	if (foff > t->ftab.end - t->ftab.off ||
	    t->ftab.end - t->ftab.off - foff < t->func_size)
		return -EINVAL;
	f->off = t->ftab.off + foff;
	/* the _func must be the one of this entry */
	if (t->layout == 116) {
		if (word_at(t, f->off, &entry))
			return -EINVAL;
	} else {
		if (u32_at(t, f->off, &v32))
			return -EINVAL;
		entry = t->text_start + v32;
	}
	if (entry != f->entry || u32_at(t, f->off + t->fields, &v32))
		return -EINVAL;
	nameoff = (int32_t)v32;
	f->name = nameoff < 0 ? NULL : str_in(t, &t->names, (uint64_t)nameoff);
	if (!f->name)
		return -EINVAL;
	f->funcid = t->data[f->off + t->funcid_at];
	f->flag = t->data[f->off + t->funcid_at + 1];
	return 0;
}

/* An unsigned LEB128 of at most 32 bits at *p, below end. */
static int uvarint(const struct sp_gopclntab *t, uint64_t *p, uint64_t end,
		   uint32_t *v)
{
	uint32_t r = 0;
	unsigned shift;

	for (shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*p >= end)
			return -1;
		b = t->data[(*p)++];
		r |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/*
 * The value of the pc-value table at pctab offset tab for pc in f: a run
 * of (value delta, pc delta) pairs from (-1, entry), each value holding
 * from the pc before it up to the pc after it.
 */
static int pcvalue(const struct sp_gopclntab *t, const struct sp_gofunc *f,
		   uint32_t tab, uint64_t pc, int32_t *val)
{
	uint64_t p, cur = f->entry;
	uint32_t v = (uint32_t)-1;

	if (!tab)
		return -ENOENT;
	if (tab >= t->pctab.end - t->pctab.off)
		return -EINVAL;
	if (pc < f->entry || pc >= f->end)
		return -ENOENT;
	p = t->pctab.off + tab;
	for (;;) {
		uint32_t dv, dpc;
		uint64_t next;

		if (uvarint(t, &p, t->pctab.end, &dv))
			return -EINVAL;
		if (!dv && cur != f->entry)
			return -ENOENT;		/* the end of the table */
		v += dv & 1 ? ~(dv >> 1) : dv >> 1;
		if (uvarint(t, &p, t->pctab.end, &dpc))
			return -EINVAL;
		next = cur + (uint64_t)dpc * t->quantum;
		if (pc < next) {
			*val = (int32_t)v;
			return 0;
		}
		cur = next;
	}
}

int sp_gopclntab_pcsp(const struct sp_gopclntab *t, const struct sp_gofunc *f,
		      uint64_t pc, int32_t *sp)
{
	uint32_t tab;

	if (u32_at(t, f->off + t->fields + 12, &tab))
		return -EINVAL;
	return pcvalue(t, f, tab, pc, sp);
}

int sp_gopclntab_line(const struct sp_gopclntab *t, const struct sp_gofunc *f,
		      uint64_t pc, const char **file, uint32_t *line)
{
	uint32_t tfile, tline, cu, foff;
	int32_t fileno, ln;
	uint64_t at;
	int r;

	if (u32_at(t, f->off + t->fields + 16, &tfile) ||
	    u32_at(t, f->off + t->fields + 20, &tline) ||
	    u32_at(t, f->off + t->fields + 28, &cu))
		return -EINVAL;
	if ((r = pcvalue(t, f, tfile, pc, &fileno)) ||
	    (r = pcvalue(t, f, tline, pc, &ln)))
		return r;
	if (fileno < 0 || ln <= 0)
		return -ENOENT;
	at = ((uint64_t)cu + (uint64_t)fileno) * 4;
	if (at >= t->cutab.end - t->cutab.off ||
	    t->cutab.end - t->cutab.off - at < 4)
		return -EINVAL;
	memcpy(&foff, t->data + t->cutab.off + at, 4);
	if (foff == UINT32_MAX)
		return -ENOENT;
	*file = str_in(t, &t->filetab, foff);
	if (!*file)
		return -EINVAL;
	*line = (uint32_t)ln;
	return 0;
}

static int name_in(const char *name, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

int sp_gofunc_is_top(const struct sp_gopclntab *t, const struct sp_gofunc *f)
{
	static const char *const top[] = {
		"runtime.goexit", "runtime.mstart", "runtime.rt0_go",
	};

	if (f->flag & SP_GOFUNC_TOPFRAME)
		return 1;
	return t->layout == 116 && !f->flag && name_in(f->name, top, 3);
}

int sp_gofunc_is_switch(const struct sp_gopclntab *t,
			const struct sp_gofunc *f)
{
	static const char *const sw[] = {
		"runtime.systemstack", "runtime.mcall", "runtime.morestack",
		"runtime.asmcgocall", "runtime.cgocallback",
	};

	if (!name_in(f->name, sw, sizeof(sw) / sizeof(sw[0])))
		return 0;
	/* Go 1.16 has no flags; later, only the assembly switches */
	if (t->layout == 116 && !f->flag)
		return 1;
	return !!(f->flag & SP_GOFUNC_ASM);
}

/* ELF files ---------------------------------------------------------------- */

/* The section called name, with its bytes inside the image; 0 or -1. */
static int section(Elf *elf, size_t size, const char *name, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, out))
			continue;
		n = elf_strptr(elf, shstrndx, out->sh_name);
		if (!n || strcmp(n, name))
			continue;
		if (out->sh_type == SHT_NOBITS || out->sh_offset > size ||
		    out->sh_size > size - out->sh_offset)
			return -1;
		return 0;
	}
	return -1;
}

static int cmp_pair(const void *a, const void *b)
{
	return cmp_u64(a, b);
}

/*
 * The R_X86_64_RELATIVE relocations of [vaddr, vaddr + len) as (offset,
 * value) pairs sorted by offset: the words a PIE's loader writes there.
 * Returns 0 (none: *n 0) or -ENOMEM.
 */
static int read_relocs(Elf *elf, const uint8_t *image, size_t size,
		       uint64_t vaddr, uint64_t len, uint64_t **out, size_t *n)
{
	Elf_Scn *scn = NULL;
	uint64_t *r = NULL;
	size_t cap = 0;

	*n = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		uint64_t k, count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_entsize != sizeof(Elf64_Rela) ||
		    sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
			continue;
		count = sh.sh_size / sizeof(Elf64_Rela);
		for (k = 0; k < count; k++) {
			Elf64_Rela rel;

			memcpy(&rel, image + sh.sh_offset + k * sizeof(rel),
			       sizeof(rel));
			if (ELF64_R_TYPE(rel.r_info) != R_X86_64_RELATIVE ||
			    rel.r_offset < vaddr || rel.r_offset - vaddr >= len)
				continue;
			if (*n == cap) {
				uint64_t *nr;

				cap = cap ? 2 * cap : 64;
				nr = realloc(r, cap * 2 * sizeof(*r));
				if (!nr) {
					free(r);
					return -ENOMEM;
				}
				r = nr;
			}
			r[2 * *n] = rel.r_offset - vaddr;
			r[2 * *n + 1] = (uint64_t)rel.r_addend;
			(*n)++;
		}
	}
	if (*n)
		qsort(r, *n, 2 * sizeof(*r), cmp_pair);
	*out = r;
	return 0;
}

/* "\xff Go buildinf:", pointer size, flags; with flags & 2 the version
 * follows at 32 as a uvarint length and its bytes (Go 1.18 and later). */
static void read_version(Elf *elf, const uint8_t *image, size_t size,
			 char *out, size_t outlen)
{
	static const char magic[] = "\xff Go buildinf:";
	GElf_Shdr sh;
	const uint8_t *b;
	uint64_t n = 0, i;
	unsigned shift = 0;

	if (section(elf, size, ".go.buildinfo", &sh) || sh.sh_size < 33)
		return;
	b = image + sh.sh_offset;
	if (memcmp(b, magic, 14) || !(b[15] & 2))
		return;
	for (i = 32; i < sh.sh_size && shift < 64; i++, shift += 7) {
		n |= (uint64_t)(b[i] & 0x7f) << shift;
		if (!(b[i] & 0x80))
			break;
	}
	if (i >= sh.sh_size || n >= outlen || n > sh.sh_size - i - 1 ||
	    n < 3 || memchr(b + i + 1, 0, n))
		return;
	memcpy(out, b + i + 1, n);
	out[n] = 0;
}

struct sp_gopclntab *sp_gopclntab_from_elf(Elf *elf, const uint8_t *image,
					   size_t size)
{
	struct sp_gopclntab *t;
	uint64_t *relocs = NULL;
	size_t nrelocs = 0;
	GElf_Shdr sh;
	int err;

	if (section(elf, size, ".gopclntab", &sh) &&
	    section(elf, size, ".data.rel.ro.gopclntab", &sh))
		return NULL;
	if (read_relocs(elf, image, size, sh.sh_addr, sh.sh_size, &relocs,
			&nrelocs))
		return NULL;
	t = sp_gopclntab_new(image + sh.sh_offset, sh.sh_size, sh.sh_addr,
			     relocs, nrelocs, &err);
	if (!t) {
		free(relocs);
		return NULL;
	}
	t->own_relocs = relocs;
	read_version(elf, image, size, t->goversion, sizeof(t->goversion));
	return t;
}
