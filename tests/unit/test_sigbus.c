// SPDX-License-Identifier: MIT
/* lib/sigbus: a read of a mapping past its truncated file's end ends the call, not the process. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/sigbus.h"
#include "test.h"

#define PAGES 4

struct mapped {
	int fd;
	volatile const uint8_t *map;
	size_t size;
	uint64_t sum;
};

/* A file of PAGES pages, mapped, then truncated to one page. */
static void map_and_truncate(struct mapped *m)
{
	char path[512];
	uint8_t page[4096];

	m->size = PAGES * sizeof(page);
	snprintf(path, sizeof(path), "%s/sigbus-XXXXXX", test_tmp_dir());
	m->fd = mkstemp(path);
	CHECK(m->fd >= 0);
	unlink(path);
	memset(page, 7, sizeof(page));
	for (int i = 0; i < PAGES; i++)
		CHECK_INT(write(m->fd, page, sizeof(page)), ==, sizeof(page));
	m->map = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, m->fd, 0);
	CHECK(m->map != MAP_FAILED);
	CHECK_INT(ftruncate(m->fd, sizeof(page)), ==, 0);
}

static int read_all(void *arg)
{
	struct mapped *m = arg;

	for (size_t i = 0; i < m->size; i += 512)
		m->sum += m->map[i];
	return 0;
}

static int read_first_page(void *arg)
{
	struct mapped *m = arg;

	m->sum += m->map[0];
	return 42;
}

TEST(sigbus_read_past_a_truncated_end_ends_the_call)
{
	struct mapped m = {0};
	uint64_t before;

	CHECK_INT(sigbus__install(), ==, 0);
	map_and_truncate(&m);
	before = sigbus__faults();
	CHECK_INT(sigbus__call(read_all, &m), ==, -EIO);
	CHECK_U64(sigbus__faults(), ==, before + 1);
	/* The page the file still has was read before the fault. */
	CHECK_U64(m.sum, ==, 7 * 8);
	/* The thread goes on: a call that does not fault gives fn's result. */
	CHECK_INT(sigbus__call(read_first_page, &m), ==, 42);
	CHECK_INT(sigbus__call(read_all, &m), ==, -EIO);
	CHECK_U64(sigbus__faults(), ==, before + 2);
}

static int nested(void *arg)
{
	struct mapped *m = arg;

	/* The inner call takes the fault; the outer one goes on. */
	CHECK_INT(sigbus__call(read_all, m), ==, -EIO);
	return read_first_page(m);
}

TEST(sigbus_nested_calls_end_the_innermost)
{
	struct mapped m = {0};

	CHECK_INT(sigbus__install(), ==, 0);
	map_and_truncate(&m);
	CHECK_INT(sigbus__call(nested, &m), ==, 42);
}

static void *blocked_thread(void *arg)
{
	return (void *)(intptr_t)sigbus__call(read_all, arg);
}

/* The loaders' threads block every signal; a blocked SIGBUS would end the process. */
TEST(sigbus_a_thread_that_blocks_signals_survives)
{
	struct mapped m = {0};
	sigset_t all, old;
	pthread_t t;
	void *ret;

	CHECK_INT(sigbus__install(), ==, 0);
	map_and_truncate(&m);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	CHECK_INT(pthread_create(&t, NULL, blocked_thread, &m), ==, 0);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	CHECK_INT(pthread_join(t, &ret), ==, 0);
	CHECK_INT((intptr_t)ret, ==, -EIO);
}
