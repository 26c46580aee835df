// SPDX-License-Identifier: MIT
/*
 * The unwind tables kept on disk; see table_store.h. What a table's file
 * holds and how it is named is unwind/kept_tables.c's; the store keeps
 * files by name, within its cap.
 *
 * Two threads use the store at once: the main thread's unwind tables and
 * the symbol loader's kept symbols (resolve/symtab_loader.h). A mutex
 * guards what they share, the byte count, the counters and the directory
 * listing (prune, whose dup'ed descriptor shares one offset); files are
 * read and written outside it, each under a name of its own.
 */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_MODULE "tables"
#include "lib/file.h"
#include "lib/log.h"
#include "store/table_store.h"

#define SUFFIX TABLE_STORE_SUFFIX
/* What else is kept here: see table_store__read_kept. */
#define KEPT_SUFFIX ".kept"

/* No one file takes more than this share of the cap: it would push out many others. */
#define ENTRY_SHARE 8

struct table_store {
	int dir_fd;
	uint64_t max_bytes;
	pthread_mutex_t lock;
	/* Under lock: */
	uint64_t bytes; /* of the files, as last listed and since written */
	struct table_store_stats stats;
};

/* Adds one to a counter of s->stats. */
static void bump(struct table_store *s, uint64_t *counter)
{
	pthread_mutex_lock(&s->lock);
	(*counter)++;
	pthread_mutex_unlock(&s->lock);
}

const char *table_store__default_dir(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && *xdg == '/')
		snprintf(buf, size, "%s/cprof", xdg);
	else if (home && *home == '/')
		snprintf(buf, size, "%s/.cache/cprof", home);
	else
		snprintf(buf, size, "/var/cache/cprof");
	return buf;
}

/* A directory of ours that nobody else may write into: tables steer the unwinder. */
static int check_dir(int fd, const char *dir)
{
	char why[96];
	int err = file__check_private_dir(fd, why, sizeof(why));

	if (err == -EPERM)
		pr_debug("%s: not used: %s", dir, why);
	return err;
}

struct file_age {
	char name[80];
	time_t mtime;
	off_t size;
};

