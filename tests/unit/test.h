/* SPDX-License-Identifier: MIT */
/*
 * A minimal unit-test harness. Each TEST runs in its own child process (see
 * test_main.c), so one crash or hang fails that test and not the suite.
 * Results use the line protocol that tests/run counts:
 *   ok NAME | not ok NAME - REASON | skip NAME - REASON
 */
#ifndef CPROF_TEST_H
#define CPROF_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef void (*test_fn)(void);

void test_register(const char *name, test_fn fn);
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Directory of fixtures (CPROF_FIXTURES or "fixtures"), and a scratch dir. */
const char *test_fixtures_dir(void);
const char *test_tmp_dir(void);
/* A built fixture, .output/fixtures/NAME (or under CPROF_BUILD_FIXTURES); skips if missing. */
const char *test_build_fixture(const char *name);
/* Our vDSO image in memory and its size, or NULL if there is none. */
const void *test_vdso(size_t *size);
/* The system's glibc libc.so.6; skips if there is none. */
const char *test_system_libc(void);
/* A whole file in a malloc'd buffer (one byte to spare); fails the test if unreadable. */
uint8_t *test_read_file(const char *path, size_t *len);
/* Writes buf to NAME in the scratch directory; returns its path (one of 8 rotating buffers). */
const char *test_write_tmp(const char *name, const void *buf, size_t len);
void test_hexdump_diff(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len);

#define TEST(name)                                                     \
	static void name(void);                                        \
	__attribute__((constructor)) static void register_##name(void) \
	{                                                              \
		test_register(#name, name);                            \
	}                                                              \
	static void name(void)

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond))                                               \
			test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); \
	} while (0)

#define CHECK_INT(a, op, b)                                                                      \
	do {                                                                                     \
		long long _a = (long long)(a), _b = (long long)(b);                              \
		if (!(_a op _b))                                                                 \
			test_fail(__FILE__, __LINE__, "%s %s %s: %lld vs %lld", #a, #op, #b, _a, \
				  _b);                                                           \
	} while (0)

#define CHECK_U64(a, op, b)                                                                      \
	do {                                                                                     \
		unsigned long long _a = (unsigned long long)(a), _b = (unsigned long long)(b);   \
		if (!(_a op _b))                                                                 \
			test_fail(__FILE__, __LINE__, "%s %s %s: 0x%llx vs 0x%llx", #a, #op, #b, \
				  _a, _b);                                                       \
	} while (0)

#define CHECK_STR(a, b)                                                                     \
	do {                                                                                \
		const char *_a = (a), *_b = (b);                                            \
		if (!_a || !_b || strcmp(_a, _b) != 0)                                      \
			test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" vs \"%s\"", #a, #b, \
				  _a ? _a : "(null)", _b ? _b : "(null)");                  \
	} while (0)

/* Exact bytes, nanopb style: CHECK_BYTES(buf, len, "\x08\x96\x01"). */
#define CHECK_BYTES(buf, len, lit)                                                 \
	do {                                                                       \
		const uint8_t *_g = (const uint8_t *)(buf);                        \
		size_t _gl = (len), _wl = sizeof(lit) - 1;                         \
		if (_gl != _wl || memcmp(_g, lit, _wl) != 0) {                     \
			test_hexdump_diff(_g, _gl, (const uint8_t *)(lit), _wl);   \
			test_fail(__FILE__, __LINE__, "bytes of %s differ", #buf); \
		}                                                                  \
	} while (0)

#define SKIP(...) test_skip(__VA_ARGS__)

#endif
