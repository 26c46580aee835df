// SPDX-License-Identifier: MIT
/*
 * Address -> (mapping, function name). See symbolizer.h for the model.
 *
 * Files are opened through /proc/PID/map_files first: that is the exact file
 * that is mapped, even if it was deleted or replaced on disk, and it works
 * across mount namespaces. /proc/PID/root/PATH is the fallback, accepted only
 * when its device and inode match the mapping, so a different file that now
 * sits at the same path is never used.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf_symtab.h"
#include "ksyms.h"
#include "proc_maps.h"
#include "procfs.h"
#include "profile.h"
#include "symbolizer.h"
#include "u64map.h"

#define LOG_MODULE "symbols"
#include "log.h"

struct elf_entry {
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	struct elf_symtab *elf;	      /* NULL: the file could not be opened as ELF */
	struct elf_entry *same_inode; /* chain of the index bucket */
	struct elf_entry *next;	      /* all entries, for freeing */
};

struct proc_state {
	uint32_t pid;
	uint64_t start_time;
	uint64_t exe_inode; /* an exec keeps the PID and start time but not the memory map */
	const char *comm;
	struct proc_maps *maps;	  /* NULL when the process was gone before we could look */
	struct elf_symtab **elfs; /* per maps index; borrowed from the cache */
	uint32_t *mapping_ids;	  /* per maps index; 0 until first used */
	struct u64map *frames;	  /* (address << 1 | leaf) -> frame index */
	bool refreshed;		  /* maps re-read during this interval */
	bool verified;		  /* start time checked during this interval */
};

struct symbolizer {
	struct profile *prof;
	struct u64map *procs;	  /* pid -> struct proc_state * */
	struct u64map *elf_index; /* inode -> struct elf_entry * chain */
	struct elf_entry *elf_list;
	struct ksyms *ksyms;
	bool ksyms_tried;
	uint32_t kernel_mapping;
	struct u64map *kframes[2]; /* [leaf] address -> frame index */
	struct symbolizer_stats stats;
};

