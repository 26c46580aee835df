// SPDX-License-Identifier: MIT
/* Takes a BPF hash map's entries in batches; see map_take.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "lib/kernel_caps.h"
#include "sample/map_take.h"

/* Entries a call asks for: more than a bucket ever holds, so no -ENOSPC. */
#define TAKE_CHUNK 512u

struct map_take {
	size_t key_size, value_size;
	unsigned char *keys, *values;
	size_t n, cap;
	bool unsupported;
};

int map_take__new(size_t key_size, size_t value_size, struct map_take **out)
{
	struct map_take *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->key_size = key_size;
	t->value_size = value_size;
	*out = t;
	return 0;
}

void map_take__free(struct map_take *t)
{
	if (!t)
		return;
	free(t->keys);
	free(t->values);
	free(t);
}

static int reserve(struct map_take *t, size_t n)
{
	size_t cap = t->cap ? t->cap : TAKE_CHUNK;
	void *k, *v;

	while (cap < n)
		cap *= 2;
	if (cap == t->cap)
		return 0;
	k = realloc(t->keys, cap * t->key_size);
	if (!k)
		return -ENOMEM;
	t->keys = k;
	v = realloc(t->values, cap * t->value_size);
	if (!v)
		return -ENOMEM;
	t->values = v;
	t->cap = cap;
	return 0;
}

bool map_take__unsupported(int err)
{
	return err == -EINVAL || err == -EOPNOTSUPP || err == -524; /* ENOTSUPP, the kernel's own */
}

/*
 * One call. A kernel before 5.6 knows no such command: EINVAL, and the
 * count left as it was given (what an emulated one answers too).
 */
static int take_batch(int fd, void *in, void *out, void *keys, void *values, __u32 *count)
{
	if (!kernel_caps__has(KCAP_BATCH_OPS))
		return -EINVAL;
	return bpf_map_lookup_and_delete_batch(fd, in, out, keys, values, count, NULL) ? -errno : 0;
}

int map_take__all(struct map_take *t, int fd)
{
	/* The kernel's cursor: a bucket index for hash maps, never longer than a key. */
	uint64_t in[8], out[8];
	bool first = true;
	__u32 count;
	int err;

	t->n = 0;
	if (t->unsupported)
		return -EOPNOTSUPP;
	for (;;) {
		err = reserve(t, t->n + TAKE_CHUNK);
		if (err)
			return err;
		count = TAKE_CHUNK;
		err = take_batch(fd, first ? NULL : in, out, t->keys + t->n * t->key_size,
				 t->values + t->n * t->value_size, &count);
		/* A failed call took nothing: its count may be the one it was given. */
		if (err && err != -ENOENT) {
			if (!first || !map_take__unsupported(err))
				return err;
			t->unsupported = true;
			kernel_caps__fell_back(KCAP_BATCH_OPS);
			return -EOPNOTSUPP;
		}
		if (count > TAKE_CHUNK)
			return -EPROTO;
		t->n += count;
		if (err == -ENOENT)
			return 0;
		memcpy(in, out, sizeof(in));
		first = false;
	}
}

size_t map_take__count(const struct map_take *t)
{
	return t->n;
}

const void *map_take__key(const struct map_take *t, size_t i)
{
	return t->keys + i * t->key_size;
}

const void *map_take__value(const struct map_take *t, size_t i)
{
	return t->values + i * t->value_size;
}
