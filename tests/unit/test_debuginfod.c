// SPDX-License-Identifier: MIT
/*
 * The debuginfod client against scripted servers on loopback: the cache
 * layout and rules it shares with elfutils (where the cache is, hits and
 * remembered misses without any request), downloads that land whole in the
 * cache, and every way a server can fail, each with its reason and nothing
 * left in the cache. The debug files are real: built here with cc and
 * objcopy --only-keep-debug, as distributions make theirs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cancel_alarm.h"
#include "net/proxy.h"
#include "lib/cancel.h"
#include "lib/elf_build_id.h"
#include "loopback.h"
#include "lib/clock.h"
#include "resolve/debuginfod.h"
#include "resolve/debuginfod_queue.h"
#include "test.h"

struct elf_file {
	char path[4200];
	char hex[2 * ELF_BUILD_ID_MAX + 1];
	uint8_t *data;
	size_t len;
};

/* A directory of the test's own under the scratch directory, empty. */
static const char *scratch(const char *name)
{
	static char dir[4096];
	char cmd[9000];

	snprintf(dir, sizeof(dir), "%s/%s", test_tmp_dir(), name);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dir, dir);
	CHECK_INT(system(cmd), ==, 0);
	return dir;
}

static void read_build_id(struct elf_file *e)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t n;
	Elf *elf;
	int fd = open(e->path, O_RDONLY);

	CHECK_INT(fd, >=, 0);
	CHECK(elf_version(EV_CURRENT) != EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(elf);
	n = elf_build_id(elf, (uint64_t)lseek(fd, 0, SEEK_END), id);
	CHECK_INT(n, ==, 20);
	elf_build_id__hex(id, n, e->hex, sizeof(e->hex));
	elf_end(elf);
	close(fd);
}

/*
 * The debug file of a small program whose main returns ret: built once per
 * run of the suite (the scratch directory is shared), skipped without cc.
 */
static void debug_file(int ret, struct elf_file *e)
{
	char dir[4096], src[4200], cmd[30000];
	struct stat st;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/elf", test_tmp_dir());
	mkdir(dir, 0700);
	snprintf(e->path, sizeof(e->path), "%s/prog%d.debug", dir, ret);
	if (stat(e->path, &st)) {
		snprintf(src, sizeof(src), "%s/prog%d.c", dir, ret);
		f = fopen(src, "w");
		CHECK(f);
		fprintf(f, "int main(void) { return %d; }\n", ret);
		fclose(f);
		snprintf(cmd, sizeof(cmd),
			 "cc -g -Wl,--build-id -o '%s/prog%d' '%s' 2>/dev/null && "
			 "objcopy --only-keep-debug '%s/prog%d' '%s.tmp' 2>/dev/null && "
			 "mv '%s.tmp' '%s'",
			 dir, ret, src, dir, ret, e->path, e->path, e->path);
		if (system(cmd) != 0)
			SKIP("cannot build a debug file with cc -g -Wl,--build-id and objcopy");
	}
	read_build_id(e);
	e->data = test_read_file(e->path, &e->len);
}

/* An HTTP answer with body: Content-Length framing, or chunked in chunks of `chunk` bytes. */
static struct loopback_reply serve(const char *status, const void *body, size_t len, size_t chunk)
{
	size_t cap = len * 2 + 4096, n = 0, off;
	char *r = malloc(cap);

	CHECK(r);
	if (!chunk) {
		n = (size_t)snprintf(r, cap, "HTTP/1.1 %s\r\nContent-Length: %zu\r\n\r\n", status,
				     len);
		memcpy(r + n, body, len);
		n += len;
	} else {
		n = (size_t)snprintf(r, cap, "HTTP/1.1 %s\r\nTransfer-Encoding: chunked\r\n\r\n",
				     status);
		for (off = 0; off < len; off += chunk) {
			size_t k = len - off < chunk ? len - off : chunk;

			n += (size_t)snprintf(r + n, cap - n, "%zx\r\n", k);
			memcpy(r + n, (const uint8_t *)body + off, k);
			n += k;
			memcpy(r + n, "\r\n", 2);
			n += 2;
		}
		n += (size_t)snprintf(r + n, cap - n, "0\r\n\r\n");
	}
	return (struct loopback_reply){.data = r, .len = n};
}

static struct loopback_reply serve_file(const struct elf_file *e)
{
	return serve("200 OK", e->data, e->len, 0);
}

static struct debuginfod *client_opts(const struct debuginfod_opts *o)
{
	struct debuginfod *d;

	CHECK_INT(debuginfod__new(o, &d), ==, 0);
	return d;
}

static struct debuginfod *client(const char *urls, const char *cache)
{
	struct debuginfod_opts o = {.urls = urls, .cache_dir = cache, .timeout_ms = 5000};

	return client_opts(&o);
}

static const char *url_of(const struct loopback *lb, const char *path)
{
	static char url[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(url[i], sizeof(url[i]), "http://127.0.0.1:%u%s", lb->port, path);
	return url[i];
}

static const char *closed_url(void)
{
	static char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%u", loopback__closed_port());
	return url;
}

/* The cache's entry of a build ID. */
static const char *entry(const char *cache, const char *hex)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s/%s/debuginfo", cache, hex);
	return path;
}

