// SPDX-License-Identifier: MIT
/* Unwind tables by file identity; see table_cache.h. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/load_budget.h"
#include "lib/u64map.h"
#include "unwind/elf_cfi.h"
#include "unwind/go_pcsp.h"
#include "unwind/table_cache.h"
#include "unwind/kept_tables.h"

struct entry {
	struct cached_table t; /* first: the public part */
	struct file_id id;
	uint64_t refs;
	struct entry *next_same_hash;
};

struct table_cache {
	struct table_store *store;  /* borrowed; NULL: none */
	struct load_budget *budget; /* borrowed; NULL: none */
	struct unwind_rules *rules;
	struct u64map *index; /* hash of file_id -> chain of struct entry */
	struct table_cache_stats stats;
};

static uint64_t id_hash(const struct file_id *id)
{
	return hash_u64(((uint64_t)id->dev_major << 32 | id->dev_minor) ^
			hash_u64(id->inode ^ hash_u64(id->generation)));
}

static bool same_file(const struct file_id *a, const struct file_id *b)
{
	return a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       a->inode == b->inode && a->generation == b->generation;
}

int table_cache__new(struct table_store *store, struct table_cache **out)
{
	struct table_cache *c = calloc(1, sizeof(*c));
	int err = -ENOMEM;

	*out = NULL;
	if (!c)
		return err;
	c->store = store;
	c->index = u64map__new();
	if (c->index)
		err = unwind_rules__new(&c->rules);
	if (err) {
		table_cache__free(c);
		return err;
	}
	*out = c;
	return 0;
}

static void free_entry(struct entry *e)
{
	unwind_table__free((struct unwind_table *)e->t.table);
	free(e);
}

void table_cache__free(struct table_cache *c)
{
	struct entry *e, *next;
	uint64_t key, v;
	size_t pos = 0;

	if (!c)
		return;
	while (c->index && u64map__next(c->index, &pos, &key, &v)) {
		for (e = (struct entry *)(uintptr_t)v; e; e = next) {
			next = e->next_same_hash;
			free_entry(e);
		}
	}
	u64map__free(c->index);
	unwind_rules__free(c->rules);
	free(c);
}

struct unwind_rules *table_cache__rules(struct table_cache *c)
{
	return c->rules;
}

void table_cache__set_budget(struct table_cache *c, struct load_budget *budget)
{
	c->budget = budget;
}

/* The file's table from the store, if it has it: 0, or -ENOENT. */
static int load(struct table_cache *c, Elf *elf, int fd, struct table_file_id *id,
		struct unwind_table **t, struct unwind_table_stats *stats)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (!c->store || fstat(fd, &st))
		return -ENOENT;
	kept_source__of(&id->file, &st);
	id->build_id_len = (uint32_t)elf_build_id(elf, id->file.size, id->build_id);
	return table_store__load(c->store, id, c->rules, t, stats);
}

/* A file over a cap, or whose build the deadline cut off, is counted for the summary. */
static void count_refusal(struct table_cache *c, int err)
{
	if (!c->budget)
		return;
	c->budget->cfi_refused += err == -EFBIG;
	c->budget->cfi_abandoned += err == -ETIME;
}

/*
 * Go's function table, for a file whose Go code has no CFI: a Go program
 * without .debug_frame (stripped, or never had one). Go writes no
 * .eh_frame; one that a Go program has is its C code's (cgo).
 */
static int go_source(Elf *elf, const struct elf_cfi *cfi, struct go_pcsp **out)
{
	size_t size;
	const char *image;
	int err;

	*out = NULL;
	if (cfi->has_debug_frame)
		return 0;
	image = elf_rawfile(elf, &size);
	err = image ? go_pcsp__open(image, size, cfi->arch, out) : -ENOENT;
	return err == -ENOENT ? 0 : err;
}

