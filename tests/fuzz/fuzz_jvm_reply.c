// SPDX-License-Identifier: MIT
/*
 * A JVM attach reply is written by whatever listens on /tmp/.java_pidN, a
 * process that may only pretend to be a JVM: any bytes parse or fail
 * cleanly, and the text found starts inside the reply, after a status line.
 */
#include <stdint.h>
#include <stdlib.h>

#include "resolve/jvm_attach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;
	int status = 0;

	if (jvm_attach__parse_reply((const char *)data, size, &status, &off))
		return 0;
	if (off > size || off == 0 || status > 999999999 || status < -999999999)
		abort();
	if (off < size && data[off - 1] != '\n')
		abort();
	return 0;
}
