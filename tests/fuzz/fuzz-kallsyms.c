// SPDX-License-Identifier: MIT
/*
 * fuzz-kallsyms.c: kallsyms text (os/kallsyms.h) as the recorder and the
 * symbolizer load it, then lookups of kernel frames at the addresses the
 * lines give and their neighbours, as an interrupted IP and as a return
 * address.  What the recorder captures of each answer (a KSYM record: start,
 * size, "name [module]") is loaded into a second table, as the symbolizer
 * does, which must name those frames the same way (kallsyms.h: the two never
 * disagree).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/kallsyms.h"
#include "fuzz.h"

#define MAX_PROBES 128
#define NAME_MAX_LEN 1024	/* what the recorder's KSYM records hold */

struct frame {
	uint64_t addr;
	int precise;
};

/* Addresses worth asking: the lines' own, their neighbours, the ends. */
static size_t probes(const char *text, struct frame *f)
{
	const char *p = text;
	size_t n = 0;

	f[n++] = (struct frame){ 0, 1 };
	f[n++] = (struct frame){ UINT64_MAX, 0 };
	while (p && *p && n + 4 <= MAX_PROBES) {
		uint64_t a = strtoull(p, NULL, 16);

		f[n++] = (struct frame){ a, 1 };
		f[n++] = (struct frame){ a, 0 };
		f[n++] = (struct frame){ a + 1, 0 };
		f[n++] = (struct frame){ a - 1, 1 };
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return n;
}

static int holds(const struct sp_ksym *s, uint64_t addr)
{
	return addr >= s->start && (!s->size || addr - s->start < s->size);
}

/* The symbol answers the frame by the rule of symrule.h. */
static void check(struct sp_ksyms *k, const struct sp_ksym *s,
		  const struct frame *f)
{
	if (!s)
		return;
	if (!(holds(s, f->addr) ||
	      (!f->precise && f->addr && holds(s, f->addr - 1))) ||
	    !s->name || sp_ksyms_index(k, s) >= sp_ksyms_count(k))
		abort();
}

/* Whether a KSYM record of s reads back as s: true of kallsyms' names. */
static int round_trips(const struct sp_ksym *s, size_t len)
{
	const char *m = s->module;

	return len < NAME_MAX_LEN - 1 && !strstr(s->name, " [") &&
	       (!m || (m[0] == '[' && m[strlen(m) - 1] == ']'));
}

static int same_str(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_ksyms *full = sp_ksyms_new(), *cap = sp_ksyms_new();
	char *text = fz_strdup(data, size), path[64], name[NAME_MAX_LEN];
	struct frame f[MAX_PROBES];
	int agree[MAX_PROBES] = { 0 };
	const struct sp_ksym *s, *c;
	size_t n, i, len;
	int fd;

	if (!full || !cap)
		abort();
	fd = fz_memfd(data, size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (sp_ksyms_load(full, path))
		abort();
	close(fd);

	/* what the recorder captures of each frame */
	n = probes(text, f);
	for (i = 0; i < n; i++) {
		s = sp_ksyms_lookup(full, f[i].addr, f[i].precise);
		check(full, s, &f[i]);
		if (!s)
			continue;
		len = sp_ksym_record_name(s, name, sizeof(name));
		if (len >= sizeof(name) || strlen(name) != len)
			abort();
		/* cut short, still a string */
		if (sp_ksym_record_name(s, name, 4) > 3 || strlen(name) > 3)
			abort();
		len = sp_ksym_record_name(s, name, sizeof(name));
		if (sp_ksyms_add_record(cap, s->start, s->size, name))
			abort();
		agree[i] = round_trips(s, len);
	}

	/* ... names those frames as the whole table does */
	for (i = 0; i < n; i++) {
		s = sp_ksyms_lookup(full, f[i].addr, f[i].precise);
		c = sp_ksyms_lookup(cap, f[i].addr, f[i].precise);
		check(cap, c, &f[i]);
		if (agree[i] && (!s || !c || !same_str(s->name, c->name) ||
				 !same_str(s->module, c->module)))
			abort();
	}

	free(text);
	sp_ksyms_free(full);
	sp_ksyms_free(cap);
	return 0;
}
