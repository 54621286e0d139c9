/* SPDX-License-Identifier: MIT */
/* sp-flame: draw folded stacks as an interactive flame graph SVG. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "flame/flame.h"
#include "format/folded.h"

static struct options {
	unsigned flags;		/* SP_FLAME_* */
	struct sp_flame_style style;
	const char *output;
} opt = {
	.output = "-",
};

/* What main() works with: reachable from here until it returns or dies. */
static FILE *fp;
static struct sp_folded_reader *rd;
static struct sp_flame *flame;
static struct sp_out *out;

static void usage(void)
{
	printf("usage: sp-flame [options] [FILE...]\n"
	       "       sp-flame --diff [options] BEFORE AFTER\n"
	       "\n"
	       "Draw folded stacks ('frame;frame;frame COUNT' lines, as sp-fold and\n"
	       "flamegraph.pl's stackcollapse scripts write them; FILEs or standard input)\n"
	       "as one interactive flame graph SVG: click to zoom, search by regular\n"
	       "expression, tooltips with counts.  Lines 'STACK BEFORE AFTER' (difffolded.pl)\n"
	       "or --diff draw a differential graph: red grew, blue shrank.\n"
	       "\n"
	       "      --title TEXT     title (default: Flame Graph, Icicle Graph, ...)\n"
	       "      --subtitle TEXT  a second line under the title\n"
	       "      --width N        image width in pixels (default 1200)\n"
	       "      --height N       frame height in pixels (default 16)\n"
	       "      --minwidth N[%%]  merge frames narrower than N pixels, or N\n"
	       "                       percent of all samples (default 0.1)\n"
	       "      --countname TEXT what the counts are (default samples)\n"
	       "      --nametype TEXT  what the names are (default Function:)\n"
	       "      --colors NAME    palette: %s\n"
	       "                       (default hot)\n"
	       "      --hash           colour by the first bytes of names: alike names alike\n"
	       "      --reverse        stacks leaf first: merge from the leaves\n"
	       "      --inverted       icicle graph: roots at the top\n"
	       "      --flamechart     keep the input's order, merge only consecutive frames\n"
	       "      --diff           two inputs, BEFORE and AFTER: a differential graph\n"
	       "      --negate         swap the differential hues (and signs)\n"
	       "  -o, --output FILE    write to FILE instead of standard output\n"
	       "  -h, --help           show this help and exit\n"
	       "  -V, --version        show the version and exit\n"
	       "\n"
	       "Exit status: 0 ok, 2 bad input or failure, 64 usage error.\n",
	       sp_flame_palette_names());
}

enum {
	OPT_TITLE = 256, OPT_SUBTITLE, OPT_WIDTH, OPT_HEIGHT, OPT_MINWIDTH,
	OPT_COUNTNAME, OPT_NAMETYPE, OPT_COLORS, OPT_HASH, OPT_REVERSE,
	OPT_INVERTED, OPT_FLAMECHART, OPT_DIFF, OPT_NEGATE,
};

static const struct option longopts[] = {
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "subtitle", required_argument, NULL, OPT_SUBTITLE },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "height", required_argument, NULL, OPT_HEIGHT },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ "countname", required_argument, NULL, OPT_COUNTNAME },
	{ "nametype", required_argument, NULL, OPT_NAMETYPE },
	{ "colors", required_argument, NULL, OPT_COLORS },
	{ "hash", no_argument, NULL, OPT_HASH },
	{ "reverse", no_argument, NULL, OPT_REVERSE },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "flamechart", no_argument, NULL, OPT_FLAMECHART },
	{ "diff", no_argument, NULL, OPT_DIFF },
	{ "negate", no_argument, NULL, OPT_NEGATE },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* "0.5", "2", "1.5%": flamegraph.pl's minwidth, pixels or a percentage. */
static void parse_minwidth(const char *s)
{
	size_t n = strlen(s), i, dots = 0;
	char *end;

	opt.style.minwidth_pct = n > 0 && s[n - 1] == '%';
	if (opt.style.minwidth_pct)
		n--;
	for (i = 0; i < n; i++) {
		if (s[i] == '.')
			dots++;
		else if (s[i] < '0' || s[i] > '9')
			break;
	}
	if (n == 0 || i < n || dots > 1 || n == dots)
		goto bad;
	errno = 0;
	opt.style.minwidth = strtod(s, &end);
	if (errno || end != s + n)
		goto bad;
	if (opt.style.minwidth_pct ? opt.style.minwidth > 100 :
	    opt.style.minwidth > 100000)
		goto bad;
	return;
bad:
	sp_usage_error("invalid --minwidth '%s': must be pixels (0.1) or a percentage (0.5%%)",
		       s);
}

static unsigned parse_uint(const char *name, const char *s, unsigned min,
			   unsigned max)
{
	const char *errstr;
	uint64_t v;

	errstr = sp_parse_u64(s, min, max, &v);
	if (errstr)
		sp_usage_error("invalid %s '%s': %s", name, s, errstr);
	return (unsigned)v;
}

