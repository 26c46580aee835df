// SPDX-License-Identifier: MIT
/*
 * Address -> (mapping, function name). See symbolizer.h for the model.
 *
 * Files are opened through /proc/PID/map_files first: that is the exact file
 * that is mapped, even if it was deleted or replaced on disk, and it works
 * across mount namespaces. /proc/PID/root/PATH is the fallback, accepted only
 * when its device and inode match the mapping, so a different file that now
 * sits at the same path is never used; once the process has exited, PATH
 * itself, with the same check. Files are opened when their mapping is
 * recorded, while the process most likely lives. A file without .symtab gets its
 * symbols from its separate debug file (debug_file.h) when there is one.
 *
 * Code that is not in an ELF file: the vDSO is named from cprof's own copy
 * (the same image in every process of a kernel, checked byte for byte) and
 * the kernel's debug file of it when installed; its code that no symbol
 * names is shown at its function's start, from the image's .eh_frame. And
 * JIT code in anonymous memory from the process's perf map, read when the
 * process is first seen and again on a miss, at most once per interval, as
 * runtimes keep adding to it.
 *
 * Names are demangled for display (demangle.h); the raw name stays the
 * frame's system_name.
 *
 * With a symbol loader (symbolizer__load_off_loop), a file's symbols are
 * loaded on its thread: the entry is "loading" from the post until its
 * elf_symtab is taken back (pick_up_loads), and nothing here touches that
 * elf_symtab meanwhile (lookups, function starts, releasing or reopening
 * its file, a debug file from debuginfod), as elf_symtab.h asks; its frames
 * wait for their names as those awaiting a debug file do (uframe_wait).
 *
 * Answers are kept in a frame table per generation (struct frame_table),
 * which symbolizer__finish ends; the caches that hold ids (per process, per
 * kernel address) go with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/load_budget.h"
#include "lib/procfs.h"
#include "lib/strpool.h"
#include "lib/u64map.h"
#include "resolve/debug_file.h"
#include "resolve/debuginfod_queue.h"
#include "resolve/demangle.h"
#include "resolve/elf_symtab.h"
#include "resolve/address_spaces.h"
#include "resolve/ksym_names.h"
#include "resolve/ksyms.h"
#include "resolve/perf_map.h"
#include "resolve/proc_maps.h"
#include "resolve/symbolizer.h"
#include "resolve/symtab_loader.h"
#include "resolve/jit_late.h"
#include "resolve/source_lines.h"

#define LOG_MODULE "symbols"
#include "lib/log.h"
#include "lib/stat_cached.h"

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

/* Appends f; false when out of memory. */
static bool fresh_list__push(struct fresh_list *l, struct fresh f)
{
	size_t cap = l->cap ? 2 * l->cap : 64;
	struct fresh *v;

	if (l->n == l->cap) {
		v = reallocarray(l->v, cap, sizeof(*v));
		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = f;
	return true;
}

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

/*
 * Long enough for the records of a process's fork to be read (2 ms after
 * their time, see session.c) after its first sample.
 */
#define NOTE_DELAY_NS (5 * 1000000ull)

/* Processes named by the count of mapped files that could not be opened. */
#define UNOPENED_WHO 8

/* Long enough for a dynamic loader to map the libraries, or a fork to exec. */
#define RECHECK_AFTER_NS (50 * 1000000ull)

/*
 * An ELF file no known process has mapped for this long is closed. Otherwise a
 * long run on a busy host keeps every program it ever met open, with its symbol
 * tables in memory, and keeps deleted ones taking up disk space. A minute
 * spares a program that a script starts every few seconds a reload each time.
 */
#define ELF_IDLE_NS (60 * 1000000000ull)

/*
 * Records by id (index + 1). Equal ones share an id, found by a hash of
 * their content; the index only saves copies, so a collision or a failure
 * to index just makes another id.
 */
struct records {
	char *arr;
	size_t n, cap, size;
	struct u64map *index; /* content hash -> id */
};

typedef bool (*records_eq_fn)(const void *a, const void *b);

/* What one generation handed out: frames and modules, their names interned. */
struct frame_table {
	struct strpool *strings;
	struct u64map *display; /* interned raw name -> interned demangled name */
	struct records frames;	/* struct symbolizer_frame */
	struct records modules; /* struct symbolizer_module */
	uint32_t kernel_module;
	struct u64map *kframes[2];	   /* [leaf] address -> frame id */
	struct symbolizer_inline *inlines; /* of all frames: symbolizer_frame.inline_first */
	size_t ninlines, inlines_cap;
};

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

static void table__free(struct frame_table *t)
{
	if (!t)
		return;
	strpool__free(t->strings);
	u64map__free(t->display);
	free(t->frames.arr);
	u64map__free(t->frames.index);
	free(t->modules.arr);
	u64map__free(t->modules.index);
	u64map__free(t->kframes[0]);
	u64map__free(t->kframes[1]);
	free(t->inlines);
	free(t);
}

static struct frame_table *table__new(void)
{
	struct frame_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->strings = strpool__new();
	t->display = u64map__new();
	t->frames =
		(struct records){.size = sizeof(struct symbolizer_frame), .index = u64map__new()};
	t->modules =
		(struct records){.size = sizeof(struct symbolizer_module), .index = u64map__new()};
	t->kframes[0] = u64map__new();
	t->kframes[1] = u64map__new();
	if (!t->strings || !t->display || !t->frames.index || !t->modules.index || !t->kframes[0] ||
	    !t->kframes[1]) {
		table__free(t);
		return NULL;
	}
	return t;
}

/* Replaces the space's perf map (NULL: none), keeping the symbolizer's total. */
static void set_perf_map(struct space_state *st, struct perf_map *pm)
{
	if (st->perf_map_total)
		*st->perf_map_total += perf_map__bytes(pm) - perf_map__bytes(st->perf_map);
	perf_map__free(st->perf_map);
	st->perf_map = pm;
}

static void space_state__free(void *priv)
{
	struct space_state *st = priv;

	if (!st)
		return;
	u64map__free(st->frames);
	set_perf_map(st, NULL);
	free(st);
}

/*
 * How many mapped files stay open at once: a quarter of the descriptors the
 * process may have, at most MAX_OPEN_ELFS, so that a process that maps
 * thousands of files (20,000 kept 8.7k open) cannot exhaust them; the least
 * recently used is let go and opened again when its symbols are needed.
 */
#define MAX_OPEN_ELFS 256
#define MIN_OPEN_ELFS 16

static size_t max_open_files(void)
{
	struct rlimit rl;
	size_t n = MAX_OPEN_ELFS;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < n)
		n = rl.rlim_cur / 4;
	return n < MIN_OPEN_ELFS ? MIN_OPEN_ELFS : n;
}

