/* SPDX-License-Identifier: MIT */
/*
 * test-debuginfod: off unless DEBUGINFOD_URLS names a server; each
 * (kind, build-id) asked of the servers once, a miss remembered as well as
 * a hit.  The server here is a port nobody listens on: every question
 * misses at once.  (tests/bats/buildid.bats fetches from a real one.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/debuginfod.h"
#include "unit.h"

static char dir[] = "/tmp/test-debuginfod.XXXXXX";

static void test_off(void)
{
	const char *why = "unset";

	unsetenv("DEBUGINFOD_URLS");
	CHECK(sp_debuginfod_new(&why) == NULL && why == NULL);
	setenv("DEBUGINFOD_URLS", " \t", 1);
	why = "unset";
	CHECK(sp_debuginfod_new(&why) == NULL && why == NULL);
	setenv("DEBUGINFOD_URLS", "", 1);
	CHECK(sp_debuginfod_new(NULL) == NULL);
}

static void test_asked_once(void)
{
	static const uint8_t a[20] = { 0xab, 0xcd, 1, 2, 3 };
	static const uint8_t b[20] = { 0xab, 0xcd, 1, 2, 4 };
	const struct sp_debuginfod_stats *st;
	struct sp_debuginfod *d;
	const char *why = NULL;
	int i;

	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	setenv("DEBUGINFOD_CACHE_PATH", dir, 1);
	setenv("DEBUGINFOD_TIMEOUT", "5", 1);
	d = sp_debuginfod_new(&why);
	if (!d) {
		fprintf(stderr, "test-debuginfod: no client: %s\n",
			why ? why : "?");
		CHECK(d != NULL);
		return;
	}
	st = sp_debuginfod_stats(d);
	for (i = 0; i < 3; i++)
		CHECK(sp_debuginfod_find(d, SP_DEBUGINFOD_EXECUTABLE, a, 20) == NULL);
	CHECK(st->asked == 1 && st->found == 0);
	/* another kind, another build-id, a shorter one: other questions */
	CHECK(sp_debuginfod_find(d, SP_DEBUGINFOD_DEBUGINFO, a, 20) == NULL);
	CHECK(sp_debuginfod_find(d, SP_DEBUGINFOD_EXECUTABLE, b, 20) == NULL);
	CHECK(sp_debuginfod_find(d, SP_DEBUGINFOD_EXECUTABLE, a, 8) == NULL);
	CHECK(st->asked == 4);
	for (i = 0; i < 3; i++) {
		sp_debuginfod_find(d, SP_DEBUGINFOD_DEBUGINFO, a, 20);
		sp_debuginfod_find(d, SP_DEBUGINFOD_EXECUTABLE, b, 20);
	}
	CHECK(st->asked == 4 && st->found == 0);
	/* nothing to ask with */
	CHECK(sp_debuginfod_find(d, SP_DEBUGINFOD_EXECUTABLE, a, 0) == NULL);
	CHECK(sp_debuginfod_find(d, (enum sp_debuginfod_kind)7, a, 20) == NULL);
	CHECK(st->asked == 4);
	sp_debuginfod_free(d);
	sp_debuginfod_free(NULL);
}

int main(void)
{
	char cmd[64];
	int r;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_off();
	test_asked_once();
	r = unit_done("test-debuginfod");
	/* the client's cache of misses */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		r = 1;
	return r;
}
