/* SPDX-License-Identifier: MIT */
/* plt.c: PLT stubs named by the relocations of the slots they jump through. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/search.h"
#include "format/frame.h"
#include "elfcache.h"
#include "plt.h"

/* What a GOT slot's relocation calls its target; name NULL: nothing. */
struct target {
	uint64_t slot;		/* r_offset */
	const char *name;	/* not owned: an ELF string table or own's */
	size_t len;		/* of the name without its symbol version */
	uint8_t origin;
};

struct reader {
	Elf *elf;
	struct sp_elf *e;
	size_t shstrndx;
	const struct sp_symtab *own;
	unsigned own_origin;
	struct target *byslot;	/* the slot relocations read, by slot */
	size_t nslot, capslot;
	struct target *jmprel;	/* .rela.plt in its order, for push N */
	size_t njmprel, capjmprel;
	uint64_t *want;		/* slots .rela.plt leaves unnamed, sorted */
	size_t nwant;
};

/* Entry sizes of stubs: a 6-byte jmp at least, 8 or 16 as ld makes them. */
#define STUB_MIN	6
#define STUB_MAX	64

static const char plt_unknown[] = "[plt]";

static int slot_cmp(const void *a, const void *b)
{
	const struct target *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static int u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

static const char *section_name(struct reader *r, const GElf_Shdr *sh)
{
	const char *n = elf_strptr(r->elf, r->shstrndx, sh->sh_name);

	return n ? n : "";
}

/* name as far as its symbol version ("memcpy@@GLIBC_2.14"). */
static size_t unversioned(const char *name)
{
	const char *at = strchr(name, '@');

	return at && at != name ? (size_t)(at - name) : strlen(name);
}

/* The symbol table a relocation section links, for naming its entries. */
struct symsec {
	Elf_Data *d;
	size_t strndx;
	uint8_t origin;
};

static int symsec_of(struct reader *r, const GElf_Shdr *rel, struct symsec *ss)
{
	Elf_Scn *scn = elf_getscn(r->elf, rel->sh_link);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) ||
	    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
		return -1;
	ss->d = elf_getdata(scn, NULL);
	ss->strndx = sh.sh_link;
	ss->origin = sh.sh_type == SHT_DYNSYM ? SP_FO_DYNSYM : SP_FO_SYMTAB;
	return ss->d ? 0 : -1;
}

/* What relocation rel of a slot says its target is. */
static void name_target(struct reader *r, const struct symsec *ss,
			const GElf_Rela *rel, struct target *t)
{
	size_t idx = GELF_R_SYM(rel->r_info);
	GElf_Sym sym;
	const char *name;

	memset(t, 0, sizeof(*t));
	t->slot = rel->r_offset;
	if (GELF_R_TYPE(rel->r_info) == R_X86_64_IRELATIVE) {
		/* the addend is the resolver, which the IFUNC symbol names */
		const struct sp_sym *s = sp_symtab_at(r->own,
						      (uint64_t)rel->r_addend);

		if (s && !(s->flags & SP_SYM_SYNTH)) {
			t->name = s->name;
			t->len = unversioned(s->name);
			t->origin = (uint8_t)r->own_origin;
		}
		return;
	}
	if (!ss || !idx || idx > (size_t)INT32_MAX ||
	    !gelf_getsym(ss->d, (int)idx, &sym))
		return;
	name = elf_strptr(r->elf, ss->strndx, sym.st_name);
	if (!name || !*name)
		return;
	t->name = name;
	t->len = unversioned(name);
	t->origin = ss->origin;
}

