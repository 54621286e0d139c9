/* SPDX-License-Identifier: MIT */
/* dwslice.c: compressed DWARF inflated as far as lookups need (dwslice.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <dwarf.h>
#include <isa-l/igzip_lib.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "base/search.h"
#include "dwslice.h"

/* The sections copied; the first three grow on demand, the rest whole. */
enum { S_INFO, S_ABBREV, S_LINE, S_ARANGES, S_STR, S_LINE_STR, S_RNGLISTS,
       S_RANGES, S_ADDR, S_STR_OFFSETS, NSEC };
#define NPREFIX 3

static const char *const sec_name[NSEC] = {
	".debug_info", ".debug_abbrev", ".debug_line", ".debug_aranges",
	".debug_str", ".debug_line_str", ".debug_rnglists", ".debug_ranges",
	".debug_addr", ".debug_str_offsets",
};

/* Sections that make units depend on more than a prefix of one file. */
static const char *const refused[] = {
	".debug_types", ".gnu_debugaltlink", ".debug_cu_index",
	".debug_tu_index", ".debug_sup",
};

/*
 * What units maps a walked unit's offset to: its header size, the offset
 * of its abbreviation table and what is known of it.
 */
#define UNIT_ABBREV	(1ull << 60)	/* its abbreviations inflated, checked */
#define UNIT_LINES	(1ull << 61)	/* its line table readable too */
#define UNIT_FOREIGN	(1ull << 62)	/* its forms may point outside it */
#define UNIT_READY	(1ull << 63)	/* its DIEs readable */
#define UNIT_HSIZE	0xffffull
#define UNIT_ABBREV_AT(v) (((v) >> 16) & ((1ull << 44) - 1))

/* Inflate this much past what is asked, so that growth comes in steps. */
#define AHEAD (64 * 1024)

struct sec {
	unsigned char *buf;	/* in the image, size bytes reserved */
	size_t size, done;	/* uncompressed size, bytes valid */
	size_t off;		/* of buf in the image */
	const unsigned char *src;	/* the zlib stream, or the bytes to copy */
	size_t srclen;
	int compressed;
	struct inflate_state *z;	/* while the stream has more */
	int present;
};

struct arange {
	uint64_t lo, hi;	/* [lo, hi) */
	uint64_t unit;		/* offset of the unit header in .debug_info */
};

struct sp_dwslice {
	Elf *img;
	Dwarf *dw;
	unsigned char *map;
	size_t maplen;
	struct sec sec[NSEC];
	struct arange *ar;
	size_t nar, capar;
	struct sp_u64map units;	/* unit offset -> UNIT_* | header size */
	uint64_t walked;	/* units before this offset are walked */
	size_t inflated, total;
	int broken;
};

/* ------------------------------------------------------------ inflating */

static int fill(struct sp_dwslice *s, struct sec *c, size_t upto)
{
	if (upto > c->size)
		upto = c->size;
	while (c->done < upto) {
		size_t chunk = c->size - c->done, got;
		int r;

		if (s->broken || !c->z)
			return -EIO;
		if (chunk > upto - c->done + AHEAD)
			chunk = upto - c->done + AHEAD;
		if (chunk > UINT_MAX / 2)
			chunk = UINT_MAX / 2;
		/* from the page the last chunk ended in, already there */
		sp_prefault(c->buf + c->done, chunk);
		c->z->next_out = c->buf + c->done;
		c->z->avail_out = (uint32_t)chunk;
		r = isal_inflate(c->z);
		got = chunk - c->z->avail_out;
		c->done += got;
		s->inflated += got;
		if (r != ISAL_DECOMP_OK)
			goto broken;
		if (c->z->block_state == ISAL_BLOCK_FINISH) {
			/* the trailer's Adler-32 checked */
			free(c->z);
			c->z = NULL;
			if (c->done != c->size)
				goto broken;
		} else if (got == 0) {
			goto broken;
		}
	}
	return 0;
broken:
	s->broken = 1;
	return -EIO;
}

