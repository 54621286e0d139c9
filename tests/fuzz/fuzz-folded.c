// SPDX-License-Identifier: MIT
/*
 * fuzz-folded.c: folded stacks (lib/format/folded.h) as sp-flame reads
 * them, merged into its tree (sp_flame_add) and drawn as an SVG
 * (sp_flame_write), which must be XML whatever bytes the names hold: valid
 * UTF-8 of the characters XML allows (names are written with references
 * and U+FFFD), which the harness checks.
 *
 * The options of sp-flame come from the input's length, so that the seeds
 * try them all: --reverse, --flamechart, --inverted, --hash, --negate,
 * --minwidth as a percentage, the palette, and --diff, for which the input
 * is cut in two, BEFORE and AFTER, at its first NUL byte (a byte no folded
 * line may hold) or else in its middle.  A single input whose first line
 * has two counts makes the graph differential, as in sp-flame.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flame/flame.h"
#include "format/folded.h"
#include "fuzz.h"

static const char *const palettes[14] = {
	"hot", "mem", "io", "wakeup", "java", "js", "perl", "red", "green",
	"blue", "aqua", "yellow", "purple", "orange",
};

struct opts {
	unsigned flags;		/* SP_FLAME_* */
	struct sp_flame_style style;
};

/*
 * One input into the tree, as sp-flame's read_input(): side 0 is BEFORE,
 * 1 AFTER, -1 a plain input.  Returns 0, or -1 where sp-flame stops with
 * an error.
 */
static int read_input(struct sp_flame **flame, struct opts *o,
		      const uint8_t *data, size_t size, int side)
{
	unsigned want = o->flags & SP_FLAME_DIFF && side >= 0 ? 1 : 0;
	struct sp_folded_reader *rd;
	struct sp_folded_line line;
	FILE *fp = fz_memfile(data, size);
	int r;

	rd = sp_folded_reader_new(fp, "fuzz");
	if (!rd)
		abort();
	while ((r = sp_folded_read(rd, &line)) > 0) {
		double count = line.count[0], base = 0;

		if (want == 1 && line.columns == 2) {
			r = sp_folded_reader_fail(rd, "two counts in an input of --diff");
			break;
		}
		if (line.columns == 2) {
			if (!(o->flags & SP_FLAME_DIFF)) {
				if (sp_flame_total(*flame) > 0) {
					r = sp_folded_reader_fail(rd, "mixed inputs");
					break;
				}
				o->flags |= SP_FLAME_DIFF;
				sp_flame_free(*flame);
				*flame = sp_flame_new(o->flags);
				if (!*flame)
					abort();
			}
			base = line.count[0];
			count = line.count[1];
		} else if (side == 0) {
			base = count;
			count = 0;
		} else if (o->flags & SP_FLAME_DIFF && side < 0) {
			r = sp_folded_reader_fail(rd, "mixed inputs");
			break;
		}
		if (line.decimals > o->style.decimals)
			o->style.decimals = line.decimals;
		if (sp_flame_add(*flame, line.stack, count, base))
			abort();
	}
	/* the message must be there to be printed */
	if (r < 0 && !*sp_folded_reader_error(rd) && r != SP_IN_OTHER)
		abort();
	sp_folded_reader_free(rd);
	fclose(fp);
	return r < 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_flame *flame;
	struct sp_out *out;
	struct opts o = { 0 };
	const uint8_t *cut;
	size_t half;
	int r;

	sp_flame_style_init(&o.style);
	if (size & 1)
		o.flags |= SP_FLAME_REVERSE;
	if (size & 2)
		o.flags |= SP_FLAME_CHART;
	if (size & 4)
		o.flags |= SP_FLAME_DIFF;
	o.style.inverted = !!(size & 8);
	o.style.hash = !!(size & 16);
	o.style.negate = !!(size & 32);
	if (size & 64) {
		o.style.minwidth = 0.5;
		o.style.minwidth_pct = 1;
	}
	o.style.palette = sp_flame_palette(palettes[size / 128 % 14]);
	flame = sp_flame_new(o.flags);
	if (!flame || o.style.palette < 0)
		abort();
	if (o.flags & SP_FLAME_DIFF) {
		cut = memchr(data, 0, size);
		half = cut ? (size_t)(cut - data) : size / 2;
		r = read_input(&flame, &o, data, half, 0);
		if (!r)
			r = read_input(&flame, &o, data + half + !!cut,
				       size - half - !!cut, 1);
	} else {
		r = read_input(&flame, &o, data, size, -1);
	}
	if (!r && sp_flame_total(flame) > 0) {
		uint8_t *svg;
		size_t len;
		int fd;

		out = fz_out_memfd(&fd);
		if (sp_flame_write(flame, &o.style, out) || sp_out_close(out))
			abort();
		svg = fz_read_all(fd, &len);
		close(fd);
		if (!fz_utf8_text(svg, len, 1))
			abort();
		free(svg);
	}
	sp_flame_free(flame);
	return 0;
}
