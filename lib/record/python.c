/* SPDX-License-Identifier: MIT */
/*
 * python.c: CPython's own frames: finding the interpreter in a process,
 * the BPF program that walks its frames inside each sample, and reading
 * the code objects they point to.
 *
 * Since 3.11 CPython keeps its frames (_PyInterpreterFrame) in per-thread
 * chunks of its own, not on the C stack, so a sample's stack copy does not
 * hold them.  _PyRuntime, exported even by a stripped interpreter, leads
 * to the interpreters, their thread states and each thread's current
 * frame.  The offsets are fixed per minor version for 3.11 and 3.12
 * (checked against their headers); 3.13 describes itself in the
 * _Py_DebugOffsets at the head of _PyRuntime, which is read instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>

#include "os/perf.h"
#include "os/procfs.h"
#include "python.h"

/* The compiled program, made a C array by the Makefile. */
extern const unsigned char sp_python_bpf[];
extern const unsigned long sp_python_bpf_len;

/* Finding the interpreter ------------------------------------------------- */

struct found {
	pid_t pid;
	uint64_t runtime, version, code_type;
	uint64_t last_ino;
	char path[256];
	int err;
};

/* Bias of the file mapped at m: its address minus the file's vaddr. */
static int load_bias(Elf *e, const struct sp_procfs_map *m, uint64_t *bias)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		uint64_t off;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		off = ph.p_offset & ~(uint64_t)0xfff;
		if (m->pgoff < off || m->pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		*bias = m->start - ((ph.p_vaddr & ~(uint64_t)0xfff) +
				    (m->pgoff - off));
		return 0;
	}
	return -ENOENT;
}

/* The exported symbols that lead to the frames, from .dynsym. */
static int examine(struct found *f, const struct sp_procfs_map *m)
{
	uint64_t runtime = 0, version = 0, code_type = 0, bias;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *e;
	int fd, r = 0;

	fd = sp_procfs_open_mapped(f->pid, m);
	if (fd < 0)
		return 0;	/* gone or unreadable: not ours to judge */
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = d ? d->d_size / sh.sh_entsize : 0;
		for (i = 0; i < n; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || !s.st_value ||
			    s.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || name[0] == '\0')
				continue;
			if (!strcmp(name, "_PyRuntime"))
				runtime = s.st_value;
			else if (!strcmp(name, "Py_Version"))
				version = s.st_value;
			else if (!strcmp(name, "PyCode_Type"))
				code_type = s.st_value;
		}
	}
	/* before 3.11 there is no Py_Version: found, to be refused */
	if (runtime && !load_bias(e, m, &bias)) {
		f->runtime = runtime + bias;
		f->version = version ? version + bias : 0;
		f->code_type = code_type ? code_type + bias : 0;
		snprintf(f->path, sizeof(f->path), "%s", m->path);
		r = 1;
	}
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

static int each_map(const struct sp_procfs_map *m, void *arg)
{
	struct found *f = arg;
	const char *base = strrchr(m->path, '/');

	/*
	 * python3.11, libpython3.12.so.1.0: the files that may hold it, run
	 * as code; a process that only reads one (a symbolizer, a debugger)
	 * maps it without PROT_EXEC and runs no CPython.
	 */
	if (!base || !strstr(base, "python") || !(m->prot & PROT_EXEC) ||
	    m->ino == f->last_ino)
		return 0;
	f->last_ino = m->ino;
	return examine(f, m);
}

