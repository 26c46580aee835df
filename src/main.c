// SPDX-License-Identifier: MIT
/*
 * cprof command line: parses and validates options, then hands a
 * session_opts to session__run(). No other module reads options.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "session.h"
#include "version.h"

#define DEFAULT_HZ	    99
#define DEFAULT_DURATION_MS 10000
#define MAX_HZ		    100000
#define MAX_PIDS	    1024

enum {
	OPT_FORMAT = 256,
	OPT_PER_THREAD,
	OPT_INCLUDE_IDLE,
	OPT_NO_CHILDREN,
	OPT_MAP_SIZE,
	OPT_TOP,
	OPT_VERSION,
};

static const char usage_text[] =
	"Usage: cprof [OPTIONS] [-p PID[,PID...] | -a | -- COMMAND [ARGS...]]\n"
	"\n"
	"Samples CPU stacks (user and kernel) with eBPF and writes a symbolized\n"
	"profile in pprof format (gzipped profile.proto) or as folded stacks.\n"
	"\n"
	"What to profile (one of):\n"
	"  -p, --pid PID[,PID...]   running processes, all their threads and the\n"
	"                           children they start during the profile\n"
	"  -a, --all                the whole system, all CPUs (the default when\n"
	"                           neither -p nor a command is given)\n"
	"  -- COMMAND [ARGS...]     start COMMAND, profile it (and its children) until\n"
	"                           it exits, and exit with its exit status\n"
	"\n"
	"Options:\n"
	"  -F, --frequency HZ       samples per second per CPU (default 99)\n"
	"  -d, --duration SECONDS   stop after SECONDS (default 10; with a command:\n"
	"                           until it exits). Ctrl-C stops early and still\n"
	"                           writes the profile; a second Ctrl-C aborts\n"
	"  -o, --output FILE        where to write (default cprof.pb.gz, or\n"
	"                           cprof.folded with --format folded); - is stdout\n"
	"      --format FORMAT      pprof (default) or folded (Brendan Gregg's\n"
	"                           'a;b;c COUNT' lines for flamegraph.pl/speedscope)\n"
	"      --per-thread         add a tid label (and a thread level in folded)\n"
	"      --include-idle       keep samples of idle CPUs (the swapper task)\n"
	"      --no-children        with -p or a command: do not follow child processes\n"
	"      --map-size N         stack/count map entries per drain interval\n"
	"                           (default 16384); raise it if samples are lost\n"
	"      --top N              functions listed in the summary (default 10)\n"
	"  -v, --verbose            debug output, including libbpf's log\n"
	"  -h, --help               this help\n"
	"      --version            version\n"
	"\n"
	"At the end cprof prints a summary to stderr: samples, duration, processes,\n"
	"lost samples with the reason, and the top functions by self samples.\n"
	"\n"
	"Examples:\n"
	"  cprof -p 1234 -d 30                profile PID 1234 for 30 s\n"
	"  cprof -F 999 -- ./build.sh         profile a command at 999 Hz\n"
	"  cprof -a -d 5 -o host.pb.gz        the whole system for 5 s\n"
	"  cprof --format folded -o - -- make | flamegraph.pl > make.svg\n"
	"  go tool pprof -top cprof.pb.gz     read the result\n"
	"\n"
	"Exit status: 0 on success; 1 on a runtime error (the reason is printed);\n"
	"2 on a usage error; with a command, the command's status (127 if it could\n"
	"not be started, 128+N if it was killed by signal N).\n"
	"Needs root, or CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8).\n";

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "cprof: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'cprof --help' for more information.\n");
	exit(2);
}

static unsigned long parse_ulong(const char *s, const char *what, unsigned long min,
				 unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		char msg[160];

		snprintf(msg, sizeof(msg), "invalid %s '%%s': expected a number from %lu to %lu",
			 what, min, max);
		usage_error(msg, s);
	}
	return v;
}

static uint64_t parse_duration_ms(const char *s)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (end != s && (strcmp(end, "s") == 0))
		end++;
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 365.0 * 86400)
		usage_error("invalid duration '%s': expected seconds, e.g. 10 or 2.5", s);
	return (uint64_t)(v * 1000.0 + 0.5) ? (uint64_t)(v * 1000.0 + 0.5) : 1;
}

static size_t parse_pids(char *s, uint32_t *pids, size_t n)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_PIDS)
			usage_error("too many PIDs (at most %s)", "1024");
		pids[n++] = (uint32_t)parse_ulong(tok, "PID", 1, INT_MAX);
	}
	return n;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"all", no_argument, NULL, 'a'},
		{"frequency", required_argument, NULL, 'F'},
		{"duration", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"per-thread", no_argument, NULL, OPT_PER_THREAD},
		{"include-idle", no_argument, NULL, OPT_INCLUDE_IDLE},
		{"no-children", no_argument, NULL, OPT_NO_CHILDREN},
		{"map-size", required_argument, NULL, OPT_MAP_SIZE},
		{"top", required_argument, NULL, OPT_TOP},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	static uint32_t pids[MAX_PIDS];
	struct session_opts o = {
		.hz = DEFAULT_HZ,
		.follow_children = true,
		.top_n = 10,
		.map_entries = 0,
	};
	bool all = false, duration_set = false;
	int c;

	opterr = 0;
	/* '+': options end at the first non-option, which starts the command. */
	while ((c = getopt_long(argc, argv, "+:p:aF:d:o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o.npids = parse_pids(optarg, pids, o.npids);
			break;
		case 'a':
			all = true;
			break;
		case 'F':
			o.hz = (unsigned int)parse_ulong(optarg, "frequency", 1, MAX_HZ);
			break;
		case 'd':
			o.duration_ms = parse_duration_ms(optarg);
			duration_set = true;
			break;
		case 'o':
			if (!*optarg)
				usage_error("empty output file name%s", "");
			o.output = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "pprof") == 0)
				o.format = FORMAT_PPROF;
			else if (strcmp(optarg, "folded") == 0)
				o.format = FORMAT_FOLDED;
			else
				usage_error("unknown format '%s': expected pprof or folded",
					    optarg);
			break;
		case OPT_PER_THREAD:
			o.per_thread = true;
			break;
		case OPT_INCLUDE_IDLE:
			o.include_idle = true;
			break;
		case OPT_NO_CHILDREN:
			o.follow_children = false;
			break;
		case OPT_MAP_SIZE:
			o.map_entries = (uint32_t)parse_ulong(optarg, "map size", 256, 1u << 22);
			break;
		case OPT_TOP:
			o.top_n = (int)parse_ulong(optarg, "--top count", 0, 10000);
			break;
		case 'v':
			log_set_level(LOG_DEBUG);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case OPT_VERSION:
			printf("cprof %s (%s)\n", CPROF_VERSION, CPROF_GIT_REV);
			return 0;
		case ':':
			usage_error("option '%s' needs an argument", argv[optind - 1]);
			break;
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o.command = &argv[optind];
	if (o.command && o.npids)
		usage_error("-p and a command cannot be combined%s", "");
	if (all && (o.command || o.npids))
		usage_error("-a cannot be combined with -p or a command%s", "");
	o.pids = pids;
	if (!duration_set && !o.command)
		o.duration_ms = DEFAULT_DURATION_MS;
	if (!o.output)
		o.output = o.format == FORMAT_FOLDED ? "cprof.folded" : "cprof.pb.gz";
	return session__run(&o);
}
