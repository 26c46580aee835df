// SPDX-License-Identifier: MIT
/*
 * Separate debug file lookup; see debug_file.h for the search order.
 *
 * Every candidate is opened by lib/proc_file.h's rule, so a container's
 * symlinks resolve inside the container, FIFOs are refused, and a file the
 * process's user could not read is not read for it; and is verified before
 * it is used: the name alone says nothing about which build a file came
 * from. Its size is checked before its CRC is taken, and the CRC stops when
 * the run's time for loading is over: a debuglink may name a sparse terabyte.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h>

#define LOG_MODULE "debugfile"
#include "lib/load_budget.h"
#include "lib/log.h"
#include "lib/proc_file.h"
#include "lib/stat_cached.h"
#include "resolve/debug_file.h"
#include "resolve/elf_symtab.h"

#define PATH_SIZE 4096
/*
 * The largest debug file taken. The biggest real ones (a browser's or a
 * compiler's, with full DWARF) are a few GiB; past that a file is not a
 * plausible debug file, and its CRC alone would cost seconds.
 */
#define MAX_BYTES (4ull << 30)
/* CRC this much between looks at the budget: some milliseconds. */
#define CRC_CHUNK (1u << 20)

enum check {
	CHECK_BUILD_ID,
	CHECK_CRC,
};

/* CRC32 (as in .gnu_debuglink) of a whole file; -ECANCELED if the budget ends first. */
static int file_crc32(int fd, struct load_budget *budget, uint32_t *crc)
{
	size_t size = CRC_CHUNK;
	unsigned char *buf = malloc(size);
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (load_budget__over(budget)) {
			err = -ECANCELED;
			break;
		}
		n = pread(fd, buf, size, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (!n)
			break;
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	free(buf);
	if (!err)
		*crc = (uint32_t)c;
	return err;
}

/* Opens path in root_pid's root by the rule, within the size cap; counts a refusal. */
static int open_candidate(struct debug_file_search *ds, uint32_t root_pid, const char *path,
			  const char *display)
{
	enum proc_file_refusal why;
	struct stat st;
	int fd;

	fd = proc_file__open(root_pid, path, PROC_FILE_OWNED, &why);
	if (fd >= 0 && (fstat(fd, &st) || (uint64_t)st.st_size > MAX_BYTES)) {
		close(fd);
		fd = -EFBIG;
		why = PROC_FILE_TOO_BIG;
	}
	if (why) {
		ds->refused[why]++;
		pr_debug("%s: refused: %s", display, proc_file__refusal_name(why));
	}
	return fd;
}

static int check_crc(struct debug_file_search *ds, int fd, const char *display,
		     const struct elf_symtab *e)
{
	uint32_t want_crc = 0, crc;
	int err;

	elf_symtab__debuglink(e, &want_crc);
	err = file_crc32(fd, ds->budget, &crc);
	if (err == -ECANCELED) {
		ds->crc_stopped++;
		pr_debug("%s: CRC not finished: the run is ending", display);
		return err;
	}
	if (err || crc != want_crc) {
		pr_debug("%s: CRC %08x, the debuglink wants %08x: another build", display,
			 err ? 0 : crc, want_crc);
		return err ? err : -ESTALE;
	}
	return 0;
}

/* Opens path in root_pid's root and keeps it if it is e's debug file. */
static int try_candidate(struct debug_file_search *ds, uint32_t root_pid, const char *path,
			 const struct elf_symtab *e, enum check check, struct elf_symtab **out)
{
	char display[PATH_SIZE + 32];
	struct elf_symtab *dbg = NULL;
	const char *want_id = elf_symtab__build_id(e), *got_id;
	int fd, err;

	if (root_pid)
		snprintf(display, sizeof(display), "/proc/%u/root%s", root_pid, path);
	else
		snprintf(display, sizeof(display), "%s", path);
	fd = open_candidate(ds, root_pid, path, display);
	if (fd < 0)
		return fd;
	if (check == CHECK_CRC) {
		err = check_crc(ds, fd, display, e);
		if (err) {
			close(fd);
			return err;
		}
	}
	err = elf_symtab__open_fd(fd, display, &dbg);
	if (err)
		return err;
	got_id = elf_symtab__build_id(dbg);
	if ((check == CHECK_BUILD_ID || (want_id && got_id)) &&
	    (!want_id || !got_id || strcmp(want_id, got_id))) {
		pr_debug("%s: build ID %s, not %s: another build", display,
			 got_id ? got_id : "none", want_id ? want_id : "none");
		elf_symtab__free(dbg);
		return -ESTALE;
	}
	if (!elf_symtab__has_symtab(dbg)) {
		pr_debug("%s: no symbol table", display);
		elf_symtab__free(dbg);
		return -ENOENT;
	}
	*out = dbg;
	return 0;
}

/* Whether process pid sees the same root directory as we do. */
static bool same_root(uint32_t pid)
{
	uint64_t maj, min, ino;
	struct stat ours;
	char path[64];

	if (!pid)
		return true;
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	/* Their root may be on FUSE: its daemon is not asked (lib/stat_cached.h). */
	if (stat("/", &ours) || stat_cached(path, &maj, &min, &ino))
		return true;
	return major(ours.st_dev) == maj && minor(ours.st_dev) == min && ours.st_ino == ino;
}

int debug_file__find(struct debug_file_search *ds, uint32_t pid, const char *path,
		     const struct elf_symtab *e, struct elf_symtab **out)
{
	const char *debug_dir = ds->dir;
	const char *id = elf_symtab__build_id(e), *link = elf_symtab__debuglink(e, NULL);
	uint32_t roots[2] = {0, pid};
	char cand[PATH_SIZE], dir[PATH_SIZE];
	const char *slash;
	int nroots, i, n;

	*out = NULL;
	nroots = same_root(pid) ? 1 : 2;
	if (debug_dir && !*debug_dir)
		debug_dir = NULL;
	if (id && strlen(id) > 2 && debug_dir)
		for (i = 0; i < nroots; i++) {
			n = snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s.debug", debug_dir,
				     id, id + 2);
			if (n < (int)sizeof(cand) &&
			    !try_candidate(ds, roots[i], cand, e, CHECK_BUILD_ID, out))
				return 0;
		}
	if (!link || !path || path[0] != '/')
		return -ENOENT;
	slash = strrchr(path, '/');
	/* The directory without its trailing slash: "" for a file in "/". */
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	n = snprintf(cand, sizeof(cand), "%s/%s", dir, link);
	if (n < (int)sizeof(cand) && !try_candidate(ds, pid, cand, e, CHECK_CRC, out))
		return 0;
	n = snprintf(cand, sizeof(cand), "%s/.debug/%s", dir, link);
	if (n < (int)sizeof(cand) && !try_candidate(ds, pid, cand, e, CHECK_CRC, out))
		return 0;
	if (debug_dir)
		for (i = 0; i < nroots; i++) {
			n = snprintf(cand, sizeof(cand), "%s%s/%s", debug_dir, dir, link);
			if (n < (int)sizeof(cand) &&
			    !try_candidate(ds, roots[i], cand, e, CHECK_CRC, out))
				return 0;
		}
	return -ENOENT;
}

