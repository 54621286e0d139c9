/* SPDX-License-Identifier: MIT */
/* symbolize.c: addresses to function names through ELF, perf maps, kallsyms. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize.h"

/* Interned strings, stable for the symbolizer's life. */
struct strtab {
	char **strs;
	uint32_t n, cap;
	uint32_t *slots;	/* index + 1, 0 empty */
	uint32_t nslots;
};

struct u64slot {
	uint64_t key, val;
	int used;
};

struct u64map {
	struct u64slot *slots;
	uint32_t n, nslots;
};

/* A resolved ELF address: key (elf, vaddr, precise). */
struct symslot {
	const struct sp_elf *elf;
	uint64_t vaddr;
	const char *name;
	uint8_t origin;
	uint8_t precise;
	uint8_t used;
};

struct ksym {
	uint64_t start;
	const char *name;	/* interned */
	const char *module;	/* interned: "[kernel]", "[ext4]" */
};

struct pmsym {
	uint64_t start, size;
	uint32_t seq;		/* line number: later lines win */
	char *name;
};

struct perfmap {
	uint32_t pid;
	int loaded;
	off_t size;		/* of the file when loaded, -1 absent */
	struct timespec mtime;
	struct pmsym *syms;
	size_t n;
};

struct sp_symbolizer {
	struct sp_procs *procs;
	char *kallsyms_path;
	char *perf_map_dir;
	struct strtab strs;
	struct u64map threads;	/* pid << 32 | tid -> name string index */
	struct u64map stacks;	/* pid << 32 | id */
	struct u64map pmindex;	/* pid -> perfmaps index */
	struct symslot *syms;
	uint32_t nsyms, nsymslots;
	int kloaded;
	struct ksym *ksyms;
	size_t nksyms;
	struct perfmap *pms;
	size_t npms, cappms;
	struct sp_symbolize_stats st;
};

/* Hash tables */

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	while (n--) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ull;
	}
	return h;
}

static uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int strtab_grow(struct strtab *t)
{
	uint32_t nslots = t->nslots ? t->nslots * 2 : 256, i;
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		const char *s = t->strs[i];
		uint32_t j = (uint32_t)hash_bytes(s, strlen(s)) & (nslots - 1);

		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

/* Returns the index of s, copied on first sight; -ENOMEM. */
static int64_t strtab_index(struct strtab *t, const char *s)
{
	uint32_t j;

	if ((t->n + 1) * 2 > t->nslots && strtab_grow(t))
		return -ENOMEM;
	j = (uint32_t)hash_bytes(s, strlen(s)) & (t->nslots - 1);
	while (t->slots[j]) {
		if (!strcmp(t->strs[t->slots[j] - 1], s))
			return t->slots[j] - 1;
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		char **strs = realloc(t->strs, cap * sizeof(*strs));

		if (!strs)
			return -ENOMEM;
		t->strs = strs;
		t->cap = cap;
	}
	t->strs[t->n] = strdup(s);
	if (!t->strs[t->n])
		return -ENOMEM;
	t->slots[j] = t->n + 1;
	return t->n++;
}

static const char *intern(struct sp_symbolizer *s, const char *str)
{
	int64_t i = strtab_index(&s->strs, str);

	return i < 0 ? NULL : s->strs.strs[i];
}

static const char *internf(struct sp_symbolizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static const char *internf(struct sp_symbolizer *s, const char *fmt, ...)
{
	const char *r;
	va_list ap;
	char *str;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&str, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	r = intern(s, str);
	free(str);
	return r;
}

static struct u64slot *u64map_find(const struct u64map *m, uint64_t key)
{
	uint32_t j;

	if (!m->nslots)
		return NULL;
	j = (uint32_t)hash_u64(key) & (m->nslots - 1);
	while (m->slots[j].used) {
		if (m->slots[j].key == key)
			return &m->slots[j];
		j = (j + 1) & (m->nslots - 1);
	}
	return NULL;
}

static struct u64slot *u64map_get(struct u64map *m, uint64_t key, int *is_new)
{
	uint32_t j;

	if ((m->n + 1) * 2 > m->nslots) {
		uint32_t nslots = m->nslots ? m->nslots * 2 : 64, i;
		struct u64slot *slots = calloc(nslots, sizeof(*slots));

		if (!slots)
			return NULL;
		for (i = 0; i < m->nslots; i++) {
			if (!m->slots[i].used)
				continue;
			j = (uint32_t)hash_u64(m->slots[i].key) & (nslots - 1);
			while (slots[j].used)
				j = (j + 1) & (nslots - 1);
			slots[j] = m->slots[i];
		}
		free(m->slots);
		m->slots = slots;
		m->nslots = nslots;
	}
	j = (uint32_t)hash_u64(key) & (m->nslots - 1);
	while (m->slots[j].used) {
		if (m->slots[j].key == key) {
			*is_new = 0;
			return &m->slots[j];
		}
		j = (j + 1) & (m->nslots - 1);
	}
	m->slots[j].used = 1;
	m->slots[j].key = key;
	m->slots[j].val = 0;
	m->n++;
	*is_new = 1;
	return &m->slots[j];
}

/* Linear probing deletion: re-place the rest of the cluster. */
static void u64map_del(struct u64map *m, uint64_t key)
{
	struct u64slot *slot = u64map_find(m, key);
	uint32_t j, k;

	if (!slot)
		return;
	j = (uint32_t)(slot - m->slots);
	slot->used = 0;
	m->n--;
	for (k = (j + 1) & (m->nslots - 1); m->slots[k].used;
	     k = (k + 1) & (m->nslots - 1)) {
		struct u64slot e = m->slots[k];
		uint32_t h;

		m->slots[k].used = 0;
		h = (uint32_t)hash_u64(e.key) & (m->nslots - 1);
		while (m->slots[h].used)
			h = (h + 1) & (m->nslots - 1);
		m->slots[h] = e;
	}
}

static uint64_t key2(uint32_t a, uint32_t b)
{
	return (uint64_t)a << 32 | b;
}

static uint64_t sym_hash(const struct sp_elf *elf, uint64_t vaddr, int precise)
{
	return hash_u64((uint64_t)(uintptr_t)elf * 31 + vaddr * 2 + (unsigned)precise);
}

static struct symslot *sym_find(struct sp_symbolizer *s,
				const struct sp_elf *elf, uint64_t vaddr,
				int precise)
{
	uint32_t j;

	if (!s->nsymslots)
		return NULL;
	j = (uint32_t)sym_hash(elf, vaddr, precise) & (s->nsymslots - 1);
	while (s->syms[j].used) {
		if (s->syms[j].elf == elf && s->syms[j].vaddr == vaddr &&
		    s->syms[j].precise == precise)
			return &s->syms[j];
		j = (j + 1) & (s->nsymslots - 1);
	}
	return NULL;
}

static int sym_add(struct sp_symbolizer *s, const struct sp_elf *elf,
		   uint64_t vaddr, int precise, const char *name,
		   unsigned origin)
{
	uint32_t j;

	if ((s->nsyms + 1) * 2 > s->nsymslots) {
		uint32_t nslots = s->nsymslots ? s->nsymslots * 2 : 1024, i;
		struct symslot *slots = calloc(nslots, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (i = 0; i < s->nsymslots; i++) {
			const struct symslot *e = &s->syms[i];

			if (!e->used)
				continue;
			j = (uint32_t)sym_hash(e->elf, e->vaddr, e->precise) &
			    (nslots - 1);
			while (slots[j].used)
				j = (j + 1) & (nslots - 1);
			slots[j] = *e;
		}
		free(s->syms);
		s->syms = slots;
		s->nsymslots = nslots;
	}
	j = (uint32_t)sym_hash(elf, vaddr, precise) & (s->nsymslots - 1);
	while (s->syms[j].used)
		j = (j + 1) & (s->nsymslots - 1);
	s->syms[j] = (struct symslot){ .elf = elf, .vaddr = vaddr,
		.name = name, .origin = (uint8_t)origin,
		.precise = (uint8_t)precise, .used = 1 };
	s->nsyms++;
	return 0;
}

/* Life */

struct sp_symbolizer *sp_symbolizer_new(struct sp_procs *procs)
{
	struct sp_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->procs = procs;
	s->kallsyms_path = strdup("/proc/kallsyms");
	s->perf_map_dir = strdup("/tmp");
	if (!s->kallsyms_path || !s->perf_map_dir)
		goto err;
	return s;
err:
	sp_symbolizer_free(s);
	return NULL;
}

static void perfmap_clear(struct perfmap *pm)
{
	size_t i;

	for (i = 0; i < pm->n; i++)
		free(pm->syms[i].name);
	free(pm->syms);
	pm->syms = NULL;
	pm->n = 0;
	pm->loaded = 0;
}

void sp_symbolizer_free(struct sp_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->npms; i++)
		perfmap_clear(&s->pms[i]);
	free(s->pms);
	free(s->ksyms);
	free(s->syms);
	for (i = 0; i < s->strs.n; i++)
		free(s->strs.strs[i]);
	free(s->strs.strs);
	free(s->strs.slots);
	free(s->threads.slots);
	free(s->stacks.slots);
	free(s->pmindex.slots);
	free(s->kallsyms_path);
	free(s->perf_map_dir);
	free(s);
}

static int set_str(char **dst, const char *src)
{
	char *c = strdup(src);

	if (!c)
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

int sp_symbolizer_set_kallsyms(struct sp_symbolizer *s, const char *path)
{
	return set_str(&s->kallsyms_path, path);
}

int sp_symbolizer_set_perf_map_dir(struct sp_symbolizer *s, const char *dir)
{
	return set_str(&s->perf_map_dir, dir);
}

void sp_symbolizer_stats(const struct sp_symbolizer *s,
			 struct sp_symbolize_stats *st)
{
	*st = s->st;
}

int sp_symbol_hidden(const char *name)
{
	static const char *const glue[] = {
		"_start", "__libc_start_main", "__libc_start_main_impl",
		"__libc_start_call_main", "start_thread", "clone", "clone3",
	};
	size_t i;

	for (i = 0; i < sizeof(glue) / sizeof(glue[0]); i++)
		if (!strcmp(name, glue[i]))
			return 1;
	return 0;
}

/* Threads */

static struct perfmap *perfmap_of(struct sp_symbolizer *s, uint32_t pid,
				  int create);

static int set_thread(struct sp_symbolizer *s, uint32_t pid, uint32_t tid,
		      const char *name)
{
	int64_t i = strtab_index(&s->strs, name);
	struct u64slot *slot;
	int is_new;

	if (i < 0)
		return -ENOMEM;
	slot = u64map_get(&s->threads, key2(pid, tid), &is_new);
	if (!slot)
		return -ENOMEM;
	slot->val = (uint64_t)i;
	return 0;
}

static const char *thread_name(const struct sp_symbolizer *s, uint32_t pid,
			       uint32_t tid)
{
	const struct u64slot *slot = u64map_find(&s->threads, key2(pid, tid));

	return slot ? s->strs.strs[slot->val] : NULL;
}

int sp_symbolizer_apply(struct sp_symbolizer *s, const struct sp_rec_hdr *rec,
			struct sp_st_comm *comm)
{
	const struct sp_comm_rec *c = (const void *)rec;
	const struct sp_task_rec *t = (const void *)rec;
	const char *name;
	int r;

	r = sp_procs_apply(s->procs, rec);
	if (r)
		return r;
	switch (rec->type) {
	case SP_REC_COMM:
		if (set_thread(s, c->pid, c->tid, c->comm))
			return -ENOMEM;
		if (c->flags & SP_COMM_EXEC) {
			/* a new program: its JIT writes a new perf map */
			struct perfmap *pm = perfmap_of(s, c->pid, 0);

			if (pm)
				perfmap_clear(pm);
		}
		*comm = (struct sp_st_comm){ .time = c->time, .pid = c->pid,
			.tid = c->tid, .name = thread_name(s, c->pid, c->tid),
			.exec = !!(c->flags & SP_COMM_EXEC) };
		return 1;
	case SP_REC_FORK:
		name = thread_name(s, t->ppid, t->ptid);
		if (!name) {
			const struct sp_proc *p = sp_procs_find(s->procs, t->ppid);

			name = p && *sp_proc_comm(p) ? sp_proc_comm(p) : NULL;
		}
		if (!name)
			return 0;
		if (set_thread(s, t->pid, t->tid, name))
			return -ENOMEM;
		*comm = (struct sp_st_comm){ .time = t->time, .pid = t->pid,
			.tid = t->tid, .name = thread_name(s, t->pid, t->tid) };
		return 1;
	case SP_REC_EXIT:
		/* tids are reused: the next one gets its name from its FORK */
		if (t->tid != t->pid)
			u64map_del(&s->threads, key2(t->pid, t->tid));
		return 0;
	default:
		return 0;
	}
}

/* Kernel symbols */

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Read kallsyms once; no table (unreadable, or all addresses hidden) is kept as none. */
static int load_kallsyms(struct sp_symbolizer *s)
{
	size_t cap = 0, i, n;
	char *line = NULL;
	size_t linecap = 0;
	const char *kernel;
	int any_nonzero = 0;
	FILE *fp;

	s->kloaded = 1;
	kernel = intern(s, "[kernel]");
	if (!kernel)
		return -ENOMEM;
	fp = fopen(s->kallsyms_path, "re");
	if (!fp)
		return 0;
	while (getline(&line, &linecap, fp) > 0) {
		char type, *name, *mod, *end;
		unsigned long long addr;
		size_t nl;

		errno = 0;
		addr = strtoull(line, &end, 16);
		if (end == line || *end != ' ' || errno)
			continue;
		type = end[1];
		if (!type || end[2] != ' ')
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = end + 3;
		nl = strcspn(name, "\t\n");
		mod = NULL;
		if (name[nl] == '\t') {
			mod = name + nl + 1;
			mod[strcspn(mod, "\n")] = 0;
		}
		name[nl] = 0;
		if (!*name)
			continue;
		if (addr)
			any_nonzero = 1;
		if (s->nksyms == cap) {
			struct ksym *k;

			cap = cap ? cap * 2 : 65536;
			k = realloc(s->ksyms, cap * sizeof(*k));
			if (!k)
				goto nomem;
			s->ksyms = k;
		}
		s->ksyms[s->nksyms].start = addr;
		s->ksyms[s->nksyms].name = intern(s, name);
		s->ksyms[s->nksyms].module = mod && *mod ? intern(s, mod) : kernel;
		if (!s->ksyms[s->nksyms].name || !s->ksyms[s->nksyms].module)
			goto nomem;
		s->nksyms++;
	}
	free(line);
	fclose(fp);
	if (!any_nonzero) {
		/* kptr_restrict: every address reads as zero */
		free(s->ksyms);
		s->ksyms = NULL;
		s->nksyms = 0;
		return 0;
	}
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), ksym_cmp);
	for (i = n = 0; i < s->nksyms; i++)
		if (!n || s->ksyms[n - 1].start != s->ksyms[i].start)
			s->ksyms[n++] = s->ksyms[i];
	s->nksyms = n;
	return 0;
nomem:
	free(line);
	fclose(fp);
	return -ENOMEM;
}

int sp_symbolize_kernel(struct sp_symbolizer *s, uint64_t addr, int precise,
			struct sp_frame *f)
{
	uint64_t look = precise || !addr ? addr : addr - 1;
	size_t lo = 0, hi;
	int r;

	if (!s->kloaded && (r = load_kallsyms(s)))
		return r;
	*f = (struct sp_frame){ .addr = addr, .kind = SP_FK_KERNEL,
		.origin = SP_FO_NONE };
	s->st.frames++;
	hi = s->nksyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ksyms[mid].start <= look)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo) {
		if (!s->nksyms)
			s->st.no_kallsyms++;
		s->st.unresolved++;
		f->function = f->module = intern(s, "[kernel]");
		return f->function ? 0 : -ENOMEM;
	}
	f->function = s->ksyms[lo - 1].name;
	f->module = s->ksyms[lo - 1].module;
	f->origin = SP_FO_KALLSYMS;
	return 0;
}

