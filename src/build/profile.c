// SPDX-License-Identifier: MIT
/*
 * The profile model. Mappings, frames and samples live in arrays (their order
 * is their pprof ID) with a hash index beside each one, so add-or-find stays
 * O(1) for the hundreds of thousands of samples a system-wide profile can hold.
 *
 * Every string handed in is interned here, even if the caller already did it:
 * the model then never holds a pointer it does not own, and pointer equality
 * is content equality for all the dedup keys below.
 *
 * Frames copied from a symbolizer are remembered by its frame id, dense
 * from 1 in each of its generations: an array indexed by id is the
 * smallest and fastest map from id to frame index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "profile"
#include "build/profile.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/strpool.h"
#include "lib/u64map.h"
#include "resolve/symbolizer.h"

#define MIN_CAP 64

struct slot {
	uint32_t idx1; /* 1-based index into the indexed array; 0 marks an empty slot */
	uint32_t hash;
};

/* A set of array indices keyed by whatever the eq callback compares. */
struct index {
	struct slot *slots;
	size_t nslots; /* a power of two, or 0 */
	size_t count;
};

typedef int (*index_eq_fn)(const struct profile *p, uint32_t idx1, const void *key);

/* A frame copied before the symbolizer had its name (profile__finish_frames). */
struct waiting_frame {
	uint32_t frame; /* 1-based frame index */
	uint32_t id;	/* symbolizer frame id */
};

struct profile {
	struct profile_meta meta;
	struct strpool *strings;

	struct profile_mapping *mappings;
	size_t nmappings, mappings_cap;
	struct index mapping_index;

	struct profile_frame *frames;
	size_t nframes, frames_cap;
	struct index frame_index;
	struct profile_inline *inlines; /* of all frames: profile_frame.inline_first */
	size_t ninlines, inlines_cap;

	struct profile_sample *samples;
	size_t nsamples, samples_cap;
	struct index sample_index;

	const char **comments;
	size_t ncomments, comments_cap;

	uint64_t total_count;

	/* Copies of symbolizer answers, for the ids of one generation. */
	uint32_t sym_generation;
	uint32_t *from_frame; /* symbolizer frame id -> frame index; 0: not copied yet */
	size_t from_frame_cap;
	uint32_t *from_module; /* symbolizer module id -> mapping index */
	size_t from_module_cap;
	struct waiting_frame *waiting;
	size_t nwaiting, waiting_cap;
};

/* Hashing: FNV-style word mixing, finished with the splitmix64 avalanche. */
static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

static uint32_t finish(uint64_t h)
{
	return (uint32_t)hash_u64(h);
}

#define HASH_SEED 0xcbf29ce484222325ull

static void index_free(struct index *ix)
{
	free(ix->slots);
	ix->slots = NULL;
	ix->nslots = ix->count = 0;
}

/* Makes room for one more entry, so that a slot found afterwards stays valid. */
static int index_reserve(struct index *ix)
{
	size_t n, i, mask;
	struct slot *slots;

	if ((ix->count + 1) * 4 <= ix->nslots * 3)
		return 0;
	n = ix->nslots ? ix->nslots * 2 : MIN_CAP;
	if (n > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	mask = n - 1;
	for (i = 0; i < ix->nslots; i++) {
		size_t j;

		if (!ix->slots[i].idx1)
			continue;
		for (j = ix->slots[i].hash & mask; slots[j].idx1; j = (j + 1) & mask)
			;
		slots[j] = ix->slots[i];
	}
	free(ix->slots);
	ix->slots = slots;
	ix->nslots = n;
	return 0;
}

/* The slot holding an entry equal to key, or the empty slot where it belongs. */
static struct slot *index_lookup(const struct profile *p, const struct index *ix, uint32_t hash,
				 index_eq_fn eq, const void *key)
{
	size_t mask = ix->nslots - 1, i = hash & mask;

	for (;; i = (i + 1) & mask) {
		struct slot *sl = &ix->slots[i];

		if (!sl->idx1 || (sl->hash == hash && eq(p, sl->idx1, key)))
			return sl;
	}
}

/* Returns arr, moved if needed, with room for need elements; NULL (arr intact) if out of memory. */
static void *reserve(void *arr, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : MIN_CAP;

	if (need <= *cap)
		return arr;
	while (n < need)
		n *= 2;
	arr = reallocarray(arr, n, elem);
	if (arr)
		*cap = n;
	return arr;
}

struct profile *profile__new(const struct profile_meta *meta)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (meta)
		p->meta = *meta;
	p->strings = strpool__new();
	if (!p->strings) {
		free(p);
		return NULL;
	}
	return p;
}

