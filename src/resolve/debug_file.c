// SPDX-License-Identifier: MIT
/*
 * Separate debug file lookup; see debug_file.h for the search order.
 *
 * Every candidate is opened with procfs__open_in_root, so a container's
 * symlinks resolve inside the container and FIFOs are refused, and is
 * verified before it is used: the name alone says nothing about which build
 * a file came from.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define LOG_MODULE "debugfile"
#include "lib/log.h"
#include "lib/procfs.h"
#include "resolve/debug_file.h"
#include "resolve/elf_symtab.h"

#define PATH_SIZE 4096

enum check {
	CHECK_BUILD_ID,
	CHECK_CRC,
};

/* CRC32 (as in .gnu_debuglink) of a whole file, read from offset 0 to its end. */
static int file_crc32(int fd, uint32_t *crc)
{
	size_t size = 1 << 18;
	unsigned char *buf = malloc(size);
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
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

/* Opens path in root_pid's root and keeps it if it is e's debug file. */
static int try_candidate(uint32_t root_pid, const char *path, const struct elf_symtab *e,
			 enum check check, struct elf_symtab **out)
{
	char display[PATH_SIZE + 32];
	struct elf_symtab *dbg = NULL;
	const char *want_id = elf_symtab__build_id(e), *got_id;
	uint32_t want_crc = 0, crc;
	int fd, err;

	fd = procfs__open_in_root(root_pid, path);
	if (fd < 0)
		return fd;
	if (root_pid)
		snprintf(display, sizeof(display), "/proc/%u/root%s", root_pid, path);
	else
		snprintf(display, sizeof(display), "%s", path);
	if (check == CHECK_CRC) {
		elf_symtab__debuglink(e, &want_crc);
		err = file_crc32(fd, &crc);
		if (err || crc != want_crc) {
			pr_debug("%s: CRC %08x, the debuglink wants %08x: another build", display,
				 err ? 0 : crc, want_crc);
			close(fd);
			return err ? err : -ESTALE;
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
	struct stat ours, theirs;
	char path[64];

	if (!pid)
		return true;
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	if (stat("/", &ours) || stat(path, &theirs))
		return true;
	return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

int debug_file__find(const char *debug_dir, uint32_t pid, const char *path,
		     const struct elf_symtab *e, struct elf_symtab **out)
{
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
			    !try_candidate(roots[i], cand, e, CHECK_BUILD_ID, out))
				return 0;
		}
	if (!link || !path || path[0] != '/')
		return -ENOENT;
	slash = strrchr(path, '/');
	/* The directory without its trailing slash: "" for a file in "/". */
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	n = snprintf(cand, sizeof(cand), "%s/%s", dir, link);
	if (n < (int)sizeof(cand) && !try_candidate(pid, cand, e, CHECK_CRC, out))
		return 0;
	n = snprintf(cand, sizeof(cand), "%s/.debug/%s", dir, link);
	if (n < (int)sizeof(cand) && !try_candidate(pid, cand, e, CHECK_CRC, out))
		return 0;
	if (debug_dir)
		for (i = 0; i < nroots; i++) {
			n = snprintf(cand, sizeof(cand), "%s%s/%s", debug_dir, dir, link);
			if (n < (int)sizeof(cand) &&
			    !try_candidate(roots[i], cand, e, CHECK_CRC, out))
				return 0;
		}
	return -ENOENT;
}

/* MODULES/vdso/: its build-ID link, then the images by name. */
static int find_in_modules(const char *modules, const char *id, const struct elf_symtab *e,
			   struct elf_symtab **out)
{
	static const char *const names[] = {"vdso64.so", "vdso.so", "vdso32.so", "vdsox32.so"};
	char cand[PATH_SIZE];
	size_t i;
	int n;

	n = snprintf(cand, sizeof(cand), "%s/vdso/.build-id/%.2s/%s.debug", modules, id, id + 2);
	if (n < (int)sizeof(cand) && !try_candidate(0, cand, e, CHECK_BUILD_ID, out))
		return 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = snprintf(cand, sizeof(cand), "%s/vdso/%s", modules, names[i]);
		if (n < (int)sizeof(cand) && !try_candidate(0, cand, e, CHECK_BUILD_ID, out))
			return 0;
	}
	return -ENOENT;
}

int debug_file__find_vdso(const char *debug_dir, const char *release, const struct elf_symtab *e,
			  struct elf_symtab **out)
{
	const char *id = elf_symtab__build_id(e);
	char modules[PATH_SIZE];
	int n;

	*out = NULL;
	if (!id || strlen(id) <= 2)
		return -ENOENT;
	if (debug_dir && !*debug_dir)
		debug_dir = NULL;
	if (debug_dir && !debug_file__find(debug_dir, 0, NULL, e, out))
		return 0;
	if (!release || !*release || strchr(release, '/'))
		return -ENOENT;
	if (debug_dir) {
		n = snprintf(modules, sizeof(modules), "%s/lib/modules/%s", debug_dir, release);
		if (n < (int)sizeof(modules) && !find_in_modules(modules, id, e, out))
			return 0;
	}
	snprintf(modules, sizeof(modules), "/lib/modules/%s", release);
	return find_in_modules(modules, id, e, out);
}
