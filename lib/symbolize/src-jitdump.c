/* SPDX-License-Identifier: MIT */
/*
 * src-jitdump.c: JIT frames named by the jit-PID.dump file their process
 * mapped.
 *
 * The MMAP record names the file as the process saw it.  A process in a
 * container or chroot saw its own root, and wrote its pid as its own pid
 * namespace numbers it: the file is read through /proc/PID/root while the
 * process lives, and taken only if its header's pid is the one its name
 * carries.  The path itself (once the process is gone, or read offline)
 * is taken only if the header's pid is the process's pid as the stream
 * knows it: a /tmp/jit-1.dump of this host is never taken for that of a
 * container's pid 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/grow.h"
#include "base/symrule.h"
#include "elf/jitdump.h"
#include "source.h"

/* A jitdump a process mapped (its MMAP record names it), read on first use. */
struct src_jitdump_ref {
	uint32_t pid;
	char *path;
	off_t size;		/* when loaded, -1 not yet */
	struct sp_jitdump *j;
};

void src_jitdump_release(struct src_jitdump *jd)
{
	size_t i;

	for (i = 0; i < jd->n; i++) {
		free(jd->refs[i].path);
		sp_jitdump_free(jd->refs[i].j);
	}
	free(jd->refs);
}

int src_jitdump_note_mmap(struct sp_symbolizer *s, const struct sp_mmap_rec *m)
{
	struct src_jitdump *jd = &s->jitdump;
	struct src_jitdump_ref *r;
	size_t i;

	if (!sp_jitdump_is_path(m->filename))
		return 0;
	for (i = 0; i < jd->n; i++)
		if (jd->refs[i].pid == m->pid && !strcmp(jd->refs[i].path, m->filename))
			return 0;
	if (SP_GROW(jd->refs, jd->cap, jd->n + 1))
		return -ENOMEM;
	r = &jd->refs[jd->n];
	*r = (struct src_jitdump_ref){ .pid = m->pid, .size = -1 };
	r->path = strdup(m->filename);
	if (!r->path)
		return -ENOMEM;
	jd->n++;
	return 0;
}

void src_jitdump_forget(struct sp_symbolizer *s, uint32_t pid)
{
	struct src_jitdump *jd = &s->jitdump;
	size_t i, k = 0;

	for (i = 0; i < jd->n; i++) {
		if (jd->refs[i].pid != pid) {
			jd->refs[k++] = jd->refs[i];
			continue;
		}
		free(jd->refs[i].path);
		sp_jitdump_free(jd->refs[i].j);
	}
	jd->n = k;
}

/* The pid in a jit-PID.dump file name. */
static uint32_t name_pid(const char *path)
{
	const char *b = strrchr(path, '/');

	return (uint32_t)strtoul((b ? b + 1 : path) + 4, NULL, 10);
}

/*
 * (Re)read the dump when it is new or has grown; a JIT appends to it.
 * Through the process's root while it lives, else at its path.
 */
static int refresh(struct sp_symbolizer *s, struct src_jitdump_ref *r)
{
	char root[4096 + 32];
	const char *path = root;
	struct sp_jitdump *j;
	struct stat sb;
	uint32_t want;
	int err;

	snprintf(root, sizeof(root), "/proc/%" PRIu32 "/root%s", r->pid,
		 r->path);
	want = name_pid(r->path);
	if (r->path[0] != '/' || stat(root, &sb)) {
		path = r->path;
		want = r->pid;
		if (stat(path, &sb))
			return 0;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size == r->size)
		return 0;
	j = sp_jitdump_load(path, &err);
	if (!j)
		return err == -ENOMEM ? -ENOMEM : 0;
	if (sp_jitdump_pid(j) != want) {
		/* another process's: a container's, or an older one's;
		   looked at again only if it changes */
		sp_jitdump_free(j);
		r->size = sb.st_size;
		return 0;
	}
	sp_jitdump_free(r->j);
	r->j = j;
	r->size = sb.st_size;
	s->st.jitdump_loads++;
	return 0;
}

/* The process's last mapped dump: in no mapping or in anonymous memory. */
static void *table(struct sp_symbolizer *s, const struct sp_symq *q, int *err)
{
	struct src_jitdump *jd = &s->jitdump;
	size_t i;

	if (q->kernel || (q->map && q->map->kind != SP_MAP_ANON))
		return NULL;
	for (i = jd->n; i-- > 0; )
		if (jd->refs[i].pid == q->pid)
			return &jd->refs[i];
	return NULL;
}

static const void *find(void *j, uint64_t addr)
{
	return j ? sp_jitdump_find(j, addr) : NULL;
}

static int lookup(struct sp_symbolizer *s, void *table,
		  const struct sp_symq *q, struct sp_frame *out, unsigned max)
{
	struct src_jitdump_ref *r = table;
	const struct sp_jit_code *c;
	const struct sp_jit_line *l;
	uint64_t at;
	int err;

	if (!r->j && (err = refresh(s, r)))
		return err;
	c = sp_sym_pick(find, r->j, q->addr, q->precise, &at);
	if (!c) {
		/* the JIT may have appended it since the dump was read */
		if ((err = refresh(s, r)))
			return err;
		c = sp_sym_pick(find, r->j, q->addr, q->precise, &at);
	}
	if (!c)
		return 0;
	out[0] = (struct sp_frame){ .kind = SP_FK_JIT, .origin = SP_FO_JITDUMP,
		.function = sp_sym_intern(s, c->name) };
	if (!out[0].function)
		return -ENOMEM;
	l = (s->flags & SP_SYM_NO_LINES) ? NULL : sp_jit_code_line(c, at);
	if (l && l->file) {
		out[0].file = sp_sym_intern(s, l->file);
		if (!out[0].file)
			return -ENOMEM;
		out[0].line = l->line;
	}
	return 1;
}

const struct sp_source sp_src_jitdump = {
	.name = "jitdump",
	.table = table,
	.lookup = lookup,
};
