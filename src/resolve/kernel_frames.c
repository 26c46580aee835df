// SPDX-License-Identifier: MIT
/*
 * Kernel addresses -> frames. Their names come when the profile is
 * finished: from the kernel's own lookup (ksym_names.h) or from kallsyms
 * (ksyms.h), which is too big to keep; until then a frame waits under a
 * stand-in name of its own address.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/u64map.h"
#include "resolve/ksym_names.h"
#include "resolve/ksyms.h"
#include "resolve/symbolizer.h"
#include "resolve/symbolizer_internal.h"

#define LOG_MODULE "symbols"
#include "lib/log.h"

static uint32_t add_kernel_module(struct symbolizer *s)
{
	struct symbolizer_module m = {.kernel = true, .limit = UINT64_MAX};

	m.path = frame_table__intern(s->t, "[kernel.kallsyms]");
	m.build_id = frame_table__intern(s->t, "");
	return m.path && m.build_id ? frame_table__add_module(s->t, &m) : 0;
}

/* Reads kallsyms, naming at once the symbols of the addresses in addrs[0..n). */
static void load_ksyms(struct symbolizer *s, const uint64_t *addrs, size_t n, bool only)
{
	int err;

	s->ksyms_tried = true;
	s->ksyms_partial = only;
	err = ksyms__load_for(s->kallsyms, addrs, n, only, &s->ksyms);
	if (err)
		pr_warn("cannot read %s (%s): kernel frames are shown as [kernel]",
			s->kallsyms ? s->kallsyms : "/proc/kallsyms", strerror(-err));
	else if (ksyms__hidden(s->ksyms))
		pr_warn("kernel addresses are hidden from cprof (kernel.kptr_restrict, or no "
			"CAP_SYSLOG): kernel frames are shown as [kernel]");
}

/*
 * A frame named when the profile is finished, under a stand-in name of its
 * own address meanwhile, so that frames never merge before they are named.
 */
static uint32_t waiting_kernel_frame(struct symbolizer *s, uint64_t addr, uint64_t lookup,
				     uint32_t sym)
{
	struct kframe_wait *w;
	char name[64];
	uint32_t frame;

	if (s->nkwait == s->kwait_cap) {
		size_t cap = s->kwait_cap ? 2 * s->kwait_cap : 256;

		w = reallocarray(s->kwait, cap, sizeof(*w));
		if (!w)
			return 0;
		s->kwait = w;
		s->kwait_cap = cap;
	}
	if (sym != NO_SYM && ksyms__want_name(s->ksyms, sym))
		return 0;
	snprintf(name, sizeof(name), "[kernel 0x%" PRIx64 "]", lookup);
	frame = frame_table__add(s->t, (struct symbolizer_frame){
					       .module = frame_table__kernel(s->t)->module,
					       .address = addr,
					       .name = name,
					       .kernel = true,
					       .unknown = true,
					       .waiting = true,
					       .kind = FRAME_WAITING,
				       });
	if (frame)
		s->kwait[s->nkwait++] =
			(struct kframe_wait){.lookup = lookup, .frame = frame, .sym = sym};
	return frame;
}

/*
 * Until the first profile is finished kallsyms is not read: its frames are
 * all named then, in the one read that loads the table. Afterwards (the
 * next intervals of continuous mode) the table gives each frame its symbol
 * at once, and a name pass only runs for symbols not named yet.
 */
static uint32_t resolve_kernel(struct symbolizer *s, uint64_t addr, bool leaf)
{
	uint64_t v, lookup = leaf ? addr : addr - 1;
	uint32_t frame, sym = NO_SYM;
	const char *name;
	int err = -ENOENT;

	if (u64map__get(frame_table__kernel(s->t)->ids[leaf], addr, &v))
		return (uint32_t)v;
	if (!s->ksyms_tried)
		err = -EAGAIN;
	else if (s->ksyms && ksyms__find(s->ksyms, lookup, &sym) == 0)
		err = ksyms__name(s->ksyms, sym, &name);
	if (!err) {
		frame = frame_table__add_frame(s->t, frame_table__kernel(s->t)->module, addr, name,
					       true, FRAME_CODE);
	} else if (err == -EAGAIN) {
		frame = waiting_kernel_frame(s, addr, lookup, sym);
	} else {
		frame = frame_table__add_frame(s->t, frame_table__kernel(s->t)->module, addr,
					       "[kernel]", true, FRAME_UNNAMED);
		s->stats[SYM_STAT_UNKNOWN_KERNEL]++;
	}
	s->stats[SYM_STAT_KERNEL_FRAMES]++;
	if (frame)
		u64map__set(frame_table__kernel(s->t)->ids[leaf], addr, frame);
	return frame;
}

int symbolizer__kernel_frames(struct symbolizer *s, const uint64_t *ips, uint32_t n,
			      uint32_t *ids_out)
{
	uint32_t i;
	int err;

	err = begin_request(s);
	if (err)
		return err;
	if (!frame_table__kernel(s->t)->module)
		frame_table__kernel(s->t)->module = add_kernel_module(s);
	if (!frame_table__kernel(s->t)->module)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ids_out[i] = resolve_kernel(s, ips[i], i == 0);
		if (!ids_out[i])
			return -ENOMEM;
	}
	return 0;
}

int symbolizer__set_kallsyms(struct symbolizer *s, const char *path)
{
	char *copy = NULL;

	if (path && !(copy = strdup(path)))
		return -ENOMEM;
	free(s->kallsyms);
	s->kallsyms = copy;
	return 0;
}

