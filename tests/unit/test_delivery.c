// SPDX-License-Identifier: MIT
/*
 * Continuous delivery: with the server down every batch lands in the spool,
 * and a later run sends them, oldest first, before anything new; finish
 * lets an exchange complete but ends a backoff. One-shot delivery: a signal
 * ends the exchange or the backoff at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cancel_alarm.h"
#include "deliver/batch.h"
#include "deliver/delivery.h"
#include "deliver/spool.h"
#include "deliver/upload.h"
#include "lib/cancel.h"
#include "loopback.h"
#include "test.h"

static struct batch *batch_with_id(uint64_t t, const char *id)
{
	struct batch *b = batch__new(t, 1);
	struct labels l = {0};
	uint8_t *p = malloc(1);

	CHECK(b && p);
	p[0] = 'P';
	CHECK_INT(labels__set(&l, "__name__", "process_cpu"), ==, 0);
	CHECK_INT(batch__add(b, &l, p, 1, id), ==, 0);
	return b;
}

static struct upload *client(uint16_t port)
{
	char url[64];
	struct upload_opts o = {.url = url, .protocol = UPLOAD_PYROSCOPE, .timeout_ms = 5000};
	struct upload *u;

	snprintf(url, sizeof(url), "http://127.0.0.1:%u", port);
	CHECK_INT(upload__new(&o, &u), ==, 0);
	return u;
}

#define ID(n) "00000000-0000-4000-8000-00000000000" #n

static void free_run(struct delivery *d, struct spool *sp, struct upload *u)
{
	delivery__free(d);
	spool__free(sp);
	upload__free(u);
}

/* Ends a run against lb: what the server received, NUL-terminated; caller frees. */
static char *end_run(struct delivery *d, struct spool *sp, struct upload *u, struct loopback *lb,
		     size_t *len)
{
	char *sent;

	free_run(d, sp, u);
	loopback__stop(lb);
	sent = loopback__requests(lb, len);
	CHECK(sent);
	return sent;
}

