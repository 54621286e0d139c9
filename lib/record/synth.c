/* SPDX-License-Identifier: MIT */
/* synth.c: the stream header, and records of what existed before recording. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/io.h"
#include "elf/buildid.h"
#include "os/procfs.h"
#include "recorder.h"

int rec_write_header(struct sp_recorder *r)
{
	const struct perf_event_attr *a = &r->ev.attr;
	struct sp_raw_header h;

	memset(&h, 0, sizeof(h));
	memcpy(h.h.magic, SP_RAW_MAGIC, SP_MAGIC_LEN);
	h.h.version = SP_RAW_VERSION;
	h.h.header_size = sizeof(h);
	h.ev.type = a->type;
	h.ev.flags = a->freq ? SP_EV_FREQ : 0;
	if (a->sample_type & PERF_SAMPLE_CALLCHAIN)
		h.ev.flags |= SP_EV_KERNEL;
	if (r->o.off_cpu)
		h.ev.flags |= SP_EV_SWITCH;
	if (r->ev.sw_on || r->ev.sw_main)
		h.ev.flags |= SP_EV_OFFCPU;
	if (r->o.off_cpu == SP_RECORD_OFFCPU_ONLY)
		h.ev.flags |= SP_EV_NO_CPU;
	h.ev.config = a->config;
	h.ev.freq_or_period = a->sample_freq;
	h.ev.clockid = CLOCK_MONOTONIC;
	h.ev.ncpus = r->ev.nbufs;
	h.ev.start_time = r->start_time;
	h.start_realtime = r->start_realtime;
	snprintf(h.ev.name, sizeof(h.ev.name), "%s",
		 r->o.off_cpu == SP_RECORD_OFFCPU_ONLY ? "context-switches" :
		 r->event);
	h.sample_type = a->sample_type;
	h.regs_mask = a->sample_regs_user;
	h.stack_size = a->sample_stack_user;
	return sp_out_write(r->out, &h, sizeof(h));
}

void rec_synth_release(struct rec_synth *s)
{
	free(s->bids);
	sp_u64map_release(&s->index);
	memset(s, 0, sizeof(*s));
}

int rec_synth_thread(struct sp_recorder *r, pid_t pid, pid_t tid, pid_t ppid,
		     const char *comm)
{
	struct sp_task_rec t;
	int e;

	memset(&t, 0, sizeof(t));
	t.hdr.type = SP_REC_FORK;
	t.hdr.size = sizeof(t);
	t.time = r->start_time;
	t.pid = (uint32_t)pid;
	t.ppid = (uint32_t)ppid;
	t.tid = (uint32_t)tid;
	t.ptid = (uint32_t)ppid;
	t.flags = SP_REC_SYNTH;
	e = sp_out_rec(r->out, &t, sizeof(t));
	if (e || !comm)
		return e;
	/* after the FORK, which gives a thread its parent's name */
	return rec_synth_comm(r, pid, tid, comm);
}

int rec_synth_comm(struct sp_recorder *r, pid_t pid, pid_t tid,
		   const char *comm)
{
	struct sp_comm_rec c;

	memset(&c, 0, sizeof(c));
	c.hdr.type = SP_REC_COMM;
	c.hdr.size = sizeof(c);
	c.time = r->start_time;
	c.pid = (uint32_t)pid;
	c.tid = (uint32_t)tid;
	c.flags = SP_REC_SYNTH;
	memcpy(c.comm, comm, strnlen(comm, sizeof(c.comm) - 1));
	return sp_out_rec(r->out, &c, sizeof(c));
}

static int synth_threads(struct sp_recorder *r)
{
	size_t i;
	int e;

	for (i = 0; i < r->ev.nattached; i++) {
		pid_t pid = r->ev.attached[i].pid, tid = r->ev.attached[i].tid;
		pid_t tgid, ppid = pid;
		char comm[16];

		if (tid == pid && sp_procfs_status(pid, &tgid, &ppid))
			ppid = 0;
		e = rec_synth_thread(r, pid, tid, ppid,
				     sp_procfs_comm(pid, tid, comm) == 0 ?
				     comm : NULL);
		if (e)
			return e;
	}
	return 0;
}

struct synth_maps {
	struct sp_recorder *r;
	pid_t pid;
	int err;		/* a write error, which stops the walk */
	union {
		struct sp_mmap_rec m;
		uint8_t bytes[sizeof(struct sp_mmap_rec) + 4096 + 8];
	} u;
};

