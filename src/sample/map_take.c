// SPDX-License-Identifier: MIT
/* Takes a BPF hash map's entries in batches; see map_take.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

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
		err = bpf_map_lookup_and_delete_batch(
			fd, first ? NULL : in, out, t->keys + t->n * t->key_size,
			t->values + t->n * t->value_size, &count, NULL);
		err = err ? -errno : 0;
		if (count <= TAKE_CHUNK)
			t->n += count;
		if (err == -ENOENT)
			return 0;
		if (err && first && !t->n && map_take__unsupported(err)) {
			t->unsupported = true;
			return -EOPNOTSUPP;
		}
		if (err)
			return err;
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
