// SPDX-License-Identifier: MIT
/*
 * fuzz-rawsym.c: fuzz-rawgen.c's valid raw streams through the unwinder
 * and then the symbolizer, which must accept every record the unwinder
 * writes.  A harness of its own because symbolizing costs about ten times
 * the unwinding (the symbol tables of the files mapped, this binary's
 * among them, are read and sorted again for each input): the unwinder
 * alone runs at the speed of fuzz-rawgen.
 */
#define RAWGEN_SYMBOLIZE 1
#include "fuzz-rawgen.c"
