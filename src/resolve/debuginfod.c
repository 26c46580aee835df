// SPDX-License-Identifier: MIT
/*
 * The debuginfod client; see debuginfod.h, and docs/design.md for the cache
 * layout it shares with elfutils' libdebuginfod.
 *
 * Inside the cache everything goes through directory descriptors opened
 * without following symbolic links: cprof often runs as root, and a cache
 * under a user's home must not lead it to write or delete elsewhere. The
 * root directory itself is the user's choice and is taken as it is.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_MODULE "debuginfod"
#include "net/http.h"
#include "net/proxy.h"
#include "lib/cancel.h"
#include "lib/clock.h"
#include "lib/elf_build_id.h"
#include "lib/file.h"
#include "lib/log.h"
#include "resolve/debuginfod.h"

#define PATH_SIZE   4096
#define TARGET_SIZE 4096
/* elfutils' names in the cache: <root>/<build ID>/debuginfo, and its control file. */
#define FILE_NAME	"debuginfo"
#define CACHE_MISS_NAME "cache_miss_s"

struct server {
	struct http_url url;
	char text[256]; /* as configured, for messages */
};

struct debuginfod {
	struct server *servers;
	size_t nservers;
	char cache_dir[PATH_SIZE];
	const struct tls_client *tls;
	const struct proxy_env *proxy_env;
	int timeout_ms;
	uint64_t max_bytes;
	uint32_t max_files;
	const struct cancel *cancel;
	struct run *run;
};

/* What the fetches of every thread share: counts changed atomically, pruning under the lock. */
struct run {
	struct debuginfod_budget spent;
	pthread_mutex_t prune_lock;
};

/* One fetch: the build ID, the cache's descriptors, the temporary file being written. */
struct fetch {
	const struct debuginfod *d;
	struct debuginfod_result *res;
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t id_len;
	int root_fd; /* the cache's root */
	int dir_fd;  /* <root>/<build ID> */
	int tmp_fd;
	char tmp_name[32];
	int write_err;	   /* the sink's failure, which is the cache's, not the server's */
	uint64_t max_body; /* the largest file this fetch may take: the file's cap or the run's */
	bool run_capped;   /* max_body is what the run has left, below the file's cap */
};

static const char *const status_names[DEBUGINFOD_NSTATUS] = {
	[DEBUGINFOD_FROM_CACHE] = "from cache",
	[DEBUGINFOD_DOWNLOADED] = "downloaded",
	[DEBUGINFOD_OFF] = "off",
	[DEBUGINFOD_CACHED_MISS] = "cached miss",
	[DEBUGINFOD_NOT_FOUND] = "not found",
	[DEBUGINFOD_SERVER_ERROR] = "server error",
	[DEBUGINFOD_TIMEOUT] = "timeout",
	[DEBUGINFOD_TOO_LARGE] = "too large",
	[DEBUGINFOD_BUILD_ID_MISMATCH] = "build ID mismatch",
	[DEBUGINFOD_NOT_ELF] = "not an ELF file",
	[DEBUGINFOD_CONNECTION_FAILED] = "connection failed",
	[DEBUGINFOD_REDIRECT_LOOP] = "redirect loop",
	[DEBUGINFOD_CANCELLED] = "cancelled",
	[DEBUGINFOD_CACHE_NOT_WRITABLE] = "cache not writable",
	[DEBUGINFOD_BAD_BUILD_ID] = "bad build ID",
	[DEBUGINFOD_RUN_FILES_CAP] = "over the run's file cap",
	[DEBUGINFOD_RUN_BYTES_CAP] = "over the run's byte cap",
};

const char *debuginfod_status__name(enum debuginfod_status s)
{
	return (unsigned)s < DEBUGINFOD_NSTATUS ? status_names[s] : "?";
}

/* Sets the outcome and its line; returns err, for `return outcome(...)`. */
static int __attribute__((format(printf, 4, 5)))
outcome(struct debuginfod_result *res, enum debuginfod_status status, int err, const char *fmt, ...)
{
	va_list ap;

	res->status = status;
	va_start(ap, fmt);
	vsnprintf(res->why, sizeof(res->why), fmt, ap);
	va_end(ap);
	return err;
}

/* A decimal number as elfutils' atol() and fscanf("%ld") read one, or dflt. */
static long parse_long(const char *text, long dflt)
{
	char *end;
	long v;

	if (!text)
		return dflt;
	v = strtol(text, &end, 10);
	return end == text ? dflt : v;
}

long debuginfod__cache_miss_s(const char *text)
{
	return parse_long(text, DEBUGINFOD_CACHE_MISS_S);
}