/* The 3.13 layout, from the _Py_DebugOffsets at the head of _PyRuntime. */
static int from_debug_offsets(pid_t pid, struct sp_py_proc *p, char *why,
			      size_t whylen)
{
	/* cookie, version, free_threaded, then groups of u64 offsets */
	enum { RT = 3, IS = RT + 3, TS = IS + 13, FR = TS + 9, CO = FR + 6,
	       END = CO + 10 };
	static const unsigned char used[] = { RT + 2, IS + 3, TS + 2, TS + 4,
		TS + 6, FR + 1, FR + 2, FR + 3, FR + 5, CO + 1, CO + 2, CO + 3,
		CO + 4, CO + 5, CO + 9 };
	uint64_t o[END];
	size_t i;
	int r;

	r = sp_procfs_read_mem(pid, p->where.runtime, o, sizeof(o));
	if (r)
		return r;
	if (memcmp(o, "xdebugpy", 8)) {
		snprintf(why, whylen, "CPython %u.%u in %s: no debug offsets at _PyRuntime",
			 p->version >> 24, p->version >> 16 & 0xff, p->path);
		return -ENOTSUP;
	}
	if (o[2]) {
		snprintf(why, whylen, "CPython %u.%u in %s: free-threaded builds are not read",
			 p->version >> 24, p->version >> 16 & 0xff, p->path);
		return -ENOTSUP;
	}
	p->where.interp_head = (uint32_t)o[RT + 2];
	p->where.threads_head = (uint32_t)o[IS + 3];
	p->where.ts_next = (uint32_t)o[TS + 2];
	p->where.frame = (uint32_t)o[TS + 4];
	p->where.ts_tid = (uint32_t)o[TS + 6];
	p->where.ts_cframe = SP_PY_NONE;
	p->where.fr_prev = (uint32_t)o[FR + 1];
	p->where.fr_code = (uint32_t)o[FR + 2];
	p->where.fr_instr = (uint32_t)o[FR + 3];
	p->where.fr_entry = (uint32_t)o[FR + 5];
	p->where.entry_owner = 1;
	p->co_filename = (uint32_t)o[CO + 1];
	p->co_name = (uint32_t)o[CO + 2];
	p->co_qualname = (uint32_t)o[CO + 3];
	p->co_linetable = (uint32_t)o[CO + 4];
	p->co_firstlineno = (uint32_t)o[CO + 5];
	p->co_code = (uint32_t)o[CO + 9];
	/* the offsets used (not the sizes that head each group) */
	for (i = 0; i < sizeof(used) / sizeof(used[0]); i++)
		if (o[used[i]] >= 1 << 20)
			break;
	if (i < sizeof(used) / sizeof(used[0])) {
		snprintf(why, whylen, "CPython %u.%u in %s: debug offsets out of range",
			 p->version >> 24, p->version >> 16 & 0xff, p->path);
		return -ENOTSUP;
	}
	return 0;
}

