/* SPDX-License-Identifier: MIT */
/*
 * elfcache.h: every ELF file a recording touches, opened and mmapped once.
 *
 * The unwinder reads code, .eh_frame_hdr and .eh_frame through it and the
 * symbolizer reads symbol tables through it, so neither ever opens a file on
 * the per-sample path.  A file that cannot be opened is remembered as such.
 * Memory images (the [vdso] copied from the target) are parsed the same way.
 */
#ifndef SP_ELFCACHE_H
#define SP_ELFCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>
#include <elfutils/libdw.h>

#include "format/frame.h"
#include "symtab.h"

struct sp_elf;
struct sp_elf_cache;
struct sp_gopclntab;

/* Returns a new, empty cache; NULL when out of memory. */
struct sp_elf_cache *sp_elf_cache_new(void);

/* Frees the cache and every sp_elf it handed out; NULL is a no-op. */
void sp_elf_cache_free(struct sp_elf_cache *c);

/*
 * Returns the file at path, opened and mapped on the first call, or NULL if
 * it cannot be read as ELF (remembered: later calls are a lookup).  The
 * result belongs to the cache.
 */
struct sp_elf *sp_elf_cache_get(struct sp_elf_cache *c, const char *path);

/*
 * Returns the file now at path, opened again under an entry of its own
 * for tag (a build-id in hex): for when the entry of path was opened
 * before another file was put at path, as a live pipeline may see across
 * an upgrade.  Once per (path, tag), remembered like sp_elf_cache_get().
 */
struct sp_elf *sp_elf_cache_get_again(struct sp_elf_cache *c, const char *path,
				      const char *tag);

/*
 * Returns an ELF image parsed from a copy of data (a [vdso]); one per
 * distinct content.  NULL if it is not ELF.  The result belongs to the cache.
 */
struct sp_elf *sp_elf_cache_image(struct sp_elf_cache *c, const void *data,
				  size_t len);

/* Number of files opened (not lookups): for tests of the no-reopen rule. */
unsigned sp_elf_cache_opened(const struct sp_elf_cache *c);

const char *sp_elf_path(const struct sp_elf *e);

/*
 * Load bias of a mapping of this file that starts at map_start with file
 * offset pgoff: address = file vaddr + bias.  Returns 0 and sets *bias, or
 * -ENOENT when no PT_LOAD holds pgoff.  For a file without code (a debug
 * file, whose program headers lost their file offsets) the mapping is
 * taken to be that of its first executable segment, from its first page.
 */
int sp_elf_bias(const struct sp_elf *e, uint64_t map_start, uint64_t pgoff,
		uint64_t *bias);

/* Lowest and highest (exclusive) file vaddr of the PT_LOAD segments. */
void sp_elf_extent(const struct sp_elf *e, uint64_t *lo, uint64_t *hi);

/*
 * Bytes of the file image at file vaddr, as the loader maps them: returns a
 * pointer to at least len bytes, or NULL if [vaddr, vaddr+len) is not file
 * backed in one PT_LOAD.
 */
const void *sp_elf_at(const struct sp_elf *e, uint64_t vaddr, size_t len);

/*
 * 1 when the file holds the bytes of its code, 0 for a separate debug file
 * (objcopy --only-keep-debug: executable segments without file bytes),
 * which has symbols and DWARF but nothing to unwind with: sp_elf_at()
 * finds no code in it and sp_elf_eh_frame_hdr() no table.
 */
int sp_elf_has_code(const struct sp_elf *e);

/*
 * The file's GNU build-id (buildid.h), read on first use: its length, 0
 * when it has none; *bid points into e.
 */
size_t sp_elf_get_build_id(struct sp_elf *e, const uint8_t **bid);

/* File vaddr and size of .eh_frame_hdr (PT_GNU_EH_FRAME); -ENOENT if none. */
int sp_elf_eh_frame_hdr(const struct sp_elf *e, uint64_t *vaddr,
			uint64_t *size);

/*
 * The file's own function symbols: .symtab, else .dynsym (*origin says
 * which: SP_FO_SYMTAB, SP_FO_DYNSYM), with its PLT stubs (plt.h), read on
 * first use.  A stub is SP_SYM_SYNTH and carries its own origin; a table of
 * stubs alone (a file with neither table) is SP_FO_NONE.  NULL when it has
 * no symbols and no stubs.
 */
const struct sp_symtab *sp_elf_symtab(struct sp_elf *e,
				      enum sp_frame_origin *origin);

/*
 * The file's .eh_frame as libdw reads it, opened on first use; NULL when it
 * has none.  Owned by the sp_elf.
 */
Dwarf_CFI *sp_elf_cfi(struct sp_elf *e);

/*
 * Go's function table of the file (gopclntab.h), read on first use; NULL
 * when it is no Go program or its table is damaged.  Owned by the sp_elf.
 */
const struct sp_gopclntab *sp_elf_gopclntab(struct sp_elf *e);

/* The libelf handle, for libdw and other readers; owned by the sp_elf. */
Elf *sp_elf_handle(const struct sp_elf *e);

#endif
