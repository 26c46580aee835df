/* SPDX-License-Identifier: MIT */
/*
 * Turns raw addresses into frames and modules: kernel addresses via
 * kallsyms, user addresses via the process's memory map and the ELF symbol
 * table of the mapped file (or of its separate debug file), the vDSO image,
 * or for JIT code the process's perf map.
 *
 * The symbolizer owns its answers: a frame is an id, and symbolizer__frame
 * tells what it is (name, module, flags). It knows no profile; the profile
 * builder copies what it needs (build/profile.h).
 *
 * A process's memory map is followed as the kernel reports each fork, exec
 * and mmap, and a sample is resolved in the address space it was taken in
 * (address_spaces.h); a process that began before cprof is read from /proc
 * when first seen. Mapped ELF files are opened when mapped, so samples of a
 * process that exits before the profile is written still resolve. ELF files
 * are cached per file identity (device and inode) and shared across
 * processes.
 */
#ifndef CPROF_SYMBOLIZER_H
#define CPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/proc_maps.h"
#include "resolve/symbolizer_frame.h"

struct symbolizer;
struct table_store;
struct load_budget;

/*
 * Cumulative counters, indexed by enum symbolizer_stat. They have the form of
 * the BPF side's (enum cprof_stat): an enum-indexed u64 array, so an
 * interval's share of either is one subtraction loop (session.c) that
 * assumes nothing about a struct's layout, and a counter added here needs
 * no change there. No table of names: the report's sentences (summary.c)
 * each combine several counters.
 */
