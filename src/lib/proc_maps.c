// SPDX-License-Identifier: MIT
/*
 * /proc/PID/maps parser. The text comes from a process we do not control and
 * may change under us, so parsing never trusts it: a line that does not look
 * like a mapping is counted and skipped, and the result is sorted and freed
 * of overlaps so that lookups can binary-search.
 *
 * Line format (fs/proc/task_mmu.c, show_vma_header_prefix + the name):
 *   start-end perms offset major:minor inode [padding] [path]
 * The path is everything after the padding up to the newline, so it may hold
 * spaces; the kernel escapes a newline in a file name as "\012".
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

#define LOG_MODULE "maps"
#include "lib/fuse_file.h"
#include "lib/log.h"
#include "lib/proc_file.h"
#include "lib/procfs.h"
#include "lib/stat_cached.h"
#include "lib/textscan.h"
#include "lib/proc_maps.h"

#define DELETED_SUFFIX	   " (deleted)"
#define DELETED_SUFFIX_LEN (sizeof(DELETED_SUFFIX) - 1)

struct proc_maps {
	struct proc_map *maps;
	size_t count;
	size_t bad_lines;
	/* All paths, NUL-terminated; sized from the input so it never moves. */
	char *paths;
};

static bool expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

static bool skip_blanks(const char **p, const char *end)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == *p)
		return false;
	*p = s;
	return true;
}

static bool parse_perms(const char **p, const char *end, unsigned int *perms)
{
	const char *s = *p;
	unsigned int v = 0;

	if (end - s < 4)
		return false;
	if (s[0] == 'r')
		v |= PROC_MAP_READ;
	else if (s[0] != '-')
		return false;
	if (s[1] == 'w')
		v |= PROC_MAP_WRITE;
	else if (s[1] != '-')
		return false;
	if (s[2] == 'x')
		v |= PROC_MAP_EXEC;
	else if (s[2] != '-')
		return false;
	if (s[3] == 'p')
		v |= PROC_MAP_PRIVATE;
	else if (s[3] != 's')
		return false;
	*p = s + 4;
	*perms = v;
	return true;
}

/*
 * Parses one line [s, end) (no newline). The path, if any, is copied to
 * *arena, which advances. False for a malformed line.
 */
static bool parse_line(const char *s, const char *end, struct proc_map *m, char **arena)
{
	uint64_t major, minor;
	size_t len;

	memset(m, 0, sizeof(*m));
	/* A carriage return is not something the kernel writes; tolerate one from fixtures. */
	if (end > s && end[-1] == '\r')
		end--;
	if (!textscan__hex(&s, end, &m->start) || !expect(&s, end, '-') ||
	    !textscan__hex(&s, end, &m->end) || !skip_blanks(&s, end) ||
	    !parse_perms(&s, end, &m->perms) || !skip_blanks(&s, end) ||
	    !textscan__hex(&s, end, &m->offset) || !skip_blanks(&s, end) ||
	    !textscan__hex(&s, end, &major) || !expect(&s, end, ':') ||
	    !textscan__hex(&s, end, &minor) || !skip_blanks(&s, end) ||
	    !textscan__dec(&s, end, &m->inode))
		return false;
	if (m->start >= m->end || major > UINT32_MAX || minor > UINT32_MAX)
		return false;
	m->dev_major = major;
	m->dev_minor = minor;

	/* Anonymous mappings end right after the inode, with or without padding. */
	if (s < end && !skip_blanks(&s, end))
		return false;
	len = end - s;
	if (!len) {
		m->kind = PROC_MAP_ANON;
		return true;
	}
	if (len > DELETED_SUFFIX_LEN &&
	    !memcmp(end - DELETED_SUFFIX_LEN, DELETED_SUFFIX, DELETED_SUFFIX_LEN)) {
		m->deleted = true;
		len -= DELETED_SUFFIX_LEN;
	}
	/*
	 * Only an absolute path names a file we can open; "[vdso]", "[anon:x]",
	 * "anon_inode:[perf_event]" and the like are kernel-made names.
	 */
	m->kind = s[0] == '/' ? PROC_MAP_FILE : PROC_MAP_SPECIAL;
	memcpy(*arena, s, len);
	(*arena)[len] = '\0';
	m->path = *arena;
	*arena += len + 1;
	return true;
}