static int in_want(const struct reader *r, uint64_t slot)
{
	size_t lo = 0, hi = r->nwant;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->want[mid] == slot)
			return 1;
		if (r->want[mid] < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/*
 * Note the slot relocations of one SHT_RELA section: .rela.plt whole (and
 * in its order), any other only for the slots in want.
 */
static int read_relocs(struct reader *r, Elf_Scn *scn, const GElf_Shdr *sh,
		       int is_jmprel)
{
	struct symsec ss, *ssp = symsec_of(r, sh, &ss) ? NULL : &ss;
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n;

	if (!d || sh->sh_entsize != sizeof(Elf64_Rela))
		return 0;
	n = d->d_size / sizeof(Elf64_Rela);
	for (i = 0; i < n && i <= (size_t)INT32_MAX; i++) {
		unsigned type;
		struct target t;
		GElf_Rela rel;

		if (!gelf_getrela(d, (int)i, &rel))
			break;
		type = (unsigned)GELF_R_TYPE(rel.r_info);
		memset(&t, 0, sizeof(t));
		if ((type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT ||
		     type == R_X86_64_IRELATIVE) &&
		    (is_jmprel || in_want(r, rel.r_offset)))
			name_target(r, ssp, &rel, &t);
		if (is_jmprel) {
			if (SP_GROW(r->jmprel, r->capjmprel, r->njmprel + 1))
				return -ENOMEM;
			r->jmprel[r->njmprel++] = t;
		}
		if (!t.name)
			continue;
		if (SP_GROW(r->byslot, r->capslot, r->nslot + 1))
			return -ENOMEM;
		r->byslot[r->nslot++] = t;
	}
	return 0;
}

/* Read .rela.plt (jmprel) or the other dynamic relocation sections. */
static int scan_relocs(struct reader *r, int jmprel)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(r->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !(sh.sh_flags & SHF_ALLOC) ||
		    !strcmp(section_name(r, &sh), ".rela.plt") != !!jmprel)
			continue;
		if (read_relocs(r, scn, &sh, jmprel))
			return -ENOMEM;
	}
	if (r->nslot)
		qsort(r->byslot, r->nslot, sizeof(*r->byslot), slot_cmp);
	return 0;
}

static const struct target *by_slot(const struct reader *r, uint64_t addr)
{
	size_t k = SP_COUNT_LE(r->byslot, r->nslot, slot, addr);

	return k && r->byslot[k - 1].slot == addr ? &r->byslot[k - 1] : NULL;
}

static const struct target *by_index(const struct reader *r, uint32_t n)
{
	return n < r->njmprel && r->jmprel[n].name ? &r->jmprel[n] : NULL;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/*
 * The target of the stub of len bytes p at vaddr: its indirect jump's
 * slot, else the .rela.plt index it pushes.  NULL: PLT0 or not a stub.
 * *miss gets the slot of an indirect jump no relocation read so far names,
 * else 0.
 */
static const struct target *decode(const struct reader *r, const uint8_t *p,
				   size_t len, uint64_t vaddr, uint64_t *miss)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	const struct target *t;
	size_t i = 0;

	*miss = 0;
	if (len >= sizeof(endbr64) && !memcmp(p, endbr64, sizeof(endbr64)))
		i = sizeof(endbr64);
	if (i < len && p[i] == 0xf2)	/* bnd */
		i++;
	if (i + 6 <= len && p[i] == 0xff && p[i + 1] == 0x25) {
		int32_t disp = (int32_t)le32(p + i + 2);
		/* rip-relative: from the end of the 6-byte jmp */
		uint64_t slot = vaddr + i + 6 + (uint64_t)(int64_t)disp;

		t = by_slot(r, slot);
		if (t)
			return t;
		*miss = slot;
		i += 6;		/* a lazy entry pushes its index next */
	}
	if (i + 5 <= len && p[i] == 0x68)
		return by_index(r, le32(p + i + 1));
	return NULL;
}

static int is_stub_section(const char *name)
{
	return !strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
	       !strcmp(name, ".plt.got") || !strcmp(name, ".plt.bnd");
}