/* dir/name, without doubling a slash dir ends with; false when it did not fit. */
static bool join(char *buf, size_t size, const char *dir, const char *name)
{
	size_t n = strlen(dir);

	return snprintf(buf, size, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name) <
	       (int)size;
}

const char *debuginfod__cache_dir(const char *cache_path, const char *xdg_cache_home,
				  const char *home, char *buf, size_t size)
{
	struct stat st;

	if (cache_path && *cache_path) {
		snprintf(buf, size, "%s", cache_path);
		return buf;
	}
	if (!home || !*home)
		home = "/";
	/* Where elfutils kept its cache before 0.180, still used where it exists. */
	if (join(buf, size, home, ".debuginfod_client_cache") && !stat(buf, &st))
		return buf;
	if (xdg_cache_home && *xdg_cache_home)
		join(buf, size, xdg_cache_home, "debuginfod_client");
	else
		join(buf, size, home, ".cache/debuginfod_client");
	return buf;
}

void debuginfod_opts__from_env(struct debuginfod_opts *o, char *cache_buf, size_t size)
{
	long v;

	o->urls = getenv("DEBUGINFOD_URLS");
	o->cache_dir =
		debuginfod__cache_dir(getenv("DEBUGINFOD_CACHE_PATH"), getenv("XDG_CACHE_HOME"),
				      getenv("HOME"), cache_buf, size);
	v = parse_long(getenv("DEBUGINFOD_MAXTIME"), 0);
	if (v > 0)
		o->timeout_ms = v > INT_MAX / 1000 ? INT_MAX : (int)v * 1000;
	v = parse_long(getenv("DEBUGINFOD_MAXSIZE"), 0);
	if (v > 0)
		o->max_bytes = (uint64_t)v;
}

static bool same_server(const struct http_url *a, const struct http_url *b)
{
	return a->tls == b->tls && !strcmp(a->hostport, b->hostport) && !strcmp(a->path, b->path);
}

/* Adds the server of one DEBUGINFOD_URLS token, unless it is to be skipped. */
static int add_server(struct debuginfod *d, const char *token)
{
	struct server s = {0}, *ns;
	const char *why;
	size_t i;

	/* elfutils' IMA verification policy for the servers after it: cprof checks build IDs. */
	if (!strncmp(token, "ima:", 4))
		return 0;
	if (!strncasecmp(token, "file://", 7)) {
		pr_warn("DEBUGINFOD_URLS: '%s' skipped: cprof fetches over http(s) only", token);
		return 0;
	}
	if (http__parse_url(token, &s.url, &why)) {
		pr_warn("DEBUGINFOD_URLS: '%s' skipped: %s", token, why);
		return 0;
	}
	if (s.url.tls && !d->tls) {
		pr_warn("DEBUGINFOD_URLS: '%s' skipped: no TLS configuration for https://", token);
		return 0;
	}
	for (i = 0; i < d->nservers; i++)
		if (same_server(&d->servers[i].url, &s.url))
			return 0;
	snprintf(s.text, sizeof(s.text), "%s", token);
	ns = reallocarray(d->servers, d->nservers + 1, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	d->servers = ns;
	d->servers[d->nservers++] = s;
	return 0;
}

/*
 * Whether the cache directory is there but not the user's own alone (a
 * missing one is made so): in a cache another user made, or may write
 * into, files could be swapped or linked under cprof, run as root. The
 * reason into why.
 */
static bool cache_dir_refused(const char *dir, char *why, size_t size)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool refused;

	if (fd < 0)
		return false;
	refused = file__check_private_dir(fd, why, size) == -EPERM;
	close(fd);
	return refused;
}

