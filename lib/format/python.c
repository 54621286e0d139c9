/* SPDX-License-Identifier: MIT */
/* python.c: checks of the PYCODE and PYSTACK records, and location tables. */
#include "python.h"

const char *sp_pycode_parse(const struct sp_rec_hdr *rec,
			    struct sp_pycode_view *out)
{
	const struct sp_pycode_rec *c = (const void *)rec;
	uint64_t need;

	if (rec->size < sizeof(*c))
		return "PYCODE record too short";
	need = (uint64_t)sizeof(*c) + c->qualname_len + c->filename_len +
	       c->linetable_len;
	if (need > rec->size)
		return "PYCODE names and table exceed their record";
	if (!c->id)
		return "PYCODE with code ID 0";
	if (c->qualname_len > SP_PYCODE_NAME_MAX ||
	    c->filename_len > SP_PYCODE_NAME_MAX)
		return "PYCODE name longer than 65536 bytes";
	out->c = c;
	out->qualname = (const char *)(c + 1);
	out->filename = out->qualname + c->qualname_len;
	out->linetable = (const uint8_t *)out->filename + c->filename_len;
	return NULL;
}

const char *sp_pystack_check(const struct sp_rec_hdr *rec)
{
	const struct sp_pystack_rec *p = (const void *)rec;

	if (rec->size < sizeof(*p))
		return "PYSTACK record too short";
	if (p->n > SP_PY_FRAMES_MAX)
		return "PYSTACK with more than 1024 frames";
	if ((uint64_t)p->n * 8 > rec->size - sizeof(*p))
		return "PYSTACK frames exceed their record";
	return NULL;
}

/* Location tables --------------------------------------------------------- */

/* An unsigned varint of 6-bit groups, low first (bit 6: more follow). */
static int varint(const uint8_t *t, size_t len, size_t *i, uint32_t *v)
{
	unsigned shift = 0;
	uint32_t x = 0;

	for (;;) {
		if (*i >= len || shift > 30)
			return -1;
		x |= (uint32_t)(t[*i] & 0x3f) << shift;
		shift += 6;
		if (!(t[(*i)++] & 0x40))
			break;
	}
	*v = x;
	return 0;
}

static int svarint(const uint8_t *t, size_t len, size_t *i, int32_t *v)
{
	uint32_t u;

	if (varint(t, len, i, &u))
		return -1;
	*v = u & 1 ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
	return 0;
}

int sp_py_line(const uint8_t *t, size_t len, uint32_t firstlineno,
	       uint64_t off)
{
	uint64_t at = 0, unit = off / 2;	/* 2-byte code units */
	int64_t line = firstlineno;
	size_t i = 0;

	while (i < len) {
		unsigned code, n;
		int32_t delta = 0;
		uint32_t skip;
		int none = 0;

		if (!(t[i] & 0x80))
			return -1;	/* not at an entry's first byte */
		code = t[i] >> 3 & 0xf;
		n = (t[i] & 7) + 1;
		i++;
		switch (code) {
		case 15:	/* no location */
			none = 1;
			break;
		case 14:	/* long form: line delta, end line, columns */
			if (svarint(t, len, &i, &delta) ||
			    varint(t, len, &i, &skip) ||
			    varint(t, len, &i, &skip) ||
			    varint(t, len, &i, &skip))
				return -1;
			break;
		case 13:	/* no column: line delta only */
			if (svarint(t, len, &i, &delta))
				return -1;
			break;
		case 10: case 11: case 12:	/* one line, delta code - 10 */
			delta = (int32_t)code - 10;
			i += 2;
			break;
		default:	/* short forms 0-9: same line, one column byte */
			i += 1;
			break;
		}
		if (i > len)
			return -1;
		line += delta;
		if (unit < at + n)
			return none ? 0 : (int)line;
		at += n;
	}
	return -1;
}
