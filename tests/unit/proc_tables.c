// SPDX-License-Identifier: MIT
/* A live process's files and their unwind tables, for tests; see proc_tables.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc_tables.h"
#include "test.h"
#include "unwind/elf_cfi.h"
#include "unwind/exec_bias.h"

struct proc_file *proc_tables__file(struct proc_tables *p, uint64_t pc)
{
	const struct proc_map *m = proc_maps__find(p->maps, pc);
	size_t i;

	if (!m)
		return NULL;
	for (i = 0; i < p->nfiles; i++)
		if (p->files[i].map == m)
			return &p->files[i];
	return NULL;
}

int proc_tables__find(void *arg, uint64_t pc, struct walk_code *out)
{
	struct proc_file *f = proc_tables__file(arg, pc);

	if (!f)
		return -ENOENT;
	*out = (struct walk_code){f->table, f->bias};
	return 0;
}

/*
 * The process's vDSO as a file, read from its memory, as cprof makes it from
 * its own (region_feed.c): a process that polls the clock is often sampled
 * there.
 */
static int vdso_file(pid_t pid, const struct proc_map *m)
{
	size_t size = m->end - m->start;
	char path[64], *image = malloc(size);
	int mem, fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem = open(path, O_RDONLY);
	fd = memfd_create("vdso", MFD_CLOEXEC);
	CHECK(image && mem >= 0 && fd >= 0);
	CHECK(pread(mem, image, size, (off_t)m->start) == (ssize_t)size);
	CHECK(write(fd, image, size) == (ssize_t)size);
	close(mem);
	free(image);
	return fd;
}

static void load_file(struct proc_tables *p, pid_t pid, const struct proc_map *m)
{
	struct proc_file *f = &p->files[p->nfiles];
	struct unwind_table_stats st;
	struct unwind_sources src;
	struct elf_cfi cfi;
	char path[64];

	if (p->nfiles == PROC_TABLES_MAX_FILES)
		return;
	f->map = m;
	f->fd = m->kind == PROC_MAP_FILE ? open(m->path, O_RDONLY) : vdso_file(pid, m);
	CHECK(f->fd >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->fd);
	CHECK_INT(elf_symtab__open(m->kind == PROC_MAP_FILE ? m->path : path, &f->sym), ==, 0);
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	CHECK_INT(exec_bias(f->elf, m, &f->bias), ==, 0);
	CHECK_INT(elf_cfi__read(f->elf, &cfi), ==, 0);
	elf_cfi__sources(&cfi, NULL, &src);
	CHECK_INT(unwind_table__build(&src, p->rules, &f->table, &st), ==, 0);
	p->nfiles++;
}

void proc_tables__load(struct proc_tables *p, pid_t pid)
{
	const struct proc_map *m;
	size_t i;

	elf_version(EV_CURRENT);
	CHECK_INT(proc_maps__read(pid, &p->maps), ==, 0);
	CHECK_INT(unwind_rules__new(&p->rules), ==, 0);
	for (i = 0; i < proc_maps__count(p->maps); i++) {
		m = proc_maps__get(p->maps, i);
		if ((m->perms & PROC_MAP_EXEC) &&
		    (m->kind == PROC_MAP_FILE || !strcmp(m->path, "[vdso]")))
			load_file(p, pid, m);
	}
}

void proc_tables__free(struct proc_tables *p)
{
	size_t i;

	for (i = 0; i < p->nfiles; i++) {
		unwind_table__free(p->files[i].table);
		elf_end(p->files[i].elf);
		elf_symtab__free(p->files[i].sym);
		close(p->files[i].fd);
	}
	unwind_rules__free(p->rules);
	proc_maps__free(p->maps);
}

const char *proc_tables__name(struct proc_tables *p, uint64_t ip, bool leaf)
{
	uint64_t at = leaf ? ip : ip - 1;
	struct proc_file *f = proc_tables__file(p, at);
	const char *name;

	if (!f)
		return "?";
	name = elf_symtab__lookup(f->sym, at - f->bias, NULL);
	return name ? name : "?";
}

pid_t proc_tables__run(struct proc_tables *p, const char *path, const char *arg)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (!pid) {
		execl(path, path, arg, (char *)NULL);
		_exit(127);
	}
	/* Past the dynamic loader's work: the maps are those of the program at work. */
	nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
	proc_tables__load(p, pid);
	return pid;
}

void proc_tables__kill(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