static int older_first(const void *a, const void *b)
{
	const struct file_age *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

static bool ends_with(const char *name, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len > n && !strcmp(name + len - n, suffix);
}

/* The store's files, in *out (n of them), and their total size. */
static uint64_t list_tables(struct table_store *s, struct file_age **out, size_t *n)
{
	struct file_age *v = NULL, *tmp;
	size_t cap = 0, len;
	uint64_t total = 0;
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int fd = dup(s->dir_fd);

	*out = NULL;
	*n = 0;
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	/* The dup shares the offset an earlier listing left at the end. */
	rewinddir(dir);
	while ((d = readdir(dir))) {
		len = strlen(d->d_name);
		if (len >= sizeof(v->name) ||
		    (!ends_with(d->d_name, len, SUFFIX) &&
		     !ends_with(d->d_name, len, KEPT_SUFFIX)) ||
		    fstatat(s->dir_fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			tmp = realloc(v, cap * sizeof(*v));
			if (!tmp)
				break;
			v = tmp;
		}
		memcpy(v[*n].name, d->d_name, len + 1);
		v[*n].mtime = st.st_mtime;
		v[*n].size = st.st_size;
		total += (uint64_t)st.st_size;
		(*n)++;
	}
	closedir(dir);
	*out = v;
	return total;
}

/*
 * Room for need more bytes: past the cap, the files used longest ago go,
 * down to three quarters of it less need. Under lock (but at open).
 */
static void prune(struct table_store *s, uint64_t need)
{
	uint64_t low = s->max_bytes / 4 * 3 - need;
	struct file_age *v;
	size_t n, i;
	uint64_t total = list_tables(s, &v, &n);

	if (total + need > s->max_bytes) {
		qsort(v, n, sizeof(*v), older_first);
		for (i = 0; i < n && total > low; i++) {
			if (unlinkat(s->dir_fd, v[i].name, 0))
				continue;
			total -= (uint64_t)v[i].size;
			s->stats.pruned++;
		}
	}
	s->bytes = total;
	free(v);
}

int table_store__open(const char *dir, uint64_t max_bytes, struct table_store **out)
{
	struct table_store *s;
	int err;

	*out = NULL;
	err = file__make_dirs(dir);
	if (err) {
		pr_debug("%s: not used: %s", dir, strerror(-err));
		return err;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->max_bytes = max_bytes;
	pthread_mutex_init(&s->lock, NULL);
	s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = s->dir_fd < 0 ? -errno : check_dir(s->dir_fd, dir);
	if (err) {
		if (err != -EPERM)
			pr_debug("%s: not used: %s", dir, strerror(-err));
		table_store__free(s);
		return err;
	}
	prune(s, 0);
	*out = s;
	return 0;
}

void table_store__free(struct table_store *s)
{
	if (!s)
		return;
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

bool table_store__trusts(struct table_store *s, const struct kept_source *file)
{
	if (kept_source__trusted(file, (uint32_t)geteuid()))
		return true;
	bump(s, &s->stats.foreign);
	return false;
}

/* The file's bytes (malloc'ed), if it is a regular file of ours: 0, -ENOENT or -errno. */
static int read_whole(struct table_store *s, const char *name, char **buf, size_t *len)
{
	int err, fd = file__open_ours(s->dir_fd, name, O_RDONLY);

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return -ENOENT;
	err = file__read_fd(fd, buf, len);
	close(fd);
	return err;
}

/* The bytes of the store's file name, 0 if there is none. */
static uint64_t size_of(struct table_store *s, const char *name)
{
	struct stat st;

	if (fstatat(s->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
		return 0;
	return (uint64_t)st.st_size;
}

/* The store's bytes once len bytes replace the file of old bytes. */
static uint64_t bytes_after(const struct table_store *s, uint64_t old, size_t len)
{
	return (s->bytes > old ? s->bytes - old : 0) + len;
}

/*
 * Whether len bytes under name keep the store within its cap, once the
 * files used longest ago are gone if need be; a file larger than a share
 * of the cap is not written at all. Counted, when not. Under lock.
 */
static bool reserve(struct table_store *s, const char *name, size_t len)
{
	uint64_t old = size_of(s, name);

	if (len > s->max_bytes / ENTRY_SHARE) {
		pr_debug("%s: not kept: %zu bytes, past 1/%d of the store's cap", name, len,
			 ENTRY_SHARE);
		s->stats.capped++;
		return false;
	}
	if (bytes_after(s, old, len) > s->max_bytes) {
		prune(s, len);
		old = size_of(s, name);
	}
	if (bytes_after(s, old, len) > s->max_bytes) {
		pr_debug("%s: not kept: the store is full", name);
		s->stats.capped++;
		return false;
	}
	s->bytes = bytes_after(s, old, len);
	return true;
}

/* reserve, under the lock: the bytes are the store's once counted, before they are written. */
static bool room_for(struct table_store *s, const char *name, size_t len)
{
	bool room;

	pthread_mutex_lock(&s->lock);
	room = reserve(s, name, len);
	pthread_mutex_unlock(&s->lock);
	return room;
}

/* Writes the file whole: under a temporary name, then renamed; within the store's cap. */
static int write_file(struct table_store *s, const char *name, const void *buf, size_t len)
{
	char tmp[NAME_MAX + 1];
	int fd, err = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (!room_for(s, name, len))
		return -EFBIG;
	fd = openat(s->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		err = -errno;
	if (!err)
		err = file__write_all(fd, buf, len);
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (!err && renameat(s->dir_fd, tmp, s->dir_fd, name))
		err = -errno;
	if (err) {
		pr_debug("%s: cannot write: %s", name, strerror(-err));
		unlinkat(s->dir_fd, tmp, 0);
	}
	return err;
}

int table_store__read_file(struct table_store *s, const char *name, char **buf, size_t *len)
{
	return read_whole(s, name, buf, len);
}

int table_store__write_file(struct table_store *s, const char *name, const void *buf, size_t len)
{
	return write_file(s, name, buf, len);
}

void table_store__used(struct table_store *s, const char *name)
{
	utimensat(s->dir_fd, name, NULL, 0);
}

void table_store__count(struct table_store *s, enum table_store_event e)
{
	uint64_t *counter = &s->stats.refused;

	if (e == TABLE_STORE_LOADED)
		counter = &s->stats.loaded;
	else if (e == TABLE_STORE_SAVED)
		counter = &s->stats.saved;
	bump(s, counter);
}

/* A kept file's name: key and the suffix; 0, or -ENAMETOOLONG. */
static int kept_name(const char *key, char *buf, size_t size)
{
	return (size_t)snprintf(buf, size, "%s%s", key, KEPT_SUFFIX) < size ? 0 : -ENAMETOOLONG;
}

int table_store__read_kept_all(struct table_store *s, const char *key, char **buf, size_t *len)
{
	char name[NAME_MAX + 1];
	int err = kept_name(key, name, sizeof(name));

	*buf = NULL;
	*len = 0;
	if (!err)
		err = read_whole(s, name, buf, len);
	if (!err)
		utimensat(s->dir_fd, name, NULL, 0);
	return err;
}

int table_store__read_kept(struct table_store *s, const char *key, void *buf, size_t size)
{
	size_t len;
	char *all;
	int err = table_store__read_kept_all(s, key, &all, &len);

	if (err)
		return err;
	len = len < size ? len : size;
	memcpy(buf, all, len);
	free(all);
	return (int)len;
}

void table_store__write_kept(struct table_store *s, const char *key, const void *buf, size_t len)
{
	char name[NAME_MAX + 1];

	if (!kept_name(key, name, sizeof(name)))
		write_file(s, name, buf, len);
}

void table_store__stats(struct table_store *s, struct table_store_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->stats;
	pthread_mutex_unlock(&s->lock);
}