void proc_map__set_name(struct proc_map *m, char *name)
{
	size_t len = strlen(name);

	m->deleted = false;
	m->path = NULL;
	m->kind = PROC_MAP_ANON;
	if (!len || !strcmp(name, "//anon"))
		return;
	if (len > DELETED_SUFFIX_LEN && !strcmp(name + len - DELETED_SUFFIX_LEN, DELETED_SUFFIX)) {
		m->deleted = true;
		name[len - DELETED_SUFFIX_LEN] = '\0';
	}
	m->kind = name[0] == '/' ? PROC_MAP_FILE : PROC_MAP_SPECIAL;
	m->path = name;
}

static int cmp_start(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

int proc_maps__parse(const char *text, size_t len, struct proc_maps **out)
{
	const char *p, *end;
	struct proc_maps *m = NULL;
	size_t lines = 0, cap, i, kept;
	char *arena;
	int err = 0;

	*out = NULL;
	if (!text && len)
		return -EINVAL;
	/* NULL with len 0 is an empty input; pointer arithmetic on NULL is not allowed. */
	p = text ? text : "";
	end = p + len;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	/* One entry per line at most; count them so that nothing is reallocated. */
	for (i = 0; i < len; i++)
		lines += p[i] == '\n';
	cap = lines + 1;
	m->maps = calloc(cap, sizeof(*m->maps));
	/* Paths are substrings of lines, each followed by a NUL instead of a newline. */
	m->paths = malloc(len + 1);
	if (!m->maps || !m->paths) {
		err = -ENOMEM;
		goto cleanup;
	}
	arena = m->paths;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *eol = nl ? nl : end;

		if (eol > p) {
			if (parse_line(p, eol, &m->maps[m->count], &arena))
				m->count++;
			else
				m->bad_lines++;
		}
		p = nl ? nl + 1 : end;
	}

	/* The kernel writes maps sorted; sort anyway so that find() can rely on it. */
	qsort(m->maps, m->count, sizeof(*m->maps), cmp_start);
	/* Overlaps cannot come from the kernel; drop them so a lookup has one answer. */
	for (i = 0, kept = 0; i < m->count; i++) {
		if (kept && m->maps[i].start < m->maps[kept - 1].end) {
			m->bad_lines++;
			continue;
		}
		m->maps[kept++] = m->maps[i];
	}
	m->count = kept;
	if (m->bad_lines)
		pr_debug("skipped %zu malformed maps line(s)", m->bad_lines);
	*out = m;
	m = NULL;
cleanup:
	proc_maps__free(m);
	return err;
}

/*
 * -ESRCH covers every way of finding no process: no /proc entry, an exit
 * during the read, and an empty maps file. The latter is a zombie (its mm is
 * gone) or a kernel thread (it never had one); either way there is nothing
 * in user space to symbolize.
 */
int proc_maps__read(int pid, struct proc_maps **out)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	int err;

	*out = NULL;
	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	/* Maps of a large process run to megabytes; procfs reads until EOF. */
	err = procfs__read_all(path, &buf, &len);
	if (err) {
		if (err != -ESRCH)
			pr_debug("read %s: %s", path, strerror(-err));
		return err;
	}
	if (!len) {
		err = -ESRCH;
		goto cleanup;
	}
	err = proc_maps__parse(buf, len, out);
cleanup:
	free(buf);
	return err;
}

void proc_maps__free(struct proc_maps *m)
{
	if (!m)
		return;
	free(m->maps);
	free(m->paths);
	free(m);
}

