/* SPDX-License-Identifier: MIT */
/*
 * Turns raw addresses into profile frames and mappings: kernel addresses via
 * kallsyms, user addresses via the process's memory map and the ELF symbol
 * table of the mapped file.
 *
 * Processes are snapshotted when first seen (maps, name, and the mapped ELF
 * files opened), so samples of a process that exits before the profile is
 * written still resolve. ELF files are cached per file identity (device and
 * inode) and shared across processes.
 */
#ifndef CPROF_SYMBOLIZER_H
#define CPROF_SYMBOLIZER_H

#include <stdint.h>

struct profile;
struct symbolizer;

struct symbolizer_stats {
	uint64_t user_frames;	/* distinct user frames resolved */
	uint64_t kernel_frames; /* distinct kernel frames resolved */
	uint64_t unknown_user;	/* of which without a symbol */
	uint64_t unknown_kernel;
	uint64_t processes;	 /* processes snapshotted */
	uint64_t processes_gone; /* gone before their memory map could be read */
	uint64_t elf_files;	 /* ELF files opened */
	uint64_t elf_errors;	 /* mapped files that could not be opened as ELF */
};

int symbolizer__new(struct profile *prof, struct symbolizer **out);
void symbolizer__free(struct symbolizer *s);

/* Snapshots a process now, while it lives (no-op if already known and not reused). */
void symbolizer__note_process(struct symbolizer *s, uint32_t pid);

/*
 * Resolves a stack (leaf first) into profile frame indices written to
 * frames_out (room for n). Addresses past the leaf are return addresses and
 * are looked up at addr - 1 so a call at the end of a function names it.
 */
int symbolizer__user_frames(struct symbolizer *s, uint32_t pid, const uint64_t *ips, uint32_t n,
			    uint32_t *frames_out);
int symbolizer__kernel_frames(struct symbolizer *s, const uint64_t *ips, uint32_t n,
			      uint32_t *frames_out);
/* A frame that stands for something lost (e.g. "[user stack lost: ...]"). */
uint32_t symbolizer__placeholder(struct symbolizer *s, const char *what, int kernel);

/* Process name seen at snapshot time, or NULL if the process was never read. */
const char *symbolizer__process_name(struct symbolizer *s, uint32_t pid);

const struct symbolizer_stats *symbolizer__stats(const struct symbolizer *s);
/* Called once per drain: allows one fresh read of each process's maps again. */
void symbolizer__new_interval(struct symbolizer *s);

#endif
