/* SPDX-License-Identifier: MIT */
/* test-jitdump.c: jitdump parsing: loads, lines, moves, unwind info, damage. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/jitdump.h"
#include "unit.h"

static uint8_t buf[4096];
static size_t len;

static void put(const void *p, size_t n)
{
	memcpy(buf + len, p, n);
	len += n;
}

static void put32(uint32_t v) { put(&v, 4); }
static void put64(uint64_t v) { put(&v, 8); }

static void header(void)
{
	len = 0;
	put32(SP_JITDUMP_MAGIC);
	put32(1);
	put32(40);
	put32(62);
	put32(0);
	put32(4242);
	put64(1);
	put64(0);
}

static void rec(uint32_t id, uint32_t size)
{
	put32(id);
	put32(size);
	put64(2);
}

static void load(const char *name, uint64_t addr, uint64_t size, uint64_t index)
{
	rec(SP_JIT_CODE_LOAD, (uint32_t)(16 + 40 + strlen(name) + 1 + size));
	put32(4242);
	put32(4243);
	put64(addr);
	put64(addr);
	put64(size);
	put64(index);
	put(name, strlen(name) + 1);
	memset(buf + len, 0x90, size);
	len += size;
}

int main(void)
{
	const struct sp_jit_code *c;
	const struct sp_jit_line *l;
	struct sp_jitdump *j;
	int err;

	CHECK(sp_jitdump_is_path("/tmp/jit-123.dump"));
	CHECK(sp_jitdump_is_path("jit-1.dump"));
	CHECK(!sp_jitdump_is_path("/tmp/jit-.dump"));
	CHECK(!sp_jitdump_is_path("/tmp/jit-12x.dump"));
	CHECK(!sp_jitdump_is_path("/jit-1.dump/lib.so"));

	header();
	/* DEBUG_INFO for 0x1000, two entries, the second "same file" */
	rec(SP_JIT_CODE_DEBUG_INFO, 16 + 16 + (16 + 5) + (16 + 2));
	put64(0x1000);
	put64(2);
	put64(0x1000);
	put32(10);
	put32(0);
	put("a.js", 5);
	put64(0x1008);
	put32(11);
	put32(0);
	put("\xff", 2);
	load("hot", 0x1000, 16, 1);
	/* UNWINDING_INFO for the next load: 8 bytes of data */
	rec(SP_JIT_CODE_UNWINDING_INFO, 16 + 24 + 8);
	put64(8);
	put64(4);
	put64(8);
	put64(0x1122334455667788ull);
	load("outer", 0x2000, 8, 2);
	/* MOVE outer to 0x3000 */
	rec(SP_JIT_CODE_MOVE, 16 + 48);
	put32(4242);
	put32(4243);
	put64(0x2000);
	put64(0x2000);
	put64(0x3000);
	put64(8);
	put64(2);
	/* a later load over hot's address wins */
	load("hot2", 0x1000, 4, 3);
	/* small code inside a big region: the region holds what is past it */
	load("region", 0x5000, 0x200, 4);
	load("small", 0x5100, 0x10, 5);

	j = sp_jitdump_parse(buf, len, &err);
	CHECK(j != NULL && err == 0);
	if (!j)
		return unit_done("test-jitdump");
	CHECK(sp_jitdump_pid(j) == 4242);
	CHECK(sp_jitdump_count(j) == 6);
	CHECK(sp_jitdump_parsed(j) == len);
	c = sp_jitdump_find(j, 0x1002);
	CHECK(c && !strcmp(c->name, "hot2"));
	c = sp_jitdump_find(j, 0x100a);
	CHECK(c && !strcmp(c->name, "hot"));
	l = c ? sp_jit_code_line(c, 0x100a) : NULL;
	CHECK(l && l->line == 11 && !strcmp(l->file, "a.js"));
	l = c ? sp_jit_code_line(c, 0x1004) : NULL;
	CHECK(l && l->line == 10);
	c = sp_jitdump_find(j, 0x2004);
	CHECK(c && !strcmp(c->name, "outer") && c->unwind && c->unwind_size == 8 &&
	      c->eh_frame_hdr_size == 4);
	c = sp_jitdump_find(j, 0x3004);
	CHECK(c && !strcmp(c->name, "outer"));
	CHECK(sp_jitdump_find(j, 0x4000) == NULL);
	CHECK(sp_jitdump_find(j, 0x1010) == NULL);
	c = sp_jitdump_find(j, 0x5105);
	CHECK(c && !strcmp(c->name, "small"));
	c = sp_jitdump_find(j, 0x51f0);
	CHECK(c && !strcmp(c->name, "region"));
	CHECK(sp_jitdump_find(j, 0x5200) == NULL);
	sp_jitdump_free(j);

	/* cut anywhere: never a crash, what fits is kept */
	for (size_t cut = 0; cut < len; cut++) {
		j = sp_jitdump_parse(buf, cut, &err);
		CHECK(cut < 40 ? j == NULL : j != NULL);
		if (j)
			CHECK(sp_jitdump_parsed(j) <= cut);
		sp_jitdump_free(j);
	}
	/* a lying record size ends the parse */
	header();
	rec(SP_JIT_CODE_LOAD, 0xfffffff0u);
	j = sp_jitdump_parse(buf, len, &err);
	CHECK(j && sp_jitdump_count(j) == 0);
	sp_jitdump_free(j);
	/* bad magic, other byte order */
	header();
	buf[0] ^= 1;
	CHECK(sp_jitdump_parse(buf, len, &err) == NULL && err == -EINVAL);
	header();
	buf[0] = 0x4A; buf[1] = 0x69; buf[2] = 0x54; buf[3] = 0x44;
	CHECK(sp_jitdump_parse(buf, len, &err) == NULL && err == -EPROTONOSUPPORT);
	return unit_done("test-jitdump");
}
