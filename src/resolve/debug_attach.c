// SPDX-License-Identifier: MIT
/*
 * Separate debug files for stripped files: found on this machine
 * (debug_file.h) when the file is opened, or asked of debuginfod by build
 * ID and taken when they come (pick_up_fetches); the last profile waits
 * for them, within its time (finish_fetches).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/load_budget.h"
#include "resolve/debug_file.h"
#include "resolve/debuginfod_queue.h"
#include "resolve/elf_symtab.h"
#include "resolve/symbolizer.h"
#include "resolve/symbolizer_internal.h"

#define LOG_MODULE "symbols"
#include "lib/log.h"

int symbolizer__set_debug_dir(struct symbolizer *s, const char *dir)
{
	char *copy = strdup(dir ? dir : "");

	if (!copy)
		return -ENOMEM;
	free(s->debug_dir);
	s->debug_dir = copy;
	return 0;
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
struct debug_file_search *debug_search(struct symbolizer *s)
{
	s->dfs.dir = s->debug_dir;
	s->dfs.budget = s->budget;
	return &s->dfs;
}

void count_debug_refusals(struct symbolizer *s)
{
	int i;

	for (i = PROC_FILE_LINK; i < PROC_FILE_REFUSALS; i++)
		s->stats[SYM_STAT_DEBUG_REFUSED_LINK + i - PROC_FILE_LINK] += s->dfs.refused[i];
	s->stats[SYM_STAT_DEBUG_CRC_STOPPED] += s->dfs.crc_stopped;
	s->dfs = (struct debug_file_search){0};
}

void attach_debug_file(struct symbolizer *s, uint32_t pid, const struct proc_map *m,
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
void pick_up_fetches(struct symbolizer *s)
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

/* The elf_entry of a file whose debug file is awaited, or NULL. */
struct elf_entry *awaited_entry(struct symbolizer *s, const struct elf_symtab *elf)
{
	struct elf_entry *e;

	if (!s->fetcher || !elf)
		return NULL;
	for (e = s->elf_list; e; e = e->next)
		if (e->elf == elf)
			return e->fetch ? e : NULL;
	return NULL;
}

/* The debug files frames wait for: the last profile waits for them, at most fetch_wait_ns. */
void finish_fetches(struct symbolizer *s, bool last)
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