int symbolizer__new(struct symbolizer **out)
{
	struct symbolizer *s;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->elf_idle_ns = ELF_IDLE_NS;
	s->max_open = max_open_files();
	s->t = table__new();
	s->elf_index = u64map__new();
	s->debug_dir = strdup(DEBUG_FILE_DEFAULT_DIR);
	s->jit_late = jit_late__new();
	if (!s->t || address_spaces__new(space_state__free, &s->spaces) || !s->elf_index ||
	    !s->debug_dir || !s->jit_late || source_lines__new(&s->lines)) {
		symbolizer__free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void symbolizer__free(struct symbolizer *s)
{
	struct elf_entry *e, *next;

	if (!s)
		return;
	/* First, the loads end: those taken back are freed below, those left behind by the loader.
	 */
	if (s->loader) {
		symtab_loader__stop(s->loader, clock__mono_ns() + SYMTAB_LOADER_STOP_NS);
		while ((e = symtab_loader__take(s->loader)))
			e->loading = false;
	}
	symtab_loader__free(s->loader);
	address_spaces__free(s->spaces);
	u64map__free(s->scope);
	for (e = s->elf_list; e; e = next) {
		next = e->next;
		if (!e->loading)
			elf_symtab__free(e->elf);
		free(e);
	}
	u64map__free(s->elf_index);
	free(s->fresh.v);
	free(s->notes.v);
	free(s->debug_dir);
	elf_symtab__free(s->vdso);
	free(s->vdso_image);
	ksyms__free(s->ksyms);
	ksym_names__free(s->knames);
	free(s->kallsyms);
	free(s->kwait);
	free(s->uwait);
	jit_late__free(s->jit_late);
	source_lines__free(s->lines);
	table__free(s->t);
	free(s);
}

int symbolizer__set_debug_dir(struct symbolizer *s, const char *dir)
{
	char *copy = strdup(dir ? dir : "");

	if (!copy)
		return -ENOMEM;
	free(s->debug_dir);
	s->debug_dir = copy;
	return 0;
}

void symbolizer__keep_symbols_in(struct symbolizer *s, struct table_store *store)
{
	s->store = store;
}

void symbolizer__set_budget(struct symbolizer *s, struct load_budget *budget)
{
	s->budget = budget;
}

int symbolizer__load_off_loop(struct symbolizer *s)
{
	if (s->loader)
		return 0;
	return symtab_loader__new(&s->loader);
}

static void lru_unlink(struct symbolizer *s, struct elf_entry *e)
{
	if (!e->open)
		return;
	*(e->newer ? &e->newer->older : &s->newest) = e->older;
	*(e->older ? &e->older->newer : &s->oldest) = e->newer;
	e->newer = e->older = NULL;
	e->open = false;
	s->nopen--;
}

/*
 * After e's file was opened or used: it goes first among the open ones, or
 * out if it closed itself (its symbols loaded); the least recently used go
 * while there are too many, but those loading, whose files are the loader's
 * (at most max_loading of them).
 */
static void note_use(struct symbolizer *s, struct elf_entry *e)
{
	struct elf_entry *old, *newer;

	if (e->loading)
		return;
	lru_unlink(s, e);
	if (elf_symtab__holds_file(e->elf)) {
		e->older = s->newest;
		*(s->newest ? &s->newest->newer : &s->oldest) = e;
		s->newest = e;
		e->open = true;
		s->nopen++;
	}
	for (old = s->oldest; old && s->nopen > s->max_open; old = newer) {
		newer = old->newer;
		if (old->loading)
			continue;
		lru_unlink(s, old);
		elf_symtab__release_file(old->elf);
		s->stats[SYM_STAT_ELF_FILES_RELEASED]++;
	}
}

void symbolizer__set_debuginfod(struct symbolizer *s, struct debuginfod_queue *q, uint64_t wait_ns)
{
	s->fetcher = q;
	s->fetch_wait_ns = wait_ns;
}

/*
 * A stripped file: its symbols may be in a separate debug file, here or,
 * by its build ID, on a debuginfod server, asked for now (it comes while
 * sampling goes on).
 */
/* The search for a debug file, with what it refuses counted in stats afterwards. */
static struct debug_file_search *debug_search(struct symbolizer *s)
{
	s->dfs.dir = s->debug_dir;
	s->dfs.budget = s->budget;
	return &s->dfs;
}

static void count_debug_refusals(struct symbolizer *s)
{
	int i;

	for (i = PROC_FILE_LINK; i < PROC_FILE_REFUSALS; i++)
		s->stats[SYM_STAT_DEBUG_REFUSED_LINK + i - PROC_FILE_LINK] += s->dfs.refused[i];
	s->stats[SYM_STAT_DEBUG_CRC_STOPPED] += s->dfs.crc_stopped;
	s->dfs = (struct debug_file_search){0};
}

static void attach_debug_file(struct symbolizer *s, uint32_t pid, const struct proc_map *m,
			      struct elf_entry *e)
{
	struct elf_symtab *dbg = NULL;
	const char *bid;
	int err;

	err = debug_file__find(debug_search(s), pid, m->path, e->elf, &dbg);
	count_debug_refusals(s);
	if (!err) {
		if (elf_symtab__set_debug_file(e->elf, dbg) == 0) {
			s->stats[SYM_STAT_DEBUG_FILES]++;
			pr_debug("%s: symbols from %s", m->path, elf_symtab__debug_path(e->elf));
		}
		return;
	}
	bid = elf_symtab__build_id(e->elf);
	if (!s->fetcher || !bid || e->fetch)
		return;
	if (debuginfod_queue__request(s->fetcher, bid, &e->fetch))
		e->fetch = 0;
	else
		pr_debug("%s: no local debug file: asking debuginfod for %s", m->path, bid);
}

/*
 * Takes the debug files that arrived: a file awaiting one gets its symbols
 * from it, and ends waiting either way once its fetch has ended.
 */
static void pick_up_fetches(struct symbolizer *s)
{
	uint64_t ended = s->fetcher ? debuginfod_queue__ended(s->fetcher) : 0;
	struct elf_symtab *dbg;
	struct elf_entry *e;
	const char *path;
	int got, err;

	if (ended == s->fetches_seen && !s->fetches_deferred)
		return;
	s->fetches_seen = ended;
	s->fetches_deferred = false;
	for (e = s->elf_list; e; e = e->next) {
		if (!e->fetch || !e->elf)
			continue;
		/* Its symbols are being loaded: the file is taken once they are back. */
		if (e->loading) {
			s->fetches_deferred = true;
			continue;
		}
		got = debuginfod_queue__result(s->fetcher, e->fetch, &path);
		if (!got)
			continue;
		e->fetch = 0;
		if (got < 0)
			continue;
		err = elf_symtab__open(path, &dbg);
		if (!err)
			err = elf_symtab__set_debug_file(e->elf, dbg);
		if (err) {
			pr_info("%s: cannot use %s: %s", elf_symtab__path(e->elf), path,
				strerror(-err));
			continue;
		}
		note_use(s, e);
		s->stats[SYM_STAT_DEBUG_FILES]++;
		s->stats[SYM_STAT_DEBUGINFOD_FILES]++;
		pr_debug("%s: symbols from %s (debuginfod)", elf_symtab__path(e->elf), path);
	}
}

/*
 * Beyond the vDSO's exported symbols: its debug file (the kernel's
 * unstripped image, where installed) names its local functions; without
 * one, its FDEs at least say where each function starts.
 */
static void load_vdso_extras(struct symbolizer *s)
{
	struct elf_symtab *dbg = NULL;
	struct utsname u;
	int err;

	if (uname(&u))
		return;
	err = debug_file__find_vdso(debug_search(s), u.release, s->vdso, &dbg);
	count_debug_refusals(s);
	if (!err && elf_symtab__set_debug_file(s->vdso, dbg) == 0) {
		s->stats[SYM_STAT_DEBUG_FILES]++;
		pr_debug("[vdso]: symbols from %s", elf_symtab__debug_path(s->vdso));
	}
}

/*
 * The vDSO is one image per kernel and ABI, so cprof reads its own once
 * (the auxiliary vector gives its address, our memory map its size).
 */
static void load_vdso(struct symbolizer *s)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct proc_maps *maps = NULL;
	const struct proc_map *m;
	int err;

	s->vdso_tried = true;
	if (!base || proc_maps__read(getpid(), &maps))
		return;
	m = proc_maps__find(maps, base);
	if (m && m->start == base && m->kind == PROC_MAP_SPECIAL && !strcmp(m->path, "[vdso]")) {
		s->vdso_size = m->end - m->start;
		s->vdso_image = malloc(s->vdso_size);
		if (s->vdso_image) {
			memcpy(s->vdso_image, (const void *)base, s->vdso_size);
			err = elf_symtab__open_memory(s->vdso_image, s->vdso_size, "[vdso]",
						      &s->vdso);
			if (err)
				pr_debug("[vdso]: not usable as ELF: %s", strerror(-err));
			else
				load_vdso_extras(s);
		}
	}
	proc_maps__free(maps);
}

/*
 * Our vDSO symbols, if the process's vDSO is the same image: a 32-bit or
 * x32 process has another one, and that must not get our names.
 */
static struct elf_symtab *vdso_for_map(struct symbolizer *s, uint32_t pid, const struct proc_map *m)
{
	struct elf_symtab *found = NULL;
	uint8_t *buf = NULL;
	char path[64];
	int fd;

	if (!s->vdso_tried)
		load_vdso(s);
	if (!s->vdso || m->end - m->start != s->vdso_size)
		return NULL;
	if (pid == (uint32_t)getpid())
		return s->vdso;
	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(s->vdso_size);
	if (buf && pread(fd, buf, s->vdso_size, (off_t)m->start) == (ssize_t)s->vdso_size &&
	    !memcmp(buf, s->vdso_image, s->vdso_size))
		found = s->vdso;
	else
		pr_debug("PID %u: its vDSO differs from ours: not named", pid);
	free(buf);
	close(fd);
	return found;
}

/* A mapped file that could not be opened, counted under its process's name. */
static void note_unopened(struct symbolizer *s, uint32_t pid)
{
	struct space *sp = address_spaces__latest(s->spaces, pid);
	const char *comm = sp && sp->comm[0] ? sp->comm : "?";
	size_t i;

	s->stats[SYM_STAT_FILES_UNOPENED]++;
	for (i = 0; i < UNOPENED_WHO && s->unopened[i].n; i++)
		if (!strcmp(s->unopened[i].comm, comm))
			break;
	if (i == UNOPENED_WHO)
		return;
	snprintf(s->unopened[i].comm, sizeof(s->unopened[i].comm), "%s", comm);
	s->unopened[i].n++;
}

void symbolizer__unopened_who(const struct symbolizer *s, char *buf, size_t size)
{
	size_t i, off = 0;
	int w;

	buf[0] = '\0';
	for (i = 0; i < UNOPENED_WHO && s->unopened[i].n; i++) {
		w = snprintf(buf + off, size - off, "%s%s %" PRIu64, i ? ", " : "",
			     s->unopened[i].comm, s->unopened[i].n);
		if (w < 0 || (size_t)w >= size - off) {
			buf[off] = '\0';
			return;
		}
		off += (size_t)w;
	}
}

/* Opens the file of e (mapped by pid as m); a failure is kept in e too. */
static void open_entry(struct symbolizer *s, struct elf_entry *e, uint32_t pid,
		       const struct proc_map *m)
{
	int fd, err;

	e->mapped_ns = clock__mono_ns();
	e->unopened_by = 0;
	fd = proc_map__open(pid, m);
	if (fd >= 0) {
		err = elf_symtab__open_fd(fd, m->path, &e->elf);
		if (err)
			pr_debug("%s: not usable as ELF: %s", m->path, strerror(-err));
		elf_symtab__keep_in(e->elf, s->store);
		elf_symtab__set_budget(e->elf, s->budget);
		elf_symtab__keep_lines(e->elf, s->lines != NULL,
				       s->lines && source_lines__inlines(s->lines));
		if (!err && !elf_symtab__has_symtab(e->elf))
			attach_debug_file(s, pid, m, e);
	} else {
		err = fd;
		pr_debug("%s (PID %u): cannot open: %s", m->path, pid, strerror(-err));
		note_unopened(s, pid);
		e->unopened_by = pid;
	}
	if (e->elf)
		s->stats[SYM_STAT_ELF_FILES]++;
	else
		s->stats[SYM_STAT_ELF_ERRORS]++;
}

/* The entry of m's file, if there is one, and the head of its inode's chain. */
static struct elf_entry *find_entry(struct symbolizer *s, const struct proc_map *m,
				    struct elf_entry **head)
{
	struct elf_entry *e;
	uint64_t v;

	*head = NULL;
	if (u64map__get(s->elf_index, m->inode, &v))
		*head = (struct elf_entry *)(uintptr_t)v;
	for (e = *head; e; e = e->same_inode)
		if (e->dev_major == m->dev_major && e->dev_minor == m->dev_minor &&
		    e->inode == m->inode)
			break;
	return e;
}

static struct elf_symtab *elf_for_map(struct symbolizer *s, uint32_t pid, const struct proc_map *m)
{
	struct elf_entry *head, *e = find_entry(s, m, &head);
	/*
	 * Failures are cached too: one bad file is not retried for every frame.
	 * A file one process could not be opened through (it was exiting, or
	 * its namespace hid it) is tried again for each other process.
	 */
	if (e) {
		if (e->unopened_by && e->unopened_by != pid) {
			open_entry(s, e, pid, m);
			note_use(s, e);
		}
		return e->elf;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->dev_major = m->dev_major;
	e->dev_minor = m->dev_minor;
	e->inode = m->inode;
	open_entry(s, e, pid, m);
	e->next = s->elf_list;
	s->elf_list = e;
	e->same_inode = head;
	u64map__set(s->elf_index, m->inode, (uintptr_t)e);
	note_use(s, e);
	return e->elf;
}

static void read_ns_pid(struct symbolizer *s, struct space *sp);

/*
 * (Re)reads the process's perf map; a process that is gone keeps the one
 * read last. Its name holds the PID the process has in its namespace,
 * which is read first if it is not known yet: a map looked for under the
 * host's PID is not found, and the frames of that interval stayed unnamed.
 */
/*
 * What reading perf maps may cost a drain: each read is capped (perf_map.c),
 * but many processes may each have a capped map, and -d must hold. Reads
 * past it wait for the next drain.
 */
#define PERF_MAP_DRAIN_BUDGET_NS (100 * 1000000ull)
/*
 * What all perf maps together may hold. A host's JIT processes rarely
 * hold more than a few MiB of map each; a hostile process holds at most
 * one capped map (some 25 MB), and many of them must not exhaust memory.
 */
#define PERF_MAPS_RUN_BYTES (128ull << 20)

static void read_perf_map(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;
	struct perf_map_source *src = &st->perf_map_src;
	enum proc_file_refusal was = src->refused;
	bool was_capped = src->capped, was_stale = src->stale;
	struct perf_map *pm = NULL;
	uint64_t t0;
	int got;

	read_ns_pid(s, sp);
	if (!sp->pid)
		return;
	/* While it surely lives: its map may only come when it exits (name_jit_frames). */
	if (!st->owner_read) {
		st->owner_read = true;
		st->owner_ok = !perf_map__owner(sp->pid, st->ns_pid, &st->owner_id);
	}
	if (s->perf_map_ns >= PERF_MAP_DRAIN_BUDGET_NS) {
		s->stats[SYM_STAT_PERF_MAP_READS_POSTPONED]++;
		return;
	}
	/* A map already held may be replaced; a new one must fit. */
	if (!st->perf_map && s->perf_map_bytes >= PERF_MAPS_RUN_BYTES) {
		if (!st->perf_map_over)
			s->stats[SYM_STAT_PERF_MAPS_OVER_BUDGET]++;
		st->perf_map_over = true;
		return;
	}
	t0 = clock__mono_ns();
	got = perf_map__reread(sp->pid, st->ns_pid, src, &pm);
	s->perf_map_ns += clock__mono_ns() - t0;
	/* A refusal is counted once per process, not at every miss that meets it again. */
	if (src->refused && src->refused != was)
		s->stats[SYM_STAT_PERF_MAP_REFUSED_LINK + src->refused - PROC_FILE_LINK]++;
	if (src->stale && !was_stale)
		s->stats[SYM_STAT_PERF_MAPS_NOT_ITS]++;
	if (got <= 0)
		return;
	if (src->capped && !was_capped)
		s->stats[SYM_STAT_PERF_MAPS_CAPPED]++;
	s->stats[SYM_STAT_PERF_MAP_BAD_LINES] += perf_map__bad_lines(pm) - st->perf_map_bad;
	st->perf_map_bad = perf_map__bad_lines(pm);
	set_perf_map(st, pm);
	st->perf_map_gen++;
}

/*
 * Executable memory that is no ELF file's: anonymous (also when named with
 * PR_SET_VMA_ANON_NAME) or a file that is not ELF (a memfd). JIT code lives
 * there; [vsyscall] and the like do not.
 */
static bool jit_memory(const struct proc_map *m, const struct elf_symtab *elf)
{
	if (!(m->perms & PROC_MAP_EXEC) || elf)
		return false;
	return m->kind == PROC_MAP_ANON || m->kind == PROC_MAP_FILE ||
	       (m->kind == PROC_MAP_SPECIAL && !strncmp(m->path, "[anon", 5));
}

/* The ELF file behind a code mapping, looked for once, while the mapping exists. */
static void open_mapping(struct symbolizer *s, uint32_t pid, struct mapping *m)
{
	if (m->elf_tried)
		return;
	m->elf_tried = true;
	if (m->map.kind == PROC_MAP_FILE)
		m->elf = elf_for_map(s, pid, &m->map);
	else if (m->map.kind == PROC_MAP_SPECIAL && !strcmp(m->map.path, "[vdso]"))
		m->elf = vdso_for_map(s, pid, &m->map);
}

/*
 * The entry of m's ELF file, about to be read: opened again (through the
 * process, as at first) if it was let go (note_use), and marked as used.
 */
static struct elf_entry *use_entry(struct symbolizer *s, uint32_t pid, struct mapping *m)
{
	struct elf_entry *head, *e;
	int fd, got;

	if (!m->elf || m->map.kind != PROC_MAP_FILE)
		return NULL;
	e = find_entry(s, &m->map, &head);
	if (!e || e->elf != m->elf)
		return NULL;
	if (e->loading)
		return e;
	if (elf_symtab__released(e->elf)) {
		fd = proc_map__open(pid, &m->map);
		got = fd < 0 ? fd : elf_symtab__reopen_fd(e->elf, fd);
		if (got < 0)
			pr_debug("%s (PID %u): cannot open again: %s", m->map.path, pid,
				 strerror(-got));
		else
			s->stats[SYM_STAT_ELF_FILES_REOPENED]++;
		if (got == 1 && !elf_symtab__has_symtab(e->elf))
			attach_debug_file(s, pid, &m->map, e);
	}
	note_use(s, e);
	return e;
}

/*
 * Reads the memory map and opens the ELF files of its executable mappings.
 * With JIT memory, the perf map is read now too, while the process surely
 * lives; misses read it again later (jit_name).
 */
static int read_maps(struct symbolizer *s, struct space *sp)
{
	struct mapping_table *t = NULL;
	struct proc_maps *maps = NULL;
	struct mapping *m;
	bool jit = false;
	size_t i, n, ncode = 0;
	int err;

	err = proc_maps__read((int)sp->pid, &maps);
	if (!err)
		err = mapping_table__new(&t);
	n = err ? 0 : proc_maps__count(maps);
	for (i = 0; i < n; i++) {
		const struct proc_map *pm = proc_maps__get(maps, i);

		if (!(pm->perms & PROC_MAP_EXEC))
			continue;
		m = mapping_table__insert(t, pm);
		if (!m) {
			err = -ENOMEM;
			break;
		}
		/* Past the cap, a file is opened when a sample needs it (resolve_user). */
		if (++ncode > LOAD_MAX_EAGER_MAPPINGS)
			continue;
		open_mapping(s, sp->pid, m);
		jit |= jit_memory(&m->map, m->elf);
	}
	proc_maps__free(maps);
	if (err) {
		mapping_table__free(t);
		return err;
	}
	mapping_table__free(sp->maps);
	sp->maps = t;
	if (jit)
		read_perf_map(s, sp);
	return 0;
}

/* Not stat(2): the program may be on FUSE, whose daemon would be asked (lib/stat_cached.h). */
static uint64_t exe_inode(uint32_t pid)
{
	uint64_t maj, min, ino;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	return stat_cached(path, &maj, &min, &ino) == 0 ? ino : 0;
}

/* A process read from /proc gets one more look (symbolizer__recheck_new). */
static void remember_fresh(struct symbolizer *s, uint32_t pid, uint64_t start_time)
{
	/* Without room the process keeps its first read; nothing worse. */
	if (pid)
		fresh_list__push(&s->fresh, (struct fresh){.pid = pid,
							   .start_time = start_time,
							   .seen_ns = clock__mono_ns()});
}

/* A space of pid with the symbolizer's state; NULL when out of memory. */
static struct space *begin_space(struct symbolizer *s, uint32_t pid, uint64_t start,
				 const char *comm, const struct space *from)
{
	struct space_state *st = calloc(1, sizeof(*st));
	struct space *sp = NULL;

	if (st)
		st->frames = u64map__new();
	if (st && st->frames)
		sp = address_spaces__begin(s->spaces, pid, start, comm, from);
	if (!sp) {
		space_state__free(st);
		return NULL;
	}
	st->generation = s->generation;
	st->perf_map_total = &s->perf_map_bytes;
	sp->priv = st;
	return sp;
}

/* The process's PID in its own namespace, read while it lives. */
static void set_ns_pid(struct space *sp, uint32_t ns_pid)
{
	struct space_state *st = sp->priv;

	st->ns_pid = ns_pid;
	st->ns_read = true;
}

/*
 * The process's PID in its own namespace, read while it lives. It is the
 * process's, not one program's: every space since its fork (or since it was
 * read from /proc), through its execs, gets it.
 */
static void read_ns_pid(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;
	struct space *q;
	uint32_t ns = 0;

	if (st->ns_read || !sp->pid)
		return;
	if (procfs__ns_pid(sp->pid, &ns) || ns == sp->pid)
		ns = 0;
	set_ns_pid(sp, ns);
	for (q = sp; q->exec && (q = address_spaces__before(s->spaces, q));)
		set_ns_pid(q, ns);
	for (q = sp; (q = address_spaces__after(s->spaces, q)) && q->exec;)
		set_ns_pid(q, ns);
}

/* Reads name, memory map and files of a process not followed from its beginning. */
static void read_from_proc(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;
	int err;

	s->stats[SYM_STAT_PROCESSES]++;
	procfs__start_time(sp->pid, &st->start_time);
	st->exe_inode = exe_inode(sp->pid);
	read_ns_pid(s, sp);
	err = read_maps(s, sp);
	/* Its memory map is empty because it has none: a kernel thread has not exited. */
	if (err && procfs__is_kernel_thread(sp->pid)) {
		s->stats[SYM_STAT_KERNEL_THREADS]++;
		err = 0;
	}
	if (err) {
		s->stats[SYM_STAT_PROCESSES_GONE]++;
		st->unread = true;
		pr_debug("PID %u: memory map not read: %s", sp->pid, strerror(-err));
	}
	if (!s->tracking || err)
		remember_fresh(s, sp->pid, st->start_time);
}

/* A process cprof did not see begin: it is read from /proc, while it lives. */
static struct space *read_process(struct symbolizer *s, uint32_t pid)
{
	struct space *sp;
	char comm[64] = "swapper";

	if (pid && procfs__comm(pid, comm, sizeof(comm)))
		comm[0] = '\0';
	sp = begin_space(s, pid, 0, comm, NULL);
	if (!sp)
		return NULL;
	((struct space_state *)sp->priv)->from_proc = true;
	if (pid)
		read_from_proc(s, sp);
	return sp;
}

static void reread_process(struct symbolizer *s, struct space *sp);

/*
 * Without the kernel's records a PID is one space, read at first sight; a
 * recycled PID is found by its start time, at most once per interval.
 */
static void check_reuse(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;
	uint64_t start;

	if (s->tracking || st->verified || !sp->pid)
		return;
	st->verified = true;
	if (procfs__start_time(sp->pid, &start) || !st->start_time || start == st->start_time)
		return;
	/* Its samples until now were the old process's: they are resolved, so start over. */
	st->exe_inode = 0;
	reread_process(s, sp);
	st->start_time = start;
}

/* The space a sample was stamped with, if known. */
static struct space *stamped_space(struct symbolizer *s, const struct symbolizer_task *t)
{
	struct space *sp = NULL;

	if (s->tracking)
		sp = address_spaces__at(s->spaces, t->pid, t->space);
	/* Id 0 (or no hooks in the kernel): before any fork or exec seen. */
	return sp ? sp : address_spaces__latest(s->spaces, t->pid);
}

/*
 * The space whose name a sample goes under. An exec names the process (its
 * record) before the BPF hook stamps the new space, a little later, at the
 * end of execve: a sample in between, already under the new name, goes under
 * it, as perf files it too. (Its user registers are still the old program's,
 * at its execve call: its frames are looked up in the stamped space.)
 */
static struct space *named_space(struct symbolizer *s, const struct symbolizer_task *t)
{
	struct space *sp = stamped_space(s, t), *next;

	next = sp ? address_spaces__after(s->spaces, sp) : NULL;
	if (next && next->exec && t->comm && !strncmp(t->comm, next->comm, sizeof(next->comm)) &&
	    strncmp(t->comm, sp->comm, sizeof(sp->comm)))
		return next;
	return sp;
}

/* The stamped space, read from /proc when unknown. */
static struct space *space_for(struct symbolizer *s, const struct symbolizer_task *t)
{
	struct space *sp = stamped_space(s, t);

	if (!sp)
		return read_process(s, t->pid);
	check_reuse(s, sp);
	return sp;
}

/* Notes a process first seen now, to be read later unless its records come first. */
static void remember_note(struct symbolizer *s, uint32_t pid)
{
	if (!fresh_list__push(&s->notes, (struct fresh){.pid = pid, .seen_ns = clock__mono_ns()}))
		read_process(s, pid);
}

/*
 * A process seen by its first sample. Followed, it may well have begun
 * after cprof, and its fork record be on its way behind the sample: it is
 * read from /proc only if no record has made it known a moment later
 * (symbolizer__recheck_new).
 */
void symbolizer__note_process(struct symbolizer *s, uint32_t pid)
{
	struct space *sp = address_spaces__latest(s->spaces, pid);

	if (sp)
		read_ns_pid(s, sp);
	else if (s->tracking)
		remember_note(s, pid);
	else
		read_process(s, pid);
}

/* The processes noted NOTE_DELAY_NS ago or more that no record has made known. */
static void read_noted(struct symbolizer *s, uint64_t now)
{
	size_t i, kept = 0;

	for (i = 0; i < s->notes.n; i++) {
		struct space *sp = address_spaces__latest(s->spaces, s->notes.v[i].pid);

		if (now - s->notes.v[i].seen_ns < NOTE_DELAY_NS)
			s->notes.v[kept++] = s->notes.v[i];
		else if (sp)
			read_ns_pid(s, sp);
		else
			read_process(s, s->notes.v[i].pid);
	}
	s->notes.n = kept;
}

const char *symbolizer__process_name(struct symbolizer *s, const struct symbolizer_task *task)
{
	struct space *sp = named_space(s, task);

	return sp && sp->comm[0] ? sp->comm : NULL;
}

uint32_t symbolizer__ns_pid(struct symbolizer *s, const struct symbolizer_task *task)
{
	struct space *sp = named_space(s, task);

	/* Not read at its first sight (its records came later): now, if it still runs. */
	if (sp && sp->end == UINT64_MAX)
		read_ns_pid(s, sp);
	return sp ? ((struct space_state *)sp->priv)->ns_pid : 0;
}

void symbolizer__follow(struct symbolizer *s)
{
	s->tracking = true;
}

int symbolizer__set_scope(struct symbolizer *s, const uint32_t *pids, size_t n, bool children)
{
	size_t i;

	if (!s->scope && !(s->scope = u64map__new()))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (u64map__set(s->scope, pids[i], 1))
			return -ENOMEM;
	s->scope_children = children;
	return 0;
}

static bool in_scope(const struct symbolizer *s, uint32_t pid)
{
	uint64_t v;

	return !s->scope || u64map__get(s->scope, pid, &v);
}

/* The newest space of a process in scope, read from /proc if cprof has none. */
static struct space *current_space(struct symbolizer *s, uint32_t pid)
{
	struct space *sp = address_spaces__latest(s->spaces, pid);

	return sp ? sp : read_process(s, pid);
}

void symbolizer__fork(struct symbolizer *s, uint32_t ppid, uint32_t pid, uint64_t time)
{
	struct space *parent, *child;

	if (!in_scope(s, ppid) && !in_scope(s, pid))
		return;
	if (!in_scope(s, pid) && (!s->scope_children || u64map__set(s->scope, pid, 1)))
		return;
	parent = current_space(s, ppid);
	child = begin_space(s, pid, time, parent ? parent->comm : "", parent);
	if (!child)
		return;
	s->stats[SYM_STAT_SPACES_FOLLOWED]++;
	/*
	 * A child of a namespaced process is namespaced too: read now, before it
	 * may exit. Others are read at their first sample (a clone may still
	 * have begun a namespace).
	 */
	if (parent && ((struct space_state *)parent->priv)->ns_pid)
		read_ns_pid(s, child);
}

void symbolizer__exec(struct symbolizer *s, uint32_t pid, uint64_t time, const char *comm)
{
	struct space *sp, *before;
	struct space_state *old;

	if (!in_scope(s, pid))
		return;
	sp = begin_space(s, pid, time, comm, NULL);
	if (!sp)
		return;
	sp->exec = true;
	s->stats[SYM_STAT_SPACES_FOLLOWED]++;
	/* An exec keeps the PID namespace: its PID there is known if it was before. */
	before = address_spaces__at(s->spaces, pid, time - 1);
	old = before ? before->priv : NULL;
	if (old && old->ns_read) {
		((struct space_state *)sp->priv)->ns_pid = old->ns_pid;
		((struct space_state *)sp->priv)->ns_read = true;
	}
}

void symbolizer__rename(struct symbolizer *s, uint32_t pid, const char *comm)
{
	struct space *sp = address_spaces__latest(s->spaces, pid);

	if (sp)
		snprintf(sp->comm, sizeof(sp->comm), "%s", comm);
}

/* Empties a space's frame cache; without memory for a new one, it stays. */
static void forget_frames(struct space_state *st)
{
	struct u64map *frames = u64map__new();

	if (!frames)
		return;
	u64map__free(st->frames);
	st->frames = frames;
}

void symbolizer__mmap(struct symbolizer *s, uint32_t pid, uint64_t time, const struct proc_map *m)
{
	struct space_state *st;
	struct mapping *added;
	struct space *sp;

	if (!(m->perms & PROC_MAP_EXEC) || !in_scope(s, pid))
		return;
	sp = address_spaces__at(s->spaces, pid, time);
	/* A process that began before cprof: /proc has this mapping already. */
	if (!sp) {
		read_process(s, pid);
		return;
	}
	st = sp->priv;
	added = mapping_table__own(&sp->maps) ? NULL : mapping_table__insert(sp->maps, m);
	if (!added)
		return;
	s->stats[SYM_STAT_MAPPINGS_FOLLOWED]++;
	/* Addresses resolved before the record was read may be in it now. */
	if (u64map__count(st->frames))
		forget_frames(st);
	/* Now, while the file can be opened through the process: it may exit, or the file go. */
	if (mapping_table__count(sp->maps) <= LOAD_MAX_EAGER_MAPPINGS)
		open_mapping(s, pid, added);
}

void symbolizer__exit(struct symbolizer *s, uint32_t pid, uint64_t time)
{
	address_spaces__exit(s->spaces, pid, time);
}

/*
 * Without the kernel's records, a process that has exited is found by its
 * /proc entry being gone, and forgotten a drain later (its last samples may
 * still be in the active map set); with them, its exit record ends its space.
 */
static void find_gone(struct symbolizer *s, uint64_t now)
{
	size_t pos = 0, idx = 0;
	struct space *sp;

	while ((sp = address_spaces__next(s->spaces, &pos, &idx)))
		if (sp->end == UINT64_MAX && sp->pid && !procfs__pid_exists(sp->pid))
			sp->end = now - 1;
}

/* Takes e out of the index chain of its inode. */
static void unindex_elf(struct symbolizer *s, struct elf_entry *e)
{
	struct elf_entry *head = NULL, **pp;
	uint64_t v;

	if (u64map__get(s->elf_index, e->inode, &v))
		head = (struct elf_entry *)(uintptr_t)v;
	for (pp = &head; *pp; pp = &(*pp)->same_inode)
		if (*pp == e) {
			*pp = e->same_inode;
			break;
		}
	if (head)
		u64map__set(s->elf_index, e->inode, (uintptr_t)head);
	else
		u64map__delete(s->elf_index, e->inode);
}

/*
 * Closes the ELF files that no known process has mapped for elf_idle_ns. A
 * process is known until one drain after it exited, so no sample still in
 * the BPF maps needs a file closed here. Failures hold no file and stay
 * cached, so that a bad file is not read again at every new sight.
 */
static int close_idle_elfs(struct symbolizer *s)
{
	size_t pos = 0, idx = 0, i;
	uint64_t val, now = clock__mono_ns();
	struct elf_entry *e, **pp;
	struct u64map *mapped;
	struct space *sp;

	/* A look walks every mapping of every process: a sixth of the idle time is often enough. */
	if (now - s->elf_swept_ns < s->elf_idle_ns / 6)
		return 0;
	mapped = u64map__new();
	if (!mapped)
		return -ENOMEM;
	s->elf_swept_ns = now;
	while ((sp = address_spaces__next(s->spaces, &pos, &idx))) {
		size_t n = mapping_table__count(sp->maps);

		for (i = 0; i < n; i++) {
			const struct mapping *m = mapping_table__get(sp->maps, i);

			if (m->elf && u64map__set(mapped, (uintptr_t)m->elf, 1)) {
				u64map__free(mapped);
				return -ENOMEM;
			}
		}
	}
	for (pp = &s->elf_list; (e = *pp);) {
		if (!e->elf || u64map__get(mapped, (uintptr_t)e->elf, &val)) {
			if (e->elf)
				e->mapped_ns = now;
			pp = &e->next;
			continue;
		}
		if (now - e->mapped_ns < s->elf_idle_ns || e->fetch || e->waiters || e->loading ||
		    e->lines_wanted) {
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		unindex_elf(s, e);
		lru_unlink(s, e);
		elf_symtab__free(e->elf);
		free(e);
		s->stats[SYM_STAT_ELF_FILES_CLOSED]++;
	}
	u64map__free(mapped);
	return 0;
}

void symbolizer__set_elf_idle(struct symbolizer *s, uint64_t ns)
{
	s->elf_idle_ns = ns;
}

void symbolizer__set_max_open(struct symbolizer *s, size_t n)
{
	s->max_open = n;
}

/* Without the kernel's records a drain looks for exited processes; with them, a rare one. */
#define GONE_CHECK_EVERY 60

void symbolizer__new_interval(struct symbolizer *s, uint64_t resolved_before)
{
	uint64_t now = clock__mono_ns();
	size_t pos = 0, idx = 0;
	struct space *sp;

	s->perf_map_ns = 0;
	/* A space that ended before then has no sample left to resolve. */
	s->stats[SYM_STAT_SPACES_FORGOTTEN] += address_spaces__forget(s->spaces, resolved_before);
	if (!s->tracking || ++s->intervals % GONE_CHECK_EVERY == 0)
		find_gone(s, now);
	/* Without memory for the check the files stay open until the next drain. */
	close_idle_elfs(s);
	while ((sp = address_spaces__next(s->spaces, &pos, &idx))) {
		struct space_state *st = sp->priv;

		st->refreshed = false;
		st->verified = false;
		st->perf_map_read = false;
	}
}

static const char *base_name(const char *path)
{
	const char *p = strrchr(path, '/');

	return p ? p + 1 : path;
}

/*
 * Length of name without its symbol version: a debug file's .symtab names
 * versioned definitions "clock_gettime@@GLIBC_2.17", which reads as a
 * different function from the "clock_gettime" of .dynsym.
 */
static size_t unversioned_len(const char *name)
{
	const char *at = strchr(name, '@');

	return at && at > name ? (size_t)(at - name) : strlen(name);
}

static const char *intern(struct symbolizer *s, const char *str)
{
	long id = strpool__add(s->t->strings, str);

	return id < 0 ? NULL : strpool__str(s->t->strings, (size_t)id);
}

/* The name to show for an interned raw name: demangled once, then remembered. */
static const char *display_name(struct symbolizer *s, const char *raw)
{
	char plain[4096], buf[4096];
	const char *shown = raw, *name = raw;
	size_t len = unversioned_len(raw);
	uint64_t v;

	if (u64map__get(s->t->display, (uintptr_t)raw, &v))
		return (const char *)(uintptr_t)v;
	if (len < sizeof(plain) && raw[len]) {
		memcpy(plain, raw, len);
		plain[len] = '\0';
		shown = intern(s, plain);
		name = plain;
	}
	if (shown && demangle__name(name, buf, sizeof(buf)))
		shown = intern(s, buf);
	if (!shown || u64map__set(s->t->display, (uintptr_t)raw, (uintptr_t)shown))
		return NULL;
	return shown;
}

static void *records__get(const struct records *r, uint32_t id)
{
	return id && id <= r->n ? r->arr + (id - 1) * r->size : NULL;
}

/* The id of rec (hash: of its content): an equal record's, or its own added; 0 if out of memory. */
static uint32_t records__id(struct records *r, const void *rec, uint64_t hash, records_eq_fn eq)
{
	size_t cap = r->cap ? 2 * r->cap : 256;
	uint64_t v;
	char *arr;

	if (u64map__get(r->index, hash, &v) && eq(records__get(r, (uint32_t)v), rec))
		return (uint32_t)v;
	if (r->n >= UINT32_MAX - 1)
		return 0;
	if (r->n == r->cap) {
		arr = reallocarray(r->arr, cap, r->size);
		if (!arr)
			return 0;
		r->arr = arr;
		r->cap = cap;
	}
	memcpy(r->arr + r->n++ * r->size, rec, r->size);
	u64map__set(r->index, hash, r->n);
	return (uint32_t)r->n;
}

static uint64_t frame_hash(const struct symbolizer_frame *f)
{
	uint64_t h = hash_u64(f->address ^ (uint64_t)f->module << 32);

	h = hash_u64(h ^ (uintptr_t)f->name);
	h = hash_u64(h ^ (uintptr_t)f->system_name);
	return hash_u64(h ^ (f->kernel | f->unknown << 1 | f->waiting << 2));
}

static bool frame_eq(const void *x, const void *y)
{
	const struct symbolizer_frame *a = x, *b = y;

	return a->address == b->address && a->module == b->module && a->name == b->name &&
	       a->system_name == b->system_name && a->kernel == b->kernel &&
	       a->unknown == b->unknown && a->waiting == b->waiting;
}

static uint64_t module_hash(const struct symbolizer_module *m)
{
	uint64_t h = hash_u64(m->start ^ hash_u64(m->limit));

	h = hash_u64(h ^ m->offset);
	h = hash_u64(h ^ (uintptr_t)m->path);
	return hash_u64(h ^ (uintptr_t)m->build_id ^ m->kernel);
}

static bool module_eq(const void *x, const void *y)
{
	const struct symbolizer_module *a = x, *b = y;

	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->path == b->path && a->build_id == b->build_id && a->kernel == b->kernel;
}

/* The id of a module whose names are interned; 0 if out of memory. */
static uint32_t module_id(struct symbolizer *s, const struct symbolizer_module *m)
{
	return records__id(&s->t->modules, m, module_hash(m), module_eq);
}

/* The id of frame f, named f.name (raw, not interned yet); 0 if out of memory. */
static uint32_t add_answer(struct symbolizer *s, struct symbolizer_frame f)
{
	f.system_name = intern(s, f.name);
	if (!f.system_name)
		return 0;
	f.name = f.unknown ? f.system_name : display_name(s, f.system_name);
	if (!f.name)
		return 0;
	return records__id(&s->t->frames, &f, frame_hash(&f), frame_eq);
}

static uint32_t add_frame(struct symbolizer *s, uint32_t module, uint64_t addr, const char *name,
			  bool kernel, bool unknown)
{
	return add_answer(s, (struct symbolizer_frame){
				     .module = module,
				     .address = addr,
				     .name = name,
				     .kernel = kernel,
				     .unknown = unknown,
			     });
}

/*
 * Whether m maps the program itself: Linux loads an executable below its
 * libraries and loader (0x400000, or 0x55... for PIE, against 0x7f...), so
 * its code is the first file-backed code mapping of the space.
 */
static bool program_file(struct space *sp, const struct mapping *m)
{
	size_t i, n = mapping_table__count(sp->maps);
	struct mapping *first;

	for (i = 0; i < n; i++) {
		first = mapping_table__get(sp->maps, i);
		if (first->map.kind == PROC_MAP_FILE && (first->map.perms & PROC_MAP_EXEC))
			return first->map.inode == m->map.inode && first->map.path && m->map.path &&
			       !strcmp(first->map.path, m->map.path);
	}
	return false;
}

static uint32_t user_module(struct symbolizer *s, struct space *sp, struct mapping *m)
{
	struct symbolizer_module mod = {
		.start = m->map.start,
		.limit = m->map.end,
		.offset = m->map.offset,
		.main_exe = program_file(sp, m),
	};
	const char *bid = m->elf ? elf_symtab__build_id(m->elf) : NULL;

	if (m->module_id && m->module_gen == s->generation)
		return m->module_id;
	mod.path = intern(s, m->map.path ? m->map.path : "");
	mod.build_id = intern(s, bid ? bid : "");
	if (!mod.path || !mod.build_id)
		return 0;
	m->module_id = module_id(s, &mod);
	m->module_gen = s->generation;
	return m->module_id;
}

/* A process read from /proc whose first read failed, read after all: it had not exited. */
static void uncount_gone(struct symbolizer *s, struct space_state *st)
{
	s->stats[SYM_STAT_PROCESSES_GONE]--;
	st->unread = false;
}

/*
 * Reads a process read from /proc once more: its loader may have mapped
 * more since, or (without the kernel's records) it may have run exec, which
 * makes it another program with another name, other addresses and no perf
 * map yet.
 */
static void reread_process(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;
	uint64_t exe = exe_inode(sp->pid);
	struct u64map *frames;
	char comm[64];

	/* An unknown program (exe_inode 0) is taken as changed. */
	if (exe && exe != st->exe_inode) {
		frames = u64map__new();
		if (frames) {
			u64map__free(st->frames);
			st->frames = frames;
		}
		st->exe_inode = exe;
		if (procfs__comm(sp->pid, comm, sizeof(comm)) == 0)
			snprintf(sp->comm, sizeof(sp->comm), "%.15s", comm);
		set_perf_map(st, NULL);
		st->perf_map_bad = 0;
		st->perf_map_gen++;
		/* The new program's map is read afresh; a refusal already counted stays so. */
		st->perf_map_src = (struct perf_map_source){.refused = st->perf_map_src.refused,
							    .stale = st->perf_map_src.stale};
		st->owner_read = false;
		st->owner_ok = false;
	}
	if (read_maps(s, sp) == 0 && st->unread)
		uncount_gone(s, st);
}

void symbolizer__recheck_new(struct symbolizer *s)
{
	uint64_t now = clock__mono_ns();
	size_t i, kept = 0;

	read_noted(s, now);
	for (i = 0; i < s->fresh.n; i++) {
		const struct fresh *f = &s->fresh.v[i];
		struct space *sp;

		if (now - f->seen_ns < RECHECK_AFTER_NS) {
			s->fresh.v[kept++] = *f;
			continue;
		}
		/* Still the process read then (a recycled PID is not), and alive. */
		sp = address_spaces__latest(s->spaces, f->pid);
		if (!sp || !((struct space_state *)sp->priv)->from_proc || sp->end != UINT64_MAX ||
		    ((struct space_state *)sp->priv)->start_time != f->start_time ||
		    !procfs__pid_exists(f->pid))
			continue;
		reread_process(s, sp);
	}
	s->fresh.n = kept;
}

/*
 * A JIT frame's name from the perf map. A miss reads the map again, at most
 * once per interval: the runtime may have compiled that code since.
 */
static const char *jit_name(struct symbolizer *s, struct space *sp, uint64_t addr)
{
	struct space_state *st = sp->priv;
	const char *name = perf_map__lookup(st->perf_map, addr);

	if (name || st->perf_map_read || sp->end != UINT64_MAX)
		return name;
	st->perf_map_read = true;
	read_perf_map(s, sp);
	return perf_map__lookup(st->perf_map, addr);
}

/*
 * The frames cache holds the frame id in its low 32 bits. An unnamed
 * frame in code outside any ELF file also holds perf_map_gen + 1 above them:
 * it is looked up again once the perf map may have changed.
 */
static bool cached_frame(struct space_state *st, uint64_t key, uint32_t *frame, bool *retry)
{
	uint64_t v;

	*retry = false;
	if (!u64map__get(st->frames, key, &v))
		return false;
	*frame = (uint32_t)v;
	if (!(v >> 32) || ((v >> 32) - 1 == st->perf_map_gen && st->perf_map_read))
		return true;
	*retry = true;
	return false;
}

/*
 * Code no symbol names is shown at the start of its function when the
 * call frame information knows the function, so that its samples add up
 * per function and not per instruction: *back is how far into the function
 * file_off is.
 */
static bool function_start(struct elf_symtab *elf, uint64_t file_off, uint64_t *back)
{
	uint64_t vaddr, start;

	*back = 0;
	if (!elf || elf_symtab__offset_to_vaddr(elf, file_off, &vaddr) ||
	    !elf_symtab__function_start(elf, vaddr, &start))
		return false;
	*back = vaddr - start;
	return true;
}

/* The code mapping holding addr; for a process read from /proc, read again once per interval. */
static struct mapping *find_code(struct symbolizer *s, struct space *sp, uint64_t addr)
{
	struct space_state *st = sp->priv;
	struct mapping *m = mapping_table__find(sp->maps, addr);

	/* Once per interval at most: a frame-pointer walk can also end in garbage. */
	if (!m && st->from_proc && !st->refreshed && sp->pid && sp->end == UINT64_MAX) {
		st->refreshed = true;
		reread_process(s, sp);
		m = mapping_table__find(sp->maps, addr);
	}
	return m && (m->map.perms & PROC_MAP_EXEC) ? m : NULL;
}

/* FILE+0xADDRESS: the ELF address addr2line and objdump take (docs/profile.md). */
static void file_address_name(char *buf, size_t len, const char *path, uint64_t vaddr)
{
	snprintf(buf, len, "%s+0x%" PRIx64, base_name(path), vaddr);
}

/*
 * The honest answer for code no symbol names: its module and offset, never
 * a neighbour's name. *fstart: whether that is its function's start, as
 * starts (NULL: none read) knows it.
 */
static uint32_t unnamed_frame(struct symbolizer *s, struct mapping *m, struct elf_symtab *starts,
			      uint32_t module, uint64_t addr, uint64_t lookup, bool waiting,
			      bool *fstart)
{
	uint64_t file_off = lookup - m->map.start + m->map.offset, back, vaddr;
	char buf[512];

	*fstart = function_start(starts, file_off, &back);
	/* The address addr2line and objdump take; an unread file has only its offset. */
	if (m->map.kind == PROC_MAP_FILE && m->elf &&
	    !elf_symtab__offset_to_vaddr(m->elf, file_off, &vaddr))
		file_address_name(buf, sizeof(buf), m->map.path, vaddr - back);
	else if (m->map.kind == PROC_MAP_FILE)
		snprintf(buf, sizeof(buf), "%s@0x%" PRIx64, base_name(m->map.path), file_off);
	else if (m->map.kind == PROC_MAP_SPECIAL)
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, m->map.path,
			 lookup - m->map.start - back);
	else
		snprintf(buf, sizeof(buf), "[anon]+0x%" PRIx64, lookup);
	return add_answer(s, (struct symbolizer_frame){
				     .module = module,
				     .address = addr,
				     .name = buf,
				     .unknown = true,
				     .function_start = *fstart,
				     .waiting = waiting,
			     });
}

/* The elf_entry of a file whose debug file is awaited, or NULL. */
static struct elf_entry *awaited(struct symbolizer *s, const struct elf_symtab *elf)
{
	struct elf_entry *e;

	if (!s->fetcher || !elf)
		return NULL;
	for (e = s->elf_list; e; e = e->next)
		if (e->elf == elf)
			return e->fetch ? e : NULL;
	return NULL;
}

/*
 * Code that symbols on their way may name (from the loader when loads,
 * else a stripped file's debug file): a frame named when the profile is
 * finished. Awaiting the loader, e's file is not read here at all, not
 * even for its function starts.
 */
static uint32_t waiting_user_frame(struct symbolizer *s, struct mapping *m, struct elf_entry *e,
				   uint32_t module, uint64_t addr, uint64_t lookup, uint64_t vaddr,
				   bool loads)
{
	uint64_t file_off = lookup - m->map.start + m->map.offset;
	struct uframe_wait *w;
	bool fstart;
	uint32_t frame;

	if (s->nuwait == s->uwait_cap) {
		size_t cap = s->uwait_cap ? 2 * s->uwait_cap : 256;

		w = reallocarray(s->uwait, cap, sizeof(*w));
		if (!w)
			return 0;
		s->uwait = w;
		s->uwait_cap = cap;
	}
	frame = unnamed_frame(s, m, loads ? NULL : m->elf, module, addr, lookup, true, &fstart);
	if (frame) {
		s->uwait[s->nuwait++] =
			(struct uframe_wait){e, vaddr, file_off, frame, fstart, loads};
		e->waiters++;
	}
	return frame;
}

/* Of the open files, at most this many are the loader's at once: note_use cannot let them go. */
static size_t max_loading(const struct symbolizer *s)
{
	return s->max_open / 2 ? s->max_open / 2 : 1;
}

/* Hands e's file to the loader; false when it cannot take it (out of memory). */
static bool post_load(struct symbolizer *s, struct elf_entry *e)
{
	if (symtab_loader__post(s->loader, e->elf, e))
		return false;
	/* First among the open ones, while it is still ours to look at. */
	note_use(s, e);
	e->loading = true;
	s->nloading++;
	return true;
}

/*
 * Whether e's symbols are still to come from the loader: posted now if
 * they are not loaded yet, or as soon as there is room (pick_up_loads).
 * A file let go and not opened again has none to come.
 */
static bool symbols_coming(struct symbolizer *s, struct elf_entry *e)
{
	if (!s->loader || !e || !e->elf)
		return false;
	if (e->loading)
		return true;
	if (elf_symtab__loaded(e->elf) || elf_symtab__released(e->elf))
		return false;
	if (s->nloading < max_loading(s))
		return post_load(s, e);
	s->loads_deferred = true;
	return true;
}

/* Frames wait for e's symbols, which are neither loaded nor on their way. */
static bool load_wanted(const struct elf_entry *e)
{
	return e->waiters && e->elf && !e->loading && !elf_symtab__loaded(e->elf);
}

/*
 * Takes back the files the loader is done with (loaded, refused or
 * abandoned). Then, when room was made or a profile is finished, posts the
 * loads that wait: those whose file is open (one let go is posted when a
 * frame needs it again), within max_loading but for the last profile.
 */
static void pick_up_loads(struct symbolizer *s, bool finishing, bool last)
{
	struct elf_entry *e;
	bool took = false;

	while ((e = symtab_loader__take(s->loader))) {
		e->loading = false;
		s->nloading--;
		/* Its file closed with the load: it leaves the open ones. */
		note_use(s, e);
		took = true;
	}
	if (!finishing && !(took && s->loads_deferred))
		return;
	s->loads_deferred = false;
	for (e = s->elf_list; e; e = e->next) {
		if (!load_wanted(e))
			continue;
		if (elf_symtab__released(e->elf) || (!last && s->nloading >= max_loading(s)) ||
		    !post_load(s, e))
			s->loads_deferred = true;
	}
}

static bool maps_jvm(struct space *sp)
{
	size_t i, n = mapping_table__count(sp->maps);

	for (i = 0; i < n; i++) {
		const struct proc_map *m = &mapping_table__get(sp->maps, i)->map;

		if (m->kind == PROC_MAP_FILE && !strcmp(base_name(m->path), "libjvm.so"))
			return true;
	}
	return false;
}

/* The index + 1 of sp's process among this profile's JIT owners; 0: unknown (or no memory). */
static uint32_t jit_owner_of(struct symbolizer *s, struct space *sp)
{
	struct space_state *st = sp->priv;

	if (!st->owner_ok)
		return 0;
	if (st->owner && st->owner_gen == s->generation)
		return st->owner;
	st->owner = jit_late__add_owner(s->jit_late, &st->owner_id, maps_jvm(sp));
	st->owner_gen = s->generation;
	return st->owner;
}

/*
 * Frame, named by elf's symbols at vaddr, gets its source line when the
 * profile ends (symbolizer__finish): e (NULL for the vDSO, which lives as
 * long as s) stays open until then. Without memory it just has none.
 */
static void want_line(struct symbolizer *s, struct elf_entry *e, struct elf_symtab *elf,
		      uint64_t vaddr, uint32_t frame)
{
	if (!s->lines || (e ? e->elf != elf : elf != s->vdso) || !elf)
		return;
	if (!source_lines__want(s->lines, elf, vaddr, frame) && e)
		e->lines_wanted = true;
}

static uint32_t resolve_user(struct symbolizer *s, struct space *sp, uint64_t addr, bool leaf)
{
	struct space_state *st = sp->priv;
	uint64_t key = addr << 1 | leaf, lookup = leaf ? addr : addr - 1, vaddr, jit = 0;
	const char *name = NULL;
	uint32_t frame, module, owner;
	struct elf_entry *wait = NULL, *used;
	struct mapping *m;
	bool retry, fstart, loads = false;

	if (cached_frame(st, key, &frame, &retry))
		return frame;
	m = find_code(s, sp, lookup);
	if (!m) {
		frame = add_frame(s, 0, addr, "[unknown]", false, true);
		if (!retry) {
			s->stats[SYM_STAT_UNKNOWN_USER]++;
			s->stats[SYM_STAT_USER_UNMAPPED]++;
		}
		goto out;
	}
	open_mapping(s, sp->pid, m);
	module = user_module(s, sp, m);
	if (!module)
		return 0;
	used = use_entry(s, sp->pid, m);
	if (m->elf && elf_symtab__offset_to_vaddr(m->elf, lookup - m->map.start + m->map.offset,
						  &vaddr) == 0) {
		loads = symbols_coming(s, used);
		name = loads ? NULL : elf_symtab__lookup(m->elf, vaddr, NULL);
		wait = loads ? used : name ? NULL : awaited(s, m->elf);
	} else if (jit_memory(&m->map, m->elf)) {
		name = jit_name(s, sp, lookup);
	}
	if (name) {
		frame = add_frame(s, module, addr, name, false, false);
		if (frame)
			want_line(s, used, m->elf, vaddr, frame);
		if (retry)
			s->stats[SYM_STAT_UNKNOWN_USER]--;
	} else {
		fstart = false;
		owner = jit_memory(&m->map, m->elf) ? jit_owner_of(s, sp) : 0;
		if (wait)
			frame = waiting_user_frame(s, m, wait, module, addr, lookup, vaddr, loads);
		else
			frame = unnamed_frame(s, m, m->elf, module, addr, lookup, owner != 0,
					      &fstart);
		if (fstart && !retry)
			s->stats[SYM_STAT_FUNCTION_STARTS]++;
		if (owner)
			jit_late__note(s->jit_late, owner, frame, lookup);
		if (jit_memory(&m->map, m->elf))
			jit = (uint64_t)st->perf_map_gen + 1;
		if (!retry)
			s->stats[SYM_STAT_UNKNOWN_USER]++;
	}
	/* Its symbols loaded, the file closed itself: it leaves the open ones. */
	if (used)
		note_use(s, used);
out:
	if (!retry)
		s->stats[SYM_STAT_USER_FRAMES]++;
	if (frame)
		u64map__set(st->frames, key, frame | jit << 32);
	return frame;
}

/* A request for frames after symbolizer__finish begins the next generation (see symbolizer.h). */
static int begin_request(struct symbolizer *s)
{
	struct frame_table *t;

	if (!s->ended)
		return 0;
	t = table__new();
	if (!t)
		return -ENOMEM;
	table__free(s->t);
	s->t = t;
	s->generation++;
	s->ended = false;
	return 0;
}

/* Empties the frame cache of a space if it holds ids of an earlier generation. */
static int current_ids(struct symbolizer *s, struct space_state *st)
{
	struct u64map *frames;

	if (st->generation == s->generation)
		return 0;
	frames = u64map__new();
	if (!frames)
		return -ENOMEM;
	u64map__free(st->frames);
	st->frames = frames;
	st->generation = s->generation;
	return 0;
}

int symbolizer__user_frames(struct symbolizer *s, const struct symbolizer_task *task,
			    const uint64_t *ips, uint32_t n, uint32_t *ids_out)
{
	struct space *sp;
	uint32_t i;
	int err;

	err = begin_request(s);
	if (err)
		return err;
	if (s->fetcher)
		pick_up_fetches(s);
	if (s->loader)
		pick_up_loads(s, false, false);
	sp = space_for(s, task);
	if (!sp)
		return -ENOMEM;
	err = current_ids(s, sp->priv);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		ids_out[i] = resolve_user(s, sp, ips[i], i == 0);
		if (!ids_out[i])
			return -ENOMEM;
	}
	return 0;
}

static uint32_t add_kernel_module(struct symbolizer *s)
{
	struct symbolizer_module m = {.kernel = true, .limit = UINT64_MAX};

	m.path = intern(s, "[kernel.kallsyms]");
	m.build_id = intern(s, "");
	return m.path && m.build_id ? module_id(s, &m) : 0;
}

/* Reads kallsyms, naming at once the symbols of the addresses in addrs[0..n). */
static void load_ksyms(struct symbolizer *s, const uint64_t *addrs, size_t n, bool only)
{
	int err;

	s->ksyms_tried = true;
	s->ksyms_partial = only;
	err = ksyms__load_for(s->kallsyms, addrs, n, only, &s->ksyms);
	if (err)
		pr_warn("cannot read %s (%s): kernel frames are shown as [kernel]",
			s->kallsyms ? s->kallsyms : "/proc/kallsyms", strerror(-err));
	else if (ksyms__hidden(s->ksyms))
		pr_warn("kernel addresses are hidden from cprof (kernel.kptr_restrict, or no "
			"CAP_SYSLOG): kernel frames are shown as [kernel]");
}

/*
 * A frame named when the profile is finished, under a stand-in name of its
 * own address meanwhile, so that frames never merge before they are named.
 */
static uint32_t waiting_kernel_frame(struct symbolizer *s, uint64_t addr, uint64_t lookup,
				     uint32_t sym)
{
	struct kframe_wait *w;
	char name[64];
	uint32_t frame;

	if (s->nkwait == s->kwait_cap) {
		size_t cap = s->kwait_cap ? 2 * s->kwait_cap : 256;

		w = reallocarray(s->kwait, cap, sizeof(*w));
		if (!w)
			return 0;
		s->kwait = w;
		s->kwait_cap = cap;
	}
	if (sym != NO_SYM && ksyms__want_name(s->ksyms, sym))
		return 0;
	snprintf(name, sizeof(name), "[kernel 0x%" PRIx64 "]", lookup);
	frame = add_answer(s, (struct symbolizer_frame){
				      .module = s->t->kernel_module,
				      .address = addr,
				      .name = name,
				      .kernel = true,
				      .unknown = true,
				      .waiting = true,
			      });
	if (frame)
		s->kwait[s->nkwait++] =
			(struct kframe_wait){.lookup = lookup, .frame = frame, .sym = sym};
	return frame;
}

/*
 * Until the first profile is finished kallsyms is not read: its frames are
 * all named then, in the one read that loads the table. Afterwards (the
 * next intervals of continuous mode) the table gives each frame its symbol
 * at once, and a name pass only runs for symbols not named yet.
 */
static uint32_t resolve_kernel(struct symbolizer *s, uint64_t addr, bool leaf)
{
	uint64_t v, lookup = leaf ? addr : addr - 1;
	uint32_t frame, sym = NO_SYM;
	const char *name;
	int err = -ENOENT;

	if (u64map__get(s->t->kframes[leaf], addr, &v))
		return (uint32_t)v;
	if (!s->ksyms_tried)
		err = -EAGAIN;
	else if (s->ksyms && ksyms__find(s->ksyms, lookup, &sym) == 0)
		err = ksyms__name(s->ksyms, sym, &name);
	if (!err) {
		frame = add_frame(s, s->t->kernel_module, addr, name, true, false);
	} else if (err == -EAGAIN) {
		frame = waiting_kernel_frame(s, addr, lookup, sym);
	} else {
		frame = add_frame(s, s->t->kernel_module, addr, "[kernel]", true, true);
		s->stats[SYM_STAT_UNKNOWN_KERNEL]++;
	}
	s->stats[SYM_STAT_KERNEL_FRAMES]++;
	if (frame)
		u64map__set(s->t->kframes[leaf], addr, frame);
	return frame;
}

int symbolizer__kernel_frames(struct symbolizer *s, const uint64_t *ips, uint32_t n,
			      uint32_t *ids_out)
{
	uint32_t i;
	int err;

	err = begin_request(s);
	if (err)
		return err;
	if (!s->t->kernel_module)
		s->t->kernel_module = add_kernel_module(s);
	if (!s->t->kernel_module)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ids_out[i] = resolve_kernel(s, ips[i], i == 0);
		if (!ids_out[i])
			return -ENOMEM;
	}
	return 0;
}