enum symbolizer_stat {
	SYM_STAT_USER_FRAMES,	/* distinct user frames resolved */
	SYM_STAT_KERNEL_FRAMES, /* distinct kernel frames resolved */
	SYM_STAT_UNKNOWN_USER,	/* of which without a symbol */
	SYM_STAT_UNKNOWN_KERNEL,
	SYM_STAT_PROCESSES,	     /* processes read from /proc (not seen to begin) */
	SYM_STAT_PROCESSES_GONE,     /* of which gone before their memory map could be read */
	SYM_STAT_SPACES_FOLLOWED,    /* address spaces seen to begin: forks and execs */
	SYM_STAT_MAPPINGS_FOLLOWED,  /* code mappings seen as they were made */
	SYM_STAT_SPACES_FORGOTTEN,   /* ended (exit, exec), released after their last drain */
	SYM_STAT_USER_UNMAPPED,	     /* of SYM_STAT_UNKNOWN_USER: in no known mapping ([unknown]) */
	SYM_STAT_ELF_FILES,	     /* ELF files opened */
	SYM_STAT_ELF_ERRORS,	     /* mapped files that could not be opened as ELF */
	SYM_STAT_FILES_UNOPENED,     /* of which not opened at all (gone, or replaced) */
	SYM_STAT_ELF_FILES_CLOSED,   /* closed after no known process mapped them a while */
	SYM_STAT_DEBUG_FILES,	     /* separate debug files used for stripped ones */
	SYM_STAT_PERF_MAP_BAD_LINES, /* malformed lines in the perf maps read */
	/* Of SYM_STAT_UNKNOWN_USER: frames shown at their function's start (from .eh_frame_hdr). */
	SYM_STAT_FUNCTION_STARTS,
	SYM_STAT_KERNEL_THREADS,   /* of SYM_STAT_PROCESSES: kernel threads, no user memory */
	SYM_STAT_DEBUGINFOD_FILES, /* of SYM_STAT_DEBUG_FILES: from debuginfod (or its cache) */
	/* Perf maps refused by lib/proc_file.h's rule, once per process, in its order of reasons.
	 */
	SYM_STAT_PERF_MAP_REFUSED_LINK,
	SYM_STAT_PERF_MAP_REFUSED_NOT_REGULAR,
	SYM_STAT_PERF_MAP_REFUSED_NOT_OWNER,
	SYM_STAT_PERF_MAPS_CAPPED, /* longer than perf_map.c's caps: only their head was read */
	SYM_STAT_PERF_MAP_READS_POSTPONED, /* to the next drain: this one's budget was spent */
	SYM_STAT_PERF_MAPS_OVER_BUDGET,	   /* not read: all maps held PERF_MAPS_RUN_BYTES */
	/* Debug file candidates refused by the rule or their size, in its order of reasons. */
	SYM_STAT_DEBUG_REFUSED_LINK,
	SYM_STAT_DEBUG_REFUSED_NOT_REGULAR,
	SYM_STAT_DEBUG_REFUSED_NOT_OWNER,
	SYM_STAT_DEBUG_REFUSED_TOO_BIG,
	SYM_STAT_DEBUG_CRC_STOPPED,  /* debug files whose CRC the end of the run cut short */
	SYM_STAT_ELF_FILES_RELEASED, /* let go while open files were too many */
	SYM_STAT_ELF_FILES_REOPENED, /* ... and opened again for their symbols */
	/* Perf maps read at a profile's end (name_jit_frames), of processes that exited. */
	SYM_STAT_EXIT_MAPS_READ,
	SYM_STAT_EXIT_FRAMES_NAMED,  /* JIT frames named from maps read at the end (or a JVM's) */
	SYM_STAT_EXIT_MAPS_OTHER_NS, /* not read: it lived in another mount namespace or root */
	SYM_STAT_EXIT_MAPS_LATE,     /* not read: the end's time for maps was spent */
	SYM_STAT_PERF_MAPS_NOT_ITS,  /* refused: older than the process, or its PID's next one's */
	SYM_STAT_JVMS_ASKED,	     /* running JVMs asked for their perf map (--jvm-perf-map) */
	SYM_STAT_JVMS_FAILED,	     /* ... that did not answer, or whose answer was refused */
	SYM_STAT_JVMS_UNASKED,	     /* not asked: the end's time for asking was spent */
	/* Line tables (lib/dwarf_line.h): units skipped as malformed, unsupported or over its cap.
	 */
	SYM_STAT_LINE_UNITS_BAD,
	SYM_STAT_LINE_UNITS_UNSUPPORTED,
	SYM_STAT_LINE_UNITS_CAPPED,
	/* Inlined calls (lib/dwarf_inline.h): .debug_info units skipped, as above. */
	SYM_STAT_INLINE_UNITS_BAD,
	SYM_STAT_INLINE_UNITS_UNSUPPORTED,
	SYM_STAT_INLINE_UNITS_CAPPED,
	/* Files with lines whose .debug_info was not read: none, refused, unreadable, cut off. */
	SYM_STAT_INLINE_FILES_UNREAD,
	SYM_STAT_MAX,
};

int symbolizer__new(struct symbolizer **out);
/*
 * Whether running JVMs whose JIT frames no perf map named are asked to
 * write theirs at a profile's end (resolve/jvm_attach.h), as
 * `jcmd PID Compiler.perfmap` does. Off by default: it signals the JVM.
 */
void symbolizer__ask_jvms(struct symbolizer *s, bool ask);
void symbolizer__free(struct symbolizer *s);
/* Where separate debug files are looked for (see debug_file.h); "" for nowhere. */
int symbolizer__set_debug_dir(struct symbolizer *s, const char *dir);
/*
 * Where the symbols of files opened from now on are kept between runs
 * (elf_symtab__keep_in), borrowed until the symbolizer is freed; NULL: none.
 */
void symbolizer__keep_symbols_in(struct symbolizer *s, struct table_store *store);
/*
 * The run's caps and deadline for symbol tables and debug files' CRCs
 * (lib/load_budget.h), borrowed; NULL: none.
 */
void symbolizer__set_budget(struct symbolizer *s, struct load_budget *budget);
/*
 * Loads files' symbols on a thread of their own (resolve/symtab_loader.h),
 * not on the caller's at their first lookup: the frames of a file whose
 * symbols are not loaded yet wait for them (symbolizer_frame.waiting)
 * until the profile is finished, as those awaiting a debug file do. The
 * last profile waits for the loads under way until the budget's deadline.
 * 0, or a negative errno (then symbols are loaded at the first lookup).
 */
