/* SPDX-License-Identifier: MIT */
/* svg.c: the flame graph SVG of a tree: colours, text, layout, writing. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colour.h"
#include "tree.h"

/* lib/flame/flame.js, made a C array by the Makefile (flame-js.c) */
extern const char sp_flame_js[];
extern const unsigned long sp_flame_js_len;

/* Text -------------------------------------------------------------------- */

/*
 * Decode one UTF-8 character of s[0..n) (n > 0) into *cp: U+FFFD for a
 * byte that starts no valid sequence.  Returns the bytes it took.
 */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t len, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, min = 0x80, c &= 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, min = 0x800, c &= 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, min = 0x10000, c &= 0x07;
	} else {
		*cp = 0xfffd;
		return 1;
	}
	if (n < len)
		goto bad;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto bad;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		goto bad;
	*cp = c;
	return len;
bad:
	*cp = 0xfffd;
	return 1;
}

/* XML 1.0's Char production */
static int xml_char(uint32_t c)
{
	return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
	       (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

static size_t utf8_put(char *d, uint32_t c)
{
	if (c < 0x80) {
		d[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		d[0] = (char)(0xc0 | c >> 6);
		d[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		d[0] = (char)(0xe0 | c >> 12);
		d[1] = (char)(0x80 | (c >> 6 & 0x3f));
		d[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | c >> 18);
	d[1] = (char)(0x80 | (c >> 12 & 0x3f));
	d[2] = (char)(0x80 | (c >> 6 & 0x3f));
	d[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* A buffered writer that keeps the first error. */
struct svg {
	struct sp_out *out;
	int err;
	char buf[65536];
	size_t n;
};

static void flush(struct svg *w)
{
	if (!w->err && w->n)
		w->err = sp_out_write(w->out, w->buf, w->n);
	w->n = 0;
}

static void put(struct svg *w, const char *s, size_t len)
{
	if (w->n + len > sizeof(w->buf)) {
		flush(w);
		if (len > sizeof(w->buf)) {
			if (!w->err)
				w->err = sp_out_write(w->out, s, len);
			return;
		}
	}
	memcpy(w->buf + w->n, s, len);
	w->n += len;
}

static void puts_(struct svg *w, const char *s)
{
	put(w, s, strlen(s));
}

static void printf_(struct svg *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void printf_(struct svg *w, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	put(w, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* An unsigned integer in decimal. */
static void put_u64(struct svg *w, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(w, tmp + i, sizeof(tmp) - i);
}

/* v / 10^digits, v >= 0, with exactly digits decimals ("12.30"), or with
 * trailing zeros dropped when trim is set ("12.3", "12"). */
static void put_fixed(struct svg *w, uint64_t v, unsigned digits, int trim)
{
	uint64_t scale = 1, frac;
	unsigned i;
	char tmp[24];

	for (i = 0; i < digits; i++)
		scale *= 10;
	put_u64(w, v / scale);
	frac = v % scale;
	if (!digits || (trim && !frac))
		return;
	for (i = digits; i-- > 0; frac /= 10)
		tmp[i] = (char)('0' + frac % 10);
	i = digits;
	while (trim && tmp[i - 1] == '0')
		i--;
	put(w, ".", 1);
	put(w, tmp, i);
}

/* A count as the input had it: decimals fraction digits. */
static void put_count(struct svg *w, double v, unsigned decimals)
{
	static const double p10[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };

	if (v < 0)
		v = 0;
	put_fixed(w, (uint64_t)llround(v * p10[decimals]), decimals, 0);
}

/* A signed count: "+12", "-3.5", "0". */
static void put_signed(struct svg *w, double v, unsigned decimals)
{
	if (v > 0)
		put(w, "+", 1);
	else if (v < 0)
		put(w, "-", 1);
	put_count(w, fabs(v), decimals);
}

/* A percentage with two decimals, from a share in [0, 1]. */
static void put_pct(struct svg *w, double share)
{
	put_fixed(w, (uint64_t)llround(fabs(share) * 10000), 2, 0);
}

/* Hundredths of a pixel, "12.34", "12.3" or "12". */
static void put_px(struct svg *w, int64_t hundredths)
{
	if (hundredths < 0) {
		put(w, "-", 1);
		hundredths = -hundredths;
	}
	put_fixed(w, (uint64_t)hundredths, 2, 1);
}

/*
 * s[0..len) as XML character data: valid UTF-8 of XML characters (other
 * bytes become U+FFFD), & < > " as references, at most max characters
 * (0: all) with the last two of them ".." when it is cut.
 */
static void put_text(struct svg *w, const char *s, size_t len, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, chars = 0, run = 0;
	char enc[8];

	if (max) {
		/* how many characters there are decides the cut */
		size_t n = 0, j;
		uint32_t c;

		for (j = 0; j < len && n <= max; n++)
			j += utf8_next(p + j, len - j, &c);
		if (n > max)
			max -= 2;
		else
			max = 0;
	}
	while (i < len) {
		unsigned char b = p[i];
		uint32_t c;
		size_t k;
		const char *ref = NULL;

		if (max && chars == max)
			break;
		if (b >= 0x20 && b < 0x7f && b != '&' && b != '<' &&
		    b != '>' && b != '"') {
			run++;
			i++;
			chars++;
			continue;
		}
		put(w, (const char *)p + i - run, run);
		run = 0;
		k = utf8_next(p + i, len - i, &c);
		i += k;
		chars++;
		switch (c) {
		case '&': ref = "&amp;"; break;
		case '<': ref = "&lt;"; break;
		case '>': ref = "&gt;"; break;
		case '"': ref = "&quot;"; break;
		case '\t': ref = "&#9;"; break;
		case '\n': ref = "&#10;"; break;
		case '\r': ref = "&#13;"; break;
		}
		if (ref) {
			puts_(w, ref);
			continue;
		}
		if (!xml_char(c))
			c = 0xfffd;
		put(w, enc, utf8_put(enc, c));
	}
	put(w, (const char *)p + i - run, run);
	if (max && i < len)
		put(w, "..", 2);
}

/* s as a JavaScript string literal safe in CDATA: "\u00e9" for all but
 * plain ASCII. */
static void put_js_string(struct svg *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i = 0;

	put(w, "\"", 1);
	while (i < len) {
		uint32_t c;

		i += utf8_next(p + i, len - i, &c);
		if (!xml_char(c))
			c = 0xfffd;
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' &&
		    c != '<' && c != '>' && c != '&' && c != ']') {
			char ch = (char)c;

			put(w, &ch, 1);
		} else if (c < 0x10000) {
			printf_(w, "\\u%04x", (unsigned)c);
		} else {
			c -= 0x10000;
			printf_(w, "\\u%04x\\u%04x", 0xd800 + (unsigned)(c >> 10),
				0xdc00 + (unsigned)(c & 0x3ff));
		}
	}
	put(w, "\"", 1);
}

/* Layout ------------------------------------------------------------------ */

/* flamegraph.pl's proportions, for a 12 pixel font */
#define FONT_SIZE	12
#define FONT_WIDTH	0.59	/* average glyph width / font size */
#define XPAD		10	/* left and right */
#define YPAD_TOP	(FONT_SIZE * 3)	/* the title */
#define YPAD_BOTTOM	(FONT_SIZE * 2 + 10)	/* the details line */
#define YPAD_SUB	(FONT_SIZE * 2)	/* the subtitle */
#define SEARCH_COLOUR	"#e600e6"

struct layout {
	const struct sp_flame_style *st;
	double total;
	double px_per_count;
	double min_count;	/* narrower frames are left out */
	unsigned height;
	int64_t y0, dy;		/* y of depth d: y0 + d * dy */
	double max_delta;
};

static int drawn(const struct layout *lay, const struct node *n)
{
	return n->count > 0 && n->count >= lay->min_count;
}

/*
 * A box to draw: a frame (node), or siblings in a row each too narrow to
 * draw, merged (node NONE, merged of them) so that their parent does not
 * look as if it had those samples to itself.
 */
struct spot {
	uint32_t node;
	uint32_t depth;
	uint32_t merged;
	double x;		/* of its first count */
	double count, base;
};

/*
 * Hand the run of narrow siblings to fn when it is wide enough to see (a
 * pixel at least: a narrower gap shows no self time that is not there);
 * empty it.
 */
static void flush_run(const struct layout *lay, struct spot *run,
		      void (*fn)(void *arg, const struct spot *s), void *arg)
{
	if (run->merged > 1 && run->count >= lay->min_count &&
	    run->count * lay->px_per_count >= 1)
		fn(arg, run);
	run->merged = 0;
}

/*
 * Walk the drawn frames in pre-order: fn(arg, spot).  A frame left out
 * takes its subtree with it (no child is wider); narrow siblings in a row
 * that together are wide enough come as one merged spot where the first of
 * them would be.  xs holds the x of the frame on the current path at each
 * depth.
 */
static void walk(const struct sp_flame *f, const struct layout *lay,
		 double *xs, void (*fn)(void *arg, const struct spot *s),
		 void *arg)
{
	struct spot s, run = { .node = NONE };
	uint32_t i = 0;
	double x = 0;

	for (;;) {
		const struct node *n = &f->nodes[i];

		if (drawn(lay, n)) {
			flush_run(lay, &run, fn, arg);
			s = (struct spot){ .node = i, .depth = n->depth, .x = x,
				.count = n->count, .base = n->base };
			fn(arg, &s);
			xs[n->depth] = x;
			if (n->child != NONE) {
				/* the first child starts where its parent does */
				i = n->child;
				continue;
			}
		} else if (n->count > 0) {
			if (!run.merged) {
				run.depth = n->depth;
				run.x = x;
				run.count = run.base = 0;
			}
			run.merged++;
			run.count += n->count;
			run.base += n->base;
		}
		/* the next sibling, or the nearest ancestor's */
		while (f->nodes[i].next == NONE) {
			flush_run(lay, &run, fn, arg);
			i = f->nodes[i].parent;
			if (i == NONE || i == 0)
				return;
			x = xs[f->nodes[i].depth];
		}
		x += f->nodes[i].count;
		i = f->nodes[i].next;
	}
}

/* Writing ----------------------------------------------------------------- */

struct draw {
	struct svg *w;
	const struct sp_flame *f;
	const struct layout *lay;
	uint32_t max_depth;
	double max_delta;
};

static void measure(void *arg, const struct spot *s)
{
	struct draw *d = arg;

	if (s->depth > d->max_depth)
		d->max_depth = s->depth;
	if (s->node != NONE && fabs(d->f->nodes[s->node].delta) > d->max_delta)
		d->max_delta = fabs(d->f->nodes[s->node].delta);
}

static void put_colour(struct svg *w, struct sp_rgb c)
{
	static const char hex[] = "0123456789abcdef";
	char s[7];

	s[0] = '#';
	s[1] = hex[c.r >> 4 & 15];
	s[2] = hex[c.r & 15];
	s[3] = hex[c.g >> 4 & 15];
	s[4] = hex[c.g & 15];
	s[5] = hex[c.b >> 4 & 15];
	s[6] = hex[c.b & 15];
	put(w, s, 7);
}

static void draw_frame(void *arg, const struct spot *s)
{
	struct draw *d = arg;
	const struct layout *lay = d->lay;
	const struct sp_flame_style *st = lay->st;
	const struct node *n = s->node != NONE ? &d->f->nodes[s->node] : NULL;
	struct svg *w = d->w;
	char merged[48];
	const char *name;
	size_t len, shown, chars;
	enum sp_flame_kind k;
	int64_t x1, x2, y;
	double delta = 0;
	struct sp_rgb c;

	if (n) {
		name = d->f->names.strs[n->name];
		delta = st->negate ? -n->delta : n->delta;
	} else {
		snprintf(merged, sizeof(merged), "[%" PRIu32 " narrow frames]",
			 s->merged);
		name = merged;
	}
	len = strlen(name);
	k = s->node ? sp_flame_name_kind(name, len, &shown) : K_PLAIN;
	if (!s->node)
		shown = len;
	/* hundredths: the script scales them when it zooms */
	x1 = llround((XPAD + s->x * lay->px_per_count) * 100);
	x2 = llround((XPAD + (s->x + s->count) * lay->px_per_count) * 100);
	y = lay->y0 + (int64_t)s->depth * lay->dy;
	if ((d->f->flags & SP_FLAME_DIFF) && n)
		c = sp_flame_diff_colour(delta, lay->max_delta);
	else
		c = sp_flame_frame_colour(st, name, len, shown, k);

	puts_(w, "<g><title>");
	put_text(w, name, shown, 0);
	put(w, " (", 2);
	put_count(w, s->count, st->decimals);
	put(w, " ", 1);
	put_text(w, st->countname, strlen(st->countname), 0);
	put(w, ", ", 2);
	put_pct(w, s->count / lay->total);
	put(w, "%", 1);
	if (d->f->flags & SP_FLAME_DIFF) {
		puts_(w, "; before ");
		put_count(w, s->base, st->decimals);
		puts_(w, ", self ");
		put_signed(w, delta, st->decimals);
		put(w, ", ", 2);
		put(w, delta > 0 ? "+" : delta < 0 ? "-" : "", delta ? 1 : 0);
		put_pct(w, delta / lay->total);
		put(w, "%", 1);
	}
	puts_(w, ")</title><rect x=\"");
	put_px(w, x1);
	puts_(w, "\" y=\"");
	put_px(w, y * 100);
	puts_(w, "\" width=\"");
	put_px(w, x2 - x1);
	puts_(w, "\" height=\"");
	put_u64(w, st->frame_height - 1);
	puts_(w, "\" fill=\"");
	put_colour(w, c);
	puts_(w, "\"/>");
	/* a label when three characters fit: one and "..", as the script does */
	chars = (size_t)((double)(x2 - x1) / 100 / (FONT_SIZE * FONT_WIDTH));
	if (chars >= 3) {
		puts_(w, "<text x=\"");
		put_px(w, x1 + 300);
		puts_(w, "\" y=\"");
		put_px(w, (y + st->frame_height / 2 + 3) * 100);
		puts_(w, "\">");
		put_text(w, name, shown, chars);
		puts_(w, "</text>");
	}
	puts_(w, "</g>\n");
}

static const char css[] =
	"text { font-family: Verdana, \"DejaVu Sans\", sans-serif; font-size: 12px; fill: #000; }\n"
	"#title { text-anchor: middle; font-size: 17px; }\n"
	"#subtitle { text-anchor: middle; fill: #a0a0a0; }\n"
	"#search, #ignorecase { opacity: 0.1; cursor: pointer; }\n"
	"#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity: 1; }\n"
	"#unzoom { cursor: pointer; }\n"
	"#frames > g { cursor: pointer; }\n"
	"#frames > g:hover > rect { stroke: #000; stroke-width: 0.5; }\n"
	"#frames rect { rx: 2px; ry: 2px; }\n"
	".hide { display: none; }\n"
	".parent { opacity: 0.5; }\n";

static void write_head(struct svg *w, const struct sp_flame *f,
		       const struct layout *lay)
{
	const struct sp_flame_style *st = lay->st;
	unsigned width = st->width, height = lay->height;
	const char *title = st->title, *bg1 = "#eeeeee", *bg2 = "#eeeeb0";

	if (!title)
		title = f->flags & SP_FLAME_CHART ? "Flame Chart" :
			st->inverted ? "Icicle Graph" :
			f->flags & SP_FLAME_DIFF ? "Differential Flame Graph" :
			"Flame Graph";
	switch (st->palette) {
	case PAL_MEM:
		bg1 = "#eef2ee", bg2 = "#e0ffe0";
		break;
	case PAL_IO: case PAL_WAKEUP:
		bg2 = "#e0e0ff";
		break;
	case PAL_HOT: case PAL_JAVA: case PAL_JS: case PAL_PERL:
		break;
	default:
		bg1 = "#f8f8f8", bg2 = "#e8e8e8";
	}
	printf_(w, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		width, height, width, height);
	puts_(w, "<!-- a flame graph drawn by stackpulse's sp-flame: click a frame to zoom, Search (or ctrl-F) takes a regular expression -->\n");
	printf_(w, "<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
		"<stop stop-color=\"%s\" offset=\"5%%\"/><stop stop-color=\"%s\" offset=\"95%%\"/>"
		"</linearGradient></defs>\n", bg1, bg2);
	puts_(w, "<style type=\"text/css\"><![CDATA[\n");
	puts_(w, css);
	puts_(w, "]]></style>\n");
	printf_(w, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#background)\"/>\n",
		width, height);
	printf_(w, "<text id=\"title\" x=\"%u\" y=\"%d\">", width / 2, FONT_SIZE * 2);
	put_text(w, title, strlen(title), 0);
	puts_(w, "</text>\n");
	if (st->subtitle) {
		printf_(w, "<text id=\"subtitle\" x=\"%u\" y=\"%d\">", width / 2,
			FONT_SIZE * 4);
		put_text(w, st->subtitle, strlen(st->subtitle), 0);
		puts_(w, "</text>\n");
	}
	printf_(w, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%u\" y=\"%d\">Search</text>\n"
		"<text id=\"ignorecase\" x=\"%u\" y=\"%d\">ic</text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n",
		XPAD, height - YPAD_BOTTOM / 2, XPAD, FONT_SIZE * 2,
		width - XPAD - 100, FONT_SIZE * 2, width - XPAD - 16,
		FONT_SIZE * 2, width - XPAD - 100, height - YPAD_BOTTOM / 2);
}

static void write_tail(struct svg *w, const struct layout *lay)
{
	const struct sp_flame_style *st = lay->st;

	/* what the script needs to know, then the script */
	puts_(w, "<script type=\"text/ecmascript\"><![CDATA[\n"
	      "var spflame = {\"width\": ");
	put_u64(w, st->width);
	printf_(w, ", \"xpad\": %d, \"fontSize\": %d, \"fontWidth\": %.2f, \"y0\": %lld, \"dy\": %lld, \"ty\": %u, \"total\": ",
		XPAD, FONT_SIZE, FONT_WIDTH, (long long)lay->y0,
		(long long)lay->dy, st->frame_height / 2 + 3);
	put_count(w, lay->total, st->decimals);
	printf_(w, ", \"decimals\": %u, \"searchColour\": \"%s\", \"countname\": ",
		st->decimals, SEARCH_COLOUR);
	put_js_string(w, st->countname);
	puts_(w, ", \"nametype\": ");
	put_js_string(w, st->nametype);
	puts_(w, "};\n]]></script>\n<script type=\"text/ecmascript\"><![CDATA[\n");
	put(w, sp_flame_js, sp_flame_js_len);
	puts_(w, "]]></script>\n</svg>\n");
}

int sp_flame_write(struct sp_flame *f, const struct sp_flame_style *st,
		   struct sp_out *out)
{
	struct layout lay;
	struct draw d;
	struct svg *w;
	double *xs;
	int err;

	memset(&lay, 0, sizeof(lay));
	lay.st = st;
	lay.total = f->nodes[0].count;
	if (!(lay.total > 0))
		return -EINVAL;
	if (!(f->flags & SP_FLAME_CHART) && sp_flame_sort(f))
		return -ENOMEM;
	lay.px_per_count = (double)(st->width - 2 * XPAD) / lay.total;
	lay.min_count = st->minwidth_pct ? lay.total * st->minwidth / 100 :
			st->minwidth / lay.px_per_count;
	xs = calloc((size_t)f->max_depth + 1, sizeof(*xs));
	w = malloc(sizeof(*w));
	if (!xs || !w) {
		free(xs);
		free(w);
		return -ENOMEM;
	}
	w->out = out;
	w->err = 0;
	w->n = 0;

	memset(&d, 0, sizeof(d));
	d.w = w;
	d.f = f;
	d.lay = &lay;
	walk(f, &lay, xs, measure, &d);
	lay.max_delta = d.max_delta;
	lay.height = (d.max_depth + 1) * st->frame_height + YPAD_TOP +
		     YPAD_BOTTOM + (st->subtitle ? YPAD_SUB : 0);
	if (st->inverted) {
		lay.y0 = YPAD_TOP + (st->subtitle ? YPAD_SUB : 0);
		lay.dy = st->frame_height;
	} else {
		lay.y0 = (int64_t)lay.height - YPAD_BOTTOM - st->frame_height + 1;
		lay.dy = -(int64_t)st->frame_height;
	}

	write_head(w, f, &lay);
	puts_(w, "<g id=\"frames\">\n");
	walk(f, &lay, xs, draw_frame, &d);
	puts_(w, "</g>\n");
	write_tail(w, &lay);
	flush(w);
	err = w->err;
	free(w);
	free(xs);
	return err;
}
