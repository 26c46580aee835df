// SPDX-License-Identifier: MIT
/*
 * Address -> (mapping, function name). See symbolizer.h for the model.
 *
 * Files are opened through /proc/PID/map_files first: that is the exact file
 * that is mapped, even if it was deleted or replaced on disk, and it works
 * across mount namespaces. /proc/PID/root/PATH is the fallback, accepted only
 * when its device and inode match the mapping, so a different file that now
 * sits at the same path is never used. A file without .symtab gets its
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/procfs.h"
#include "lib/strpool.h"
#include "lib/u64map.h"
#include "resolve/debug_file.h"
#include "resolve/demangle.h"
#include "resolve/elf_symtab.h"
#include "resolve/ksyms.h"
#include "resolve/perf_map.h"
#include "resolve/proc_maps.h"
#include "resolve/symbolizer.h"
#include "unwind/eh_frame_hdr.h"

#define LOG_MODULE "symbols"
#include "lib/log.h"

struct elf_entry {
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	uint64_t mapped_ns;	      /* opened, or last found mapped by close_idle_elfs */
	struct elf_symtab *elf;	      /* NULL: the file could not be opened as ELF */
	struct elf_entry *same_inode; /* chain of the index bucket */
	struct elf_entry *next;	      /* all entries, for freeing */
};

struct proc_state {
	uint32_t pid;
	uint32_t ns_pid; /* PID in its own namespace; 0 when the same as pid */
	uint64_t start_time;
	uint64_t exe_inode; /* an exec keeps the PID and start time but not the memory map */
	char *comm;
	struct proc_maps *maps;	   /* NULL when the process was gone before we could look */
	struct elf_symtab **elfs;  /* per maps index; borrowed from the cache */
	uint32_t *module_ids;	   /* per maps index; 0 until first used */
	struct u64map *frames;	   /* (address << 1 | leaf) -> frame id, see resolve_user */
	uint32_t generation;	   /* of the ids in module_ids and frames */
	struct perf_map *perf_map; /* NULL until read (and while there is none) */
	uint32_t perf_map_gen;	   /* times perf_map was replaced */
	size_t perf_map_bad;	   /* malformed lines of the current perf_map */
	bool perf_map_read;	   /* perf map read during this interval */
	bool refreshed;		   /* maps re-read during this interval */
	bool verified;		   /* start time checked during this interval */
	bool gone;		   /* found exited at the last drain */
	uint32_t parent;	   /* resolve with this process's map (see set_lineage) */
};

/* A process first seen at seen_ns, to be read once more (symbolizer__recheck_new). */
struct fresh {
	uint32_t pid;
	uint64_t start_time;
	uint64_t seen_ns;
};

/* A kernel frame handed out before its name was read (see symbolizer__finish). */
struct kframe_wait {
	uint64_t lookup; /* the address looked up: the frame's, less 1 past the leaf */
	uint32_t frame;	 /* id */
	uint32_t sym;	 /* ksyms index; NO_SYM before kallsyms is read, or when none holds it */
};

#define NO_SYM UINT32_MAX

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
	struct u64map *kframes[2]; /* [leaf] address -> frame id */
};

