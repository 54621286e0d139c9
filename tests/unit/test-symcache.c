/* SPDX-License-Identifier: MIT */
/*
 * test-symcache: the symbol cache file written, found again, refused when
 * it is another build-id's or settings', and every cut and flipped byte of
 * one caught by its checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/symcache.h"
#include "unit.h"

static const uint8_t bid[20] = { 0xab, 0xcd, 1, 2, 3, 4, 5, 6, 7, 8, 9 };

/* Two answers, one of them an inline chain, out of order. */
static const struct sp_frame chain[] = {
	{ .function = "inner", .file = "a.c", .line = 7, .decl_line = 3,
	  .kind = SP_FK_INLINE, .origin = SP_FO_BUILDID },
	{ .function = "outer", .symbol = "_Z5outerv", .file = "a.c",
	  .line = 20, .kind = SP_FK_NATIVE, .origin = SP_FO_SYMTAB },
};
static const struct sp_frame one[] = {
	{ .function = "main", .kind = SP_FK_NATIVE, .origin = SP_FO_DYNSYM,
	  .flags = 1 },
};

static uint8_t *slurp(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	p = malloc((size_t)st.st_size);
	if (p && read(fd, p, (size_t)st.st_size) != st.st_size) {
		free(p);
		p = NULL;
	}
	close(fd);
	*size = (size_t)st.st_size;
	return p;
}