int sp_py_find(pid_t pid, struct sp_py_proc *p, char *why, size_t whylen)
{
	struct found f = { .pid = pid };
	unsigned long version = 0;
	int r;

	memset(p, 0, sizeof(*p));
	elf_version(EV_CURRENT);
	r = sp_procfs_maps(pid, each_map, &f);
	if (r <= 0)
		return r;
	if (!f.version || !f.code_type) {
		const char *v = strstr(strrchr(f.path, '/'), "python");
		int n = (int)strspn(v + 6, "0123456789.");

		while (n && v[6 + n - 1] == '.')
			n--;	/* libpython3.10.so */
		snprintf(why, whylen, "CPython %.*s in %s: unsupported version (3.11 to 3.13 are read)",
			 n, v + 6, f.path);
		return -ENOTSUP;
	}
	r = sp_procfs_read_mem(pid, f.version, &version, sizeof(version));
	if (r)
		return r;
	p->version = (uint32_t)version;
	p->code_type = f.code_type;
	p->where.runtime = f.runtime;
	memcpy(p->path, f.path, sizeof(p->path));
	p->where.interp_head = 40;
	p->where.ts_next = 8;
	switch (p->version >> 16) {
	case 0x030b:
		p->where.threads_head = 16;
		p->where.ts_tid = 160;
		p->where.ts_cframe = 56;
		p->where.frame = 8;
		p->where.fr_code = 32;
		p->where.fr_prev = 48;
		p->where.fr_instr = 56;
		p->where.fr_entry = 68;	/* is_entry */
		p->where.entry_owner = 0;
		p->co_firstlineno = 72;
		p->co_code = 184;
		p->str_data = 48;
		p->ustr_data = 72;
		break;
	case 0x030c:
		p->where.threads_head = 72;
		p->where.ts_tid = 144;
		p->where.ts_cframe = 56;
		p->where.frame = 0;
		p->where.fr_code = 0;
		p->where.fr_prev = 8;
		p->where.fr_instr = 56;
		p->where.fr_entry = 70;	/* owner */
		p->where.entry_owner = 1;
		p->co_firstlineno = 68;
		p->co_code = 192;
		p->str_data = 40;
		p->ustr_data = 56;
		break;
	case 0x030d:
		p->str_data = 40;
		p->ustr_data = 56;
		r = from_debug_offsets(pid, p, why, whylen);
		if (r)
			return r;
		break;
	default:
		snprintf(why, whylen, "CPython %u.%u in %s: unsupported version (3.11 to 3.13 are read)",
			 p->version >> 24, p->version >> 16 & 0xff, p->path);
		return -ENOTSUP;
	}
	if (p->version >> 16 != 0x030d) {
		p->co_filename = 112;
		p->co_name = 120;
		p->co_qualname = 128;
		p->co_linetable = 136;
	}
	p->where.co_stamp = p->co_firstlineno;
	if (p->co_name < p->co_firstlineno ||
	    p->co_name + 8 > p->co_firstlineno + SP_PY_STAMP_LEN) {
		snprintf(why, whylen, "CPython %u.%u in %s: co_name is not within %u bytes of co_firstlineno",
			 p->version >> 24, p->version >> 16 & 0xff, p->path,
			 SP_PY_STAMP_LEN);
		return -ENOTSUP;
	}
	return 1;
}

/* Code objects ------------------------------------------------------------ */

/* Append code point u to s as UTF-8, within size; returns the new length. */
static size_t put_utf8(char *s, size_t n, size_t size, uint32_t u)
{
	char b[4];
	size_t k, i;

	if (u < 0x80) {
		b[0] = (char)u;
		k = 1;
	} else if (u < 0x800) {
		b[0] = (char)(0xc0 | u >> 6);
		b[1] = (char)(0x80 | (u & 0x3f));
		k = 2;
	} else if (u < 0x10000) {
		b[0] = (char)(0xe0 | u >> 12);
		b[1] = (char)(0x80 | (u >> 6 & 0x3f));
		b[2] = (char)(0x80 | (u & 0x3f));
		k = 3;
	} else {
		b[0] = (char)(0xf0 | (u >> 18 & 0x7));
		b[1] = (char)(0x80 | (u >> 12 & 0x3f));
		b[2] = (char)(0x80 | (u >> 6 & 0x3f));
		b[3] = (char)(0x80 | (u & 0x3f));
		k = 4;
	}
	if (n + k >= size)
		return n;
	for (i = 0; i < k; i++)
		s[n + i] = b[i];
	return n + k;
}

/*
 * A str object at addr as UTF-8 in buf: compact strings only (every name
 * and file name of a code object is one), cut at size - 1 bytes.
 */
static int read_str(pid_t pid, const struct sp_py_proc *p, uint64_t addr,
		    char *buf, size_t size)
{
	uint64_t head[5];	/* refcnt, type, length, hash, state */
	unsigned kind, ascii, compact;
	uint8_t raw[1024];
	size_t len, i, n = 0;
	int r;

	buf[0] = '\0';
	r = sp_procfs_read_mem(pid, addr, head, sizeof(head));
	if (r)
		return r;
	len = (size_t)head[2];
	kind = (unsigned)(head[4] >> 2 & 7);
	compact = (unsigned)(head[4] >> 5 & 1);
	ascii = (unsigned)(head[4] >> 6 & 1);
	if (!compact || !kind || kind == 3 || kind > 4)
		return -EINVAL;
	if (len > sizeof(raw) / kind)
		len = sizeof(raw) / kind;
	r = sp_procfs_read_mem(pid, addr + (ascii ? p->str_data : p->ustr_data),
			       raw, len * kind);
	if (r)
		return r;
	for (i = 0; i < len; i++) {
		uint32_t u = kind == 1 ? raw[i] :
			     kind == 2 ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8) :
			     (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 |
			     (uint32_t)raw[4 * i + 2] << 16 | (uint32_t)raw[4 * i + 3] << 24;
		n = put_utf8(buf, n, size, u);
	}
	buf[n] = '\0';
	return 0;
}