static int synth_vdso(struct synth_maps *s, const struct sp_procfs_map *m)
{
	struct sp_image_rec *im;
	size_t len = m->end - m->start;
	int e;

	if (!len || len > SP_REC_MAX - sizeof(*im) - 8)
		return 0;
	im = calloc(1, sizeof(*im) + sp_align8(len));
	if (!im)
		return -ENOMEM;
	if (sp_procfs_read_mem(s->pid, m->start, im->data, len)) {
		free(im);
		return 0;	/* no image: the unwinder does without */
	}
	im->hdr.type = SP_REC_IMAGE;
	im->hdr.size = (uint32_t)(sizeof(*im) + sp_align8(len));
	im->time = s->r->start_time;
	im->pid = (uint32_t)s->pid;
	im->flags = SP_REC_SYNTH;
	im->start = m->start;
	im->len = len;
	e = sp_out_rec(s->r->out, im, im->hdr.size);
	free(im);
	return e;
}

static uint64_t file_key(const struct sp_procfs_map *m)
{
	uint64_t k[2] = { (uint64_t)m->maj << 32 | m->min, m->ino };

	return sp_hash_bytes(k, sizeof(k));
}

/* The build id of a mapped file, read once per file (device and inode). */
static int map_build_id(struct sp_recorder *r, pid_t pid,
			const struct sp_procfs_map *m, uint8_t id[20])
{
	struct rec_synth *sy = &r->syn;
	struct sp_u64slot *slot;
	struct rec_bid *c;
	uint64_t key = file_key(m);
	int fd, is_new;

	if (m->path[0] != '/' || !m->ino)
		return 0;
	slot = sp_u64map_get(&sy->index, key, &is_new);
	if (!slot)
		return 0;
	if (!is_new) {
		c = &sy->bids[slot->val];
		if (c->ino == m->ino && c->maj == m->maj && c->min == m->min) {
			if (c->len > 0)
				memcpy(id, c->id, (size_t)c->len);
			return c->len > 0 ? c->len : 0;
		}
		/* two files with one key: the first keeps it, read this one */
	}
	if (SP_GROW(sy->bids, sy->cap, sy->n + 1)) {
		if (is_new)
			sp_u64map_del(&sy->index, key);
		return 0;
	}
	if (is_new)
		slot->val = sy->n;
	c = &sy->bids[sy->n++];
	memset(c, 0, sizeof(*c));
	c->maj = m->maj;
	c->min = m->min;
	c->ino = m->ino;
	fd = sp_procfs_open_mapped(pid, m);
	c->len = fd < 0 ? fd : sp_build_id_fd(fd, c->id);
	if (fd >= 0)
		close(fd);
	if (c->len > 0)
		memcpy(id, c->id, (size_t)c->len);
	return c->len > 0 ? c->len : 0;
}

static int synth_map(const struct sp_procfs_map *m, void *arg)
{
	struct synth_maps *s = arg;
	struct sp_mmap_rec *o = &s->u.m;
	const char *name = *m->path ? m->path : "//anon";
	size_t n = strlen(name);
	int e;

	if (!(m->prot & PROT_EXEC))
		return 0;
	if (n > 4095)
		n = 4095;
	memset(o, 0, sizeof(*o));
	o->hdr.type = SP_REC_MMAP;
	o->hdr.size = sp_align8(sizeof(*o) + n + 1);
	o->time = s->r->start_time;
	o->pid = o->tid = (uint32_t)s->pid;
	o->start = m->start;
	o->len = m->end - m->start;
	o->pgoff = m->pgoff;
	o->maj = m->maj;
	o->min = m->min;
	o->ino = m->ino;
	o->prot = m->prot;
	o->mflags = m->mflags;
	o->flags = SP_REC_SYNTH;
	o->build_id_size = (uint8_t)map_build_id(s->r, s->pid, m, o->build_id);
	memcpy(o->filename, name, n);
	o->filename[n] = 0;
	if (o->build_id_size &&
	    rec_keep_mapping(s->r, (uint32_t)s->pid, m->start, o->len, o->time,
			     o->filename, o->build_id, o->build_id_size,
			     m->maj, m->min, m->ino)) {
		s->err = -ENOMEM;
		return -ENOMEM;
	}
	e = sp_out_rec(s->r->out, o, sizeof(*o) + n + 1);
	if (!e && !strcmp(name, "[vdso]"))
		e = synth_vdso(s, m);
	if (!e)
		e = rec_python_mapped(s->r, (uint32_t)s->pid, name);
	if (e)
		s->err = e;
	return e;
}

int rec_synth_maps(struct sp_recorder *r, pid_t pid)
{
	struct synth_maps *s = calloc(1, sizeof(*s));
	int e;

	if (!s)
		return -ENOMEM;
	s->r = r;
	s->pid = pid;
	sp_procfs_maps(pid, synth_map, s);
	e = s->err;
	free(s);
	return e;
}

int rec_write_existing(struct sp_recorder *r)
{
	size_t i;
	int e = synth_threads(r);

	for (i = 0; !e && i < r->tg.n; i++)
		e = rec_synth_maps(r, r->tg.pids[i]);
	return e;
}
