/* SPDX-License-Identifier: MIT */
/*
 * python.h: CPython's own frames, read inside each sample.
 *
 * sp_py_find() tells whether a process runs a CPython this reads (3.11 to
 * 3.13) and where its frames are; a struct sp_py_bpf is the BPF program
 * (python.bpf.c) that walks them at the instant of a sample, attached to
 * sampling events, writing a struct sp_py_chain (pychain.h) into the
 * sample's buffer through a BPF-output event per CPU; sp_py_read_code()
 * reads what names a frame from the code object it points to.
 */
#ifndef SP_RECORD_PYTHON_H
#define SP_RECORD_PYTHON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pychain.h"

/* A CPython found in a process. */
struct sp_py_proc {
	uint32_t version;	/* PY_VERSION_HEX: 0x030b02f0 is 3.11.2 */
	uint64_t code_type;	/* address of PyCode_Type */
	struct sp_py_where where;
	/* PyCodeObject */
	uint32_t co_filename, co_name, co_qualname, co_linetable;
	uint32_t co_firstlineno, co_code;	/* co_code: the bytecode */
	uint32_t str_data;	/* a compact ASCII string's characters */
	uint32_t ustr_data;	/* a compact non-ASCII string's */
	char path[256];		/* the file that holds _PyRuntime */
};

/*
 * Look for CPython in process pid: a mapped file exporting _PyRuntime and
 * Py_Version.  Returns 1 and fills *p for 3.11, 3.12 and 3.13; 0 when
 * there is none; -ENOTSUP for another version or build, said in why;
 * another -errno when the process or its memory cannot be read.
 */
int sp_py_find(pid_t pid, struct sp_py_proc *p, char *why, size_t whylen);

/* What names a Python frame: a code object read from the process. */
struct sp_py_code {
	char name[128], qualname[256], filename[1024];
	uint32_t firstlineno;
	uint8_t *linetable;	/* malloc'ed; the caller frees it */
	size_t linetable_len;
};

/*
 * Read code object addr of process pid, which must still be the one a
 * sample saw: alive, of type PyCode_Type and with stamp (pychain.h),
 * before and after it is read.
 * Returns 0, -ESTALE when the address holds something else now, or
 * another -errno.  On success c->linetable is the caller's to free.
 */
int sp_py_read_code(pid_t pid, const struct sp_py_proc *p, uint64_t addr,
		    uint64_t stamp, struct sp_py_code *c);

struct sp_py_bpf;

/*
 * Load the BPF program.  Returns 0 and sets *bp, or -errno with why said
 * (-EPERM: CAP_BPF and CAP_PERFMON, or root, are needed).
 */
int sp_py_bpf_open(struct sp_py_bpf **bp, char *why, size_t whylen);

/* Walk the Python frames of process pid, found by sp_py_find. */
int sp_py_bpf_watch(struct sp_py_bpf *b, pid_t pid,
		    const struct sp_py_proc *p);

/* No longer: process pid has ended. */
void sp_py_bpf_forget(struct sp_py_bpf *b, pid_t pid);

/*
 * Open the BPF-output event of cpu, its records in the buffer of ring_fd
 * (CLOCK_MONOTONIC times, PERF_SAMPLE_IDENTIFIER first, then TID, TIME,
 * CPU and RAW; sample_id_all); *id is its sample id.  Returns 0 or -errno.
 */
int sp_py_bpf_output(struct sp_py_bpf *b, int cpu, int ring_fd,
		     uint64_t *id);

/* Run the program in every sample of event_fd.  Returns 0 or -errno. */
int sp_py_bpf_attach(struct sp_py_bpf *b, int event_fd);

/*
 * How often the program ran and its time in all, ns: counted only while
 * kernel.bpf_stats_enabled is 1 (0 and 0 otherwise).
 */
void sp_py_bpf_stats(const struct sp_py_bpf *b, uint64_t *runs, uint64_t *ns);

/* Close the program, its maps and output events.  NULL is a no-op. */
void sp_py_bpf_free(struct sp_py_bpf *b);

#endif