int symbolizer__set_kallsyms(struct symbolizer *s, const char *path)
{
	char *copy = NULL;

	if (path && !(copy = strdup(path)))
		return -ENOMEM;
	free(s->kallsyms);
	s->kallsyms = copy;
	return 0;
}

/* The frame's real name, or "[kernel]" (and counted) without one; named in place, under its id. */
static int name_kernel_frame(struct symbolizer *s, const struct kframe_wait *w, const char *name)
{
	struct symbolizer_frame *f = records__get(&s->t->frames, w->frame);
	const char *raw = intern(s, name ? name : "[kernel]"), *shown = raw;

	if (raw && name)
		shown = display_name(s, raw);
	if (!shown)
		return -ENOMEM;
	if (!name)
		s->stats[SYM_STAT_UNKNOWN_KERNEL]++;
	f->name = shown;
	f->system_name = raw;
	f->unknown = !name;
	f->waiting = false;
	return 0;
}

/*
 * The first profile's frames: kallsyms is read once, naming their symbols
 * as it goes. When no profile follows, only those symbols are kept.
 */
static void load_ksyms_for_waiting(struct symbolizer *s, bool last)
{
	uint64_t *addrs = malloc(s->nkwait * sizeof(*addrs));
	size_t i;

	for (i = 0; addrs && i < s->nkwait; i++)
		addrs[i] = s->kwait[i].lookup;
	/* Without memory for the list, the name pass below names them, one read later. */
	load_ksyms(s, addrs, addrs ? s->nkwait : 0, last && addrs);
	free(addrs);
	for (i = 0; s->ksyms && i < s->nkwait; i++)
		if (ksyms__find(s->ksyms, s->kwait[i].lookup, &s->kwait[i].sym) == 0)
			ksyms__want_name(s->ksyms, s->kwait[i].sym);
}

