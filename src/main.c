// SPDX-License-Identifier: MIT
/*
 * cprof command line: parses and validates options, then hands a
 * session_opts to session__run(). No other module reads options.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/http.h"
#include "deliver/labels.h"
#include "deliver/upload.h"
#include "resolve/debuginfod.h"
#include "lib/file.h"
#include "lib/kernel_caps.h"
#include "lib/log.h"
#include "lib/sigbus.h"
#include "lib/procfs.h"
#include "render.h"
#include "sampler_abi.h"
#include "session.h"
#include "signals.h"
#include "version.h"

#define DEFAULT_HZ	    99
#define DEFAULT_DURATION_MS 10000
/*
 * Our own ceiling: every sample runs the BPF program and walks two stacks;
 * past 10 kHz per CPU that is a measurable share of the machine and the
 * kernel starts to throttle the event (at -F 100000 a 2-CPU machine stalled).
 */
#define MAX_HZ		       10000
#define MAX_SAMPLE_RATE_SYSCTL "/proc/sys/kernel/perf_event_max_sample_rate"
#define MAX_PIDS	       1024
/* Continuous mode: prime, so sampling does not beat with the many 100 Hz timers. */
#define DEFAULT_CONTINUOUS_HZ	   19
#define DEFAULT_SPOOL_DIR	   "/var/spool/cprof"
#define DEFAULT_SPOOL_MAX	   (100ull << 20)
#define DEFAULT_TIMEOUT_MS	   10000
#define DEFAULT_DEBUGINFOD_WAIT_MS 5000
#define MAX_USER_LABELS		   32
#define MAX_TOKEN_BYTES		   8192

enum {
	OPT_FORMAT = 256,
	OPT_PER_THREAD,
	OPT_INCLUDE_IDLE,
	OPT_NO_CHILDREN,
	OPT_MAP_SIZE,
	OPT_TOP,
	OPT_DEBUG_DIR,
	OPT_CACHE_DIR,
	OPT_NO_CACHE,
	OPT_NO_DEBUGINFOD,
	OPT_NO_LINES,
	OPT_INLINES,
	OPT_DEBUGINFOD_TIMEOUT,
	OPT_DEBUGINFOD_MAX,
	OPT_DEBUGINFOD_MAX_FILES,
	OPT_FRAME_POINTERS,
	OPT_STACK_COPIES,
	OPT_MAX_STACK,
	OPT_JVM_PERF_MAP,
	OPT_SERVER,
	OPT_SERVER_PROTOCOL,
	OPT_INTERVAL,
	OPT_LABEL,
	OPT_TOKEN_FILE,
	OPT_BASIC_AUTH_FILE,
	OPT_HEADER,
	OPT_TENANT,
	OPT_SPOOL_DIR,
	OPT_SPOOL_MAX,
	OPT_TIMEOUT,
	OPT_CA_FILE,
	OPT_CERT,
	OPT_KEY,
	OPT_SERVER_NAME,
	OPT_INSECURE,
	OPT_VERSION,
	OPT_TITLE,
	OPT_MINWIDTH,
	OPT_INVERTED,
	OPT_SAMPLE_TYPE,
};

