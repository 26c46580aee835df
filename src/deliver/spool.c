// SPDX-License-Identifier: MIT
/*
 * The spool; see spool.h. An entry file is:
 *
 *   "CPROFSP1" | u64 time_ns | u64 duration_ns | u32 nseries | u32 done |
 *   per series: u32 nlabels | (u32 len, name, u32 len, value)... |
 *               36-byte id | u64 len | gzipped pprof |
 *   u32 CRC-32 of everything before it
 *
 * little-endian. The CRC catches a torn or damaged file, which is then
 * removed and counted rather than sent or allowed to block the queue.
 *
 * What is in the spool is sent with the operator's credentials, so the
 * directory must be ours alone (file__check_private_dir), and every file in
 * it is reached through its descriptor without following a link, created
 * with O_EXCL, opened without blocking and used only if it is a regular file
 * of ours: anything else is left alone and counted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define LOG_MODULE "spool"
#include "deliver/batch.h"
#include "deliver/spool.h"
#include "lib/pb_writer.h"
#include "lib/file.h"
#include "lib/log.h"

#define MAGIC	   "CPROFSP1"
#define MAGIC_LEN  8
#define SUFFIX	   ".batch"
#define SEQ_DIGITS 20
#define MAX_LABELS 1024
#define MAX_SERIES (1u << 20)
#define LOCK_NAME  ".lock"

struct entry {
	uint64_t seq;
	uint64_t size;
};

struct spool {
	char *dir;
	int dir_fd;
	int lock_fd;
	uint64_t max_bytes;
	struct entry *entries; /* sorted by seq; [head, n) are live */
	size_t head, n, cap;
	uint64_t bytes;
	uint64_t next_seq;
	uint64_t dropped;
	uint64_t corrupt;
	uint64_t refused;
};

static void entry_path(uint64_t seq, const char *suffix, char *buf, size_t size)
{
	snprintf(buf, size, "%0*" PRIu64 "%s%s", SEQ_DIGITS, seq, SUFFIX, suffix);
}

