/* SPDX-License-Identifier: MIT */
/*
 * The checksum of the files cprof keeps between runs (unwind tables,
 * symbols): a word-by-word hash of the whole image, its own 8-byte field
 * left out, to catch a file cut short or damaged before its structure is
 * checked. Not a defence against a crafted file: every reader checks the
 * structure too.
 */
#ifndef CPROF_IMAGE_SUM_H
#define CPROF_IMAGE_SUM_H

#include <stddef.h>
#include <stdint.h>

/* The checksum of the n bytes at buf, the 8 at offset at (a multiple of 8) left out. */
uint64_t image_checksum(const void *buf, size_t n, size_t at);

/* Stores the image's checksum at offset at, if it is header bytes long at least. */
void image_seal(void *buf, size_t n, size_t header, size_t at);

#endif
