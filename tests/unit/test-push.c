/* SPDX-License-Identifier: MIT */
/*
 * test-push: the names of windows sp-push takes from its spool, in order,
 * and the file that appears whole and never over another (sp_out_commit).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/io.h"
#include "push/push.h"
#include "unit.h"

static char dir[] = "/tmp/test-push.XXXXXX";

static void test_names(void)
{
	struct sp_push_window w;

	CHECK(sp_push_parse_name("20261205T021000.000Z_20261205T021010.000Z_99hz.pb.gz", &w) == 0);
	/* 2026-12-05 02:10:00 UTC */
	CHECK(w.from_ms == 1796436600000ull);
	CHECK(w.until_ms == 1796436610000ull);
	CHECK(w.hz == 99);
	CHECK(sp_push_parse_name("20261205T021003.217Z_20261205T021010.000Z.pb.gz", &w) == 0);
	CHECK(w.from_ms == 1796436603217ull && w.hz == 0);
	/* a second file of one window */
	CHECK(sp_push_parse_name("20261205T021000.000Z_20261205T021010.000Z_99hz.1.pb.gz", &w) == 0);
	CHECK(sp_push_parse_name("20261205T021000.000Z_20261205T021010.000Z_99hz.12.pb.gz", &w) == 0);
	/* what is not a window */
	CHECK(sp_push_parse_name(".20261205T021000.000Z_20261205T021010.000Z.pb.gz.tmp.42", &w) == -EINVAL);
	CHECK(sp_push_parse_name("20261205T021000.000Z_20261205T021010.000Z.pb.gz.refused", &w) == -EINVAL);
	CHECK(sp_push_parse_name("20261205T021000.000Z_20261205T021010.000Z.folded", &w) == -EINVAL);
	CHECK(sp_push_parse_name("20261205T021010.000Z_20261205T021000.000Z.pb.gz", &w) == -EINVAL);
	CHECK(sp_push_parse_name("20261305T021000.000Z_20261205T021010.000Z.pb.gz", &w) == -EINVAL);
	CHECK(sp_push_parse_name("20261205T021000.000Z_20261205T021010.000Z_0hz.pb.gz", &w) == -EINVAL);
	CHECK(sp_push_parse_name("20261205T021000.000Z_20261205T021010.000Z_99.pb.gz", &w) == -EINVAL);
	CHECK(sp_push_parse_name("20261205T021000.000Z_20261205T021010.000Z.0.pb.gz", &w) == -EINVAL);
	CHECK(sp_push_parse_name("", &w) == -EINVAL);
}

static void place(const char *stem, const char *text, const char *want)
{
	struct sp_out *out = sp_out_open_tmp(dir, stem);
	char got[128];

	CHECK(out != NULL);
	if (!out)
		return;
	CHECK(sp_out_write(out, text, strlen(text)) == 0);
	CHECK(sp_out_commit(out, dir, stem, ".pb.gz", got, sizeof(got)) == 0);
	CHECK_STR(got, want);
}

static void test_commit_and_list(void)
{
	struct sp_push_window *w;
	struct sp_out *out;
	char path[256];
	size_t n;

	place("20261205T021010.000Z_20261205T021020.000Z", "b",
	      "20261205T021010.000Z_20261205T021020.000Z.pb.gz");
	place("20261205T021000.000Z_20261205T021010.000Z", "a",
	      "20261205T021000.000Z_20261205T021010.000Z.pb.gz");
	/* the same name again: never over the first */
	place("20261205T021000.000Z_20261205T021010.000Z", "a2",
	      "20261205T021000.000Z_20261205T021010.000Z.1.pb.gz");
	/* dropped before its commit: nothing appears */
	out = sp_out_open_tmp(dir, "20261205T021020.000Z_20261205T021030.000Z");
	CHECK(out && sp_out_write(out, "c", 1) == 0);
	sp_out_close(out);
	CHECK(sp_push_list(dir, &w, &n) == 0);
	CHECK(n == 3);
	if (n == 3) {
		CHECK_STR(w[0].name, "20261205T021000.000Z_20261205T021010.000Z.1.pb.gz");
		CHECK_STR(w[1].name, "20261205T021000.000Z_20261205T021010.000Z.pb.gz");
		CHECK_STR(w[2].name, "20261205T021010.000Z_20261205T021020.000Z.pb.gz");
		CHECK(w[1].bytes == 1 && w[0].bytes == 2);
		for (size_t i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, w[i].name);
			unlink(path);
		}
	}
	free(w);
	CHECK(sp_push_list("/nonexistent", &w, &n) == -ENOENT);
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	test_names();
	test_commit_and_list();
	CHECK(rmdir(dir) == 0);
	return unit_done("test-push");
}
