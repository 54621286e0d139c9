// SPDX-License-Identifier: MIT
/* fuzz.c: the harnesses' shared helpers (fuzz.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/io.h"
#include "elf/elfcache.h"
#include "fold/fold.h"
#include "format/spool.h"
#include "format/symtext.h"
#include "fuzz.h"

int fz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t done = 0;
	ssize_t n;

	if (fd < 0)
		abort();
	while (done < size) {
		n = write(fd, data + done, size - done);
		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	return fd;
}

FILE *fz_memfile(const uint8_t *data, size_t size)
{
	FILE *fp = fdopen(fz_memfd(data, size), "r");

	if (!fp)
		abort();
	return fp;
}

char *fz_strdup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A few kernel symbols as /proc/kallsyms has them: types, padding, a module. */
static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T do_syscall_64\n"
	"ffffffff81001800 t __pfx_schedule\n"
	"ffffffff81001810 T schedule\n"
	"ffffffff81002000 W arch_cpu_idle\n"
	"ffffffff81003000 D some_data\n"
	"ffffffffc0001000 t nvme_irq\t[nvme]\n";

const char *fz_kallsyms(void)
{
	static char path[64];

	if (!path[0])
		snprintf(path, sizeof(path), "/proc/self/fd/%d",
			 fz_memfd((const uint8_t *)kallsyms,
				  sizeof(kallsyms) - 1));
	return path;
}

struct sp_elf_cache *fz_elf_cache(void)
{
	static struct sp_elf_cache *cache;
	static unsigned inputs;

	if (inputs++ % 256 == 0) {
		sp_elf_cache_free(cache);
		cache = sp_elf_cache_new();
		if (!cache)
			abort();
	}
	return cache;
}

struct sp_out *fz_out(void)
{
	struct sp_out *out = sp_out_open("/dev/null", 0);

	if (!out)
		abort();
	return out;
}

struct sp_out *fz_out_memfd(int *fd)
{
	struct sp_out *out;
	char path[64];

	*fd = fz_memfd(NULL, 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", *fd);
	out = sp_out_open(path, 0);
	if (!out)
		abort();
	return out;
}

uint8_t *fz_read_all(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	uint8_t *p;
	size_t done = 0;
	ssize_t n;

	if (end < 0)
		abort();
	p = malloc((size_t)end + 1);
	if (!p)
		abort();
	while (done < (size_t)end) {
		n = pread(fd, p + done, (size_t)end - done, (off_t)done);
		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	p[done] = 0;
	*len = done;
	return p;
}

int fz_utf8_text(const uint8_t *p, size_t n, int xml)
{
	static char odd[256];
	size_t i = 0, len, k;
	uint32_t c;

	/* the bytes that are not plain ASCII text, for strcspn() */
	if (!odd[0]) {
		for (c = 1, k = 0; c < 256; c++)
			if (c < 0x20 || c >= 0x7f)
				odd[k++] = (char)c;
	}
	while (i < n) {
		i += strcspn((const char *)p + i, odd);
		if (i >= n)
			break;
		c = p[i];
		if (c < 0x80)
			len = 1;
		else if (c >= 0xc2 && c <= 0xdf)
			len = 2, c &= 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3, c &= 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4, c &= 0x07;
		else
			return 0;
		if (n - i < len)
			return 0;
		for (k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (p[i + k] & 0x3f);
		}
		if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000))
			return 0;
		if (!(c == 0x9 || c == 0xa || c == 0xd ||
		      (c >= 0x20 && c <= 0xd7ff) ||
		      (c >= 0xe000 && c <= (xml ? 0xfffdu : 0xffffu)) ||
		      (c >= 0x10000 && c <= 0x10ffff)))
			return 0;
		i += len;
	}
	return 1;
}

/* Where what is read goes, so that reading it is not optimised away. */
static volatile uint64_t sink;

/* The frames of a stack the reader gives back: every byte must be its own. */
static uint64_t stack_sum(const struct sp_unw_stack_view *v)
{
	uint64_t sum = v->s->end;
	unsigned i;

	for (i = 0; i < (unsigned)v->s->nr_kernel + v->s->nr_user; i++)
		sum += v->kernel_ips[i];
	for (i = 0; i < v->s->nr_user; i++)
		sum += v->uflags[i];
	return sum;
}

int fz_unwound_ok(const struct sp_rec_hdr *rec)
{
	struct sp_unw_stack_view v;

	switch (rec->type) {
	case SP_REC_SAMPLE:
	case SP_REC_OFFCPU:
		return rec->size >= sizeof(struct sp_unw_sample);
	case SP_REC_STACK:
		return !sp_unw_stack_parse(rec, &v);
	case SP_REC_SUMMARY:
		return rec->size >= sizeof(struct sp_unw_summary);
	case SP_REC_TAIL:
		return 1;	/* not the unwound stream's: skipped */
	default:
		return !sp_rec_check_common(rec);
	}
}

