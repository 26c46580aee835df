/* SPDX-License-Identifier: MIT */
/*
 * What the symbolizer's files share (symbolizer.c names them): its state,
 * the caches that state holds, and the functions one file calls in another.
 * Inside src/resolve only; the API is symbolizer.h.
 */
#ifndef CPROF_SYMBOLIZER_INTERNAL_H
#define CPROF_SYMBOLIZER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resolve/address_spaces.h"
#include "resolve/frame_table.h"
#include "resolve/debug_file.h"
#include "resolve/perf_map.h"
#include "lib/proc_maps.h"
#include "resolve/symbolizer.h"

struct elf_entry {
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	uint64_t mapped_ns;	      /* opened, or last found mapped by close_idle_elfs */
	struct elf_symtab *elf;	      /* NULL: the file could not be opened as ELF */
	uint32_t unopened_by;	      /* the PID it could not be opened through, if so */
	uint32_t fetch;		      /* its debug file's debuginfod ticket while it is awaited */
	uint32_t waiters;	      /* frames waiting for that file's names (see uframe_wait) */
	struct elf_entry *same_inode; /* chain of the index bucket */
	struct elf_entry *next;	      /* all entries, for freeing */
	/* While its file is open: the open ones, most recently used first. */
	struct elf_entry *newer, *older;
	bool open;
	/*
	 * Posted to the loader: elf is that thread's until pick_up_loads takes
	 * it back, or for good once left behind (symtab_loader__stop).
	 */
	bool loading;
	/* Frames of the profile under way want its lines: kept open until it ends. */
	bool lines_wanted;
};

/* What the symbolizer keeps of one address space: struct space's priv. */
struct space_state {
	uint32_t ns_pid;       /* PID in its own namespace; 0 when the same as pid (or unknown) */
	bool ns_read;	       /* ns_pid was looked up */
	struct u64map *frames; /* (address << 1 | leaf) -> frame id, see resolve_user */
	uint32_t generation;   /* of the ids in frames */
	struct perf_map *perf_map;	     /* NULL until read (and while there is none) */
	uint32_t perf_map_gen;		     /* times perf_map was replaced */
	size_t perf_map_bad;		     /* malformed lines of the current perf_map */
	bool perf_map_read;		     /* perf map read during this interval */
	struct perf_map_source perf_map_src; /* the file read last, when to read again */
	uint64_t *perf_map_total;	     /* the symbolizer's perf_map_bytes */
	bool perf_map_over;		     /* counted as over the run's perf map memory */
	struct perf_map_owner owner_id;	     /* taken while it lives, for its map at exit */
	bool owner_read;		     /* owner_id was looked up */
	bool owner_ok;			     /* ... and taken */
	uint32_t owner;			     /* its index + 1 in the symbolizer's jit_owners */
	uint32_t owner_gen;		     /* of the generation owner is of */
	bool from_proc;	     /* read from /proc/PID/maps, not followed from its beginning */
	bool refreshed;	     /* read again during this interval */
	bool unread;	     /* from /proc, whose read failed: counted as gone */
	bool verified;	     /* checked for a recycled PID during this interval */
	uint64_t start_time; /* from /proc: a recycled PID is another process */
	uint64_t exe_inode;  /* from /proc: a changed program is another name and map */
};

/* A process read from /proc at seen_ns, to be read once more (symbolizer__recheck_new). */
struct fresh {
	uint32_t pid;
	uint64_t start_time;
	uint64_t seen_ns;
};

struct fresh_list {
	struct fresh *v;
	size_t n, cap;
};

/* A kernel frame handed out before its name was read (see symbolizer__finish). */
struct kframe_wait {
	uint64_t lookup; /* the address looked up: the frame's, less 1 past the leaf */
	uint32_t frame;	 /* id */
	uint32_t sym;	 /* ksyms index; NO_SYM before kallsyms is read, or when none holds it */
};

#define NO_SYM UINT32_MAX

/*
 * A user frame in a file whose symbols are on their way: from the loader,
 * or from a debug file a debuginfod server sends. Named when the profile is
 * finished, from the symbols if they came, as module+offset (its stand-in
 * name) if not.
 */
struct uframe_wait {
	struct elf_entry *e;
	uint64_t vaddr;	     /* looked up in e's symbols */
	uint64_t file_off;   /* of the address looked up */
	uint32_t frame;	     /* id */
	bool function_start; /* its stand-in was counted in SYM_STAT_FUNCTION_STARTS */
	bool exact;	     /* its stand-in is its own offset: the function starts were not read */
};

/* Processes named by the count of mapped files that could not be opened. */
#define UNOPENED_WHO 8

