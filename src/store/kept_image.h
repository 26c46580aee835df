/* SPDX-License-Identifier: MIT */
/*
 * What the files cprof keeps between runs (unwind tables, symbols) have in
 * common: a head that says what the image is, in which byte order, who
 * wrote it (the writer's version) and of which file (its GNU build ID),
 * and a checksum of the whole image, a word-by-word hash with its own
 * 8-byte field left out, to catch a file cut short or damaged before its
 * structure is checked. Not a defence against a crafted file: every
 * reader checks the structure too.
 */
#ifndef CPROF_KEPT_IMAGE_H
#define CPROF_KEPT_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/elf_build_id.h"

struct stat;

#define KEPT_IMAGE_VERSION_LEN 64

/*
 * The very file an image was made from, as fstat gives it: an image is
 * used only for a file of the same device, inode, size, modification and
 * change times (owner and mode too). No one but root can set a file's
 * change time, and any write, chmod, chown or utimes moves it: a file that
 * changed is another file. Owner and mode say who could have written it
 * (kept_source__trusted). All zero: none (no debug file).
 */
struct kept_source {
	uint64_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;
	uint32_t uid;
	uint32_t mode;
};

_Static_assert(sizeof(struct kept_source) == 48, "compared and stored whole: no padding");

/* *k of the file st describes. */
void kept_source__of(struct kept_source *k, const struct stat *st);

/* Whether a and b are the same file, unchanged. */
bool kept_source__same(const struct kept_source *a, const struct kept_source *b);

/*
 * Whether what is made from the file may be kept by, and given back to,
 * user self: a regular file of root's or self's that neither group nor
 * others may write (an ACL granting write to anyone else shows in the
 * group bits). Anyone else who can write it could make it anything between
 * our reading it and the image's use.
 */
bool kept_source__trusted(const struct kept_source *k, uint32_t self);

/* A hash of the file's device and inode, for an image's name. */
uint64_t kept_source__place(const struct kept_source *k);

/* The start of every kept image's header. */
struct kept_head {
	char magic[8];
	uint32_t byte_order;
	uint32_t header_size;		      /* of the format's whole header */
	char version[KEPT_IMAGE_VERSION_LEN]; /* NUL-padded */
	uint8_t build_id[ELF_BUILD_ID_MAX];
	uint32_t build_id_len;
};

/* A head of this host's byte order, for the file build_id names, by version. */
void kept_head__fill(struct kept_head *h, const char magic[8], uint32_t header_size,
		     const char *version, const uint8_t *build_id, uint32_t build_id_len);

/* Whether h is of that format, this host's byte order, the version, and the file. */
bool kept_head__is(const struct kept_head *h, const char magic[8], uint32_t header_size,
		   const char *version, const uint8_t *build_id, uint32_t build_id_len);

/*
 * What h says: the file's build ID (the rest of build_id zeroed) and the
 * writer's version (NUL-terminated). -EINVAL for a build ID too long.
 */
int kept_head__describe(const struct kept_head *h, uint8_t build_id[ELF_BUILD_ID_MAX],
			uint32_t *build_id_len, char version[KEPT_IMAGE_VERSION_LEN]);

/* The checksum of the n bytes at buf, the 8 at offset at (a multiple of 8) left out. */
uint64_t image_checksum(const void *buf, size_t n, size_t at);

/* Stores the image's checksum at offset at, if it is header bytes long at least. */
void image_seal(void *buf, size_t n, size_t header, size_t at);

#endif
