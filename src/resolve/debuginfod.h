/* SPDX-License-Identifier: MIT */
/*
 * A debuginfod client: separate debug files of stripped binaries fetched by
 * GNU build ID from the servers DEBUGINFOD_URLS names, as perf and gdb fetch
 * them, into the cache they share with cprof. The cache is elfutils' own
 * (libdebuginfod's layout and rules, see docs/design.md), so a file one of
 * them fetched is a hit for the others, and a miss one of them remembers
 * (an empty file, kept cache_miss_s seconds) spares the others the servers.
 *
 * Blocking, for a worker thread: one fetch asks each server in turn until
 * one has the file, streaming it to a temporary file beside its place in the
 * cache, each server within one deadline for the whole file (redirects
 * included) and a size cap. A file is published (renamed into place) only
 * once it is an ELF file with the build ID asked for; anything else is
 * deleted. A run's fetches share caps on files and bytes, and the cache is
 * kept under a size; its directory must be the user's own, writable by no
 * one else. Every outcome comes back as a reason the caller can count, with
 * one line for the log. The client holds no state between fetches, so
 * several threads may share it.
 */
#ifndef CPROF_DEBUGINFOD_H
#define CPROF_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cancel;
struct proxy_env;
struct tls_client;

/* Defaults where the options say 0 (and DEBUGINFOD_MAXTIME, DEBUGINFOD_MAXSIZE do not). */
#define DEBUGINFOD_DEFAULT_TIMEOUT_MS 120000
#define DEBUGINFOD_DEFAULT_MAX_BYTES  (2ull << 30)
/*
 * What one run may take from the servers, whoever runs the binaries that
 * ask: files asked for (each a request per server), and bytes, twice the
 * largest file; the cache is kept under four times the largest file, the
 * files used longest ago removed (elfutils sets no size of its own).
 */
#define DEBUGINFOD_DEFAULT_MAX_FILES 64
#define DEBUGINFOD_RUN_BYTES_X	     2
#define DEBUGINFOD_CACHE_BYTES_X     4
/* Redirects followed for one file: a server or its CDN needs one or two; a loop ends sooner. */
#define DEBUGINFOD_MAX_REDIRECTS 8
/* How long elfutils remembers a miss when its cache holds no cache_miss_s file. */
#define DEBUGINFOD_CACHE_MISS_S 600

struct debuginfod_opts {
	/* Server URLs separated by blanks, as DEBUGINFOD_URLS; NULL or "": off. */
	const char *urls;
	/* The cache's root directory (debuginfod__cache_dir); needed when urls is set. */
	const char *cache_dir;
	const struct tls_client *tls;	   /* for https:// servers; NULL: http:// only */
	const struct proxy_env *proxy_env; /* proxies as curl reads them, or NULL: direct */
	/* The most one file may take from one server, connect to last byte: 0 for the default. */
	int timeout_ms;
	uint64_t max_bytes; /* the largest file taken: 0 for the default */
	uint32_t max_files; /* files asked of the servers in a run: 0 for the default */
	/* Optional: once triggered, every fetch under way ends at once, and later ones at once. */
	const struct cancel *cancel;
};

/*
 * The options the environment gives, as elfutils reads it: urls from
 * DEBUGINFOD_URLS, the cache directory into cache_buf (see
 * debuginfod__cache_dir), timeout_ms from DEBUGINFOD_MAXTIME and max_bytes
 * from DEBUGINFOD_MAXSIZE when they are positive. The rest of *o is kept.
 * For main.c, the one place that reads the environment.
 */
void debuginfod_opts__from_env(struct debuginfod_opts *o, char *cache_buf, size_t size);

/*
 * elfutils' cache directory for the values of DEBUGINFOD_CACHE_PATH,
 * XDG_CACHE_HOME and HOME (each NULL when unset): the first if set, else
 * HOME/.debuginfod_client_cache if it exists (the old place), else
 * XDG_CACHE_HOME/debuginfod_client, else HOME/.cache/debuginfod_client
 * (HOME "/" when unset or empty). Into buf; returns buf.
 */
const char *debuginfod__cache_dir(const char *cache_path, const char *xdg_cache_home,
				  const char *home, char *buf, size_t size);

struct debuginfod;

