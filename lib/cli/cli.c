/* SPDX-License-Identifier: MIT */
/* cli.c: messages, exits, options, numbers and streams for the tools' mains. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "cli.h"

const char *sp_prog = "stackpulse";

static void vmsg(const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", sp_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void sp_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void sp_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(SP_EXIT_FATAL);
}

void sp_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "try '%s --help'\n", sp_prog);
	exit(SP_EXIT_USAGE);
}

void sp_bad_option(char **argv, int c)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		sp_usage_error("option '%s' needs a value", arg);
	if (optopt)
		sp_usage_error("unknown option '-%c'", optopt);
	sp_usage_error("unknown option '%s'", arg);
}

const char *sp_parse_u64(const char *s, uint64_t min, uint64_t max,
			 uint64_t *out)
{
	static char msg[64];
	unsigned long long v;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return NULL;
bad:
	snprintf(msg, sizeof(msg), "must be %llu..%llu",
		 (unsigned long long)min, (unsigned long long)max);
	return msg;
}

const char *sp_parse_size(const char *s, uint64_t *out)
{
	static const char *const why = "must be a number of bytes, with K, M or G";
	char digits[32];
	size_t n = strlen(s);
	unsigned shift = 0;
	uint64_t v;

	if (n && strchr("KkMmGg", s[n - 1])) {
		shift = strchr("Kk", s[n - 1]) ? 10 : strchr("Mm", s[n - 1]) ? 20 : 30;
		n--;
	}
	if (!n || n >= sizeof(digits))
		return why;
	memcpy(digits, s, n);
	digits[n] = 0;
	if (sp_parse_u64(digits, 0, UINT64_MAX >> shift, &v))
		return why;
	*out = v << shift;
	return NULL;
}

const char *sp_parse_seconds(const char *s, uint64_t *ns)
{
	double v;
	char *end;

	double unit = 1;

	errno = 0;
	if ((*s < '0' || *s > '9') && *s != '.')
		return "must be a positive number of seconds (s, m, h suffixes)";
	v = strtod(s, &end);
	if (!errno && end != s && end[0] && !end[1]) {
		unit = end[0] == 's' ? 1 : end[0] == 'm' ? 60 :
		       end[0] == 'h' ? 3600 : 0;
		end += unit > 0;
	}
	v *= unit;
	if (errno || *end || !(v > 0) || v > 1e7)
		return "must be a positive number of seconds (s, m, h suffixes)";
	*ns = (uint64_t)(v * 1e9);
	return NULL;
}

const char *sp_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "", 1e9 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 },
		      { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 } };
	const char *why = "must be a duration: a number and ns, us, ms, s, m or h";
	double v;
	char *end;
	size_t i;

	errno = 0;
	if ((*s < '0' || *s > '9') && *s != '.')
		return why;
	v = strtod(s, &end);
	if (errno || end == s)
		return why;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		v *= units[i].ns;
		if (!(v >= 0) || v > 1e16)
			return why;
		*ns = (uint64_t)(v + 0.5);
		return NULL;
	}
	return why;
}

/* Streams ----------------------------------------------------------------- */

/* The pipeline, in order; a spool holds an unwound stream. */
static const struct {
	const char *kind;
	const char *noun;	/* with its article */
	const char *writer;	/* the stage that writes it */
	const char *reader;	/* the stage that reads it */
} stages[] = {
	{ "raw", "a raw stream", "sp-record", "sp-unwind" },
	{ "unwound", "an unwound stream", "sp-unwind", "sp-symbolize" },
	{ "symbolized", "a symbolized stream", "sp-symbolize", "sp-fold" },
	{ "folded", "folded stacks", "sp-fold", "sp-flame" },
};

static int stage_of(const char *kind)
{
	int i;

	for (i = 0; i < (int)(sizeof(stages) / sizeof(stages[0])); i++)
		if (!strcmp(kind, stages[i].kind))
			return i;
	return -1;
}

/* "sp-unwind", "sp-unwind and sp-symbolize", "a, b and c": the readers of
 * stages from..to-1 */