static int push_entry(struct spool *s, uint64_t seq, uint64_t size)
{
	if (s->head && s->n == s->cap) {
		memmove(s->entries, s->entries + s->head, (s->n - s->head) * sizeof(*s->entries));
		s->n -= s->head;
		s->head = 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct entry *e = reallocarray(s->entries, cap, sizeof(*e));

		if (!e)
			return -ENOMEM;
		s->entries = e;
		s->cap = cap;
	}
	s->entries[s->n++] = (struct entry){seq, size};
	s->bytes += size;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool parse_name(const char *name, uint64_t *seq, bool *tmp)
{
	size_t i;
	uint64_t v = 0;

	for (i = 0; i < SEQ_DIGITS; i++) {
		if (name[i] < '0' || name[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	if (strcmp(name + SEQ_DIGITS, SUFFIX) == 0)
		*tmp = false;
	else if (strcmp(name + SEQ_DIGITS, SUFFIX ".tmp") == 0)
		*tmp = true;
	else
		return false;
	*seq = v;
	return true;
}

/* Creates name afresh; a name in the way is removed (the name only, never what it may point to)
 * once. */
static int create_new(const struct spool *s, const char *name, int flags)
{
	int fd, tries;

	for (tries = 0;; tries++) {
		fd = openat(s->dir_fd, name,
			    flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST || tries == 1)
			return -errno;
		unlinkat(s->dir_fd, name, 0);
	}
}

static int open_lock(struct spool *s)
{
	int fd = openat(s->dir_fd, LOCK_NAME,
			O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);

	if (fd < 0 && errno == EEXIST)
		fd = file__open_ours(s->dir_fd, LOCK_NAME, O_RDWR);
	else if (fd < 0)
		fd = -errno;
	if (fd == -EPERM)
		pr_err("cannot use the spool directory %s: its %s is not a regular file of uid %u",
		       s->dir, LOCK_NAME, (unsigned)geteuid());
	else if (fd < 0)
		pr_err("cannot create %s/%s: %s", s->dir, LOCK_NAME, strerror(-fd));
	return fd;
}

static int scan(struct spool *s)
{
	struct dirent *de;
	DIR *d;
	int fd, err = 0;

	fd = dup(s->dir_fd);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		struct stat st;
		uint64_t seq;
		bool tmp;

		if (!parse_name(de->d_name, &seq, &tmp))
			continue;
		/* A temporary file is a write that never completed: it was never queued. */
		if (tmp) {
			unlinkat(s->dir_fd, de->d_name, 0);
			continue;
		}
		/* Numbered past every name, ours or not, so that none is written over. */
		if (seq >= s->next_seq)
			s->next_seq = seq + 1;
		if (fstatat(s->dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		/* Only a regular file of ours is sent: anything else could speak for another. */
		if (!file__is_ours(&st)) {
			s->refused++;
			continue;
		}
		err = push_entry(s, seq, (uint64_t)st.st_size);
		if (err)
			break;
	}
	closedir(d);
	if (s->refused)
		pr_warn("%" PRIu64 " %s in the spool %s %s not a regular file of uid %u: left "
			"there, not sent",
			s->refused, s->refused == 1 ? "entry" : "entries", s->dir,
			s->refused == 1 ? "is" : "are", (unsigned)geteuid());
	if (s->n)
		qsort(s->entries, s->n, sizeof(*s->entries), cmp_entry);
	return err;
}

static void skip_head(struct spool *s)
{
	s->bytes -= s->entries[s->head].size;
	s->head++;
}

static int remove_head(struct spool *s)
{
	char name[64];

	if (s->head == s->n)
		return -ENOENT;
	entry_path(s->entries[s->head].seq, "", name, sizeof(name));
	if (unlinkat(s->dir_fd, name, 0) && errno != ENOENT) {
		int err = -errno;

		pr_warn("cannot remove %s/%s: %s", s->dir, name, strerror(-err));
		return err;
	}
	skip_head(s);
	return 0;
}

static void enforce_cap(struct spool *s, uint64_t incoming)
{
	while (s->head < s->n && s->bytes + incoming > s->max_bytes) {
		if (remove_head(s))
			break;
		s->dropped++;
	}
}

static bool is_link(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISLNK(st.st_mode);
}

int spool__open(const char *dir, uint64_t max_bytes, struct spool **out)
{
	struct spool *s;
	char why[96];
	int err;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dir_fd = s->lock_fd = -1;
	s->max_bytes = max_bytes;
	s->next_seq = 1;
	s->dir = strdup(dir);
	if (!s->dir) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = file__make_dirs(dir);
	if (err) {
		pr_err("cannot create the spool directory %s: %s", dir, strerror(-err));
		goto cleanup;
	}
	/* A link here could lead anywhere root may write: the directory itself is wanted. */
	s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0) {
		err = -errno;
		pr_err("cannot open the spool directory %s: %s", dir,
		       is_link(dir) ? "it is a symbolic link" : strerror(-err));
		goto cleanup;
	}
	err = file__check_private_dir(s->dir_fd, why, sizeof(why));
	if (err) {
		pr_err("refusing the spool directory %s: %s", dir,
		       err == -EPERM ? why : strerror(-err));
		goto cleanup;
	}
	s->lock_fd = open_lock(s);
	if (s->lock_fd < 0) {
		err = s->lock_fd;
		goto cleanup;
	}
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		pr_err("the spool directory %s is in use by another cprof; give each its own "
		       "--spool-dir",
		       dir);
		goto cleanup;
	}
	err = scan(s);
	if (err) {
		pr_err("cannot read the spool directory %s: %s", dir, strerror(-err));
		goto cleanup;
	}
	enforce_cap(s, 0);
	*out = s;
	return 0;
cleanup:
	spool__free(s);
	return err;
}

void spool__free(struct spool *s)
{
	if (!s)
		return;
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	free(s->entries);
	free(s->dir);
	free(s);
}

/* Serialization. */

static void put_u32(struct pb_writer *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	pb_writer__raw(w, b, sizeof(b));
}

static void put_u64(struct pb_writer *w, uint64_t v)
{
	put_u32(w, (uint32_t)v);
	put_u32(w, (uint32_t)(v >> 32));
}

static void put_str(struct pb_writer *w, const char *s)
{
	size_t n = strlen(s);

	put_u32(w, (uint32_t)n);
	pb_writer__raw(w, s, n);
}

static int serialize(const struct batch *b, struct pb_buffer *buf)
{
	struct pb_writer w;
	size_t i, j;

	pb_writer__init_buffer(&w, buf);
	pb_writer__raw(&w, MAGIC, MAGIC_LEN);
	put_u64(&w, b->time_ns);
	put_u64(&w, b->duration_ns);
	put_u32(&w, (uint32_t)b->nseries);
	put_u32(&w, (uint32_t)b->done);
	for (i = 0; i < b->nseries; i++) {
		const struct batch_series *s = &b->series[i];

		put_u32(&w, (uint32_t)s->labels.n);
		for (j = 0; j < s->labels.n; j++) {
			put_str(&w, s->labels.v[j].name);
			put_str(&w, s->labels.v[j].value);
		}
		pb_writer__raw(&w, s->id, BATCH_ID_LEN);
		put_u64(&w, s->profile_len);
		pb_writer__raw(&w, s->profile, s->profile_len);
	}
	if (!w.err)
		put_u32(&w, (uint32_t)crc32_z(0, buf->data, buf->len));
	return w.err;
}

struct reader {
	const uint8_t *p, *end;
	bool bad;
};

static const uint8_t *take(struct reader *r, uint64_t n)
{
	const uint8_t *p = r->p;

	if (r->bad || n > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	return p;
}

static uint32_t get_u32(struct reader *r)
{
	const uint8_t *b = take(r, 4);

	return b ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
			       (uint32_t)b[3] << 24
		 : 0;
}

static uint64_t get_u64(struct reader *r)
{
	uint64_t lo = get_u32(r);

	return lo | (uint64_t)get_u32(r) << 32;
}

static char *get_str(struct reader *r)
{
	uint32_t n = get_u32(r);
	const uint8_t *p = take(r, n);
	char *s;

	if (!p)
		return NULL;
	if (memchr(p, '\0', n)) {
		r->bad = true;
		return NULL;
	}
	s = strndup((const char *)p, n);
	if (!s)
		r->bad = true;
	return s;
}

static int read_series(struct reader *r, struct batch *b)
{
	struct labels labels = {0};
	uint32_t nlabels = get_u32(r), i;
	const uint8_t *id, *data;
	char idbuf[BATCH_ID_LEN + 1];
	uint8_t *profile;
	uint64_t len;

	if (nlabels > MAX_LABELS)
		r->bad = true;
	for (i = 0; i < nlabels && !r->bad; i++) {
		char *name = get_str(r), *value = get_str(r);

		if (name && value && labels__set(&labels, name, value))
			r->bad = true;
		free(name);
		free(value);
	}
	id = take(r, BATCH_ID_LEN);
	len = get_u64(r);
	data = take(r, len);
	if (r->bad || !id || !data) {
		labels__clear(&labels);
		return -EBADMSG;
	}
	memcpy(idbuf, id, BATCH_ID_LEN);
	idbuf[BATCH_ID_LEN] = '\0';
	profile = malloc(len ? len : 1);
	if (!profile) {
		labels__clear(&labels);
		return -ENOMEM;
	}
	memcpy(profile, data, len);
	return batch__add(b, &labels, profile, len, idbuf);
}

static int deserialize(const uint8_t *data, size_t len, struct batch **out)
{
	struct reader r = {data, data + len - 4, false};
	uint32_t nseries, done, i;
	struct batch *b;
	uint64_t t, d;
	int err = 0;

	*out = NULL;
	if (len < MAGIC_LEN + 28 || memcmp(data, MAGIC, MAGIC_LEN) != 0 ||
	    crc32_z(0, data, len - 4) !=
		    ((uint32_t)data[len - 4] | (uint32_t)data[len - 3] << 8 |
		     (uint32_t)data[len - 2] << 16 | (uint32_t)data[len - 1] << 24))
		return -EBADMSG;
	take(&r, MAGIC_LEN);
	t = get_u64(&r);
	d = get_u64(&r);
	nseries = get_u32(&r);
	done = get_u32(&r);
	if (nseries > MAX_SERIES || done > nseries)
		return -EBADMSG;
	b = batch__new(t, d);
	if (!b)
		return -ENOMEM;
	for (i = 0; i < nseries && !err; i++)
		err = read_series(&r, b);
	if (!err && r.p != r.end)
		err = -EBADMSG;
	if (err) {
		batch__free(b);
		return err;
	}
	b->done = done;
	*out = b;
	return 0;
}

static int write_entry(struct spool *s, uint64_t seq, const struct pb_buffer *buf)
{
	char tmp[64], name[64];
	int fd, err = 0;

	entry_path(seq, ".tmp", tmp, sizeof(tmp));
	entry_path(seq, "", name, sizeof(name));
	fd = create_new(s, tmp, O_WRONLY);
	if (fd < 0)
		return fd;
	err = file__write_all(fd, buf->data, buf->len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(s->dir_fd, tmp, s->dir_fd, name))
		err = -errno;
	/* The rename is durable once the directory is. */
	if (!err && fsync(s->dir_fd))
		err = -errno;
	if (err)
		unlinkat(s->dir_fd, tmp, 0);
	return err;
}

int spool__push(struct spool *s, const struct batch *b)
{
	struct pb_buffer buf = {0};
	int err;

	err = serialize(b, &buf);
	if (err)
		goto cleanup;
	if (buf.len > s->max_bytes) {
		s->dropped++;
		err = -EFBIG;
		pr_warn("a %zu-byte interval exceeds the spool's cap of %" PRIu64
			" bytes and was dropped",
			buf.len, s->max_bytes);
		goto cleanup;
	}
	enforce_cap(s, buf.len);
	err = write_entry(s, s->next_seq, &buf);
	if (err) {
		pr_err("cannot write to the spool %s: %s", s->dir, strerror(-err));
		goto cleanup;
	}
	err = push_entry(s, s->next_seq, buf.len);
	s->next_seq++;
cleanup:
	pb_buffer__free(&buf);
	return err;
}

static int read_entry(struct spool *s, uint64_t seq, uint8_t **data, size_t *len)
{
	char name[64];
	struct stat st;
	size_t off = 0;
	int fd, err = 0;

	*data = NULL;
	entry_path(seq, "", name, sizeof(name));
	fd = file__open_ours(s->dir_fd, name, O_RDONLY);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if ((uint64_t)st.st_size > s->max_bytes || st.st_size <= 0) {
		err = -EBADMSG;
		goto cleanup;
	}
	*data = malloc((size_t)st.st_size);
	if (!*data) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, *data + off, (size_t)st.st_size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EBADMSG;
			break;
		}
		off += (size_t)n;
	}
	*len = off;
cleanup:
	close(fd);
	if (err) {
		free(*data);
		*data = NULL;
	}
	return err;
}

int spool__peek(struct spool *s, struct batch **out)
{
	*out = NULL;
	while (s->head < s->n) {
		uint64_t seq = s->entries[s->head].seq;
		uint8_t *data = NULL;
		size_t len = 0;
		int err;

		err = read_entry(s, seq, &data, &len);
		if (!err)
			err = deserialize(data, len, out);
		free(data);
		if (!err)
			return 0;
		if (err == -ENOMEM)
			return err;
		if (err == -EPERM) {
			pr_warn("spool entry %s/%0*" PRIu64 SUFFIX
				" is not a regular file of uid %u: left there, not sent",
				s->dir, SEQ_DIGITS, seq, (unsigned)geteuid());
			s->refused++;
			skip_head(s);
			continue;
		}
		pr_warn("spool entry %s/%0*" PRIu64 SUFFIX " is unreadable (%s); removed", s->dir,
			SEQ_DIGITS, seq, err == -EBADMSG ? "corrupt" : strerror(-err));
		s->corrupt++;
		if (remove_head(s))
			return -EIO;
	}
	return -ENOENT;
}

int spool__pop(struct spool *s)
{
	return remove_head(s);
}

int spool__update_head(struct spool *s, const struct batch *b)
{
	struct pb_buffer buf = {0};
	int err;

	if (s->head == s->n)
		return -ENOENT;
	err = serialize(b, &buf);
	if (!err)
		err = write_entry(s, s->entries[s->head].seq, &buf);
	if (!err) {
		s->bytes = s->bytes - s->entries[s->head].size + buf.len;
		s->entries[s->head].size = buf.len;
	}
	pb_buffer__free(&buf);
	return err;
}

size_t spool__count(const struct spool *s)
{
	return s->n - s->head;
}

uint64_t spool__dropped(const struct spool *s)
{
	return s->dropped;
}

uint64_t spool__corrupt(const struct spool *s)
{
	return s->corrupt;
}

uint64_t spool__refused(const struct spool *s)
{
	return s->refused;
}

const char *spool__dir(const struct spool *s)
{
	return s->dir;
}
