/* SPDX-License-Identifier: MIT */
/*
 * debuginfod.h: executables and debug files fetched by build-id from the
 * debuginfod servers DEBUGINFOD_URLS names, through libdebuginfod.
 *
 * The client is libdebuginfod's own: its servers, timeouts and on-disk
 * cache come from the environment as for gdb and perf (DEBUGINFOD_URLS,
 * DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT...).  The library is loaded
 * with dlopen() only when DEBUGINFOD_URLS names a server, so that a run
 * without one pays nothing for it (libdebuginfod brings libcurl and TLS).
 * Each (kind, build-id) is asked once per process: what was found, and
 * what was not, is remembered.  A file it gives is still only a
 * candidate: the callers check its build-id before they trust it.
 */
#ifndef SP_DEBUGINFOD_H
#define SP_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

enum sp_debuginfod_kind {
	SP_DEBUGINFOD_EXECUTABLE,	/* the file that ran: code, .eh_frame */
	SP_DEBUGINFOD_DEBUGINFO,	/* its separate debug file */
};

struct sp_debuginfod;

/*
 * Returns a client when DEBUGINFOD_URLS names a server and libdebuginfod
 * can be loaded, else NULL with *why (may be NULL) saying why: NULL when
 * the variable is unset or empty (debuginfod is off), a message when the
 * library is missing or out of memory.
 */
struct sp_debuginfod *sp_debuginfod_new(const char **why);

/* NULL is a no-op. */
void sp_debuginfod_free(struct sp_debuginfod *d);

/*
 * The path in the client's cache of the file of this kind with build-id
 * bid (len bytes), fetched on the first question; NULL when the servers
 * have none (or could not be reached).  The path belongs to d.
 */
const char *sp_debuginfod_find(struct sp_debuginfod *d,
			       enum sp_debuginfod_kind kind,
			       const uint8_t *bid, size_t len);

struct sp_debuginfod_stats {
	uint64_t asked;		/* questions sent to the servers */
	uint64_t found;		/* of them answered with a file */
};

const struct sp_debuginfod_stats *
sp_debuginfod_stats(const struct sp_debuginfod *d);

#endif
