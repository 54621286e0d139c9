/* SPDX-License-Identifier: MIT */
/*
 * flame.h: stage 5, sp-flame: folded stacks merged into a tree of frames
 * and drawn as one self-contained, interactive flame graph SVG.
 *
 * The tree holds each distinct path of frames once, with its cumulative
 * count: memory grows with distinct frames, never with samples (a flame
 * chart, which keeps the input's order, merges only a frame with the one
 * before it, as flamegraph.pl --flamechart does).  Siblings are drawn in
 * byte order of their names and every number is printed by the same
 * arithmetic, so the same input gives the same bytes.  docs/formats.md says
 * what the SVG holds: a <g> per frame with a <title>, a <rect> and a label,
 * in the order of a walk of the tree, and lib/flame/flame.js (embedded) for
 * zoom, search and details.
 */
#ifndef SP_FLAME_H
#define SP_FLAME_H

#include <stddef.h>

#include "base/io.h"

#define SP_FLAME_REVERSE	0x1	/* leaf first: the leaves become roots */
#define SP_FLAME_CHART		0x2	/* input order, merge consecutive only */
#define SP_FLAME_DIFF		0x4	/* differential: before and after */

struct sp_flame;

/* Returns a new, empty tree with SP_FLAME_* flags; NULL when out of memory. */
struct sp_flame *sp_flame_new(unsigned flags);

/* Free the tree; NULL is a no-op. */
void sp_flame_free(struct sp_flame *f);

/*
 * Add count samples of stack (frames from the root separated by ';', no
 * empty frame: format/folded.h checks), which is cut in place.  base is the
 * count of the same stack before, for SP_FLAME_DIFF (else 0): the width of
 * a frame is its count, its colour the change of the samples it holds as
 * leaf, count - base.  Returns 0 or -ENOMEM.
 */
int sp_flame_add(struct sp_flame *f, char *stack, double count, double base);

/* The counts added so far: the width of the graph, and of the bases. */
double sp_flame_total(const struct sp_flame *f);
double sp_flame_base_total(const struct sp_flame *f);

/* Frames in the tree, the root ("all") included. */
size_t sp_flame_frames(const struct sp_flame *f);

/*
 * Colour palettes, flamegraph.pl's names: hot (the default), mem, io,
 * wakeup, java, js, perl, red, green, blue, aqua, yellow, purple, orange.
 * Returns the palette called name, or -1.
 */
int sp_flame_palette(const char *name);

/* The palettes' names, ", "-separated, for messages. */
const char *sp_flame_palette_names(void);

struct sp_flame_style {
	const char *title;	/* NULL: "Flame Graph", "Icicle Graph", ... */
	const char *subtitle;	/* NULL: none */
	const char *countname;	/* "samples" */
	const char *nametype;	/* "Function:" */
	unsigned width;		/* of the image, pixels: 1200 */
	unsigned frame_height;	/* pixels: 16 */
	double minwidth;	/* frames narrower are merged or left out: 0.1 */
	int minwidth_pct;	/* minwidth is a percent of all, not pixels */
	int palette;		/* sp_flame_palette() */
	int hash;		/* colours by the name's first bytes */
	int inverted;		/* icicle graph: roots at the top */
	int negate;		/* swap the differential hues and signs */
	unsigned decimals;	/* fraction digits of the counts shown */
};

/* The defaults above. */
void sp_flame_style_init(struct sp_flame_style *st);

/*
 * Write the SVG.  Returns 0, -EINVAL when there is nothing to draw (no
 * count above 0), -ENOMEM, or -errno of the write.
 */
int sp_flame_write(struct sp_flame *f, const struct sp_flame_style *st,
		   struct sp_out *out);

#endif
