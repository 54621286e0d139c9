/* SPDX-License-Identifier: MIT */
/* dwline.c: one unit's line table from .debug_line (dwline.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <gelf.h>

#include "base/grow.h"
#include "dwline.h"

struct row {
	uint64_t addr;
	uint32_t file, line;
	uint32_t order;		/* in the program: equal rows keep it */
	uint8_t end;		/* DW_LNE_end_sequence */
};

/* Arrays this large are prefaulted when made (sp_prefault()). */
#define PREFAULT_MIN (64 * 1024)

struct sp_dwline {
	struct row *rows;	/* sorted; one per address, the one that answers */
	size_t nrows, caprows;
	char **files;
	size_t nfiles, capfiles;
};

/* ------------------------------------------------------------ reading */

/* A cursor over [p, end). */
struct cur {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd(struct cur *c, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	for (i = 0; i < n; i++)		/* little-endian, as x86-64 is */
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static void skip(struct cur *c, uint64_t n)
{
	if (c->bad || (uint64_t)(c->end - c->p) < n)
		c->bad = 1;
	else
		c->p += n;
}

/* A LEB128 number, sign-extended when is_signed; bits past 64 are lost. */
static uint64_t leb(struct cur *c, int is_signed)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (!c->bad) {
		uint8_t b;

		if (c->p >= c->end) {
			c->bad = 1;
			break;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (is_signed && shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return v;
		}
	}
	return 0;
}

static uint64_t uleb(struct cur *c)
{
	return leb(c, 0);
}

static int64_t sleb(struct cur *c)
{
	return (int64_t)leb(c, 1);
}

/* A NUL-terminated string at the cursor. */
static const char *cstr(struct cur *c)
{
	const uint8_t *nul;
	const char *s;

	if (c->bad || !(nul = memchr(c->p, 0, (size_t)(c->end - c->p)))) {
		c->bad = 1;
		return NULL;
	}
	s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}

/* The string at off of a string section, NULL when it is not one. */
static const char *sec_str(const uint8_t *sec, size_t len, uint64_t off)
{
	if (!sec || off >= len || !memchr(sec + off, 0, len - off))
		return NULL;
	return (const char *)sec + off;
}

/* The size of a value of a fixed-size form, or -1 for another form. */
static int fixed_size(uint64_t form, unsigned offsz)
{
	switch (form) {
	case DW_FORM_data1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
		return 1;
	case DW_FORM_data2:
	case DW_FORM_strx2:
		return 2;
	case DW_FORM_strx3:
		return 3;
	case DW_FORM_data4:
	case DW_FORM_strx4:
		return 4;
	case DW_FORM_data8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_sec_offset:
		return (int)offsz;
	default:
		return -1;
	}
}

/*
 * One attribute of a directory or file entry, of the given form: a string
 * into *str, a number into *num, anything else skipped.  Returns 0, or -1
 * when it cannot be read.
 */
static int form_value(struct cur *c, const struct sp_dwline_secs *s,
		      uint64_t form, unsigned offsz, const char **str,
		      uint64_t *num)
{
	int n;

	*str = NULL;
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		*str = cstr(c);
		break;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
		*num = rd(c, offsz);
		*str = form == DW_FORM_strp ? sec_str(s->str, s->str_len, *num) :
			sec_str(s->line_str, s->line_str_len, *num);
		if (!c->bad && !*str)
			return -1;
		break;
	case DW_FORM_udata:
		*num = uleb(c);
		break;
	case DW_FORM_sdata:
	case DW_FORM_strx:
		(void)uleb(c);
		break;
	case DW_FORM_block:
		skip(c, uleb(c));
		break;
	case DW_FORM_block1:
	case DW_FORM_block2:
	case DW_FORM_block4:
		skip(c, rd(c, form == DW_FORM_block1 ? 1 :
			      form == DW_FORM_block2 ? 2 : 4));
		break;
	default:
		if ((n = fixed_size(form, offsz)) < 0)
			return -1;
		if (n <= 8)
			*num = rd(c, (unsigned)n);
		else
			skip(c, (uint64_t)n);
		break;
	}
	return c->bad ? -1 : 0;
}

/* ------------------------------------------------------------ the header */

struct hdr {
	unsigned version, offsz, addr_size;
	uint8_t min_len, max_ops, default_is_stmt, line_range, opcode_base;
	int8_t line_base;
	const uint8_t *std_len;		/* std_len[op - 1], op < opcode_base */
	const char **dirs;
	size_t ndirs;
};

/* Add dir/name (or name alone) to the file table; -ENOMEM. */
static int add_file(struct sp_dwline *t, const char *dir, const char *name)
{
	size_t dl = dir ? strlen(dir) : 0, nl = strlen(name);
	char *s;

	if (SP_GROW(t->files, t->capfiles, t->nfiles + 1))
		return -ENOMEM;
	if (name[0] == '/' || !dir) {
		s = strdup(name);
	} else if ((s = malloc(dl + nl + 2))) {
		memcpy(s, dir, dl);
		s[dl] = '/';
		memcpy(s + dl + 1, name, nl + 1);
	}
	if (!s)
		return -ENOMEM;
	t->files[t->nfiles++] = s;
	return 0;
}

/*
 * The format of a version 5 directory or file list: which attribute is
 * the path and which the directory index.  Returns 0 or -1.
 */
struct entry_fmt {
	uint64_t form[255];
	unsigned n;
	int path, dir;
};

static int read_format(struct cur *c, struct entry_fmt *f)
{
	unsigned i;

	f->n = (unsigned)rd(c, 1);
	f->path = f->dir = -1;
	for (i = 0; i < f->n && !c->bad; i++) {
		uint64_t what = uleb(c);

		f->form[i] = uleb(c);
		if (what == DW_LNCT_path)
			f->path = (int)i;
		else if (what == DW_LNCT_directory_index)
			f->dir = (int)i;
	}
	return c->bad ? -1 : 0;
}

/* One entry of a version 5 list: its path and directory index. */
static int read_entry(struct cur *c, const struct sp_dwline_secs *s,
		      const struct entry_fmt *f, unsigned offsz,
		      const char **path, uint64_t *dir)
{
	unsigned i;

	*path = NULL;
	*dir = 0;
	for (i = 0; i < f->n; i++) {
		const char *str;
		uint64_t num;

		if (form_value(c, s, f->form[i], offsz, &str, &num))
			return -1;
		if ((int)i == f->path)
			*path = str;
		else if ((int)i == f->dir)
			*dir = num;
	}
	if ((f->dir >= 0 && f->form[f->dir] != DW_FORM_data1 &&
	     f->form[f->dir] != DW_FORM_data2 && f->form[f->dir] != DW_FORM_data4 &&
	     f->form[f->dir] != DW_FORM_data8 && f->form[f->dir] != DW_FORM_udata))
		return -1;
	return *path ? 0 : -1;
}

/* The directory and file lists of version 5; an error, or NULL. */
static const char *read_lists_v5(struct sp_dwline *t, struct cur *c,
				 const struct sp_dwline_secs *s, struct hdr *h)
{
	struct entry_fmt f;
	const char *path;
	uint64_t n, i, dir;

	if (read_format(c, &f) || (f.n && f.path < 0))
		return "bad directory format";
	n = uleb(c);
	if (c->bad || (!f.n && n) || (f.n && n > (uint64_t)(c->end - c->p) / f.n))
		return "bad directory count";
	h->dirs = malloc((n ? n : 1) * sizeof(*h->dirs));
	if (!h->dirs)
		return NULL;
	for (i = 0; i < n; i++) {
		if (read_entry(c, s, &f, h->offsz, &path, &dir))
			return "bad directory entry";
		h->dirs[h->ndirs++] = path;
	}
	if (read_format(c, &f) || (f.n && (f.path < 0 || f.dir < 0)))
		return "bad file format";
	n = uleb(c);
	if (c->bad || (!f.n && n) || (f.n && n > (uint64_t)(c->end - c->p) / f.n))
		return "bad file count";
	for (i = 0; i < n; i++) {
		if (read_entry(c, s, &f, h->offsz, &path, &dir))
			return "bad file entry";
		if (dir >= h->ndirs)
			return "file of a directory not in the table";
		if (add_file(t, h->dirs[dir], path))
			return NULL;
	}
	if (!n && add_file(t, NULL, "???"))	/* file 0 is still asked for */
		return NULL;
	return "";
}

/*
 * A file entry of versions 2 to 4 (in the list, or DW_LNE_define_file):
 * name, directory index, modification time, length.  An error, NULL when
 * out of memory, or "".
 */
static const char *read_file_v2(struct sp_dwline *t, struct cur *c,
				const struct hdr *h)
{
	const char *name = cstr(c);
	uint64_t dir = uleb(c);

	(void)uleb(c);	/* modification time */
	(void)uleb(c);	/* length */
	if (c->bad)
		return "file entry runs off the table";
	if (dir >= h->ndirs)
		return "file of a directory not in the table";
	return add_file(t, h->dirs[dir], name) ? NULL : "";
}

/* The directory and file lists of versions 2 to 4; an error, or NULL. */
static const char *read_lists_v2(struct sp_dwline *t, struct cur *c,
				 const char *comp_dir, struct hdr *h)
{
	struct cur d = *c;
	size_t n = 1;
	const char *e;

	while (!d.bad && d.p < d.end && *d.p) {
		(void)cstr(&d);
		n++;
	}
	if (d.bad || d.p >= d.end)
		return "directory list runs off the table";
	h->dirs = malloc(n * sizeof(*h->dirs));
	if (!h->dirs)
		return NULL;
	h->dirs[h->ndirs++] = comp_dir;
	while (*c->p)
		h->dirs[h->ndirs++] = cstr(c);
	c->p++;
	if (add_file(t, NULL, "???"))
		return NULL;
	while (!c->bad && c->p < c->end && *c->p) {
		e = read_file_v2(t, c, h);
		if (!e || *e)
			return e;
	}
	if (c->bad || c->p >= c->end)
		return "file list runs off the table";
	c->p++;
	return "";
}

/* ------------------------------------------------------------ the program */

/* The registers of the line program that rows are made of. */
struct state {
	uint64_t addr, op_index;
	uint32_t file, column, isa, discriminator;
	int64_t line;
};

/*
 * Append a row; -ENOMEM, or -ERANGE for a row libdw refuses (its fields
 * are an int line, a 16-bit column, an 8-bit isa and a 24-bit
 * discriminator), which makes the whole table unreadable.
 */
static int add_row(struct sp_dwline *t, const struct state *st, int end)
{
	if (st->line > INT32_MAX || st->line < INT32_MIN ||
	    st->column > 0xffff || st->isa > 0xff ||
	    st->discriminator > 0xffffff)
		return -ERANGE;
	if (t->nrows == t->caprows) {
		if (SP_GROW(t->rows, t->caprows, t->nrows + 1))
			return -ENOMEM;
		if ((t->caprows - t->nrows) * sizeof(*t->rows) >= PREFAULT_MIN)
			sp_prefault(t->rows + t->nrows,
				    (t->caprows - t->nrows) * sizeof(*t->rows));
	}
	t->rows[t->nrows] = (struct row){ .addr = st->addr, .file = st->file,
		.line = st->line > 0 ? (uint32_t)st->line : 0,
		.order = (uint32_t)t->nrows, .end = (uint8_t)end };
	t->nrows++;
	return 0;
}

/* libdw's order: by address, an end of sequence first, then as written. */
static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->end != y->end)
		return x->end ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int sorted(const struct row *r, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (row_cmp(&r[i - 1], &r[i]) > 0)
			return 0;
	return 1;
}

