/* SPDX-License-Identifier: MIT */
/*
 * raw.h: the raw stream, from sp-record to sp-unwind.
 *
 * It carries what the kernel gave us, re-framed: each sample keeps its user
 * registers and only the valid bytes of its user stack copy (dyn_size), so a
 * 60 KiB request costs what the thread really had on its stack.  Everything
 * sp-unwind needs is in the stream (mappings with file offsets, the [vdso]
 * image), so it can unwind offline after the target has gone.  The stream is:
 *
 *	raw-stream = sp_raw_header *record sp_raw_summary
 *
 * with the records of records.h plus SP_REC_SAMPLE as struct sp_raw_sample,
 * and SP_REC_TAIL (tail.h): the rest of a deep stack, read from the live
 * process, before the sample whose copy it continues.
 */
#ifndef SP_RAW_H
#define SP_RAW_H

#include <stddef.h>

#include "records.h"

#define SP_RAW_VERSION 1

struct sp_raw_header {
	struct sp_stream_header h;
	struct sp_event_info ev;
	uint64_t sample_type;	/* PERF_SAMPLE_* as opened */
	uint64_t regs_mask;	/* sample_regs_user: PERF_REG_X86_* bits */
	uint32_t stack_size;	/* requested user stack copy, bytes */
	uint32_t pad;
	/*
	 * CLOCK_REALTIME ns at ev.start_time, 0 unknown.  Headers written
	 * before it end at SP_RAW_HEADER_MIN; readers take those as 0.
	 */
	uint64_t start_realtime;
};

#define SP_RAW_HEADER_MIN offsetof(struct sp_raw_header, start_realtime)

struct sp_raw_sample {
	struct sp_rec_hdr hdr;
	uint64_t time;
	uint32_t pid, tid;
	uint32_t cpu;
	uint16_t misc;		/* perf_event_header.misc: PERF_RECORD_MISC_* */
	uint16_t abi;		/* PERF_SAMPLE_REGS_ABI_*: 0 means no registers */
	uint64_t period;
	uint64_t ip;
	uint16_t nr_regs;	/* 0, or popcount(regs_mask) */
	uint16_t nr_kernel;	/* kernel callchain entries */
	uint32_t stack_len;	/* valid bytes of the stack copy */
	/*
	 * uint64_t regs[nr_regs];	ascending bit order of regs_mask
	 * uint64_t kernel_ips[nr_kernel];	leaf first, no context markers
	 * uint8_t stack[stack_len];	from the user SP upward, zero-padded to 8
	 */
};

struct sp_raw_summary {
	struct sp_rec_hdr hdr;
	uint64_t samples;	/* SAMPLE records written */
	uint64_t lost;		/* events the kernel reported lost */
	uint64_t lost_records;	/* LOST records */
	uint64_t throttles;
	uint64_t threads;	/* distinct threads seen */
	uint64_t processes;	/* distinct processes seen */
	uint64_t start_time, end_time;	/* ns, event clock */
	uint64_t duration_ns;
};

_Static_assert(sizeof(struct sp_raw_header) == 120, "raw header layout");
_Static_assert(sizeof(struct sp_raw_sample) == 56, "raw sample layout");
_Static_assert(sizeof(struct sp_raw_summary) == 80, "raw summary layout");

/* A raw sample with its variable parts located inside the record. */
struct sp_raw_sample_view {
	const struct sp_raw_sample *s;
	const uint64_t *regs;
	const uint64_t *kernel_ips;
	const uint8_t *stack;
	/*
	 * The thread's stack right after the copy (at SP + stack_len), from
	 * the TAIL record of the sample (tail.h); NULL when there is none.
	 * sp_raw_sample_parse() sets NULL; the reader of the TAIL sets it.
	 */
	const uint8_t *tail;
	uint64_t tail_len;
};

/*
 * Check a SAMPLE record against the header's register mask and its own size
 * and locate its parts.  Returns NULL when sound, else a static description.
 */
const char *sp_raw_sample_parse(const struct sp_raw_header *h,
				const struct sp_rec_hdr *rec,
				struct sp_raw_sample_view *out);

/* perf's x86_64 number of the stack pointer register (PERF_REG_X86_SP). */
#define SP_RAW_REG_SP 7

/*
 * Where register reg (a perf register number) is in the regs of a sample
 * recorded with regs_mask, or -1 when the mask lacks it.
 */
int sp_raw_reg_index(uint64_t regs_mask, unsigned reg);

/* Check a raw stream header after its magic and version were accepted. */
const char *sp_raw_header_check(const struct sp_raw_header *h);

#endif