static const char usage_text[] =
	"Usage: cprof [OPTIONS] [-p PID[,PID...] | -a | -- COMMAND [ARGS...]]\n"
	"\n"
	"Samples CPU stacks (user and kernel) with eBPF and writes a symbolized\n"
	"profile in pprof format (gzipped profile.proto), as folded stacks, or as a\n"
	"flame graph (an SVG file to open in a browser, offline).\n"
	"\n"
	"What to profile (one of):\n"
	"  -p, --pid PID[,PID...]   running processes (-p may be repeated), all their\n"
	"                           threads and the children they start meanwhile\n"
	"  -a, --all                the whole system, all CPUs (the default when\n"
	"                           neither -p nor a command is given)\n"
	"  -- COMMAND [ARGS...]     start COMMAND, profile it (and its children) until\n"
	"                           it exits, and exit with its exit status\n"
	"  -i, --input FILE         profile nothing: draw FILE, a pprof profile (.pb.gz,\n"
	"                           cprof's, Go's, Parca's...) or folded stacks ('a;b;c\n"
	"                           COUNT' lines; - is stdin), as a flame graph (-o,\n"
	"                           default cprof.svg)\n"
	"\n"
	"Options:\n"
	"  -F, --frequency HZ       samples per second per CPU (default 99); at most\n"
	"                           10000 and the kernel's perf_event_max_sample_rate\n"
	"  -d, --duration SECONDS   stop after SECONDS, or 500ms, 5m, 1h (default 10;\n"
	"                           with a command: until it exits). Ctrl-C stops\n"
	"                           early and still writes the profile; a second\n"
	"                           Ctrl-C aborts (exit 130, no file written)\n"
	"  -o, --output FILE        where to write (default cprof.pb.gz, or cprof.folded\n"
	"                           or cprof.svg by --format); - is stdout; a name\n"
	"                           ending in .svg means --format svg; made 0600\n"
	"      --format FORMAT      pprof (default), folded (Brendan Gregg's 'a;b;c\n"
	"                           COUNT' lines for flamegraph.pl/speedscope) or svg\n"
	"                           (an interactive flame graph, one self-contained file)\n"
	"      --title TEXT         svg: the title (default: the command, the PIDs or\n"
	"                           the whole system)\n"
	"      --minwidth PERCENT   svg: frames narrower than this share of all samples\n"
	"                           are merged, one box per parent (default 0.1)\n"
	"      --inverted           svg: an icicle graph, the root at the top\n"
	"      --sample-type TYPE   -i of a pprof profile: the values to draw (cpu,\n"
	"                           alloc_space, ...; default samples, else the\n"
	"                           profile's default, else its last)\n"
	"      --per-thread         add a tid label (and a thread level in folded)\n"
	"      --include-idle       keep samples of idle CPUs (the swapper task)\n"
	"      --no-children        with -p or a command: do not follow child processes\n"
	"      --map-size N         stack/count map entries per drain interval\n"
	"                           (default 16384); raise it if samples are lost\n"
	"      --top N              functions listed in the summary (default 10)\n"
	"      --debug-dir DIR      where separate debug files of stripped binaries\n"
	"                           are looked for (default /usr/lib/debug)\n"
	"      --jvm-perf-map       at the profile's end, ask each running JVM (JDK 17+)\n"
	"                           with compiled code no perf map named to write its\n"
	"                           map, as 'jcmd PID Compiler.perfmap' does (sends it\n"
	"                           SIGQUIT); the maps of processes that exited, such\n"
	"                           as -XX:+DumpPerfMapAtExit's, are read without it\n"
	"      --no-lines           give pprof frames no source file and line: by\n"
	"                           default they get them from the DWARF line table\n"
	"                           of the file or its debug file, when it has one;\n"
	"                           and no inlined functions\n"
	"      --inlines            also show the functions the compiler inlined at\n"
	"                           each user frame's address (DWARF .debug_info), as\n"
	"                           frames of their own marked ' (inlined)' in folded\n"
	"                           stacks and the flame graph, and as Lines of its\n"
	"                           Location in pprof; costs memory at the profile's\n"
	"                           end (libc's debug file: about 10 MB)\n"
	"      --no-debuginfod      fetch no debug files: by default, with\n"
	"                           DEBUGINFOD_URLS set (as for perf and gdb), stripped\n"
	"                           files without a local one are fetched by build ID\n"
	"                           while sampling goes on, into the cache those tools\n"
	"                           share ($DEBUGINFOD_CACHE_PATH, else\n"
	"                           ~/.cache/debuginfod_client)\n"
	"      --debuginfod-timeout SECONDS\n"
	"                           how long the end of the run waits for debug files\n"
	"                           still downloading (default 5; units as for -d)\n"
	"      --debuginfod-max-bytes N\n"
	"                           the largest debug file taken, e.g. 500M (default\n"
	"                           2G, or DEBUGINFOD_MAXSIZE); a run downloads at\n"
	"                           most twice that, and the cache is kept under four\n"
	"                           times that (the files used longest ago removed)\n"
	"      --debuginfod-max-files N\n"
	"                           debug files a run asks the servers for (default\n"
	"                           64); the others are asked for by later runs\n"
	"      --cache-dir DIR      where the unwind tables built from programs' CFI,\n"
	"                           and their symbols, are kept, so that later runs\n"
	"                           read them back (for the very same file, of root's\n"
	"                           or yours, that no one else may write) instead of\n"
	"                           building them again (default $XDG_CACHE_HOME/cprof,\n"
	"                           ~/.cache/cprof; at most 64 MB)\n"
	"      --no-cache           keep no unwind tables or symbols between runs\n"
	"      --frame-pointers     walk user stacks by frame pointers only, not with\n"
	"                           the programs' unwind tables (.eh_frame); callers\n"
	"                           are then missing or wrong in code built without\n"
	"                           frame pointers (most distributions' binaries)\n"
	"      --stack-copies       walk user stacks in user space from a 16 KiB copy\n"
	"                           per sample, as perf does, not in the kernel (the\n"
	"                           way on kernels before 5.5); costs more CPU\n"
	"      --max-stack N        user frames kept per stack, 1 to 1024 (default\n"
	"                           127); deeper stacks end in a [truncated] frame\n"
	"  -v, --verbose            debug output, including libbpf's log\n"
	"  -h, --help               this help\n"
	"      --version            version\n"
	"\n"
	"Sending profiles to a server (Parca or Grafana Pyroscope):\n"
	"      --server URL         upload the profile, e.g. http://parca:7070 or\n"
	"                           https://pyroscope.example.com; if the upload fails,\n"
	"                           it is written to -o (default cprof.pb.gz) and cprof\n"
	"                           exits 3\n"
	"      --server-protocol P  auto (default: from the URL, else one probe),\n"
	"                           parca, pyroscope, or pyroscope-ingest (/ingest)\n"
	"      --interval DURATION  continuous mode: profile until stopped (or -d), one\n"
	"                           upload per interval, e.g. 10s or 1m; -F defaults to 19\n"
	"      --label NAME=VALUE   add a series label (repeatable); defaults: __name__,\n"
	"                           service_name, hostname, kernel_release, arch, and\n"
	"                           in whole-system mode pid, comm, cgroup, container_id,\n"
	"                           systemd_unit per process\n"
	"      --token-file FILE    bearer token (instead of CPROF_TOKEN)\n"
	"      --basic-auth-file FILE\n"
	"                           user:password for HTTP Basic auth (instead of\n"
	"                           CPROF_BASIC_AUTH), e.g. Grafana Cloud's stack ID\n"
	"                           and access token\n"
	"      --header 'NAME: VALUE'\n"
	"                           an extra request header (repeatable), e.g. a\n"
	"                           project or tenant header a server asks for\n"
	"      --tenant ID          X-Scope-OrgID header, for multi-tenant servers\n"
	"      --timeout SECONDS    connect, send and receive timeouts (default 10;\n"
	"                           units as for -d)\n"
	"      --spool-dir DIR      continuous mode: where intervals wait while the server\n"
	"                           is unreachable (default " DEFAULT_SPOOL_DIR "): a\n"
	"                           directory of cprof's user that only it can write\n"
	"      --spool-max-bytes N  its size cap, e.g. 500M (default 100M); the oldest\n"
	"                           intervals are dropped first, and counted\n"
	"  https:// (TLS 1.2 and 1.3) checks the server's certificate and name against\n"
	"  SSL_CERT_FILE or SSL_CERT_DIR if set, else the system's CA bundle\n"
	"  (/etc/ssl/certs/ca-certificates.crt and the other usual places):\n"
	"      --ca-file FILE       trust the CAs in this PEM file instead\n"
	"      --cert FILE          a client certificate (PEM), for servers that ask\n"
	"                           for one (mutual TLS)\n"
	"      --key FILE           its private key (PEM or DER, not encrypted)\n"
	"      --server-name NAME   the name to send (SNI) and to find in the\n"
	"                           certificate, instead of the URL's host (e.g. for\n"
	"                           an IP address URL)\n"
	"      --insecure-skip-verify\n"
	"                           check no certificate (warns on every run)\n"
	"  Credentials come from the environment, never the command line:\n"
	"  CPROF_TOKEN (a bearer token) or CPROF_BASIC_AUTH (user:password).\n"
	"  Proxies, as curl reads them: https_proxy (HTTPS_PROXY) for https:// servers,\n"
	"  tunnelled with CONNECT; http_proxy (HTTP_PROXY) for http:// ones; all_proxy\n"
	"  for either; no_proxy (NO_PROXY) lists hosts to reach directly. A proxy's\n"
	"  own login goes in its URL: http://user:password@proxy:3128.\n"
	"\n"
	"At the end cprof prints a summary to stderr: samples, duration, processes,\n"
	"lost samples with the reason, and the top functions by self samples.\n"
	"\n"
	"Examples:\n"
	"  cprof -p 1234 -d 30                profile PID 1234 for 30 s\n"
	"  cprof -F 999 -- ./build.sh         profile a command at 999 Hz\n"
	"  cprof -a -d 5 -o host.pb.gz        the whole system for 5 s\n"
	"  cprof -o make.svg -- make          a flame graph of a command: open make.svg\n"
	"  cprof -p 1234 -d 10 --server http://parca:7070\n"
	"  cprof -a --interval 10s --server http://pyroscope:4040 --label env=prod\n"
	"  go tool pprof -top cprof.pb.gz     read the result\n"
	"\n"
	"Exit status: 0 on success; 1 on a runtime error (the reason is printed);\n"
	"2 on a usage error; 3 when the profile was collected and saved but the\n"
	"server did not take it (one-shot: saved to -o; continuous: intervals left in\n"
	"the spool, refused or dropped); with a command, the command's status (127\n"
	"if it could not be started, 128+N if it was killed by signal N); 130 when a\n"
	"second signal aborted the run.\n"
	"Needs root, or CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8).\n";

