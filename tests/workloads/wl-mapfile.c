/* SPDX-License-Identifier: MIT */
/*
 * wl-mapfile: a process that maps a program to read it, not to run it, as
 * a symbolizer or a debugger maps the files it reads; then it works.
 *
 *	main -> run -> leaf_read	all the work, reading the mapping
 *
 * usage: wl-mapfile FILE [SECONDS]	(default 2); prints nothing
 * Ready (wl_ready) once FILE is mapped, without PROT_EXEC.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wl.h"

NOINLINE void leaf_read(const volatile uint8_t *p, size_t len)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < len; i += 4096)
		sum += p[i];
	wl_burn(100000, sum);
}

NOINLINE void run(const uint8_t *p, size_t len, double seconds)
{
	double end = wl_now() + seconds;

	while (wl_now() < end)
		leaf_read(p, len);
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_seconds(argc, argv, 2, 2);
	struct stat st;
	void *p;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: wl-mapfile FILE [SECONDS]\n");
		return 64;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || st.st_size == 0) {
		perror(argv[1]);
		return 66;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 71;
	}
	close(fd);
	wl_ready();
	wl_wait_go();
	run(p, (size_t)st.st_size, seconds);
	return 0;
}
