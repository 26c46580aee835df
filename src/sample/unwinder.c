// SPDX-License-Identifier: MIT
/* The BPF unwinder's maps from user space; see unwinder.h. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_MODULE "unwinder"
#include "lib/log.h"
#include "lib/kernel_caps.h"
#include "sample/lazy_maps.h"
#include "sample/map_take.h"
#include "sample/unwinder.h"

/* The maps this module owns, by their names in bpf/unwinder.bpf.c. */
enum umap {
	UMAP_CONFIG,
	UMAP_RULES,
	UMAP_ROWS,
	UMAP_PAGES,
	UMAP_REGIONS,
	UMAP_SETS,
	UMAP_FILES,
	UMAP_MAX
};
static const char *const umap_names[UMAP_MAX] = {
	"walk_config",	  "unwind_rules", "unwind_rows",  "unwind_pages",
	"unwind_regions", "unwind_sets",  "unwind_files",
};

/* Free space of an array map, in elements: sorted, merged extents. */
struct extent {
	uint32_t start, len;
};

struct space {
	struct extent *free;
	size_t n, cap;
	uint32_t capacity, used, peak;
};

struct unwinder {
	int fds[UMAP_MAX];
	struct cprof_walk_config cfg;
	struct space rows, pages;
	size_t rules_sent;
	uint64_t map_bytes;
	bool no_batch;		 /* the kernel has no batched updates */
	uint32_t max_row_chunks; /* how far the row map may grow */
	uint32_t serial;	 /* the last table upload's */
	bool by_file;		 /* the kernel can walk by file: unwind_files is kept */
	unwinder_grown_fn on_grown;
	void *grown_ctx;
};

static uint32_t chunks(uint64_t n)
{
	return (uint32_t)((n + CPROF_UNWIND_CHUNK - 1) / CPROF_UNWIND_CHUNK);
}

static int space_init(struct space *s, uint32_t capacity)
{
	s->free = malloc(sizeof(*s->free));
	if (!s->free)
		return -ENOMEM;
	s->free[0] = (struct extent){0, capacity};
	s->n = 1;
	s->cap = 1;
	s->capacity = capacity;
	return 0;
}

/* First fit: tables come and go with the processes that map them. */
static int space_alloc(struct space *s, uint32_t len, uint32_t *start)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (s->free[i].len < len)
			continue;
		*start = s->free[i].start;
		s->free[i].start += len;
		s->free[i].len -= len;
		if (!s->free[i].len) {
			memmove(&s->free[i], &s->free[i + 1], (s->n - i - 1) * sizeof(*s->free));
			s->n--;
		}
		s->used += len;
		if (s->used > s->peak)
			s->peak = s->used;
		return 0;
	}
	return -ENOSPC;
}

static void space_release(struct space *s, uint32_t start, uint32_t len)
{
	struct extent *tmp;
	size_t i;

	if (!len)
		return;
	for (i = 0; i < s->n && s->free[i].start < start; i++)
		;
	s->used -= len;
	if (i > 0 && s->free[i - 1].start + s->free[i - 1].len == start) {
		s->free[i - 1].len += len;
		if (i < s->n && start + len == s->free[i].start) {
			s->free[i - 1].len += s->free[i].len;
			memmove(&s->free[i], &s->free[i + 1], (s->n - i - 1) * sizeof(*s->free));
			s->n--;
		}
		return;
	}
	if (i < s->n && start + len == s->free[i].start) {
		s->free[i].start = start;
		s->free[i].len += len;
		return;
	}
	if (s->n == s->cap) {
		tmp = realloc(s->free, 2 * s->cap * sizeof(*s->free));
		if (!tmp)
			return; /* the space is lost to later tables, not corrupted */
		s->free = tmp;
		s->cap *= 2;
	}
	memmove(&s->free[i + 1], &s->free[i], (s->n - i) * sizeof(*s->free));
	s->free[i] = (struct extent){start, len};
	s->n++;
}

/*
 * The maps' shapes, from the structs bpf/unwinder.bpf.c declares them with
 * (unwind_abi.h): opening that object only to read them cost 0.5 ms of
 * every run. unwinder__share refuses an object that declares them
 * otherwise, so the two cannot drift apart unnoticed.
 */