/* The frame's real name, or "[kernel]" (and counted) without one; named in place, under its id. */
static int name_kernel_frame(struct symbolizer *s, const struct kframe_wait *w, const char *name)
{
	struct symbolizer_frame *f = frame_table__frame(s->t, w->frame);
	const char *raw = frame_table__intern(s->t, name ? name : "[kernel]"), *shown = raw;

	if (raw && name)
		shown = frame_table__display_name(s->t, raw);
	if (!shown)
		return -ENOMEM;
	if (!name)
		s->stats[SYM_STAT_UNKNOWN_KERNEL]++;
	f->name = shown;
	f->system_name = raw;
	f->unknown = !name;
	f->waiting = false;
	f->kind = name ? FRAME_CODE : FRAME_UNNAMED;
	return 0;
}

/*
 * The first profile's frames: kallsyms is read once, naming their symbols
 * as it goes. When no profile follows, only those symbols are kept.
 */
static void load_ksyms_for_waiting(struct symbolizer *s, bool last)
{
	uint64_t *addrs = malloc(s->nkwait * sizeof(*addrs));
	size_t i;

	for (i = 0; addrs && i < s->nkwait; i++)
		addrs[i] = s->kwait[i].lookup;
	/* Without memory for the list, the name pass below names them, one read later. */
	load_ksyms(s, addrs, addrs ? s->nkwait : 0, last && addrs);
	free(addrs);
	for (i = 0; s->ksyms && i < s->nkwait; i++)
		if (ksyms__find(s->ksyms, s->kwait[i].lookup, &s->kwait[i].sym) == 0)
			ksyms__want_name(s->ksyms, s->kwait[i].sym);
}

struct kname_pass {
	struct symbolizer *s;
	bool *left; /* for kallsyms */
	size_t answered;
	int err;
};

static void on_kernel_name(void *ctx, size_t i, const char *name, int err)
{
	struct kname_pass *p = ctx;
	int e = 0;

	p->answered = i + 1;
	if (err && err != -ENOENT)
		p->left[i] = true;
	else
		e = name_kernel_frame(p->s, &p->s->kwait[i], err ? NULL : name);
	if (e && !p->err)
		p->err = e;
}

/* The kernel's own lookup, once it answered; NULL where it cannot (said once with -v). */
static struct ksym_names *kernel_lookup(struct symbolizer *s)
{
	int err;

	/* A kallsyms file of the caller's (tests) is what names kernel frames. */
	if (s->kallsyms || s->knames_failed || s->knames)
		return s->knames;
	err = ksym_names__new(&s->knames);
	if (err) {
		s->knames_failed = true;
		pr_debug("kernel frames: named from /proc/kallsyms: the kernel's own lookup cannot "
			 "be used here (%s)",
			 strerror(-err));
	}
	return s->knames;
}

/*
 * Names the waiting kernel frames with the kernel's own lookup (a few
 * hundred lookups, not a read of all of kallsyms), leaving in kwait only
 * those it could not name, for kallsyms.
 */
static int name_by_kernel(struct symbolizer *s)
{
	struct kname_pass p = {.s = s};
	uint64_t *addrs = NULL;
	size_t i, j;
	int err = -ENOMEM;

	if (!kernel_lookup(s))
		return 0;
	addrs = malloc(s->nkwait * sizeof(*addrs));
	p.left = calloc(s->nkwait, sizeof(*p.left));
	if (!addrs || !p.left)
		goto cleanup;
	for (i = 0; i < s->nkwait; i++)
		addrs[i] = s->kwait[i].lookup;
	err = ksym_names__name(s->knames, addrs, s->nkwait, on_kernel_name, &p);
	if (err) {
		ksym_names__free(s->knames);
		s->knames = NULL;
		s->knames_failed = true;
	}
	for (i = j = 0; i < s->nkwait; i++)
		if (i >= p.answered || p.left[i])
			s->kwait[j++] = s->kwait[i];
	if (j)
		pr_debug("kernel frames: %zu of %zu named from /proc/kallsyms, not by the kernel's "
			 "lookup",
			 j, s->nkwait);
	s->nkwait = j;
	err = p.err;
cleanup:
	free(addrs);
	free(p.left);
	return err;
}

/*
 * The profile's kernel frames, named now (see symbolizer__finish): by the
 * kernel's own lookup while kallsyms was never read, else from kallsyms.
 */
int name_kernel_frames(struct symbolizer *s, bool last)
{
	size_t i, gone = 0;
	const char *name;
	int err = 0, pass_err = 0, e;

	if (!s->ksyms_tried && s->nkwait)
		err = name_by_kernel(s);
	if (!s->nkwait)
		return err;
	if (!s->ksyms_tried)
		load_ksyms_for_waiting(s, last);
	if (ksyms__wanted(s->ksyms)) {
		pass_err = ksyms__name_pass(s->ksyms);
		if (pass_err)
			pr_warn("cannot read %s again (%s): kernel frames are shown as [kernel]",
				s->kallsyms ? s->kallsyms : "/proc/kallsyms", strerror(-pass_err));
	}
	for (i = 0; i < s->nkwait; i++) {
		const struct kframe_wait *w = &s->kwait[i];

		name = NULL;
		if (w->sym != NO_SYM && ksyms__name(s->ksyms, w->sym, &name) == -ENOENT)
			gone++;
		e = name_kernel_frame(s, w, name);
		if (e && !err)
			err = e;
	}
	if (gone)
		pr_debug("%zu kernel frames: their symbol was gone when names were read", gone);
	if (err)
		pr_warn("cannot name kernel frames: %s", strerror(-err));
	s->nkwait = 0;
	/* A table of those symbols only would name no later frame: the next ones read again. */
	if (s->ksyms_partial) {
		ksyms__free(s->ksyms);
		s->ksyms = NULL;
		s->ksyms_tried = false;
		s->ksyms_partial = false;
	}
	return err ? err : pass_err;
}
