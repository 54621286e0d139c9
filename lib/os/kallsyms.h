/* SPDX-License-Identifier: MIT */
/*
 * kallsyms.h: the kernel's text symbols and which of them holds a kernel
 * address, for the recorder (which captures the symbols its samples hit as
 * KSYM records) and the symbolizer (which names kernel frames from those
 * records, or from a kallsyms file) alike: one loader, one lookup, so the
 * two never disagree.
 *
 * /proc/kallsyms gives addresses and names, no sizes: a symbol runs up to
 * the next address listed, the last one without end.  The padding symbols
 * in front of functions (__pfx_, __cfi_: symrule.h) bound their neighbours
 * that way and are then dropped, never named.  Of several names at one
 * address the global one wins ('T'), then a weak one ('W', 'w'), then a
 * local one ('t'); among equals the bytewise smallest name.  Lookups follow
 * the rule of base/symrule.h: a return address is named by the symbol
 * holding address - 1, or by the one holding the address when none does.
 */
#ifndef SP_KALLSYMS_H
#define SP_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct sp_ksym {
	uint64_t start;
	uint64_t size;		/* 0: no end known (the last symbol) */
	const char *name;	/* "write_null" */
	const char *module;	/* "[nvme]", NULL for the kernel image */
};

struct sp_ksyms;

/* An empty table; NULL when out of memory. */
struct sp_ksyms *sp_ksyms_new(void);

/* NULL is a no-op. */
void sp_ksyms_free(struct sp_ksyms *k);

/*
 * Add the text symbols of path, in /proc/kallsyms' format.  A file whose
 * addresses all read 0 (hidden by kptr_restrict) adds none.  Returns 0,
 * -errno of opening it, or -ENOMEM.
 */
int sp_ksyms_load(struct sp_ksyms *k, const char *path);

/*
 * Add one symbol as a KSYM record carries it: start, size (0: unknown) and
 * "name" or "name [module]".  Returns 0 or -ENOMEM.
 */
int sp_ksyms_add_record(struct sp_ksyms *k, uint64_t start, uint64_t size,
			const char *name);

/* Symbols in the table (after ranking, once a lookup has sorted it). */
size_t sp_ksyms_count(struct sp_ksyms *k);

/*
 * The symbol naming a kernel frame at addr: precise for an interrupted IP
 * (the first entry of a callchain), else a return address.  NULL if none.
 * The result stays valid until the table changes.
 */
const struct sp_ksym *sp_ksyms_lookup(struct sp_ksyms *k, uint64_t addr,
				      int precise);

/* The index of s in [0, sp_ksyms_count()), for per-symbol bookkeeping. */
size_t sp_ksyms_index(const struct sp_ksyms *k, const struct sp_ksym *s);

/*
 * The name of s as a KSYM record carries it ("name" or "name [module]")
 * into buf of n bytes, cut if longer.  Returns its length.
 */
size_t sp_ksym_record_name(const struct sp_ksym *s, char *buf, size_t n);

#endif