struct seq {
	const struct row *first;
	size_t n;
};

static int seq_cmp(const void *a, const void *b)
{
	return row_cmp(((const struct seq *)a)->first,
		       ((const struct seq *)b)->first);
}

/*
 * Sort the rows the cheap way when the table is made of sequences that do
 * not overlap, as compilers write them (a function per sequence, in the
 * order of their sections): each sequence is in order already, but for an
 * end row at the address of rows before it, which goes before them; the
 * sequences are sorted by their first rows and laid end to end.  Returns
 * 0, or -1 when that did not give sorted rows (then sort them all).
 */
static int sort_sequences(struct sp_dwline *t)
{
	struct seq *v = NULL;
	size_t nv = 0, capv = 0, i, start = 0, k;
	struct row *out;

	for (i = 0; i < t->nrows; i++) {
		struct row *r = t->rows;

		if (i > start && r[i].addr < r[i - 1].addr)
			goto fail;	/* backwards inside a sequence */
		if (!r[i].end && i + 1 < t->nrows)
			continue;
		if (r[i].end) {		/* before rows at its address */
			struct row end = r[i];

			for (k = i; k > start && r[k - 1].addr == end.addr; k--)
				r[k] = r[k - 1];
			r[k] = end;
		}
		if (SP_GROW(v, capv, nv + 1))
			goto fail;
		v[nv++] = (struct seq){ &t->rows[start], i + 1 - start };
		start = i + 1;
	}
	qsort(v, nv, sizeof(*v), seq_cmp);
	out = malloc(t->nrows * sizeof(*out));
	if (!out)
		goto fail;
	if (t->nrows * sizeof(*out) >= PREFAULT_MIN)
		sp_prefault(out, t->nrows * sizeof(*out));
	for (i = 0, k = 0; i < nv; k += v[i].n, i++)
		memcpy(out + k, v[i].first, v[i].n * sizeof(*out));
	free(v);
	free(t->rows);
	t->rows = out;
	t->caprows = t->nrows;
	return sorted(out, t->nrows) ? 0 : -1;
fail:
	free(v);
	return -1;
}

