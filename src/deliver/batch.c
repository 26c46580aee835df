// SPDX-License-Identifier: MIT
/* A batch of series for one interval; see batch.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "deliver/batch.h"
#include "lib/clock.h"

struct batch *batch__new(uint64_t time_ns, uint64_t duration_ns)
{
	struct batch *b = calloc(1, sizeof(*b));

	if (b) {
		b->time_ns = time_ns;
		b->duration_ns = duration_ns;
	}
	return b;
}

void batch__free(struct batch *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->nseries; i++) {
		labels__clear(&b->series[i].labels);
		free(b->series[i].profile);
	}
	free(b->series);
	free(b);
}

/* A random (version 4) UUID. IDs only need to be unique, not secret. */
static void new_uuid(char out[BATCH_ID_LEN + 1])
{
	uint8_t r[16];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, GRND_NONBLOCK);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof(r)) {
		/* No entropy yet (early boot): time and PID still make it unique enough. */
		uint64_t x = clock__real_ns();

		memcpy(r, &x, sizeof(x));
		x ^= (uint64_t)getpid() << 32 | (uint64_t)(uintptr_t)out;
		memcpy(r + 8, &x, sizeof(x));
	}
	r[6] = (uint8_t)((r[6] & 0x0f) | 0x40);
	r[8] = (uint8_t)((r[8] & 0x3f) | 0x80);
	snprintf(out, BATCH_ID_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", r[0], r[1],
		 r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14],
		 r[15]);
}

int batch__add(struct batch *b, struct labels *labels, uint8_t *profile, size_t len, const char *id)
{
	struct batch_series *arr, *s;

	arr = reallocarray(b->series, b->nseries + 1, sizeof(*arr));
	if (!arr) {
		labels__clear(labels);
		free(profile);
		return -ENOMEM;
	}
	b->series = arr;
	s = &arr[b->nseries++];
	memset(s, 0, sizeof(*s));
	s->labels = *labels;
	*labels = (struct labels){0};
	s->profile = profile;
	s->profile_len = len;
	if (id)
		snprintf(s->id, sizeof(s->id), "%s", id);
	else
		new_uuid(s->id);
	return 0;
}

size_t batch__size(const struct batch *b)
{
	size_t n = 0, i, j;

	for (i = 0; i < b->nseries; i++) {
		n += b->series[i].profile_len;
		for (j = 0; j < b->series[i].labels.n; j++)
			n += strlen(b->series[i].labels.v[j].name) +
			     strlen(b->series[i].labels.v[j].value);
	}
	return n;
}
