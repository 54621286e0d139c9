/* SPDX-License-Identifier: MIT */
/*
 * buildid.h: GNU build-ids (the NT_GNU_BUILD_ID note a linker writes into
 * every file it links), read with libelf: how stackpulse knows that a file
 * on disk is the one a recording mapped, and how it finds debug files.
 */
#ifndef SP_BUILDID_H
#define SP_BUILDID_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

#define SP_BUILD_ID_MAX 20

/*
 * The build-id of e, from its SHT_NOTE sections or, when it has no section
 * headers, its PT_NOTE segments, copied into bid (at most SP_BUILD_ID_MAX
 * bytes).  Returns its length, 0 when e has none.
 */
size_t sp_elf_build_id(Elf *e, uint8_t bid[SP_BUILD_ID_MAX]);

/*
 * The build-id of the ELF file open at fd (not closed), 32- or 64-bit.
 * Returns its length, 0 when the file has none or cannot be read as ELF,
 * -ENOMEM when libelf cannot be set up.
 */
int sp_build_id_fd(int fd, uint8_t bid[SP_BUILD_ID_MAX]);

/* Lowercase hex of a build-id into buf (2 * len + 1 bytes). */
void sp_build_id_hex(const uint8_t *bid, size_t len, char *buf);

#endif