int symbolizer__new(struct profile *prof, struct symbolizer **out)
{
	struct symbolizer *s;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->prof = prof;
	s->procs = u64map__new();
	s->elf_index = u64map__new();
	s->kframes[0] = u64map__new();
	s->kframes[1] = u64map__new();
	if (!s->procs || !s->elf_index || !s->kframes[0] || !s->kframes[1]) {
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
	free(st->mapping_ids);
	u64map__free(st->frames);
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
	ksyms__free(s->ksyms);
	u64map__free(s->kframes[0]);
	u64map__free(s->kframes[1]);
	free(s);
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
	fd = open_mapped_file(pid, m);
	if (fd >= 0) {
		err = elf_symtab__open_fd(fd, m->path, &e->elf);
		if (err)
			pr_debug("%s: not usable as ELF: %s", m->path, strerror(-err));
	} else {
		err = fd;
		pr_debug("%s (PID %u): cannot open: %s", m->path, pid, strerror(-err));
	}
	if (e->elf)
		s->stats.elf_files++;
	else
		s->stats.elf_errors++;
	/* Failures are cached too: one bad file is not retried for every frame. */
	e->next = s->elf_list;
	s->elf_list = e;
	e->same_inode = head;
	u64map__set(s->elf_index, m->inode, (uintptr_t)e);
	return e->elf;
}

/* Reads the memory map and opens the ELF files of its executable mappings. */
static int snapshot_maps(struct symbolizer *s, struct proc_state *st)
{
	struct proc_maps *maps = NULL;
	size_t i, n;
	int err;

	err = proc_maps__read((int)st->pid, &maps);
	if (err)
		return err;
	n = proc_maps__count(maps);
	free(st->elfs);
	free(st->mapping_ids);
	st->elfs = calloc(n ? n : 1, sizeof(*st->elfs));
	st->mapping_ids = calloc(n ? n : 1, sizeof(*st->mapping_ids));
	if (!st->elfs || !st->mapping_ids) {
		proc_maps__free(maps);
		return -ENOMEM;
	}
	proc_maps__free(st->maps);
	st->maps = maps;
	for (i = 0; i < n; i++) {
		const struct proc_map *m = proc_maps__get(maps, i);

		if (m->kind == PROC_MAP_FILE && (m->perms & PROC_MAP_EXEC))
			st->elfs[i] = elf_for_map(s, st->pid, m);
	}
	return 0;
}

static uint64_t exe_inode(uint32_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
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
	st->frames = u64map__new();
	if (!st->frames || u64map__set(s->procs, pid, (uintptr_t)st)) {
		proc_state__free(st);
		return NULL;
	}
	s->stats.processes++;
	procfs__start_time(pid, &st->start_time);
	st->exe_inode = pid ? exe_inode(pid) : 0;
	if (pid == 0)
		st->comm = profile__intern(s->prof, "swapper");
	else if (procfs__comm(pid, comm, sizeof(comm)) == 0)
		st->comm = profile__intern(s->prof, comm);
	err = pid ? snapshot_maps(s, st) : -ESRCH;
	if (err && pid) {
		s->stats.processes_gone++;
		pr_debug("PID %u: memory map not read: %s", pid, strerror(-err));
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

void symbolizer__new_interval(struct symbolizer *s)
{
	uint64_t key, val;
	size_t pos = 0;

	while (u64map__next(s->procs, &pos, &key, &val)) {
		struct proc_state *st = (struct proc_state *)(uintptr_t)val;

		st->refreshed = false;
		st->verified = false;
	}
}

static const char *base_name(const char *path)
{
	const char *p = strrchr(path, '/');

	return p ? p + 1 : path;
}

static uint32_t add_frame(struct symbolizer *s, uint32_t mapping, uint64_t addr, const char *name,
			  bool kernel, bool unknown)
{
	struct profile_frame f = {
		.mapping = mapping,
		.address = addr,
		.kernel = kernel,
		.unknown = unknown,
	};

	f.name = profile__intern(s->prof, name);
	f.system_name = f.name;
	if (!f.name)
		return 0;
	return profile__add_frame(s->prof, &f);
}

static uint32_t user_mapping(struct symbolizer *s, struct proc_state *st, size_t idx)
{
	const struct proc_map *m = proc_maps__get(st->maps, idx);
	struct profile_mapping pm = {
		.start = m->start,
		.limit = m->end,
		.offset = m->offset,
	};
	const char *bid = st->elfs[idx] ? elf_symtab__build_id(st->elfs[idx]) : NULL;

	if (st->mapping_ids[idx])
		return st->mapping_ids[idx];
	pm.path = profile__intern(s->prof, m->path ? m->path : "");
	pm.build_id = profile__intern(s->prof, bid ? bid : "");
	st->mapping_ids[idx] = profile__add_mapping(s->prof, &pm);
	return st->mapping_ids[idx];
}

static const struct proc_map *find_map(struct proc_state *st, uint64_t addr, size_t *idx)
{
	return st->maps ? proc_maps__find_index(st->maps, addr, idx) : NULL;
}

static uint32_t resolve_user(struct symbolizer *s, struct proc_state *st, uint64_t addr, bool leaf)
{
	uint64_t key = addr << 1 | leaf, lookup = leaf ? addr : addr - 1, v, file_off, vaddr;
	const struct proc_map *m;
	const char *name = NULL;
	char buf[512];
	uint32_t frame, mapping;
	size_t idx = 0;

	if (u64map__get(st->frames, key, &v))
		return (uint32_t)v;
	m = find_map(st, lookup, &idx);
	/* Code mapped after the snapshot (dlopen): look once more per interval. */
	if (!m && !st->refreshed && st->pid) {
		st->refreshed = true;
		if (snapshot_maps(s, st) == 0)
			m = find_map(st, lookup, &idx);
	}
	if (!m) {
		frame = add_frame(s, 0, addr, "[unknown]", false, true);
		s->stats.unknown_user++;
		goto out;
	}
	mapping = user_mapping(s, st, idx);
	file_off = lookup - m->start + m->offset;
	if (st->elfs[idx] && elf_symtab__offset_to_vaddr(st->elfs[idx], file_off, &vaddr) == 0)
		name = elf_symtab__lookup(st->elfs[idx], vaddr, NULL);
	if (name) {
		frame = add_frame(s, mapping, addr, name, false, false);
	} else {
		/* Never a neighbour's name: the module and offset are the honest answer. */
		if (m->kind == PROC_MAP_FILE)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base_name(m->path), file_off);
		else if (m->kind == PROC_MAP_SPECIAL)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, m->path, lookup - m->start);
		else
			snprintf(buf, sizeof(buf), "[anon]+0x%" PRIx64, lookup);
		frame = add_frame(s, mapping, addr, buf, false, true);
		s->stats.unknown_user++;
	}
out:
	s->stats.user_frames++;
	if (frame)
		u64map__set(st->frames, key, frame);
	return frame;
}

int symbolizer__user_frames(struct symbolizer *s, uint32_t pid, const uint64_t *ips, uint32_t n,
			    uint32_t *frames_out)
{
	struct proc_state *st = process(s, pid);
	uint32_t i;

	if (!st)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		frames_out[i] = resolve_user(s, st, ips[i], i == 0);
		if (!frames_out[i])
			return -ENOMEM;
	}
	return 0;
}

