/* SPDX-License-Identifier: MIT */
/* colour.c: palettes, frame kinds and colours of the flame graph. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/hashtab.h"
#include "colour.h"

static const char *const palette_names[] = {
	"hot", "mem", "io", "wakeup", "java", "js", "perl", "red", "green",
	"blue", "aqua", "yellow", "purple", "orange",
};

int sp_flame_palette(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(palette_names) / sizeof(palette_names[0]); i++)
		if (!strcmp(name, palette_names[i]))
			return (int)i;
	return -1;
}

const char *sp_flame_palette_names(void)
{
	return "hot, mem, io, wakeup, java, js, perl, red, green, blue, aqua, "
	       "yellow, purple, orange";
}

void sp_flame_style_init(struct sp_flame_style *st)
{
	memset(st, 0, sizeof(*st));
	st->countname = "samples";
	st->nametype = "Function:";
	st->width = 1200;
	st->frame_height = 16;
	st->minwidth = 0.1;
	st->palette = PAL_HOT;
}

enum sp_flame_kind sp_flame_name_kind(const char *name, size_t len,
				       size_t *shown)
{
	enum sp_flame_kind k = K_PLAIN;

	*shown = len;
	if (len >= 4 && name[len - 4] == '_' && name[len - 3] == '[' &&
	    name[len - 1] == ']') {
		switch (name[len - 2]) {
		case 'k': k = K_KERNEL; break;
		case 'j': k = K_JIT; break;
		case 'i': k = K_INLINE; break;
		case 'w': k = K_WAKER; break;
		}
		if (k != K_PLAIN)
			*shown = len - 4;
	}
	/* [unknown], [truncated], [libz.so.1], and flamegraph.pl's "-", "--" */
	if ((*shown >= 2 && name[0] == '[' && name[*shown - 1] == ']') ||
	    (*shown == 1 && name[0] == '-') ||
	    (*shown == 2 && name[0] == '-' && name[1] == '-'))
		k = K_SYNTHETIC;
	return k;
}

/*
 * Three numbers in [0, 1] from a name.  By default a well-mixed hash: the
 * same name has the same colour everywhere, neighbours differ.  With --hash
 * the first bytes weigh most (a "module`" prefix skipped), so names alike
 * get colours alike: v[0] from the start, v[1] and v[2] from the end.
 */
static void name_values(const char *name, size_t len, int by_prefix,
			double v[3])
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */
	const char *tick;
	size_t i;

	if (!by_prefix) {
		for (i = 0; i < len; i++) {
			h ^= (unsigned char)name[i];
			h *= 1099511628211ull;
		}
		h = sp_hash_u64(h);
		v[0] = (double)(h & 0xffff) / 65535.0;
		v[1] = (double)(h >> 16 & 0xffff) / 65535.0;
		v[2] = (double)(h >> 32 & 0xffff) / 65535.0;
		return;
	}
	tick = memchr(name, '`', len);
	if (tick) {
		len -= (size_t)(tick + 1 - name);
		name = tick + 1;
	}
	/* the low bits of the first (last) four bytes as fraction digits */
	v[0] = v[1] = 0;
	for (i = 4; i-- > 0; ) {
		v[0] = (v[0] + (i < len ? (unsigned char)name[i] % 16 : 0)) / 16;
		v[1] = (v[1] + (i < len ? (unsigned char)name[len - 1 - i] % 16 :
				0)) / 16;
	}
	v[2] = v[1];
}


/* base + span * v, for each channel; which v each channel takes */
static const struct {
	int base[3], span[3];
	unsigned char v[3];
} hues[PAL_MAX] = {
	[PAL_HOT] = { { 205, 0, 0 }, { 50, 230, 55 }, { 2, 0, 1 } },
	[PAL_MEM] = { { 0, 190, 0 }, { 0, 50, 210 }, { 0, 1, 0 } },
	[PAL_IO] = { { 80, 80, 190 }, { 60, 60, 55 }, { 0, 0, 1 } },
	[PAL_RED] = { { 200, 50, 50 }, { 55, 80, 80 }, { 0, 0, 0 } },
	[PAL_GREEN] = { { 50, 200, 50 }, { 60, 55, 60 }, { 0, 0, 0 } },
	[PAL_BLUE] = { { 80, 80, 205 }, { 60, 60, 50 }, { 0, 0, 0 } },
	[PAL_AQUA] = { { 50, 165, 165 }, { 60, 55, 55 }, { 0, 0, 0 } },
	[PAL_YELLOW] = { { 175, 175, 50 }, { 55, 55, 20 }, { 0, 0, 0 } },
	[PAL_PURPLE] = { { 190, 80, 190 }, { 65, 60, 65 }, { 0, 0, 0 } },
	[PAL_ORANGE] = { { 190, 90, 0 }, { 65, 65, 0 }, { 0, 0, 0 } },
	[PAL_GREY] = { { 180, 180, 180 }, { 40, 40, 40 }, { 0, 0, 0 } },
};