static __attribute__((noreturn, format(printf, 1, 2))) void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("cprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'cprof --help' for more information.\n", stderr);
	exit(2);
}

static unsigned long parse_ulong(const char *s, const char *what, unsigned long min,
				 unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		usage_error("invalid %s '%s': expected a number from %lu to %lu", what, s, min,
			    max);
	return v;
}

/* Seconds, or a number with a unit: 500ms, 10s, 5m, 1h. */
static uint64_t parse_duration_ms(const char *s, const char *what)
{
	double v, unit = 1000.0;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (end != s) {
		if (strcmp(end, "ms") == 0)
			unit = 1.0, end += 2;
		else if (strcmp(end, "s") == 0)
			end++;
		else if (strcmp(end, "m") == 0)
			unit = 60000.0, end++;
		else if (strcmp(end, "h") == 0)
			unit = 3600000.0, end++;
	}
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v * unit > 365.0 * 86400000)
		usage_error("invalid %s '%s': expected seconds, e.g. 10 or 2.5, or 500ms, 5m, 1h",
			    what, s);
	return (uint64_t)(v * unit + 0.5) ? (uint64_t)(v * unit + 0.5) : 1;
}

/* A byte count with an optional K, M or G (powers of 1024). */
static uint64_t parse_size(const char *s, const char *what, uint64_t min, uint64_t max)
{
	unsigned long long v;
	uint64_t mul = 1;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end != s && end[0] && !end[1]) {
		if (*end == 'K' || *end == 'k')
			mul = 1ull << 10, end++;
		else if (*end == 'M')
			mul = 1ull << 20, end++;
		else if (*end == 'G')
			mul = 1ull << 30, end++;
	}
	if (errno || end == s || *end || s[0] == '-' || v > max / mul || v * mul < min)
		usage_error("invalid %s '%s': expected bytes, e.g. 500M, from %llu to %lluG", what,
			    s, (unsigned long long)min, (unsigned long long)(max >> 30));
	return v * mul;
}