struct symbolizer {
	struct frame_table *t;
	uint32_t generation;
	bool ended; /* symbolizer__finish ran: the next request starts a generation */
	struct address_spaces *spaces;
	bool tracking;	      /* the kernel's records feed spaces (symbolizer__task_event) */
	struct u64map *scope; /* pids whose records are followed; NULL: all */
	bool scope_children;  /* and their children */
	uint64_t intervals;
	/* The first processes whose mapped files could not be opened, and how many each. */
	struct {
		char comm[SPACE_COMM_LEN];
		uint64_t n;
	} unopened[UNOPENED_WHO];
	struct fresh_list notes;  /* first seen, not known yet (symbolizer__note_process) */
	struct u64map *elf_index; /* inode -> struct elf_entry * chain */
	struct elf_entry *elf_list;
	struct elf_entry *newest, *oldest; /* of the entries whose file is open */
	size_t nopen, max_open;
	struct load_budget *budget; /* borrowed; NULL: no caps */
	uint64_t elf_idle_ns;
	uint64_t elf_swept_ns; /* when close_idle_elfs last looked */
	char *debug_dir;
	uint64_t perf_map_ns;	      /* spent reading perf maps since the last drain */
	uint64_t perf_map_bytes;      /* held by every process's perf map */
	struct debug_file_search dfs; /* its refusals, moved to stats after each search */
	struct fresh_list fresh;      /* read from /proc lately, to be read once more */
	struct table_store *store;    /* borrowed: where files' symbols are kept; NULL: none */
	struct elf_symtab *vdso;      /* our own vDSO, NULL if unavailable */
	uint8_t *vdso_image;
	size_t vdso_size;
	bool vdso_tried;
	struct ksyms *ksyms;
	bool ksyms_tried;
	bool ksyms_partial;	   /* only the symbols of one finished profile's frames */
	char *kallsyms;		   /* NULL: /proc/kallsyms */
	struct ksym_names *knames; /* the kernel's own lookup, before kallsyms */
	bool knames_failed;
	struct kframe_wait *kwait; /* kernel frames waiting for their name */
	size_t nkwait;
	size_t kwait_cap;
	struct debuginfod_queue *fetcher; /* NULL: no debuginfod */
	uint64_t fetch_wait_ns;		  /* how long the last profile waits for debug files */
	uint64_t fetches_seen;		  /* debuginfod_queue__ended when last picked up */
	bool fetches_deferred;		  /* a file that came was for an entry then loading */
	struct symtab_loader *loader;	  /* NULL: symbols are loaded at the first lookup */
	size_t nloading;		  /* entries loading */
	bool loads_deferred;		  /* an entry's load waits for room (max_loading) */
	struct source_lines *lines; /* frames whose lines are looked up at the end; NULL: off */
	struct uframe_wait *uwait;  /* user frames waiting for symbols */
	size_t nuwait;
	size_t uwait_cap;
	struct jit_late *jit_late; /* JIT frames named from maps that come late */
	bool ask_jvms;		   /* --jvm-perf-map */
	uint64_t stats[SYM_STAT_MAX];
};

/* symbolizer.c */
int begin_request(struct symbolizer *s);

/* elf_cache.c */
size_t max_open_files(void);
void note_use(struct symbolizer *s, struct elf_entry *e);
struct elf_symtab *elf_for_map(struct symbolizer *s, uint32_t pid, const struct proc_map *m);
struct elf_entry *use_entry(struct symbolizer *s, uint32_t pid, struct mapping *m);
int close_idle_elfs(struct symbolizer *s);

/* debug_attach.c */
struct debug_file_search *debug_search(struct symbolizer *s);
void count_debug_refusals(struct symbolizer *s);
void attach_debug_file(struct symbolizer *s, uint32_t pid, const struct proc_map *m,
		       struct elf_entry *e);
void pick_up_fetches(struct symbolizer *s);
struct elf_entry *awaited_entry(struct symbolizer *s, const struct elf_symtab *elf);
void finish_fetches(struct symbolizer *s, bool last);

/* vdso.c */
struct elf_symtab *vdso_for_map(struct symbolizer *s, uint32_t pid, const struct proc_map *m);

/* process_tracking.c */
void space_state__free(void *priv);
void open_mapping(struct symbolizer *s, uint32_t pid, struct mapping *m);
void read_ns_pid(struct symbolizer *s, struct space *sp);
struct space *space_for(struct symbolizer *s, const struct symbolizer_task *t);
void reread_process(struct symbolizer *s, struct space *sp);

/* jit_frames.c */
void set_perf_map(struct space_state *st, struct perf_map *pm);
void read_perf_map(struct symbolizer *s, struct space *sp);
bool jit_memory(const struct proc_map *m, const struct elf_symtab *elf);
const char *jit_name(struct symbolizer *s, struct space *sp, uint64_t addr);
uint32_t jit_owner_of(struct symbolizer *s, struct space *sp);
int name_jit_frames(struct symbolizer *s);

/* user_frames.c */
const char *path_base_name(const char *path);
int name_user_frames(struct symbolizer *s, bool last);

/* symbol_loads.c */
bool symbols_coming(struct symbolizer *s, struct elf_entry *e);
void pick_up_loads(struct symbolizer *s, bool finishing, bool last);
void finish_loads(struct symbolizer *s, bool last);
void count_unloaded(struct symbolizer *s);

/* kernel_frames.c */
int name_kernel_frames(struct symbolizer *s, bool last);

/* frame_lines.c */
void want_line(struct symbolizer *s, struct elf_entry *e, struct elf_symtab *elf, uint64_t vaddr,
	       uint32_t frame);
void find_lines(struct symbolizer *s);

#endif
