/* SPDX-License-Identifier: MIT */
/*
 * offcpu.c: the stacks off-CPU waits count on: the sampled stack of the
 * wait under a leaf that names why the thread waited.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "model.h"

/*
 * Kernel functions that only carry a thread off its CPU: the reason for a
 * wait is the first kernel frame, from the leaf, that is none of these.
 */
static int scheduler_frame(const char *name)
{
	static const char *const prefixes[] = {
		"schedule", "__schedule", "preempt_schedule", "io_schedule",
		"finish_task_switch",
		"__perf_event_task_sched", "perf_event_task_sched", "__traceiter",
	};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/*
 * Where the kernel switches a thread that still wants to run: on its way
 * back to user space after an interrupt or a system call, or at a
 * preemption point in the kernel.
 */
static int preemption_frame(const char *name)
{
	static const char *const names[] = {
		"irqentry_exit_to_user_mode", "exit_to_user_mode_loop",
		"irqentry_exit", "preempt_schedule_irq", "raw_irqentry_exit_cond_resched",
		"__cond_resched", "_cond_resched",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

/*
 * The leaf frame of an off-CPU stack: "[off-cpu] futex_do_wait", from the
 * kernel frames of base, "[off-cpu] preempted" for a thread switched out
 * while it could still run, "[off-cpu] (not sampled)" when base is NULL
 * (the wait's stack was not sampled).
 */
static int64_t reason_frame(struct sp_fold *f, const struct sp_fold_stack *base)
{
	const char *why = base ? "" : " (not sampled)";
	int64_t name;
	uint32_t i;
	char buf[320];
	int is_new;

	for (i = 0; base && i < base->n; i++) {
		const struct sp_fold_frame *fr = &f->frames[f->frame_ids[base->off + i]];
		const char *s = f->strs.strs[fr->name];

		if (fr->kind != SP_FK_KERNEL || !*s || scheduler_frame(s))
			continue;
		if (preemption_frame(s)) {
			snprintf(buf, sizeof(buf), "[off-cpu] preempted");
			break;
		}
		snprintf(buf, sizeof(buf), "[off-cpu] %.300s",
			 f->strs.strs[fr->folded]);
		/* the folded name's "_[k]" goes: this frame is no code */
		if (strlen(buf) > 4 && !strcmp(buf + strlen(buf) - 4, "_[k]"))
			buf[strlen(buf) - 4] = 0;
		break;
	}
	if (!base || i == base->n)
		snprintf(buf, sizeof(buf), "[off-cpu]%s", why);
	name = sp_fold_intern(f, buf);
	if (name < 0)
		return -ENOMEM;
	return sp_fold_frame_add(f, &(struct sp_fold_frame){ .pid = 0,
		.name = (uint32_t)name, .full = (uint32_t)name,
		.file = SP_FOLD_NONE, .module = SP_FOLD_NONE,
		.symbol = SP_FOLD_NONE, .map = SP_FOLD_NONE,
		.folded = (uint32_t)name, .kind = SP_FK_SYNTHETIC,
		.origin = SP_FO_NONE }, &is_new);
}

/*
 * The stack a wait of (pid, id) counts on: that stack and a leaf that says
 * why it waited, made on first use and again when the stack was
 * redefined.  Its index, or -errno.
 */
int64_t sp_fold_off_stack(struct sp_fold *f, uint32_t pid, uint32_t id)
{
	struct sp_u64slot *st = NULL, *slot;
	const struct sp_fold_stack *base = NULL;
	uint32_t b = SP_FOLD_NONE, off, k;
	int64_t leaf, folded;
	int is_new;
	char *s;

	if (id) {
		st = sp_u64map_find(&f->stack_ids, sp_fold_key2(pid, id));
		if (!st)
			return sp_fold_fail(f, "off-CPU wait of undefined stack %" PRIu32 "/%" PRIu32,
				    pid, id);
		b = (uint32_t)st->val;
	}
	slot = sp_u64map_find(&f->offstacks, sp_fold_key2(pid, id));
	if (slot && f->stacks[slot->val].base == b)
		return (int64_t)slot->val;
	if (id)
		base = &f->stacks[b];
	leaf = reason_frame(f, base);
	if (leaf < 0)
		return leaf;
	if (SP_GROW(f->frame_ids, f->frame_idcap,
		    f->nframe_ids + 1 + (base ? base->n : 0)) ||
	    SP_GROW(f->stacks, f->stackcap, f->nstacks + 1))
		return -ENOMEM;
	base = id ? &f->stacks[b] : NULL;	/* stacks may have moved */
	off = (uint32_t)f->nframe_ids;
	f->frame_ids[f->nframe_ids++] = (uint32_t)leaf;
	for (k = 0; base && k < base->n; k++)
		f->frame_ids[f->nframe_ids++] = f->frame_ids[base->off + k];
	if (base && *f->strs.strs[base->folded]) {
		const char *a = f->strs.strs[base->folded];
		const char *z = f->strs.strs[f->frames[leaf].folded];

		s = malloc(strlen(a) + strlen(z) + 2);
		if (s)
			sprintf(s, "%s;%s", a, z);
		folded = sp_fold_intern_free(f, s);
	} else {
		folded = sp_fold_intern(f, f->strs.strs[f->frames[leaf].folded]);
	}
	if (folded < 0)
		return -ENOMEM;
	slot = sp_u64map_get(&f->offstacks, sp_fold_key2(pid, id), &is_new);
	if (!slot)
		return -ENOMEM;
	slot->val = f->nstacks;
	if (is_new && sp_fold_own(f, pid, id, SP_FOLD_OWN_OFFSTACK))
		return -ENOMEM;
	f->stacks[f->nstacks++] = (struct sp_fold_stack){ .pid = pid,
		.folded = (uint32_t)folded, .off = off,
		.n = f->nframe_ids - off,
		.end = base ? base->end : SP_END_MAX, .offcpu = 1, .base = b };
	return (int64_t)slot->val;
}