/* Perf maps */

static struct perfmap *perfmap_of(struct sp_symbolizer *s, uint32_t pid,
				  int create)
{
	struct u64slot *slot;
	int is_new;

	if (!create) {
		slot = u64map_find(&s->pmindex, pid);
		return slot ? &s->pms[slot->val] : NULL;
	}
	slot = u64map_get(&s->pmindex, pid, &is_new);
	if (!slot)
		return NULL;
	if (!is_new)
		return &s->pms[slot->val];
	if (s->npms == s->cappms) {
		size_t cap = s->cappms ? s->cappms * 2 : 16;
		struct perfmap *p = realloc(s->pms, cap * sizeof(*p));

		if (!p) {
			u64map_del(&s->pmindex, pid);
			return NULL;
		}
		s->pms = p;
		s->cappms = cap;
	}
	slot->val = s->npms;
	memset(&s->pms[s->npms], 0, sizeof(s->pms[0]));
	s->pms[s->npms].pid = pid;
	s->pms[s->npms].size = -1;
	return &s->pms[s->npms++];
}

static int pmsym_cmp(const void *a, const void *b)
{
	const struct pmsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Parse "START SIZE name": hex without 0x (tolerated), name to the end. */
static int parse_pm_line(char *line, struct pmsym *sym)
{
	char *end, *name;

	errno = 0;
	sym->start = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno)
		return -1;
	line = end + 1;
	sym->size = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno || !sym->size)
		return -1;
	name = end + 1;
	name[strcspn(name, "\r\n")] = 0;
	if (!*name)
		return -1;
	sym->name = name;
	return 0;
}