static const char *readers(char *buf, size_t size, int from, int to)
{
	size_t n = 0;
	int i;

	buf[0] = 0;
	for (i = from; i < to; i++)
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s",
				      i == from ? "" : i + 1 == to ? " and " : ", ",
				      stages[i].reader);
	return buf;
}

void sp_wrong_stream(const char *name, const char *kind, const char *want)
{
	int have = stage_of(kind), need = stage_of(want);
	char list[128];

	if (!strcmp(kind, "spool")) {
		if (need >= 2)
			sp_die("'%s' is a spool file: read it back with 'sp-spool cat' and pipe it into %s",
			       name, readers(list, sizeof(list), 1, need));
		sp_die("'%s' is a spool file: read it back with 'sp-spool cat'",
		       name);
	}
	if (have < 0 || need < 0)
		sp_die("'%s' is %s stream, not %s", name, kind, want);
	if (have > need)
		sp_die("'%s' is %s: pipe it into %s", name, stages[have].noun,
		       stages[have].reader);
	sp_die("'%s' is %s: pipe it into %s first", name, stages[have].noun,
	       readers(list, sizeof(list), have, need));
}

struct sp_in *sp_open_stream(const char *path, const char *magic,
			     uint32_t version, void *hdr, size_t size,
			     size_t min_size)
{
	struct sp_in *in = sp_in_open(path);
	const char *kind;
	char msg[SP_ERR_MAX];
	int r;

	if (!in)
		sp_die("cannot open '%s': %s", path, strerror(errno));
	r = sp_in_header(in, magic, version, hdr, min_size, size);
	if (!r)
		return in;
	/* nothing is left allocated when a tool dies */
	kind = r == SP_IN_OTHER ? sp_in_kind(in) : NULL;
	snprintf(msg, sizeof(msg), "%s", kind ? sp_in_name(in) : sp_in_error(in));
	sp_in_close(in);
	if (kind)
		sp_wrong_stream(msg, kind, sp_stream_kind(magic));
	sp_die("%s", msg);
}

const char *sp_output_name(const char *path)
{
	return strcmp(path, "-") ? path : "stdout";
}

struct sp_out *sp_open_output(const char *path, const char *kind)
{
	struct sp_out *out = sp_out_open(path, kind != NULL);
	int i;

	if (out)
		return out;
	if (errno == ENOTTY && (i = stage_of(kind)) >= 0)
		sp_die("refusing to write the %s stream to a terminal: redirect it or pipe it into %s",
		       kind, stages[i].reader);
	if (errno == ENOTTY)
		sp_die("refusing to write %s to a terminal: give -o FILE or redirect it",
		       kind);
	sp_die("cannot open '%s': %s", sp_output_name(path), strerror(errno));
}

void sp_write_failed(const char *path, int err)
{
	if (err == -EPIPE)
		exit(SP_EXIT_OK);	/* the reader is gone: stop quietly */
	if (err == -ENOMEM)
		sp_die("out of memory");
	sp_die("cannot write '%s': %s", sp_output_name(path), strerror(-err));
}

int sp_stdout_done(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return SP_EXIT_OK;
	sp_die("cannot write 'stdout': %s", strerror(errno ? errno : EIO));
}

/* ^C at the terminal ------------------------------------------------------- */

int sp_terminal_signal_deferred(int sig, const siginfo_t *si)
{
	static volatile sig_atomic_t deferred;
	struct stat st;

	if ((sig != SIGINT && sig != SIGHUP) || si->si_code != SI_KERNEL ||
	    deferred || fstat(STDIN_FILENO, &st) ||
	    !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return 0;
	deferred = 1;
	return 1;
}

static sigset_t terminal_sigs;

static void *take_signals(void *arg)
{
	sigset_t one;
	siginfo_t si;
	int sig;

	(void)arg;
	for (;;) {
		sig = sigwaitinfo(&terminal_sigs, &si);
		if (sig < 0 || sp_terminal_signal_deferred(sig, &si))
			continue;
		/* what the signal would have done had it not been blocked */
		signal(sig, SIG_DFL);
		sigemptyset(&one);
		sigaddset(&one, sig);
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
		raise(sig);
		_exit(128 + sig);
	}
	return NULL;
}

void sp_finish_on_terminal_signals(void)
{
	pthread_attr_t attr;
	pthread_t t;
	int e;

	sigemptyset(&terminal_sigs);
	sigaddset(&terminal_sigs, SIGINT);
	sigaddset(&terminal_sigs, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &terminal_sigs, NULL))
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&t, &attr, take_signals, NULL);
	pthread_attr_destroy(&attr);
	if (e)	/* no thread: the signals do as they always did */
		pthread_sigmask(SIG_UNBLOCK, &terminal_sigs, NULL);
}