int symbolizer__load_off_loop(struct symbolizer *s);
struct debuginfod_queue;
/*
 * Stripped files with no local debug file ask q for theirs by build ID (q
 * outlives s). Their frames that no symbol names yet wait for it: the last
 * profile up to wait_ns (see symbolizer__finish), others not at all.
 */
void symbolizer__set_debuginfod(struct symbolizer *s, struct debuginfod_queue *q, uint64_t wait_ns);

/*
 * The kernel's records of processes, in time order (CLOCK_MONOTONIC ns, the
 * clock of the BPF program's space ids): each fork and exec begins an
 * address space (see address_spaces.h), each mmap of code adds to one, and
 * the mapped file is opened at once, while it can be. After
 * symbolizer__follow the records are taken as complete: spaces are no
 * longer read again from /proc, only read once for processes that began
 * before cprof.
 */
void symbolizer__follow(struct symbolizer *s);
/* Follows only these processes (and, with children, those they fork); all by default. */
int symbolizer__set_scope(struct symbolizer *s, const uint32_t *pids, size_t n, bool children);
void symbolizer__fork(struct symbolizer *s, uint32_t ppid, uint32_t pid, uint64_t time);
void symbolizer__exec(struct symbolizer *s, uint32_t pid, uint64_t time, const char *comm);
/* The process renamed itself (its main thread's name). */
void symbolizer__rename(struct symbolizer *s, uint32_t pid, const char *comm);
/* A mapping (its path copied); only code mappings are kept. */
void symbolizer__mmap(struct symbolizer *s, uint32_t pid, uint64_t time, const struct proc_map *m);
void symbolizer__exit(struct symbolizer *s, uint32_t pid, uint64_t time);

/*
 * A process seen by its first sample: one not known yet is read from /proc,
 * while it lives; when following, a few milliseconds later (from
 * symbolizer__recheck_new), unless its records made it known meanwhile (it
 * began after cprof, and its fork record was on its way behind the sample).
 */
void symbolizer__note_process(struct symbolizer *s, uint32_t pid);
/*
 * For the poll loop, at every wake: reads the processes noted a few
 * milliseconds ago that no record made known; and without the kernel's
 * records, reads once more the memory map of each process first read at
 * least 50 ms ago, if it still lives: at first sight its loader may not have
 * mapped every library yet, or a fork not have run exec. So short-lived
 * processes are right before they exit. (Also for a process whose first
 * read failed mid-exec.)
 */
void symbolizer__recheck_new(struct symbolizer *s);

/*
 * Resolves a stack (leaf first) into frame ids written to ids_out (room for
 * n). Addresses past the leaf are return addresses and are looked up at
 * addr - 1 so a call at the end of a function names it. Equal answers share
 * an id, also across processes: a forked worker pool maps its files at the
 * same places, and a profile then copies each frame once.
 */
/* Whose stack: a sample's process, address space id and thread name. */
struct symbolizer_task {
	uint32_t pid;
	uint64_t space;	  /* the BPF program's id of the space (0: none) */
	const char *comm; /* the sampled thread's name then; NULL if unknown */
};

int symbolizer__user_frames(struct symbolizer *s, const struct symbolizer_task *task,
			    const uint64_t *ips, uint32_t n, uint32_t *ids_out);
int symbolizer__kernel_frames(struct symbolizer *s, const uint64_t *ips, uint32_t n,
			      uint32_t *ids_out);
/*
 * A frame that stands for no code, of kind FRAME_LOST (e.g. "[user stack
 * lost: ...]") or FRAME_TRUNCATED; 0 if out of memory.
 */
uint32_t symbolizer__placeholder(struct symbolizer *s, const char *what, enum frame_kind kind,
				 int kernel);

/* What an id stands for (NULL if not of this generation), good until the next request. */
const struct symbolizer_frame *symbolizer__frame(const struct symbolizer *s, uint32_t id);
const struct symbolizer_module *symbolizer__module(const struct symbolizer *s, uint32_t id);
/*
 * Ids and the names they lead to belong to a generation, one profile's (see
 * symbolizer__finish): a table keyed by ids is stale once this changes.
 */