void profile__free(struct profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nsamples; i++)
		free((uint32_t *)p->samples[i].frames);
	free(p->samples);
	index_free(&p->sample_index);
	free(p->frames);
	free(p->inlines);
	index_free(&p->frame_index);
	free(p->mappings);
	index_free(&p->mapping_index);
	free(p->comments);
	free(p->from_frame);
	free(p->from_module);
	free(p->waiting);
	strpool__free(p->strings);
	free(p);
}

/* NULL is taken as "" so that optional strings never need special cases downstream. */
const char *profile__intern(struct profile *p, const char *s)
{
	long id = strpool__add(p->strings, s ? s : "");

	return id < 0 ? NULL : strpool__str(p->strings, (size_t)id);
}

static int mapping_eq(const struct profile *p, uint32_t idx1, const void *key)
{
	const struct profile_mapping *a = &p->mappings[idx1 - 1], *b = key;

	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->path == b->path && a->build_id == b->build_id && a->kernel == b->kernel;
}

static uint32_t mapping_hash(const struct profile_mapping *m)
{
	uint64_t h = HASH_SEED;

	h = mix(h, m->start);
	h = mix(h, m->limit);
	h = mix(h, m->offset);
	h = mix(h, (uintptr_t)m->path);
	h = mix(h, (uintptr_t)m->build_id);
	h = mix(h, m->kernel);
	return finish(h);
}

uint32_t profile__add_mapping(struct profile *p, const struct profile_mapping *m)
{
	struct profile_mapping key = *m, *arr;
	struct slot *sl;
	uint32_t hash;

	key.path = profile__intern(p, m->path);
	key.build_id = profile__intern(p, m->build_id);
	if (!key.path || !key.build_id)
		return 0;
	if (index_reserve(&p->mapping_index))
		return 0;
	hash = mapping_hash(&key);
	sl = index_lookup(p, &p->mapping_index, hash, mapping_eq, &key);
	if (sl->idx1)
		return sl->idx1;
	if (p->nmappings >= UINT32_MAX - 1)
		return 0;
	arr = reserve(p->mappings, &p->mappings_cap, p->nmappings + 1, sizeof(*arr));
	if (!arr)
		return 0;
	p->mappings = arr;
	p->mappings[p->nmappings++] = key;
	p->mapping_index.count++;
	sl->idx1 = (uint32_t)p->nmappings;
	sl->hash = hash;
	return sl->idx1;
}

/*
 * The kind frames are told apart by: a stand-in waiting for its name is the
 * frame of the same stand-in not waiting (both are named, or stay as they
 * are, when the frames are finished), as they were when only "no name" was
 * kept.
 */
static enum frame_kind merged_kind(enum frame_kind kind)
{
	return kind == FRAME_WAITING ? FRAME_UNNAMED : kind;
}

static int frame_eq(const struct profile *p, uint32_t idx1, const void *key)
{
	const struct profile_frame *a = &p->frames[idx1 - 1], *b = key;

	return a->mapping == b->mapping && a->address == b->address && a->name == b->name &&
	       a->system_name == b->system_name && a->kernel == b->kernel &&
	       merged_kind(a->kind) == merged_kind(b->kind);
}

