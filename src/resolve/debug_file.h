/* SPDX-License-Identifier: MIT */
/*
 * Separate debug files. Distributions strip their binaries and ship the
 * symbol tables in debug packages (Debian's libc6-dbg, *-dbgsym), so a
 * stripped file is named through its debug file, found the way GDB finds
 * it:
 *   1. by GNU build ID: DEBUG_DIR/.build-id/ab/cdef....debug;
 *   2. by the .gnu_debuglink name: in the file's directory, in its .debug/
 *      subdirectory, then in DEBUG_DIR/<the file's directory>/.
 * A file found by build ID must carry that build ID; one found by debuglink
 * must have the CRC32 the link records, and the same build ID if both files
 * have one. Anything else belongs to another build and would name the wrong
 * functions.
 */
#ifndef CPROF_DEBUG_FILE_H
#define CPROF_DEBUG_FILE_H

#include <stdint.h>

#include "lib/proc_file.h"

struct elf_symtab;
struct load_budget;

/* Where to look, when to stop, and what was refused (added to, never reset). */
struct debug_file_search {
	const char *dir;		      /* DEBUG_DIR; NULL or "" for none */
	struct load_budget *budget;	      /* when a CRC in progress ends; NULL: never */
	uint64_t refused[PROC_FILE_REFUSALS]; /* candidates refused, by reason */
	uint64_t crc_stopped;		      /* CRCs the budget's end cut short */
};

/* Debian's (and GDB's) default DEBUG_DIR. */
#define DEBUG_FILE_DEFAULT_DIR "/usr/lib/debug"

/*
 * Finds and opens the debug file of e, the file mapped at path by process
 * pid (0: a path in our own root). The file's directory is looked up in the
 * process's root; DEBUG_DIR (NULL or "" for none) in ours, then in the
 * process's root when that differs (debug packages installed in a
 * container). Returns 0 with *out set, or -ENOENT when there is none.
 */
int debug_file__find(struct debug_file_search *ds, uint32_t pid, const char *path,
		     const struct elf_symtab *e, struct elf_symtab **out);

/*
 * Finds and opens the debug file of e, the vDSO of the running kernel
 * (release as uname -r gives it), by build ID: in DEBUG_DIR/.build-id/,
 * then where the kernel's `make vdso_install` puts the unstripped images,
 * MODULES/vdso/ with build-ID links in MODULES/vdso/.build-id/, for
 * MODULES = DEBUG_DIR/lib/modules/RELEASE (Debian's linux-image-*-dbg)
 * and /lib/modules/RELEASE. Only files with e's build ID are taken, so the
 * images are tried by name too (arm64 makes no links). All in our own
 * root: the vDSO is the kernel's, not the process's. 0, or -ENOENT.
 */
int debug_file__find_vdso(struct debug_file_search *ds, const char *release,
			  const struct elf_symtab *e, struct elf_symtab **out);

#endif