static int perfmap_load(struct sp_symbolizer *s, struct perfmap *pm)
{
	char path[4096], *line = NULL;
	size_t linecap = 0, cap = 0;
	uint32_t seq = 0;
	struct stat sb;
	FILE *fp;
	int fd;

	perfmap_clear(pm);
	pm->loaded = 1;
	pm->size = -1;
	snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map",
		 s->perf_map_dir, pm->pid);
	/* O_NONBLOCK: a fifo planted in /tmp must not hang us */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return 0;
	}
	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		return 0;
	}
	pm->size = sb.st_size;
	pm->mtime = sb.st_mtim;
	s->st.perf_map_loads++;
	while (getline(&line, &linecap, fp) > 0) {
		struct pmsym sym;

		seq++;
		if (parse_pm_line(line, &sym))
			continue;
		if (pm->n == cap) {
			struct pmsym *p;

			cap = cap ? cap * 2 : 1024;
			p = realloc(pm->syms, cap * sizeof(*p));
			if (!p)
				goto nomem;
			pm->syms = p;
		}
		sym.seq = seq;
		sym.name = strdup(sym.name);
		if (!sym.name)
			goto nomem;
		pm->syms[pm->n++] = sym;
	}
	free(line);
	fclose(fp);
	qsort(pm->syms, pm->n, sizeof(*pm->syms), pmsym_cmp);
	return 0;