int debuginfod__new(const struct debuginfod_opts *o, struct debuginfod **out)
{
	struct debuginfod *d;
	char *urls = NULL, *tok, *save = NULL, why[96];
	int err = 0;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->tls = o->tls;
	d->proxy_env = o->proxy_env;
	d->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DEBUGINFOD_DEFAULT_TIMEOUT_MS;
	d->max_bytes = o->max_bytes ? o->max_bytes : DEBUGINFOD_DEFAULT_MAX_BYTES;
	d->max_files = o->max_files ? o->max_files : DEBUGINFOD_DEFAULT_MAX_FILES;
	d->run = calloc(1, sizeof(*d->run));
	if (!d->run) {
		err = -ENOMEM;
		goto cleanup;
	}
	pthread_mutex_init(&d->run->prune_lock, NULL);
	d->cancel = o->cancel;
	snprintf(d->cache_dir, sizeof(d->cache_dir), "%s", o->cache_dir ? o->cache_dir : "");
	if (o->urls && *o->urls) {
		urls = strdup(o->urls);
		if (!urls) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	for (tok = urls ? strtok_r(urls, " \t\n", &save) : NULL; tok && !err;
	     tok = strtok_r(NULL, " \t\n", &save))
		err = add_server(d, tok);
	if (!err && d->nservers && !d->cache_dir[0]) {
		pr_warn("no cache directory: debuginfod is off");
		d->nservers = 0;
	}
	if (!err && d->nservers && cache_dir_refused(d->cache_dir, why, sizeof(why))) {
		pr_warn("%s: not used as the cache: %s; debuginfod is off", d->cache_dir, why);
		d->nservers = 0;
	}
	if (!err && d->nservers)
		pr_debug("%zu servers, cache %s", d->nservers, d->cache_dir);
cleanup:
	free(urls);
	if (err) {
		debuginfod__free(d);
		return err;
	}
	*out = d;
	return 0;
}

void debuginfod__free(struct debuginfod *d)
{
	if (!d)
		return;
	free(d->servers);
	if (d->run)
		pthread_mutex_destroy(&d->run->prune_lock);
	free(d->run);
	free(d);
}

bool debuginfod__enabled(const struct debuginfod *d)
{
	return d && d->nservers;
}

/* The build ID in lower-case hex and in bytes; -EINVAL when it is none. */
static int parse_build_id(const char *hex, struct fetch *f)
{
	size_t n = strlen(hex), i;

	if (!n || n % 2 || n > 2 * ELF_BUILD_ID_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		char c = (char)tolower((unsigned char)hex[i]);

		if (!strchr("0123456789abcdef", c))
			return -EINVAL;
		f->hex[i] = c;
	}
	f->hex[n] = '\0';
	f->id_len = n / 2;
	for (i = 0; i < f->id_len; i++) {
		char byte[3] = {f->hex[2 * i], f->hex[2 * i + 1], '\0'};

		f->id[i] = (uint8_t)strtoul(byte, NULL, 16);
	}
	return 0;
}

static bool within(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* How many headers: libelf's count, or the ELF header's where libelf sees none (past the end). */
static uint64_t headers(size_t libelf_count, uint64_t header_count)
{
	return libelf_count > header_count ? libelf_count : header_count;
}

/*
 * Whether the headers and every section with contents of elf lie within its
 * size bytes: a body cut short where nothing framed it (a close-delimited
 * one) may still hold the build ID, at the front. Not segments: eu-strip's
 * debug files (Fedora's) keep the program's, and their contents are gone.
 */
static bool elf_whole(Elf *elf, uint64_t size)
{
	size_t nph, nsh;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;

	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph) || elf_getshdrnum(elf, &nsh))
		return false;
	if (!within(eh.e_phoff, headers(nph, eh.e_phnum) * eh.e_phentsize, size) ||
	    (eh.e_shoff && !within(eh.e_shoff, headers(nsh, eh.e_shnum) * eh.e_shentsize, size)))
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_NOBITS && !within(sh.sh_offset, sh.sh_size, size)))
			return false;
	return true;
}

/*
 * Whether fd is an ELF file, whole, with the build ID asked for: 0, or a
 * failure outcome (the file's description first: "the cached file"...).
 */
static int check_elf(struct fetch *f, int fd, const char *what)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	struct stat st;
	size_t n = 0;
	Elf *elf;

	if (fstat(fd, &st))
		return outcome(f->res, DEBUGINFOD_CACHE_NOT_WRITABLE, -errno, "%s: %s", what,
			       strerror(errno));
	if (!st.st_size)
		return outcome(f->res, DEBUGINFOD_NOT_ELF, -ENOEXEC, "%s is empty", what);
	if (elf_version(EV_CURRENT) == EV_NONE)
		return outcome(f->res, DEBUGINFOD_NOT_ELF, -ENOEXEC, "libelf: %s", elf_errmsg(-1));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return outcome(f->res, DEBUGINFOD_NOT_ELF, -ENOEXEC,
			       "%s (%" PRIu64 " bytes) is not an ELF file", what,
			       (uint64_t)st.st_size);
	}
	if (!elf_whole(elf, (uint64_t)st.st_size)) {
		elf_end(elf);
		return outcome(f->res, DEBUGINFOD_NOT_ELF, -ENOEXEC,
			       "%s (%" PRIu64 " bytes) is a truncated or corrupt ELF file", what,
			       (uint64_t)st.st_size);
	}
	n = elf_build_id(elf, (uint64_t)st.st_size, id);
	elf_end(elf);
	if (n != f->id_len || memcmp(id, f->id, n)) {
		elf_build_id__hex(id, n, hex, sizeof(hex));
		return outcome(f->res, DEBUGINFOD_BUILD_ID_MISMATCH, -ESTALE,
			       "%s has build ID %s, not %s", what, n ? hex : "(none)", f->hex);
	}
	f->res->bytes = (uint64_t)st.st_size;
	return 0;
}