static int need(struct sp_dwslice *s, int i, uint64_t upto)
{
	if (upto > s->sec[i].size)
		return -ERANGE;
	return fill(s, &s->sec[i], (size_t)upto);
}

int sp_dwslice_whole(struct sp_dwslice *s)
{
	int i, r;

	for (i = 0; i < NPREFIX; i++)
		if (s->sec[i].present && (r = fill(s, &s->sec[i], s->sec[i].size)))
			return r;
	return 0;
}

void sp_dwslice_size(const struct sp_dwslice *s, size_t *inflated,
		     size_t *total)
{
	*inflated = s->inflated;
	*total = s->total;
}

Dwarf *sp_dwslice_dwarf(struct sp_dwslice *s)
{
	return s->dw;
}

/* ------------------------------------------------------------ reading */

/* A cursor over bytes [0, end) of an inflated section. */
struct cur {
	const unsigned char *p;
	uint64_t pos, end;
	int bad;
};

static uint64_t rd(struct cur *c, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if (c->bad || n > 8 || c->pos > c->end || n > c->end - c->pos) {
		c->bad = 1;
		return 0;
	}
	for (i = 0; i < n; i++)	/* little-endian: the image is native */
		v |= (uint64_t)c->p[c->pos + i] << (8 * i);
	if (n && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
		v = __builtin_bswap64(v) >> (64 - 8 * n);
	c->pos += n;
	return v;
}

static void skip(struct cur *c, uint64_t n)
{
	if (c->bad || c->pos > c->end || n > c->end - c->pos)
		c->bad = 1;
	else
		c->pos += n;
}

/*
 * An unsigned LEB128 of an abbreviation table.  The table is inflated as
 * far as the cursor reads, a byte at a time past what is there.
 */
static uint64_t uleb(struct sp_dwslice *s, struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		unsigned char b;

		if (c->bad || c->pos >= c->end ||
		    need(s, S_ABBREV, c->pos + 1)) {
			c->bad = 1;
			return 0;
		}
		b = c->p[c->pos++];
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
		if (shift > 70) {
			c->bad = 1;
			return 0;
		}
	}
}

/* Forms whose value may point outside the unit, or into another file. */
static int foreign_form(uint64_t form)
{
	switch (form) {
	case DW_FORM_ref_addr:
	case DW_FORM_ref_sig8:
	case DW_FORM_indirect:
	case DW_FORM_ref_sup4:
	case DW_FORM_ref_sup8:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		return 1;
	default:
		return 0;
	}
}

/*
 * Inflate the abbreviation table at off to its end; *foreign is set when
 * one of its forms can point outside the unit.
 */
static int abbrev_table(struct sp_dwslice *s, uint64_t off, int *foreign)
{
	struct cur c = { s->sec[S_ABBREV].buf, off, s->sec[S_ABBREV].size, 0 };

	while (!c.bad) {
		uint64_t name, form;

		if (uleb(s, &c) == 0)	/* code 0 ends the table */
			break;
		uleb(s, &c);		/* tag */
		if (need(s, S_ABBREV, c.pos + 1) || rd(&c, 1) > 1)
			return -EINVAL;	/* children: yes or no */
		do {
			name = uleb(s, &c);
			form = uleb(s, &c);
			if (form == DW_FORM_implicit_const)
				uleb(s, &c);
			if (foreign_form(form))
				*foreign = 1;
		} while (!c.bad && (name || form));
	}
	return c.bad ? (s->broken ? -EIO : -EINVAL) : 0;
}

/*
 * Check the unit at s->walked, inflating it, note it in s->units and move
 * past it.  libdw reads the unit DIE of a unit before DWARF 5 as it walks
 * past it, so its abbreviation table is inflated now; a DWARF 5 unit's
 * waits until its DIEs are read (unit_abbrev()): walking past the units
 * before the one asked for is most of a first lookup deep in a file.
 */
