// SPDX-License-Identifier: MIT
/*
 * fuzz-dwarf.c: DWARF read from compressed debug sections (elf/dwslice.h
 * under elf/dwarfinfo.h): the .debug_aranges, unit headers and
 * abbreviation tables stackpulse reads itself to inflate only a prefix,
 * and what libdw then reads from that prefix.
 *
 * Plain bytes would not get past zlib, so the harness builds the file:
 *
 *	input	= flags sections
 *	flags	= u8	bit 0: .debug_info says it is twice as long
 *			as its stream is (a cut stream)
 *	section	= len:u16le bytes	in the order .debug_info, .debug_abbrev,
 *			.debug_line, .debug_aranges, .debug_str,
 *			.debug_line_str, .debug_rnglists, .debug_addr,
 *			.debug_str_offsets; the input's end leaves the rest out
 *
 * and compresses each section (SHF_COMPRESSED, zlib) into an ELF image in
 * memory.  Lookups are made at the 64-bit and 32-bit words of
 * .debug_aranges and .debug_info, where the addresses are, and next to
 * them.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <gelf.h>

#include "elf/dwarfinfo.h"
#include "fuzz.h"

#define NSEC 9
#define MAX_PCS 512

static const char *const names[NSEC] = {
	".debug_info", ".debug_abbrev", ".debug_line", ".debug_aranges",
	".debug_str", ".debug_line_str", ".debug_rnglists", ".debug_addr",
	".debug_str_offsets",
};

struct part {
	const uint8_t *p;
	size_t len;
};

/* The ELF image of the sections, compressed; NULL when zlib cannot. */
static char *build(const struct part *sec, int nsec, int cut, size_t *size)
{
	size_t bound = sizeof(Elf64_Ehdr) + 256, off, shoff, stroff;
	Elf64_Shdr sh[NSEC + 2];
	Elf64_Ehdr *eh;
	char *img;
	int i;

	for (i = 0; i < nsec; i++)
		bound += sizeof(Elf64_Chdr) + compressBound(sec[i].len) + 8;
	bound += sizeof(sh);
	img = calloc(1, bound);
	if (!img)
		abort();
	memset(sh, 0, sizeof(sh));
	off = sizeof(Elf64_Ehdr);
	/* .shstrtab: "\0.shstrtab\0" then the names */
	stroff = off;
	memcpy(img + off, "\0.shstrtab", 11);
	off += 11;
	for (i = 0; i < nsec; i++) {
		sh[i + 1].sh_name = (Elf64_Word)(off - stroff);
		memcpy(img + off, names[i], strlen(names[i]) + 1);
		off += strlen(names[i]) + 1;
	}
	sh[nsec + 1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB,
		.sh_offset = stroff, .sh_size = off - stroff, .sh_addralign = 1 };
	for (i = 0; i < nsec; i++) {
		Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB,
				  .ch_size = sec[i].len, .ch_addralign = 1 };
		uLongf zlen;

		off = (off + 7) & ~(size_t)7;
		if (i == 0 && cut)
			ch.ch_size *= 2;
		zlen = compressBound(sec[i].len);
		if (compress2((Bytef *)img + off + sizeof(ch), &zlen,
			      sec[i].p, sec[i].len, 1) != Z_OK) {
			free(img);
			return NULL;
		}
		memcpy(img + off, &ch, sizeof(ch));
		sh[i + 1].sh_type = SHT_PROGBITS;
		sh[i + 1].sh_flags = SHF_COMPRESSED;
		sh[i + 1].sh_offset = off;
		sh[i + 1].sh_size = sizeof(ch) + zlen;
		sh[i + 1].sh_addralign = 8;
		off += sizeof(ch) + zlen;
	}
	shoff = (off + 7) & ~(size_t)7;
	memcpy(img + shoff, sh, (size_t)(nsec + 2) * sizeof(sh[0]));
	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (Elf64_Half)(nsec + 2);
	eh->e_shstrndx = (Elf64_Half)(nsec + 1);
	*size = shoff + (size_t)(nsec + 2) * sizeof(sh[0]);
	return img;
}

static void probe(struct sp_dwarf *d, uint64_t pc)
{
	/* without lines first: a slice inflates a unit's line table later */
	static const unsigned flags[] = {
		SP_DWARF_INLINES, SP_DWARF_INLINES | SP_DWARF_LINES,
		SP_DWARF_LINES, 0,
	};
	struct sp_src_frame out[16];
	size_t i;
	int n, k;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		n = sp_dwarf_lookup(d, pc, flags[i], out, 16);
		if (n > 16)
			abort();
		for (k = 0; k < n; k++) {
			if (out[k].function)
				(void)strlen(out[k].function);
			if (out[k].file)
				(void)strlen(out[k].file);
		}
	}
}

/* The words of a section as addresses, and the address after each. */
static size_t pcs_of(const struct part *s, uint64_t *pcs, size_t n)
{
	size_t i;

	for (i = 0; i + 8 <= s->len && n + 3 <= MAX_PCS; i += 4) {
		uint64_t v;
		uint32_t w;

		memcpy(&v, s->p + i, 8);
		memcpy(&w, s->p + i, 4);
		pcs[n++] = v;
		pcs[n++] = v + 1;
		pcs[n++] = w;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct part sec[NSEC];
	uint64_t pcs[MAX_PCS];
	struct sp_dwarf *d;
	size_t pos = 1, imgsize, npc = 0, i;
	int nsec = 0, cut;
	char *img;
	Elf *e;

	if (size < 1)
		return 0;
	cut = data[0] & 1;
	while (nsec < NSEC && pos + 2 <= size) {
		size_t len = data[pos] | (size_t)data[pos + 1] << 8;

		pos += 2;
		if (len > size - pos)
			len = size - pos;
		sec[nsec++] = (struct part){ data + pos, len };
		pos += len;
	}
	img = build(sec, nsec, cut, &imgsize);
	if (!img)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_memory(img, imgsize);
	if (e) {
		d = sp_dwarf_open(e);
		if (d) {
			if (nsec > 3)
				npc = pcs_of(&sec[3], pcs, npc);
			if (nsec > 0)
				npc = pcs_of(&sec[0], pcs, npc);
			for (i = 0; i < npc; i++)
				probe(d, pcs[i]);
			sp_dwarf_free(d);
		}
		elf_end(e);
	}
	free(img);
	return 0;
}