/* How long the cache remembers a miss: its cache_miss_s file, as elfutils reads it. */
static long cache_miss_s(const struct debuginfod *d)
{
	char path[PATH_SIZE], text[64];

	if (!join(path, sizeof(path), d->cache_dir, CACHE_MISS_NAME) ||
	    file__read_small(path, text, sizeof(text)) < 0)
		return DEBUGINFOD_CACHE_MISS_S;
	return debuginfod__cache_miss_s(text);
}

/*
 * What the cache holds: -EAGAIN to ask the servers, else the fetch's result
 * (0 for a file; a miss still remembered; an entry that is neither). A
 * miss too old to remember is removed, as elfutils removes it.
 */
static int look_in_cache(struct fetch *f)
{
	struct debuginfod_result *res = f->res;
	long miss_s, age;
	struct stat st;
	int fd, err;

	if (fstatat(f->dir_fd, FILE_NAME, &st, AT_SYMLINK_NOFOLLOW))
		return -EAGAIN;
	if (!S_ISREG(st.st_mode))
		return outcome(res, DEBUGINFOD_CACHE_NOT_WRITABLE, -EEXIST,
			       "%s/%s/" FILE_NAME " is not a regular file", f->d->cache_dir,
			       f->hex);
	if (!st.st_size) {
		miss_s = cache_miss_s(f->d);
		age = (long)(time(NULL) - st.st_mtime);
		if (age <= miss_s)
			return outcome(res, DEBUGINFOD_CACHED_MISS, -ENOENT,
				       "no server had it %ld s ago; a miss is remembered for %ld s "
				       "(" CACHE_MISS_NAME ")",
				       age, miss_s);
		unlinkat(f->dir_fd, FILE_NAME, 0);
		return -EAGAIN;
	}
	fd = openat(f->dir_fd, FILE_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return outcome(res, DEBUGINFOD_CACHE_NOT_WRITABLE, -errno,
			       "%s/%s/" FILE_NAME ": %s", f->d->cache_dir, f->hex, strerror(errno));
	err = check_elf(f, fd, "the cached file");
	if (!err) {
		/* Its access time is what elfutils' cache cleaning keeps a file by. */
		const struct timespec times[2] = {{.tv_nsec = UTIME_NOW}, {.tv_nsec = UTIME_OMIT}};

		futimens(fd, times);
		outcome(res, DEBUGINFOD_FROM_CACHE, 0, "in the cache (%" PRIu64 " bytes)",
			res->bytes);
	}
	close(fd);
	return err;
}

/* The cache's root and the build ID's directory, made if missing: 0 or an outcome. */
static int open_dirs(struct fetch *f, bool create)
{
	const char *root = f->d->cache_dir;
	char why[96];
	int err = 0;

	if (f->root_fd < 0 && create)
		err = file__make_dirs(root);
	if (!err && f->root_fd < 0) {
		f->root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = f->root_fd < 0 ? -errno : 0;
		if (!err && file__check_private_dir(f->root_fd, why, sizeof(why)) == -EPERM) {
			close(f->root_fd);
			f->root_fd = -1;
			return outcome(f->res, DEBUGINFOD_CACHE_NOT_WRITABLE, -EPERM,
				       "%s: not used as the cache: %s", root, why);
		}
	}
	if (!err && create && mkdirat(f->root_fd, f->hex, 0700) && errno != EEXIST)
		err = -errno;
	if (!err) {
		f->dir_fd =
			openat(f->root_fd, f->hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		err = f->dir_fd < 0 ? -errno : 0;
	}
	if (err)
		return outcome(f->res, DEBUGINFOD_CACHE_NOT_WRITABLE, err, "%s/%s: %s", root,
			       f->hex, strerror(-err));
	return 0;
}

/* A new temporary file beside FILE_NAME, named as elfutils names its own (mkstemp). */
static int create_temp(struct fetch *f)
{
	int fd = file__create_unique(f->dir_fd, FILE_NAME ".", f->tmp_name, sizeof(f->tmp_name));

	if (fd >= 0) {
		f->tmp_fd = fd;
		return 0;
	}
	f->tmp_name[0] = '\0';
	return outcome(f->res, DEBUGINFOD_CACHE_NOT_WRITABLE, fd,
		       "cannot create a file in %s/%s: %s", f->d->cache_dir, f->hex, strerror(-fd));
}

/*
 * The build ID's directory and a temporary file in it. Twice at most:
 * elfutils removes a build ID's directory when its fetch fails, and may do
 * so between our mkdir and our file.
 */
static int make_temp(struct fetch *f)
{
	int err = 0;

	for (int tries = 0; tries < 2; tries++) {
		if (f->dir_fd >= 0 && tries) {
			close(f->dir_fd);
			f->dir_fd = -1;
		}
		if (f->dir_fd < 0)
			err = open_dirs(f, true);
		if (!err)
			err = create_temp(f);
		if (err != -ENOENT)
			break;
	}
	return err;
}

static uint64_t run_bytes(const struct debuginfod *d)
{
	return d->max_bytes > UINT64_MAX / DEBUGINFOD_RUN_BYTES_X
		       ? UINT64_MAX
		       : d->max_bytes * DEBUGINFOD_RUN_BYTES_X;
}

/*
 * A share of the run's caps for a fetch that asks the servers: one of its
 * files, and the bytes it has left (at most the file's cap) as the most
 * this file may take. 0, or the outcome of a cap reached.
 */
static int take_budget(struct fetch *f)
{
	const struct debuginfod *d = f->d;
	struct debuginfod_budget *spent = &d->run->spent;
	uint64_t used;

	if (__atomic_fetch_add(&spent->asked, 1, __ATOMIC_RELAXED) >= d->max_files)
		return outcome(f->res, DEBUGINFOD_RUN_FILES_CAP, -EDQUOT,
			       "the run asked for %" PRIu32 " files already", d->max_files);
	used = __atomic_load_n(&spent->bytes, __ATOMIC_RELAXED);
	if (used >= run_bytes(d))
		return outcome(f->res, DEBUGINFOD_RUN_BYTES_CAP, -EDQUOT,
			       "the run downloaded %" PRIu64 " bytes already", used);
	f->max_body = d->max_bytes;
	if (run_bytes(d) - used < d->max_bytes) {
		f->max_body = run_bytes(d) - used;
		f->run_capped = true;
	}
	return 0;
}

/* A file over f->max_body: over the file's cap, or over what the run had left. */
static int too_large(struct fetch *f, int err, const char *says)
{
	if (f->run_capped)
		return outcome(f->res, DEBUGINFOD_RUN_BYTES_CAP, err,
			       "larger than the %" PRIu64 " bytes the run had left%s", f->max_body,
			       says);
	return outcome(f->res, DEBUGINFOD_TOO_LARGE, err, "larger than %" PRIu64 " bytes%s",
		       f->max_body, says);
}

/* The body sink: the temporary file. */
static int write_body(void *ctx, const void *data, size_t len)
{
	struct fetch *f = ctx;
	struct debuginfod_budget *spent = &f->d->run->spent;
	int err;

	/* Fetches under way share what the run has left: the one that goes past it ends. */
	if (__atomic_add_fetch(&spent->bytes, len, __ATOMIC_RELAXED) > run_bytes(f->d)) {
		f->run_capped = true;
		return -EFBIG;
	}
	err = file__write_all(f->tmp_fd, data, len);

	if (err)
		f->write_err = err;
	return err;
}

/* The outcome of a request that got no HTTP answer. */
static int request_failed(struct fetch *f, int err, const char *msg)
{
	struct debuginfod_result *res = f->res;

	if (f->write_err)
		return outcome(res, DEBUGINFOD_CACHE_NOT_WRITABLE, err, "%s/%s: %s",
			       f->d->cache_dir, f->hex, strerror(-err));
	switch (err) {
	case -ETIMEDOUT:
		return outcome(res, DEBUGINFOD_TIMEOUT, err, "not whole within %d ms: %s",
			       f->d->timeout_ms, msg);
	case -ECANCELED:
		return outcome(res, DEBUGINFOD_CANCELLED, err, "interrupted");
	case -EFBIG:
		return too_large(f, err, "");
	case -EBADMSG:
		return outcome(res, DEBUGINFOD_SERVER_ERROR, err, "%s", msg);
	default:
		return outcome(res, DEBUGINFOD_CONNECTION_FAILED, err, "%s", msg);
	}
}

/* Where a request goes, as a number: a redirect back to a place asked already is a loop. */
static uint64_t request_hash(const struct http_url *url, const char *target)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *parts[3] = {url->tls ? "s" : "", url->hostport, target};

	for (int i = 0; i < 3; i++)
		for (const char *c = parts[i];; c++) {
			h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
			if (!*c)
				break;
		}
	return h;
}

/* One request of a fetch: 0 with the answer in resp (any status), or a failure outcome. */
static int request(struct fetch *f, const struct http_url *url, const char *target,
		   int64_t deadline, struct http_response *resp)
{
	const struct debuginfod *d = f->d;
	char maxsize[24], msg[256];
	/* elfutils' header: a server with a larger file answers 406 at once. */
	const struct http_header headers[] = {
		{"User-Agent", "cprof"},
		{"X-DEBUGINFOD-MAXSIZE", maxsize},
	};
	struct http_request req = {
		.method = "GET",
		.target = target,
		.headers = headers,
		.nheaders = 2,
		.max_body = (size_t)f->max_body,
		.cancel = d->cancel,
		.tls = d->tls,
		.deadline = deadline,
		.write_body = write_body,
		.body_ctx = f,
	};
	int64_t left = deadline - clock__mono_ms();
	struct proxy proxy;
	const char *why;
	int rc;

	if (left <= 0)
		return outcome(f->res, DEBUGINFOD_TIMEOUT, -ETIMEDOUT, "not whole within %d ms",
			       d->timeout_ms);
	req.timeout_ms = left > INT_MAX ? INT_MAX : (int)left;
	snprintf(maxsize, sizeof(maxsize), "%" PRIu64, f->max_body);
	if (d->proxy_env) {
		rc = proxy__choose(url, d->proxy_env, &proxy, &why);
		if (rc < 0)
			return outcome(f->res, DEBUGINFOD_CONNECTION_FAILED, rc,
				       "bad proxy setting (%s): %s", proxy.source, why);
		req.proxy = rc ? &proxy : NULL;
	}
	if (url->tls && !d->tls)
		return outcome(f->res, DEBUGINFOD_CONNECTION_FAILED, -EPROTONOSUPPORT,
			       "redirected to https:// without a TLS configuration");
	/* What an earlier server sent goes: the file starts again. */
	if (ftruncate(f->tmp_fd, 0) || lseek(f->tmp_fd, 0, SEEK_SET)) {
		f->write_err = -errno;
		return request_failed(f, -errno, "");
	}
	rc = http__request(url, &req, resp, msg, sizeof(msg));
	return rc ? request_failed(f, rc, msg) : 0;
}

/*
 * The file from server s into the temporary file: 0 once a 2xx answer's
 * body is there, or a failure outcome. Redirects are followed within the
 * same deadline.
 */
static int fetch_from(struct fetch *f, const struct server *s)
{
	struct debuginfod_result *res = f->res;
	uint64_t seen[DEBUGINFOD_MAX_REDIRECTS + 1];
	int64_t deadline = clock__mono_ms() + f->d->timeout_ms;
	struct http_url url = s->url, next;
	char target[TARGET_SIZE];
	struct http_response resp;
	const char *location, *why;
	int hop, i, err;

	snprintf(res->server, sizeof(res->server), "%s", s->text);
	snprintf(target, sizeof(target), "%s/buildid/%s/" FILE_NAME, url.path, f->hex);
	for (hop = 0;; hop++) {
		seen[hop] = request_hash(&url, target);
		for (i = 0; i < hop; i++)
			if (seen[i] == seen[hop])
				return outcome(res, DEBUGINFOD_REDIRECT_LOOP, -ELOOP,
					       "redirected back to %s%s", url.hostport, target);
		res->http_status = 0;
		err = request(f, &url, target, deadline, &resp);
		if (err)
			return err;
		res->http_status = resp.status;
		location = http_response__field(&resp, "location");
		if (resp.status / 100 == 2) {
			err = 0;
		} else if (resp.status == 404 || resp.status == 410) {
			err = outcome(res, DEBUGINFOD_NOT_FOUND, -ENOENT, "HTTP %d", resp.status);
		} else if (resp.status == 406) {
			err = too_large(f, -EFBIG, ", says the server (HTTP 406)");
		} else if (resp.status / 100 != 3 || !location) {
			err = outcome(res, DEBUGINFOD_SERVER_ERROR, -EIO, "HTTP %d", resp.status);
		} else if (hop == DEBUGINFOD_MAX_REDIRECTS) {
			err = outcome(res, DEBUGINFOD_REDIRECT_LOOP, -ELOOP,
				      "more than %d redirects", DEBUGINFOD_MAX_REDIRECTS);
		} else if (http__redirect(&url, location, &next, target, sizeof(target), &why)) {
			err = outcome(res, DEBUGINFOD_SERVER_ERROR, -EIO, "HTTP %d: %s",
				      resp.status, why);
		} else {
			pr_debug("%s: HTTP %d to %s%s", s->text, resp.status, next.hostport,
				 target);
			url = next;
			err = 1;
		}
		http_response__clear(&resp);
		if (err <= 0)
			return err;
	}
}

/* The temporary file becomes the cache's file: read-only, as elfutils leaves its own. */
static int publish(struct fetch *f)
{
	int err;

	fchmod(f->tmp_fd, 0400);
	if (renameat(f->dir_fd, f->tmp_name, f->dir_fd, FILE_NAME)) {
		err = -errno;
		return outcome(f->res, DEBUGINFOD_CACHE_NOT_WRITABLE, err,
			       "cannot rename into %s/%s: %s", f->d->cache_dir, f->hex,
			       strerror(-err));
	}
	f->tmp_name[0] = '\0';
	return outcome(f->res, DEBUGINFOD_DOWNLOADED, 0, "%" PRIu64 " bytes from %s", f->res->bytes,
		       f->res->server);
}

/* A file in the cache, <build ID>/<name>, for pruning. */
struct cached_file {
	char path[256];
	time_t atime;
	uint64_t size;
};

struct cached_files {
	struct cached_file *v;
	size_t n, cap;
	uint64_t total;
};

/* Adds one file to c (it counts in the total even when there is no room to list it). */
static void add_cached(struct cached_files *c, const char *dir, const char *name,
		       const struct stat *st)
{
	struct cached_file *tmp;
	size_t cap = c->cap ? 2 * c->cap : 64;

	c->total += (uint64_t)st->st_size;
	if (c->n == c->cap) {
		tmp = reallocarray(c->v, cap, sizeof(*tmp));
		if (!tmp)
			return;
		c->v = tmp;
		c->cap = cap;
	}
	if (snprintf(c->v[c->n].path, sizeof(c->v[c->n].path), "%s/%s", dir, name) >=
	    (int)sizeof(c->v[c->n].path))
		return;
	c->v[c->n].atime = st->st_atime;
	c->v[c->n].size = (uint64_t)st->st_size;
	c->n++;
}

/* Adds the files of the cache's directory dir to c; links and the rest are not elfutils'. */
static void list_entry(int root_fd, const char *dir, struct cached_files *c)
{
	int fd = openat(root_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	struct stat st;

	if (!dp) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* Not a download under way (debuginfo.XXXXXX): it is another thread's. */
	while ((e = readdir(dp)))
		if (strncmp(e->d_name, FILE_NAME ".", sizeof(FILE_NAME)) &&
		    !fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
		    st.st_size)
			add_cached(c, dir, e->d_name, &st);
	closedir(dp);
}

static int used_earlier(const void *a, const void *b)
{
	const struct cached_file *x = a, *y = b;

	return x->atime < y->atime ? -1 : x->atime > y->atime;
}

/* The files of the cache's build ID directories, in c (the caller frees c->v). */
static void list_cache(int root_fd, struct cached_files *c)
{
	int fd = dup(root_fd);
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!dp) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(dp)))
		if (e->d_name[0] != '.')
			list_entry(root_fd, e->d_name, c);
	closedir(dp);
}

