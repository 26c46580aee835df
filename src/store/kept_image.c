// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/hash.h"
#include "store/kept_image.h"

#define ORDER_MARK 0x01020304u
#define LANES	   4

void kept_head__fill(struct kept_head *h, const char magic[8], uint32_t header_size,
		     const char *version, const uint8_t *build_id, uint32_t build_id_len)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, magic, sizeof(h->magic));
	h->byte_order = ORDER_MARK;
	h->header_size = header_size;
	strncpy(h->version, version, sizeof(h->version) - 1);
	memcpy(h->build_id, build_id, build_id_len);
	h->build_id_len = build_id_len;
}

bool kept_head__is(const struct kept_head *h, const char magic[8], uint32_t header_size,
		   const char *version, const uint8_t *build_id, uint32_t build_id_len)
{
	char v[KEPT_IMAGE_VERSION_LEN] = {0};

	strncpy(v, version, sizeof(v) - 1);
	return !memcmp(h->magic, magic, sizeof(h->magic)) && h->byte_order == ORDER_MARK &&
	       h->header_size == header_size && !memcmp(h->version, v, sizeof(v)) &&
	       h->build_id_len == build_id_len && !memcmp(h->build_id, build_id, build_id_len);
}

int kept_head__describe(const struct kept_head *h, uint8_t build_id[ELF_BUILD_ID_MAX],
			uint32_t *build_id_len, char version[KEPT_IMAGE_VERSION_LEN])
{
	if (h->build_id_len > ELF_BUILD_ID_MAX)
		return -EINVAL;
	memset(build_id, 0, ELF_BUILD_ID_MAX);
	memcpy(build_id, h->build_id, h->build_id_len);
	*build_id_len = h->build_id_len;
	memcpy(version, h->version, KEPT_IMAGE_VERSION_LEN);
	version[KEPT_IMAGE_VERSION_LEN - 1] = '\0';
	return 0;
}

void kept_source__of(struct kept_source *k, const struct stat *st)
{
	memset(k, 0, sizeof(*k));
	k->dev = (uint64_t)st->st_dev;
	k->ino = (uint64_t)st->st_ino;
	k->size = (uint64_t)st->st_size;
	k->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	k->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
	k->uid = (uint32_t)st->st_uid;
	k->mode = (uint32_t)st->st_mode;
}

bool kept_source__same(const struct kept_source *a, const struct kept_source *b)
{
	return !memcmp(a, b, sizeof(*a));
}

bool kept_source__trusted(const struct kept_source *k, uint32_t self)
{
	return S_ISREG(k->mode) && (k->uid == 0 || k->uid == self) &&
	       !(k->mode & (S_IWGRP | S_IWOTH));
}

uint64_t kept_source__place(const struct kept_source *k)
{
	return hash_u64(hash_u64(k->dev) ^ k->ino);
}

/* The word at i, or 0 for the checksum's own field. */
static uint64_t word(const uint8_t *p, size_t i, size_t at)
{
	uint64_t w;

	if (i == at)
		return 0;
	memcpy(&w, p + i, 8);
	return w;
}

/*
 * Four lanes that do not wait on each other: one chain of hash_u64 is
 * bound by its multiplies' latency, and these images are read back at
 * every start (libc's table and symbols, some 300 KB).
 */
uint64_t image_checksum(const void *buf, size_t n, size_t at)
{
	const uint8_t *p = buf;
	uint64_t h[LANES] = {n, n + 1, n + 2, n + 3}, w;
	size_t i, j;

	for (i = 0; i + 8 * LANES <= n; i += 8 * LANES)
		for (j = 0; j < LANES; j++)
			h[j] = hash_u64(h[j] ^ word(p, i + 8 * j, at));
	for (; i + 8 <= n; i += 8)
		h[0] = hash_u64(h[0] ^ word(p, i, at));
	w = 0;
	memcpy(&w, p + i, n - i);
	h[0] = hash_u64(h[0] ^ w);
	for (j = 1; j < LANES; j++)
		h[0] = hash_u64(h[0] ^ h[j]);
	return h[0];
}

void image_seal(void *buf, size_t n, size_t header, size_t at)
{
	uint64_t sum;

	if (n < header || n < at + sizeof(sum))
		return;
	sum = image_checksum(buf, n, at);
	memcpy((char *)buf + at, &sum, sizeof(sum));
}