/* Files in the build ID's directory: no temporary file may stay behind. */
static int files_in(const char *cache, const char *hex)
{
	char dir[1024];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/%s", cache, hex);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void put_file(const char *path, const void *data, size_t len)
{
	char dir[1024];
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdir(dir, 0700);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK_INT(fd, >=, 0);
	CHECK_INT(write(fd, data, len), ==, (ssize_t)len);
	close(fd);
}

static void set_age(const char *path, time_t seconds)
{
	struct timespec t[2] = {{.tv_sec = time(NULL) - seconds}, {.tv_sec = time(NULL) - seconds}};

	CHECK_INT(utimensat(AT_FDCWD, path, t, 0), ==, 0);
}

static int fetch(struct debuginfod *d, const char *hex, struct debuginfod_result *res)
{
	char path[1024];
	int err = debuginfod__fetch(d, hex, path, sizeof(path), res);

	if (!err)
		CHECK(strcasestr(path, hex));
	else
		CHECK_STR(path, "");
	return err;
}

/* The return value and the reason wanted, else the line that came with the others. */
#define CHECK_OUTCOME(expr, res, want_err, want_status)                                         \
	do {                                                                                    \
		int _e = (expr);                                                                \
		if (_e != (want_err) || (res).status != (want_status))                          \
			test_fail(__FILE__, __LINE__, "got %d %s (%s), want %d %s", _e,         \
				  debuginfod_status__name((res).status), (res).why, (want_err), \
				  debuginfod_status__name(want_status));                        \
	} while (0)

TEST(debuginfod_cache_dir_rules)
{
	char buf[1024], home[600], legacy[700];
	struct debuginfod_opts o = {.timeout_ms = 1234};

	snprintf(home, sizeof(home), "%s", scratch("home"));
	CHECK_STR(debuginfod__cache_dir("/c/d", "/x", home, buf, sizeof(buf)), "/c/d");
	CHECK_STR(debuginfod__cache_dir("", "/x", "/h", buf, sizeof(buf)), "/x/debuginfod_client");
	CHECK_STR(debuginfod__cache_dir(NULL, "/x/", "/h", buf, sizeof(buf)),
		  "/x/debuginfod_client");
	CHECK_STR(debuginfod__cache_dir(NULL, "", "/h/", buf, sizeof(buf)),
		  "/h/.cache/debuginfod_client");
	CHECK_STR(debuginfod__cache_dir(NULL, NULL, NULL, buf, sizeof(buf)),
		  "/.cache/debuginfod_client");
	/* The old place wins where it exists, whatever XDG_CACHE_HOME says. */
	snprintf(legacy, sizeof(legacy), "%s/.debuginfod_client_cache", home);
	CHECK_STR(debuginfod__cache_dir(NULL, "/x", home, buf, sizeof(buf)),
		  "/x/debuginfod_client");
	CHECK_INT(mkdir(legacy, 0700), ==, 0);
	CHECK_STR(debuginfod__cache_dir(NULL, "/x", home, buf, sizeof(buf)), legacy);

	/* Each test runs in a child process of its own: its environment is its own. */
	setenv("DEBUGINFOD_URLS", "http://a http://b", 1);
	setenv("DEBUGINFOD_CACHE_PATH", "/var/dc", 1);
	unsetenv("DEBUGINFOD_MAXTIME");
	setenv("DEBUGINFOD_MAXSIZE", "1000", 1);
	debuginfod_opts__from_env(&o, buf, sizeof(buf));
	CHECK_STR(o.urls, "http://a http://b");
	CHECK_STR(o.cache_dir, "/var/dc");
	CHECK_INT(o.timeout_ms, ==, 1234);
	CHECK_U64(o.max_bytes, ==, 1000);
	setenv("DEBUGINFOD_MAXTIME", "7", 1);
	setenv("DEBUGINFOD_MAXSIZE", "0", 1);
	unsetenv("DEBUGINFOD_CACHE_PATH");
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	setenv("HOME", home, 1);
	rmdir(legacy);
	debuginfod_opts__from_env(&o, buf, sizeof(buf));
	CHECK_INT(o.timeout_ms, ==, 7000);
	CHECK_U64(o.max_bytes, ==, 1000);
	CHECK_STR(o.cache_dir, "/xdg/debuginfod_client");

	/* cache_miss_s as elfutils reads it (fscanf "%ld"), else its default. */
	CHECK_INT(debuginfod__cache_miss_s(NULL), ==, 600);
	CHECK_INT(debuginfod__cache_miss_s("30"), ==, 30);
	CHECK_INT(debuginfod__cache_miss_s(" \n45\n"), ==, 45);
	CHECK_INT(debuginfod__cache_miss_s("-5"), ==, -5);
	CHECK_INT(debuginfod__cache_miss_s("ten"), ==, 600);
	CHECK_INT(debuginfod__cache_miss_s(""), ==, 600);
}

TEST(debuginfod_off)
{
	static const char *const off[] = {NULL,
					  "",
					  " \t ",
					  "ima:enforcing",
					  "file:///srv/debug",
					  "https://needs.tls.example"};
	const char *cache = scratch("off");
	struct debuginfod_result res;
	char missing[600];
	struct stat st;
	size_t i;

	snprintf(missing, sizeof(missing), "%s/never", cache);
	for (i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		struct debuginfod *d = client(off[i], missing);

		CHECK(!debuginfod__enabled(d));
		CHECK_OUTCOME(fetch(d, "0123456789abcdef", &res), res, -ENOSYS, DEBUGINFOD_OFF);
		debuginfod__free(d);
	}
	CHECK_INT(stat(missing, &st), ==, -1);
	debuginfod__free(NULL);
	CHECK_OUTCOME(fetch(NULL, "00", &res), res, -ENOSYS, DEBUGINFOD_OFF);
}

TEST(debuginfod_bad_build_id)
{
	struct debuginfod *d = client(closed_url(), scratch("badid"));
	struct debuginfod_result res;
	char long_id[300];

	CHECK_OUTCOME(fetch(d, "", &res), res, -EINVAL, DEBUGINFOD_BAD_BUILD_ID);
	CHECK_OUTCOME(fetch(d, "abc", &res), res, -EINVAL, DEBUGINFOD_BAD_BUILD_ID);
	CHECK_OUTCOME(fetch(d, "zz", &res), res, -EINVAL, DEBUGINFOD_BAD_BUILD_ID);
	CHECK_OUTCOME(fetch(d, "../..", &res), res, -EINVAL, DEBUGINFOD_BAD_BUILD_ID);
	memset(long_id, 'a', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	CHECK_OUTCOME(fetch(d, long_id, &res), res, -EINVAL, DEBUGINFOD_BAD_BUILD_ID);
	debuginfod__free(d);
}

TEST(debuginfod_cache_hit_without_network)
{
	const char *cache = scratch("hit");
	struct debuginfod *d = client(closed_url(), cache);
	struct debuginfod_result res;
	struct elf_file a, b;
	char upper[sizeof(a.hex)], path[1024];
	size_t i;

	debug_file(0, &a);
	debug_file(1, &b);
	put_file(entry(cache, a.hex), a.data, a.len);
	CHECK_OUTCOME(debuginfod__fetch(d, a.hex, path, sizeof(path), &res), res, 0,
		      DEBUGINFOD_FROM_CACHE);
	CHECK_STR(path, entry(cache, a.hex));
	CHECK_U64(res.bytes, ==, a.len);
	/* Upper-case hex names the same file. */
	for (i = 0; a.hex[i]; i++)
		upper[i] = (char)(a.hex[i] >= 'a' ? a.hex[i] - 32 : a.hex[i]);
	upper[i] = '\0';
	CHECK_OUTCOME(fetch(d, upper, &res), res, 0, DEBUGINFOD_FROM_CACHE);
	/* Another build's file under this build ID is never handed out, nor a server asked. */
	put_file(entry(cache, b.hex), a.data, a.len);
	CHECK_OUTCOME(fetch(d, b.hex, &res), res, -ESTALE, DEBUGINFOD_BUILD_ID_MISMATCH);
	CHECK(strstr(res.why, a.hex));
	CHECK_STR(res.server, "");
	/* Neither is what is not a regular file. */
	CHECK_INT(unlink(entry(cache, b.hex)), ==, 0);
	CHECK_INT(symlink(a.path, entry(cache, b.hex)), ==, 0);
	CHECK_OUTCOME(fetch(d, b.hex, &res), res, -EEXIST, DEBUGINFOD_CACHE_NOT_WRITABLE);
	debuginfod__free(d);
}

TEST(debuginfod_negative_cache)
{
	const char *cache = scratch("negative");
	struct debuginfod *d = client(closed_url(), cache);
	const char *hex = "00112233445566778899aabbccddeeff00112233";
	struct debuginfod_result res;
	char miss_s[700];
	struct stat st;

	/* A miss elfutils (or cprof) remembers: an empty file, fresh: no server asked. */
	put_file(entry(cache, hex), "", 0);
	CHECK_OUTCOME(fetch(d, hex, &res), res, -ENOENT, DEBUGINFOD_CACHED_MISS);
	CHECK(strstr(res.why, "600 s"));
	/* Older than cache_miss_s (600 s by default): removed, and the servers asked again. */
	set_age(entry(cache, hex), 700);
	CHECK_OUTCOME(fetch(d, hex, &res), res, -ECONNREFUSED, DEBUGINFOD_CONNECTION_FAILED);
	CHECK_INT(stat(entry(cache, hex), &st), ==, -1);
	/* cache_miss_s in the cache's root sets the time, as for elfutils. */
	snprintf(miss_s, sizeof(miss_s), "%s/cache_miss_s", cache);
	put_file(miss_s, "1000", 4);
	put_file(entry(cache, hex), "", 0);
	set_age(entry(cache, hex), 700);
	CHECK_OUTCOME(fetch(d, hex, &res), res, -ENOENT, DEBUGINFOD_CACHED_MISS);
	put_file(miss_s, "30\n", 3);
	set_age(entry(cache, hex), 60);
	CHECK_OUTCOME(fetch(d, hex, &res), res, -ECONNREFUSED, DEBUGINFOD_CONNECTION_FAILED);
	/* elfutils before 0.187 left its misses with mode 000. */
	put_file(entry(cache, hex), "", 0);
	CHECK_INT(chmod(entry(cache, hex), 0), ==, 0);
	CHECK_OUTCOME(fetch(d, hex, &res), res, -ENOENT, DEBUGINFOD_CACHED_MISS);
	debuginfod__free(d);
}

TEST(debuginfod_download)
{
	const char *cache = scratch("download");
	struct debuginfod_result res;
	struct loopback lb;
	struct debuginfod *d;
	struct elf_file a, b;
	struct loopback_reply replies[2];
	char path[1024], want[512], *sent;
	uint8_t *got;
	size_t len;
	struct stat st;

	debug_file(0, &a);
	debug_file(1, &b);
	replies[0] = serve_file(&a);
	/* Chunked, and in pieces that split chunk headers. */
	replies[1] = serve("200 OK", b.data, b.len, 1000);
	replies[1].piece = 777;
	CHECK_INT(loopback__start(&lb, replies, 2), ==, 0);
	d = client(url_of(&lb, "/srv/"), cache);
	CHECK(debuginfod__enabled(d));
	CHECK_OUTCOME(debuginfod__fetch(d, a.hex, path, sizeof(path), &res), res, 0,
		      DEBUGINFOD_DOWNLOADED);
	CHECK_STR(path, entry(cache, a.hex));
	CHECK_U64(res.bytes, ==, a.len);
	CHECK_STR(res.server, url_of(&lb, "/srv/"));
	CHECK_INT(res.http_status, ==, 200);
	got = test_read_file(path, &len);
	CHECK_INT(len, ==, a.len);
	CHECK(!memcmp(got, a.data, len));
	free(got);
	CHECK_INT(stat(path, &st), ==, 0);
	CHECK_INT(st.st_mode & 0777, ==, 0400);
	CHECK_INT(files_in(cache, a.hex), ==, 1);
	CHECK_OUTCOME(fetch(d, b.hex, &res), res, 0, DEBUGINFOD_DOWNLOADED);
	got = test_read_file(entry(cache, b.hex), &len);
	CHECK_INT(len, ==, b.len);
	CHECK(!memcmp(got, b.data, len));
	free(got);
	/* The server has gone (it served two): the cache answers now. */
	loopback__stop(&lb);
	CHECK_OUTCOME(fetch(d, a.hex, &res), res, 0, DEBUGINFOD_FROM_CACHE);
	sent = loopback__requests(&lb, &len);
	CHECK(sent);
	snprintf(want, sizeof(want), "GET /srv/buildid/%s/debuginfo HTTP/1.1\r\n", a.hex);
	CHECK(strstr(sent, want) == sent);
	CHECK(strstr(sent, "\r\nX-DEBUGINFOD-MAXSIZE: "));
	free(sent);
	debuginfod__free(d);
}

TEST(debuginfod_second_server)
{
	const char *cache = scratch("second");
	struct loopback_reply first[] = {
		LOOPBACK_REPLY("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found")};
	struct loopback_reply second[1];
	struct debuginfod_result res;
	struct loopback lb1, lb2;
	struct debuginfod *d;
	struct elf_file a;
	char urls[300];

	debug_file(0, &a);
	second[0] = serve_file(&a);
	CHECK_INT(loopback__start(&lb1, first, 1), ==, 0);
	CHECK_INT(loopback__start(&lb2, second, 1), ==, 0);
	snprintf(urls, sizeof(urls), "%s  %s", url_of(&lb1, ""), url_of(&lb2, ""));
	d = client(urls, cache);
	CHECK_OUTCOME(fetch(d, a.hex, &res), res, 0, DEBUGINFOD_DOWNLOADED);
	CHECK_STR(res.server, url_of(&lb2, ""));
	CHECK_INT(files_in(cache, a.hex), ==, 1);
	loopback__stop(&lb1);
	loopback__stop(&lb2);
	debuginfod__free(d);
}

TEST(debuginfod_miss_remembered)
{
	const char *cache = scratch("miss");
	struct loopback_reply replies[] = {
		LOOPBACK_REPLY("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
		LOOPBACK_REPLY("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
	};
	const char *hex = "aabbccdd";
	struct debuginfod_result res;
	struct loopback lb;
	struct debuginfod *d;
	struct stat st;
	char urls[300];

	CHECK_INT(loopback__start(&lb, replies, 2), ==, 0);
	/* The same server twice, once with a slash, is asked once. */
	snprintf(urls, sizeof(urls), "%s %s %s", url_of(&lb, "/a"), url_of(&lb, "/b"),
		 url_of(&lb, "/a/"));
	d = client(urls, cache);
	CHECK_OUTCOME(fetch(d, hex, &res), res, -ENOENT, DEBUGINFOD_NOT_FOUND);
	CHECK(strstr(res.why, "2 asked"));
	CHECK_INT(stat(entry(cache, hex), &st), ==, 0);
	CHECK(S_ISREG(st.st_mode) && st.st_size == 0);
	CHECK_INT(files_in(cache, hex), ==, 1);
	CHECK_OUTCOME(fetch(d, hex, &res), res, -ENOENT, DEBUGINFOD_CACHED_MISS);
	loopback__stop(&lb);
	debuginfod__free(d);
}

/* One fetch from a server that answers replies[0..n): the outcome, and nothing in the cache. */
static void fetch_failing(struct loopback_reply *replies, size_t n, struct debuginfod_opts *o,
			  const char *hex, struct debuginfod_result *res, int *err)
{
	struct loopback lb;
	struct debuginfod *d;
	struct stat st;

	o->cache_dir = scratch("failing");
	CHECK_INT(loopback__start(&lb, replies, n), ==, 0);
	o->urls = url_of(&lb, "");
	d = client_opts(o);
	*err = fetch(d, hex, res);
	CHECK_INT(stat(entry(o->cache_dir, hex), &st), ==, -1);
	CHECK_INT(files_in(o->cache_dir, hex), ==, 0);
	loopback__stop(&lb);
	debuginfod__free(d);
}

TEST(debuginfod_server_error)
{
	struct loopback_reply replies[] = {LOOPBACK_REPLY(
		"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops")};
	struct debuginfod_opts o = {.timeout_ms = 5000};
	struct debuginfod_result res;
	int err;

	fetch_failing(replies, 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -EIO, DEBUGINFOD_SERVER_ERROR);
	CHECK_INT(res.http_status, ==, 500);
	CHECK(strstr(res.why, "500"));
}

TEST(debuginfod_error_then_miss_is_no_miss)
{
	const char *cache = scratch("mixed");
	struct loopback_reply first[] = {
		LOOPBACK_REPLY("HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n")};
	struct loopback_reply second[] = {
		LOOPBACK_REPLY("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")};
	struct debuginfod_result res;
	struct loopback lb1, lb2;
	struct debuginfod *d;
	struct stat st;
	char urls[300];

	CHECK_INT(loopback__start(&lb1, first, 1), ==, 0);
	CHECK_INT(loopback__start(&lb2, second, 1), ==, 0);
	snprintf(urls, sizeof(urls), "%s %s", url_of(&lb1, ""), url_of(&lb2, ""));
	d = client(urls, cache);
	/* The server that failed might have had it: reported, and no miss remembered. */
	CHECK_OUTCOME(fetch(d, "abcd", &res), res, -EIO, DEBUGINFOD_SERVER_ERROR);
	CHECK_STR(res.server, url_of(&lb1, ""));
	CHECK_INT(stat(entry(cache, "abcd"), &st), ==, -1);
	loopback__stop(&lb1);
	loopback__stop(&lb2);
	debuginfod__free(d);
}

TEST(debuginfod_stall_and_drip)
{
	static char body[200000];
	char head[128];
	struct loopback_reply stall[] = {{.silent = true}};
	struct loopback_reply drip[1];
	struct debuginfod_opts o = {.timeout_ms = 500};
	struct debuginfod_result res;
	int64_t t0;
	char *r;
	size_t n;
	int err;

	t0 = cancel_alarm__now_ms();
	fetch_failing(stall, 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -ETIMEDOUT, DEBUGINFOD_TIMEOUT);
	CHECK_INT(cancel_alarm__now_ms() - t0, <, 3000);
	/* A byte every 2 ms keeps every read alive; the file's deadline still ends it. */
	n = (size_t)snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n",
			     sizeof(body));
	r = malloc(n + sizeof(body));
	CHECK(r);
	memcpy(r, head, n);
	memset(r + n, 'x', sizeof(body));
	drip[0] = (struct loopback_reply){.data = r, .len = n + sizeof(body), .piece = 1};
	t0 = cancel_alarm__now_ms();
	fetch_failing(drip, 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -ETIMEDOUT, DEBUGINFOD_TIMEOUT);
	CHECK_INT(cancel_alarm__now_ms() - t0, <, 3000);
	free(r);
}

TEST(debuginfod_too_large)
{
	static char body[100000];
	struct loopback_reply replies[1];
	struct debuginfod_opts o = {.timeout_ms = 5000, .max_bytes = 50000};
	struct debuginfod_result res;
	int err;

	/* Said by Content-Length: refused before the body. */
	replies[0] = serve("200 OK", body, sizeof(body), 0);
	fetch_failing(replies, 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -EFBIG, DEBUGINFOD_TOO_LARGE);
	free((void *)replies[0].data);
	/* Found out while streaming: stopped at the cap. */
	replies[0] = serve("200 OK", body, sizeof(body), 4096);
	fetch_failing(replies, 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -EFBIG, DEBUGINFOD_TOO_LARGE);
	free((void *)replies[0].data);
	/* The server's refusal of elfutils' X-DEBUGINFOD-MAXSIZE. */
	replies[0] = (struct loopback_reply)LOOPBACK_REPLY(
		"HTTP/1.1 406 Not Acceptable\r\nContent-Length: 0\r\n\r\n");
	fetch_failing(replies, 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -EFBIG, DEBUGINFOD_TOO_LARGE);
	CHECK_INT(res.http_status, ==, 406);
}

TEST(debuginfod_wrong_file)
{
	struct loopback_reply replies[1];
	struct debuginfod_opts o = {.timeout_ms = 5000};
	struct debuginfod_result res;
	struct elf_file a, b;
	int err;

	debug_file(0, &a);
	debug_file(1, &b);
	replies[0] = serve_file(&b);
	fetch_failing(replies, 1, &o, a.hex, &res, &err);
	CHECK_OUTCOME(err, res, -ESTALE, DEBUGINFOD_BUILD_ID_MISMATCH);
	CHECK(strstr(res.why, b.hex));
	replies[0] = (struct loopback_reply)LOOPBACK_REPLY(
		"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world");
	fetch_failing(replies, 1, &o, a.hex, &res, &err);
	CHECK_OUTCOME(err, res, -ENOEXEC, DEBUGINFOD_NOT_ELF);
	replies[0] = (struct loopback_reply)LOOPBACK_REPLY(
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	fetch_failing(replies, 1, &o, a.hex, &res, &err);
	CHECK_OUTCOME(err, res, -ENOEXEC, DEBUGINFOD_NOT_ELF);
	CHECK(strstr(res.why, "empty"));
	/* The file cut short, said whole by its framing: its build ID is there, its end not. */
	replies[0] = serve("200 OK", a.data, a.len - 64, 0);
	fetch_failing(replies, 1, &o, a.hex, &res, &err);
	CHECK_OUTCOME(err, res, -ENOEXEC, DEBUGINFOD_NOT_ELF);
	CHECK(strstr(res.why, "truncated"));
	free((void *)replies[0].data);
	replies[0] = serve("200 OK", a.data, 64, 0);
	fetch_failing(replies, 1, &o, a.hex, &res, &err);
	CHECK_OUTCOME(err, res, -ENOEXEC, DEBUGINFOD_NOT_ELF);
	free((void *)replies[0].data);
}

TEST(debuginfod_redirects)
{
	const char *cache = scratch("redirect");
	struct loopback_reply first[2], other[1];
	struct debuginfod_result res;
	struct loopback lb, lb2;
	struct debuginfod *d;
	struct elf_file a, b;
	char location[300], *sent;
	size_t len;

	debug_file(0, &a);
	debug_file(1, &b);
	/* To another path on the same server, then to another server. */
	first[0] = (struct loopback_reply)LOOPBACK_REPLY(
		"HTTP/1.1 302 Found\r\nLocation: /files/a.debug?sig=1#frag\r\n"
		"Content-Length: 0\r\n\r\n");
	first[1] = serve_file(&a);
	other[0] = serve_file(&b);
	CHECK_INT(loopback__start(&lb, first, 2), ==, 0);
	CHECK_INT(loopback__start(&lb2, other, 1), ==, 0);
	d = client(url_of(&lb, ""), cache);
	CHECK_OUTCOME(fetch(d, a.hex, &res), res, 0, DEBUGINFOD_DOWNLOADED);
	loopback__stop(&lb);
	sent = loopback__requests(&lb, &len);
	CHECK(sent && strstr(sent, "GET /files/a.debug?sig=1 HTTP/1.1\r\n"));
	free(sent);
	debuginfod__free(d);
	snprintf(location, sizeof(location),
		 "HTTP/1.1 301 Moved\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n",
		 url_of(&lb2, "/b"));
	first[0] = (struct loopback_reply){.data = location, .len = strlen(location)};
	CHECK_INT(loopback__start(&lb, first, 1), ==, 0);
	d = client(url_of(&lb, ""), cache);
	CHECK_OUTCOME(fetch(d, b.hex, &res), res, 0, DEBUGINFOD_DOWNLOADED);
	CHECK_STR(res.server, url_of(&lb, ""));
	loopback__stop(&lb);
	loopback__stop(&lb2);
	sent = loopback__requests(&lb2, &len);
	CHECK(sent && strstr(sent, "GET /b HTTP/1.1\r\n"));
	free(sent);
	debuginfod__free(d);
}

TEST(debuginfod_redirect_loops)
{
	static char chain[DEBUGINFOD_MAX_REDIRECTS + 1][128];
	struct loopback_reply back[] = {
		LOOPBACK_REPLY(
			"HTTP/1.1 307 x\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n"),
		LOOPBACK_REPLY("HTTP/1.1 307 x\r\nLocation: /buildid/abcd/debuginfo\r\n"
			       "Content-Length: 0\r\n\r\n"),
	};
	struct loopback_reply replies[DEBUGINFOD_MAX_REDIRECTS + 1];
	struct debuginfod_opts o = {.timeout_ms = 5000};
	struct debuginfod_result res;
	int i, err;

	fetch_failing(back, 2, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -ELOOP, DEBUGINFOD_REDIRECT_LOOP);
	CHECK(strstr(res.why, "back"));
	/* Never back, but on and on. */
	for (i = 0; i <= DEBUGINFOD_MAX_REDIRECTS; i++) {
		snprintf(chain[i], sizeof(chain[i]),
			 "HTTP/1.1 302 x\r\nLocation: /hop%d\r\nContent-Length: 0\r\n\r\n", i);
		replies[i] = (struct loopback_reply){.data = chain[i], .len = strlen(chain[i])};
	}
	fetch_failing(replies, DEBUGINFOD_MAX_REDIRECTS + 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -ELOOP, DEBUGINFOD_REDIRECT_LOOP);
	CHECK(strstr(res.why, "more than"));
	/* A redirect that goes nowhere cprof can follow. */
	back[0] = (struct loopback_reply)LOOPBACK_REPLY(
		"HTTP/1.1 302 x\r\nLocation: ftp://x/y\r\nContent-Length: 0\r\n\r\n");
	fetch_failing(back, 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -EIO, DEBUGINFOD_SERVER_ERROR);
}

TEST(debuginfod_truncated)
{
	struct loopback_reply replies[] = {
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n\x7f"
			       "ELF and then nothing"),
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			       "1000\r\n\x7f"
			       "ELF"),
		LOOPBACK_REPLY("garbage, not HTTP\r\n\r\n"),
	};
	struct debuginfod_opts o = {.timeout_ms = 5000};
	struct debuginfod_result res;
	int err;

	fetch_failing(&replies[0], 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -ECONNRESET, DEBUGINFOD_CONNECTION_FAILED);
	CHECK(strstr(res.why, "mid-response"));
	fetch_failing(&replies[1], 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -ECONNRESET, DEBUGINFOD_CONNECTION_FAILED);
	fetch_failing(&replies[2], 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -EBADMSG, DEBUGINFOD_SERVER_ERROR);
}

TEST(debuginfod_cancel)
{
	struct loopback_reply replies[] = {{.silent = true}};
	struct debuginfod_opts o = {.timeout_ms = 20000};
	struct debuginfod_result res;
	struct cancel *c;
	int64_t t0;
	int err;

	CHECK_INT(cancel__new(&c), ==, 0);
	o.cancel = c;
	t0 = cancel_alarm__now_ms();
	cancel_alarm__start(c, 200);
	fetch_failing(replies, 1, &o, "abcd", &res, &err);
	CHECK_OUTCOME(err, res, -ECANCELED, DEBUGINFOD_CANCELLED);
	CHECK_INT(cancel_alarm__now_ms() - t0, <, 5000);
	/* Once triggered, no fetch starts. */
	o.urls = closed_url();
	{
		struct debuginfod *d = client_opts(&o);

		CHECK_OUTCOME(fetch(d, "abcd", &res), res, -ECANCELED, DEBUGINFOD_CANCELLED);
		debuginfod__free(d);
	}
	cancel__free(c);
}

TEST(debuginfod_cache_not_writable)
{
	const char *dir = scratch("notwritable");
	struct debuginfod_result res;
	struct debuginfod *d;
	char file[4096], cache[4096];

	/* Below a regular file, as nothing (root included) can write there. */
	CHECK_INT(snprintf(file, sizeof(file), "%s/file", dir), <, (int)sizeof(file));
	put_file(file, "x", 1);
	CHECK_INT(snprintf(cache, sizeof(cache), "%s/cache", file), <, (int)sizeof(cache));
	d = client(closed_url(), cache);
	CHECK_OUTCOME(fetch(d, "abcd", &res), res, -ENOTDIR, DEBUGINFOD_CACHE_NOT_WRITABLE);
	debuginfod__free(d);
	/* A build ID whose place is not a directory: never followed. */
	CHECK_INT(snprintf(cache, sizeof(cache), "%s/cache2", dir), <, (int)sizeof(cache));
	CHECK_INT(mkdir(cache, 0700), ==, 0);
	CHECK_INT(snprintf(file, sizeof(file), "%s/abcd", cache), <, (int)sizeof(file));
	CHECK_INT(symlink("/tmp", file), ==, 0);
	d = client(closed_url(), cache);
	CHECK_INT(fetch(d, "abcd", &res), <, 0);
	CHECK_INT(res.status, ==, DEBUGINFOD_CACHE_NOT_WRITABLE);
	debuginfod__free(d);
}

TEST(debuginfod_through_proxy)
{
	const char *cache = scratch("proxy");
	struct loopback_reply replies[1];
	struct proxy_env env = {0};
	struct debuginfod_opts o = {.urls = "http://debuginfod.invalid:8002",
				    .cache_dir = cache,
				    .proxy_env = &env,
				    .timeout_ms = 5000};
	struct debuginfod_result res;
	struct loopback lb;
	struct debuginfod *d;
	struct elf_file a;
	char want[300], *sent;
	size_t len;

	debug_file(0, &a);
	replies[0] = serve_file(&a);
	CHECK_INT(loopback__start(&lb, replies, 1), ==, 0);
	env.http_proxy = url_of(&lb, "");
	d = client_opts(&o);
	CHECK_OUTCOME(fetch(d, a.hex, &res), res, 0, DEBUGINFOD_DOWNLOADED);
	loopback__stop(&lb);
	sent = loopback__requests(&lb, &len);
	snprintf(want, sizeof(want), "GET http://debuginfod.invalid:8002/buildid/%s/debuginfo ",
		 a.hex);
	CHECK(sent && strstr(sent, want) == sent);
	free(sent);
	debuginfod__free(d);
}

/*
 * The queue the symbolizer asks: a build ID asked twice is one request and
 * one download; results come while the caller goes on; a wait ends at its
 * deadline when a server stalls; the queue ends at once once cancelled.
 */
TEST(debuginfod_queue_fetches_once_and_in_the_background)
{
	const char *cache = scratch("queue");
	struct loopback_reply replies[1];
	struct debuginfod_queue *q;
	struct debuginfod_counts c;
	struct loopback lb;
	struct debuginfod *d;
	struct elf_file a;
	uint32_t t1, t2;
	const char *path;

	debug_file(0, &a);
	replies[0] = serve_file(&a);
	CHECK_INT(loopback__start(&lb, replies, 1), ==, 0);
	d = client(url_of(&lb, ""), cache);
	CHECK_INT(debuginfod_queue__new(d, &q), ==, 0);
	CHECK_INT(debuginfod_queue__request(q, a.hex, &t1), ==, 0);
	CHECK_INT(debuginfod_queue__request(q, a.hex, &t2), ==, 0);
	CHECK_INT(t1, ==, t2);
	CHECK(debuginfod_queue__wait(q, clock__mono_ns() + 10000000000ull));
	CHECK_INT(debuginfod_queue__ended(q), ==, 1);
	CHECK_INT(debuginfod_queue__result(q, t1, &path), ==, 1);
	CHECK_STR(path, entry(cache, a.hex));
	CHECK_INT(debuginfod_queue__result(q, t1 + 1, &path), ==, -1);
	debuginfod_queue__counts(q, &c);
	CHECK_INT(c.status[DEBUGINFOD_DOWNLOADED], ==, 1);
	CHECK_INT(c.unfinished, ==, 0);
	debuginfod_queue__free(q);
	debuginfod__free(d);
	loopback__stop(&lb);
	free((void *)replies[0].data);
}

TEST(debuginfod_queue_wait_is_bounded)
{
	const char *cache = scratch("queue-stall");
	struct loopback_reply replies[] = {{.silent = true}};
	struct debuginfod_opts o = {.cache_dir = cache, .timeout_ms = 20000};
	struct debuginfod_queue *q;
	struct debuginfod_counts c;
	struct loopback lb;
	struct debuginfod *d;
	struct cancel *cn;
	uint64_t t0;
	uint32_t t;
	const char *path;

	CHECK_INT(cancel__new(&cn), ==, 0);
	CHECK_INT(loopback__start(&lb, replies, 1), ==, 0);
	o.urls = url_of(&lb, "");
	o.cancel = cn;
	d = client_opts(&o);
	CHECK_INT(debuginfod_queue__new(d, &q), ==, 0);
	CHECK_INT(debuginfod_queue__request(q, "abcd", &t), ==, 0);
	t0 = clock__mono_ns();
	CHECK(!debuginfod_queue__wait(q, t0 + 300000000ull));
	CHECK_INT(clock__mono_ns() - t0, >=, 300000000ull);
	CHECK_INT(clock__mono_ns() - t0, <, 5000000000ull);
	CHECK_INT(debuginfod_queue__result(q, t, &path), ==, 0);
	debuginfod_queue__counts(q, &c);
	CHECK_INT(c.unfinished, ==, 1);
	/* Cancelled, the fetch under way ends and the queue with it. */
	cancel__trigger(cn);
	t0 = clock__mono_ns();
	debuginfod_queue__free(q);
	CHECK_INT(clock__mono_ns() - t0, <, 5000000000ull);
	debuginfod__free(d);
	loopback__stop(&lb);
	cancel__free(cn);
}

/* A run asks for at most max_files files, then says why it asks for no more. */
TEST(debuginfod_run_file_cap)
{
	const char *cache = scratch("filecap");
	struct debuginfod_opts o = {.cache_dir = cache, .timeout_ms = 5000, .max_files = 1};
	struct loopback_reply replies[1] = {
		LOOPBACK_REPLY("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")};
	struct debuginfod_budget spent;
	struct debuginfod_result res;
	struct debuginfod *d;
	struct loopback lb;

	CHECK_INT(loopback__start(&lb, replies, 1), ==, 0);
	o.urls = url_of(&lb, "");
	d = client_opts(&o);
	CHECK_OUTCOME(fetch(d, "abcd", &res), res, -ENOENT, DEBUGINFOD_NOT_FOUND);
	CHECK_OUTCOME(fetch(d, "abce", &res), res, -EDQUOT, DEBUGINFOD_RUN_FILES_CAP);
	CHECK_INT(files_in(cache, "abce"), ==, 0);
	/* A remembered miss asks no server: not counted against the cap. */
	CHECK_OUTCOME(fetch(d, "abcd", &res), res, -ENOENT, DEBUGINFOD_CACHED_MISS);
	debuginfod__budget(d, &spent);
	CHECK_U64(spent.asked, ==, 2);
	loopback__stop(&lb);
	debuginfod__free(d);
}

/*
 * A run downloads at most twice max_bytes: the file that would go past it
 * is refused, by its Content-Length, and counted apart from a file too large.
 */
TEST(debuginfod_run_byte_cap)
{
	const char *cache = scratch("bytecap");
	struct debuginfod_opts o = {.cache_dir = cache, .timeout_ms = 5000};
	struct loopback_reply replies[3];
	struct debuginfod_budget spent;
	struct debuginfod_result res;
	struct elf_file e[3];
	struct debuginfod *d;
	struct loopback lb;
	int i;

	for (i = 0; i < 3; i++) {
		debug_file(10 + i, &e[i]);
		replies[i] = serve_file(&e[i]);
		if (e[i].len + 100 > o.max_bytes)
			o.max_bytes = e[i].len + 100;
	}
	CHECK_INT(loopback__start(&lb, replies, 3), ==, 0);
	o.urls = url_of(&lb, "");
	d = client_opts(&o);
	CHECK_OUTCOME(fetch(d, e[0].hex, &res), res, 0, DEBUGINFOD_DOWNLOADED);
	CHECK_OUTCOME(fetch(d, e[1].hex, &res), res, 0, DEBUGINFOD_DOWNLOADED);
	CHECK_OUTCOME(fetch(d, e[2].hex, &res), res, -EFBIG, DEBUGINFOD_RUN_BYTES_CAP);
	CHECK_INT(files_in(cache, e[2].hex), ==, 0);
	debuginfod__budget(d, &spent);
	CHECK_U64(spent.bytes, <=, 2 * o.max_bytes);
	CHECK_U64(spent.bytes, >=, e[0].len + e[1].len);
	loopback__stop(&lb);
	debuginfod__free(d);
	for (i = 0; i < 3; i++)
		free((void *)replies[i].data);
}

/* Past four times max_bytes, a download prunes the files used longest ago. */
TEST(debuginfod_cache_cap)
{
	const char *cache = scratch("cachecap");
	struct debuginfod_opts o = {.cache_dir = cache, .timeout_ms = 5000};
	struct loopback_reply replies[1];
	struct debuginfod_budget spent;
	struct debuginfod_result res;
	struct elf_file a;
	struct debuginfod *d;
	struct loopback lb;
	struct stat st;
	char *old;

	debug_file(0, &a);
	o.max_bytes = a.len;
	old = calloc(4, a.len);
	CHECK(old);
	put_file(entry(cache, "00aa"), old, 4 * a.len);
	set_age(entry(cache, "00aa"), 3600);
	replies[0] = serve_file(&a);
	CHECK_INT(loopback__start(&lb, replies, 1), ==, 0);
	o.urls = url_of(&lb, "");
	d = client_opts(&o);
	CHECK_OUTCOME(fetch(d, a.hex, &res), res, 0, DEBUGINFOD_DOWNLOADED);
	CHECK_INT(stat(entry(cache, "00aa"), &st), ==, -1);
	CHECK_INT(stat(entry(cache, a.hex), &st), ==, 0);
	debuginfod__budget(d, &spent);
	CHECK_U64(spent.pruned, ==, 1);
	CHECK_U64(spent.pruned_bytes, ==, 4 * a.len);
	loopback__stop(&lb);
	debuginfod__free(d);
	free(old);
	free((void *)replies[0].data);
}

/* A cache directory another user may write into is refused: nothing fetched. */
TEST(debuginfod_cache_dir_must_be_private)
{
	const char *cache = scratch("shared");
	struct debuginfod_result res;
	struct debuginfod *d;

	CHECK_INT(chmod(cache, 01777), ==, 0);
	d = client(closed_url(), cache);
	CHECK(!debuginfod__enabled(d));
	debuginfod__free(d);
	/* Made so while the client ran: refused when a fetch opens it. */
	CHECK_INT(chmod(cache, 0700), ==, 0);
	d = client(closed_url(), cache);
	CHECK(debuginfod__enabled(d));
	CHECK_INT(chmod(cache, 0777), ==, 0);
	CHECK_OUTCOME(fetch(d, "abcd", &res), res, -EPERM, DEBUGINFOD_CACHE_NOT_WRITABLE);
	debuginfod__free(d);
}
