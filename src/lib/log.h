/* SPDX-License-Identifier: MIT */
/*
 * Logging with a module prefix: every message names the part of cprof that
 * speaks, so a one-line error is enough to find where it came from.
 * A file sets LOG_MODULE before including this header.
 */
#ifndef CPROF_LOG_H
#define CPROF_LOG_H

enum log_level {
	LOG_ERROR = 0,
	LOG_WARN = 1,
	LOG_INFO = 2,
	LOG_DEBUG = 3,
};

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
void log_print(enum log_level level, const char *module, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#ifndef LOG_MODULE
#define LOG_MODULE NULL
#endif

#define pr_err(fmt, ...)   log_print(LOG_ERROR, LOG_MODULE, fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)  log_print(LOG_WARN, LOG_MODULE, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)  log_print(LOG_INFO, LOG_MODULE, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) log_print(LOG_DEBUG, LOG_MODULE, fmt, ##__VA_ARGS__)

#endif
