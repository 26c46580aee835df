/* SPDX-License-Identifier: MIT */
/*
 * The GNU build ID of an ELF file (its NT_GNU_BUILD_ID note): what names a
 * file's content across hosts and paths, for debug files (resolve/) and
 * for the unwind tables kept on disk (store/table_store.h).
 */
#ifndef CPROF_ELF_BUILD_ID_H
#define CPROF_ELF_BUILD_ID_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

/* Build IDs are 20 bytes (sha1) in practice; anything much larger is not one. */
#define ELF_BUILD_ID_MAX 64

/* The build ID in the notes of data (a note section or segment), into id; its length, or 0. */
size_t elf_build_id__in_notes(Elf_Data *data, uint8_t id[ELF_BUILD_ID_MAX]);

/*
 * The build ID among len bytes of raw notes, each a 12-byte header (name
 * size, description size, type) and its name and description, each padded
 * to 4 bytes, as the kernel shows its own in /sys/kernel/notes. Its
 * length, or 0.
 */
size_t elf_build_id__in_raw_notes(const void *buf, size_t len, uint8_t id[ELF_BUILD_ID_MAX]);

/*
 * The n bytes of id in lower-case hex into buf (size bytes), NUL-terminated,
 * as many whole bytes as fit; the characters written.
 */
size_t elf_build_id__hex(const uint8_t *id, size_t n, char *buf, size_t size);

/*
 * The build ID of elf, a file of file_size bytes: from its PT_NOTE
 * segments, else its SHT_NOTE sections (a debug file may have no program
 * headers). Its length, or 0 when it has none.
 */
size_t elf_build_id(Elf *elf, uint64_t file_size, uint8_t id[ELF_BUILD_ID_MAX]);

#endif
