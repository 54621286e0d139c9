/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * pychain.h: what the recorder and its BPF program (python.bpf.c) share:
 * where CPython keeps a thread's frames (one struct sp_py_where per
 * process, in the program's map), and the chain of Python frames the
 * program writes for a sample (struct sp_py_chain, the raw data of a
 * BPF-output event that shares the sample's buffer and comes just before
 * the sample in it).
 */
#ifndef SP_RECORD_PYCHAIN_H
#define SP_RECORD_PYCHAIN_H

#include <linux/types.h>

/* Byte offsets into CPython's structures, and the one address to start. */
struct sp_py_where {
	__u64 runtime;		/* address of _PyRuntime */
	__u32 interp_head;	/* _PyRuntime: interpreters.head */
	__u32 threads_head;	/* PyInterpreterState: threads.head */
	__u32 ts_next;		/* PyThreadState: next */
	__u32 ts_tid;		/* PyThreadState: native_thread_id */
	__u32 ts_cframe;	/* PyThreadState: cframe, or SP_PY_NONE (3.13+) */
	__u32 frame;		/* _PyCFrame, or PyThreadState: current_frame */
	__u32 fr_code;		/* _PyInterpreterFrame: f_code / f_executable */
	__u32 fr_prev;		/* _PyInterpreterFrame: previous */
	__u32 fr_instr;		/* _PyInterpreterFrame: prev_instr / instr_ptr */
	__u32 fr_entry;		/* _PyInterpreterFrame: is_entry / owner */
	__u32 entry_owner;	/* 0: fr_entry != 0 is an entry frame (3.11);
				   1: fr_entry == 3, the C stack's shim frame */
	__u32 co_stamp;		/* PyCodeObject: co_firstlineno, the first of
				   SP_PY_STAMP_LEN bytes read with a frame */
	__u32 pad;
};

/*
 * From co_firstlineno to co_name, a code object holds its first line, its
 * counts of locals, in 3.12 and later co_version (a number no other code
 * object of the process has), its local names, file and name, none of
 * which change: the stamp of a frame is these bytes xor'ed as words, so
 * that a new code object at a freed one's address is told apart (in 3.11,
 * by what it holds there).
 */
#define SP_PY_STAMP_LEN	64

/* The stamp of the SP_PY_STAMP_LEN bytes b read at co_stamp. */
static inline __attribute__((always_inline)) __u64 sp_py_stamp(const __u64 *b)
{
	__u64 x = 0;
	int i;

	for (i = 0; i < SP_PY_STAMP_LEN / 8; i++)
		x ^= b[i];
	return x;
}

#define SP_PY_NONE	0xffffffffu
#define SP_PY_MAXF	64	/* frames walked per sample */
#define SP_PY_MAGIC	0x48435950u	/* "PYCH" */

/* struct sp_py_chain.flags */
#define SP_PY_NOTHREAD	0x1	/* no thread state has the sample's tid */
#define SP_PY_FAULT	0x2	/* a read failed (page not present): cut */
#define SP_PY_TRUNC	0x4	/* more than SP_PY_MAXF frames */

/* frame.code's low bit: the interpreter entered here from C */
#define SP_PY_ENTRY	0x1

struct sp_py_frame {
	__u64 code;		/* code object | SP_PY_ENTRY */
	__u64 instr;		/* instruction pointer */
	__u64 stamp;		/* the words at co_stamp, xor'ed */
};

struct sp_py_chain {
	__u32 magic;		/* SP_PY_MAGIC */
	__u32 tid;
	__u32 pid;
	__u16 n;		/* frames, innermost first */
	__u16 flags;		/* SP_PY_* */
	struct sp_py_frame f[SP_PY_MAXF];
};

#endif
