/* SPDX-License-Identifier: MIT */
/* elfcache.c: ELF files opened, mapped and indexed once per recording. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/grow.h"
#include "base/io.h"
#include "base/hashtab.h"
#include "buildid.h"
#include "elfcache.h"
#include "gopclntab.h"
#include "plt.h"

struct sp_elf {
	const char *key;	/* owned by the cache's table */
	const char *path;	/* the key, or owned (sp_elf_cache_get_again) */
	int fd;
	Elf *elf;		/* NULL: could not be read */
	const uint8_t *data;	/* the whole file image */
	size_t size;
	uint8_t *copy;		/* owned bytes of a memory image */
	GElf_Phdr *load;	/* PT_LOAD headers */
	size_t nload;
	uint64_t lo, hi;
	uint64_t ehf_vaddr, ehf_size;
	int has_ehf;
	int nocode;		/* a separate debug file: code is NOBITS */
	int bid_len;		/* -1 until read */
	uint8_t bid[SP_BUILD_ID_MAX];
	int syms_loaded;
	struct sp_symtab *syms;
	int cfi_loaded;
	Dwarf_CFI *cfi;		/* .eh_frame through libdw, NULL: none */
	enum sp_frame_origin origin;
	int go_loaded;
	struct sp_gopclntab *go;	/* Go's function table, or NULL */
	struct sp_plt plt;	/* its stubs, which syms holds too */
};

struct sp_elf_cache {
	struct sp_strtab keys;		/* a path or an image's key: its index */
	struct sp_elf **files;		/* by that index */
	size_t nfiles, cap;
	unsigned opened;
};

struct sp_elf_cache *sp_elf_cache_new(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	return calloc(1, sizeof(struct sp_elf_cache));
}

static void elf_free(struct sp_elf *e)
{
	if (e->cfi)
		dwarf_cfi_end(e->cfi);
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->copy);
	free(e->load);
	sp_symtab_free(e->syms);
	sp_gopclntab_free(e->go);
	sp_plt_release(&e->plt);
	if (e->path != e->key)
		free((char *)e->path);
	free(e);
}

void sp_elf_cache_free(struct sp_elf_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nfiles; i++)
		elf_free(c->files[i]);
	free(c->files);
	sp_strtab_release(&c->keys);
	free(c);
}

unsigned sp_elf_cache_opened(const struct sp_elf_cache *c)
{
	return c->opened;
}

/* Index the program headers; 0, or -1 when this is no loadable ELF. */
static int elf_index(struct sp_elf *e)
{
	size_t n, i;
	int exec = 0, exec_bytes = 0;

	if (elf_kind(e->elf) != ELF_K_ELF || gelf_getclass(e->elf) != ELFCLASS64)
		return -1;
	if (elf_getphdrnum(e->elf, &n))
		return -1;
	e->load = calloc(n ? n : 1, sizeof(*e->load));
	if (!e->load)
		return -1;
	e->lo = UINT64_MAX;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph))
			return -1;
		if (ph.p_type == PT_LOAD) {
			/* bytes in the file; an end no loader could map */
			if (ph.p_offset > e->size ||
			    ph.p_filesz > e->size - ph.p_offset ||
			    ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
				return -1;
			e->load[e->nload++] = ph;
			if (ph.p_vaddr < e->lo)
				e->lo = ph.p_vaddr;
			if (ph.p_vaddr + ph.p_memsz > e->hi)
				e->hi = ph.p_vaddr + ph.p_memsz;
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			e->ehf_vaddr = ph.p_vaddr;
			e->ehf_size = ph.p_memsz;
			e->has_ehf = 1;
		}
	}
	if (!e->nload)
		return -1;
	/*
	 * objcopy --only-keep-debug keeps the program headers but makes the
	 * sections of every PT_LOAD NOBITS: executable segments with memory
	 * and no file bytes.  Such a file has symbols and DWARF for the code,
	 * not the code nor .eh_frame.
	 */
	for (i = 0; i < e->nload; i++) {
		if (!(e->load[i].p_flags & PF_X))
			continue;
		exec = 1;
		if (e->load[i].p_filesz)
			exec_bytes = 1;
	}
	e->nocode = exec && !exec_bytes;
	if (e->nocode)
		e->has_ehf = 0;
	return 0;
}