/*
 * Keeps the cache under its cap after a download: past it, the files used
 * longest ago (access time, which elfutils' own cleaning goes by too) go,
 * down to three quarters of it. One thread at a time.
 */
static void prune_cache(struct fetch *f)
{
	const struct debuginfod *d = f->d;
	uint64_t cap = d->max_bytes > UINT64_MAX / DEBUGINFOD_CACHE_BYTES_X
			       ? UINT64_MAX
			       : d->max_bytes * DEBUGINFOD_CACHE_BYTES_X;
	struct cached_files c = {0};
	size_t i, pruned = 0;

	pthread_mutex_lock(&d->run->prune_lock);
	list_cache(f->root_fd, &c);
	qsort(c.v, c.n, sizeof(*c.v), used_earlier);
	for (i = 0; i < c.n && c.total > cap - cap / 4; i++) {
		if (unlinkat(f->root_fd, c.v[i].path, 0))
			continue;
		c.total -= c.v[i].size;
		pruned++;
		__atomic_add_fetch(&d->run->spent.pruned, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&d->run->spent.pruned_bytes, c.v[i].size, __ATOMIC_RELAXED);
		/* Its directory too once empty, as elfutils' own cleaning leaves none. */
		*strchr(c.v[i].path, '/') = '\0';
		unlinkat(f->root_fd, c.v[i].path, AT_REMOVEDIR);
	}
	pthread_mutex_unlock(&d->run->prune_lock);
	if (pruned)
		pr_debug("the cache was over %" PRIu64 " bytes: %zu files used longest ago removed",
			 cap, pruned);
	free(c.v);
}

