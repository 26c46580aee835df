// SPDX-License-Identifier: MIT
/* The spool: order, persistence across reopen, the size cap, corruption, locking. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deliver/batch.h"
#include "deliver/spool.h"
#include "test.h"

static const char *spool_dir(const char *name)
{
	static char dir[512];

	snprintf(dir, sizeof(dir), "%s/spool-%s", test_tmp_dir(), name);
	return dir;
}

static struct batch *make_batch(uint64_t t, size_t nseries, size_t profile_len)
{
	struct batch *b = batch__new(t, 1000);
	size_t i;

	CHECK(b);
	for (i = 0; i < nseries; i++) {
		struct labels l = {0};
		uint8_t *p = malloc(profile_len);
		char v[32];

		CHECK(p);
		memset(p, (int)('a' + i), profile_len);
		snprintf(v, sizeof(v), "%zu", i);
		CHECK_INT(labels__set(&l, "series", v), ==, 0);
		CHECK_INT(labels__set(&l, "__name__", "process_cpu"), ==, 0);
		CHECK_INT(batch__add(b, &l, p, profile_len, NULL), ==, 0);
	}
	return b;
}

static uint64_t head_time(struct spool *s)
{
	struct batch *b = NULL;
	uint64_t t;

	CHECK_INT(spool__peek(s, &b), ==, 0);
	t = b->time_ns;
	batch__free(b);
	return t;
}

static void push(struct spool *s, uint64_t t, size_t len)
{
	struct batch *b = make_batch(t, 1, len);

	CHECK_INT(spool__push(s, b), ==, 0);
	batch__free(b);
}

/* What the spool holds on disk: the sizes of its entry files. */
static uint64_t entry_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	char path[800];
	uint64_t sum = 0;

	CHECK(d);
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n < 6 || strcmp(de->d_name + n - 6, ".batch"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		CHECK_INT(stat(path, &st), ==, 0);
		sum += (uint64_t)st.st_size;
	}
	closedir(d);
	return sum;
}

TEST(spool_round_trip)
{
	struct batch *in = make_batch(123, 3, 100), *out = NULL;
	struct spool *s;
	size_t i;

	CHECK_INT(spool__open(spool_dir("rt"), 1 << 20, &s), ==, 0);
	in->done = 1;
	CHECK_INT(spool__push(s, in), ==, 0);
	CHECK_INT(spool__peek(s, &out), ==, 0);
	CHECK_U64(out->time_ns, ==, 123);
	CHECK_U64(out->duration_ns, ==, 1000);
	CHECK_INT(out->nseries, ==, 3);
	CHECK_INT(out->done, ==, 1);
	for (i = 0; i < 3; i++) {
		CHECK_STR(out->series[i].id, in->series[i].id);
		CHECK_INT(out->series[i].labels.n, ==, 2);
		CHECK_STR(labels__get(&out->series[i].labels, "series"),
			  labels__get(&in->series[i].labels, "series"));
		CHECK_INT(out->series[i].profile_len, ==, 100);
		CHECK(memcmp(out->series[i].profile, in->series[i].profile, 100) == 0);
	}
	batch__free(in);
	batch__free(out);
	spool__free(s);
}