struct shape {
	enum bpf_map_type type;
	uint32_t key_size, value_size, flags;
};

static const struct shape shapes[UMAP_MAX] = {
	[UMAP_CONFIG] = {BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct cprof_walk_config), 0},
	[UMAP_RULES] = {BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct cprof_unwind_rule), 0},
	[UMAP_ROWS] = {BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct cprof_unwind_chunk), 0},
	[UMAP_PAGES] = {BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct cprof_unwind_chunk), 0},
	[UMAP_REGIONS] = {BPF_MAP_TYPE_LPM_TRIE, sizeof(struct cprof_region_key),
			  sizeof(struct cprof_region), BPF_F_NO_PREALLOC},
	[UMAP_SETS] = {BPF_MAP_TYPE_HASH, sizeof(__u32), sizeof(struct cprof_unwind_set), 0},
	[UMAP_FILES] = {BPF_MAP_TYPE_HASH, sizeof(struct cprof_file_key),
			sizeof(struct cprof_file_table), 0},
};

static int create_map(struct unwinder *u, enum umap i, uint32_t entries, uint32_t flags)
{
	const struct shape *sh = &shapes[i];
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = sh->flags | flags);
	int fd;

	fd = bpf_map_create(sh->type, umap_names[i], sh->key_size, sh->value_size, entries, &o);
	if (fd < 0)
		return -errno;
	if (!(o.map_flags & BPF_F_NO_PREALLOC))
		u->map_bytes += (uint64_t)sh->value_size * entries;
	return fd;
}

/* Whether the kernel can walk by file: else unwind_files has one entry, and is not kept. */
static bool can_walk_by_file(void)
{
	return kernel_caps__has(KCAP_FIND_VMA) &&
	       libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) == 1;
}

static int create_maps(struct unwinder *u, const struct unwinder_opts *o)
{
	const uint32_t entries[UMAP_MAX] = {
		[UMAP_CONFIG] = 1,
		[UMAP_RULES] = CPROF_UNWIND_MAX_RULES,
		[UMAP_ROWS] = u->rows.capacity,
		[UMAP_PAGES] = u->pages.capacity,
		[UMAP_REGIONS] = CPROF_UNWIND_MAX_REGIONS,
		[UMAP_SETS] = o->max_sets ? o->max_sets : CPROF_UNWIND_MAX_SETS,
		[UMAP_FILES] = u->by_file ? CPROF_UNWIND_MAX_FILES : 1,
	};
	int i;

	for (i = 0; i < UMAP_MAX; i++) {
		u->fds[i] = create_map(u, i, entries[i],
				       (i == UMAP_SETS || i == UMAP_FILES) && lazy_maps__supported()
					       ? BPF_F_NO_PREALLOC
					       : 0);
		if (u->fds[i] < 0)
			return u->fds[i];
	}
	return 0;
}

/* The walk's configuration, whole: the BPF side reads it as one value. */
static int write_config(struct unwinder *u)
{
	__u32 zero = 0;

	return bpf_map_update_elem(u->fds[UMAP_CONFIG], &zero, &u->cfg, BPF_ANY) ? -errno : 0;
}

int unwinder__new(const struct unwinder_opts *opts, struct unwinder **out)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	int err = -ENOMEM, i;

	*out = NULL;
	if (!u)
		return err;
	for (i = 0; i < UMAP_MAX; i++)
		u->fds[i] = -1;
	u->max_row_chunks = chunks(opts->max_rows ? opts->max_rows : 1u << 22);
	if (space_init(&u->rows, opts->first_rows && chunks(opts->first_rows) < u->max_row_chunks
					 ? chunks(opts->first_rows)
					 : u->max_row_chunks) ||
	    space_init(&u->pages, chunks(opts->max_pages ? opts->max_pages : 1u << 16)))
		goto cleanup;
	u->by_file = can_walk_by_file();
	err = create_maps(u, opts);
	if (err) {
		pr_debug("cannot create the unwinder's maps: %s", strerror(-err));
		goto cleanup;
	}
	u->cfg.ra_mask = opts->ra_mask ? opts->ra_mask : ~0ull;
	u->cfg.max_depth = opts->max_depth ? opts->max_depth : CPROF_MAX_STACK_DEPTH;
	err = write_config(u);
	if (err)
		goto cleanup;
	*out = u;
	return 0;