/* A secret from a file, trailing white space dropped; exits 1 if it cannot be read. */
static void read_secret_file(const char *path, const char *what, char *buf, int size)
{
	int n = file__read_small(path, buf, (size_t)size);

	if (n < 0) {
		fprintf(stderr, "cprof: cannot read the %s file '%s': %s\n", what, path,
			strerror(-n));
		exit(1);
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' ||
			 buf[n - 1] == '\t'))
		buf[--n] = '\0';
	if (n == 0 || n == size - 1) {
		fprintf(stderr, "cprof: the %s file '%s' is empty or larger than %d bytes\n", what,
			path, size - 2);
		exit(1);
	}
}

/* Everything the command line says, before it becomes a session. */
struct cli {
	struct session_opts o;
	struct upload_opts upload;
	struct labels labels;
	uint32_t pids[MAX_PIDS];
	char debug_dir[PATH_MAX];
	const char *token_file, *basic_auth_file;
	char token[MAX_TOKEN_BYTES + 2], basic_auth[MAX_TOKEN_BYTES + 2];
	struct http_header headers[UPLOAD_MAX_HEADERS];
	char header_names[UPLOAD_MAX_HEADERS][64];
	char ca_dir[PATH_MAX];
	struct debuginfod_opts debuginfod;
	char debuginfod_cache[PATH_MAX];
	bool no_debuginfod;
	bool all, hz_set, duration_set;
	/* --format given; an option of the svg format given */
	bool format_set, svg_set;
	/* -i: a profile to draw, not to take; --sample-type: which of its values */
	const char *input, *sample_type;
	bool server_only_set; /* an option that means nothing without --server */
};

/*
 * The TLS options: only for https://. The trusted CAs: --ca-file, else
 * SSL_CERT_FILE or SSL_CERT_DIR as OpenSSL reads them (of a list of
 * directories, the first), else the system's (tls.c).
 */
static void finish_tls_opts(const struct http_url *url, struct cli *cli)
{
	struct upload_opts *u = &cli->upload;
	const char *env;

	if (!url->tls) {
		if (u->tls.ca_file || u->tls.cert_file || u->tls.key_file || u->tls.insecure ||
		    u->server_name)
			usage_error("--ca-file, --cert, --key, --server-name and "
				    "--insecure-skip-verify need an https:// server URL");
		return;
	}
	if (!u->tls.cert_file != !u->tls.key_file)
		usage_error("a client certificate needs both --cert and --key");
	if (u->tls.ca_file && u->tls.insecure)
		usage_error("--ca-file and --insecure-skip-verify cannot be combined");
	if (u->tls.ca_file || u->tls.insecure)
		return;
	env = getenv("SSL_CERT_FILE");
	if (env && *env) {
		u->tls.ca_file = env;
		return;
	}
	env = getenv("SSL_CERT_DIR");
	if (env && *env) {
		snprintf(cli->ca_dir, sizeof(cli->ca_dir), "%.*s", (int)strcspn(env, ":"), env);
		u->tls.ca_dir = cli->ca_dir;
	}
}

/* A variable that curl reads in lowercase first, then in uppercase. */
static const char *env_either(const char *lower, const char *upper)
{
	const char *v = getenv(lower);

	return v && *v ? v : getenv(upper);
}

/* The proxies of uploads and debuginfod fetches, as curl reads them. */
static void read_proxy_env(struct proxy_env *p)
{
	*p = (struct proxy_env){
		.https_proxy = env_either("https_proxy", "HTTPS_PROXY"),
		.http_proxy = env_either("http_proxy", "HTTP_PROXY"),
		.all_proxy = env_either("all_proxy", "ALL_PROXY"),
		.no_proxy = env_either("no_proxy", "NO_PROXY"),
	};
}