struct kname_pass {
	struct symbolizer *s;
	bool *left; /* for kallsyms */
	size_t answered;
	int err;
};

static void on_kernel_name(void *ctx, size_t i, const char *name, int err)
{
	struct kname_pass *p = ctx;
	int e = 0;

	p->answered = i + 1;
	if (err && err != -ENOENT)
		p->left[i] = true;
	else
		e = name_kernel_frame(p->s, &p->s->kwait[i], err ? NULL : name);
	if (e && !p->err)
		p->err = e;
}

/* The kernel's own lookup, once it answered; NULL where it cannot (said once with -v). */
static struct ksym_names *kernel_lookup(struct symbolizer *s)
{
	int err;

	/* A kallsyms file of the caller's (tests) is what names kernel frames. */
	if (s->kallsyms || s->knames_failed || s->knames)
		return s->knames;
	err = ksym_names__new(&s->knames);
	if (err) {
		s->knames_failed = true;
		pr_debug("kernel frames: named from /proc/kallsyms: the kernel's own lookup cannot "
			 "be used here (%s)",
			 strerror(-err));
	}
	return s->knames;
}

/*
 * Names the waiting kernel frames with the kernel's own lookup (a few
 * hundred lookups, not a read of all of kallsyms), leaving in kwait only
 * those it could not name, for kallsyms.
 */