/*
 * Whether the code object at addr is alive and has stamp (pychain.h); its
 * first line.  A freed one may keep its type and fields (pymalloc writes
 * only the free list's pointer over its reference count), but not a count
 * between 1 and 2^32 (immortal objects have 2^30 - 1 or 2^32 - 1).
 */
static int same_code(pid_t pid, const struct sp_py_proc *p, uint64_t addr,
		     uint64_t stamp, uint32_t *first)
{
	uint64_t head[2];
	__u64 b[SP_PY_STAMP_LEN / 8];
	int r;

	if ((r = sp_procfs_read_mem(pid, addr, head, sizeof(head))) ||
	    (r = sp_procfs_read_mem(pid, addr + p->where.co_stamp, b, sizeof(b))))
		return r;
	if (!head[0] || head[0] > UINT32_MAX || head[1] != p->code_type ||
	    sp_py_stamp(b) != stamp)
		return -ESTALE;
	*first = (uint32_t)b[0];
	return 0;
}

/*
 * The object is checked before and after it is read: one freed while it
 * was read (its strings and location table with it) is not taken.
 */
int sp_py_read_code(pid_t pid, const struct sp_py_proc *p, uint64_t addr,
		    uint64_t stamp, struct sp_py_code *c)
{
	uint64_t lt, bytes[3];
	uint32_t first;
	int r;

	memset(c, 0, sizeof(*c));
	if ((r = same_code(pid, p, addr, stamp, &c->firstlineno)) ||
	    (r = sp_procfs_read_mem(pid, addr + p->co_linetable, &lt, 8)))
		return r;
	{
		uint64_t s;

		if ((r = sp_procfs_read_mem(pid, addr + p->co_name, &s, 8)) ||
		    (r = read_str(pid, p, s, c->name, sizeof(c->name))) ||
		    (r = sp_procfs_read_mem(pid, addr + p->co_qualname, &s, 8)) ||
		    (r = read_str(pid, p, s, c->qualname, sizeof(c->qualname))) ||
		    (r = sp_procfs_read_mem(pid, addr + p->co_filename, &s, 8)) ||
		    (r = read_str(pid, p, s, c->filename, sizeof(c->filename))))
			return r;
	}
	/* a bytes object: refcnt, type, size, hash, then the bytes */
	if ((r = sp_procfs_read_mem(pid, lt, bytes, sizeof(bytes))))
		return r;
	if (bytes[2] > 1 << 20)
		return -EINVAL;
	c->linetable_len = (size_t)bytes[2];
	c->linetable = malloc(c->linetable_len + 1);
	if (!c->linetable)
		return -ENOMEM;
	r = sp_procfs_read_mem(pid, lt + 32, c->linetable, c->linetable_len);
	if (!r)
		r = same_code(pid, p, addr, stamp, &first);
	if (r) {
		free(c->linetable);
		c->linetable = NULL;
	}
	return r;
}

/* The BPF program --------------------------------------------------------- */

/*
 * Of the loaded object only three descriptors are kept: the program (for
 * the events opened later), the map of processes and the map of output
 * events (whose entries live while it is open).  The output events are
 * held by that map, the other maps by the program.
 */
struct sp_py_bpf {
	int prog, procs, out;
};