/* Checks and completes the --server options; usage errors exit 2. */
static void finish_upload_opts(struct cli *cli)
{
	struct session_opts *o = &cli->o;
	struct upload_opts *u = &cli->upload;
	struct http_url url;
	const char *why;

	if (!u->url) {
		if (cli->server_only_set)
			usage_error(
				"--interval, --label, --token-file, --basic-auth-file, --header, "
				"--tenant, --timeout, the TLS, spool and protocol options need "
				"--server");
		return;
	}
	if (http__parse_url(u->url, &url, &why))
		usage_error("bad server URL '%s': %s", u->url, why);
	finish_tls_opts(&url, cli);
	if (o->format == FORMAT_FOLDED)
		usage_error("--server sends pprof: --format folded cannot be combined with it");
	if (o->format == FORMAT_SVG && o->interval_ms)
		usage_error("--interval writes no file: --format svg cannot be combined with it");
	if (o->interval_ms && o->output_given)
		usage_error("--interval cannot be combined with -o: intervals the server misses "
			    "wait in --spool-dir");
	u->token = getenv("CPROF_TOKEN");
	if (cli->token_file) {
		read_secret_file(cli->token_file, "token", cli->token, sizeof(cli->token));
		u->token = cli->token;
	}
	u->basic_auth = getenv("CPROF_BASIC_AUTH");
	if (cli->basic_auth_file) {
		read_secret_file(cli->basic_auth_file, "basic auth", cli->basic_auth,
				 sizeof(cli->basic_auth));
		u->basic_auth = cli->basic_auth;
	}
	if (u->token && !*u->token)
		u->token = NULL;
	if (u->basic_auth && !*u->basic_auth)
		u->basic_auth = NULL;
	if (u->token && u->basic_auth)
		usage_error("both a bearer token (CPROF_TOKEN or --token-file) and "
			    "basic auth (CPROF_BASIC_AUTH or --basic-auth-file) are set; use one");
	o->upload = u;
}

static void parse_pids(char *s, struct cli *cli)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (cli->o.npids == MAX_PIDS)
			usage_error("too many PIDs (at most %d)", MAX_PIDS);
		cli->pids[cli->o.npids++] = (uint32_t)parse_ulong(tok, "PID", 1, INT_MAX);
	}
}

static void parse_debug_dir(const char *arg, struct cli *cli)
{
	/* Debug files are opened from "/", whatever the working directory. */
	if (!realpath(arg, cli->debug_dir))
		usage_error("debug directory '%s': %s", arg, strerror(errno));
	cli->o.debug_dir = cli->debug_dir;
}

/* --header 'Name: value'; upload.c judges the name and value. */
static void parse_header(const char *arg, struct cli *cli)
{
	struct upload_opts *u = &cli->upload;
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : 0;

	if (u->nheaders == UPLOAD_MAX_HEADERS)
		usage_error("too many headers (at most %d)", UPLOAD_MAX_HEADERS);
	if (!n || n >= sizeof(cli->header_names[0]))
		usage_error("invalid header '%s': expected 'Name: value'", arg);
	memcpy(cli->header_names[u->nheaders], arg, n);
	cli->header_names[u->nheaders][n] = '\0';
	colon++;
	while (*colon == ' ' || *colon == '\t')
		colon++;
	cli->headers[u->nheaders] =
		(struct http_header){.name = cli->header_names[u->nheaders], .value = colon};
	u->headers = cli->headers;
	u->nheaders++;
}

/* The options of --server; false if c is not one of them. */
static bool parse_server_option(int c, char *arg, struct cli *cli)
{
	const char *why;

	switch (c) {
	case OPT_SERVER:
		cli->upload.url = arg;
		return true;
	case OPT_SERVER_PROTOCOL:
		if (upload__parse_protocol(arg, &cli->upload.protocol))
			usage_error("unknown server protocol '%s': expected auto, parca, "
				    "pyroscope or pyroscope-ingest",
				    arg);
		break;
	case OPT_INTERVAL:
		cli->o.interval_ms = parse_duration_ms(arg, "interval");
		if (cli->o.interval_ms < 1000)
			usage_error("interval '%s' is too short: at least 1s", arg);
		break;
	case OPT_LABEL:
		if (cli->labels.n == MAX_USER_LABELS)
			usage_error("too many labels (at most %d)", MAX_USER_LABELS);
		why = labels__parse_arg(&cli->labels, arg);
		if (why)
			usage_error("invalid label '%s': %s", arg, why);
		break;
	case OPT_TOKEN_FILE:
		cli->token_file = arg;
		break;
	case OPT_BASIC_AUTH_FILE:
		cli->basic_auth_file = arg;
		break;
	case OPT_HEADER:
		parse_header(arg, cli);
		break;
	case OPT_TENANT:
		if (!*arg || strpbrk(arg, "\r\n"))
			usage_error("invalid tenant '%s'", arg);
		cli->upload.tenant = arg;
		break;
	case OPT_SPOOL_DIR:
		if (!*arg)
			usage_error("empty spool directory");
		cli->o.spool_dir = arg;
		break;
	case OPT_SPOOL_MAX:
		cli->o.spool_max_bytes = parse_size(arg, "spool size", 64u << 10, 1ull << 40);
		break;
	case OPT_CA_FILE:
		cli->upload.tls.ca_file = arg;
		break;
	case OPT_CERT:
		cli->upload.tls.cert_file = arg;
		break;
	case OPT_KEY:
		cli->upload.tls.key_file = arg;
		break;
	case OPT_SERVER_NAME:
		if (!*arg || strpbrk(arg, " /:@\r\n"))
			usage_error("invalid server name '%s'", arg);
		cli->upload.server_name = arg;
		break;
	case OPT_INSECURE:
		cli->upload.tls.insecure = true;
		break;
	case OPT_TIMEOUT:
		cli->upload.timeout_ms = (int)parse_duration_ms(arg, "timeout");
		if (cli->upload.timeout_ms < 100 || cli->upload.timeout_ms > 3600000)
			usage_error("timeout '%s' out of range: 100ms to 1h", arg);
		break;
	default:
		return false;
	}
	cli->server_only_set = true;
	return true;
}

