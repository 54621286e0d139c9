/* SPDX-License-Identifier: MIT */
/* frame.c: the text names of frame kinds and origins. */
#include "frame.h"

static const char *const kind_names[SP_FK_MAX] = {
	"native", "kernel", "jit", "unknown", "inline", "interp", "synthetic",
	"interpreted",
};

static const char *const origin_names[SP_FO_MAX] = {
	"none", "symtab", "dynsym", "perf-map", "vdso", "kallsyms",
	"debuglink", "buildid", "minidebuginfo", "jitdump", "gopclntab",
	"pycode",
};

const char *sp_frame_kind_name(unsigned kind)
{
	return kind < SP_FK_MAX ? kind_names[kind] : "?";
}

const char *sp_frame_origin_name(unsigned origin)
{
	return origin < SP_FO_MAX ? origin_names[origin] : "?";
}