static int walk_unit(struct sp_dwslice *s)
{
	uint64_t start = s->walked, len, abbrev, v;
	unsigned offsz = 4, version, type = 0;
	struct sp_u64slot *slot;
	int r, foreign = 0;
	struct cur c;

	if ((r = need(s, S_INFO, start + 4 > s->sec[S_INFO].size ?
			    s->sec[S_INFO].size : start + 4)))
		return r;
	c = (struct cur){ s->sec[S_INFO].buf, start, s->sec[S_INFO].done, 0 };
	len = rd(&c, 4);
	if (len == 0xffffffff) {
		offsz = 8;
		if ((r = need(s, S_INFO, start + 12 > s->sec[S_INFO].size ?
				    s->sec[S_INFO].size : start + 12)))
			return r;
		c.end = s->sec[S_INFO].done;
		len = rd(&c, 8);
	} else if (len >= 0xfffffff0) {
		return -EINVAL;
	}
	if (c.bad || len < 2 || len > s->sec[S_INFO].size - c.pos)
		return -EINVAL;
	/* the whole unit: a prefix of .debug_info is what libdw reads */
	if ((r = need(s, S_INFO, c.pos + len)))
		return r;
	c.end = c.pos + len;
	version = (unsigned)rd(&c, 2);
	if (version < 2 || version > 5)
		return -EINVAL;
	if (version >= 5) {
		type = (unsigned)rd(&c, 1);
		rd(&c, 1);			/* address size */
		abbrev = rd(&c, offsz);
		if (type == DW_UT_skeleton || type == DW_UT_split_compile)
			skip(&c, 8);		/* unit id */
		else if (type == DW_UT_type || type == DW_UT_split_type)
			skip(&c, 8 + offsz);	/* signature, type offset */
		else if (type != DW_UT_compile && type != DW_UT_partial)
			return -EINVAL;
	} else {
		abbrev = rd(&c, offsz);
		rd(&c, 1);			/* address size */
	}
	/* (take_section() keeps sizes below 2^40: the offset fits) */
	if (c.bad || abbrev >= s->sec[S_ABBREV].size)
		return -EINVAL;
	v = (c.pos - start) | abbrev << 16;
	if (version < 5) {
		if ((r = abbrev_table(s, abbrev, &foreign)))
			return r;
		v |= UNIT_ABBREV | (foreign ? UNIT_FOREIGN : 0);
	}
	slot = sp_u64map_get(&s->units, start, NULL);
	if (!slot)
		return -ENOMEM;
	slot->val = v;
	s->walked = c.end;
	return 0;
}

/* Inflate and check the abbreviation table of the unit of *v, once. */
static int unit_abbrev(struct sp_dwslice *s, uint64_t *v)
{
	int r, foreign = 0;

	if (*v & UNIT_ABBREV)
		return 0;
	if ((r = abbrev_table(s, UNIT_ABBREV_AT(*v), &foreign)))
		return r;
	*v |= UNIT_ABBREV | (foreign ? UNIT_FOREIGN : 0);
	return 0;
}

/* Make the line table at off readable. */
static int line_table(struct sp_dwslice *s, uint64_t off)
{
	struct cur c;
	uint64_t len;
	int r;

	if (off + 4 > s->sec[S_LINE].size || (r = need(s, S_LINE, off + 4)))
		return 0;	/* libdw will find it out of range itself */
	c = (struct cur){ s->sec[S_LINE].buf, off, s->sec[S_LINE].done, 0 };
	len = rd(&c, 4);
	if (len == 0xffffffff) {
		if (off + 12 > s->sec[S_LINE].size || (r = need(s, S_LINE, off + 12)))
			return r == -EIO ? r : 0;
		c.end = s->sec[S_LINE].done;
		len = rd(&c, 8);
	}
	if (c.bad || len > s->sec[S_LINE].size - c.pos)
		return 0;
	r = need(s, S_LINE, c.pos + len);
	return r == -EIO ? r : 0;
}