/* Waiting for input and for the reader ------------------------------------ */

void sp_wait_input(int in_fd, int pipe_fd)
{
	struct pollfd p[2] = { { in_fd, POLLIN, 0 }, { pipe_fd, 0, 0 } };

	if (pipe_fd < 0)
		return;
	if (poll(p, 2, -1) > 0 && (p[1].revents & (POLLERR | POLLHUP)))
		exit(SP_EXIT_OK);	/* the reader is gone: stop quietly */
}

static struct pace {
	struct sp_in *in;
	struct sp_out *out;
} pace;

static void pace_read(void *arg)
{
	struct pace *p = arg;

	sp_out_flush(p->out);
	sp_wait_input(sp_in_fd(p->in), sp_out_pipe(p->out));
}

void sp_pace_output(struct sp_in *in, struct sp_out *out)
{
	pace.in = in;
	pace.out = out;
	sp_in_on_read(in, pace_read, &pace);
}

struct watched {
	int fd;
	int pipe_fd;
};

/*
 * The cookie of the stream open now, reachable from here: a tool may die
 * with it open, and the stream keeps it where leak checkers do not look.
 */
static struct watched *watching;

static struct idle {
	int (*timeout_ms)(void *arg);
	void (*fn)(void *arg);
	void *arg;
} idle;

void sp_input_idle(int (*timeout_ms)(void *arg), void (*fn)(void *arg),
		   void *arg)
{
	idle = (struct idle){ timeout_ms, fn, arg };
}

static ssize_t watched_read(void *cookie, char *buf, size_t size)
{
	struct watched *w = cookie;
	struct pollfd p[2];
	int t, n;

	while (idle.fn && (t = idle.timeout_ms(idle.arg)) >= 0) {
		p[0] = (struct pollfd){ w->fd, POLLIN, 0 };
		p[1] = (struct pollfd){ w->pipe_fd, 0, 0 };
		n = poll(p, 2, t);
		if (n > 0 && (p[1].revents & (POLLERR | POLLHUP)))
			exit(SP_EXIT_OK);	/* the reader is gone */
		if (n > 0)
			return read(w->fd, buf, size);
		if (n == 0)
			idle.fn(idle.arg);
		else if (errno != EINTR)
			break;
	}
	sp_wait_input(w->fd, w->pipe_fd);
	return read(w->fd, buf, size);
}

static int watched_close(void *cookie)
{
	struct watched *w = cookie;
	int r = w->fd > 0 ? close(w->fd) : 0;

	if (watching == w)
		watching = NULL;
	free(w);
	return r;
}

FILE *sp_open_text_input(const char *path, const char *output)
{
	static const cookie_io_functions_t io = {
		.read = watched_read, .close = watched_close,
	};
	int stdio = !strcmp(path, "-");
	int piped = !strcmp(output, "-") && sp_fd_is_pipe(1);
	struct watched *w;
	FILE *fp;

	if (!piped && !idle.fn) {
		fp = stdio ? stdin : fopen(path, "r");
		/* a read(2) per 64 KiB, not per 4 KiB */
		if (fp)
			setvbuf(fp, NULL, _IOFBF, 64 * 1024);
		return fp;
	}
	w = malloc(sizeof(*w));
	if (!w)
		return NULL;
	w->pipe_fd = piped ? 1 : -1;
	w->fd = stdio ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (w->fd < 0) {
		free(w);
		return NULL;
	}
	fp = fopencookie(w, "r", io);
	if (!fp) {
		watched_close(w);
		return NULL;
	}
	/* a poll(2) per read: reads as large as a pipe holds */
	setvbuf(fp, NULL, _IOFBF, 64 * 1024);
	watching = w;
	return fp;
}
