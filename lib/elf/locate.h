/* SPDX-License-Identifier: MIT */
/*
 * locate.h: the file a recording mapped, found by the build-id the
 * recording holds for it, never a file that merely has its path.
 *
 * A stream names each mapping's file by path and, when it could read one,
 * by build-id.  By the time it is unwound and symbolized the path may hold
 * another build of the file (an upgrade) or nothing (a deleted library).
 * One lookup, used for every mapping (elf/procs.c) and so by sp-unwind and
 * sp-symbolize alike, asks its sources in order and takes the first file
 * whose build-id is the recorded one:
 *
 *	store	the build-id cache (bidstore.h), where sp-record copied
 *		what it saw deleted or replaced
 *	path	the file at the recorded path (" (deleted)" removed)
 *	debuginfod
 *		the executable the servers of DEBUGINFOD_URLS have for the
 *		build-id (debuginfod.h), when the variable is set
 *	debug	ROOT/.build-id/ab/cdef....debug under each debug root and
 *		/usr/lib/debug: a separate debug file, which has the
 *		symbols and DWARF but not the code or .eh_frame bytes, so
 *		it names frames and cannot unwind them
 *
 * Without a recorded build-id only the path is tried, unchecked.  A new
 * source (a symbol server) is one more function in the table of locate.c.
 * Files come from, and belong to, the ELF cache.
 */
#ifndef SP_LOCATE_H
#define SP_LOCATE_H

#include <stddef.h>
#include <stdint.h>

#include "elfcache.h"

/* Where a file was found. */
enum sp_elf_from {
	SP_FROM_NONE = 0,
	SP_FROM_STORE,		/* the build-id cache */
	SP_FROM_PATH,		/* the recorded path */
	SP_FROM_DEBUG,		/* a build-id debug file: symbols only */
	SP_FROM_DEBUGINFOD,	/* the executable from a debuginfod server */
	SP_FROM_MAX
};

/* "store", "path", "debug", "debuginfod"; "none". */
const char *sp_elf_from_name(unsigned from);

struct sp_locator;

/*
 * Returns a locator over cache (not owned) with the default sources: the
 * build-id cache in its default directory (sp_bidstore_default_dir(); none
 * when it has none), the path, /usr/lib/debug.  NULL when out of memory.
 */
struct sp_locator *sp_locator_new(struct sp_elf_cache *cache);

/* NULL is a no-op. */
void sp_locator_free(struct sp_locator *l);

/*
 * Look for copies in the build-id cache at dir instead (NULL: in none).
 * Call before the first lookup.  Returns 0 or -ENOMEM.
 */
int sp_locator_set_store(struct sp_locator *l, const char *dir);

/* The build-id cache's directory, NULL when there is none. */
const char *sp_locator_store(const struct sp_locator *l);

/*
 * Search dir for build-id debug files before /usr/lib/debug, in the order
 * added.  Returns 0 or -ENOMEM.
 */
int sp_locator_add_debug_root(struct sp_locator *l, const char *dir);

struct sp_debuginfod;

/*
 * The debuginfod client of the locator, made when it was if
 * DEBUGINFOD_URLS names a server; NULL when it is off, with *why (may be
 * NULL) set when it was asked for and could not be had.  It belongs to
 * the locator; the debug finder of the same files shares it.
 */
struct sp_debuginfod *sp_locator_debuginfod(const struct sp_locator *l,
					    const char **why);

/* Whether /usr/lib/debug is searched (the default: it is). */
void sp_locator_set_system_debug(struct sp_locator *l, int on);

/*
 * The file recorded at path with build-id bid (bid_len bytes, 0: none
 * recorded): the first the sources give whose build-id is bid, or with no
 * build-id the file at path.  Sets *from (may be NULL) to where it was
 * found.  Returns NULL when there is none: the result belongs to the ELF
 * cache, and a repeated question opens nothing again.
 */
struct sp_elf *sp_locate(struct sp_locator *l, const char *path,
			 const uint8_t *bid, size_t bid_len,
			 enum sp_elf_from *from);

#endif