uint32_t symbolizer__generation(const struct symbolizer *s);

/*
 * Ends a profile. User frames in stripped files whose debug file was asked
 * of debuginfod, or in files whose symbols the loader had not loaded yet
 * (symbolizer__load_off_loop), are named now, from those symbols if they
 * came (the last profile waits for them, within its time: the debug files
 * up to the debuginfod wait, the loads up to the budget's deadline, past
 * which they are abandoned and counted), as module+offset if not.
 * Its kernel frames are named now, not when resolved, as
 * kallsyms is too big to keep (resolve/ksyms.h): until now they answer
 * waiting, under a stand-in name of their own address so that none merge
 * before they are named. The first profile's frames are named by the one
 * read that loads the kernel table, and that table keeps only their symbols
 * when last says no profile follows. Later profiles (continuous mode) find
 * each frame's symbol in the table at once, and a pass over kallsyms reads
 * the names of those not named yet. A symbol gone by then leaves its frames
 * "[kernel]", counted as unknown. Until the next request, the ids answer
 * the names (profile__finish_frames takes them).
 *
 * Then the user frames named by a file's symbols get their source file and
 * line, from the file's (or its debug file's) DWARF line table: one pass
 * over each table for all the profile's addresses in it (unless
 * symbolizer__set_lines turned this off).
 *
 * The next request for frames begins a new generation: every address is
 * resolved afresh, so each profile counts its own frames and sees the kernel
 * as it is then, and the names of the last are dropped, so a long run does
 * not grow. 0 or a negative errno, warned about (every frame has a name
 * either way).
 */
int symbolizer__finish(struct symbolizer *s, bool last);
/* Whether symbolizer__finish looks up source lines (default: yes). */
void symbolizer__set_lines(struct symbolizer *s, bool on);
/* Whether it looks up inlined functions with them (default: yes). */
void symbolizer__set_inlines(struct symbolizer *s, bool on);
/* f's inlined functions, f->ninlines of them, innermost first; valid as long as f. */
const struct symbolizer_inline *symbolizer__inlines(const struct symbolizer *s,
						    const struct symbolizer_frame *f);
/* Where kernel symbols are read instead of /proc/kallsyms (tests); before the first kernel frame.
 */
int symbolizer__set_kallsyms(struct symbolizer *s, const char *path);

/* The process's name in the address space the sample was taken in, or NULL if unknown. */
const char *symbolizer__process_name(struct symbolizer *s, const struct symbolizer_task *task);
/* The process's PID in its own PID namespace, or 0 when it is the host PID (or unknown). */
uint32_t symbolizer__ns_pid(struct symbolizer *s, const struct symbolizer_task *task);

/*
 * "make 2, sh 1": the processes whose mapped files could not be opened
 * (SYM_STAT_FILES_UNOPENED), the first few, with how many each.
 */
void symbolizer__unopened_who(const struct symbolizer *s, char *buf, size_t size);
/* The counters, indexed by enum symbolizer_stat (a live view). */
const uint64_t *symbolizer__stats(const struct symbolizer *s);
/*
 * Called once per drain, after it, with a time (CLOCK_MONOTONIC ns) before
 * which every sample taken has been resolved (the previous drain's start:
 * a sample taken in a process's exit path after its exit record may be in
 * the set filled after this drain's flip): forgets the address spaces that
 * ended before it,
 * allows one fresh read of each process's maps again, and closes the ELF
 * files no known process has mapped for a minute.
 */
void symbolizer__new_interval(struct symbolizer *s, uint64_t resolved_before);
/* How long an ELF file nobody maps stays open (default: a minute); for tests. */
void symbolizer__set_elf_idle(struct symbolizer *s, uint64_t ns);
/* How many mapped files may be open at once (default: 256, or RLIMIT_NOFILE / 4); for tests. */
void symbolizer__set_max_open(struct symbolizer *s, size_t n);

#endif