TEST(spool_order_survives_reopen)
{
	struct spool *s;
	char tmp[600];
	int fd;

	CHECK_INT(spool__open(spool_dir("order"), 1 << 20, &s), ==, 0);
	push(s, 1, 10);
	push(s, 2, 10);
	push(s, 3, 10);
	CHECK_INT(spool__count(s), ==, 3);
	CHECK_U64(head_time(s), ==, 1);
	CHECK_INT(spool__pop(s), ==, 0);
	spool__free(s);
	/* A write that never completed is not an entry. */
	snprintf(tmp, sizeof(tmp), "%s/00000000000000000009.batch.tmp", spool_dir("order"));
	fd = open(tmp, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	close(fd);

	CHECK_INT(spool__open(spool_dir("order"), 1 << 20, &s), ==, 0);
	CHECK(access(tmp, F_OK) != 0);
	CHECK_INT(spool__count(s), ==, 2);
	push(s, 4, 10);
	CHECK_U64(head_time(s), ==, 2);
	CHECK_INT(spool__pop(s), ==, 0);
	CHECK_U64(head_time(s), ==, 3);
	CHECK_INT(spool__pop(s), ==, 0);
	CHECK_U64(head_time(s), ==, 4);
	CHECK_INT(spool__pop(s), ==, 0);
	CHECK_INT(spool__peek(s, &(struct batch *){NULL}), ==, -ENOENT);
	CHECK_INT(spool__pop(s), ==, -ENOENT);
	spool__free(s);
}

TEST(spool_cap_drops_oldest)
{
	struct spool *s;
	struct batch *big;
	uint64_t one;

	CHECK_INT(spool__open(spool_dir("cap"), 1 << 20, &s), ==, 0);
	push(s, 1, 1000);
	one = entry_bytes(spool_dir("cap"));
	spool__free(s);
	/* Room for two entries of this size, not three. */
	CHECK_INT(spool__open(spool_dir("cap"), 2 * one + one / 2, &s), ==, 0);
	push(s, 2, 1000);
	push(s, 3, 1000);
	CHECK_INT(spool__count(s), ==, 2);
	CHECK_U64(spool__dropped(s), ==, 1);
	CHECK_U64(head_time(s), ==, 2);
	CHECK(entry_bytes(spool_dir("cap")) <= 2 * one + one / 2);
	/* Larger than the whole cap: refused, counted, nothing else lost. */
	big = make_batch(9, 1, 4 * one);
	CHECK_INT(spool__push(s, big), ==, -EFBIG);
	batch__free(big);
	CHECK_U64(spool__dropped(s), ==, 2);
	CHECK_INT(spool__count(s), ==, 2);
	spool__free(s);
}

TEST(spool_corrupt_entry_is_removed)
{
	struct spool *s;
	char path[600];
	int fd;

	CHECK_INT(spool__open(spool_dir("corrupt"), 1 << 20, &s), ==, 0);
	push(s, 1, 50);
	push(s, 2, 50);
	snprintf(path, sizeof(path), "%s/00000000000000000001.batch", spool_dir("corrupt"));
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_INT(pwrite(fd, "X", 1, 40), ==, 1);
	close(fd);
	CHECK_U64(head_time(s), ==, 2);
	CHECK_U64(spool__corrupt(s), ==, 1);
	CHECK_INT(spool__count(s), ==, 1);
	CHECK(access(path, F_OK) != 0);
	spool__free(s);
}

TEST(spool_update_head_keeps_progress)
{
	struct batch *b = make_batch(5, 3, 20), *out = NULL;
	struct spool *s;

	CHECK_INT(spool__open(spool_dir("progress"), 1 << 20, &s), ==, 0);
	CHECK_INT(spool__push(s, b), ==, 0);
	b->done = 2;
	CHECK_INT(spool__update_head(s, b), ==, 0);
	spool__free(s);
	CHECK_INT(spool__open(spool_dir("progress"), 1 << 20, &s), ==, 0);
	CHECK_INT(spool__peek(s, &out), ==, 0);
	CHECK_INT(out->done, ==, 2);
	batch__free(out);
	batch__free(b);
	spool__free(s);
}

TEST(spool_one_user_at_a_time)
{
	struct spool *a, *b;

	CHECK_INT(spool__open(spool_dir("lock"), 1 << 20, &a), ==, 0);
	CHECK_INT(spool__open(spool_dir("lock"), 1 << 20, &b), ==, -EBUSY);
	spool__free(a);
	CHECK_INT(spool__open(spool_dir("lock"), 1 << 20, &b), ==, 0);
	spool__free(b);
	CHECK(spool__open("/proc/cprof-cannot-exist/spool", 1 << 20, &b) < 0);
}

/* spool_path: a name inside the spool named `name`. */
static const char *spool_path(const char *name, const char *file)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s/%s", spool_dir(name), file);
	return path;
}