/* Sort the rows and keep, of each address, the last: the one that answers. */
static void finish_rows(struct sp_dwline *t)
{
	size_t i, n = 0;

	if (!sorted(t->rows, t->nrows) && sort_sequences(t))
		qsort(t->rows, t->nrows, sizeof(*t->rows), row_cmp);
	/*
	 * libdw ends the highest row's sequence whatever the table says
	 * (compilers have forgotten the end of the last sequence): a row at
	 * the same address as the true end answers for nothing then
	 */
	if (t->nrows)
		t->rows[t->nrows - 1].end = 1;
	for (i = 0; i < t->nrows; i++) {
		if (n && t->rows[n - 1].addr == t->rows[i].addr)
			n--;
		t->rows[n++] = t->rows[i];
	}
	t->nrows = n;
	if (n < t->caprows / 2) {	/* give back what dedup freed */
		struct row *r = realloc(t->rows, (n ? n : 1) * sizeof(*r));

		if (r) {
			t->rows = r;
			t->caprows = n;
		}
	}
}

/* Run the line program in c; an error, NULL when out of memory, or "". */
static const char *run(struct sp_dwline *t, struct cur *c, const struct hdr *h)
{
	static const struct state initial = { .file = 1, .line = 1 };
	struct state st = initial;
	const uint8_t *op_start;
	uint64_t adv;
	int r = 0;

#define ADVANCE(n) do {							\
	adv = (n);							\
	st.addr += h->min_len * ((st.op_index + adv) / h->max_ops);	\
	st.op_index = (st.op_index + adv) % h->max_ops;			\
} while (0)

	while (!c->bad && c->p < c->end && !r) {
		uint8_t op = *c->p++;

		if (op >= h->opcode_base) {		/* special */
			if (!h->line_range)
				return "special opcode with a line range of 0";
			st.line += h->line_base + (op - h->opcode_base) % h->line_range;
			ADVANCE((uint64_t)(op - h->opcode_base) / h->line_range);
			r = add_row(t, &st, 0);
			st.discriminator = 0;
		} else if (op == 0) {			/* extended */
			uint64_t len = uleb(c);
			uint8_t sub;

			if (c->bad || !len || len > (uint64_t)(c->end - c->p))
				return "extended opcode runs off the table";
			op_start = c->p;
			sub = *c->p++;
			switch (sub) {
			case DW_LNE_end_sequence:
				r = add_row(t, &st, 1);
				st = initial;
				break;
			case DW_LNE_set_address:
				st.op_index = 0;
				st.addr = rd(c, h->addr_size);
				break;
			case DW_LNE_define_file: {
				const char *e = read_file_v2(t, c, h);

				if (!e || *e)
					return e;
				break;
			}
			case DW_LNE_set_discriminator:
				st.discriminator = (uint32_t)uleb(c);
				break;
			default:
				c->p = op_start + len;
				break;
			}
		} else if (op <= DW_LNS_set_isa) {	/* standard */
			unsigned args = op == DW_LNS_copy ||
				op == DW_LNS_negate_stmt ||
				op == DW_LNS_set_basic_block ||
				op == DW_LNS_const_add_pc ||
				op == DW_LNS_set_prologue_end ||
				op == DW_LNS_set_epilogue_begin ? 0 : 1;

			if (h->std_len[op - 1] != args)
				return "standard opcode with another operand count";
			switch (op) {
			case DW_LNS_copy:
				r = add_row(t, &st, 0);
				st.discriminator = 0;
				break;
			case DW_LNS_advance_pc:
				ADVANCE((uint32_t)uleb(c));
				break;
			case DW_LNS_advance_line:
				st.line += (int32_t)sleb(c);
				break;
			case DW_LNS_set_file:
				st.file = (uint32_t)uleb(c);
				break;
			case DW_LNS_set_column:
				st.column = (uint32_t)uleb(c);
				break;
			case DW_LNS_const_add_pc:
				if (!h->line_range)
					return "const_add_pc with a line range of 0";
				ADVANCE((uint64_t)(255 - h->opcode_base) / h->line_range);
				break;
			case DW_LNS_fixed_advance_pc:
				st.addr += rd(c, 2);
				st.op_index = 0;
				break;
			case DW_LNS_set_isa:
				st.isa = (uint32_t)uleb(c);
				break;
			default:	/* negate_stmt, basic_block, prologue, epilogue */
				break;
			}
		} else {				/* unknown: skip its operands */
			unsigned n = h->std_len[op - 1];

			while (n-- && !c->bad)
				(void)uleb(c);
		}
	}