cleanup:
	unwinder__free(u);
	return err;
}

void unwinder__free(struct unwinder *u)
{
	int i;

	if (!u)
		return;
	for (i = 0; i < UMAP_MAX; i++)
		if (u->fds[i] >= 0)
			close(u->fds[i]);
	free(u->rows.free);
	free(u->pages.free);
	free(u);
}

int unwinder__share(const struct unwinder *u, struct bpf_object *obj)
{
	struct bpf_map *m;
	int i, err;

	for (i = 0; i < UMAP_MAX; i++) {
		m = bpf_object__find_map_by_name(obj, umap_names[i]);
		if (!m)
			return -ENOENT;
		if (bpf_map__type(m) != shapes[i].type ||
		    bpf_map__key_size(m) != shapes[i].key_size ||
		    bpf_map__value_size(m) != shapes[i].value_size ||
		    (bpf_map__map_flags(m) & ~BPF_F_NO_PREALLOC) != 0) {
			pr_warn("the object's map %s is not the one the unwinder made",
				umap_names[i]);
			return -EINVAL;
		}
		err = bpf_map__reuse_fd(m, u->fds[i]);
		if (err)
			return err;
	}
	return 0;
}

/*
 * n elements of size bytes into the array map fd from element first on: in
 * one call where the kernel has batches (5.6 and later), a call each where
 * it has not. A table is some hundreds of elements: one call instead of
 * hundreds, each a dear round trip into the kernel in a VM.
 */
static int update_run(struct unwinder *u, int fd, __u32 first, const void *values, size_t n,
		      size_t size)
{
	const unsigned char *v = values;
	__u32 *keys, count, i;
	int err = 0;

	if (n > UINT32_MAX - first)
		return -ERANGE;
	if (!u->no_batch) {
		keys = malloc(n * sizeof(*keys));
		if (!keys)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			keys[i] = first + i;
		count = (__u32)n;
		err = kernel_caps__has(KCAP_BATCH_OPS)
			      ? (bpf_map_update_batch(fd, keys, values, &count, NULL) ? -errno : 0)
			      : -EINVAL;
		free(keys);
		if (!err)
			return 0;
		/*
		 * A kernel before 5.6 leaves count as it was given: all n are
		 * written one at a time (writing an element again is harmless).
		 */
		if (!map_take__unsupported(err))
			return err;
		u->no_batch = true;
		kernel_caps__fell_back(KCAP_BATCH_OPS);
	}
	for (i = 0; i < n; i++) {
		count = first + i;
		if (bpf_map_update_elem(fd, &count, v + i * size, BPF_ANY))
			return -errno;
	}
	return 0;
}

int unwinder__sync_rules(struct unwinder *u, const struct unwind_rules *rules)
{
	const struct cprof_unwind_rule *all = unwind_rules__all(rules);
	size_t n = unwind_rules__count(rules);
	int err;

	if (u->rules_sent >= n)
		return 0;
	err = update_run(u, u->fds[UMAP_RULES], (__u32)u->rules_sent, &all[u->rules_sent],
			 n - u->rules_sent, sizeof(*all));
	if (err)
		return err;
	u->rules_sent = n;
	return 0;
}

/* n values into the array map fd from element first on, 64 to an element. */
static int upload(struct unwinder *u, int fd, uint32_t first, const uint32_t *v, size_t n)
{
	size_t full = n / CPROF_UNWIND_CHUNK, rest = n % CPROF_UNWIND_CHUNK;
	struct cprof_unwind_chunk c;
	int err;

	/* Whole chunks straight from the table: it is their layout already. */
	if (full) {
		err = update_run(u, fd, first, v, full, sizeof(c));
		if (err)
			return err;
	}
	if (!rest)
		return 0;
	memset(&c, 0, sizeof(c));
	memcpy(c.v, v + full * CPROF_UNWIND_CHUNK, rest * sizeof(*v));
	return update_run(u, fd, first + (__u32)full, &c, 1, sizeof(c));
}

