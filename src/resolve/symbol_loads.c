// SPDX-License-Identifier: MIT
/*
 * Files' symbols loaded on the loader's thread (symtab_loader.h), not at
 * the first lookup: posted within max_loading, taken back at each request,
 * and waited for at the last profile's end up to the budget's deadline.
 *
 * An entry is "loading" from the post until its elf_symtab is taken back
 * (pick_up_loads), and no piece of the symbolizer touches that elf_symtab
 * meanwhile (lookups, function starts, releasing or reopening its file, a
 * debug file from debuginfod), as elf_symtab.h asks; its frames wait for
 * their names as those awaiting a debug file do (uframe_wait).
 */

#include "lib/clock.h"
#include "lib/load_budget.h"
#include "resolve/elf_symtab.h"
#include "resolve/symbolizer.h"
#include "resolve/symtab_loader.h"
#include "resolve/symbolizer_internal.h"

#define LOG_MODULE "symbols"
#include "lib/log.h"

int symbolizer__load_off_loop(struct symbolizer *s)
{
	if (s->loader)
		return 0;
	return symtab_loader__new(&s->loader);
}

/* Of the open files, at most this many are the loader's at once: note_use cannot let them go. */
static size_t max_loading(const struct symbolizer *s)
{
	return s->max_open / 2 ? s->max_open / 2 : 1;
}

/* Hands e's file to the loader; false when it cannot take it (out of memory). */
static bool post_load(struct symbolizer *s, struct elf_entry *e)
{
	if (symtab_loader__post(s->loader, e->elf, e))
		return false;
	/* First among the open ones, while it is still ours to look at. */
	note_use(s, e);
	e->loading = true;
	s->nloading++;
	return true;
}

/*
 * Whether e's symbols are still to come from the loader: posted now if
 * they are not loaded yet, or as soon as there is room (pick_up_loads).
 * A file let go and not opened again has none to come.
 */
bool symbols_coming(struct symbolizer *s, struct elf_entry *e)
{
	if (!s->loader || !e || !e->elf)
		return false;
	if (e->loading)
		return true;
	if (elf_symtab__loaded(e->elf) || elf_symtab__released(e->elf))
		return false;
	if (s->nloading < max_loading(s))
		return post_load(s, e);
	s->loads_deferred = true;
	return true;
}

/* Frames wait for e's symbols, which are neither loaded nor on their way. */
static bool load_wanted(const struct elf_entry *e)
{
	return e->waiters && e->elf && !e->loading && !elf_symtab__loaded(e->elf);
}

/*
 * Takes back the files the loader is done with (loaded, refused or
 * abandoned). Then, when room was made or a profile is finished, posts the
 * loads that wait: those whose file is open (one let go is posted when a
 * frame needs it again), within max_loading but for the last profile.
 */
void pick_up_loads(struct symbolizer *s, bool finishing, bool last)
{
	struct elf_entry *e;
	bool took = false;

	while ((e = symtab_loader__take(s->loader))) {
		e->loading = false;
		s->nloading--;
		/* Its file closed with the load: it leaves the open ones. */
		note_use(s, e);
		took = true;
	}
	if (!finishing && !(took && s->loads_deferred))
		return;
	s->loads_deferred = false;
	for (e = s->elf_list; e; e = e->next) {
		if (!load_wanted(e))
			continue;
		if (elf_symtab__released(e->elf) || (!last && s->nloading >= max_loading(s)) ||
		    !post_load(s, e))
			s->loads_deferred = true;
	}
}

/*
 * The loads frames wait for: the last profile waits for those under way
 * until the budget's deadline, and ends the rest (counted as abandoned, so
 * before the summary reads the budget); one of continuous mode takes what
 * has been loaded (later ones name the rest, as each resolves afresh).
 */
void finish_loads(struct symbolizer *s, bool last)
{
	size_t left;

	pick_up_loads(s, true, last);
	if (last && !symtab_loader__wait(s->loader, load_budget__deadline(s->budget))) {
		pr_debug("symbols still loading at the end of the run: not loaded, their frames "
			 "are shown as file+address");
		/* A load that does not notice in time is blocked in a read: it stays behind. */
		left = symtab_loader__stop(s->loader, clock__mono_ns() + SYMTAB_LOADER_STOP_NS);
		if (left && s->budget)
			s->budget->symtabs_abandoned += left;
		if (left)
			pr_debug("%zu symbol loads left behind, still reading their files", left);
	}
	pick_up_loads(s, false, false);
}

/* The last profile's: files whose frames wait and whose load never began (let go meanwhile). */
void count_unloaded(struct symbolizer *s)
{
	struct elf_entry *e;

	for (e = s->elf_list; e; e = e->next)
		if (load_wanted(e) && s->budget)
			s->budget->symtabs_abandoned++;
}