/* Read one input into the tree: side 1 is AFTER (the width), 0 BEFORE. */
static void read_input(const char *path, int diff_side)
{
	struct sp_folded_line line;
	unsigned want = opt.flags & SP_FLAME_DIFF && diff_side >= 0 ? 1 : 0;
	const char *name;
	int r;

	fp = sp_open_text_input(path, opt.output);
	if (!fp)
		sp_die("cannot open '%s': %s", path, strerror(errno));
	name = strcmp(path, "-") ? path : "stdin";
	rd = sp_folded_reader_new(fp, name);
	if (!rd)
		sp_die("out of memory");
	while ((r = sp_folded_read(rd, &line)) > 0) {
		double count = line.count[0], base = 0;

		if (want == 1 && line.columns == 2) {
			r = sp_folded_reader_fail(rd, "two counts in an input of --diff: give each side in its own file");
			break;
		}
		if (line.columns == 2) {
			if (!(opt.flags & SP_FLAME_DIFF)) {
				/* the first differential line decides, as in flamegraph.pl */
				if (sp_flame_total(flame) > 0) {
					r = sp_folded_reader_fail(rd, "two counts after lines of one: mixed inputs");
					break;
				}
				opt.flags |= SP_FLAME_DIFF;
				sp_flame_free(flame);
				flame = sp_flame_new(opt.flags);
				if (!flame)
					sp_die("out of memory");
			}
			base = line.count[0];
			count = line.count[1];
		} else if (diff_side == 0) {
			base = count;
			count = 0;
		} else if (opt.flags & SP_FLAME_DIFF && diff_side < 0) {
			r = sp_folded_reader_fail(rd, "one count after lines of two: mixed inputs");
			break;
		}
		if (line.decimals > opt.style.decimals)
			opt.style.decimals = line.decimals;
		if (sp_flame_add(flame, line.stack, count, base))
			sp_die("out of memory");
	}
	if (r == SP_IN_OTHER) {
		char kind[32];

		snprintf(kind, sizeof(kind), "%s", sp_folded_reader_kind(rd));
		sp_wrong_stream(name, kind, "folded");
	}
	if (r < 0)
		sp_die("%s", sp_folded_reader_error(rd));
	sp_folded_reader_free(rd);
	rd = NULL;
	if (fp != stdin)
		fclose(fp);
	fp = NULL;
}

int main(int argc, char **argv)
{
	int c, r, i, pal;

	sp_prog = "sp-flame";
	sp_flame_style_init(&opt.style);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_TITLE:
			opt.style.title = optarg;
			break;
		case OPT_SUBTITLE:
			opt.style.subtitle = optarg;
			break;
		case OPT_WIDTH:
			opt.style.width = parse_uint("--width", optarg, 100, 1000000);
			break;
		case OPT_HEIGHT:
			opt.style.frame_height = parse_uint("--height", optarg, 2, 1000);
			break;
		case OPT_MINWIDTH:
			parse_minwidth(optarg);
			break;
		case OPT_COUNTNAME:
			opt.style.countname = optarg;
			break;
		case OPT_NAMETYPE:
			opt.style.nametype = optarg;
			break;
		case OPT_COLORS:
			pal = sp_flame_palette(optarg);
			if (pal < 0)
				sp_usage_error("invalid --colors '%s': must be one of %s",
					       optarg, sp_flame_palette_names());
			opt.style.palette = pal;
			break;
		case OPT_HASH:
			opt.style.hash = 1;
			break;
		case OPT_REVERSE:
			opt.flags |= SP_FLAME_REVERSE;
			break;
		case OPT_INVERTED:
			opt.style.inverted = 1;
			break;
		case OPT_FLAMECHART:
			opt.flags |= SP_FLAME_CHART;
			break;
		case OPT_DIFF:
			opt.flags |= SP_FLAME_DIFF;
			break;
		case OPT_NEGATE:
			opt.style.negate = 1;
			break;
		case 'o':
			opt.output = optarg;
			break;
		case 'h':
			usage();
			return sp_stdout_done();
		case 'V':
			printf("sp-flame %s\n", SP_VERSION);
			return sp_stdout_done();
		default:
			sp_bad_option(argv, c);
		}
	}
	if (opt.flags & SP_FLAME_DIFF && argc - optind != 2)
		sp_usage_error("--diff needs two inputs: BEFORE AFTER");
	if (!opt.style.countname[0])
		sp_usage_error("invalid --countname '': must not be empty");

	/* a closed pipe shows up as EPIPE from the writes */
	signal(SIGPIPE, SIG_IGN);
	sp_finish_on_terminal_signals();
	flame = sp_flame_new(opt.flags);
	if (!flame)
		sp_die("out of memory");
	if (opt.flags & SP_FLAME_DIFF) {
		read_input(argv[optind], 0);
		read_input(argv[optind + 1], 1);
	} else if (optind == argc) {
		read_input("-", -1);
	} else {
		for (i = optind; i < argc; i++)
			read_input(argv[i], -1);
	}
	if (!(sp_flame_total(flame) > 0))
		sp_die("nothing to draw: no stack with a count above 0 in %s",
		       optind == argc ? "'stdin'" :
		       opt.flags & SP_FLAME_DIFF ? "the AFTER input" : "the input");

	out = sp_open_output(opt.output, NULL);
	r = sp_flame_write(flame, &opt.style, out);
	if (!r)
		r = sp_out_close(out);
	if (r)
		sp_write_failed(opt.output, r);
	sp_flame_free(flame);
	return SP_EXIT_OK;
}