#undef ADVANCE
	if (r == -ENOMEM)
		return NULL;
	if (r)
		return "row out of range";
	return c->bad ? "line program runs off the table" : "";
}

/* ------------------------------------------------------------ sections */

int sp_dwline_sections(Elf *e, struct sp_dwline_secs *s)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(s, 0, sizeof(*s));
	if (!e || elf_getshdrstrndx(e, &shstrndx))
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		const uint8_t **p;
		size_t *len;
		GElf_Shdr sh;
		Elf_Data *data;
		const char *name;

		if (!gelf_getshdr(scn, &sh) ||
		    !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".debug_line"))
			p = &s->line, len = &s->line_len;
		else if (!strcmp(name, ".debug_line_str"))
			p = &s->line_str, len = &s->line_str_len;
		else if (!strcmp(name, ".debug_str"))
			p = &s->str, len = &s->str_len;
		else
			continue;
		if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED) ||
		    !(data = elf_getdata(scn, NULL)) || !data->d_buf)
			continue;
		*p = data->d_buf;
		*len = data->d_size;
	}
	return s->line ? 0 : -1;
}

/* ------------------------------------------------------------ the table */

static const char *read_table(struct sp_dwline *t, const struct sp_dwline_secs *s,
			      uint64_t off, unsigned addr_size,
			      const char *comp_dir, struct hdr *h)
{
	struct cur c = { NULL, NULL, 0 };
	const uint8_t *hstart;
	uint64_t len, hlen;
	const char *e;

	if (!s->line || off >= s->line_len)
		return "offset outside .debug_line";
	c = (struct cur){ s->line + off, s->line + s->line_len, 0 };
	h->offsz = 4;
	len = rd(&c, 4);
	if (len == 0xffffffff) {
		h->offsz = 8;
		len = rd(&c, 8);
	}
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return "table runs off .debug_line";
	c.end = c.p + len;
	h->version = (unsigned)rd(&c, 2);
	if (c.bad || h->version < 2 || h->version > 5)
		return "unknown version";
	h->addr_size = addr_size;
	if (h->version >= 5 && (rd(&c, 1) != addr_size || rd(&c, 1) != 0))
		return "address or segment size differs from the unit's";
	hlen = rd(&c, h->offsz);
	hstart = c.p;
	h->min_len = (uint8_t)rd(&c, 1);
	h->max_ops = h->version >= 4 ? (uint8_t)rd(&c, 1) : 1;
	h->default_is_stmt = (uint8_t)rd(&c, 1);
	h->line_base = (int8_t)rd(&c, 1);
	h->line_range = (uint8_t)rd(&c, 1);
	h->opcode_base = (uint8_t)rd(&c, 1);
	if (c.bad)
		return "header runs off the table";
	if (!h->max_ops)
		return "no operations per instruction";
	h->std_len = c.p;
	skip(&c, h->opcode_base ? h->opcode_base - 1u : 0);
	if (c.bad)
		return "header runs off the table";
	e = h->version >= 5 ? read_lists_v5(t, &c, s, h)
			    : read_lists_v2(t, &c, comp_dir, h);
	if (!e || *e)
		return e;
	if (c.bad || hlen > (uint64_t)(c.end - hstart) || c.p != hstart + hlen)
		return "header length differs from its contents";
	if (!h->opcode_base)
		return "opcode base 0";
	e = run(t, &c, h);
	if (!e || *e)
		return e;
	finish_rows(t);
	return "";
}