static void parse_format(const char *arg, struct cli *cli)
{
	if (strcmp(arg, "pprof") == 0)
		cli->o.format = FORMAT_PPROF;
	else if (strcmp(arg, "folded") == 0)
		cli->o.format = FORMAT_FOLDED;
	else if (strcmp(arg, "svg") == 0)
		cli->o.format = FORMAT_SVG;
	else
		usage_error("unknown format '%s': expected pprof, folded or svg", arg);
	cli->format_set = true;
}

/* --minwidth 0.5 or 0.5%: percent of all samples. */
static double parse_percent(const char *s, const char *what)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (end != s && *end == '%')
		end++;
	if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 100)
		usage_error("invalid %s '%s': expected a percentage from 0 to 100, e.g. 0.1", what,
			    s);
	return v;
}

static void parse_svg_option(int c, const char *arg, struct cli *cli)
{
	struct svg_style *svg = &cli->o.svg;

	if (c == OPT_TITLE)
		svg->title = arg;
	else if (c == OPT_MINWIDTH)
		svg->minwidth = parse_percent(arg, "--minwidth");
	else
		svg->inverted = true;
	cli->svg_set = true;
}

/* What to profile, how, and where the profile goes; false if c is not one of them. */
static bool parse_profile_option(int c, char *arg, struct cli *cli)
{
	struct session_opts *o = &cli->o;

	switch (c) {
	case 'p':
		parse_pids(arg, cli);
		break;
	case 'a':
		cli->all = true;
		break;
	case 'i':
		cli->input = arg;
		break;
	case OPT_SAMPLE_TYPE:
		if (!*arg)
			usage_error("--sample-type needs a type, e.g. cpu");
		cli->sample_type = arg;
		break;
	case 'F':
		o->hz = (unsigned int)parse_ulong(arg, "frequency", 1, MAX_HZ);
		cli->hz_set = true;
		break;
	case 'd':
		o->duration_ms = parse_duration_ms(arg, "duration");
		cli->duration_set = true;
		break;
	case 'o':
		if (!*arg)
			usage_error("empty output file name");
		o->output = arg;
		o->output_given = true;
		break;
	case OPT_FORMAT:
		parse_format(arg, cli);
		break;
	case OPT_TITLE:
	case OPT_MINWIDTH:
	case OPT_INVERTED:
		parse_svg_option(c, arg, cli);
		break;
	case OPT_PER_THREAD:
		o->per_thread = true;
		break;
	case OPT_INCLUDE_IDLE:
		o->include_idle = true;
		break;
	case OPT_NO_CHILDREN:
		o->follow_children = false;
		break;
	case OPT_FRAME_POINTERS:
		o->frame_pointers = true;
		break;
	case OPT_JVM_PERF_MAP:
		o->jvm_perf_map = true;
		break;
	case OPT_STACK_COPIES:
		o->stack_copies = true;
		break;
	case OPT_MAX_STACK:
		o->max_stack = (uint32_t)parse_ulong(arg, "--max-stack frame count", 1,
						     CPROF_MAX_STACK_LIMIT);
		break;
	case OPT_MAP_SIZE:
		o->map_entries = (uint32_t)parse_ulong(arg, "map size", 256, 1u << 22);
		break;
	case OPT_TOP:
		o->top_n = (int)parse_ulong(arg, "--top count", 0, 10000);
		break;
	case OPT_DEBUG_DIR:
		parse_debug_dir(arg, cli);
		break;
	case OPT_CACHE_DIR:
		if (!*arg)
			usage_error("--cache-dir needs a directory (--no-cache keeps none)");
		o->cache_dir = arg;
		break;
	case OPT_NO_CACHE:
		o->cache_dir = "";
		break;
	case OPT_NO_DEBUGINFOD:
		cli->no_debuginfod = true;
		break;
	case OPT_NO_LINES:
		o->no_lines = true;
		break;
	case OPT_INLINES:
		o->inlines = true;
		break;
	case OPT_DEBUGINFOD_TIMEOUT:
		o->debuginfod_wait_ms = parse_duration_ms(arg, "debuginfod timeout");
		break;
	case OPT_DEBUGINFOD_MAX:
		cli->debuginfod.max_bytes = parse_size(arg, "debuginfod size", 4096, 1ull << 40);
		break;
	case OPT_DEBUGINFOD_MAX_FILES:
		cli->debuginfod.max_files =
			(uint32_t)parse_ulong(arg, "debuginfod file count", 1, 1000000);
		break;
	default:
		return false;
	}
	return true;
}

