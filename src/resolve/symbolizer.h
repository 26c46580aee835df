/* SPDX-License-Identifier: MIT */
/*
 * Turns raw addresses into profile frames and mappings: kernel addresses via
 * kallsyms, user addresses via the process's memory map and the ELF symbol
 * table of the mapped file (or of its separate debug file), the vDSO image,
 * or for JIT code the process's perf map.
 *
 * Processes are snapshotted when first seen (maps, name, and the mapped ELF
 * files opened), so samples of a process that exits before the profile is
 * written still resolve. ELF files are cached per file identity (device and
 * inode) and shared across processes.
 */
#ifndef CPROF_SYMBOLIZER_H
#define CPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

struct profile;
struct symbolizer;

/* Cumulative counters, all uint64_t (session.c subtracts them field by field as an array). */
struct symbolizer_stats {
	uint64_t user_frames;	/* distinct user frames resolved */
	uint64_t kernel_frames; /* distinct kernel frames resolved */
	uint64_t unknown_user;	/* of which without a symbol */
	uint64_t unknown_kernel;
	uint64_t processes;	      /* processes snapshotted */
	uint64_t processes_gone;      /* gone before their memory map could be read */
	uint64_t processes_forgotten; /* exited, released after their last drain */
	uint64_t processes_inherited; /* gone, resolved with their parent's memory map */
	uint64_t elf_files;	      /* ELF files opened */
	uint64_t elf_errors;	      /* mapped files that could not be opened as ELF */
	uint64_t elf_files_closed;    /* closed after no known process mapped them a while */
	uint64_t debug_files;	      /* separate debug files used for stripped ones */
	uint64_t perf_map_bad_lines;  /* malformed lines in the perf maps read */
	/* Of unknown_user: vDSO frames shown at their function's start (from its FDEs). */
	uint64_t vdso_function_starts;
};

/* Who forked pid (while pid still runs its parent's program); 0 or -ENOENT. */
typedef int (*symbolizer_parent_fn)(void *ctx, uint32_t pid, uint32_t *parent);

int symbolizer__new(struct profile *prof, struct symbolizer **out);
/*
 * A forked child that exits before its memory map can be read is resolved
 * with its parent's map, which it shares until it execs.
 */
void symbolizer__set_lineage(struct symbolizer *s, symbolizer_parent_fn fn, void *ctx);
void symbolizer__free(struct symbolizer *s);
/* Where separate debug files are looked for (see debug_file.h); "" for nowhere. */
int symbolizer__set_debug_dir(struct symbolizer *s, const char *dir);

/* Snapshots a process now, while it lives (no-op if already known and not reused). */
void symbolizer__note_process(struct symbolizer *s, uint32_t pid);
/*
 * Reads once more the memory map of each process first seen at least 50 ms
 * ago and not looked at since, if it still lives: at first sight its loader
 * may not have mapped every library yet, or a fork not have run exec. For
 * the poll loop, so that short-lived processes are right before they exit.
 */
void symbolizer__recheck_new(struct symbolizer *s);

/*
 * Resolves a stack (leaf first) into profile frame indices written to
 * frames_out (room for n). Addresses past the leaf are return addresses and
 * are looked up at addr - 1 so a call at the end of a function names it.
 */
int symbolizer__user_frames(struct symbolizer *s, uint32_t pid, const uint64_t *ips, uint32_t n,
			    uint32_t *frames_out);
int symbolizer__kernel_frames(struct symbolizer *s, const uint64_t *ips, uint32_t n,
			      uint32_t *frames_out);
/*
 * Names the kernel frames of the profile: call it before anything reads the
 * profile's frames (output, upload, summary). kallsyms is too big to keep
 * (resolve/ksyms.h): the first profile's frames are named by the one read that
 * loads the kernel table, and that table keeps only their symbols when
 * last says no profile follows. Later profiles (continuous mode) find each
 * frame's symbol in the table at once, and a pass over kallsyms reads the
 * names of those not named yet. A symbol gone by then leaves its frames
 * "[kernel]", counted as unknown. 0 or a negative errno, warned about
 * (every frame has a name either way).
 */
int symbolizer__finish(struct symbolizer *s, bool last);
/* Where kernel symbols are read instead of /proc/kallsyms (tests); before the first kernel frame.
 */
int symbolizer__set_kallsyms(struct symbolizer *s, const char *path);
/* A frame that stands for something lost (e.g. "[user stack lost: ...]"). */
uint32_t symbolizer__placeholder(struct symbolizer *s, const char *what, int kernel);

/* Process name seen at snapshot time, or NULL if the process was never read. */
const char *symbolizer__process_name(struct symbolizer *s, uint32_t pid);
/* The process's PID in its own PID namespace, or 0 when it is the host PID (or unknown). */
uint32_t symbolizer__ns_pid(struct symbolizer *s, uint32_t pid);

const struct symbolizer_stats *symbolizer__stats(const struct symbolizer *s);
/*
 * Called once per drain: allows one fresh read of each process's maps again,
 * forgets processes that exited before the last drain, and closes the ELF
 * files no known process has mapped for a minute.
 */
void symbolizer__new_interval(struct symbolizer *s);
/* How long an ELF file nobody maps stays open (default: a minute); for tests. */
void symbolizer__set_elf_idle(struct symbolizer *s, uint64_t ns);
/*
 * Makes prof the profile that frames and mappings go to (continuous mode
 * starts one per interval). Everything that pointed into the previous
 * profile is dropped or re-interned, and processes that have exited are
 * forgotten, so a long run does not grow. Call it before freeing the
 * previous profile, and after symbolizer__finish on it. Kernel names read
 * for earlier profiles are kept: a pass over kallsyms only runs for
 * symbols not named yet.
 */
int symbolizer__set_profile(struct symbolizer *s, struct profile *prof);

#endif
