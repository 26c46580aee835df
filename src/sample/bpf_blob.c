// SPDX-License-Identifier: MIT
/*
 * The BPF objects, gzipped at build time (the Makefile's *.bpf.gz.inc); see
 * bpf_blob.h. libbpf reads an object from the bytes it was opened from for
 * as long as the object lives, so each is inflated once and kept.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sample/bpf_blob.h"

static const unsigned char sampler_gz[] = {
#include "sampler.bpf.gz.inc"
};
static const unsigned char unwinder_gz[] = {
#include "unwinder.bpf.gz.inc"
};
static const unsigned char ksym_names_gz[] = {
#include "ksym_names.bpf.gz.inc"
};

struct blob {
	const char *name;
	const unsigned char *gz;
	size_t gz_len;
	unsigned char *bytes; /* NULL until inflated */
	size_t len;
};

static struct blob blobs[] = {
	{"sampler", sampler_gz, sizeof(sampler_gz)},
	{"unwinder", unwinder_gz, sizeof(unwinder_gz)},
	{"ksym_names", ksym_names_gz, sizeof(ksym_names_gz)},
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The gzip member whole: its trailer's size is the object's (all under 4 GiB). */
static int inflate_blob(struct blob *b)
{
	const unsigned char *t = b->gz + b->gz_len - 4;
	size_t len = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
	z_stream zs = {0};
	unsigned char *out = malloc(len ? len : 1);
	int rc;

	if (!out || inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		free(out);
		return -1;
	}
	zs.next_in = (Bytef *)b->gz;
	zs.avail_in = (uInt)b->gz_len;
	zs.next_out = out;
	zs.avail_out = (uInt)len;
	rc = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if (rc != Z_STREAM_END || zs.total_out != len) {
		free(out);
		return -1;
	}
	b->bytes = out;
	b->len = len;
	return 0;
}

const void *bpf_blob__bytes(const char *name, size_t *sz)
{
	const void *bytes = NULL;
	size_t i;

	*sz = 0;
	pthread_mutex_lock(&lock);
	for (i = 0; i < sizeof(blobs) / sizeof(*blobs); i++) {
		if (strcmp(blobs[i].name, name) != 0)
			continue;
		if (blobs[i].bytes || inflate_blob(&blobs[i]) == 0) {
			bytes = blobs[i].bytes;
			*sz = blobs[i].len;
		}
		break;
	}
	pthread_mutex_unlock(&lock);
	return bytes;
}
