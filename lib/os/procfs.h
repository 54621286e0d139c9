/* SPDX-License-Identifier: MIT */
/*
 * procfs.h: what /proc tells about a live process: its threads, their names,
 * its parent, its mappings, and bytes of its memory.
 *
 * The recorder reads these once at attach time to describe what already
 * existed before the kernel started sending records.  The names use
 * sp_procfs_ so they stay apart from elf/procs.h, which models processes as a
 * stream describes them.  Line and text parsers are separate functions so
 * they can be tested without a live process.
 */
#ifndef SP_PROCFS_H
#define SP_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of /proc/PID/maps. */
struct sp_procfs_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	uint32_t mflags;	/* MAP_PRIVATE or MAP_SHARED */
	const char *path;	/* "" when anonymous; points into the line */
};

/*
 * Parse one maps line ("start-end perms offset maj:min inode   path"); the
 * trailing newline is cut off line in place.  Returns 0, or -EINVAL.
 */
int sp_procfs_parse_map(char *line, struct sp_procfs_map *m);

/*
 * Call fn for every line of /proc/PID/maps, stopping at the first nonzero
 * return, which is passed on.  Returns 0, fn's value, or -errno (-ESRCH when
 * the process is gone, -EINVAL for a line that does not parse).
 */
int sp_procfs_maps(pid_t pid, int (*fn)(const struct sp_procfs_map *m,
					void *arg), void *arg);

/*
 * The thread ids in /proc/PID/task, ascending.  Returns 0 and a malloc'ed
 * array the caller frees, or -errno (-ESRCH when the process is gone).
 */
int sp_procfs_tids(pid_t pid, pid_t **tids, size_t *n);

/*
 * The process ids in /proc, ascending.  Returns 0 and a malloc'ed array the
 * caller frees, or -errno.
 */
int sp_procfs_pids(pid_t **pids, size_t *n);

/* The name of thread tid of pid, NUL-terminated.  Returns 0 or -errno. */
int sp_procfs_comm(pid_t pid, pid_t tid, char comm[16]);

/*
 * Tgid and PPid fields of the text of /proc/PID/status.  Returns 0, or
 * -EINVAL when one is missing or is no pid_t.
 */
int sp_procfs_parse_status(const char *text, pid_t *tgid, pid_t *ppid);

/* Tgid and PPid of pid from /proc/PID/status.  Returns 0 or -errno. */
int sp_procfs_status(pid_t pid, pid_t *tgid, pid_t *ppid);

/*
 * Copy len bytes at addr of process pid into buf, through /proc/PID/mem or,
 * failing that, process_vm_readv(2).  Returns 0, or -errno when neither
 * gave every byte.
 */
int sp_procfs_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len);

/*
 * Whether process pid still runs: 1 if it exists and one of its threads is
 * not a zombie, 0 if it is gone or only a zombie is left.
 */
int sp_procfs_alive(pid_t pid);

/*
 * Open the file behind mapping m of process pid, read-only: through
 * /proc/PID/map_files when permitted, else by its path if the device and
 * inode there are still the mapping's.  Returns a descriptor the caller
 * closes, or -errno (-ESTALE: the path names another file now).
 */
int sp_procfs_open_mapped(pid_t pid, const struct sp_procfs_map *m);

/*
 * The id of process pid in its own (innermost) pid namespace, from the
 * NSpid field of /proc/PID/status; pid itself on a kernel without it.
 * Returns 0 or -errno.
 */
int sp_procfs_nspid(pid_t pid, pid_t *nspid);

/*
 * Whether process pid sees another file system than this process: another
 * mount namespace, or another root directory (chroot).  Then its paths are
 * under /proc/PID/root.  Returns 1, 0, or -errno.
 */
int sp_procfs_elsewhere(pid_t pid);

/* The owner (effective user) of process pid.  Returns 0 or -errno. */
int sp_procfs_uid(pid_t pid, uid_t *uid);

/*
 * The state letter of thread tid of pid from /proc/PID/task/TID/stat ('R',
 * 'S', 'T', 't', 'Z', ...).  Returns 0 or -errno.
 */
int sp_procfs_state(pid_t pid, pid_t tid, char *state);

/* A file holding one decimal integer, such as under /proc/sys.  0 or -errno. */
int sp_procfs_read_ll(const char *path, long long *v);

#endif