size_t proc_maps__count(const struct proc_maps *m)
{
	return m ? m->count : 0;
}

const struct proc_map *proc_maps__get(const struct proc_maps *m, size_t i)
{
	return m && i < m->count ? &m->maps[i] : NULL;
}

const struct proc_map *proc_maps__find_index(const struct proc_maps *m, uint64_t addr, size_t *idx)
{
	size_t lo = 0, hi;

	if (!m)
		return NULL;
	/* First mapping whose start is above addr; the one before may contain it. */
	hi = m->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->maps[lo - 1].end)
		return NULL;
	if (idx)
		*idx = lo - 1;
	return &m->maps[lo - 1];
}

const struct proc_map *proc_maps__find(const struct proc_maps *m, uint64_t addr)
{
	return proc_maps__find_index(m, addr, NULL);
}

size_t proc_maps__bad_lines(const struct proc_maps *m)
{
	return m ? m->bad_lines : 0;
}

/* fd, or -ESTALE when it is not the file mapped by m (device and inode). */
static int if_mapped(int fd, const struct proc_map *m)
{
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || st.st_ino != m->inode || major(st.st_dev) != m->dev_major ||
	    minor(st.st_dev) != m->dev_minor) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * A process that has exited has no root to go through, also while it is a
 * zombie that /proc still lists (and while it exits, its files closed).
 */
static bool root_reachable(uint32_t pid)
{
	uint64_t maj, min, ino;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/root/", pid);
	/* Their root may be on FUSE: its daemon is not asked (lib/stat_cached.h). */
	return stat_cached(path, &maj, &min, &ino) == 0;
}

/* Async-signal-safe: also run by the child that reads a FUSE file (lib/fuse_file.h). */
static int open_map_file(const void *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	return fd < 0 ? -errno : fd;
}

/*
 * A file on FUSE: a copy made by a child (lib/fuse_file.h) of the very file
 * mapped, through map_files alone (a walk of the path would ask the server
 * too). As below, no identity check: map_files is the mapped file, and an
 * overlay's mapping shows the overlay's device, its file the layer's.
 */
static int open_copy(const char *path, uint64_t mount, const struct proc_map *m)
{
	struct stat st;
	int fd = fuse_file__copy(mount, open_map_file, path, &st);

	if (fd < 0)
		pr_debug("%s: on FUSE, not read: %s", m->path, strerror(-fd));
	return fd;
}

/*
 * /proc/PID/map_files first: that is the exact file that is mapped, even if
 * it was deleted or replaced on disk, and it works across mount namespaces.
 * /proc/PID/root/PATH is the fallback, accepted only when its device and
 * inode match the mapping, so a different file that now sits at the same
 * path is never used. Last, for a process that has exited (no
 * /proc/PID/root to go through), the path as cprof sees it, if it is still
 * the same file. A file on FUSE is read by a child instead.
 */
int proc_map__open(uint32_t pid, const struct proc_map *m)
{
	char path[128];
	struct stat st;
	uint64_t mount;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	if (fuse_file__dev_needs_child(pid, m->dev_major, m->dev_minor, &mount))
		return open_copy(path, mount, m);
	/* A mapped device or FIFO is not waited on, nor read. */
	fd = open_map_file(path);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		return -EINVAL;
	}
	if (fd >= 0)
		return fd;
	if (m->deleted)
		return -ENOENT;
	/* The path is the process's: opened by the rule for such files, in its root. */
	fd = if_mapped(proc_file__open(pid, m->path, 0, NULL), m);
	if ((fd == -ENOENT || fd == -ESRCH) && !root_reachable(pid))
		fd = if_mapped(proc_file__open(0, m->path, 0, NULL), m);
	if (fd == -ESTALE)
		pr_debug("%s: not the file mapped by PID %u (identity differs)", m->path, pid);
	return fd;
}