void debuginfod__budget(const struct debuginfod *d, struct debuginfod_budget *out)
{
	memset(out, 0, sizeof(*out));
	if (!d)
		return;
	out->asked = __atomic_load_n(&d->run->spent.asked, __ATOMIC_RELAXED);
	out->bytes = __atomic_load_n(&d->run->spent.bytes, __ATOMIC_RELAXED);
	out->pruned = __atomic_load_n(&d->run->spent.pruned, __ATOMIC_RELAXED);
	out->pruned_bytes = __atomic_load_n(&d->run->spent.pruned_bytes, __ATOMIC_RELAXED);
}

/* Asks every server in turn: 0 once one's file is published, else the failure to report. */
static int ask_servers(struct fetch *f)
{
	const struct debuginfod *d = f->d;
	struct debuginfod_result failure = {.status = DEBUGINFOD_NOT_FOUND};
	size_t i, not_found = 0;
	int err, failure_err = 0, fd;

	for (i = 0; i < d->nservers; i++) {
		if (d->cancel && cancel__triggered(d->cancel))
			return outcome(f->res, DEBUGINFOD_CANCELLED, -ECANCELED, "interrupted");
		err = fetch_from(f, &d->servers[i]);
		if (!err)
			err = check_elf(f, f->tmp_fd, "the file");
		if (!err)
			return publish(f);
		pr_debug("%s: %s: %s", d->servers[i].text, f->hex, f->res->why);
		if (f->res->status == DEBUGINFOD_CANCELLED ||
		    f->res->status == DEBUGINFOD_CACHE_NOT_WRITABLE)
			return err;
		if (f->res->status == DEBUGINFOD_NOT_FOUND) {
			not_found++;
			continue;
		}
		failure = *f->res;
		failure_err = err;
	}
	if (not_found < d->nservers) {
		*f->res = failure;
		return failure_err;
	}
	/* A miss every server agrees on, remembered as elfutils remembers one: an empty file. */
	fd = openat(f->dir_fd, FILE_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd >= 0)
		close(fd);
	f->res->server[0] = '\0';
	return outcome(f->res, DEBUGINFOD_NOT_FOUND, -ENOENT, "no server has it (%zu asked)",
		       d->nservers);
}

