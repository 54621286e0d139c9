/* SPDX-License-Identifier: MIT */
/* sp-push: upload the windows sp-fold --every writes to Grafana Pyroscope. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "push/push.h"

#define MAX_BACKOFF_S	60

static struct options {
	struct sp_push_opts push;
	const char *dir;
	char *labels;		/* k=v,k2=v2 */
	uint64_t max_spool;	/* bytes; 0: no limit */
	int once;
} opt = {
	.max_spool = 1ull << 30,
	.push = { .timeout_s = 30 },
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static void usage(void)
{
	printf("usage: sp-push --url URL --app NAME [--label KEY=VALUE]... [--tenant ID]\n"
	       "               [--auth-file FILE] [--max-spool SIZE] [--timeout SECONDS]\n"
	       "               [--once] DIR\n"
	       "\n"
	       "Upload the profiles sp-fold --every --format pprof writes into DIR to\n"
	       "Grafana Pyroscope's HTTP ingest API, oldest first, each deleted once the\n"
	       "server has it.  DIR is the queue: while the server is down or busy,\n"
	       "windows wait there and are tried again, later and later (up to %d s).\n"
	       "\n"
	       "  --url URL           the server, http://HOST:4040 (POST URL/ingest)\n"
	       "  --app NAME          application name, such as myhost.cpu\n"
	       "  --label KEY=VALUE   a label of every profile (pod=web-1); repeatable\n"
	       "  --tenant ID         X-Scope-OrgID, for a multi-tenant server\n"
	       "  --auth-file FILE    credentials: a line USER:PASSWORD (basic auth) or\n"
	       "                      'Bearer TOKEN'; or the environment: SP_PUSH_BASIC_AUTH,\n"
	       "                      SP_PUSH_BEARER_TOKEN (never on the command line)\n"
	       "  --max-spool SIZE    keep at most SIZE bytes of windows waiting (K, M, G;\n"
	       "                      default 1G; 0: no limit); the oldest are dropped\n"
	       "  --timeout SECONDS   of one upload (default 30)\n"
	       "  --once              upload what DIR holds and exit; 1 if any is left\n"
	       "  -h, --help          show this help and exit\n"
	       "  -V, --version       show the version and exit\n"
	       "\n"
	       "Runs until SIGINT or SIGTERM.  Exit status: 0 ok, 1 windows were left or\n"
	       "dropped, 2 failure, 64 usage error.\n", MAX_BACKOFF_S);
}

/* Label keys as Pyroscope takes them; values without ',', '}' or '='. */
static void add_label(const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t n = opt.labels ? strlen(opt.labels) : 0;
	char *l;

	if (!eq || eq == kv || !eq[1] ||
	    strspn(kv, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != (size_t)(eq - kv) ||
	    strpbrk(eq + 1, ",}={") || !strncmp(kv, "__", 2))
		sp_usage_error("invalid --label '%s': must be KEY=VALUE, KEY of letters, digits, '_' and '.' (not starting with __), VALUE without ',', '=', '{' or '}'",
			       kv);
	l = realloc(opt.labels, n + strlen(kv) + 2);
	if (!l)
		sp_die("out of memory");
	if (n)
		l[n++] = ',';
	strcpy(l + n, kv);
	opt.labels = l;
}

/* A secret from the file or the environment: never from argv. */
static void read_credentials(const char *file)
{
	static char line[4096];
	const char *basic = getenv("SP_PUSH_BASIC_AUTH");
	const char *bearer = getenv("SP_PUSH_BEARER_TOKEN");
	struct stat st;
	FILE *fp;

	if (file) {
		fp = fopen(file, "r");
		if (!fp)
			sp_die("cannot open '%s': %s", file, strerror(errno));
		if (fstat(fileno(fp), &st) == 0 && (st.st_mode & 077))
			sp_warn("'%s' may be read by others (mode %03o): chmod 600 it",
				file, (unsigned)(st.st_mode & 0777));
		if (!fgets(line, sizeof(line), fp))
			line[0] = 0;
		fclose(fp);
		line[strcspn(line, "\r\n")] = 0;
		if (!strncmp(line, "Bearer ", 7) && line[7])
			opt.push.bearer = line + 7;
		else if (strchr(line, ':'))
			opt.push.basic = line;
		else
			sp_die("'%s' holds no credentials: want a line USER:PASSWORD or 'Bearer TOKEN'",
			       file);
		return;
	}
	if (basic && *basic) {
		if (!strchr(basic, ':'))
			sp_die("SP_PUSH_BASIC_AUTH must be USER:PASSWORD");
		opt.push.basic = basic;
	} else if (bearer && *bearer) {
		opt.push.bearer = bearer;
	}
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_URL = 256, OPT_APP, OPT_LABEL, OPT_TENANT, OPT_AUTH,
	       OPT_MAX, OPT_TIMEOUT, OPT_ONCE };
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, OPT_URL },
		{ "app", required_argument, NULL, OPT_APP },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "tenant", required_argument, NULL, OPT_TENANT },
		{ "auth-file", required_argument, NULL, OPT_AUTH },
		{ "max-spool", required_argument, NULL, OPT_MAX },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *auth = NULL, *why;
	uint64_t v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_URL:
			if (strncmp(optarg, "http://", 7) &&
			    strncmp(optarg, "https://", 8))
				sp_usage_error("invalid --url '%s': must start with http:// or https://",
					       optarg);
			opt.push.url = optarg;
			break;
		case OPT_APP:
			if (!*optarg || strspn(optarg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/") != strlen(optarg))
				sp_usage_error("invalid --app '%s': must be letters, digits, '_', '.', '-' and '/'",
					       optarg);
			opt.push.app = optarg;
			break;
		case OPT_LABEL:
			add_label(optarg);
			break;
		case OPT_TENANT:
			opt.push.tenant = optarg;
			break;
		case OPT_AUTH:
			auth = optarg;
			break;
		case OPT_MAX:
			why = sp_parse_size(optarg, &opt.max_spool);
			if (why)
				sp_usage_error("invalid --max-spool '%s': %s",
					       optarg, why);
			break;
		case OPT_TIMEOUT:
			why = sp_parse_u64(optarg, 1, 3600, &v);
			if (why)
				sp_usage_error("invalid --timeout '%s': %s",
					       optarg, why);
			opt.push.timeout_s = (long)v;
			break;
		case OPT_ONCE:
			opt.once = 1;
			break;
		case 'h':
			usage();
			exit(sp_stdout_done());
		case 'V':
			printf("sp-push %s\n", SP_VERSION);
			exit(sp_stdout_done());
		default:
			sp_bad_option(argv, c);
		}
	}
	if (!opt.push.url || !opt.push.app)
		sp_usage_error("--url and --app are needed");
	if (argc - optind != 1)
		sp_usage_error("give one spool directory, the -o DIR of sp-fold --every");
	opt.dir = argv[optind];
	opt.push.labels = opt.labels;
	read_credentials(auth);
}