/* The file's executable segments, the first TABLE_EXEC_SEGS, into t. */
static void exec_segs(Elf *elf, struct cached_table *t)
{
	GElf_Phdr ph;
	size_t i, n;

	t->nexec = 0;
	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n && t->nexec < TABLE_EXEC_SEGS; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_filesz)
			continue;
		t->exec[t->nexec++] = (struct exec_seg){ph.p_offset, ph.p_offset + ph.p_filesz,
							ph.p_vaddr - ph.p_offset};
	}
}

/* Reads the file's CFI into e; a file without any is an answer, not an error. */
static int build(struct table_cache *c, struct entry *e, int fd)
{
	uint64_t t0 = clock__mono_ns();
	struct unwind_table *t = NULL;
	struct unwind_sources src = {0};
	struct table_file_id id;
	struct elf_cfi cfi;
	bool loaded;
	Elf *elf;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = elf ? 0 : -ENOEXEC;
	if (elf)
		exec_segs(elf, &e->t);
	loaded = !err && !load(c, elf, fd, &id, &t, &e->t.stats);
	if (!err && !loaded)
		err = load_budget__over(c->budget) ? -ETIME : elf_cfi__read(elf, &cfi);
	/* Refused whole: a table without the big section would unwind its code as having none. */
	if (!err && !loaded && cfi.over_cap)
		err = -EFBIG;
	if (!err && !loaded) {
		elf_cfi__sources(&cfi, NULL, &src);
		src.budget = c->budget;
		err = go_source(elf, &cfi, &src.go);
	}
	if (!err && !loaded) {
		err = unwind_table__build(&src, c->rules, &t, &e->t.stats);
		if (!err && c->store)
			table_store__save(c->store, &id, t, c->rules, &e->t.stats);
	}
	go_pcsp__free(src.go);
	elf_end(elf);
	if (err == -ENOMEM)
		return err;
	count_refusal(c, err);
	e->t.table = t;
	e->t.err = err;
	e->t.build_ns = clock__mono_ns() - t0;
	c->stats.built++;
	c->stats.loaded += loaded;
	c->stats.build_ns += e->t.build_ns;
	c->stats.no_cfi += !t;
	c->stats.bytes += unwind_table__bytes(t);
	if (c->stats.bytes > c->stats.peak_bytes)
		c->stats.peak_bytes = c->stats.bytes;
	return 0;
}

int table_cache__get(struct table_cache *c, const struct file_id *id, int fd,
		     struct cached_table **out)
{
	uint64_t h = id_hash(id), v = 0;
	struct entry *head = NULL, *e;
	int err;

	if (u64map__get(c->index, h, &v))
		head = (struct entry *)(uintptr_t)v;
	for (e = head; e; e = e->next_same_hash) {
		if (same_file(&e->id, id)) {
			e->refs++;
			*out = &e->t;
			return 0;
		}
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->id = *id;
	e->t.id = *id;
	e->refs = 1;
	err = build(c, e, fd);
	if (!err) {
		e->next_same_hash = head;
		err = u64map__set(c->index, h, (uint64_t)(uintptr_t)e);
	}
	if (err) {
		free_entry(e);
		return err;
	}
	c->stats.tables++;
	*out = &e->t;
	return 0;
}

bool table_cache__put(struct table_cache *c, struct cached_table *t)
{
	struct entry *e = (struct entry *)t, **pp, *head;
	uint64_t h, v;

	if (!t || --e->refs)
		return false;
	h = id_hash(&e->id);
	if (!u64map__get(c->index, h, &v))
		return false;
	head = (struct entry *)(uintptr_t)v;
	for (pp = &head; *pp && *pp != e; pp = &(*pp)->next_same_hash)
		;
	if (*pp)
		*pp = e->next_same_hash;
	if (head)
		u64map__set(c->index, h, (uint64_t)(uintptr_t)head);
	else
		u64map__delete(c->index, h);
	c->stats.tables--;
	c->stats.bytes -= unwind_table__bytes(e->t.table);
	free_entry(e);
	return true;
}

void table_cache__stats(const struct table_cache *c, struct table_cache_stats *out)
{
	*out = c->stats;
}