static int has(const char *s, size_t len, const char *what)
{
	return memmem(s, len, what, strlen(what)) != NULL;
}

/* Which hue a multi-hue palette gives a name (shown: without annotation). */
static enum palette pick_hue(int pal, enum sp_flame_kind k, const char *name,
			     size_t shown)
{
	static const char *const java_pkgs[] = {
		"java/", "javax/", "jdk/", "net/", "org/", "com/", "io/", "sun/",
	};
	size_t i;

	if (k == K_SYNTHETIC)
		return PAL_GREY;
	switch (pal) {
	case PAL_HOT:
		/* stackpulse's annotations: the kind of code at a glance */
		if (k == K_KERNEL)
			return PAL_ORANGE;
		if (k == K_JIT)
			return PAL_GREEN;
		if (k == K_INLINE || k == K_WAKER)
			return PAL_AQUA;
		return PAL_HOT;
	case PAL_WAKEUP:
		return PAL_AQUA;
	case PAL_JAVA:
		if (k == K_JIT)
			return PAL_GREEN;
		if (k == K_INLINE)
			return PAL_AQUA;
		for (i = 0; i < sizeof(java_pkgs) / sizeof(java_pkgs[0]); i++) {
			size_t n = strlen(java_pkgs[i]);
			const char *s = name;

			if (shown > 0 && *s == 'L')
				s++;
			if ((size_t)(s - name) + n <= shown && !memcmp(s, java_pkgs[i], n))
				return PAL_GREEN;
		}
		if (has(name, shown, ":::"))
			return PAL_GREEN;
		if (has(name, shown, "::"))
			return PAL_YELLOW;
		return k == K_KERNEL ? PAL_ORANGE : PAL_RED;
	case PAL_JS:
		if (k == K_JIT)
			return memchr(name, '/', shown) ? PAL_GREEN : PAL_AQUA;
		if (has(name, shown, "::"))
			return PAL_YELLOW;
		if (memchr(name, '/', shown) && has(name, shown, ".js"))
			return PAL_GREEN;
		if (memchr(name, ':', shown))
			return PAL_AQUA;
		return k == K_KERNEL ? PAL_ORANGE : PAL_RED;
	case PAL_PERL:
		if (has(name, shown, "::"))
			return PAL_YELLOW;
		if (has(name, shown, "Perl") || has(name, shown, ".pl"))
			return PAL_GREEN;
		return k == K_KERNEL ? PAL_ORANGE : PAL_RED;
	default:
		return (enum palette)pal;
	}
}

struct sp_rgb sp_flame_frame_colour(const struct sp_flame_style *st,
			       const char *name, size_t len, size_t shown,
			       enum sp_flame_kind k)
{
	enum palette hue = pick_hue(st->palette, k, name, shown);
	struct sp_rgb c;
	double v[3];
	int ch[3];
	int i;

	name_values(name, len, st->hash, v);
	for (i = 0; i < 3; i++)
		ch[i] = hues[hue].base[i] +
			(int)(hues[hue].span[i] * v[hues[hue].v[i]]);
	/* io's red and green go together */
	if (hue == PAL_IO)
		ch[1] = ch[0];
	c.r = ch[0];
	c.g = ch[1];
	c.b = ch[2];
	return c;
}

/* White for no change, to red for the most growth, to blue for the most loss. */
struct sp_rgb sp_flame_diff_colour(double delta, double max)
{
	struct sp_rgb c = { 255, 255, 255 };
	int fade;

	if (max <= 0 || delta == 0)
		return c;
	fade = (int)(210 * (max - fabs(delta)) / max);
	if (delta > 0)
		c.g = c.b = fade;
	else
		c.r = c.g = fade;
	return c;
}