static int name_by_kernel(struct symbolizer *s)
{
	struct kname_pass p = {.s = s};
	uint64_t *addrs = NULL;
	size_t i, j;
	int err = -ENOMEM;

	if (!kernel_lookup(s))
		return 0;
	addrs = malloc(s->nkwait * sizeof(*addrs));
	p.left = calloc(s->nkwait, sizeof(*p.left));
	if (!addrs || !p.left)
		goto cleanup;
	for (i = 0; i < s->nkwait; i++)
		addrs[i] = s->kwait[i].lookup;
	err = ksym_names__name(s->knames, addrs, s->nkwait, on_kernel_name, &p);
	if (err) {
		ksym_names__free(s->knames);
		s->knames = NULL;
		s->knames_failed = true;
	}
	for (i = j = 0; i < s->nkwait; i++)
		if (i >= p.answered || p.left[i])
			s->kwait[j++] = s->kwait[i];
	if (j)
		pr_debug("kernel frames: %zu of %zu named from /proc/kallsyms, not by the kernel's "
			 "lookup",
			 j, s->nkwait);
	s->nkwait = j;
	err = p.err;
cleanup:
	free(addrs);
	free(p.left);
	return err;
}

/* The debug files frames wait for: the last profile waits for them, at most fetch_wait_ns. */
static void finish_fetches(struct symbolizer *s, bool last)
{
	uint64_t t0 = clock__mono_ns();

	if (last && s->nuwait && !debuginfod_queue__wait(s->fetcher, t0 + s->fetch_wait_ns))
		pr_debug("debug files still on their way after %.1f s: their frames are shown "
			 "as file+address",
			 s->fetch_wait_ns / 1e9);
	/* The files waited for are read after the wait, which the budget does not count. */
	load_budget__postpone(s->budget, clock__mono_ns() - t0);
	pick_up_fetches(s);
}