nomem:
	free(line);
	fclose(fp);
	return -ENOMEM;
}

/* The entry holding addr; of overlapping ones (reused JIT memory) the last written. */
static const struct pmsym *perfmap_find(const struct perfmap *pm, uint64_t addr)
{
	const struct pmsym *best = NULL;
	size_t lo = 0, hi = pm->n, i, scanned;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, scanned = 0; i-- > 0 && scanned < 64; scanned++) {
		const struct pmsym *e = &pm->syms[i];

		if (addr - e->start < e->size && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}

static int perfmap_lookup(struct sp_symbolizer *s, uint32_t pid,
			  uint64_t addr, const char **name)
{
	struct perfmap *pm = perfmap_of(s, pid, 1);
	const struct pmsym *e;
	char path[4096];
	struct stat sb;
	int r;

	*name = NULL;
	if (!pm)
		return -ENOMEM;
	if (!pm->loaded && (r = perfmap_load(s, pm)))
		return r;
	e = perfmap_find(pm, addr);
	if (!e) {
		/* the JIT may have written more since we read it */
		snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map",
			 s->perf_map_dir, pid);
		if (stat(path, &sb) || !S_ISREG(sb.st_mode) ||
		    (sb.st_size == pm->size &&
		     sb.st_mtim.tv_sec == pm->mtime.tv_sec &&
		     sb.st_mtim.tv_nsec == pm->mtime.tv_nsec))
			return 0;
		if ((r = perfmap_load(s, pm)))
			return r;
		e = perfmap_find(pm, addr);
		if (!e)
			return 0;
	}
	*name = intern(s, e->name);
	return *name ? 0 : -ENOMEM;
}

/* User frames */

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}

/* "[libc.so.6]+0x1f0", or "[vsyscall]+0x0" for names already in brackets */
static const char *offset_name(struct sp_symbolizer *s, const char *module,
			       uint64_t off)
{
	if (module[0] == '[')
		return internf(s, "%s+0x%" PRIx64, module, off);
	return internf(s, "[%s]+0x%" PRIx64, base_name(module), off);
}