/*
 * The entry of key: *is_new is set when it was made by this call (empty,
 * to be filled).  NULL when out of memory.
 */
static struct sp_elf *cache_entry(struct sp_elf_cache *c, const char *key,
				  int *is_new)
{
	int64_t i = sp_strtab_intern(&c->keys, key);
	struct sp_elf *e;

	*is_new = 0;
	if (i < 0)
		return NULL;
	if ((size_t)i < c->nfiles)
		return c->files[i];
	/* new keys get the next index: the entry goes at the end */
	if (SP_GROW(c->files, c->cap, c->nfiles + 1))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->fd = -1;
	e->bid_len = -1;
	e->key = e->path = c->keys.strs[i];
	c->files[c->nfiles++] = e;
	*is_new = 1;
	return e;
}

/* Drop a half-opened file's libelf state, leaving a negative entry. */
static void make_negative(struct sp_elf *e)
{
	if (e->elf)
		elf_end(e->elf);
	e->elf = NULL;
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	free(e->copy);
	e->copy = NULL;
	e->data = NULL;
	e->nload = 0;
}

/* Open and index the file at path into the new entry e. */
static struct sp_elf *open_file(struct sp_elf_cache *c, struct sp_elf *e,
				const char *path)
{
	if (path[0] != '/')
		return NULL;
	e->fd = sp_open_regular(path);
	if (e->fd < 0)
		return NULL;
	c->opened++;
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf)
		goto bad;
	e->data = (const uint8_t *)elf_rawfile(e->elf, &e->size);
	if (!e->data || elf_index(e))
		goto bad;
	return e;
bad:
	make_negative(e);
	return NULL;
}

struct sp_elf *sp_elf_cache_get(struct sp_elf_cache *c, const char *path)
{
	int is_new;
	struct sp_elf *e = cache_entry(c, path, &is_new);

	if (!e || !is_new)
		return e && e->elf ? e : NULL;
	return open_file(c, e, path);
}

struct sp_elf *sp_elf_cache_get_again(struct sp_elf_cache *c, const char *path,
				      const char *tag)
{
	struct sp_elf *e;
	char *key;
	int is_new;

	/* "path\1[tag]": a path that looks so is checked like any other */
	if (asprintf(&key, "%s%c[%s]", path, 1, tag) < 0)
		return NULL;
	e = cache_entry(c, key, &is_new);
	free(key);
	if (!e || !is_new)
		return e && e->elf ? e : NULL;
	e->path = strdup(path);
	if (!e->path) {
		e->path = e->key;
		return NULL;
	}
	return open_file(c, e, path);
}

struct sp_elf *sp_elf_cache_image(struct sp_elf_cache *c, const void *data,
				  size_t len)
{
	char key[64];
	struct sp_elf *e;
	int is_new;

	snprintf(key, sizeof(key), "[image:%zu:%08lx]", len,
		 crc32(0, data, (uInt)len));
	e = cache_entry(c, key, &is_new);
	if (!e || !is_new)
		return e && e->elf ? e : NULL;
	e->copy = malloc(len ? len : 1);
	if (!e->copy)
		return NULL;
	memcpy(e->copy, data, len);
	e->elf = elf_memory((char *)e->copy, len);
	e->data = e->copy;
	e->size = len;
	if (!e->elf || elf_index(e)) {
		make_negative(e);
		return NULL;
	}
	return e;
}

const char *sp_elf_path(const struct sp_elf *e)
{
	return e->path;
}

Elf *sp_elf_handle(const struct sp_elf *e)
{
	return e->elf;
}

