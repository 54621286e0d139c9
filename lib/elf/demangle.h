/* SPDX-License-Identifier: MIT */
/*
 * demangle.h: C++ (Itanium ABI) and Rust (legacy and v0) symbol names made
 * readable, through libiberty's demangler as binutils and gdb use it.
 *
 * Names are demangled once per distinct symbol by the symbolizer's cache, so
 * the demangler's own cost does not matter on the per-sample path.
 */
#ifndef SP_DEMANGLE_H
#define SP_DEMANGLE_H

/*
 * Whether name looks mangled: "_Z..." (C++, and Rust legacy which wraps
 * it) or "_R..." (Rust v0).
 */
int sp_is_mangled(const char *name);

/*
 * Returns the demangled form of name, with parameter lists, malloc'd (the
 * caller frees it); NULL when name is not mangled, is not a valid mangled
 * name, or memory ran out.  Rust legacy names lose their "::h<hash>".
 */
char *sp_demangle(const char *name);

#endif
