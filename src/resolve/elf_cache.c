// SPDX-License-Identifier: MIT
/*
 * Mapped ELF files, one entry per file identity (device and inode) shared
 * by every process that maps it: opened when mapped, kept open within
 * max_open (least recently used let go, opened again when needed), closed
 * once no known process has mapped them a while. A failure to open is
 * cached too, so that a bad file is not tried at every frame.
 *
 * Files are opened through /proc/PID/map_files first: that is the exact file
 * that is mapped, even if it was deleted or replaced on disk, and it works
 * across mount namespaces. /proc/PID/root/PATH is the fallback, accepted only
 * when its device and inode match the mapping, so a different file that now
 * sits at the same path is never used; once the process has exited, PATH
 * itself, with the same check. Files are opened when their mapping is
 * recorded, while the process most likely lives. A file without .symtab gets its
 * symbols from its separate debug file (debug_attach.c) when there is one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "lib/clock.h"
#include "lib/u64map.h"
#include "resolve/elf_symtab.h"
#include "resolve/address_spaces.h"
#include "resolve/mapping_table.h"
#include "resolve/source_lines.h"
#include "lib/proc_maps.h"
#include "resolve/symbolizer.h"
#include "resolve/symbolizer_internal.h"

#define LOG_MODULE "symbols"
#include "lib/log.h"

/*
 * How many mapped files stay open at once: a quarter of the descriptors the
 * process may have, at most MAX_OPEN_ELFS, so that a process that maps
 * thousands of files (20,000 kept 8.7k open) cannot exhaust them; the least
 * recently used is let go and opened again when its symbols are needed.
 */
#define MAX_OPEN_ELFS 256
#define MIN_OPEN_ELFS 16

size_t max_open_files(void)
{
	struct rlimit rl;
	size_t n = MAX_OPEN_ELFS;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < n)
		n = rl.rlim_cur / 4;
	return n < MIN_OPEN_ELFS ? MIN_OPEN_ELFS : n;
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
void note_use(struct symbolizer *s, struct elf_entry *e)
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

struct elf_symtab *elf_for_map(struct symbolizer *s, uint32_t pid, const struct proc_map *m)
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

/*
 * The entry of m's ELF file, about to be read: opened again (through the
 * process, as at first) if it was let go (note_use), and marked as used.
 */
struct elf_entry *use_entry(struct symbolizer *s, uint32_t pid, struct mapping *m)
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
int close_idle_elfs(struct symbolizer *s)
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