/*
 * Make the unit's DIEs readable, and its line table when lines is set.
 * Returns 0 when its DIEs were readable before, 1 when they are now, or
 * -errno.
 */
static int unit_ready(struct sp_dwslice *s, uint64_t unit, int lines,
		      Dwarf_Off *die)
{
	struct sp_u64slot *slot;
	Dwarf_Attribute a;
	Dwarf_Word stmt;
	Dwarf_Die cu;
	uint64_t v;
	int r, first = 0;

	while (s->walked <= unit)
		if ((r = walk_unit(s)))
			return r == -EIO || r == -ENOMEM ? r : -ENOENT;
	slot = sp_u64map_find(&s->units, unit);
	if (!slot)		/* not where a unit starts */
		return -ENOENT;
	v = slot->val;
	*die = unit + (v & UNIT_HSIZE);
	if ((v & UNIT_READY) && (!lines || (v & UNIT_LINES)))
		return 0;
	if (!(v & UNIT_READY)) {
		if ((r = unit_abbrev(s, &v)))
			return r == -EIO || r == -ENOMEM ? r : -ENOENT;
		slot->val = v;	/* unit_abbrev() leaves the map alone */
		if ((v & UNIT_FOREIGN) && (r = sp_dwslice_whole(s)))
			return r;
		first = 1;
	}
	if (!dwarf_offdie(s->dw, *die, &cu))
		return -ENOENT;
	if (lines &&
	    dwarf_formudata(dwarf_attr(&cu, DW_AT_stmt_list, &a), &stmt) == 0 &&
	    s->sec[S_LINE].present && (r = line_table(s, stmt)))
		return r;
	slot = sp_u64map_find(&s->units, unit);
	slot->val |= UNIT_READY | (lines ? UNIT_LINES : 0);
	return first;
}

static int arange_cmp(const void *a, const void *b)
{
	const struct arange *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* .debug_aranges into s->ar, sorted.  Any damage: -EINVAL. */
static int read_aranges(struct sp_dwslice *s)
{
	const struct sec *a = &s->sec[S_ARANGES];
	struct cur c = { a->buf, 0, a->done, 0 };

	while (c.pos < c.end) {
		uint64_t start = c.pos, len, unit, end;
		unsigned offsz = 4, asz, seg;

		len = rd(&c, 4);
		if (len == 0xffffffff) {
			offsz = 8;
			len = rd(&c, 8);
		} else if (len >= 0xfffffff0) {
			return -EINVAL;
		}
		if (c.bad || len > c.end - c.pos)
			return -EINVAL;
		end = c.pos + len;
		if (rd(&c, 2) != 2)
			return -EINVAL;
		unit = rd(&c, offsz);
		asz = (unsigned)rd(&c, 1);
		seg = (unsigned)rd(&c, 1);
		if (c.bad || (asz != 4 && asz != 8) || seg != 0 ||
		    unit >= s->sec[S_INFO].size)
			return -EINVAL;
		c.pos = start + (c.pos - start + 2 * asz - 1) / (2 * asz) * (2 * asz);
		while (c.pos + 2 * asz <= end) {
			uint64_t lo, n;
			struct cur t = c;

			t.end = end;
			lo = rd(&t, asz);
			n = rd(&t, asz);
			c.pos = t.pos;
			if (t.bad)
				return -EINVAL;
			if (!lo && !n)
				break;
			if (!n || lo + n < lo)
				continue;
			if (SP_GROW(s->ar, s->capar, s->nar + 1))
				return -ENOMEM;
			s->ar[s->nar++] = (struct arange){ lo, lo + n, unit };
		}
		c.pos = end;
	}
	if (s->nar > 1)
		qsort(s->ar, s->nar, sizeof(*s->ar), arange_cmp);
	return 0;
}

int sp_dwslice_unit(struct sp_dwslice *s, uint64_t pc, int lines,
		    Dwarf_Off *die)
{
	const struct arange *best = NULL;
	size_t end, i, k;

	if (s->broken)
		return -EIO;
	end = SP_COUNT_LE(s->ar, s->nar, lo, pc);
	for (i = end, k = 0; i-- > 0 && k < 16; k++)
		if (pc < s->ar[i].hi &&
		    (!best || s->ar[i].hi - s->ar[i].lo < best->hi - best->lo))
			best = &s->ar[i];
	if (!best)
		return -ENOENT;
	return unit_ready(s, best->unit, lines, die);
}

/* ------------------------------------------------------------ the image */

static int refused_name(const char *name)
{
	size_t i;

	if (!strncmp(name, ".zdebug", 7))
		return 1;
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (!strcmp(name, refused[i]))
			return 1;
	return 0;
}

/* Where section i's bytes come from; -1 to refuse the file. */
static int take_section(struct sec *c, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS)
		return 0;
	if (sh->sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;
		size_t hdr = sizeof(Elf64_Chdr);

		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < hdr ||
		    !gelf_getchdr(scn, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB ||
		    ch.ch_size > ((size_t)1 << 40) ||
		    d->d_size - hdr > UINT_MAX / 2)
			return -1;
		c->src = (const unsigned char *)d->d_buf + hdr;
		c->srclen = d->d_size - hdr;
		c->size = ch.ch_size;
		c->compressed = 1;
	} else {
		d = elf_getdata(scn, NULL);
		if (!d || (d->d_size && !d->d_buf) || d->d_size > ((size_t)1 << 40))
			return -1;
		c->src = d->d_buf;	/* copied once the image exists */
		c->srclen = d->d_size;
		c->size = d->d_size;
	}
	c->present = 1;
	return 0;
}