static int resolve_elf(struct sp_symbolizer *s, const struct sp_map *m,
		       uint64_t addr, int precise, struct sp_frame *f)
{
	uint64_t vaddr = addr - m->bias;
	enum sp_sym_origin origin;
	const struct sp_sym *sym;
	const struct symslot *hit;
	const char *name;
	unsigned o;

	hit = sym_find(s, m->elf, vaddr, precise);
	if (hit) {
		f->function = hit->name;
		f->origin = hit->origin;
		return 0;
	}
	sym = sp_elf_symbol(m->elf, precise ? vaddr : vaddr - 1, &origin);
	if (sym && sym->name && *sym->name) {
		name = sym->name;
		if (m->kind == SP_MAP_IMAGE)
			o = SP_FO_VDSO;
		else
			o = origin == SP_ORIGIN_DYNSYM ? SP_FO_DYNSYM :
			    SP_FO_SYMTAB;
	} else {
		name = offset_name(s, m->kind == SP_MAP_IMAGE ? "[vdso]" :
				   m->name, vaddr);
		if (!name)
			return -ENOMEM;
		o = SP_FO_NONE;
	}
	f->function = name;
	f->origin = (uint8_t)o;
	return sym_add(s, m->elf, vaddr, precise, name, o);
}

static const char *anon_module(const struct sp_map *m)
{
	if (!strncmp(m->name, "[anon:", 6) || !strncmp(m->name, "/memfd:", 7))
		return m->name;
	return "[anon]";
}

int sp_symbolize_user(struct sp_symbolizer *s, uint32_t pid, uint64_t addr,
		      int precise, struct sp_frame *f)
{
	const struct sp_proc *proc = sp_procs_find(s->procs, pid);
	uint64_t look = precise || !addr ? addr : addr - 1;
	const struct sp_map *m = proc ? sp_proc_map(proc, look) : NULL;
	const char *name = NULL;
	int r = 0;

	precise = !!precise;
	*f = (struct sp_frame){ .addr = addr, .kind = SP_FK_NATIVE,
		.origin = SP_FO_NONE };
	s->st.frames++;
	if (!m || m->kind == SP_MAP_ANON) {
		f->kind = m ? SP_FK_JIT : SP_FK_UNKNOWN;
		f->module = m ? intern(s, anon_module(m)) : NULL;
		if (m && !f->module)
			return -ENOMEM;
		r = perfmap_lookup(s, pid, look, &name);
		if (r)
			return r;
		if (name) {
			f->kind = SP_FK_JIT;
			f->function = name;
			f->origin = SP_FO_PERFMAP;
		}
	} else {
		f->module = intern(s, m->name);
		if (!f->module)
			return -ENOMEM;
		if (m->elf && (m->kind == SP_MAP_FILE || m->kind == SP_MAP_IMAGE))
			r = resolve_elf(s, m, addr, precise, f);
		else
			f->function = offset_name(s, m->name,
						  addr - m->start + m->pgoff);
		if (r)
			return r;
	}
	if (!f->function) {
		f->function = intern(s, "[unknown]");
		if (!f->function)
			return -ENOMEM;
	}
	if (f->origin == SP_FO_NONE)
		s->st.unresolved++;
	else if (sp_symbol_hidden(f->function))
		f->flags |= SP_SYMF_HIDDEN;
	return 0;
}

int sp_symbolize_stack(struct sp_symbolizer *s,
		       const struct sp_unw_stack_view *v,
		       struct sp_frame *frames)
{
	const struct sp_unw_stack *st = v->s;
	struct u64slot *slot;
	unsigned i;
	int r, is_new;

	for (i = 0; i < st->nr_kernel; i++) {
		r = sp_symbolize_kernel(s, v->kernel_ips[i], i == 0, &frames[i]);
		if (r)
			return r;
	}
	for (i = 0; i < st->nr_user; i++) {
		r = sp_symbolize_user(s, st->pid, v->user_ips[i],
				      v->uflags[i] & SP_FRAME_PRECISE,
				      &frames[st->nr_kernel + i]);
		if (r)
			return r;
	}
	slot = u64map_get(&s->stacks, key2(st->pid, st->id), &is_new);
	if (!slot)
		return -ENOMEM;
	if (is_new)
		s->st.stacks++;
	return 0;
}

int sp_symbolizer_has_stack(const struct sp_symbolizer *s, uint32_t pid,
			    uint32_t id)
{
	return u64map_find(&s->stacks, key2(pid, id)) != NULL;
}