/* MODULES/vdso/: its build-ID link, then the images by name. */
static int find_in_modules(struct debug_file_search *ds, const char *modules, const char *id,
			   const struct elf_symtab *e, struct elf_symtab **out)
{
	static const char *const names[] = {"vdso64.so", "vdso.so", "vdso32.so", "vdsox32.so"};
	char cand[PATH_SIZE];
	size_t i;
	int n;

	n = snprintf(cand, sizeof(cand), "%s/vdso/.build-id/%.2s/%s.debug", modules, id, id + 2);
	if (n < (int)sizeof(cand) && !try_candidate(ds, 0, cand, e, CHECK_BUILD_ID, out))
		return 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = snprintf(cand, sizeof(cand), "%s/vdso/%s", modules, names[i]);
		if (n < (int)sizeof(cand) && !try_candidate(ds, 0, cand, e, CHECK_BUILD_ID, out))
			return 0;
	}
	return -ENOENT;
}

int debug_file__find_vdso(struct debug_file_search *ds, const char *release,
			  const struct elf_symtab *e, struct elf_symtab **out)
{
	const char *debug_dir = ds->dir;
	const char *id = elf_symtab__build_id(e);
	char modules[PATH_SIZE];
	int n;

	*out = NULL;
	if (!id || strlen(id) <= 2)
		return -ENOENT;
	if (debug_dir && !*debug_dir)
		debug_dir = NULL;
	if (debug_dir && !debug_file__find(ds, 0, NULL, e, out))
		return 0;
	if (!release || !*release || strchr(release, '/'))
		return -ENOENT;
	if (debug_dir) {
		n = snprintf(modules, sizeof(modules), "%s/lib/modules/%s", debug_dir, release);
		if (n < (int)sizeof(modules) && !find_in_modules(ds, modules, id, e, out))
			return 0;
	}
	snprintf(modules, sizeof(modules), "/lib/modules/%s", release);
	return find_in_modules(ds, modules, id, e, out);
}