/* Waits until the server has received the request for batch id. */
static void wait_for_request(const struct loopback *lb, const char *id)
{
	char *sent = NULL;
	size_t len = 0;
	int i;

	for (i = 0; i < 1000; i++) {
		free(sent);
		sent = loopback__requests(lb, &len);
		if (sent && memmem(sent, len, id, 36))
			break;
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	CHECK(sent && memmem(sent, len, id, 36));
	free(sent);
}

static size_t count_posts(const char *sent, size_t len)
{
	size_t n = 0;
	const char *p = sent, *end = sent + len;

	while ((p = memmem(p, (size_t)(end - p), "POST ", 5))) {
		n++;
		p++;
	}
	return n;
}

TEST(delivery_spools_then_resends_in_order)
{
	static const struct loopback_reply ok =
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	struct loopback_reply replies[] = {ok, ok, ok, ok};
	struct delivery_stats st;
	struct delivery *d;
	struct spool *sp;
	struct upload *u;
	struct loopback lb;
	char dir[512], *sent, *p1, *p2, *p3, *p4;
	size_t len;

	snprintf(dir, sizeof(dir), "%s/delivery-spool", test_tmp_dir());
	/* Run 1: nobody listens. */
	u = client(loopback__closed_port());
	CHECK_INT(spool__open(dir, 1 << 20, &sp), ==, 0);
	CHECK_INT(delivery__start(u, sp, 1, 1 << 20, &d), ==, 0);
	delivery__submit(d, batch_with_id(1, ID(1)));
	delivery__submit(d, batch_with_id(2, ID(2)));
	delivery__submit(d, batch_with_id(3, ID(3)));
	delivery__finish(d, &st);
	CHECK_U64(st.submitted, ==, 3);
	CHECK_U64(st.sent, ==, 0);
	CHECK_U64(st.spooled, ==, 3);
	CHECK_U64(st.in_spool, ==, 3);
	CHECK_U64(st.dropped, ==, 0);
	free_run(d, sp, u);

	/* Run 2: the server is back; the spool goes first, then the new batch. */
	CHECK_INT(loopback__start(&lb, replies, 4), ==, 0);
	u = client(lb.port);
	CHECK_INT(spool__open(dir, 1 << 20, &sp), ==, 0);
	CHECK_INT(delivery__start(u, sp, 1, 1 << 20, &d), ==, 0);
	delivery__submit(d, batch_with_id(4, ID(4)));
	delivery__finish(d, &st);
	CHECK_U64(st.found_in_spool, ==, 3);
	CHECK_U64(st.submitted, ==, 1);
	CHECK_U64(st.sent, ==, 4);
	CHECK_U64(st.sent_from_spool, ==, 3);
	CHECK_U64(st.in_spool, ==, 0);
	sent = end_run(d, sp, u, &lb, &len);
	p1 = memmem(sent, len, ID(1), 36);
	p2 = memmem(sent, len, ID(2), 36);
	p3 = memmem(sent, len, ID(3), 36);
	p4 = memmem(sent, len, ID(4), 36);
	CHECK(p1 && p2 && p3 && p4);
	CHECK(p1 < p2 && p2 < p3 && p3 < p4);
	free(sent);
}

/*
 * A run that ends while the server is still answering waits for the answer:
 * cutting the exchange short and trying again would send the batch twice, and
 * here, with one reply scripted, spool it as failed.
 */
TEST(delivery_finish_lets_the_send_under_way_complete)
{
	struct loopback_reply slow = LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	struct delivery_stats st;
	struct delivery *d;
	struct spool *sp;
	struct upload *u;
	struct loopback lb;
	char dir[512], *sent, *p;
	size_t len;

	slow.delay_ms = 400;
	snprintf(dir, sizeof(dir), "%s/delivery-under-way", test_tmp_dir());
	CHECK_INT(loopback__start(&lb, &slow, 1), ==, 0);
	u = client(lb.port);
	CHECK_INT(spool__open(dir, 1 << 20, &sp), ==, 0);
	CHECK_INT(delivery__start(u, sp, 1, 1 << 20, &d), ==, 0);
	delivery__submit(d, batch_with_id(1, ID(1)));
	/* Finish only once the server holds the request, so the exchange is under way. */
	wait_for_request(&lb, ID(1));
	delivery__finish(d, &st);
	CHECK_U64(st.sent, ==, 1);
	CHECK_U64(st.spooled, ==, 0);
	CHECK_U64(st.in_spool, ==, 0);
	sent = end_run(d, sp, u, &lb, &len);
	p = memmem(sent, len, ID(1), 36);
	CHECK(p && !memmem(p + 36, len - (size_t)(p + 36 - sent), ID(1), 36));
	free(sent);
}

/* The server asks for 30 s before the next attempt; finish makes it at once. */
TEST(delivery_finish_ends_a_backoff_at_once)
{
	struct loopback_reply replies[] = {
		LOOPBACK_REPLY("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 30\r\n"
			       "Content-Length: 0\r\n\r\n"),
		LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
	};
	struct delivery_stats st;
	struct delivery *d;
	struct spool *sp;
	struct upload *u;
	struct loopback lb;
	char dir[512], *sent;
	size_t len;
	int64_t t0;

	snprintf(dir, sizeof(dir), "%s/delivery-backoff", test_tmp_dir());
	CHECK_INT(loopback__start(&lb, replies, 2), ==, 0);
	u = client(lb.port);
	CHECK_INT(spool__open(dir, 1 << 20, &sp), ==, 0);
	CHECK_INT(delivery__start(u, sp, 3, 1 << 20, &d), ==, 0);
	delivery__submit(d, batch_with_id(1, ID(1)));
	wait_for_request(&lb, ID(1));
	t0 = cancel_alarm__now_ms();
	delivery__finish(d, &st);
	CHECK_INT(cancel_alarm__now_ms() - t0, <, 10000);
	CHECK_U64(st.sent, ==, 1);
	CHECK_U64(st.spooled, ==, 0);
	sent = end_run(d, sp, u, &lb, &len);
	CHECK_INT(count_posts(sent, len), ==, 2);
	free(sent);
}

/* One-shot: a signal ends a 30 s backoff, then the exchange with a silent server, at once. */
TEST(delivery_send_now_ends_at_a_signal)
{
	/* The peer answers one connection at a time: the silent one comes last. */
	struct loopback_reply replies[] = {
		LOOPBACK_REPLY("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 30\r\n"
			       "Content-Length: 0\r\n\r\n"),
		{.silent = true},
	};
	struct batch *b = batch_with_id(1, ID(1));
	struct cancel *in_backoff, *in_exchange;
	struct loopback lb;
	struct upload *u;
	char *sent;
	size_t len;
	int64_t t0;

	CHECK_INT(cancel__new(&in_backoff), ==, 0);
	CHECK_INT(cancel__new(&in_exchange), ==, 0);
	CHECK_INT(loopback__start(&lb, replies, 2), ==, 0);
	u = client(lb.port);
	t0 = cancel_alarm__now_ms();
	cancel_alarm__start(in_backoff, 300);
	CHECK_INT(delivery__send_now(u, b, 4, in_backoff), ==, UPLOAD_CANCELED);
	CHECK_INT(cancel_alarm__now_ms() - t0, <, 10000);
	t0 = cancel_alarm__now_ms();
	cancel_alarm__start(in_exchange, 300);
	CHECK_INT(delivery__send_now(u, b, 4, in_exchange), ==, UPLOAD_CANCELED);
	/* Shorter than the client's 5 s timeout: the signal, not the timeout, ended it. */
	CHECK_INT(cancel_alarm__now_ms() - t0, <, 4000);
	loopback__stop(&lb);
	sent = loopback__requests(&lb, &len);
	CHECK(sent);
	CHECK_INT(count_posts(sent, len), ==, 2);
	free(sent);
	upload__free(u);
	batch__free(b);
	cancel__free(in_backoff);
	cancel__free(in_exchange);
}

/* A spooled batch found unreadable is lost: counted as dropped, so the run is not complete. */
TEST(delivery_counts_a_corrupt_spool_entry_as_dropped)
{
	struct loopback_reply ok = LOOPBACK_REPLY("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	struct delivery_stats st;
	struct delivery *d;
	struct spool *sp;
	struct upload *u;
	struct loopback lb;
	struct batch *b;
	char dir[512], path[600], *sent;
	size_t len;
	FILE *f;
	int i;

	snprintf(dir, sizeof(dir), "%s/delivery-corrupt", test_tmp_dir());
	CHECK_INT(spool__open(dir, 1 << 20, &sp), ==, 0);
	for (i = 1; i <= 2; i++) {
		b = batch_with_id((uint64_t)i, i == 1 ? ID(1) : ID(2));
		CHECK_INT(spool__push(sp, b), ==, 0);
		batch__free(b);
	}
	spool__free(sp);
	snprintf(path, sizeof(path), "%s/00000000000000000001.batch", dir);
	f = fopen(path, "w");
	CHECK(f);
	fputs("not a batch", f);
	fclose(f);

	CHECK_INT(loopback__start(&lb, &ok, 1), ==, 0);
	u = client(lb.port);
	CHECK_INT(spool__open(dir, 1 << 20, &sp), ==, 0);
	CHECK_INT(delivery__start(u, sp, 1, 1 << 20, &d), ==, 0);
	delivery__finish(d, &st);
	CHECK_U64(st.found_in_spool, ==, 2);
	CHECK_U64(st.sent, ==, 1);
	CHECK_U64(st.dropped, ==, 1);
	CHECK_U64(st.in_spool, ==, 0);
	sent = end_run(d, sp, u, &lb, &len);
	CHECK(memmem(sent, len, ID(2), 36) && !memmem(sent, len, ID(1), 36));
	free(sent);
}