/*
 * The loads frames wait for: the last profile waits for those under way
 * until the budget's deadline, and ends the rest (counted as abandoned, so
 * before the summary reads the budget); one of continuous mode takes what
 * has been loaded (later ones name the rest, as each resolves afresh).
 */
static void finish_loads(struct symbolizer *s, bool last)
{
	size_t left;

	pick_up_loads(s, true, last);
	if (last && !symtab_loader__wait(s->loader, load_budget__deadline(s->budget))) {
		pr_debug("symbols still loading at the end of the run: not loaded, their frames "
			 "are shown as file+address");
		/* A load that does not notice in time is blocked in a read: it stays behind. */
		left = symtab_loader__stop(s->loader, clock__mono_ns() + SYMTAB_LOADER_STOP_NS);
		if (left && s->budget)
			s->budget->symtabs_abandoned += left;
		if (left)
			pr_debug("%zu symbol loads left behind, still reading their files", left);
	}
	pick_up_loads(s, false, false);
}

/* The last profile's: files whose frames wait and whose load never began (let go meanwhile). */
static void count_unloaded(struct symbolizer *s)
{
	struct elf_entry *e;

	for (e = s->elf_list; e; e = e->next)
		if (load_wanted(e) && s->budget)
			s->budget->symtabs_abandoned++;
}