/* The stubs of each PLT section, unnamed, into p. */
static int find_stubs(struct reader *r, struct sp_plt *p)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	while ((scn = elf_nextscn(r->elf, scn))) {
		GElf_Shdr sh;
		uint64_t ent, k;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) ||
		    !is_stub_section(section_name(r, &sh)))
			continue;
		ent = sh.sh_entsize ? sh.sh_entsize : 16;
		if (ent < STUB_MIN || ent > STUB_MAX)
			continue;
		for (k = 0; k < sh.sh_size / ent; k++) {
			uint64_t a = sh.sh_addr + k * ent;

			if (!sp_elf_at(r->e, a, (size_t)ent))
				break;	/* not in the file (a debug file) */
			if (SP_GROW(p->syms, cap, p->n + 1))
				return -ENOMEM;
			p->syms[p->n++] = (struct sp_sym){ .start = a,
				.size = ent, .rank = 3, .flags = SP_SYM_SYNTH };
		}
	}
	return 0;
}

/*
 * The target of each stub into tv: by .rela.plt, which names most; only
 * for the slots it leaves unnamed (.plt.got's) are the other relocations
 * read, whose RELATIVE entries can be megabytes.
 */
static int target_stubs(struct reader *r, struct sp_plt *p,
			const struct target **tv)
{
	size_t i, cap = 0;
	uint64_t miss;

	if (scan_relocs(r, 1))
		return -ENOMEM;
	for (i = 0; i < p->n; i++) {
		tv[i] = decode(r, sp_elf_at(r->e, p->syms[i].start,
					    (size_t)p->syms[i].size),
			       (size_t)p->syms[i].size, p->syms[i].start, &miss);
		if (!miss)
			continue;
		if (SP_GROW(r->want, cap, r->nwant + 1))
			return -ENOMEM;
		r->want[r->nwant++] = miss;
	}
	if (!r->nwant)
		return 0;
	qsort(r->want, r->nwant, sizeof(*r->want), u64_cmp);
	if (scan_relocs(r, 0))
		return -ENOMEM;
	for (i = 0; i < p->n; i++)
		tv[i] = decode(r, sp_elf_at(r->e, p->syms[i].start,
					    (size_t)p->syms[i].size),
			       (size_t)p->syms[i].size, p->syms[i].start, &miss);
	return 0;
}

/* Give each stub its name: "TARGET@plt" in one block, or "[plt]". */
static int name_stubs(struct sp_plt *p, const struct target **tv)
{
	size_t i, total = 0, at = 0;

	for (i = 0; i < p->n; i++)
		if (tv[i])
			total += tv[i]->len + sizeof("@plt");
	if (total && !(p->names = malloc(total)))
		return -ENOMEM;
	for (i = 0; i < p->n; i++) {
		struct sp_sym *s = &p->syms[i];

		if (!tv[i]) {
			s->name = plt_unknown;
			s->origin = SP_FO_NONE;
			continue;
		}
		s->name = p->names + at;
		memcpy(p->names + at, tv[i]->name, tv[i]->len);
		memcpy(p->names + at + tv[i]->len, "@plt", sizeof("@plt"));
		at += tv[i]->len + sizeof("@plt");
		s->origin = tv[i]->origin;
		s->flags |= SP_SYM_PLT;
	}
	return 0;
}

int sp_plt_read(struct sp_plt *p, struct sp_elf *e, const struct sp_symtab *own,
		unsigned own_origin)
{
	struct reader r = { .elf = sp_elf_handle(e), .e = e, .own = own,
			    .own_origin = own_origin };
	const struct target **tv = NULL;
	GElf_Ehdr eh;
	int err;

	if (!gelf_getehdr(r.elf, &eh) || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    elf_getshdrstrndx(r.elf, &r.shstrndx))
		return 0;
	err = find_stubs(&r, p);
	if (!err && p->n && !(tv = calloc(p->n, sizeof(*tv))))
		err = -ENOMEM;
	if (!err && p->n)
		err = target_stubs(&r, p, tv);
	if (!err)
		err = name_stubs(p, tv);
	free(tv);
	free(r.byslot);
	free(r.jmprel);
	free(r.want);
	return err;
}

void sp_plt_release(struct sp_plt *p)
{
	free(p->syms);
	free(p->names);
	memset(p, 0, sizeof(*p));
}
