// SPDX-License-Identifier: MIT
/*
 * The vDSO: one image per kernel and ABI, so cprof reads its own once and
 * names a process's vDSO from it when it is the same image, byte for byte.
 * The kernel's debug file of it names it when installed; its code that no
 * symbol names is shown at its function's start, from the image's .eh_frame.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "resolve/debug_file.h"
#include "resolve/elf_symtab.h"
#include "lib/proc_maps.h"
#include "resolve/symbolizer.h"
#include "resolve/symbolizer_internal.h"

#define LOG_MODULE "symbols"
#include "lib/log.h"

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
struct elf_symtab *vdso_for_map(struct symbolizer *s, uint32_t pid, const struct proc_map *m)
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
