/* SPDX-License-Identifier: MIT */
/*
 * colour.h: what colour a frame of the flame graph gets, inside lib/flame:
 * its kind from sp-fold's annotations, the palettes of flamegraph.pl, the
 * hues of a differential graph.
 */
#ifndef SP_FLAME_COLOUR_H
#define SP_FLAME_COLOUR_H

#include <stddef.h>

#include "flame.h"

/* The palettes, in sp_flame_palette() order; grey is for synthetic frames. */
enum palette {
	PAL_HOT, PAL_MEM, PAL_IO, PAL_WAKEUP, PAL_JAVA, PAL_JS, PAL_PERL,
	PAL_RED, PAL_GREEN, PAL_BLUE, PAL_AQUA, PAL_YELLOW, PAL_PURPLE,
	PAL_ORANGE, PAL_GREY, PAL_MAX
};

/* Frame kinds, from the annotations sp-fold and stackcollapse-perf add. */
enum sp_flame_kind { K_PLAIN, K_KERNEL, K_JIT, K_INLINE, K_WAKER, K_SYNTHETIC };

struct sp_rgb {
	int r, g, b;
};

/* The kind of name (len bytes), and in *shown the length to show. */
enum sp_flame_kind sp_flame_name_kind(const char *name, size_t len,
				       size_t *shown);

/* The colour of a frame called name, shown bytes of it shown, of kind k. */
struct sp_rgb sp_flame_frame_colour(const struct sp_flame_style *st,
				    const char *name, size_t len, size_t shown,
				    enum sp_flame_kind k);

/* White for no change, to red for the most growth, to blue for the most loss. */
struct sp_rgb sp_flame_diff_colour(double delta, double max);

#endif
