// SPDX-License-Identifier: MIT
/*
 * replay.c: a harness as a plain program.  Each argument is an input file,
 * or a directory whose files are inputs; each is given to the harness once.
 * Under ASan/UBSan (make check) an input that once crashed a reader fails
 * the run again if the bug comes back.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned long replayed;

static int replay_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t size = 0, cap = 0, n;

	if (!fp) {
		fprintf(stderr, "replay: cannot open '%s': %s\n", path,
			strerror(errno));
		return -1;
	}
	for (;;) {
		if (size == cap) {
			cap = cap ? 2 * cap : 65536;
			data = realloc(data, cap);
			if (!data)
				abort();
		}
		n = fread(data + size, 1, cap - size, fp);
		if (!n)
			break;
		size += n;
	}
	if (ferror(fp)) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		fclose(fp);
		free(data);
		return -1;
	}
	fclose(fp);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	replayed++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL, path[4096];
	size_t n = 0, i;
	int r = 0;

	if (!d) {
		fprintf(stderr, "replay: cannot open '%s': %s\n", dir,
			strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (!names || !(names[n] = strdup(de->d_name)))
			abort();
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), by_name);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (replay_file(path))
			r = -1;
		free(names[i]);
	}
	free(names);
	return r;
}

int main(int argc, char **argv)
{
	struct stat st;
	int i, r = 0;

	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: '%s': %s\n", argv[i],
				strerror(errno));
			r = 1;
		} else if (S_ISDIR(st.st_mode) ? replay_dir(argv[i]) :
			   replay_file(argv[i])) {
			r = 1;
		}
	}
	printf("%s: %lu inputs\n", argv[0], replayed);
	return r;
}
