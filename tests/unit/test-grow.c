/* SPDX-License-Identifier: MIT */
/*
 * test-grow: arrays grow by doubling with overflow refused; prefaulting
 * makes exactly the whole pages of a range present and changes no byte.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/grow.h"
#include "unit.h"

/* Which of the n pages at p are present (mincore), as a bit mask. */
static unsigned present(void *p, size_t n)
{
	unsigned char v[8];
	unsigned mask = 0;
	size_t i;

	if (n > sizeof(v) || mincore(p, n * (size_t)sysconf(_SC_PAGESIZE), v))
		return ~0u;
	for (i = 0; i < n; i++)
		if (v[i] & 1)
			mask |= 1u << i;
	return mask;
}

static void test_grow(void)
{
	int *v = NULL;
	size_t cap = 0;

	CHECK(SP_GROW(v, cap, 1) == 0 && v && cap == 16);
	v[15] = 7;
	CHECK(SP_GROW(v, cap, 16) == 0 && cap == 16);
	CHECK(SP_GROW(v, cap, 17) == 0 && cap == 32 && v[15] == 7);
	CHECK(SP_GROW(v, cap, 1000) == 0 && cap == 1024 && v[15] == 7);
	/* more elements than a size_t of bytes holds: refused, unchanged */
	CHECK(SP_GROW(v, cap, SIZE_MAX / 2) == -ENOMEM && cap == 1024);
	CHECK(SP_GROW(v, cap, SIZE_MAX) == -ENOMEM && cap == 1024);
	CHECK(v[15] == 7);
	free(v);
}

static void test_prefault(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), i;
	unsigned char *p, *probe;
	int ok, works;

	/* does this kernel populate (5.14 and later)?  Else only no harm */
	probe = mmap(NULL, page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(probe != MAP_FAILED);
	works = madvise(probe, page, MADV_POPULATE_WRITE) == 0;
	munmap(probe, page);
	if (!works)
		fprintf(stderr, "test-grow: MADV_POPULATE_WRITE not supported "
			"by this kernel: checking only that nothing changes\n");

	p = mmap(NULL, 6 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	/* one page per fault: no huge or multi-page folio for this test */
	madvise(p, 6 * page, MADV_NOHUGEPAGE);
	CHECK(present(p, 6) == 0);
	p[100] = 0xa5;
	/* from inside page 0 to inside page 4: pages 1 to 3, whole */
	sp_prefault(p + 1, 4 * page + 10);
	if (works)
		CHECK(present(p, 6) == 0xf);	/* 0 written, 1-3 prefaulted */
	/* nothing at all: less than a page, a page's edge, an empty range */
	sp_prefault(p + 4 * page + 1, page - 2);
	sp_prefault(p + 5 * page, 0);
	sp_prefault(NULL, 0);
	if (works)
		CHECK(present(p, 6) == 0xf);
	/* exactly page 5 */
	sp_prefault(p + 5 * page, page);
	if (works)
		CHECK(present(p, 6) == 0x2f);
	for (i = 0, ok = 1; i < 6 * page; i++)
		ok &= p[i] == (i == 100 ? 0xa5 : 0);
	CHECK(ok);
	munmap(p, 6 * page);

	/* on a buffer of malloc's, written before: the bytes stay */
	p = malloc(3 * page);
	CHECK(p != NULL);
	if (!p)
		return;
	for (i = 0; i < 3 * page; i++)
		p[i] = (unsigned char)i;
	sp_prefault(p, 3 * page);
	for (i = 0, ok = 1; i < 3 * page; i++)
		ok &= p[i] == (unsigned char)i;
	CHECK(ok);
	free(p);
}

int main(void)
{
	test_grow();
	test_prefault();
	return unit_done("test-grow");
}
