/* SPDX-License-Identifier: MIT */
/* procfs.c: threads, names, parents, mappings and memory of a live process. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/grow.h"
#include "procfs.h"

/* A /proc file that vanished with its process means the process is gone. */
static int gone(int e)
{
	return e == ENOENT ? -ESRCH : -e;
}

static int hex_field(char **p, int stop, uint64_t *v)
{
	char *end;

	if (!((**p >= '0' && **p <= '9') || (**p >= 'a' && **p <= 'f') ||
	      (**p >= 'A' && **p <= 'F')))
		return -EINVAL;
	errno = 0;
	*v = strtoull(*p, &end, 16);
	if (errno || *end != stop)
		return -EINVAL;
	*p = end + 1;
	return 0;
}

int sp_procfs_parse_map(char *line, struct sp_procfs_map *m)
{
	char *p = line, *end, *nl;
	uint64_t v;

	nl = strchr(line, '\n');
	if (nl)
		*nl = 0;
	memset(m, 0, sizeof(*m));
	if (hex_field(&p, '-', &m->start) || hex_field(&p, ' ', &m->end) ||
	    m->end < m->start)
		return -EINVAL;
	if (strlen(p) < 5 || p[4] != ' ')
		return -EINVAL;
	if (p[0] == 'r')
		m->prot |= PROT_READ;
	else if (p[0] != '-')
		return -EINVAL;
	if (p[1] == 'w')
		m->prot |= PROT_WRITE;
	else if (p[1] != '-')
		return -EINVAL;
	if (p[2] == 'x')
		m->prot |= PROT_EXEC;
	else if (p[2] != '-')
		return -EINVAL;
	if (p[3] == 's')
		m->mflags = MAP_SHARED;
	else if (p[3] == 'p')
		m->mflags = MAP_PRIVATE;
	else
		return -EINVAL;
	p += 5;
	if (hex_field(&p, ' ', &m->pgoff) || hex_field(&p, ':', &v) ||
	    v > UINT32_MAX)
		return -EINVAL;
	m->maj = (uint32_t)v;
	if (hex_field(&p, ' ', &v) || v > UINT32_MAX)
		return -EINVAL;
	m->min = (uint32_t)v;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	m->ino = strtoull(p, &end, 10);
	if (errno || (*end != ' ' && *end != 0))
		return -EINVAL;
	p = end;
	while (*p == ' ')
		p++;
	m->path = p;
	return 0;
}

int sp_procfs_maps(pid_t pid, int (*fn)(const struct sp_procfs_map *m,
					void *arg), void *arg)
{
	struct sp_procfs_map m;
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return gone(errno);
	while (getline(&line, &cap, f) > 0) {
		r = sp_procfs_parse_map(line, &m);
		if (r)
			break;
		r = fn(&m, arg);
		if (r)
			break;
	}
	if (!r && ferror(f))
		r = gone(errno);
	free(line);
	fclose(f);
	return r;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The numeric names in directory path, ascending.  0 or -errno. */
static int numbered(const char *path, pid_t **out, size_t *n)
{
	struct dirent *d;
	pid_t *v = NULL;
	size_t len = 0, cap = 0;
	DIR *dir = opendir(path);

	if (!dir)
		return gone(errno);
	while ((d = readdir(dir))) {
		char *end;
		long t;

		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		t = strtol(d->d_name, &end, 10);
		if (*end || t <= 0 || t > INT32_MAX)
			continue;
		if (SP_GROW(v, cap, len + 1)) {
			free(v);
			closedir(dir);
			return -ENOMEM;
		}
		v[len++] = (pid_t)t;
	}
	closedir(dir);
	if (len)
		qsort(v, len, sizeof(*v), cmp_pid);
	*out = v;
	*n = len;
	return 0;
}

int sp_procfs_tids(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	int e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	e = numbered(path, tids, n);
	if (!e && !*n) {
		free(*tids);
		return -ESRCH;
	}
	return e;
}

int sp_procfs_pids(pid_t **pids, size_t *n)
{
	return numbered("/proc", pids, n);
}

/* Read a small file whole into buf as a string.  Returns its length or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	ssize_t n;
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return gone(errno);
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = gone(errno);
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = 0;
	return (ssize_t)len;
}

int sp_procfs_comm(pid_t pid, pid_t tid, char comm[16])
{
	char path[80], buf[64];
	ssize_t n;
	char *nl;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid,
		 (int)tid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	memset(comm, 0, 16);
	memcpy(comm, buf, strnlen(buf, 15));
	return 0;
}

static int status_field(const char *text, const char *name, pid_t *v)
{
	size_t len = strlen(name);
	const char *p = text;
	char *end;
	long x;

	while (p && *p) {
		if (!strncmp(p, name, len) && p[len] == ':') {
			p += len + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			errno = 0;
			x = strtol(p, &end, 10);
			/* a pid_t, not what is left of a longer number */
			if ((*end != '\n' && *end != 0) || errno || x > INT_MAX)
				return -EINVAL;
			*v = (pid_t)x;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -EINVAL;
}

