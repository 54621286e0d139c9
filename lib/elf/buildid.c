/* SPDX-License-Identifier: MIT */
/* buildid.c: NT_GNU_BUILD_ID notes through libelf. */
#include <errno.h>
#include <string.h>

#include "buildid.h"

/* The build-id among the notes of d, copied into bid; its length or 0. */
static size_t note_build_id(Elf_Data *d, uint8_t *bid)
{
	size_t off = 0, noff, doff;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
		size_t n = nh.n_descsz;

		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)d->d_buf + noff, "GNU", 4) || !n)
			continue;
		if (n > SP_BUILD_ID_MAX)
			n = SP_BUILD_ID_MAX;
		memcpy(bid, (const char *)d->d_buf + doff, n);
		return n;
	}
	return 0;
}

size_t sp_elf_build_id(Elf *e, uint8_t bid[SP_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	size_t n, i, len;
	int sections = 0;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		sections = 1;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && (len = note_build_id(d, bid)))
			return len;
	}
	if (sections || elf_getphdrnum(e, &n))
		return 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz,
					 ELF_T_NHDR);
		if (d && (len = note_build_id(d, bid)))
			return len;
	}
	return 0;
}

int sp_build_id_fd(int fd, uint8_t bid[SP_BUILD_ID_MAX])
{
	Elf *e;
	size_t n = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOMEM;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return 0;	/* not ELF, or not readable as such */
	if (elf_kind(e) == ELF_K_ELF)
		n = sp_elf_build_id(e, bid);
	elf_end(e);
	return (int)n;
}

void sp_build_id_hex(const uint8_t *bid, size_t len, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		buf[2 * i] = hex[bid[i] >> 4];
		buf[2 * i + 1] = hex[bid[i] & 15];
	}
	buf[2 * len] = 0;
}
