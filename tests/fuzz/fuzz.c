// SPDX-License-Identifier: MIT
/* fuzz.c: the harnesses' shared helpers (fuzz.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/io.h"
#include "fuzz.h"

int fz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t done = 0;
	ssize_t n;

	if (fd < 0)
		abort();
	while (done < size) {
		n = write(fd, data + done, size - done);
		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	return fd;
}

FILE *fz_memfile(const uint8_t *data, size_t size)
{
	FILE *fp = fdopen(fz_memfd(data, size), "r");

	if (!fp)
		abort();
	return fp;
}

char *fz_strdup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

struct sp_out *fz_out(void)
{
	struct sp_out *out = sp_out_open("/dev/null", 0);

	if (!out)
		abort();
	return out;
}