/* A descriptor of the object's, kept when the object is closed. */
static int keep(int fd)
{
	return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

int sp_py_bpf_open(struct sp_py_bpf **bp, char *why, size_t whylen)
{
	struct sp_py_bpf *b = calloc(1, sizeof(*b));
	struct bpf_program *prog;
	struct bpf_object *obj;
	int r;

	*bp = NULL;
	if (!b)
		return -ENOMEM;
	b->prog = b->procs = b->out = -1;
	libbpf_set_print(NULL);
	obj = bpf_object__open_mem(sp_python_bpf, sp_python_bpf_len, NULL);
	r = libbpf_get_error(obj);
	if (r) {
		snprintf(why, whylen, "cannot open the Python frames' BPF program: %s",
			 strerror(-r));
		free(b);
		return r;
	}
	r = bpf_object__load(obj);
	if (r) {
		if (r == -EPERM || r == -EACCES)
			snprintf(why, whylen, "loading a BPF program needs root, or CAP_BPF and CAP_PERFMON");
		else
			snprintf(why, whylen, "the kernel refused the Python frames' BPF program: %s",
				 strerror(-r));
		bpf_object__close(obj);
		free(b);
		return r;
	}
	prog = bpf_object__find_program_by_name(obj, "sp_py_sample");
	b->prog = keep(prog ? bpf_program__fd(prog) : -1);
	b->procs = keep(bpf_object__find_map_fd_by_name(obj, "procs"));
	b->out = keep(bpf_object__find_map_fd_by_name(obj, "out"));
	bpf_object__close(obj);
	if (b->prog < 0 || b->procs < 0 || b->out < 0) {
		snprintf(why, whylen, "the Python frames' BPF program lacks a part");
		sp_py_bpf_free(b);
		return -EINVAL;
	}
	*bp = b;
	return 0;
}

int sp_py_bpf_watch(struct sp_py_bpf *b, pid_t pid, const struct sp_py_proc *p)
{
	uint32_t key = (uint32_t)pid;

	return bpf_map_update_elem(b->procs, &key, &p->where, BPF_ANY) ?
	       -errno : 0;
}

void sp_py_bpf_forget(struct sp_py_bpf *b, pid_t pid)
{
	uint32_t key = (uint32_t)pid;

	bpf_map_delete_elem(b->procs, &key);
}

int sp_py_bpf_output(struct sp_py_bpf *b, int cpu, int ring_fd, uint64_t *id)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_BPF_OUTPUT,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_RAW,
		/* the recorder's trailer, should the kernel write a LOST */
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
	uint32_t key = (uint32_t)cpu;
	int fd, r;

	fd = sp_perf_open(&a, -1, cpu);
	if (fd < 0)
		return fd;
	r = sp_perf_set_output(fd, ring_fd);
	if (!r && ioctl(fd, PERF_EVENT_IOC_ID, id) < 0)
		r = -errno;
	if (!r && bpf_map_update_elem(b->out, &key, &fd, BPF_ANY))
		r = -errno;
	close(fd);	/* the map holds it */
	return r;
}

int sp_py_bpf_attach(struct sp_py_bpf *b, int event_fd)
{
	return ioctl(event_fd, PERF_EVENT_IOC_SET_BPF, b->prog) < 0 ? -errno : 0;
}

void sp_py_bpf_stats(const struct sp_py_bpf *b, uint64_t *runs, uint64_t *ns)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	*runs = *ns = 0;
	memset(&info, 0, sizeof(info));
	if (b && !bpf_obj_get_info_by_fd(b->prog, &info, &len)) {
		*runs = info.run_cnt;
		*ns = info.run_time_ns;
	}
}

void sp_py_bpf_free(struct sp_py_bpf *b)
{
	if (!b)
		return;
	if (b->prog >= 0)
		close(b->prog);
	if (b->procs >= 0)
		close(b->procs);
	if (b->out >= 0)
		close(b->out);
	free(b);
}