TEST(spool_refuses_a_directory_others_may_write)
{
	struct spool *s = NULL;
	char link[600];

	CHECK_INT(mkdir(spool_dir("shared"), 0700), ==, 0);
	CHECK_INT(chmod(spool_dir("shared"), 01777), ==, 0);
	CHECK_INT(spool__open(spool_dir("shared"), 1 << 20, &s), ==, -EPERM);
	CHECK(!s);
	CHECK(access(spool_path("shared", ".lock"), F_OK) != 0);
	/* A link in the directory's place is not followed, even to a good directory. */
	CHECK_INT(mkdir(spool_dir("target"), 0700), ==, 0);
	snprintf(link, sizeof(link), "%s", spool_dir("link"));
	CHECK_INT(symlink(spool_dir("target"), link), ==, 0);
	CHECK(spool__open(link, 1 << 20, &s) < 0);
	CHECK(access(spool_path("target", ".lock"), F_OK) != 0);
}

TEST(spool_lock_link_is_not_followed)
{
	struct spool *s = NULL;
	char victim[600];

	snprintf(victim, sizeof(victim), "%s/lock-victim", test_tmp_dir());
	CHECK_INT(mkdir(spool_dir("locklink"), 0700), ==, 0);
	CHECK_INT(symlink(victim, spool_path("locklink", ".lock")), ==, 0);
	CHECK(spool__open(spool_dir("locklink"), 1 << 20, &s) < 0);
	CHECK(access(victim, F_OK) != 0);
}

TEST(spool_temporary_link_is_replaced_not_followed)
{
	struct spool *s;
	char victim[600];
	struct stat st;
	int fd;

	snprintf(victim, sizeof(victim), "%s/tmp-victim", test_tmp_dir());
	fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, "keep", 4), ==, 4);
	close(fd);
	CHECK_INT(spool__open(spool_dir("tmplink"), 1 << 20, &s), ==, 0);
	CHECK_INT(symlink(victim, spool_path("tmplink", "00000000000000000001.batch.tmp")), ==, 0);
	push(s, 7, 50);
	CHECK_INT(stat(victim, &st), ==, 0);
	CHECK_INT(st.st_size, ==, 4);
	CHECK_INT(lstat(spool_path("tmplink", "00000000000000000001.batch"), &st), ==, 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_U64(head_time(s), ==, 7);
	spool__free(s);
}

TEST(spool_entry_swapped_for_fifo_is_skipped)
{
	const char *first = spool_path("fifo", "00000000000000000001.batch");
	struct spool *s;

	CHECK_INT(spool__open(spool_dir("fifo"), 1 << 20, &s), ==, 0);
	push(s, 1, 50);
	push(s, 2, 50);
	CHECK_INT(unlink(first), ==, 0);
	CHECK_INT(mkfifo(first, 0600), ==, 0);
	/* Opening the FIFO for reading would block here until someone writes. */
	CHECK_U64(head_time(s), ==, 2);
	CHECK_U64(spool__refused(s), ==, 1);
	CHECK_U64(spool__corrupt(s), ==, 0);
	CHECK_INT(spool__count(s), ==, 1);
	spool__free(s);
	/* Found again by the next run, counted, and left alone. */
	CHECK_INT(spool__open(spool_dir("fifo"), 1 << 20, &s), ==, 0);
	CHECK_U64(spool__refused(s), ==, 1);
	CHECK_INT(spool__count(s), ==, 1);
	push(s, 3, 50);
	CHECK_U64(head_time(s), ==, 2);
	spool__free(s);
	CHECK(access(first, F_OK) == 0);
}

TEST(spool_entry_of_another_user_is_not_sent)
{
	struct spool *s;

	if (geteuid() != 0)
		SKIP("needs root to give a file to another user");
	CHECK_INT(spool__open(spool_dir("owner"), 1 << 20, &s), ==, 0);
	push(s, 1, 50);
	push(s, 2, 50);
	CHECK_INT(chown(spool_path("owner", "00000000000000000001.batch"), 65534, 65534), ==, 0);
	CHECK_U64(head_time(s), ==, 2);
	CHECK_U64(spool__refused(s), ==, 1);
	spool__free(s);
}