/* The ELF header and section headers of the image, native byte order. */
static void write_headers(struct sp_dwslice *s, const GElf_Ehdr *eh,
			  size_t shoff, size_t stroff, const size_t *name_at,
			  int nsec, const int *which, size_t strsize)
{
	Elf64_Ehdr *h = (Elf64_Ehdr *)s->map;
	Elf64_Shdr *sh = (Elf64_Shdr *)(s->map + shoff);
	int i;

	memcpy(h->e_ident, eh->e_ident, EI_NIDENT);
	h->e_type = eh->e_type;
	h->e_machine = eh->e_machine;
	h->e_version = EV_CURRENT;
	h->e_ehsize = sizeof(*h);
	h->e_shoff = shoff;
	h->e_shentsize = sizeof(*sh);
	h->e_shnum = (Elf64_Half)(nsec + 2);
	h->e_shstrndx = (Elf64_Half)(nsec + 1);
	for (i = 0; i < nsec; i++) {
		const struct sec *c = &s->sec[which[i]];

		sh[i + 1] = (Elf64_Shdr){ .sh_name = (Elf64_Word)name_at[i],
			.sh_type = SHT_PROGBITS, .sh_offset = c->off,
			.sh_size = c->size, .sh_addralign = 1 };
	}
	sh[nsec + 1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB,
		.sh_offset = stroff, .sh_size = strsize, .sh_addralign = 1 };
}

static size_t page_up(size_t n, size_t page)
{
	return (n + page - 1) / page * page;
}