static const struct option longopts[] = {
	{"pid", required_argument, NULL, 'p'},
	{"all", no_argument, NULL, 'a'},
	{"input", required_argument, NULL, 'i'},
	{"frequency", required_argument, NULL, 'F'},
	{"duration", required_argument, NULL, 'd'},
	{"output", required_argument, NULL, 'o'},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"title", required_argument, NULL, OPT_TITLE},
	{"minwidth", required_argument, NULL, OPT_MINWIDTH},
	{"inverted", no_argument, NULL, OPT_INVERTED},
	{"sample-type", required_argument, NULL, OPT_SAMPLE_TYPE},
	{"per-thread", no_argument, NULL, OPT_PER_THREAD},
	{"include-idle", no_argument, NULL, OPT_INCLUDE_IDLE},
	{"no-children", no_argument, NULL, OPT_NO_CHILDREN},
	{"map-size", required_argument, NULL, OPT_MAP_SIZE},
	{"top", required_argument, NULL, OPT_TOP},
	{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	{"cache-dir", required_argument, NULL, OPT_CACHE_DIR},
	{"no-cache", no_argument, NULL, OPT_NO_CACHE},
	{"no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD},
	{"no-lines", no_argument, NULL, OPT_NO_LINES},
	{"inlines", no_argument, NULL, OPT_INLINES},
	{"debuginfod-timeout", required_argument, NULL, OPT_DEBUGINFOD_TIMEOUT},
	{"debuginfod-max-bytes", required_argument, NULL, OPT_DEBUGINFOD_MAX},
	{"debuginfod-max-files", required_argument, NULL, OPT_DEBUGINFOD_MAX_FILES},
	{"frame-pointers", no_argument, NULL, OPT_FRAME_POINTERS},
	{"stack-copies", no_argument, NULL, OPT_STACK_COPIES},
	{"max-stack", required_argument, NULL, OPT_MAX_STACK},
	{"jvm-perf-map", no_argument, NULL, OPT_JVM_PERF_MAP},
	{"server", required_argument, NULL, OPT_SERVER},
	{"server-protocol", required_argument, NULL, OPT_SERVER_PROTOCOL},
	{"interval", required_argument, NULL, OPT_INTERVAL},
	{"label", required_argument, NULL, OPT_LABEL},
	{"token-file", required_argument, NULL, OPT_TOKEN_FILE},
	{"basic-auth-file", required_argument, NULL, OPT_BASIC_AUTH_FILE},
	{"header", required_argument, NULL, OPT_HEADER},
	{"tenant", required_argument, NULL, OPT_TENANT},
	{"spool-dir", required_argument, NULL, OPT_SPOOL_DIR},
	{"spool-max-bytes", required_argument, NULL, OPT_SPOOL_MAX},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"ca-file", required_argument, NULL, OPT_CA_FILE},
	{"cert", required_argument, NULL, OPT_CERT},
	{"key", required_argument, NULL, OPT_KEY},
	{"server-name", required_argument, NULL, OPT_SERVER_NAME},
	{"insecure-skip-verify", no_argument, NULL, OPT_INSECURE},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

/*
 * The option as the user typed it. getopt leaves optind past a missing
 * argument, and for a short option argv[optind - 1] need not be the option at
 * all (it may be past the end), so short options are named from optopt.
 */
static __attribute__((noreturn)) void missing_argument(char **argv, int argc)
{
	const char *typed = optind - 1 < argc ? argv[optind - 1] : NULL;

	if (typed && strncmp(typed, "--", 2) == 0)
		usage_error("option '%.*s' needs an argument", (int)strcspn(typed, "="), typed);
	if (optopt > 0 && optopt < 256)
		usage_error("option '-%c' needs an argument", optopt);
	for (const struct option *lo = longopts; lo->name; lo++)
		if (lo->val == optopt)
			usage_error("option '--%s' needs an argument", lo->name);
	usage_error("an option needs an argument");
}

static void parse_args(int argc, char **argv, struct cli *cli)
{
	int c;

	opterr = 0;
	/* '+': options end at the first non-option, which starts the command. */
	while ((c = getopt_long(argc, argv, "+:p:ai:F:d:o:vh", longopts, NULL)) != -1) {
		if (parse_profile_option(c, optarg, cli) || parse_server_option(c, optarg, cli))
			continue;
		switch (c) {
		case 'v':
			log_set_level(LOG_DEBUG);
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case OPT_VERSION:
			printf("cprof %s (%s)\n", CPROF_VERSION, CPROF_GIT_REV);
			exit(0);
		case ':':
			missing_argument(argv, argc);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		cli->o.command = &argv[optind];
	if (cli->o.frame_pointers && cli->o.max_stack > CPROF_MAX_STACK_DEPTH)
		usage_error("--max-stack above 127 needs the unwind tables: with --frame-pointers "
			    "the kernel reads stacks, 127 frames at most");
	if (cli->o.frame_pointers && cli->o.stack_copies)
		usage_error("--frame-pointers and --stack-copies are two ways to walk user stacks: "
			    "choose one");
}

/* As perf does: the kernel refuses a sampling event faster than its sysctl allows. */
static void check_kernel_max_rate(unsigned int hz)
{
	uint64_t max;

	if (procfs__perf_max_sample_rate(&max) || hz <= max)
		return;
	usage_error("-F %u is above the kernel's limit of %" PRIu64
		    " Hz (kernel.perf_event_max_sample_rate in " MAX_SAMPLE_RATE_SYSCTL
		    "): lower -F or raise the limit",
		    hz, max);
}

/* The format -o names (NAME.svg) unless --format said it, its file name, its options. */
static void finish_format(struct cli *cli)
{
	struct session_opts *o = &cli->o;
	size_t n = o->output ? strlen(o->output) : 0;

	if (!cli->format_set && n > 4 && !strcasecmp(o->output + n - 4, ".svg"))
		o->format = FORMAT_SVG;
	if (cli->svg_set && o->format != FORMAT_SVG)
		usage_error("--title, --minwidth and --inverted are for the flame graph: --format "
			    "svg or -o NAME.svg");
	if (!o->output)
		o->output = o->format == FORMAT_FOLDED ? "cprof.folded"
			    : o->format == FORMAT_SVG  ? "cprof.svg"
						       : "cprof.pb.gz";
}

/*
 * The debuginfod servers and cache as the environment gives them (elfutils'
 * variables); none unless DEBUGINFOD_URLS names one and --no-debuginfod
 * was not given. --debuginfod-max-bytes wins over DEBUGINFOD_MAXSIZE.
 */
static void finish_debuginfod(struct cli *cli)
{
	struct debuginfod_opts *d = &cli->debuginfod;
	uint64_t max = d->max_bytes;

	if (!cli->o.debuginfod_wait_ms)
		cli->o.debuginfod_wait_ms = DEFAULT_DEBUGINFOD_WAIT_MS;
	if (cli->no_debuginfod)
		return;
	debuginfod_opts__from_env(d, cli->debuginfod_cache, sizeof(cli->debuginfod_cache));
	if (max)
		d->max_bytes = max;
	if (!d->urls || !d->urls[strspn(d->urls, " \t\n")])
		return;
	d->proxy_env = &cli->upload.proxy_env;
	cli->o.debuginfod = d;
}

/* -i: a profile drawn, nothing profiled. */
static int draw_file(struct cli *cli)
{
	struct session_opts *o = &cli->o;
	struct render_opts r = {
		.input = cli->input, .svg = &o->svg, .sample_type = cli->sample_type};

	if (o->command || o->npids || cli->all || cli->upload.url || cli->server_only_set)
		usage_error("-i draws a profile already taken: no -p, -a, command or --server");
	if (cli->format_set && o->format != FORMAT_SVG)
		usage_error("-i draws a flame graph: --format svg only");
	o->format = FORMAT_SVG;
	finish_format(cli);
	r.output = o->output;
	return render__run(&r);
}

/* Combinations and defaults that depend on more than one option. */
static void finish_opts(struct cli *cli)
{
	struct session_opts *o = &cli->o;

	if (o->command && o->npids)
		usage_error("-p and a command cannot be combined");
	if (cli->sample_type)
		usage_error("--sample-type chooses the values of a pprof profile drawn with -i");
	if (cli->all && (o->command || o->npids))
		usage_error("-a cannot be combined with -p or a command");
	o->pids = cli->pids;
	read_proxy_env(&cli->upload.proxy_env);
	finish_upload_opts(cli);
	o->labels = &cli->labels;
	if (!o->spool_dir)
		o->spool_dir = DEFAULT_SPOOL_DIR;
	if (!o->spool_max_bytes)
		o->spool_max_bytes = DEFAULT_SPOOL_MAX;
	if (o->interval_ms && !cli->hz_set)
		o->hz = DEFAULT_CONTINUOUS_HZ;
	check_kernel_max_rate(o->hz);
	finish_debuginfod(cli);
	/* Continuous mode runs until stopped, unless -d bounds it. */
	if (!cli->duration_set && !o->command && !o->interval_ms)
		o->duration_ms = DEFAULT_DURATION_MS;
	finish_format(cli);
}

int main(int argc, char **argv)
{
	/* Set here, not by an initializer: 26 KB of zeros need no room in the file. */
	static struct cli cli;

	cli.o = (struct session_opts){.hz = DEFAULT_HZ,
				      .follow_children = true,
				      .top_n = 10,
				      .svg.minwidth = SVG_DEFAULT_MINWIDTH};
	cli.upload = (struct upload_opts){.protocol = UPLOAD_AUTO,
					  .user_agent = "cprof/" CPROF_VERSION,
					  .timeout_ms = DEFAULT_TIMEOUT_MS};

	/* First: a Ctrl-C at any moment from here on ends cprof in order. */
	signals__install();
	/* A user's file truncated while cprof reads it ends that read, not cprof (lib/sigbus.h). */
	if (sigbus__install())
		pr_warn("cannot catch SIGBUS: a file truncated while cprof reads it ends cprof");
	parse_args(argc, argv, &cli);
	if (cli.input)
		return draw_file(&cli);
	finish_opts(&cli);
	/* A test's knob (docs/testing.md): behave as an older kernel would make cprof behave. */
	if (kernel_caps__init()) {
		pr_err("CPROF_KERNEL_AS=%s: not a kernel release from 4.18 on, such as 5.4",
		       getenv("CPROF_KERNEL_AS"));
		return 2;
	}
	return session__run(&cli.o);
}
