// SPDX-License-Identifier: MIT
/* A live process's files and their unwind tables, for tests; see proc_tables.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

	if (!m || !(m->perms & PROC_MAP_EXEC) || m->kind != PROC_MAP_FILE)
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

static void load_file(struct proc_tables *p, const struct proc_map *m)
{
	struct proc_file *f = &p->files[p->nfiles];
	struct unwind_table_stats st;
	struct unwind_sources src;
	struct elf_cfi cfi;

	if (p->nfiles == PROC_TABLES_MAX_FILES)
		return;
	f->map = m;
	f->fd = open(m->path, O_RDONLY);
	CHECK(f->fd >= 0);
	CHECK_INT(elf_symtab__open(m->path, &f->sym), ==, 0);
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
		if ((m->perms & PROC_MAP_EXEC) && m->kind == PROC_MAP_FILE)
			load_file(p, m);
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