int sp_procfs_parse_status(const char *text, pid_t *tgid, pid_t *ppid)
{
	if (status_field(text, "Tgid", tgid) ||
	    status_field(text, "PPid", ppid))
		return -EINVAL;
	return 0;
}

int sp_procfs_status(pid_t pid, pid_t *tgid, pid_t *ppid)
{
	char path[64], buf[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return sp_procfs_parse_status(buf, tgid, ppid);
}

int sp_procfs_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	char path[64];
	size_t done = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (done < len) {
			n = pread(fd, (char *)buf + done, len - done,
				  (off_t)(addr + done));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			done += (size_t)n;
		}
		close(fd);
		if (done == len)
			return 0;
	}
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int sp_procfs_state(pid_t pid, pid_t tid, char *state)
{
	char path[80], buf[512];
	const char *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
		 (int)tid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* the state follows the comm, which may itself hold ") " */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	*state = p[2];
	return 0;
}

static int task_running(pid_t pid, pid_t tid)
{
	char st;

	if (sp_procfs_state(pid, tid, &st))
		return 0;
	return st != 'Z' && st != 'X' && st != 'x';
}

int sp_procfs_alive(pid_t pid)
{
	pid_t *tids;
	size_t n, i;
	int alive = 0;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 0;
	if (task_running(pid, pid))
		return 1;
	/* a leader that called pthread_exit() is a zombie while others run */
	if (sp_procfs_tids(pid, &tids, &n))
		return 0;
	for (i = 0; i < n && !alive; i++)
		alive = tids[i] != pid && task_running(pid, tids[i]);
	free(tids);
	return alive;
}

int sp_procfs_read_ll(const char *path, long long *v)
{
	char buf[64], *end;
	ssize_t n = read_small(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n == -ESRCH ? -ENOENT : (int)n;
	errno = 0;
	*v = strtoll(buf, &end, 10);
	if (errno || end == buf || (*end != '\n' && *end != 0))
		return -EINVAL;
	return 0;
}

int sp_procfs_open_mapped(pid_t pid, const struct sp_procfs_map *m)
{
	char path[96];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && m->path[0] == '/') {
		fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		/* a path may now name another file than the one mapped */
		if (fd >= 0 && (fstat(fd, &st) || st.st_ino != m->ino ||
				major(st.st_dev) != m->maj ||
				minor(st.st_dev) != m->min)) {
			close(fd);
			return -ESTALE;
		}
	}
	return fd < 0 ? -errno : fd;
}

int sp_procfs_nspid(pid_t pid, pid_t *nspid)
{
	char path[64], buf[4096], *p, *end;
	ssize_t n;
	long v;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	*nspid = pid;
	p = strstr(buf, "\nNSpid:");
	if (!p)
		return 0;
	/* one id per namespace, outermost first: the last is its own */
	for (p += 7; ; p = end) {
		v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v > 0 && v <= INT32_MAX)
			*nspid = (pid_t)v;
	}
	return 0;
}

static int same_file(const char *a, const char *b)
{
	struct stat x, y;

	if (stat(a, &x))
		return gone(errno);
	if (stat(b, &y))
		return gone(errno);
	return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int sp_procfs_elsewhere(pid_t pid)
{
	char path[64];
	int e;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	e = same_file("/proc/self/ns/mnt", path);
	if (e == 1) {
		snprintf(path, sizeof(path), "/proc/%d/root/", (int)pid);
		e = same_file("/", path);
	}
	return e < 0 ? e : !e;
}

int sp_procfs_uid(pid_t pid, uid_t *uid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		return gone(errno);
	*uid = st.st_uid;
	return 0;
}