/* The name of a waiting frame's code, if its file's symbols have come. */
static const char *waited_name(struct symbolizer *s, const struct uframe_wait *w)
{
	struct elf_symtab *elf = w->e->elf;

	if (!elf || w->e->loading || (s->loader && !elf_symtab__loaded(elf)))
		return NULL;
	return elf_symtab__lookup(elf, w->vaddr, NULL);
}

/*
 * A frame with no name whose stand-in was made before its file's symbols
 * were there, at its own offset: moved to its function's start if the
 * file's call frame information knows it, as unnamed_frame does.
 */
static int stand_in_at_start(struct symbolizer *s, const struct uframe_wait *w,
			     struct symbolizer_frame *f)
{
	const struct symbolizer_module *mod = records__get(&s->t->modules, f->module);
	const char *name;
	uint64_t back;
	char buf[512];

	if (!mod || w->e->loading || !elf_symtab__loaded(w->e->elf) ||
	    !function_start(w->e->elf, w->file_off, &back))
		return 0;
	s->stats[SYM_STAT_FUNCTION_STARTS]++;
	f->function_start = true;
	if (!back)
		return 0;
	file_address_name(buf, sizeof(buf), mod->path, w->vaddr - back);
	name = intern(s, buf);
	if (!name)
		return -ENOMEM;
	f->name = name;
	f->system_name = name;
	return 0;
}

