// SPDX-License-Identifier: MIT
/*
 * Functions' starts from .eh_frame_hdr, for a file without a .symtab: code
 * no symbol covers is named by its function's start. Kept in the table
 * store between runs as the symbols are.
 */
#include <errno.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_MODULE "elf"
#include "lib/elf_build_id.h"
#include "lib/log.h"
#include "lib/range.h"
#include "lib/sigbus.h"
#include "resolve/elf_symtab.h"
#include "resolve/symbol_file.h"
#include "store/table_store.h"
#include "unwind/eh_frame_hdr.h"
#include "resolve/elf_symtab_internal.h"

/*
 * The FDE table of .eh_frame_hdr, kept small: 8 bytes a function. Only for
 * images without a .symtab (from themselves or a debug file), where it
 * names what the dynamic symbols do not.
 */
int load_function_extents(struct elf_symtab *e)
{
	struct eh_frame_hdr *h;
	struct cfi_fde fde;
	size_t size, i, n;
	const void *image = e->image ? e->image : elf_rawfile(e->elf, &size);
	int err;

	if (e->image)
		size = e->file_size;
	if (!image || eh_frame_hdr__from_elf(image, size, &h))
		return 0;
	n = eh_frame_hdr__count(h);
	e->fns = n ? malloc(n * sizeof(*e->fns)) : NULL;
	err = n && !e->fns ? -ENOMEM : 0;
	for (i = 0; !err && i < n; i++) {
		if (eh_frame_hdr__fde(h, i, &fde))
			continue;
		if (!e->nfns)
			e->fn_base = fde.pc_begin;
		/* Entries are sorted by start; a file past 4 GiB of code keeps what fits. */
		if (fde.pc_begin - e->fn_base > UINT32_MAX || fde.pc_range > UINT32_MAX)
			break;
		e->fns[e->nfns++] = (struct fn_extent){(uint32_t)(fde.pc_begin - e->fn_base),
						       (uint32_t)fde.pc_range};
	}
	eh_frame_hdr__free(h);
	return err;
}

/* The key a file's function extents are kept under; false if they are not kept. */
static bool extents_id(const struct elf_symtab *e, struct symbol_file_id *id, char *key,
		       size_t size)
{
	if (!e->store || !e->build_id_len || !table_store__trusts(e->store, &e->source))
		return false;
	kept_file_id(e, id, NULL);
	return kept_key(e, id, "fns", key, size);
}

/* The extents kept by an earlier run, as ranges without names: 0, or -errno. */
static int recall_extents(struct elf_symtab *e, const struct symbol_file_id *id, const char *key)
{
	struct symbol_set set;
	int err = read_kept(e, id, key, &set);
	size_t i;

	e->fns = err ? NULL : malloc((set.nranges ? set.nranges : 1) * sizeof(*e->fns));
	if (!err && !e->fns)
		err = -ENOMEM;
	for (i = 0; !err && i < set.nranges; i++) {
		const struct symbol_range *r = &set.ranges[i];

		if (!i)
			e->fn_base = r->start;
		/* As load_function_extents keeps them. */
		if (r->start - e->fn_base > UINT32_MAX || r->end - r->start > UINT32_MAX)
			break;
		e->fns[e->nfns++] = (struct fn_extent){(uint32_t)(r->start - e->fn_base),
						       (uint32_t)(r->end - r->start)};
	}
	symbol_set__clear(&set);
	return err;
}

/*
 * Kept as ranges named "": only when they are apart and none is empty, so
 * that a lookup among them finds what it finds in the file's.
 */
static void keep_extents(struct elf_symtab *e, const struct symbol_file_id *id, const char *key)
{
	struct symbol_range *r = malloc((e->nfns ? e->nfns : 1) * sizeof(*r));
	size_t i;

	for (i = 0; r && i < e->nfns && e->fns[i].size; i++) {
		uint64_t start = e->fn_base + e->fns[i].start;

		r[i] = (struct symbol_range){start, start + e->fns[i].size, start, ""};
	}
	if (r && i == e->nfns)
		keep_ranges(e, r, e->nfns, e->nfns, id, key);
	free(r);
}

/* .eh_frame_hdr's extents, from a mapping its owner may truncate (sigbus.h). */
static int extents_mapped(void *arg)
{
	struct elf_symtab *e = arg;

	e->elf = elf_begin(e->fns_fd, ELF_C_READ_MMAP, NULL);
	return e->elf ? load_function_extents(e) : -EINVAL;
}

/* The function extents of a file, read once, the first time they are needed. */
static void load_file_extents(struct elf_symtab *e)
{
	struct symbol_file_id id;
	char key[2 * ELF_BUILD_ID_MAX + 32];
	bool kept;
	int err;

	if (e->fns_fd < 0)
		return;
	kept = extents_id(e, &id, key, sizeof(key));
	if (kept && !recall_extents(e, &id, key)) {
		pr_debug("%s: %zu function extents, read back from the store", e->path, e->nfns);
		goto cleanup;
	}
	err = sigbus__call(extents_mapped, e);
	if (err)
		pr_debug("%s: no function extents: %s", e->path, strerror(-err));
	else
		pr_debug("%s: %zu function extents from .eh_frame_hdr", e->path, e->nfns);
	if (!err && kept)
		keep_extents(e, &id, key);
	elf_end(e->elf);
	e->elf = NULL;
cleanup:
	close(e->fns_fd);
	e->fns_fd = -1;
}

bool elf_symtab__function_start(struct elf_symtab *e, uint64_t vaddr, uint64_t *start)
{
	size_t lo = 0, hi, mid;
	uint64_t off;

	if (!e)
		return false;
	ensure_loaded(e);
	load_file_extents(e);
	if (!e->nfns || vaddr < e->fn_base || vaddr - e->fn_base > UINT32_MAX)
		return false;
	off = vaddr - e->fn_base;
	for (hi = e->nfns; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if (e->fns[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || off - e->fns[lo - 1].start >= e->fns[lo - 1].size)
		return false;
	*start = e->fn_base + e->fns[lo - 1].start;
	return true;
}
