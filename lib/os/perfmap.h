/* SPDX-License-Identifier: MIT */
/*
 * perfmap.h: /tmp/perf-PID.map, where JITs (V8's --perf-basic-prof, CPython's
 * -X perf, ...) write one line per piece of code they make:
 *
 *	START SIZE name		(hex START and SIZE, name to the end of line)
 *
 * The file sits in a world-writable directory and is named after a pid,
 * so anyone can plant one: it is opened in one place, never following a
 * link, never blocking on a fifo, and only when it is a regular file owned
 * by the process's user (when that is not known: by root, by ourselves, or
 * by the owner of /proc/PID while the process lives).  A JIT reuses memory, so lines
 * may overlap: of those holding an address the last one written wins.
 * Lookups follow the rule of base/symrule.h.
 */
#ifndef SP_PERFMAP_H
#define SP_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define SP_PERFMAP_DIR "/tmp"

/* The owner of the JIT's process is not known (see above). */
#define SP_PERFMAP_ANY_OWNER ((uid_t)-1)

/*
 * The path of pid's perf map in dir (NULL: SP_PERFMAP_DIR) into buf of n
 * bytes.  Returns 0, or -ENAMETOOLONG.
 */
int sp_perfmap_path(char *buf, size_t n, const char *dir, uint32_t pid);

/*
 * Open pid's perf map in dir for reading as said above; owner is the uid of
 * the process that writes it, or SP_PERFMAP_ANY_OWNER.  Fills *st (may be
 * NULL).  Returns a descriptor the caller closes, or -errno: -ENOENT (no
 * such file), -EPERM (a link, not a regular file, or another owner).
 */
int sp_perfmap_open(const char *dir, uint32_t pid, uid_t owner,
		    struct stat *st);

struct sp_pmsym {
	uint64_t start, size;
	uint32_t seq;		/* line number: later lines win */
	const char *name;	/* owned by the table */
};

struct sp_perfmap;

/* An empty table; NULL when out of memory. */
struct sp_perfmap *sp_perfmap_new(void);

/* NULL is a no-op. */
void sp_perfmap_free(struct sp_perfmap *m);

/* Forget every line. */
void sp_perfmap_clear(struct sp_perfmap *m);

/*
 * Add len bytes of perf map text (whole lines; a last line without newline
 * counts too) after what was added before.  Lines that do not parse are
 * skipped but counted in the line numbers.  Returns 0 or -ENOMEM.
 */
int sp_perfmap_add(struct sp_perfmap *m, const char *text, size_t len);

/*
 * Read the whole file at fd (not closed) into the table, as
 * sp_perfmap_add().  Returns 0, -ENOMEM or -errno of reading.
 */
int sp_perfmap_read(struct sp_perfmap *m, int fd);

/* Entries in the table. */
size_t sp_perfmap_count(const struct sp_perfmap *m);

/* The entry holding addr (the last written of overlapping ones), NULL. */
const struct sp_pmsym *sp_perfmap_find(const struct sp_perfmap *m,
				       uint64_t addr);

/* The entry naming a frame at addr, by the rule of symrule.h; NULL. */
const struct sp_pmsym *sp_perfmap_lookup(const struct sp_perfmap *m,
					 uint64_t addr, int precise);

#endif
