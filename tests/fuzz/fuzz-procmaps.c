// SPDX-License-Identifier: MIT
/*
 * fuzz-procmaps.c: the text of /proc/PID/maps and /proc/PID/status as the
 * recorder parses it (os/procfs.h): every line of the input through
 * sp_procfs_parse_map(), the whole of it through sp_procfs_parse_status().
 * A line that parses must give a sound mapping that, written back in the
 * kernel's format, parses to the same fields; a status that parses must
 * give pids the text says.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "os/procfs.h"
#include "fuzz.h"

/* The kernel's format of a maps line (fs/proc/task_mmu.c). */
static char *format(const struct sp_procfs_map *m)
{
	char *s;

	if (asprintf(&s, "%" PRIx64 "-%" PRIx64 " %c%c%c%c %08" PRIx64
		     " %02x:%02x %" PRIu64 " %s\n", m->start, m->end,
		     m->prot & PROT_READ ? 'r' : '-',
		     m->prot & PROT_WRITE ? 'w' : '-',
		     m->prot & PROT_EXEC ? 'x' : '-',
		     m->mflags == MAP_SHARED ? 's' : 'p', m->pgoff, m->maj,
		     m->min, m->ino, m->path) < 0)
		abort();
	return s;
}

static void check_map(char *line, size_t len)
{
	struct sp_procfs_map m, again;
	char *s;

	if (sp_procfs_parse_map(line, &m))
		return;
	if (m.end < m.start || (m.prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC)) ||
	    (m.mflags != MAP_SHARED && m.mflags != MAP_PRIVATE) || !m.path ||
	    m.path < line || m.path + strlen(m.path) > line + len ||
	    strchr(m.path, '\n') || m.path[0] == ' ')
		abort();
	s = format(&m);
	if (sp_procfs_parse_map(s, &again) || again.start != m.start ||
	    again.end != m.end || again.prot != m.prot ||
	    again.mflags != m.mflags || again.pgoff != m.pgoff ||
	    again.maj != m.maj || again.min != m.min || again.ino != m.ino ||
	    strcmp(again.path, m.path))
		abort();
	free(s);
}

static void check_status(const char *text)
{
	pid_t tgid = -1, ppid = -1, t2, p2;
	char buf[64];

	if (sp_procfs_parse_status(text, &tgid, &ppid))
		return;
	if (tgid < 0 || ppid < 0)
		abort();
	snprintf(buf, sizeof(buf), "Name:\tx\nTgid:\t%d\nPPid:\t%d\n",
		 (int)tgid, (int)ppid);
	if (sp_procfs_parse_status(buf, &t2, &p2) || t2 != tgid || p2 != ppid)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fz_strdup(data, size), *line, *p;
	size_t len;

	check_status(text);
	/* each line as sp_procfs_maps() gives it: with its newline */
	for (p = text; *p; p += len) {
		char *nl = strchr(p, '\n');

		len = nl ? (size_t)(nl - p) + 1 : strlen(p);
		line = fz_strdup((const uint8_t *)p, len);
		check_map(line, len);
		free(line);
	}
	free(text);
	return 0;
}