/* Sleep s seconds, or until a signal. */
static void pause_s(long s)
{
	struct timespec ts = { s, 0 };

	while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Wait until dir changes (a window is placed), a second at most. */
static void wait_for_windows(int ino)
{
	struct pollfd p = { ino, POLLIN, 0 };
	char buf[4096];

	if (ino < 0) {
		pause_s(1);
		return;
	}
	if (poll(&p, 1, 1000) > 0)
		while (read(ino, buf, sizeof(buf)) > 0)
			;
}

static uint64_t sent, refused, dropped;

/* Over the cap: drop the oldest windows, never the newest. */
static void trim(struct sp_push_window *w, size_t *n)
{
	uint64_t total = 0;
	size_t i, k = 0;
	char path[4096 + 160];

	for (i = 0; i < *n; i++)
		total += w[i].bytes;
	for (i = 0; opt.max_spool && total > opt.max_spool && i + 1 < *n; i++) {
		snprintf(path, sizeof(path), "%s/%s", opt.dir, w[i].name);
		if (unlink(path) == 0 || errno == ENOENT) {
			sp_warn("spool '%s' holds more than %llu bytes: dropped '%s'",
				opt.dir, (unsigned long long)opt.max_spool,
				w[i].name);
			dropped++;
			total -= w[i].bytes;
			k = i + 1;
		}
	}
	if (k) {
		memmove(w, w + k, (*n - k) * sizeof(*w));
		*n -= k;
	}
}

/* A refused window leaves the queue, kept as NAME.refused to look at. */
static void set_aside(const struct sp_push_window *w)
{
	char from[4096 + 160], to[4096 + 170];

	snprintf(from, sizeof(from), "%s/%s", opt.dir, w->name);
	snprintf(to, sizeof(to), "%s/%s.refused", opt.dir, w->name);
	if (rename(from, to))
		unlink(from);
	refused++;
}

/*
 * Upload what is queued, in order.  Returns 0 when the queue is empty, 1
 * when a window waits for another try.
 */
static int push_all(struct sp_pusher *p, long *backoff)
{
	struct sp_push_window *w;
	char path[4096 + 160];
	long status, retry;
	size_t n, i;
	int e = sp_push_list(opt.dir, &w, &n);

	if (e)
		sp_die("cannot read spool '%s': %s", opt.dir, strerror(-e));
	trim(w, &n);
	for (i = 0; i < n && !stop; i++) {
		switch (sp_pusher_send(p, opt.dir, &w[i], &status, &retry)) {
		case SP_PUSH_SENT:
			snprintf(path, sizeof(path), "%s/%s", opt.dir, w[i].name);
			if (unlink(path) && errno != ENOENT)
				sp_die("cannot remove '%s': %s", path,
				       strerror(errno));
			sent++;
			*backoff = 1;
			break;
		case SP_PUSH_REFUSED:
			sp_warn("'%s' refused: %s", w[i].name, sp_pusher_error(p));
			set_aside(&w[i]);
			break;
		case SP_PUSH_RETRY:
			if (retry > *backoff)
				*backoff = retry > MAX_BACKOFF_S ? MAX_BACKOFF_S : retry;
			sp_warn("'%s' not sent: %s; %zu windows wait, next try in %ld s",
				w[i].name, sp_pusher_error(p), n - i, *backoff);
			free(w);
			return 1;
		}
	}
	free(w);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct sp_pusher *p;
	long backoff = 1;
	int ino, left = 0;

	sp_prog = "sp-push";
	parse_options(argc, argv);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: sleeps end */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	p = sp_pusher_new(&opt.push);
	if (!p)
		sp_die("cannot start libcurl: %s", strerror(errno));
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ino >= 0 && inotify_add_watch(ino, opt.dir, IN_CREATE | IN_MOVED_TO) < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == EACCES)
			sp_die("cannot watch spool '%s': %s", opt.dir,
			       strerror(errno));
		close(ino);
		ino = -1;
	}
	while (!stop) {
		left = push_all(p, &backoff);
		if (opt.once)
			break;
		if (left) {
			pause_s(backoff);
			backoff = backoff * 2 > MAX_BACKOFF_S ? MAX_BACKOFF_S :
				  backoff * 2;
		} else {
			wait_for_windows(ino);
		}
	}
	sp_pusher_free(p);
	if (ino >= 0)
		close(ino);
	sp_warn("%llu windows sent, %llu refused, %llu dropped%s",
		(unsigned long long)sent, (unsigned long long)refused,
		(unsigned long long)dropped, left ? "; some wait in the spool" : "");
	free(opt.labels);
	return left || refused || dropped ? SP_EXIT_PARTIAL : SP_EXIT_OK;
}
