/* SPDX-License-Identifier: MIT */
/* demangle.c: C++ and Rust demangling through libiberty's cplus_demangle. */
#include <stddef.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "demangle.h"

int sp_is_mangled(const char *name)
{
	return name && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

char *sp_demangle(const char *name)
{
	if (!sp_is_mangled(name))
		return NULL;
	/*
	 * DMGL_AUTO tries Rust (legacy _ZN...17h<hash>E and v0 _R...) before
	 * the GNU v3 C++ demangler, so one call covers both languages.
	 */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