void unwinder__on_grown(struct unwinder *u, unwinder_grown_fn fn, void *ctx)
{
	u->on_grown = fn;
	u->grown_ctx = ctx;
}

int unwinder__rows_fd(const struct unwinder *u)
{
	return u->fds[UMAP_ROWS];
}

/* Up to *count chunks of the array map fd after key *at (NULL: from the start) into keys, v. */
static int read_chunks(struct unwinder *u, int fd, __u32 *at, __u32 *next, __u32 *keys,
		       struct cprof_unwind_chunk *v, __u32 *count)
{
	__u32 i, want = *count;
	int err;

	if (!u->no_batch) {
		err = kernel_caps__has(KCAP_BATCH_OPS)
			      ? (bpf_map_lookup_batch(fd, at, next, keys, v, count, NULL) ? -errno
											  : 0)
			      : -EINVAL;
		if (err == -ENOENT && *count)
			return 0; /* the last batch */
		/* Before 5.6 *count is left as it was given: read one at a time instead. */
		if (!err || !map_take__unsupported(err))
			return err;
		u->no_batch = true;
		kernel_caps__fell_back(KCAP_BATCH_OPS);
	}
	for (i = 0; i < want; i++) {
		keys[i] = (at ? *at + 1 : 0) + i;
		if (bpf_map_lookup_elem(fd, &keys[i], &v[i])) {
			if (!i)
				return -errno;
			break;
		}
	}
	*count = i;
	*next = keys[i - 1];
	return 0;
}

/* The first n elements of the array map from into to. */
static int copy_chunks(struct unwinder *u, int from, int to, uint32_t n)
{
	const __u32 batch = 1024;
	struct cprof_unwind_chunk *v = malloc(batch * sizeof(*v));
	__u32 *keys = malloc(batch * sizeof(*keys)), token = 0, count, done = 0;
	int err = v && keys ? 0 : -ENOMEM;

	while (!err && done < n) {
		count = n - done < batch ? n - done : batch;
		err = read_chunks(u, from, done ? &token : NULL, &token, keys, v, &count);
		if (!err && !count)
			err = -EIO;
		if (!err)
			err = update_run(u, to, done, v, count, sizeof(*v));
		done += count;
	}
	free(keys);
	free(v);
	return err;
}

/* A row map with room for need more chunks, the rows copied, the walk moved to it. */
static int grow_rows(struct unwinder *u, uint32_t need)
{
	uint32_t cap = u->rows.capacity, next = cap * 2 > cap + need ? cap * 2 : cap + need;
	LIBBPF_OPTS(bpf_map_create_opts, o);
	int fd, err;

	if (!u->on_grown || cap >= u->max_row_chunks)
		return -ENOSPC;
	if (next > u->max_row_chunks)
		next = u->max_row_chunks;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(__u32),
			    sizeof(struct cprof_unwind_chunk), next, &o);
	if (fd < 0)
		return -errno;
	err = copy_chunks(u, u->fds[UMAP_ROWS], fd, cap);
	if (!err)
		err = u->on_grown(u->grown_ctx, fd);
	if (err) {
		pr_debug("cannot grow the row map to %u rows: %s", next * CPROF_UNWIND_CHUNK,
			 strerror(-err));
		close(fd);
		return err;
	}
	close(u->fds[UMAP_ROWS]);
	u->fds[UMAP_ROWS] = fd;
	u->rows.capacity = next;
	space_release(&u->rows, cap, next - cap);
	u->rows.used += next - cap; /* space_release counted the new room as given back */
	u->map_bytes += (uint64_t)(next - cap) * sizeof(struct cprof_unwind_chunk);
	pr_debug("the row map grew to %u rows", next * CPROF_UNWIND_CHUNK);
	return 0;
}

int unwinder__add_table(struct unwinder *u, const struct unwind_table *t,
			struct unwinder_table *out)
{
	uint32_t rc = chunks(t->nrows), pc = chunks((uint64_t)t->npages + 1), rows, pages;
	int err;