/* The records a spool writer took, in order, to compare with a reread. */
struct rewrite {
	struct sp_spool_writer *w;
	int wfd;
	int refused;		/* the writer refused a record: it stopped */
	int summary;		/* it took a SUMMARY */
	uint8_t *recs;
	size_t len, cap;
};

/*
 * sp-spool write over what was read: each record goes to a writer, which
 * must take it or refuse it as damaged (then it stops, as sp-spool write
 * does), never fail otherwise.
 */
static void rewrite_add(struct rewrite *rw, const struct sp_rec_hdr *rec)
{
	int r;

	if (rw->refused)
		return;
	r = sp_spool_writer_add(rw->w, rec);
	if (r == -EINVAL) {
		rw->refused = 1;
		return;
	}
	if (r)
		abort();
	if (rw->len + rec->size > rw->cap) {
		rw->cap = 2 * (rw->len + rec->size);
		rw->recs = realloc(rw->recs, rw->cap);
		if (!rw->recs)
			abort();
	}
	memcpy(rw->recs + rw->len, rec, rec->size);
	rw->len += rec->size;
	rw->summary |= rec->type == SP_REC_SUMMARY;
}

/* The spool written reads back as the records the writer took. */
static void rewrite_check(struct rewrite *rw)
{
	const struct sp_rec_hdr *rec;
	struct sp_spool *sp;
	char path[64];
	size_t at = 0;
	int r;

	if (sp_spool_writer_close(rw->w))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", rw->wfd);
	if (sp_spool_open(path, &sp))
		abort();
	while ((r = sp_spool_next(sp, &rec)) > 0) {
		if (rec->size > rw->len - at || memcmp(rec, rw->recs + at, rec->size))
			abort();
		at += rec->size;
	}
	if (at != rw->len || r != (rw->summary ? 0 : -ENODATA))
		abort();
	sp_spool_close(sp);
	close(rw->wfd);
	free(rw->recs);
}

void fz_read_spool(const uint8_t *data, size_t size)
{
	int fd = fz_memfd(data, size), r, every = (int)(size % 3);
	struct sp_unw_summary sum;
	struct sp_unw_stack_view v;
	struct sp_spool_sample s;
	const struct sp_rec_hdr *rec;
	struct sp_spool_info info;
	struct sp_spool_opts o = { 1, SP_SPOOL_BLOCK_MIN };
	struct rewrite rw = { 0 };
	struct sp_spool *sp;
	char path[64];
	unsigned long n = 0;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = sp_spool_open(path, &sp);
	if (!sp)
		abort();
	/* read record by record, what is read is written again */
	if (!r && every == 0) {
		rw.wfd = fz_memfd(NULL, 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", rw.wfd);
		o.enc = size / 3 % 2 ? SP_SPOOL_ENC_DELTA : SP_SPOOL_ENC_PLAIN;
		rw.w = sp_spool_writer_open(path, sp_spool_header(sp), &o);
		if (!rw.w)
			abort();
	}
	sink += sp_spool_header(sp)->ev.freq_or_period;
	sp_spool_info(sp, &info);
	if (sp_spool_summary(sp, &sum) == 0)
		sink += sum.samples;
	/* alternate the two ways of reading, by the input's length */
	while (r == 0) {
		if (every == 0 || (every == 2 && n % 2)) {
			r = sp_spool_next(sp, &rec);
			if (r > 0 && (rec->size < 8 || !fz_unwound_ok(rec)))
				abort();
			if (r > 0 && rw.w)
				rewrite_add(&rw, rec);
		} else {
			r = sp_spool_next_sample(sp, &s);
			if (r > 0) {
				if (sp_spool_stack(sp, s.pid, s.stack_id, &v) ||
				    v.s->pid != s.pid || v.s->id != s.stack_id)
					abort();
				sink += stack_sum(&v);
			}
		}
		n++;
		if (r > 0)
			r = 0;
		else if (r == 0)
			r = 1;
	}
	if (r < 0) {
		if (!*sp_spool_error(sp) || (r != -ENODATA && r != -EBADMSG &&
					     r != -ENOTSUP))
			abort();
		/* an error sticks */
		if (sp_spool_next(sp, &rec) != r)
			abort();
	}
	sp_spool_tally(sp, &sum);
	sp_spool_info(sp, &info);
	sink += sum.samples + info.records + sp_spool_max_stack_id(sp);
	sp_spool_close(sp);
	close(fd);
	if (rw.w)
		rewrite_check(&rw);
}

void fz_check_symtext(const uint8_t *text, size_t len)
{
	FILE *fp = fz_memfile(text, len);
	struct sp_st_reader *rd = sp_st_reader_new(fp, "text");
	struct sp_fold *fold = sp_fold_new(SP_FOLD_SAMPLES | SP_FOLD_TIMELINE);
	struct sp_st_rec rec;
	int r;

	if (!rd || !fold || sp_st_reader_header(rd) != SP_IN_OK)
		abort();
	while ((r = sp_st_read(rd, &rec)) > 0)
		if (sp_fold_apply(fold, &rec))
			abort();
	if (r)
		abort();
	sp_fold_free(fold);
	sp_st_reader_free(rd);
	fclose(fp);
}