int debuginfod__fetch(const struct debuginfod *d, const char *build_id_hex, char *path, size_t size,
		      struct debuginfod_result *res)
{
	struct debuginfod_result scratch;
	struct fetch f = {.d = d, .root_fd = -1, .dir_fd = -1, .tmp_fd = -1};
	int err;

	f.res = res ? res : &scratch;
	*f.res = (struct debuginfod_result){0};
	if (!debuginfod__enabled(d)) {
		err = outcome(f.res, DEBUGINFOD_OFF, -ENOSYS,
			      "no debuginfod server (DEBUGINFOD_URLS)");
		goto cleanup;
	}
	if (parse_build_id(build_id_hex, &f)) {
		err = outcome(f.res, DEBUGINFOD_BAD_BUILD_ID, -EINVAL, "'%.*s' is not a build ID",
			      2 * ELF_BUILD_ID_MAX, build_id_hex);
		goto cleanup;
	}
	if (d->cancel && cancel__triggered(d->cancel)) {
		err = outcome(f.res, DEBUGINFOD_CANCELLED, -ECANCELED, "interrupted");
		goto cleanup;
	}
	if (snprintf(path, size, "%s/%s/" FILE_NAME, d->cache_dir, f.hex) >= (int)size) {
		err = outcome(f.res, DEBUGINFOD_CACHE_NOT_WRITABLE, -ENAMETOOLONG,
			      "the path in the cache is too long");
		goto cleanup;
	}
	err = open_dirs(&f, false);
	err = err == -EPERM ? err : err ? -EAGAIN : look_in_cache(&f);
	if (err != -EAGAIN)
		goto cleanup;
	*f.res = (struct debuginfod_result){0};
	err = take_budget(&f);
	if (!err)
		err = make_temp(&f);
	if (!err)
		err = ask_servers(&f);
	if (!err && f.res->status == DEBUGINFOD_DOWNLOADED)
		prune_cache(&f);
cleanup:
	if (f.tmp_name[0])
		unlinkat(f.dir_fd, f.tmp_name, 0);
	if (f.tmp_fd >= 0)
		close(f.tmp_fd);
	if (f.dir_fd >= 0)
		close(f.dir_fd);
	if (f.root_fd >= 0)
		close(f.root_fd);
	if (err && size)
		path[0] = '\0';
	return err;
}