/*
 * The user frames waiting for symbols, from the loader or a debug file
 * (finish_loads, finish_fetches). A frame no symbol names keeps its
 * stand-in, module+offset, and stops waiting.
 */
static int name_user_frames(struct symbolizer *s, bool last)
{
	struct symbolizer_frame *f;
	const struct uframe_wait *w;
	const char *name, *raw, *shown;
	size_t i;
	int err = 0;

	if (s->fetcher)
		finish_fetches(s, last);
	if (s->loader)
		finish_loads(s, last);
	/* A debug file that came while its file was loading is read now. */
	if (s->loader && s->fetcher && s->fetches_deferred) {
		pick_up_fetches(s);
		finish_loads(s, last);
	}
	if (s->loader && last)
		count_unloaded(s);
	for (i = 0; i < s->nuwait; i++) {
		w = &s->uwait[i];
		f = records__get(&s->t->frames, w->frame);
		w->e->waiters--;
		name = waited_name(s, w);
		f->waiting = false;
		if (!name) {
			if (w->function_start)
				s->stats[SYM_STAT_FUNCTION_STARTS]++;
			else if (w->exact && stand_in_at_start(s, w, f))
				err = -ENOMEM;
			continue;
		}
		raw = intern(s, name);
		shown = raw ? display_name(s, raw) : NULL;
		if (!shown) {
			err = -ENOMEM; /* the stand-in stays: an honest name */
			continue;
		}
		f->name = shown;
		f->system_name = raw;
		f->unknown = false;
		s->stats[SYM_STAT_UNKNOWN_USER]--;
		want_line(s, w->e, w->e->elf, w->vaddr, w->frame);
	}
	s->nuwait = 0;
	return err;
}

/* jit_late's answer for a waiting JIT frame: its name from a map that came late, or none. */
static int name_jit_frame(void *ctx, uint32_t frame, const char *name)
{
	struct symbolizer *s = ctx;
	struct symbolizer_frame *f = records__get(&s->t->frames, frame);
	const char *raw, *shown;

	if (!f)
		return 0;
	f->waiting = false;
	if (!name || !f->unknown)
		return 0;
	raw = intern(s, name);
	shown = raw ? display_name(s, raw) : NULL;
	if (!shown)
		return -ENOMEM; /* the stand-in stays: an honest name */
	f->name = shown;
	f->system_name = raw;
	f->unknown = false;
	s->stats[SYM_STAT_UNKNOWN_USER]--;
	s->stats[SYM_STAT_EXIT_FRAMES_NAMED]++;
	return 0;
}

/* The JIT frames no perf map named while their process was read (jit_late.h). */
static int name_jit_frames(struct symbolizer *s)
{
	struct jit_late_stats st = {0};
	int err, i;

	err = jit_late__name(s->jit_late, s->ask_jvms, &st, name_jit_frame, s);
	s->stats[SYM_STAT_EXIT_MAPS_READ] += st.maps_read;
	s->stats[SYM_STAT_EXIT_MAPS_OTHER_NS] += st.other_ns;
	s->stats[SYM_STAT_EXIT_MAPS_LATE] += st.late;
	s->stats[SYM_STAT_PERF_MAPS_NOT_ITS] += st.not_its;
	for (i = PROC_FILE_LINK; i < PROC_FILE_REFUSALS; i++)
		s->stats[SYM_STAT_PERF_MAP_REFUSED_LINK + i - PROC_FILE_LINK] += st.refused[i];
	s->stats[SYM_STAT_PERF_MAP_BAD_LINES] += st.bad_lines;
	s->stats[SYM_STAT_PERF_MAPS_CAPPED] += st.capped;
	s->stats[SYM_STAT_JVMS_ASKED] += st.jvms_asked;
	s->stats[SYM_STAT_JVMS_FAILED] += st.jvms_failed;
	s->stats[SYM_STAT_JVMS_UNASKED] += st.jvms_unasked;
	return err;
}

void symbolizer__ask_jvms(struct symbolizer *s, bool ask)
{
	s->ask_jvms = ask;
}

/*
 * The functions inlined at f (inl: innermost first), each with the line
 * in its code: the first the line found at the address, the others their
 * callee's call; f's file and line become the outermost call's. Without
 * memory, f keeps its line and no inlined functions.
 */
static void set_inlines(struct symbolizer *s, struct symbolizer_frame *f,
			const struct dwarf_inline_answer *inl)
{
	struct frame_table *t = s->t;
	const char *file = f->file, *raw;
	struct symbolizer_inline *v;
	uint32_t i, line = f->line;
	size_t cap = t->inlines_cap ? t->inlines_cap : 256;

	if (!inl || !inl->n || !f->file || t->ninlines + inl->n > UINT32_MAX)
		return;
	while (cap < t->ninlines + inl->n)
		cap *= 2;
	if (cap > t->inlines_cap) {
		v = reallocarray(t->inlines, cap, sizeof(*v));
		if (!v)
			return;
		t->inlines = v;
		t->inlines_cap = cap;
	}
	for (i = 0; i < inl->n; i++) {
		raw = intern(s, inl->frames[i].name ? inl->frames[i].name : "??");
		v = &t->inlines[t->ninlines + i];
		*v = (struct symbolizer_inline){raw ? display_name(s, raw) : NULL, raw, file, line};
		file = inl->frames[i].call_file ? intern(s, inl->frames[i].call_file) : NULL;
		line = file ? inl->frames[i].call_line : 0;
		if (!v->name)
			return;
	}
	f->inline_first = (uint32_t)t->ninlines;
	f->ninlines = (uint16_t)inl->n;
	t->ninlines += inl->n;
	f->file = file;
	f->line = line;
}

const struct symbolizer_inline *symbolizer__inlines(const struct symbolizer *s,
						    const struct symbolizer_frame *f)
{
	return f->ninlines ? &s->t->inlines[f->inline_first] : NULL;
}

static void set_line(void *ctx, uint32_t id, const char *file, uint32_t line,
		     enum symbolizer_line status, const struct dwarf_inline_answer *inl)
{
	struct symbolizer *s = ctx;
	struct symbolizer_frame *f = records__get(&s->t->frames, id);

	/* A frame of several processes is wanted once by each: the first answer stays. */
	if (!f || f->line_status)
		return;
	f->file = file ? intern(s, file) : NULL;
	f->line = f->file ? line : 0;
	f->line_status = f->file || !file ? status : SYM_LINE_NOT_ASKED;
	set_inlines(s, f, inl);
}

/* The source lines of the profile's user frames (see symbolizer__finish). */
static void find_lines(struct symbolizer *s)
{
	struct source_lines_counts c = {0};
	size_t n = source_lines__count(s->lines);
	uint64_t t0 = clock__mono_ns();
	struct elf_entry *e;

	if (source_lines__find(s->lines, s->budget, &c, set_line, s))
		pr_warn("cannot look up some source lines: out of memory");
	if (n)
		pr_debug("source lines of %zu frames: %" PRIu64 " line table units read in %.1f ms",
			 n, c.lines.units, (clock__mono_ns() - t0) / 1e6);
	for (e = s->elf_list; e; e = e->next)
		e->lines_wanted = false;
	s->stats[SYM_STAT_LINE_UNITS_BAD] += c.lines.bad_units;
	s->stats[SYM_STAT_LINE_UNITS_UNSUPPORTED] += c.lines.unsupported;
	s->stats[SYM_STAT_LINE_UNITS_CAPPED] += c.lines.capped_units;
	s->stats[SYM_STAT_INLINE_UNITS_BAD] += c.inlines.bad_units;
	s->stats[SYM_STAT_INLINE_UNITS_UNSUPPORTED] += c.inlines.unsupported;
	s->stats[SYM_STAT_INLINE_UNITS_CAPPED] += c.inlines.capped;
	s->stats[SYM_STAT_INLINE_FILES_UNREAD] += c.inline_files_unread;
}

void symbolizer__set_inlines(struct symbolizer *s, bool on)
{
	if (s->lines)
		source_lines__set_inlines(s->lines, on);
}

void symbolizer__set_lines(struct symbolizer *s, bool on)
{
	if (!on) {
		source_lines__free(s->lines);
		s->lines = NULL;
	}
}

int symbolizer__finish(struct symbolizer *s, bool last)
{
	size_t i, gone = 0;
	const char *name;
	int err = 0, pass_err = 0, e;

	s->ended = true;
	/*
	 * Without memory for a name, a frame keeps its stand-in: said, not
	 * returned. The last profile settles the loads under way, waited for
	 * or not, so that they are counted before the summary.
	 */
	if ((s->nuwait || (last && s->loader)) && name_user_frames(s, last))
		pr_warn("cannot name some user frames: out of memory");
	if (jit_late__any(s->jit_late) && name_jit_frames(s))
		pr_warn("cannot name some JIT frames: out of memory");
	if (s->lines)
		find_lines(s);
	if (!s->ksyms_tried && s->nkwait)
		err = name_by_kernel(s);
	if (!s->nkwait)
		return err;
	if (!s->ksyms_tried)
		load_ksyms_for_waiting(s, last);
	if (ksyms__wanted(s->ksyms)) {
		pass_err = ksyms__name_pass(s->ksyms);
		if (pass_err)
			pr_warn("cannot read %s again (%s): kernel frames are shown as [kernel]",
				s->kallsyms ? s->kallsyms : "/proc/kallsyms", strerror(-pass_err));
	}
	for (i = 0; i < s->nkwait; i++) {
		const struct kframe_wait *w = &s->kwait[i];

		name = NULL;
		if (w->sym != NO_SYM && ksyms__name(s->ksyms, w->sym, &name) == -ENOENT)
			gone++;
		e = name_kernel_frame(s, w, name);
		if (e && !err)
			err = e;
	}
	if (gone)
		pr_debug("%zu kernel frames: their symbol was gone when names were read", gone);
	if (err)
		pr_warn("cannot name kernel frames: %s", strerror(-err));
	s->nkwait = 0;
	/* A table of those symbols only would name no later frame: the next ones read again. */
	if (s->ksyms_partial) {
		ksyms__free(s->ksyms);
		s->ksyms = NULL;
		s->ksyms_tried = false;
		s->ksyms_partial = false;
	}
	return err ? err : pass_err;
}

uint32_t symbolizer__placeholder(struct symbolizer *s, const char *what, int kernel)
{
	return begin_request(s) ? 0 : add_frame(s, 0, 0, what, kernel != 0, true);
}

const struct symbolizer_frame *symbolizer__frame(const struct symbolizer *s, uint32_t id)
{
	return records__get(&s->t->frames, id);
}

const struct symbolizer_module *symbolizer__module(const struct symbolizer *s, uint32_t id)
{
	return records__get(&s->t->modules, id);
}

uint32_t symbolizer__generation(const struct symbolizer *s)
{
	return s->generation;
}

const uint64_t *symbolizer__stats(const struct symbolizer *s)
{
	return s->stats;
}