int main(void)
{
	char dir[] = "/tmp/test-symcache.XXXXXX", path[4096];
	struct sp_symcache_answer a[3];
	struct sp_symcache *c;
	struct sp_frame out[SP_SYMCACHE_MAX_CHAIN];
	const char *why = NULL;
	uint64_t off = 0, v;
	uint8_t *img;
	size_t size = 0, i, caught = 0, tries = 0;
	int64_t w;
	int p;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(sp_symcache_path(dir, bid, sizeof(bid), NULL, path, sizeof(path)) == 0);
	CHECK(strstr(path, "/buildid/ab/cd0102") != NULL);
	CHECK(sp_symcache_path(dir, bid, 0, NULL, path, sizeof(path)) == -EINVAL);
	CHECK(sp_symcache_path(dir, bid, sizeof(bid), NULL, path, 10) == -ENAMETOOLONG);
	/* a variant of settings is a file of its own beside it */
	CHECK(sp_symcache_path(dir, bid, sizeof(bid), "nolines-noinline", path,
			       sizeof(path)) == 0);
	CHECK(strstr(path, "/buildid/ab/cd0102") != NULL);
	CHECK(strlen(path) > 25 &&
	      !strcmp(path + strlen(path) - 25, "/symbols-nolines-noinline"));
	CHECK(sp_symcache_path(dir, bid, sizeof(bid), "", path, sizeof(path)) == 0);
	CHECK(strlen(path) > 8 && !strcmp(path + strlen(path) - 8, "/symbols"));
	CHECK(sp_symcache_path(dir, bid, sizeof(bid), "../x", path,
			       sizeof(path)) == -EINVAL);
	CHECK(sp_symcache_path(dir, bid, sizeof(bid), "No", path,
			       sizeof(path)) == -EINVAL);
	CHECK(sp_symcache_path(dir, bid, sizeof(bid), NULL, path, sizeof(path)) == 0);
	CHECK(sp_symcache_open(path, bid, sizeof(bid), 5, &c, &why, &off) ==
	      -ENOENT);

	a[0] = (struct sp_symcache_answer){ 0x2000, 0, chain, 2 };
	a[1] = (struct sp_symcache_answer){ 0x1000, 1, one, 1 };
	a[2] = (struct sp_symcache_answer){ 0x1000, 0, one, 1 };
	w = sp_symcache_write(path, bid, sizeof(bid), 5, a, 3);
	CHECK(w > 64);
	CHECK(sp_symcache_open(path, bid, sizeof(bid), 5, &c, &why, &off) == 0);
	CHECK(c && sp_symcache_count(c) == 3);
	if (c) {
		CHECK(sp_symcache_find(c, 0x2000, 0, out, 64) == 2);
		CHECK_STR(out[0].function, "inner");
		CHECK(out[0].symbol == NULL);
		CHECK_STR(out[0].file, "a.c");
		CHECK(out[0].line == 7 && out[0].decl_line == 3);
		CHECK(out[0].kind == SP_FK_INLINE && out[0].origin == SP_FO_BUILDID);
		CHECK_STR(out[1].function, "outer");
		CHECK_STR(out[1].symbol, "_Z5outerv");
		CHECK(out[1].line == 20);
		/* exact and return addresses are separate answers */
		CHECK(sp_symcache_find(c, 0x2000, 1, out, 64) == 0);
		CHECK(sp_symcache_find(c, 0x1000, 1, out, 64) == 1);
		CHECK_STR(out[0].function, "main");
		CHECK(out[0].file == NULL && out[0].flags == 1);
		CHECK(sp_symcache_find(c, 0x1000, 0, out, 64) == 1);
		CHECK(sp_symcache_find(c, 0xfff, 0, out, 64) == 0);
		CHECK(sp_symcache_find(c, 0x2001, 0, out, 64) == 0);
		CHECK(sp_symcache_find(c, 0x2000, 0, out, 1) == 1);
		CHECK(sp_symcache_entry(c, 0, &v, &p, out, 64) == 1);
		CHECK(v == 0x1000 && p == 0);
		CHECK(sp_symcache_entry(c, 1, &v, &p, out, 64) == 1);
		CHECK(v == 0x1000 && p == 1);
		sp_symcache_free(c);
	}
	/* another key or build-id: not this file's answers */
	CHECK(sp_symcache_open(path, bid, sizeof(bid), 6, &c, &why, &off) ==
	      -ESTALE);
	CHECK(why && strstr(why, "other settings"));
	CHECK(sp_symcache_open(path, bid, 19, 5, &c, &why, &off) == -EILSEQ);
	CHECK(why && strstr(why, "build-id"));

	/* every cut and every flipped byte is caught */
	img = slurp(path, &size);
	CHECK(img != NULL && size == (size_t)w);
	for (i = 0; img && i < size; i++) {
		tries++;
		if (sp_symcache_load(img, i, bid, sizeof(bid), 5, &c, &why,
				     &off) == -EILSEQ && off <= size)
			caught++;
		else
			sp_symcache_free(c);
	}
	for (i = 0; img && i < size * 8; i++) {
		img[i / 8] ^= (uint8_t)(1u << (i % 8));
		tries++;
		if (sp_symcache_load(img, size, bid, sizeof(bid), 5, &c, &why,
				     &off) == -EILSEQ)
			caught++;
		else
			sp_symcache_free(c);
		img[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	CHECK(caught == tries);
	/* unaligned data is read too */
	if (img) {
		uint8_t *u = malloc(size + 1);

		memcpy(u + 1, img, size);
		CHECK(sp_symcache_load(u + 1, size, bid, sizeof(bid), 5, &c,
				       &why, &off) == 0);
		CHECK(c && sp_symcache_find(c, 0x2000, 0, out, 64) == 2);
		sp_symcache_free(c);
		free(u);
	}
	free(img);

	/* answers the format cannot hold, or two for one address */
	a[0] = (struct sp_symcache_answer){ 0x2000, 0, chain, 2 };
	a[1] = (struct sp_symcache_answer){ 0x2000, 0, one, 1 };
	CHECK(sp_symcache_write(path, bid, sizeof(bid), 5, a, 2) == -EINVAL);
	a[1] = (struct sp_symcache_answer){ 0x3000, 0, one, 0 };
	CHECK(sp_symcache_write(path, bid, sizeof(bid), 5, a, 2) == -EINVAL);
	/* the file that was there is untouched */
	CHECK(sp_symcache_open(path, bid, sizeof(bid), 5, &c, &why, &off) == 0);
	CHECK(c && sp_symcache_count(c) == 3);
	sp_symcache_free(c);
	/* an empty cache is a file too */
	CHECK(sp_symcache_write(path, bid, sizeof(bid), 5, a, 0) == 64);
	CHECK(sp_symcache_open(path, bid, sizeof(bid), 5, &c, &why, &off) == 0);
	CHECK(c && sp_symcache_count(c) == 0);
	CHECK(c && sp_symcache_find(c, 0x2000, 0, out, 64) == 0);
	sp_symcache_free(c);

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CHECK(system(path) == 0);
	return unit_done("test-symcache");
}