/* Lay the sections out in one reserved mapping; copy the plain ones. */
static int build_image(struct sp_dwslice *s, const GElf_Ehdr *eh)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), name_at[NSEC];
	size_t hdr, shoff, stroff, strsize = 1 + sizeof(".shstrtab"), pos;
	int which[NSEC], nsec = 0, i;

	for (i = 0; i < NSEC; i++) {
		if (!s->sec[i].present)
			continue;
		name_at[nsec] = strsize;
		strsize += strlen(sec_name[i]) + 1;
		which[nsec++] = i;
	}
	shoff = sizeof(Elf64_Ehdr);
	stroff = shoff + (size_t)(nsec + 2) * sizeof(Elf64_Shdr);
	hdr = page_up(stroff + strsize, page);
	pos = hdr;
	for (i = 0; i < nsec; i++) {
		struct sec *c = &s->sec[which[i]];

		c->off = pos;
		if (c->size > SIZE_MAX / 2 - pos)
			return -ENOMEM;
		/* a NUL after each: libdw reads strings up to one */
		pos += page_up(c->size + 1, page);
		s->total += c->size;
	}
	s->map = mmap(NULL, pos, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->map == MAP_FAILED) {
		s->map = NULL;
		return -ENOMEM;
	}
	s->maplen = pos;
	write_headers(s, eh, shoff, stroff, name_at, nsec, which, strsize);
	memcpy(s->map + stroff + 1, ".shstrtab", sizeof(".shstrtab"));
	for (i = 0; i < nsec; i++)
		memcpy(s->map + stroff + name_at[i], sec_name[which[i]],
		       strlen(sec_name[which[i]]) + 1);
	for (i = 0; i < NSEC; i++)
		if (s->sec[i].present)
			s->sec[i].buf = s->map + s->sec[i].off;
	return 0;
}

/* Start inflating the compressed sections; copy the plain ones. */
static int start_sections(struct sp_dwslice *s)
{
	int i, r;

	for (i = 0; i < NSEC; i++) {
		struct sec *c = &s->sec[i];

		if (!c->present || !c->size)
			continue;
		if (!c->compressed) {
			memcpy(c->buf, c->src, c->size);
			c->done = c->size;
			continue;
		}
		c->z = malloc(sizeof(*c->z));
		if (!c->z)
			return -ENOMEM;
		isal_inflate_init(c->z);
		c->z->crc_flag = ISAL_ZLIB;
		c->z->next_in = (uint8_t *)c->src;
		c->z->avail_in = (uint32_t)c->srclen;
		if (i >= NPREFIX && (r = fill(s, c, c->size)))
			return r;
	}
	return 0;
}

struct sp_dwslice *sp_dwslice_open(Elf *e)
{
	struct sp_dwslice *s;
	int i;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;

	if (!gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &shstrndx) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
				    ELFDATA2LSB : ELFDATA2MSB))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) ||
		    !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			goto err;
		if (refused_name(name))
			goto err;
		for (i = 0; i < NSEC; i++)
			if (!strcmp(name, sec_name[i]))
				break;
		if (i == NSEC || s->sec[i].present)
			continue;
		if (take_section(&s->sec[i], scn, &sh))
			goto err;
	}
	/* worth it only when the units themselves are compressed */
	if (!s->sec[S_INFO].present || !s->sec[S_INFO].compressed)
		goto err;
	if (build_image(s, &eh) || start_sections(s))
		goto err;
	/* no usable .debug_aranges: all of it, still with the NULs after */
	if (!s->sec[S_ABBREV].present || !s->sec[S_ARANGES].present ||
	    read_aranges(s)) {
		s->nar = 0;
		if (sp_dwslice_whole(s))
			goto err;
	}
	s->img = elf_memory((char *)s->map, s->maplen);
	if (!s->img)
		goto err;
	s->dw = dwarf_begin_elf(s->img, DWARF_C_READ, NULL);
	if (!s->dw)
		goto err;
	return s;
err:
	sp_dwslice_free(s);
	return NULL;
}

void sp_dwslice_free(struct sp_dwslice *s)
{
	int i;

	if (!s)
		return;
	if (s->dw)
		dwarf_end(s->dw);
	if (s->img)
		elf_end(s->img);
	for (i = 0; i < NSEC; i++)
		free(s->sec[i].z);
	if (s->map)
		munmap(s->map, s->maplen);
	free(s->ar);
	sp_u64map_release(&s->units);
	free(s);
}
