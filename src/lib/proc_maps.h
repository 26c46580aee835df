/* SPDX-License-Identifier: MIT */
/*
 * Parsed /proc/PID/maps: the memory layout needed to turn a user-space
 * address into (file, file offset). Parsing works on a buffer so it can be
 * tested on fixture text; proc_maps__read() is the thin /proc wrapper.
 */
#ifndef CPROF_PROC_MAPS_H
#define CPROF_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum proc_map_perm {
	PROC_MAP_READ = 1,
	PROC_MAP_WRITE = 2,
	PROC_MAP_EXEC = 4,
	PROC_MAP_PRIVATE = 8, /* 'p' (copy-on-write) as opposed to 's' (shared) */
};

enum proc_map_kind {
	PROC_MAP_FILE,	  /* backed by a file: path is absolute */
	PROC_MAP_ANON,	  /* no path at all */
	PROC_MAP_SPECIAL, /* "[vdso]", "[heap]", "[stack]", "[vsyscall]", "[anon:...]", ... */
};

struct proc_map {
	uint64_t start;
	uint64_t end; /* exclusive */
	uint64_t offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	unsigned int perms; /* enum proc_map_perm bits */
	enum proc_map_kind kind;
	const char *path; /* NULL for PROC_MAP_ANON; " (deleted)" suffix removed */
	bool deleted;	  /* the path carried " (deleted)" */
};

struct proc_maps;

/*
 * Sets kind, path and deleted from a mapping's name as the kernel gives it
 * in /proc/PID/maps or in a perf mmap record: an absolute path (its
 * " (deleted)" suffix cut off, in place), a kernel-made name such as
 * "[vdso]", or nothing for anonymous memory (perf records say "//anon").
 */
void proc_map__set_name(struct proc_map *m, char *name);

/* Parses maps text; malformed lines are skipped and counted, never fatal. */
int proc_maps__parse(const char *text, size_t len, struct proc_maps **out);
/* Reads and parses /proc/PID/maps. -ESRCH if the process is gone. */
int proc_maps__read(int pid, struct proc_maps **out);
void proc_maps__free(struct proc_maps *m);

size_t proc_maps__count(const struct proc_maps *m);
const struct proc_map *proc_maps__get(const struct proc_maps *m, size_t i);
/* The mapping containing addr (binary search), or NULL. */
const struct proc_map *proc_maps__find(const struct proc_maps *m, uint64_t addr);
/* Same, and *idx (optional) gets its index for proc_maps__get and per-mapping arrays. */
const struct proc_map *proc_maps__find_index(const struct proc_maps *m, uint64_t addr, size_t *idx);
/*
 * Opens the file m maps in process pid, checked to be that very file
 * (device and inode): an fd, or a negative errno.
 */
int proc_map__open(uint32_t pid, const struct proc_map *m);

/* Number of lines that could not be parsed. */
size_t proc_maps__bad_lines(const struct proc_maps *m);

#endif