/*
 * A client for the servers of o->urls. Tokens that are not http:// or
 * https:// URLs (elfutils' "ima:" policies, file://) are skipped, with a
 * warning for all but "ima:"; repeated URLs are asked once. A cache
 * directory that is there but not the user's own, or that others may write
 * into, turns the client off, with a warning. Returns 0 (a client with no
 * server is off), or -ENOMEM.
 */
int debuginfod__new(const struct debuginfod_opts *o, struct debuginfod **out);
void debuginfod__free(struct debuginfod *d);
/* Whether any server is configured: when not, no fetch touches the cache or the network. */
bool debuginfod__enabled(const struct debuginfod *d);

enum debuginfod_status {
	DEBUGINFOD_FROM_CACHE,	       /* in the cache already */
	DEBUGINFOD_DOWNLOADED,	       /* fetched now */
	DEBUGINFOD_OFF,		       /* no server configured */
	DEBUGINFOD_CACHED_MISS,	       /* a miss the cache remembers: no server asked */
	DEBUGINFOD_NOT_FOUND,	       /* every server said 404 */
	DEBUGINFOD_SERVER_ERROR,       /* 5xx, another status, or not HTTP */
	DEBUGINFOD_TIMEOUT,	       /* the file's deadline passed */
	DEBUGINFOD_TOO_LARGE,	       /* over max_bytes (or the server's 406 for it) */
	DEBUGINFOD_BUILD_ID_MISMATCH,  /* an ELF file of another build, or of none */
	DEBUGINFOD_NOT_ELF,	       /* not an ELF file at all */
	DEBUGINFOD_CONNECTION_FAILED,  /* no connection, or it broke mid-file */
	DEBUGINFOD_REDIRECT_LOOP,      /* redirected back, or too many times */
	DEBUGINFOD_CANCELLED,	       /* the cancel token was triggered */
	DEBUGINFOD_CACHE_NOT_WRITABLE, /* the cache cannot take the file */
	DEBUGINFOD_BAD_BUILD_ID,       /* the build ID asked for is not hex */
	DEBUGINFOD_RUN_FILES_CAP,      /* the run asked for max_files already */
	DEBUGINFOD_RUN_BYTES_CAP,      /* the run downloaded its bytes already */
	DEBUGINFOD_NSTATUS,
};

/* Few words for a status, for counts in the summary: "not found", "timeout"... */
const char *debuginfod_status__name(enum debuginfod_status s);

struct debuginfod_result {
	enum debuginfod_status status;
	/* The server the file came from, or the one whose failure is reported; "" if none. */
	char server[256];
	uint64_t bytes;	 /* the file's size, when there is one */
	int http_status; /* the last answer's HTTP status (200 for a download), or 0 */
	char why[320];	 /* one line, for any outcome */
};

/*
 * The debug file of the build ID given in hex (as elf_build_id__hex writes
 * it; upper case is taken too): 0 with its path in the cache into path
 * (size bytes), status DEBUGINFOD_FROM_CACHE or DEBUGINFOD_DOWNLOADED; or a
 * negative errno with the reason in *res: -ENOSYS when off, -ENOENT for a
 * miss (now or remembered), -EIO or -EBADMSG for a server's error,
 * -ETIMEDOUT, -EFBIG, -ESTALE for a build ID mismatch, -ENOEXEC, -ELOOP,
 * -ECANCELED, -EINVAL, the connection's or the cache's own errno. When
 * servers fail differently, the failure reported is the last one that was
 * not a 404; a miss is remembered in the cache only when every server said
 * 404.
 */
int debuginfod__fetch(const struct debuginfod *d, const char *build_id_hex, char *path, size_t size,
		      struct debuginfod_result *res);

/* What a run took from the servers, and what the cache's cap removed. */
struct debuginfod_budget {
	uint64_t asked;	       /* fetches that needed the servers, those past max_files too */
	uint64_t bytes;	       /* downloaded, whole or not */
	uint64_t pruned;       /* files removed from the cache */
	uint64_t pruned_bytes; /* their bytes */
};

void debuginfod__budget(const struct debuginfod *d, struct debuginfod_budget *out);

/*
 * How long a miss is remembered, from the text of the cache's cache_miss_s
 * file (as elfutils reads it, a decimal number after any blanks; NULL: no
 * such file): its seconds, else the default 600.
 */
long debuginfod__cache_miss_s(const char *text);

#endif