	while (space_alloc(&u->rows, rc, &rows))
		if (grow_rows(u, rc))
			return -ENOSPC;
	if (space_alloc(&u->pages, pc, &pages)) {
		space_release(&u->rows, rows, rc);
		return -ENOSPC;
	}
	err = upload(u, u->fds[UMAP_ROWS], rows, t->rows, t->nrows);
	if (!err)
		err = upload(u, u->fds[UMAP_PAGES], pages, t->pages, (size_t)t->npages + 1);
	if (err) {
		space_release(&u->rows, rows, rc);
		space_release(&u->pages, pages, pc);
		return err;
	}
	*out = (struct unwinder_table){
		.table_base = t->base,
		.row_base = rows * CPROF_UNWIND_CHUNK,
		.page_base = pages * CPROF_UNWIND_CHUNK,
		.npages = t->npages,
		.row_chunks = rc,
		.page_chunks = pc,
		.serial = ++u->serial,
	};
	return 0;
}

void unwinder__remove_table(struct unwinder *u, const struct unwinder_table *t)
{
	space_release(&u->rows, t->row_base / CPROF_UNWIND_CHUNK, t->row_chunks);
	space_release(&u->pages, t->page_base / CPROF_UNWIND_CHUNK, t->page_chunks);
}

/* The largest aligned power-of-two block at start that fits before end: its size's log2. */
static unsigned int block_bits(uint64_t start, uint64_t end)
{
	unsigned int bits = start ? (unsigned int)__builtin_ctzll(start) : 63;

	while (bits && (end - start) < (1ull << bits))
		bits--;
	return bits;
}

/*
 * An LPM trie matches prefixes: a range goes in as aligned blocks. fn is
 * called with each block's key; the first error stops.
 */
static int for_blocks(uint32_t set, uint64_t start, uint64_t end,
		      int (*fn)(int fd, const struct cprof_region_key *k, const void *v), int fd,
		      const void *v)
{
	struct cprof_region_key key = {.set = set};
	unsigned int bits;
	int err;

	while (start < end) {
		bits = block_bits(start, end);
		key.prefixlen = 32 + 64 - bits;
		key.addr_be = htobe64(start);
		err = fn(fd, &key, v);
		if (err)
			return err;
		start += 1ull << bits;
	}
	return 0;
}

static int put_block(int fd, const struct cprof_region_key *k, const void *v)
{
	return bpf_map_update_elem(fd, k, v, BPF_ANY) ? -errno : 0;
}

static int delete_block(int fd, const struct cprof_region_key *k, const void *v)
{
	(void)v;
	bpf_map_delete_elem(fd, k);
	return 0;
}

/*
 * After the trie changed, before anything else does (a table's rows are
 * reused once its regions are gone): the walks forget the regions they
 * remembered (region_memo in bpf/unwinder.bpf.c).
 */
static void regions_changed(struct unwinder *u)
{
	int err;

	u->cfg.regions_gen++;
	err = write_config(u);
	if (err)
		pr_warn("cannot tell the walk the regions changed: %s", strerror(-err));
}

static int put_region(struct unwinder *u, uint32_t set, uint64_t start, uint64_t end,
		      struct cprof_region *v)
{
	int err = for_blocks(set, start, end, put_block, u->fds[UMAP_REGIONS], v);

	if (err)
		unwinder__remove_region(u, set, start, end);
	else
		regions_changed(u);
	return err;
}

int unwinder__add_region(struct unwinder *u, uint32_t set, uint64_t start, uint64_t end,
			 uint64_t bias, const struct unwinder_table *t)
{
	struct cprof_region v = {.start = start, .end = end, .bias = bias};

	if (t) {
		v.flags = CPROF_REGION_TABLE;
		v.table_base = t->table_base;
		v.page_base = t->page_base;
		v.npages = t->npages;
		v.row_base = t->row_base;
		v.serial = t->serial;
	}
	return put_region(u, set, start, end, &v);
}

int unwinder__add_pending_region(struct unwinder *u, uint32_t set, uint64_t start, uint64_t end)
{
	struct cprof_region v = {.start = start, .end = end, .flags = CPROF_REGION_PENDING};

	return put_region(u, set, start, end, &v);
}