static void load_ksyms(struct symbolizer *s)
{
	struct profile_mapping pm = {.kernel = true, .limit = UINT64_MAX};
	int err;

	s->ksyms_tried = true;
	err = ksyms__load(NULL, &s->ksyms);
	if (err)
		pr_warn("cannot read /proc/kallsyms (%s): kernel frames are shown as [kernel]",
			strerror(-err));
	else if (ksyms__hidden(s->ksyms))
		pr_warn("kernel addresses are hidden (kernel.kptr_restrict): kernel frames are "
			"shown as [kernel]");
	pm.path = profile__intern(s->prof, "[kernel.kallsyms]");
	pm.build_id = profile__intern(s->prof, "");
	s->kernel_mapping = profile__add_mapping(s->prof, &pm);
}

static uint32_t resolve_kernel(struct symbolizer *s, uint64_t addr, bool leaf)
{
	const struct ksym *sym = NULL;
	uint64_t v;
	uint32_t frame;

	if (u64map__get(s->kframes[leaf], addr, &v))
		return (uint32_t)v;
	if (s->ksyms && !ksyms__hidden(s->ksyms))
		sym = ksyms__lookup(s->ksyms, leaf ? addr : addr - 1);
	if (sym) {
		frame = add_frame(s, s->kernel_mapping, addr, sym->name, true, false);
	} else {
		frame = add_frame(s, s->kernel_mapping, addr, "[kernel]", true, true);
		s->stats.unknown_kernel++;
	}
	s->stats.kernel_frames++;
	if (frame)
		u64map__set(s->kframes[leaf], addr, frame);
	return frame;
}

int symbolizer__kernel_frames(struct symbolizer *s, const uint64_t *ips, uint32_t n,
			      uint32_t *frames_out)
{
	uint32_t i;

	if (!s->ksyms_tried)
		load_ksyms(s);
	for (i = 0; i < n; i++) {
		frames_out[i] = resolve_kernel(s, ips[i], i == 0);
		if (!frames_out[i])
			return -ENOMEM;
	}
	return 0;
}

uint32_t symbolizer__placeholder(struct symbolizer *s, const char *what, int kernel)
{
	return add_frame(s, 0, 0, what, kernel != 0, true);
}

const struct symbolizer_stats *symbolizer__stats(const struct symbolizer *s)
{
	return &s->stats;
}
