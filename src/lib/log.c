// SPDX-License-Identifier: MIT
/*
 * Messages go to stderr so that `-o -` can stream the profile on stdout.
 * Messages name paths, processes and symbols that anyone may have chosen:
 * each goes out escaped as a whole (term_text.h), so no name can write to
 * the terminal, and cprof's own messages are one line each.
 */
#include <stdarg.h>
#include <stdio.h>

#include "lib/log.h"
#include "lib/term_text.h"

static enum log_level current_level = LOG_WARN;

void log_set_level(enum log_level level)
{
	current_level = level;
}

enum log_level log_get_level(void)
{
	return current_level;
}

void log_print(enum log_level level, const char *module, const char *fmt, ...)
{
	char buf[1024], shown[4 * sizeof(buf)];
	va_list ap;

	if (level > current_level)
		return;
	/* One write per message keeps lines whole when threads log concurrently. */
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	term_text__escape(buf, shown, sizeof(shown));
	if (module)
		fprintf(stderr, "cprof: %s: %s\n", module, shown);
	else
		fprintf(stderr, "cprof: %s\n", shown);
}
