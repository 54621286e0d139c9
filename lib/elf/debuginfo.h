/* SPDX-License-Identifier: MIT */
/*
 * debuginfo.h: finding the debug information of an ELF file that is not in
 * the file itself, and reading the symbol tables of what is found.
 *
 * Distributions strip their binaries and ship the symbols and DWARF apart:
 * in /usr/lib/debug/.build-id/xx/rest.debug named by the file's build-id,
 * or in a file named by its .gnu_debuglink section (with a CRC-32 of the
 * debug file's bytes) next to the binary, in its .debug/ directory or under
 * /usr/lib/debug.  Some also keep a small xz-compressed ELF of function
 * symbols in .gnu_debugdata (MiniDebugInfo).  Each debug file is opened once
 * per finder and shared by every mapping of the files that name it; a
 * search that finds nothing is remembered too.
 */
#ifndef SP_DEBUGINFO_H
#define SP_DEBUGINFO_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

#include "buildid.h"
#include "symtab.h"

/* How a debug file was found. */
enum sp_debug_how {
	SP_DEBUG_NONE = 0,
	SP_DEBUG_BUILDID,	/* ROOT/.build-id/xx/rest.debug */
	SP_DEBUG_LINK,		/* .gnu_debuglink, CRC checked */
	SP_DEBUG_MINI,		/* .gnu_debugdata, decompressed in memory */
	SP_DEBUG_DEBUGINFOD,	/* fetched by build-id (debuginfod.h) */
};

struct sp_debug_finder;
struct sp_debugfile;
struct sp_debuginfod;

/*
 * Returns a finder searching /usr/lib/debug (unless no_default) and the
 * roots added later; NULL when out of memory.
 */
struct sp_debug_finder *sp_debug_finder_new(int no_default);
void sp_debug_finder_free(struct sp_debug_finder *f);

/*
 * Add a search root, searched before /usr/lib/debug in the order added: as
 * ROOT/.build-id/xx/rest.debug, ROOT/DIR/LINK and ROOT/LINK.  Returns 0 or
 * -ENOMEM.
 */
int sp_debug_finder_add_dir(struct sp_debug_finder *f, const char *dir);

/*
 * Ask d (not owned; NULL: none) for the debug files the searches on disk
 * do not find, by build-id.
 */
void sp_debug_finder_set_debuginfod(struct sp_debug_finder *f,
				    struct sp_debuginfod *d);

/*
 * The separate debug file of the ELF file at path (e its libelf handle),
 * whose build-id is bid (bid_len bytes; 0: read it from e).  Build-id
 * directories come first, then the .gnu_debuglink of e, then debuginfod.  A debug file is
 * only taken when its own build-id matches bid (when both are known) or its
 * CRC matches the link's.  Returns NULL when there is none; the result
 * belongs to the finder.
 */
struct sp_debugfile *sp_debug_find(struct sp_debug_finder *f, const char *path,
				   Elf *e, const uint8_t *bid, size_t bid_len);

/*
 * The debug file of a build-id alone (the file on disk no longer matches
 * the recording): searched in the build-id directories and debuginfod.
 * NULL if none.
 */
struct sp_debugfile *sp_debug_find_build_id(struct sp_debug_finder *f,
					    const uint8_t *bid, size_t bid_len);

/*
 * The MiniDebugInfo of e: its .gnu_debugdata decompressed into an ELF image
 * in memory.  key names the file for the cache.  NULL if none or corrupt.
 */
struct sp_debugfile *sp_debug_mini(struct sp_debug_finder *f, const char *key,
				   Elf *e);

Elf *sp_debugfile_elf(const struct sp_debugfile *d);
const char *sp_debugfile_path(const struct sp_debugfile *d);
enum sp_debug_how sp_debugfile_how(const struct sp_debugfile *d);

/*
 * The function symbols of the debug file (its .symtab), sorted; built on
 * first use.  NULL if it has none.
 */
const struct sp_symtab *sp_debugfile_symtab(struct sp_debugfile *d);

/* Debug files and images opened (not lookups), for the open-once tests. */
unsigned sp_debug_finder_opened(const struct sp_debug_finder *f);

/* Whether e has a section of this name (".debug_info", ".symtab"). */
int sp_elf_has_section(Elf *e, const char *name);

/* The CRC-32 of .gnu_debuglink (zlib's crc32) of len bytes. */
uint32_t sp_debuglink_crc(const void *data, size_t len);

#endif