static uint32_t frame_hash(const struct profile_frame *f)
{
	uint64_t h = HASH_SEED;

	h = mix(h, f->mapping);
	h = mix(h, f->address);
	h = mix(h, (uintptr_t)f->name);
	h = mix(h, (uintptr_t)f->system_name);
	h = mix(h, (uint64_t)merged_kind(f->kind) << 1 | f->kernel);
	return finish(h);
}

uint32_t profile__add_frame(struct profile *p, const struct profile_frame *f)
{
	struct profile_frame key = *f, *arr;
	struct slot *sl;
	uint32_t hash;

	if (f->mapping > p->nmappings) {
		pr_err("frame 0x%llx: mapping %u does not exist (%zu mappings)",
		       (unsigned long long)f->address, f->mapping, p->nmappings);
		return 0;
	}
	key.name = profile__intern(p, f->name);
	/* No separate raw name means the display name is the raw name. */
	key.system_name = f->system_name ? profile__intern(p, f->system_name) : key.name;
	key.file = f->file ? profile__intern(p, f->file) : NULL;
	key.ninlines = 0; /* given by profile__set_frame_inlines, in p's own array */
	if (!key.name || !key.system_name || (f->file && !key.file))
		return 0;
	if (index_reserve(&p->frame_index))
		return 0;
	hash = frame_hash(&key);
	sl = index_lookup(p, &p->frame_index, hash, frame_eq, &key);
	if (sl->idx1)
		return sl->idx1;
	if (p->nframes >= UINT32_MAX - 1)
		return 0;
	arr = reserve(p->frames, &p->frames_cap, p->nframes + 1, sizeof(*arr));
	if (!arr)
		return 0;
	p->frames = arr;
	p->frames[p->nframes++] = key;
	p->frame_index.count++;
	sl->idx1 = (uint32_t)p->nframes;
	sl->hash = hash;
	return sl->idx1;
}