int sp_elf_bias(const struct sp_elf *e, uint64_t map_start, uint64_t pgoff,
		uint64_t *bias)
{
	size_t i;

	/*
	 * A debug file lost the file offsets the mapping was made from: the
	 * loader mapped the executable segment from its first page, so
	 * map_start is its page-aligned vaddr plus the bias.
	 */
	if (e->nocode) {
		for (i = 0; i < e->nload; i++)
			if (e->load[i].p_flags & PF_X) {
				*bias = map_start - (e->load[i].p_vaddr & ~0xfffull);
				return 0;
			}
		return -ENOENT;
	}
	for (i = 0; i < e->nload; i++) {
		const GElf_Phdr *ph = &e->load[i];
		uint64_t align = ph->p_align > 1 ? ph->p_align : 1;
		uint64_t off = ph->p_offset & ~(align - 1);

		/* the loader maps from the page holding p_offset */
		if (pgoff >= off && pgoff < ph->p_offset + ph->p_filesz) {
			*bias = map_start - pgoff + ph->p_offset - ph->p_vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

void sp_elf_extent(const struct sp_elf *e, uint64_t *lo, uint64_t *hi)
{
	*lo = e->lo;
	*hi = e->hi;
}

const void *sp_elf_at(const struct sp_elf *e, uint64_t vaddr, size_t len)
{
	size_t i;

	for (i = 0; i < e->nload; i++) {
		const GElf_Phdr *ph = &e->load[i];

		if (vaddr >= ph->p_vaddr && vaddr - ph->p_vaddr < ph->p_filesz &&
		    len <= ph->p_filesz - (vaddr - ph->p_vaddr))
			return e->data + ph->p_offset + (vaddr - ph->p_vaddr);
	}
	return NULL;
}

int sp_elf_eh_frame_hdr(const struct sp_elf *e, uint64_t *vaddr,
			uint64_t *size)
{
	if (!e->has_ehf)
		return -ENOENT;
	*vaddr = e->ehf_vaddr;
	*size = e->ehf_size;
	return 0;
}

Dwarf_CFI *sp_elf_cfi(struct sp_elf *e)
{
	if (!e->cfi_loaded) {
		e->cfi_loaded = 1;
		/* a debug file's CFI is for code it does not have */
		e->cfi = e->elf && !e->nocode ? dwarf_getcfi_elf(e->elf) : NULL;
	}
	return e->cfi;
}

/*
 * The stubs of the PLT join the symbols, once: without them memory is
 * saved but the stubs go unnamed, never misnamed (symtab.h).
 */
static void add_plt(struct sp_elf *e)
{
	if (sp_plt_read(&e->plt, e, e->syms, e->origin) || !e->plt.n) {
		sp_plt_release(&e->plt);
		return;
	}
	if (e->syms) {
		if (sp_symtab_add(e->syms, e->plt.syms, e->plt.n))
			sp_plt_release(&e->plt);
		return;
	}
	/* no symbol table: the stubs alone, each with its own origin */
	e->syms = sp_symtab_from(e->plt.syms, e->plt.n);
	e->origin = SP_FO_NONE;
	if (!e->syms)
		sp_plt_release(&e->plt);
}

int sp_elf_has_code(const struct sp_elf *e)
{
	return !e->nocode;
}

size_t sp_elf_get_build_id(struct sp_elf *e, const uint8_t **bid)
{
	if (e->bid_len < 0)
		e->bid_len = (int)sp_elf_build_id(e->elf, e->bid);
	*bid = e->bid;
	return (size_t)e->bid_len;
}

const struct sp_symtab *sp_elf_symtab(struct sp_elf *e,
				      enum sp_frame_origin *origin)
{
	if (!e->syms_loaded) {
		e->syms_loaded = 1;
		e->origin = SP_FO_SYMTAB;
		e->syms = sp_symtab_read(e->elf, SHT_SYMTAB);
		if (!e->syms) {
			e->origin = SP_FO_DYNSYM;
			e->syms = sp_symtab_read(e->elf, SHT_DYNSYM);
		}
		add_plt(e);
	}
	*origin = e->syms ? e->origin : SP_FO_NONE;
	return e->syms;
}

const struct sp_gopclntab *sp_elf_gopclntab(struct sp_elf *e)
{
	if (!e->go_loaded) {
		e->go_loaded = 1;
		if (e->elf && !e->copy)
			e->go = sp_gopclntab_from_elf(e->elf, e->data, e->size);
	}
	return e->go;
}