struct symbolizer {
	struct frame_table *t;
	uint32_t generation;
	bool ended;		  /* symbolizer__finish ran: the next request starts a generation */
	struct u64map *procs;	  /* pid -> struct proc_state * */
	struct u64map *elf_index; /* inode -> struct elf_entry * chain */
	struct elf_entry *elf_list;
	uint64_t elf_idle_ns;
	uint64_t elf_swept_ns; /* when close_idle_elfs last looked */
	char *debug_dir;
	struct fresh *fresh; /* processes first seen lately */
	size_t nfresh;
	size_t fresh_cap;
	struct elf_symtab *vdso; /* our own vDSO, NULL if unavailable */
	uint8_t *vdso_image;
	size_t vdso_size;
	struct eh_frame_hdr *vdso_cfi; /* the image's FDEs, NULL if unusable */
	bool vdso_tried;
	struct ksyms *ksyms;
	bool ksyms_tried;
	bool ksyms_partial;	   /* only the symbols of one finished profile's frames */
	char *kallsyms;		   /* NULL: /proc/kallsyms */
	struct kframe_wait *kwait; /* kernel frames waiting for their name */
	size_t nkwait;
	size_t kwait_cap;
	uint64_t stats[SYM_STAT_MAX];
	symbolizer_parent_fn parent_of;
	void *parent_ctx;
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

int symbolizer__new(struct symbolizer **out)
{
	struct symbolizer *s;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->elf_idle_ns = ELF_IDLE_NS;
	s->t = table__new();
	s->procs = u64map__new();
	s->elf_index = u64map__new();
	s->debug_dir = strdup(DEBUG_FILE_DEFAULT_DIR);
	if (!s->t || !s->procs || !s->elf_index || !s->debug_dir) {
		symbolizer__free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

static void proc_state__free(struct proc_state *st)
{
	if (!st)
		return;
	proc_maps__free(st->maps);
	free(st->elfs);
	free(st->module_ids);
	u64map__free(st->frames);
	perf_map__free(st->perf_map);
	free(st->comm);
	free(st);
}

void symbolizer__free(struct symbolizer *s)
{
	struct elf_entry *e, *next;
	uint64_t key, val;
	size_t pos = 0;

	if (!s)
		return;
	if (s->procs)
		while (u64map__next(s->procs, &pos, &key, &val))
			proc_state__free((struct proc_state *)(uintptr_t)val);
	u64map__free(s->procs);
	for (e = s->elf_list; e; e = next) {
		next = e->next;
		elf_symtab__free(e->elf);
		free(e);
	}
	u64map__free(s->elf_index);
	free(s->fresh);
	free(s->debug_dir);
	elf_symtab__free(s->vdso);
	free(s->vdso_image);
	eh_frame_hdr__free(s->vdso_cfi);
	ksyms__free(s->ksyms);
	free(s->kallsyms);
	free(s->kwait);
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

/* Opens the file behind an executable mapping; see the top comment for the order. */
static int open_mapped_file(uint32_t pid, const struct proc_map *m)
{
	char path[4096 + 64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (m->deleted)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%u/root%s", pid, m->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_ino != m->inode || major(st.st_dev) != m->dev_major ||
	    minor(st.st_dev) != m->dev_minor) {
		pr_debug("%s: not the file mapped by PID %u (identity differs)", m->path, pid);
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* A stripped file: its symbols may be in a separate debug file. */
static void attach_debug_file(struct symbolizer *s, uint32_t pid, const struct proc_map *m,
			      struct elf_symtab *elf)
{
	struct elf_symtab *dbg = NULL;

	if (debug_file__find(s->debug_dir, pid, m->path, elf, &dbg))
		return;
	if (elf_symtab__set_debug_file(elf, dbg) == 0) {
		s->stats[SYM_STAT_DEBUG_FILES]++;
		pr_debug("%s: symbols from %s", m->path, elf_symtab__debug_path(elf));
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

	if (uname(&u) == 0 && debug_file__find_vdso(s->debug_dir, u.release, s->vdso, &dbg) == 0 &&
	    elf_symtab__set_debug_file(s->vdso, dbg) == 0) {
		s->stats[SYM_STAT_DEBUG_FILES]++;
		pr_debug("[vdso]: symbols from %s", elf_symtab__debug_path(s->vdso));
	}
	err = eh_frame_hdr__from_elf(s->vdso_image, s->vdso_size, &s->vdso_cfi);
	if (err)
		pr_debug("[vdso]: no function starts from .eh_frame_hdr: %s", strerror(-err));
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

static struct elf_symtab *elf_for_map(struct symbolizer *s, uint32_t pid, const struct proc_map *m)
{
	struct elf_entry *e, *head = NULL;
	uint64_t v;
	int fd, err;

	if (u64map__get(s->elf_index, m->inode, &v))
		head = (struct elf_entry *)(uintptr_t)v;
	for (e = head; e; e = e->same_inode)
		if (e->dev_major == m->dev_major && e->dev_minor == m->dev_minor &&
		    e->inode == m->inode)
			return e->elf;

	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->dev_major = m->dev_major;
	e->dev_minor = m->dev_minor;
	e->inode = m->inode;
	e->mapped_ns = clock__mono_ns();
	fd = open_mapped_file(pid, m);
	if (fd >= 0) {
		err = elf_symtab__open_fd(fd, m->path, &e->elf);
		if (err)
			pr_debug("%s: not usable as ELF: %s", m->path, strerror(-err));
		else if (!elf_symtab__has_symtab(e->elf))
			attach_debug_file(s, pid, m, e->elf);
	} else {
		err = fd;
		pr_debug("%s (PID %u): cannot open: %s", m->path, pid, strerror(-err));
	}
	if (e->elf)
		s->stats[SYM_STAT_ELF_FILES]++;
	else
		s->stats[SYM_STAT_ELF_ERRORS]++;
	/* Failures are cached too: one bad file is not retried for every frame. */
	e->next = s->elf_list;
	s->elf_list = e;
	e->same_inode = head;
	u64map__set(s->elf_index, m->inode, (uintptr_t)e);
	return e->elf;
}

/* (Re)reads the process's perf map; a process that is gone keeps the one read last. */
static void read_perf_map(struct symbolizer *s, struct proc_state *st)
{
	struct perf_map *pm = NULL;

	if (!st->pid || perf_map__read(st->pid, st->ns_pid, &pm))
		return;
	s->stats[SYM_STAT_PERF_MAP_BAD_LINES] += perf_map__bad_lines(pm) - st->perf_map_bad;
	st->perf_map_bad = perf_map__bad_lines(pm);
	perf_map__free(st->perf_map);
	st->perf_map = pm;
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

/*
 * Reads the memory map and opens the ELF files of its executable mappings.
 * With JIT memory, the perf map is read now too, while the process surely
 * lives; misses read it again later (jit_name).
 */
static int snapshot_maps(struct symbolizer *s, struct proc_state *st)
{
	struct proc_maps *maps = NULL;
	bool jit = false;
	size_t i, n;
	int err;

	err = proc_maps__read((int)st->pid, &maps);
	if (err)
		return err;
	n = proc_maps__count(maps);
	free(st->elfs);
	free(st->module_ids);
	st->elfs = calloc(n ? n : 1, sizeof(*st->elfs));
	st->module_ids = calloc(n ? n : 1, sizeof(*st->module_ids));
	if (!st->elfs || !st->module_ids) {
		proc_maps__free(maps);
		return -ENOMEM;
	}
	proc_maps__free(st->maps);
	st->maps = maps;
	for (i = 0; i < n; i++) {
		const struct proc_map *m = proc_maps__get(maps, i);

		if (!(m->perms & PROC_MAP_EXEC))
			continue;
		if (m->kind == PROC_MAP_FILE)
			st->elfs[i] = elf_for_map(s, st->pid, m);
		else if (m->kind == PROC_MAP_SPECIAL && !strcmp(m->path, "[vdso]"))
			st->elfs[i] = vdso_for_map(s, st->pid, m);
		jit |= jit_memory(m, st->elfs[i]);
	}
	if (jit)
		read_perf_map(s, st);
	return 0;
}

static uint64_t exe_inode(uint32_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* A process seen for the first time gets one more look (symbolizer__recheck_new). */
static void remember_fresh(struct symbolizer *s, const struct proc_state *st)
{
	struct fresh *f;

	if (!st->pid)
		return;
	if (s->nfresh == s->fresh_cap) {
		size_t cap = s->fresh_cap ? 2 * s->fresh_cap : 64;

		f = realloc(s->fresh, cap * sizeof(*f));
		/* Without room the process keeps its first snapshot; nothing worse. */
		if (!f)
			return;
		s->fresh = f;
		s->fresh_cap = cap;
	}
	s->fresh[s->nfresh++] = (struct fresh){
		.pid = st->pid,
		.start_time = st->start_time,
		.seen_ns = clock__mono_ns(),
	};
}

static struct proc_state *snapshot_process(struct symbolizer *s, uint32_t pid)
{
	struct proc_state *st;
	char comm[64];
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->pid = pid;
	st->generation = s->generation;
	st->frames = u64map__new();
	if (!st->frames || u64map__set(s->procs, pid, (uintptr_t)st)) {
		proc_state__free(st);
		return NULL;
	}
	s->stats[SYM_STAT_PROCESSES]++;
	procfs__start_time(pid, &st->start_time);
	remember_fresh(s, st);
	if (pid && procfs__ns_pid(pid, &st->ns_pid) == 0 && st->ns_pid == pid)
		st->ns_pid = 0;
	st->exe_inode = pid ? exe_inode(pid) : 0;
	if (pid == 0)
		st->comm = strdup("swapper");
	else if (procfs__comm(pid, comm, sizeof(comm)) == 0)
		st->comm = strdup(comm);
	err = pid ? snapshot_maps(s, st) : -ESRCH;
	/* Its memory map is empty because it has none: a kernel thread has not exited. */
	if (err && pid && procfs__is_kernel_thread(pid)) {
		s->stats[SYM_STAT_KERNEL_THREADS]++;
		err = 0;
	}
	if (err && pid) {
		s->stats[SYM_STAT_PROCESSES_GONE]++;
		pr_debug("PID %u: memory map not read: %s", pid, strerror(-err));
		if (s->parent_of && s->parent_of(s->parent_ctx, pid, &st->parent) == 0 &&
		    st->parent != pid)
			s->stats[SYM_STAT_PROCESSES_INHERITED]++;
		else
			st->parent = 0;
	}
	st->verified = true;
	return st;
}

static struct proc_state *process(struct symbolizer *s, uint32_t pid)
{
	struct proc_state *st;
	uint64_t v, start, exe;

	if (!u64map__get(s->procs, pid, &v))
		return snapshot_process(s, pid);
	st = (struct proc_state *)(uintptr_t)v;
	if (st->verified || pid == 0)
		return st;
	st->verified = true;
	/* A recycled PID or an exec is a different memory map: start over. */
	if (procfs__start_time(pid, &start) == 0 &&
	    ((st->start_time && start != st->start_time) ||
	     (st->exe_inode && (exe = exe_inode(pid)) && exe != st->exe_inode))) {
		u64map__delete(s->procs, pid);
		proc_state__free(st);
		return snapshot_process(s, pid);
	}
	return st;
}

void symbolizer__set_lineage(struct symbolizer *s, symbolizer_parent_fn fn, void *ctx)
{
	s->parent_of = fn;
	s->parent_ctx = ctx;
}

/* The state whose memory map describes st: itself, or the nearest ancestor read. */
static struct proc_state *map_owner(struct symbolizer *s, struct proc_state *st)
{
	struct proc_state *p = st;
	int depth;

	for (depth = 0; depth < 8 && !p->maps && p->parent; depth++) {
		struct proc_state *up = process(s, p->parent);

		if (!up || up == p)
			break;
		p = up;
	}
	return p->maps ? p : st;
}

void symbolizer__note_process(struct symbolizer *s, uint32_t pid)
{
	process(s, pid);
}

const char *symbolizer__process_name(struct symbolizer *s, uint32_t pid)
{
	uint64_t v;

	if (!u64map__get(s->procs, pid, &v))
		return NULL;
	return ((struct proc_state *)(uintptr_t)v)->comm;
}

uint32_t symbolizer__ns_pid(struct symbolizer *s, uint32_t pid)
{
	uint64_t v;

	if (!u64map__get(s->procs, pid, &v))
		return 0;
	return ((struct proc_state *)(uintptr_t)v)->ns_pid;
}

/*
 * A process that has exited is forgotten one drain later: by then every sample
 * it left in the BPF maps has been resolved. Without this, a host that starts
 * a thousand short-lived processes a second would grow without bound.
 */
static int forget_gone(struct symbolizer *s)
{
	uint64_t key, val, *dead;
	size_t pos = 0, ndead = 0, i;

	dead = calloc(u64map__count(s->procs) + 1, sizeof(*dead));
	if (!dead)
		return -ENOMEM;
	while (u64map__next(s->procs, &pos, &key, &val))
		if (((struct proc_state *)(uintptr_t)val)->gone)
			dead[ndead++] = key;
	for (i = 0; i < ndead; i++) {
		if (u64map__get(s->procs, dead[i], &val))
			proc_state__free((struct proc_state *)(uintptr_t)val);
		u64map__delete(s->procs, dead[i]);
	}
	s->stats[SYM_STAT_PROCESSES_FORGOTTEN] += ndead;
	free(dead);
	pos = 0;
	while (u64map__next(s->procs, &pos, &key, &val)) {
		struct proc_state *st = (struct proc_state *)(uintptr_t)val;

		st->gone = st->pid && !procfs__pid_exists(st->pid);
	}
	return 0;
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
	uint64_t key, val, now = clock__mono_ns();
	struct elf_entry *e, **pp;
	struct u64map *mapped;
	size_t pos = 0, i;

	/* A look walks every mapping of every process: a sixth of the idle time is often enough. */
	if (now - s->elf_swept_ns < s->elf_idle_ns / 6)
		return 0;
	mapped = u64map__new();
	if (!mapped)
		return -ENOMEM;
	s->elf_swept_ns = now;
	while (u64map__next(s->procs, &pos, &key, &val)) {
		const struct proc_state *st = (const struct proc_state *)(uintptr_t)val;
		size_t n = st->maps ? proc_maps__count(st->maps) : 0;

		for (i = 0; i < n; i++)
			if (st->elfs[i] && u64map__set(mapped, (uintptr_t)st->elfs[i], 1)) {
				u64map__free(mapped);
				return -ENOMEM;
			}
	}
	for (pp = &s->elf_list; (e = *pp);) {
		if (!e->elf || u64map__get(mapped, (uintptr_t)e->elf, &val)) {
			if (e->elf)
				e->mapped_ns = now;
			pp = &e->next;
			continue;
		}
		if (now - e->mapped_ns < s->elf_idle_ns) {
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		unindex_elf(s, e);
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

void symbolizer__new_interval(struct symbolizer *s)
{
	uint64_t key, val;
	size_t pos = 0;

	forget_gone(s);
	/* Without memory for the check the files stay open until the next drain. */
	close_idle_elfs(s);
	while (u64map__next(s->procs, &pos, &key, &val)) {
		struct proc_state *st = (struct proc_state *)(uintptr_t)val;

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

static uint32_t user_module(struct symbolizer *s, struct proc_state *st, size_t idx)
{
	const struct proc_map *m = proc_maps__get(st->maps, idx);
	struct symbolizer_module mod = {
		.start = m->start,
		.limit = m->end,
		.offset = m->offset,
	};
	const char *bid = st->elfs[idx] ? elf_symtab__build_id(st->elfs[idx]) : NULL;

	if (st->module_ids[idx])
		return st->module_ids[idx];
	mod.path = intern(s, m->path ? m->path : "");
	mod.build_id = intern(s, bid ? bid : "");
	if (!mod.path || !mod.build_id)
		return 0;
	st->module_ids[idx] = module_id(s, &mod);
	return st->module_ids[idx];
}

/* The executable mapping holding addr: an instruction pointer is nowhere else. */
static const struct proc_map *find_code(struct proc_state *st, uint64_t addr, size_t *idx)
{
	const struct proc_map *m = st->maps ? proc_maps__find_index(st->maps, addr, idx) : NULL;

	return m && (m->perms & PROC_MAP_EXEC) ? m : NULL;
}

/*
 * Code the snapshot does not know: the process mapped more since (dlopen,
 * JIT), possibly where other data was, or it ran exec (a child of make seen
 * before it became gcc), which makes it another program with another name,
 * other addresses and no perf map yet.
 */
/* A process counted as gone whose memory map could be read after all. */
static void uncount_gone(struct symbolizer *s, struct proc_state *st)
{
	s->stats[SYM_STAT_PROCESSES_GONE]--;
	if (st->parent) {
		s->stats[SYM_STAT_PROCESSES_INHERITED]--;
		st->parent = 0;
	}
}

/* Reads the memory map again; also the name and the frames when the program changed. */
static void reread_process(struct symbolizer *s, struct proc_state *st)
{
	uint64_t exe = exe_inode(st->pid);
	struct u64map *frames;
	char comm[64], *copy;

	/* An unknown program (exe_inode 0) is taken as changed. */
	if (exe && exe != st->exe_inode) {
		frames = u64map__new();
		if (frames) {
			u64map__free(st->frames);
			st->frames = frames;
		}
		st->exe_inode = exe;
		if (procfs__comm(st->pid, comm, sizeof(comm)) == 0 && (copy = strdup(comm))) {
			free(st->comm);
			st->comm = copy;
		}
		perf_map__free(st->perf_map);
		st->perf_map = NULL;
		st->perf_map_bad = 0;
		st->perf_map_gen++;
	}
	snapshot_maps(s, st);
}

static void refresh_process(struct symbolizer *s, struct proc_state *st)
{
	st->refreshed = true;
	reread_process(s, st);
}

void symbolizer__recheck_new(struct symbolizer *s)
{
	uint64_t now = clock__mono_ns(), v;
	size_t i, kept = 0;

	for (i = 0; i < s->nfresh; i++) {
		const struct fresh *f = &s->fresh[i];
		struct proc_state *st;

		if (now - f->seen_ns < RECHECK_AFTER_NS) {
			s->fresh[kept++] = *f;
			continue;
		}
		/* Still the process first seen (a recycled PID is not), and alive. */
		if (!u64map__get(s->procs, f->pid, &v))
			continue;
		st = (struct proc_state *)(uintptr_t)v;
		if (st->start_time != f->start_time || !procfs__pid_exists(f->pid))
			continue;
		if (st->maps) {
			reread_process(s, st);
			continue;
		}
		/*
		 * Its first read failed though it lives: /proc/PID/maps cannot be
		 * read in the middle of an exec. It had not exited; read it all now.
		 */
		st->exe_inode = 0;
		reread_process(s, st);
		if (st->maps)
			uncount_gone(s, st);
	}
	s->nfresh = kept;
}

/*
 * A JIT frame's name from the perf map. A miss reads the map again, at most
 * once per interval: the runtime may have compiled that code since.
 */
static const char *jit_name(struct symbolizer *s, struct proc_state *st, uint64_t addr)
{
	const char *name = perf_map__lookup(st->perf_map, addr);

	if (name || st->perf_map_read)
		return name;
	st->perf_map_read = true;
	read_perf_map(s, st);
	return perf_map__lookup(st->perf_map, addr);
}

/*
 * The frames cache holds the frame id in its low 32 bits. An unnamed
 * frame in code outside any ELF file also holds perf_map_gen + 1 above them:
 * it is looked up again once the perf map may have changed.
 */
static bool cached_frame(struct proc_state *st, uint64_t key, uint32_t *frame, bool *retry)
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
 * file_off is. The vDSO only, for now: its image is at hand.
 */
static bool function_start(struct symbolizer *s, struct elf_symtab *elf, uint64_t file_off,
			   uint64_t *back)
{
	struct eh_frame_fde fde;
	uint64_t vaddr;

	*back = 0;
	if (!elf || elf != s->vdso || !s->vdso_cfi ||
	    elf_symtab__offset_to_vaddr(elf, file_off, &vaddr) ||
	    eh_frame_hdr__find(s->vdso_cfi, vaddr, &fde))
		return false;
	*back = vaddr - fde.pc_begin;
	return true;
}

static uint32_t resolve_user(struct symbolizer *s, struct proc_state *st, uint64_t addr, bool leaf)
{
	uint64_t key = addr << 1 | leaf, lookup = leaf ? addr : addr - 1, file_off, vaddr, jit = 0;
	uint64_t back;
	const struct proc_map *m;
	const char *name = NULL;
	char buf[512];
	uint32_t frame, module;
	size_t idx = 0;
	bool retry;

	if (cached_frame(st, key, &frame, &retry))
		return frame;
	m = find_code(st, lookup, &idx);
	/* Once per interval at most: a frame-pointer walk can also end in garbage. */
	if (!m && !st->refreshed && st->pid) {
		refresh_process(s, st);
		m = find_code(st, lookup, &idx);
	}
	if (!m) {
		frame = add_frame(s, 0, addr, "[unknown]", false, true);
		if (!retry)
			s->stats[SYM_STAT_UNKNOWN_USER]++;
		goto out;
	}
	module = user_module(s, st, idx);
	if (!module)
		return 0;
	file_off = lookup - m->start + m->offset;
	if (st->elfs[idx] && elf_symtab__offset_to_vaddr(st->elfs[idx], file_off, &vaddr) == 0)
		name = elf_symtab__lookup(st->elfs[idx], vaddr, NULL);
	else if (jit_memory(m, st->elfs[idx]))
		name = jit_name(s, st, lookup);
	if (name) {
		frame = add_frame(s, module, addr, name, false, false);
		if (retry)
			s->stats[SYM_STAT_UNKNOWN_USER]--;
	} else {
		/* Never a neighbour's name: the module and offset are the honest answer. */
		if (function_start(s, st->elfs[idx], file_off, &back) && !retry)
			s->stats[SYM_STAT_VDSO_FUNCTION_STARTS]++;
		if (m->kind == PROC_MAP_FILE)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base_name(m->path),
				 file_off - back);
		else if (m->kind == PROC_MAP_SPECIAL)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, m->path,
				 lookup - m->start - back);
		else
			snprintf(buf, sizeof(buf), "[anon]+0x%" PRIx64, lookup);
		frame = add_frame(s, module, addr, buf, false, true);
		if (jit_memory(m, st->elfs[idx]))
			jit = (uint64_t)st->perf_map_gen + 1;
		if (!retry)
			s->stats[SYM_STAT_UNKNOWN_USER]++;
	}
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

/* Empties the caches of st that hold ids of an earlier generation; the memory map stays. */
static int current_ids(struct symbolizer *s, struct proc_state *st)
{
	struct u64map *frames;

	if (st->generation == s->generation)
		return 0;
	frames = u64map__new();
	if (!frames)
		return -ENOMEM;
	u64map__free(st->frames);
	st->frames = frames;
	if (st->maps && st->module_ids)
		memset(st->module_ids, 0, proc_maps__count(st->maps) * sizeof(*st->module_ids));
	st->generation = s->generation;
	return 0;
}

int symbolizer__user_frames(struct symbolizer *s, uint32_t pid, const uint64_t *ips, uint32_t n,
			    uint32_t *ids_out)
{
	struct proc_state *st;
	uint32_t i;
	int err;

	err = begin_request(s);
	if (err)
		return err;
	st = process(s, pid);
	if (!st)
		return -ENOMEM;
	st = map_owner(s, st);
	err = current_ids(s, st);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		ids_out[i] = resolve_user(s, st, ips[i], i == 0);
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

int symbolizer__finish(struct symbolizer *s, bool last)
{
	size_t i, gone = 0;
	const char *name;
	int err = 0, pass_err = 0, e;

	s->ended = true;
	if (!s->nkwait)
		return 0;
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