/* Takes the slot of idx1 out of the index, moving later entries of its probe run back. */
static void index_remove(struct index *ix, uint32_t hash, uint32_t idx1)
{
	size_t mask = ix->nslots - 1, i = hash & mask, j, home;

	while (ix->slots[i].idx1 != idx1) {
		if (!ix->slots[i].idx1)
			return;
		i = (i + 1) & mask;
	}
	for (j = (i + 1) & mask; ix->slots[j].idx1; j = (j + 1) & mask) {
		home = ix->slots[j].hash & mask;
		/* An entry whose home lies cyclically in (i, j] is still reachable: leave it. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		ix->slots[i] = ix->slots[j];
		i = j;
	}
	ix->slots[i] = (struct slot){0};
	ix->count--;
}

int profile__set_frame_names(struct profile *p, uint32_t idx, const char *name,
			     const char *system_name, enum frame_kind kind, bool function_start)
{
	struct profile_frame key;
	struct slot *sl;
	uint32_t hash;

	if (!idx || idx > p->nframes)
		return -EINVAL;
	key = p->frames[idx - 1];
	key.name = profile__intern(p, name);
	key.system_name = system_name ? profile__intern(p, system_name) : key.name;
	key.kind = kind;
	key.function_start = function_start && !frame_kind__named(kind);
	if (!key.name || !key.system_name)
		return -ENOMEM;
	index_remove(&p->frame_index, frame_hash(&p->frames[idx - 1]), idx);
	p->frames[idx - 1] = key;
	/* Room was there before the removal. */
	hash = frame_hash(&key);
	sl = index_lookup(p, &p->frame_index, hash, frame_eq, &key);
	/* An equal frame already indexed stays the one add_frame finds; both are valid. */
	if (!sl->idx1) {
		sl->idx1 = idx;
		sl->hash = hash;
		p->frame_index.count++;
	}
	return 0;
}

/* The entry of id in an array indexed by id, grown (zeroed) to hold it; NULL if out of memory. */
static uint32_t *id_entry(uint32_t **arr, size_t *cap, uint32_t id)
{
	size_t old = *cap;
	uint32_t *a = reserve(*arr, cap, (size_t)id + 1, sizeof(*a));

	if (!a)
		return NULL;
	memset(a + old, 0, (*cap - old) * sizeof(*a));
	*arr = a;
	return &a[id];
}

/* The mapping of symbolizer module id, copied at first use. */
static int symbolized_mapping(struct profile *p, const struct symbolizer *s, uint32_t id,
			      uint32_t *idx)
{
	const struct symbolizer_module *m = symbolizer__module(s, id);
	struct profile_mapping pm;
	uint32_t *entry;

	if (!m)
		return -EINVAL;
	entry = id_entry(&p->from_module, &p->from_module_cap, id);
	if (!entry)
		return -ENOMEM;
	if (!*entry) {
		pm = (struct profile_mapping){
			.start = m->start,
			.limit = m->limit,
			.offset = m->offset,
			.path = m->path,
			.build_id = m->build_id,
			.kernel = m->kernel,
			.main_exe = m->main_exe,
		};
		*entry = profile__add_mapping(p, &pm);
		if (!*entry)
			return -ENOMEM;
	}
	*idx = *entry;
	return 0;
}

static int remember_waiting(struct profile *p, uint32_t frame, uint32_t id)
{
	struct waiting_frame *arr;

	arr = reserve(p->waiting, &p->waiting_cap, p->nwaiting + 1, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	p->waiting = arr;
	p->waiting[p->nwaiting++] = (struct waiting_frame){.frame = frame, .id = id};
	return 0;
}

/* The frame of symbolizer frame id, copied (with its mapping) at first use. */
static int symbolized_frame(struct profile *p, const struct symbolizer *s, uint32_t id,
			    uint32_t *idx)
{
	const struct symbolizer_frame *f = symbolizer__frame(s, id);
	struct profile_frame pf;
	uint32_t *entry, frame;
	int err;

	if (!f)
		return -EINVAL;
	entry = id_entry(&p->from_frame, &p->from_frame_cap, id);
	if (!entry)
		return -ENOMEM;
	if (*entry) {
		*idx = *entry;
		return 0;
	}
	pf = (struct profile_frame){
		.address = f->address,
		.name = f->name,
		.system_name = f->system_name,
		.kernel = f->kernel,
		.kind = f->kind,
		.function_start = f->function_start,
	};
	if (f->module) {
		err = symbolized_mapping(p, s, f->module, &pf.mapping);
		if (err)
			return err;
	}
	frame = profile__add_frame(p, &pf);
	if (!frame || (f->waiting && remember_waiting(p, frame, id)))
		return -ENOMEM;
	*entry = frame;
	*idx = frame;
	return 0;
}

/* Ids start over in each generation of the symbolizer: what p remembers of the last is stale. */
static void follow_generation(struct profile *p, const struct symbolizer *s)
{
	if (symbolizer__generation(s) == p->sym_generation)
		return;
	if (p->from_frame)
		memset(p->from_frame, 0, p->from_frame_cap * sizeof(*p->from_frame));
	if (p->from_module)
		memset(p->from_module, 0, p->from_module_cap * sizeof(*p->from_module));
	/* Their names went with a generation ended without p: they keep their stand-ins. */
	p->nwaiting = 0;
	p->sym_generation = symbolizer__generation(s);
}

int profile__add_symbolized(struct profile *p, const struct symbolizer *s, const uint32_t *ids,
			    uint32_t n, uint32_t *out)
{
	uint32_t i;
	int err;

	follow_generation(p, s);
	for (i = 0; i < n; i++) {
		err = symbolized_frame(p, s, ids[i], &out[i]);
		if (err)
			return err;
	}
	return 0;
}

int profile__set_frame_inlines(struct profile *p, uint32_t idx, const struct profile_inline *v,
			       uint16_t n)
{
	struct profile_inline *arr, *d;
	struct profile_frame *f;
	uint16_t i;

	if (!idx || idx > p->nframes)
		return -EINVAL;
	f = &p->frames[idx - 1];
	if (f->ninlines || !n)
		return 0;
	if (p->ninlines + n > UINT32_MAX)
		return -ENOMEM;
	arr = reserve(p->inlines, &p->inlines_cap, p->ninlines + n, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	p->inlines = arr;
	for (i = 0; i < n; i++) {
		d = &p->inlines[p->ninlines + i];
		d->name = profile__intern(p, v[i].name);
		d->system_name = profile__intern(p, v[i].system_name);
		d->file = v[i].file ? profile__intern(p, v[i].file) : NULL;
		d->line = v[i].line;
		if (!d->name || !d->system_name || (v[i].file && !d->file))
			return -ENOMEM;
	}
	f->inline_first = (uint32_t)p->ninlines;
	f->ninlines = n;
	p->ninlines += n;
	return 0;
}

const struct profile_inline *profile__inlines(const struct profile *p,
					      const struct profile_frame *f)
{
	return f->ninlines ? &p->inlines[f->inline_first] : NULL;
}

/* The functions inlined at symbolizer frame f, for frame idx. 0 or -ENOMEM. */
static int copy_inlines(struct profile *p, uint32_t idx, const struct symbolizer *s,
			const struct symbolizer_frame *f)
{
	const struct symbolizer_inline *v = symbolizer__inlines(s, f);
	struct profile_inline in[64];
	uint16_t i, n = f->ninlines < 64 ? f->ninlines : 64;

	for (i = 0; i < n; i++)
		in[i] = (struct profile_inline){v[i].name, v[i].system_name, v[i].file, v[i].line};
	return profile__set_frame_inlines(p, idx, in, n);
}

/* The source lines symbolizer__finish found for the frames p took from this generation. */
static int copy_lines(struct profile *p, const struct symbolizer *s)
{
	const struct symbolizer_frame *f;
	struct profile_frame *pf;
	uint32_t id;

	for (id = 1; id < p->from_frame_cap; id++) {
		if (!p->from_frame[id] || !(f = symbolizer__frame(s, id)))
			continue;
		pf = &p->frames[p->from_frame[id] - 1];
		/* Frames of several ids are one here (a leaf and a return address): the first
		 * stays. */
		if (pf->line_status || !f->line_status)
			continue;
		pf->file = f->file ? profile__intern(p, f->file) : NULL;
		if (f->file && !pf->file)
			return -ENOMEM;
		pf->line = f->line;
		pf->line_status = f->line_status;
		if (f->ninlines && copy_inlines(p, p->from_frame[id], s, f))
			return -ENOMEM;
	}
	return 0;
}

int profile__finish_frames(struct profile *p, struct symbolizer *s, bool last)
{
	int err = symbolizer__finish(s, last), e, copy_err = 0;
	const struct symbolizer_frame *f;
	size_t i;

	follow_generation(p, s);
	for (i = 0; i < p->nwaiting; i++) {
		f = symbolizer__frame(s, p->waiting[i].id);
		e = f ? profile__set_frame_names(p, p->waiting[i].frame, f->name, f->system_name,
						 f->kind, f->function_start)
		      : -EINVAL;
		if (e && !copy_err)
			copy_err = e;
	}
	p->nwaiting = 0;
	e = copy_lines(p, s);
	if (e && !copy_err)
		copy_err = e;
	return err ? err : copy_err;
}

struct sample_key {
	const uint32_t *frames;
	uint32_t nframes;
	struct profile_labels labels;
};

static int sample_eq(const struct profile *p, uint32_t idx1, const void *key)
{
	const struct profile_sample *a = &p->samples[idx1 - 1];
	const struct sample_key *b = key;

	return a->nframes == b->nframes && a->labels.pid == b->labels.pid &&
	       a->labels.ns_pid == b->labels.ns_pid && a->labels.tid == b->labels.tid &&
	       a->labels.comm == b->labels.comm && a->labels.thread_name == b->labels.thread_name &&
	       (!a->nframes || memcmp(a->frames, b->frames, a->nframes * sizeof(*a->frames)) == 0);
}

static uint32_t sample_hash(const struct sample_key *k)
{
	uint64_t h = HASH_SEED;
	uint32_t i;

	h = mix(h, (uint64_t)k->labels.pid << 32 | k->labels.tid);
	h = mix(h, (uintptr_t)k->labels.comm);
	h = mix(h, (uintptr_t)k->labels.thread_name);
	h = mix(h, k->nframes);
	for (i = 0; i < k->nframes; i++)
		h = mix(h, k->frames[i]);
	return finish(h);
}

int profile__add_sample(struct profile *p, const uint32_t *frames, uint32_t nframes,
			const struct profile_labels *labels, uint64_t count)
{
	static const struct profile_labels no_labels;
	struct sample_key key = {.frames = frames, .nframes = nframes};
	struct profile_sample *s;
	uint32_t *copy = NULL, i;
	struct slot *sl;
	uint32_t hash;
	int err;

	if (!labels)
		labels = &no_labels;
	key.labels = *labels;
	if (nframes && !frames)
		return -EINVAL;
	for (i = 0; i < nframes; i++) {
		if (!frames[i] || frames[i] > p->nframes) {
			pr_err("sample of pid %u: frame %u does not exist (%zu frames)",
			       labels->pid, frames[i], p->nframes);
			return -EINVAL;
		}
	}
	if (!count)
		return 0;
	key.labels.comm = profile__intern(p, labels->comm);
	key.labels.thread_name = profile__intern(p, labels->thread_name);
	if (!key.labels.comm || !key.labels.thread_name)
		return -ENOMEM;
	err = index_reserve(&p->sample_index);
	if (err)
		return err;
	hash = sample_hash(&key);
	sl = index_lookup(p, &p->sample_index, hash, sample_eq, &key);
	if (sl->idx1) {
		p->samples[sl->idx1 - 1].count += count;
		p->total_count += count;
		return 0;
	}
	if (p->nsamples >= UINT32_MAX - 1)
		return -E2BIG;
	s = reserve(p->samples, &p->samples_cap, p->nsamples + 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	p->samples = s;
	if (nframes) {
		copy = malloc(nframes * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, frames, nframes * sizeof(*copy));
	}
	s = &p->samples[p->nsamples++];
	s->frames = copy;
	s->nframes = nframes;
	s->labels = key.labels;
	s->count = count;
	p->sample_index.count++;
	sl->idx1 = (uint32_t)p->nsamples;
	sl->hash = hash;
	p->total_count += count;
	return 0;
}

int profile__add_comment(struct profile *p, const char *text)
{
	const char *s = profile__intern(p, text), **arr;

	if (!s)
		return -ENOMEM;
	arr = reserve(p->comments, &p->comments_cap, p->ncomments + 1, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	p->comments = arr;
	p->comments[p->ncomments++] = s;
	return 0;
}

const struct profile_meta *profile__meta(const struct profile *p)
{
	return &p->meta;
}

void profile__set_duration(struct profile *p, uint64_t duration_ns)
{
	p->meta.duration_ns = duration_ns;
}

void profile__set_time(struct profile *p, uint64_t time_ns)
{
	p->meta.time_ns = time_ns;
}

void profile__set_main_pid(struct profile *p, uint32_t pid)
{
	p->meta.main_pid = pid;
}

size_t profile__mapping_count(const struct profile *p)
{
	return p->nmappings;
}

const struct profile_mapping *profile__mapping(const struct profile *p, uint32_t idx)
{
	return idx && idx <= p->nmappings ? &p->mappings[idx - 1] : NULL;
}

size_t profile__frame_count(const struct profile *p)
{
	return p->nframes;
}

const struct profile_frame *profile__frame(const struct profile *p, uint32_t idx)
{
	return idx && idx <= p->nframes ? &p->frames[idx - 1] : NULL;
}

size_t profile__sample_count(const struct profile *p)
{
	return p->nsamples;
}

const struct profile_sample *profile__sample(const struct profile *p, size_t i)
{
	return i < p->nsamples ? &p->samples[i] : NULL;
}

size_t profile__comment_count(const struct profile *p)
{
	return p->ncomments;
}

const char *profile__comment(const struct profile *p, size_t i)
{
	return i < p->ncomments ? p->comments[i] : NULL;
}

uint64_t profile__total_count(const struct profile *p)
{
	return p->total_count;
}

/* Copies frame idx of src into dst (with its mapping) unless done before; 0 if out of memory. */
static uint32_t copy_frame(struct profile *dst, const struct profile *src, struct u64map *done,
			   uint32_t idx)
{
	struct profile_frame f = src->frames[idx - 1];
	uint64_t v;

	if (u64map__get(done, idx, &v))
		return (uint32_t)v;
	if (f.mapping) {
		f.mapping = profile__add_mapping(dst, &src->mappings[f.mapping - 1]);
		if (!f.mapping)
			return 0;
	}
	v = profile__add_frame(dst, &f);
	if (v && f.ninlines &&
	    profile__set_frame_inlines(dst, (uint32_t)v, profile__inlines(src, &f), f.ninlines))
		return 0;
	if (v && u64map__set(done, idx, v))
		return 0;
	return (uint32_t)v;
}

int profile__split_by_pid(const struct profile *p, struct profile ***parts_out, size_t *nparts)
{
	struct u64map *by_pid = u64map__new(), **frame_maps = NULL;
	struct profile_meta meta = p->meta;
	struct profile **parts = NULL;
	uint32_t *frames = NULL;
	size_t n = 0, cap = 0, i, j, maxf = 0;
	int err = 0;

	*parts_out = NULL;
	*nparts = 0;
	for (i = 0; i < p->nsamples; i++)
		if (p->samples[i].nframes > maxf)
			maxf = p->samples[i].nframes;
	frames = malloc((maxf ? maxf : 1) * sizeof(*frames));
	if (!by_pid || !frames) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < p->nsamples && !err; i++) {
		const struct profile_sample *s = &p->samples[i];
		uint64_t k;

		if (!u64map__get(by_pid, s->labels.pid, &k)) {
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct profile **np = reallocarray(parts, nc, sizeof(*np));
				struct u64map **nm =
					np ? reallocarray(frame_maps, nc, sizeof(*nm)) : NULL;

				if (np)
					parts = np;
				if (!nm) {
					err = -ENOMEM;
					break;
				}
				frame_maps = nm;
				cap = nc;
			}
			/* One process's profile: its program is the main binary. */
			meta.whole_system = false;
			meta.main_pid = s->labels.pid;
			parts[n] = profile__new(&meta);
			frame_maps[n] = u64map__new();
			k = n++;
			if (!parts[k] || !frame_maps[k] || u64map__set(by_pid, s->labels.pid, k)) {
				err = -ENOMEM;
				break;
			}
			for (j = 0; j < p->ncomments && !err; j++)
				err = profile__add_comment(parts[k], p->comments[j]);
		}
		for (j = 0; j < s->nframes && !err; j++) {
			frames[j] = copy_frame(parts[k], p, frame_maps[k], s->frames[j]);
			if (!frames[j])
				err = -ENOMEM;
		}
		if (!err)
			err = profile__add_sample(parts[k], frames, s->nframes, &s->labels,
						  s->count);
	}
cleanup:
	for (i = 0; i < n; i++)
		u64map__free(frame_maps[i]);
	free(frame_maps);
	free(frames);
	u64map__free(by_pid);
	if (err) {
		for (i = 0; i < n; i++)
			profile__free(parts[i]);
		free(parts);
		return err;
	}
	*parts_out = parts;
	*nparts = n;
	return 0;
}