struct sp_dwline *sp_dwline_read(const struct sp_dwline_secs *s, uint64_t off,
				 unsigned addr_size, const char *comp_dir,
				 const char **err)
{
	struct sp_dwline *t = calloc(1, sizeof(*t));
	struct hdr h = { 0 };
	const char *e;

	*err = NULL;
	if (!t)
		return NULL;
	if (addr_size != 4 && addr_size != 8)
		e = "address size neither 4 nor 8";
	else
		e = read_table(t, s, off, addr_size, comp_dir, &h);
	free(h.dirs);
	if (!e || *e) {
		*err = e;
		sp_dwline_free(t);
		return NULL;
	}
	return t;
}

void sp_dwline_free(struct sp_dwline *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nfiles; i++)
		free(t->files[i]);
	free(t->files);
	free(t->rows);
	free(t);
}

int sp_dwline_find(const struct sp_dwline *t, uint64_t pc, const char **file,
		   uint32_t *line)
{
	size_t lo = 0, hi = t->nrows;
	const struct row *r;

	while (lo < hi) {		/* the first row above pc */
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || (r = &t->rows[lo - 1])->end)
		return -1;
	*file = r->file < t->nfiles ? t->files[r->file] : NULL;
	*line = r->line;
	return 0;
}

const char *sp_dwline_file(const struct sp_dwline *t, uint64_t idx)
{
	return idx < t->nfiles ? t->files[idx] : NULL;
}

size_t sp_dwline_rows(const struct sp_dwline *t)
{
	return t->nrows;
}

size_t sp_dwline_files(const struct sp_dwline *t)
{
	return t->nfiles;
}
