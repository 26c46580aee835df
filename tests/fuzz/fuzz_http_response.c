// SPDX-License-Identifier: MIT
/*
 * The answer of a profiling server is outside input: a broken proxy or a
 * hostile server may send anything. The HTTP response parser and, on what
 * it accepts, the gRPC-Web status reader must take any bytes, and what they
 * return must hold the invariants the uploader relies on.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deliver/grpcweb.h"
#include "net/http.h"

#define MAX_BODY 4096

static void check(const uint8_t *data, size_t size, bool eof)
{
	struct http_response r;
	struct grpc_status st;
	size_t i;
	int err = http__parse_response(data, size, eof, MAX_BODY, &r);

	if (err == -EAGAIN) {
		if (eof || r.need <= size)
			abort(); /* more bytes must be wanted, and only without eof */
		return;
	}
	if (err)
		return;
	if (r.status < 200 || r.status > 999 || r.body_len > MAX_BODY || !r.body ||
	    r.body[r.body_len] != '\0')
		abort();
	for (i = 0; i < r.nfields; i++)
		for (const char *c = r.fields[i].name; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				abort();
	if (grpcweb__status(&r, &st) == 0 && st.present && strlen(st.message) >= sizeof(st.message))
		abort();
	http_response__clear(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check(data, size, false);
	check(data, size, true);
	return 0;
}