void unwinder__remove_region(struct unwinder *u, uint32_t set, uint64_t start, uint64_t end)
{
	for_blocks(set, start, end, delete_block, u->fds[UMAP_REGIONS], NULL);
	regions_changed(u);
}

int unwinder__bind(struct unwinder *u, uint32_t pid, uint32_t set, uint64_t space)
{
	struct cprof_unwind_set v = {.set = set, .space = space};

	return bpf_map_update_elem(u->fds[UMAP_SETS], &pid, &v, BPF_ANY) ? -errno : 0;
}

int unwinder__rebind(struct unwinder *u, uint32_t pid, uint32_t set)
{
	struct cprof_unwind_set v;

	if (bpf_map_lookup_elem(u->fds[UMAP_SETS], &pid, &v))
		return -errno;
	v.set = set;
	/* BPF_EXIST: an exec in between deleted the binding, and it stays deleted. */
	return bpf_map_update_elem(u->fds[UMAP_SETS], &pid, &v, BPF_EXIST) ? -errno : 0;
}

void unwinder__unbind(struct unwinder *u, uint32_t pid)
{
	bpf_map_delete_elem(u->fds[UMAP_SETS], &pid);
}

int unwinder__set_task_regs(struct unwinder *u, uint32_t task_stack_off, uint32_t pt_regs_size)
{
	u->cfg.task_stack_off = task_stack_off;
	u->cfg.pt_regs_size = pt_regs_size;
	return write_config(u);
}

int unwinder__set_file_offs(struct unwinder *u, const struct kernel_file_offs *o)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!o->found || page <= 0 || (page & (page - 1)))
		return -ENOENT;
	u->cfg.files = (struct cprof_file_config){
		.on = 1,
		.page_shift = (uint32_t)__builtin_ctzl((unsigned long)page),
		.vma_pgoff = o->vma_pgoff,
		.vma_file = o->vma_file,
		.file_inode = o->file_inode,
		.inode_ino = o->inode_ino,
		.inode_sb = o->inode_sb,
		.sb_dev = o->sb_dev,
	};
	return write_config(u);
}

/* A file as the kernel names it: its superblock's dev_t (MKDEV: major << 20 | minor). */
static struct cprof_file_key file_key(const struct file_id *id)
{
	return (struct cprof_file_key){.dev = id->dev_major << 20 | id->dev_minor,
				       .ino = id->inode};
}

int unwinder__add_file(struct unwinder *u, const struct file_id *id, const struct exec_seg *segs,
		       uint32_t nsegs, const struct unwinder_table *t)
{
	struct cprof_file_key k = file_key(id);
	struct cprof_file_table v = {
		.table_base = t->table_base,
		.page_base = t->page_base,
		.npages = t->npages,
		.row_base = t->row_base,
		.serial = t->serial,
	};
	uint32_t i;

	if (!u->by_file)
		return -EOPNOTSUPP;
	for (i = 0; i < nsegs && i < CPROF_FILE_SEGS; i++)
		v.seg[i] = (struct cprof_file_seg){segs[i].off, segs[i].end, segs[i].delta};
	v.nsegs = i;
	return bpf_map_update_elem(u->fds[UMAP_FILES], &k, &v, BPF_ANY) ? -errno : 0;
}

void unwinder__remove_file(struct unwinder *u, const struct file_id *id)
{
	struct cprof_file_key k = file_key(id);

	if (u->by_file)
		bpf_map_delete_elem(u->fds[UMAP_FILES], &k);
}

int unwinder__set_followed(struct unwinder *u, uint64_t until)
{
	u->cfg.followed_until = until;
	return write_config(u);
}

uint32_t unwinder__max_depth(const struct unwinder *u)
{
	return u->cfg.max_depth;
}

uint64_t unwinder__ra_mask(const struct unwinder *u)
{
	return u->cfg.ra_mask;
}

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *out)
{
	*out = (struct unwinder_stats){
		.map_bytes = u->map_bytes,
		.row_chunks_used = u->rows.used,
		.row_chunks_peak = u->rows.peak,
		.row_chunks = u->rows.capacity,
		.page_chunks_used = u->pages.used,
		.page_chunks_peak = u->pages.peak,
		.page_chunks = u->pages.capacity,
	};
}
