/* SPDX-License-Identifier: MIT */
/* libcdebug.h: where libc6-dbg puts the C library's debug file. */
#ifndef SP_LIBCDEBUG_H
#define SP_LIBCDEBUG_H

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <gelf.h>

#include "elf/buildid.h"

/*
 * The path of the debug file of /lib/x86_64-linux-gnu/libc.so.6 by its
 * build-id, into path.  Returns 0, or -1 when libc has no build-id.
 */
static inline int libc_debug_path(char *path, size_t size)
{
	char hex[2 * SP_BUILD_ID_MAX + 1];
	uint8_t id[SP_BUILD_ID_MAX];
	size_t len = 0, i;
	int fd;
	Elf *e;

	fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY | O_CLOEXEC);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (e) {
		len = sp_elf_build_id(e, id);
		elf_end(e);
	}
	if (fd >= 0)
		close(fd);
	if (len <= 1)
		return -1;
	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	snprintf(path, size, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex,
		 hex + 2);
	return 0;
}

#endif
