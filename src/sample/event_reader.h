/* SPDX-License-Identifier: MIT */
/*
 * Reads a BPF perf event array (the sampler's `events`: new processes,
 * spilled samples, stack copies) on a thread of its own, into a queue the
 * main thread takes from. Stack copies arrive by the thousand when
 * processes start, some 5 KiB each: while the main thread builds a table,
 * loads symbols or drains, the kernel's rings would fill and lose them.
 */
#ifndef CPROF_EVENT_READER_H
#define CPROF_EVENT_READER_H

#include <stddef.h>
#include <stdint.h>

struct event_reader;
struct perf_event_attr;

/* One record as the BPF program sent it; data is 8-byte aligned. */
typedef void (*event_reader_fn)(void *ctx, const void *data, uint32_t size);

/*
 * Opens the perf buffer on map_fd (pages per CPU) and starts the thread,
 * which the kernel wakes every wake_every records of a CPU: 1 for records
 * wanted at once, more for records only wanted at the next flush.
 */
int event_reader__new(int map_fd, size_t pages, uint32_t wake_every, struct event_reader **out);
/*
 * The rings of events of its own, opened with attr on every online CPU
 * (map_fd: a perf event array the buffer fills): each record is queued
 * whole, header included (PERF_RECORD_SAMPLE; PERF_RECORD_LOST is counted).
 * libbpf enables the events at once. With wake, records waiting make
 * wake's descriptor readable, not its own: one poll for both.
 */
int event_reader__new_raw(int map_fd, size_t pages, struct perf_event_attr *attr,
			  const struct event_reader *wake, struct event_reader **out);
/* Queues at most max_bytes (0: the default, 64 MB); records past that are counted lost. */
void event_reader__limit(struct event_reader *r, size_t max_bytes);
/* From now on, records waiting make wake's descriptor readable, not r's own. */
void event_reader__wake_with(struct event_reader *r, const struct event_reader *wake);
/* The events of a raw reader: how many, and the descriptor of each. */
int event_reader__count(const struct event_reader *r);
int event_reader__event_fd(const struct event_reader *r, int i);
/* Stops the thread; what is queued is dropped. */
void event_reader__free(struct event_reader *r);

/* A descriptor that polls readable when records wait in the queue. */
int event_reader__fd(const struct event_reader *r);
/* Hands every queued record to fn, in the order read, and forgets them. */
void event_reader__take(struct event_reader *r, event_reader_fn fn, void *ctx);
/* Reads what the kernel's rings hold right now into the queue, then takes. */
void event_reader__flush(struct event_reader *r, event_reader_fn fn, void *ctx);
/* Records lost: the kernel's rings were full, or no memory to queue them. */
uint64_t event_reader__lost(const struct event_reader *r);

#endif
