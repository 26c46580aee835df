// SPDX-License-Identifier: MIT
/*
 * pprof encoder. A first pass gives every string, function and mapping
 * attribute its pprof ID; the second streams the message through pb_writer
 * without building it in memory. Choices the format leaves open:
 *
 * - IDs: location IDs are the profile model's 1-based indices, mapping and
 *   function IDs 1..N in table order: Parca requires dense IDs.
 * - The first mapping is what pprof's tools take for the main binary ("File:
 *   NAME" in every report): the program of the profile's command or -p
 *   process (profile_meta), and in a whole-system profile, which has none, a
 *   mapping of nothing with no file, so that pprof names no program rather
 *   than whichever came first.
 * - One Location per model frame, with one Line per function inlined at
 *   its address, innermost first, then the frame's own (its symbol's), as
 *   pprof's own profiles do; each with its source line when its file's
 *   DWARF has one. Unresolved frames keep their "module+offset" fallback
 *   name so that every frame is readable without the binaries at hand.
 * - Function.filename is the source file of the frame's line, as the line
 *   table names it, or empty: never the binary's path, which would make
 *   `pprof -list` read the binary as source. Functions are deduplicated by
 *   (name, system_name, filename), as pprof's own symbolizer does.
 * - Function.system_name is left empty when it would be the name and the
 *   name holds parentheses or angle brackets. pprof takes a function whose
 *   system_name is its name for one it must still demangle, and cuts every
 *   (...) and <...> out of a name that looks like C++ to it ("::" or
 *   brackets): V8's perf map name "RegExp:([a-z]+)(\d+)" became "RegExp:",
 *   every expression one function.
 * - Mapping.has_functions is set when at least one frame of the mapping was
 *   resolved. pprof re-symbolizes the mappings where it is false when it
 *   finds their binaries, replacing the "module+offset" fallback names.
 * - Values are samples/count and cpu/nanoseconds (count * period); the
 *   default sample type is cpu, so pprof shows CPU time.
 * - Labels: pid (num), comm (str), thread_name (str), ns_pid (num) only for
 *   processes whose PID in their own namespace differs, and tid (num) only
 *   for per-thread profiles. Empty strings are not written as labels: pprof
 *   readers drop a label whose value is string 0 anyway.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define LOG_MODULE "pprof"
#include "build/profile.h"
#include "encode/compress.h"
#include "lib/pb_writer.h"
#include "encode/pprof.h"
#include "encode/pprof_proto.h"
#include "lib/log.h"
#include "lib/strpool.h"
#include "lib/u64map.h"

struct func_info {
	uint32_t name; /* string IDs */
	uint32_t system_name;
	uint32_t filename;
	uint32_t same_names; /* the next function ID with the same names (another file); 0: none */
};

struct mapping_info {
	uint32_t filename; /* string IDs */
	uint32_t build_id;
	bool has_functions;
};

struct sample_info {
	uint32_t comm; /* string IDs, 0 when empty */
	uint32_t thread_name;
};

/* Fixed strings; 0 when not in the table because nothing uses them. */
struct known_strings {
	uint32_t samples, count, cpu, nanoseconds;
	uint32_t pid, tid, comm, thread_name, ns_pid;
};

struct encoder {
	const struct profile *p;
	struct strpool *strings;
	struct known_strings s;
	uint32_t *frame_func;  /* function ID of each frame, by frame index - 1 */
	uint32_t *inline_func; /* function ID of each inlined function, by
				  profile_frame.inline_first */
	struct func_info *funcs;
	size_t nfuncs;
	struct mapping_info *maps;
	uint32_t *map_id; /* the ID each mapping is written with, by mapping index - 1 */
	uint32_t *map_at; /* the mapping index written at each position (0: of nothing) */
	size_t nmaps;	  /* mappings written */
	struct sample_info *samples;
	uint64_t *comments; /* string IDs */
};

/* Writers for proto3 scalars, which are left out when they hold the default 0. */
static void put_u64(struct pb_writer *w, uint32_t field, uint64_t v)
{
	if (v)
		pb_writer__uint64(w, field, v);
}

static void put_bool(struct pb_writer *w, uint32_t field, bool v)
{
	if (v)
		pb_writer__bool(w, field, v);
}

static int add_string(struct encoder *e, const char *s, uint32_t *id)
{
	long r = strpool__add(e->strings, s ? s : "");

	if (r < 0)
		return (int)r;
	if (r > UINT32_MAX)
		return -E2BIG;
	*id = (uint32_t)r;
	return 0;
}

static int collect_samples(struct encoder *e)
{
	size_t i, n = profile__sample_count(e->p);
	int err = 0;

	e->samples = calloc(n ? n : 1, sizeof(*e->samples));
	if (!e->samples)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++) {
		const struct profile_sample *s = profile__sample(e->p, i);
		struct sample_info *si = &e->samples[i];

		err = add_string(e, "pid", &e->s.pid);
		if (!err && s->labels.comm && *s->labels.comm) {
			err = add_string(e, "comm", &e->s.comm);
			if (!err)
				err = add_string(e, s->labels.comm, &si->comm);
		}
		if (!err && s->labels.thread_name && *s->labels.thread_name) {
			err = add_string(e, "thread_name", &e->s.thread_name);
			if (!err)
				err = add_string(e, s->labels.thread_name, &si->thread_name);
		}
		if (!err && s->labels.tid)
			err = add_string(e, "tid", &e->s.tid);
		if (!err && s->labels.ns_pid)
			err = add_string(e, "ns_pid", &e->s.ns_pid);
	}
	return err;
}

/*
 * The program whose own file has the most samples (of process pid; 0: of
 * all), or 0 when no such sample is in a program's file: "File: xz", not
 * the libc or kernel that happened to be seen first.
 */
static uint32_t most_sampled_program(const struct encoder *e, size_t n, uint32_t pid)
{
	uint64_t *weight = calloc(n + 1, sizeof(*weight)), best_w = 0;
	size_t *seen = calloc(n + 1, sizeof(*seen)), i, j;
	uint32_t best = 0, m;

	for (i = 0; weight && seen && i < profile__sample_count(e->p); i++) {
		const struct profile_sample *smp = profile__sample(e->p, i);

		for (j = 0; j < smp->nframes && (!pid || smp->labels.pid == pid); j++) {
			m = profile__frame(e->p, smp->frames[j])->mapping;
			if (!m || m > n || seen[m] == i + 1 || !profile__mapping(e->p, m)->main_exe)
				continue;
			seen[m] = i + 1; /* once per sample */
			weight[m] += smp->count;
			if (weight[m] > best_w || (weight[m] == best_w && m < best)) {
				best_w = weight[m];
				best = m;
			}
		}
	}
	free(weight);
	free(seen);
	return best;
}

/* The profile's main binary: its mapping index, or 0 for none (see the top). */
static uint32_t main_mapping(const struct encoder *e, size_t n)
{
	const struct profile_meta *meta = profile__meta(e->p);
	uint32_t m = 0;

	if (meta->whole_system)
		return 0;
	if (meta->main_pid)
		m = most_sampled_program(e, n, meta->main_pid);
	return m ? m : most_sampled_program(e, n, 0);
}

/*
 * Mapping IDs: the main program's mapping 1, the others in their order;
 * with no main program, 1 is a mapping of nothing (map_at 0).
 */
static int order_mappings(struct encoder *e, size_t n)
{
	uint32_t first = main_mapping(e, n), at = 0, i;

	e->map_id = calloc(n + 1, sizeof(*e->map_id));
	e->map_at = calloc(n + 2, sizeof(*e->map_at));
	if (!e->map_id || !e->map_at)
		return -ENOMEM;
	if (first)
		e->map_at[at++] = first;
	else if (profile__meta(e->p)->whole_system)
		e->map_at[at++] = 0;
	for (i = 1; i <= n; i++)
		if (i != first)
			e->map_at[at++] = i;
	e->nmaps = at;
	for (i = 0; i < at; i++)
		if (e->map_at[i])
			e->map_id[e->map_at[i] - 1] = i + 1;
	return 0;
}

static int collect_mappings(struct encoder *e)
{
	size_t i, n = profile__mapping_count(e->p), nframes = profile__frame_count(e->p);
	int err = 0;

	e->maps = calloc(n ? n : 1, sizeof(*e->maps));
	if (!e->maps || order_mappings(e, n))
		return -ENOMEM;
	for (i = 1; i <= nframes; i++) {
		const struct profile_frame *f = profile__frame(e->p, (uint32_t)i);

		if (f->mapping && f->mapping <= n && frame_kind__named(f->kind))
			e->maps[f->mapping - 1].has_functions = true;
	}
	for (i = 0; i < n && !err; i++) {
		const struct profile_mapping *m = profile__mapping(e->p, (uint32_t)(i + 1));

		err = add_string(e, m->kernel ? PPROF_KERNEL_MAPPING : m->path,
				 &e->maps[i].filename);
		if (!err)
			err = add_string(e, m->build_id, &e->maps[i].build_id);
	}
	return err;
}

/*
 * The ID of the function fi among those with its names (first: the first
 * of them, 0: none yet), or 0 after adding it: as the chain's head when
 * there was none (the caller indexes it), else at its end.
 */
static uint32_t function_id(struct encoder *e, uint32_t first, const struct func_info *fi)
{
	uint32_t id = first, last = 0;

	for (; id; last = id, id = e->funcs[id - 1].same_names)
		if (e->funcs[id - 1].filename == fi->filename)
			return id;
	e->funcs[e->nfuncs++] = *fi;
	if (last)
		e->funcs[last - 1].same_names = (uint32_t)e->nfuncs;
	return last ? (uint32_t)e->nfuncs : 0;
}

/* The function ID of (name, system_name, file) into *out; ids: names' string IDs -> ID. */
static int function_of(struct encoder *e, struct u64map *ids, const char *name,
		       const char *system_name, const char *file, uint32_t *out)
{
	struct func_info fi = {0};
	uint64_t key, id;
	int err;

	err = add_string(e, name, &fi.name);
	if (!err)
		err = add_string(e, system_name ? system_name : name, &fi.system_name);
	if (err)
		return err;
	if (fi.system_name == fi.name && strpbrk(name, "()<>"))
		fi.system_name = 0; /* the empty string: no other name */
	err = file ? add_string(e, file, &fi.filename) : 0;
	if (err)
		return err;
	key = (uint64_t)fi.name << 32 | fi.system_name;
	if (!u64map__get(ids, key, &id))
		id = 0;
	id = function_id(e, (uint32_t)id, &fi);
	if (!id)
		err = u64map__set(ids, key, e->nfuncs);
	*out = id ? (uint32_t)id : (uint32_t)e->nfuncs;
	return err;
}

/* The inlined functions of the frames: how many entries the profile's array has. */
static size_t inline_count(const struct profile *p)
{
	size_t i, n = 0;

	for (i = 1; i <= profile__frame_count(p); i++) {
		const struct profile_frame *f = profile__frame(p, (uint32_t)i);

		if (f->ninlines && f->inline_first + f->ninlines > n)
			n = f->inline_first + f->ninlines;
	}
	return n;
}

/* The function IDs of f's inlined functions into e->inline_func. */
static int inline_functions(struct encoder *e, struct u64map *ids, const struct profile_frame *f)
{
	const struct profile_inline *v = profile__inlines(e->p, f);
	uint16_t j;
	int err = 0;

	for (j = 0; j < f->ninlines && !err; j++)
		err = function_of(e, ids, v[j].name, v[j].system_name, v[j].file,
				  &e->inline_func[f->inline_first + j]);
	return err;
}

static int collect_functions(struct encoder *e)
{
	size_t i, n = profile__frame_count(e->p), ni = inline_count(e->p);
	struct u64map *ids = u64map__new(); /* (name, system_name) string IDs -> function ID */
	int err = 0;

	e->frame_func = calloc(n ? n : 1, sizeof(*e->frame_func));
	e->inline_func = calloc(ni ? ni : 1, sizeof(*e->inline_func));
	e->funcs = calloc(n + ni ? n + ni : 1, sizeof(*e->funcs));
	if (!ids || !e->frame_func || !e->inline_func || !e->funcs) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n && !err; i++) {
		const struct profile_frame *f = profile__frame(e->p, (uint32_t)(i + 1));

		err = inline_functions(e, ids, f);
		if (!err)
			err = function_of(e, ids, f->name, f->system_name, f->file,
					  &e->frame_func[i]);
	}
cleanup:
	u64map__free(ids);
	return err;
}

static int collect_comments(struct encoder *e)
{
	size_t i, n = profile__comment_count(e->p);
	int err = 0;

	e->comments = calloc(n ? n : 1, sizeof(*e->comments));
	if (!e->comments)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++) {
		uint32_t id = 0;

		err = add_string(e, profile__comment(e->p, i), &id);
		e->comments[i] = id;
	}
	return err;
}

/* Gives IDs in the order pprof's own encoder does: sample types, labels, mappings, functions. */
static int collect(struct encoder *e)
{
	uint32_t empty;
	int err;

	err = add_string(e, "", &empty);
	if (!err)
		err = add_string(e, "samples", &e->s.samples);
	if (!err)
		err = add_string(e, "count", &e->s.count);
	if (!err)
		err = add_string(e, "cpu", &e->s.cpu);
	if (!err)
		err = add_string(e, "nanoseconds", &e->s.nanoseconds);
	if (!err)
		err = collect_samples(e);
	if (!err)
		err = collect_mappings(e);
	if (!err)
		err = collect_functions(e);
	if (!err)
		err = collect_comments(e);
	return err;
}

struct value_type {
	uint32_t type, unit;
};

static int encode_value_type(struct pb_writer *w, const void *msg)
{
	const struct value_type *vt = msg;

	put_u64(w, VALUE_TYPE_TYPE, vt->type);
	put_u64(w, VALUE_TYPE_UNIT, vt->unit);
	return w->err;
}

struct label {
	uint32_t key, str;
	uint64_t num;
};

static int encode_label(struct pb_writer *w, const void *msg)
{
	const struct label *l = msg;

	put_u64(w, LABEL_KEY, l->key);
	put_u64(w, LABEL_STR, l->str);
	put_u64(w, LABEL_NUM, l->num);
	return w->err;
}

struct item {
	const struct encoder *e;
	size_t i; /* 0-based table index */
};

static int encode_sample(struct pb_writer *w, const void *msg)
{
	const struct item *it = msg;
	const struct encoder *e = it->e;
	const struct profile_sample *s = profile__sample(e->p, it->i);
	const struct sample_info *si = &e->samples[it->i];
	uint64_t values[2] = {s->count, s->count * profile__meta(e->p)->period_ns};
	struct label l;

	pb_writer__packed_uint32(w, SAMPLE_LOCATION_ID, s->frames, s->nframes);
	pb_writer__packed_uint64(w, SAMPLE_VALUE, values, 2);
	l = (struct label){.key = e->s.pid, .num = s->labels.pid};
	pb_writer__submessage(w, SAMPLE_LABEL, encode_label, &l);
	if (si->comm) {
		l = (struct label){.key = e->s.comm, .str = si->comm};
		pb_writer__submessage(w, SAMPLE_LABEL, encode_label, &l);
	}
	if (si->thread_name) {
		l = (struct label){.key = e->s.thread_name, .str = si->thread_name};
		pb_writer__submessage(w, SAMPLE_LABEL, encode_label, &l);
	}
	if (s->labels.tid) {
		l = (struct label){.key = e->s.tid, .num = s->labels.tid};
		pb_writer__submessage(w, SAMPLE_LABEL, encode_label, &l);
	}
	if (s->labels.ns_pid) {
		l = (struct label){.key = e->s.ns_pid, .num = s->labels.ns_pid};
		pb_writer__submessage(w, SAMPLE_LABEL, encode_label, &l);
	}
	return w->err;
}

static int encode_mapping(struct pb_writer *w, const void *msg)
{
	const struct item *it = msg;
	uint32_t idx = it->e->map_at[it->i];
	const struct profile_mapping *m;
	const struct mapping_info *mi;

	put_u64(w, MAPPING_ID, it->i + 1);
	if (!idx)
		return w->err; /* the whole system's: no program, no file */
	m = profile__mapping(it->e->p, idx);
	mi = &it->e->maps[idx - 1];
	put_u64(w, MAPPING_MEMORY_START, m->start);
	put_u64(w, MAPPING_MEMORY_LIMIT, m->limit);
	put_u64(w, MAPPING_FILE_OFFSET, m->offset);
	put_u64(w, MAPPING_FILENAME, mi->filename);
	put_u64(w, MAPPING_BUILD_ID, mi->build_id);
	put_bool(w, MAPPING_HAS_FUNCTIONS, mi->has_functions);
	return w->err;
}

struct line_msg {
	uint32_t function_id;
	uint32_t line;
};

static int encode_line(struct pb_writer *w, const void *msg)
{
	const struct line_msg *l = msg;

	put_u64(w, LINE_FUNCTION_ID, l->function_id);
	put_u64(w, LINE_LINE, l->line);
	return w->err;
}

static int encode_location(struct pb_writer *w, const void *msg)
{
	const struct item *it = msg;
	const struct profile_frame *f = profile__frame(it->e->p, (uint32_t)(it->i + 1));
	const struct profile_inline *v = profile__inlines(it->e->p, f);
	struct line_msg line = {it->e->frame_func[it->i], f->file ? f->line : 0}, in;
	uint16_t j;

	put_u64(w, LOCATION_ID, it->i + 1);
	put_u64(w, LOCATION_MAPPING_ID, f->mapping ? it->e->map_id[f->mapping - 1] : 0);
	put_u64(w, LOCATION_ADDRESS, f->address);
	for (j = 0; j < f->ninlines; j++) {
		in = (struct line_msg){it->e->inline_func[f->inline_first + j],
				       v[j].file ? v[j].line : 0};
		pb_writer__submessage(w, LOCATION_LINE, encode_line, &in);
	}
	pb_writer__submessage(w, LOCATION_LINE, encode_line, &line);
	return w->err;
}

static int encode_function(struct pb_writer *w, const void *msg)
{
	const struct item *it = msg;
	const struct func_info *fi = &it->e->funcs[it->i];

	put_u64(w, FUNCTION_ID, it->i + 1);
	put_u64(w, FUNCTION_NAME, fi->name);
	put_u64(w, FUNCTION_SYSTEM_NAME, fi->system_name);
	put_u64(w, FUNCTION_FILENAME, fi->filename);
	return w->err;
}

static int encode_table(struct pb_writer *w, const struct encoder *e, uint32_t field, size_t n,
			pb_encode_fn fn)
{
	struct item it = {.e = e};

	for (it.i = 0; it.i < n && !w->err; it.i++)
		pb_writer__submessage(w, field, fn, &it);
	return w->err;
}

static int encode_profile(struct pb_writer *w, const struct encoder *e)
{
	const struct profile_meta *meta = profile__meta(e->p);
	struct value_type count = {e->s.samples, e->s.count};
	struct value_type cpu = {e->s.cpu, e->s.nanoseconds};
	size_t i, nstrings = strpool__count(e->strings);

	pb_writer__submessage(w, PROFILE_SAMPLE_TYPE, encode_value_type, &count);
	pb_writer__submessage(w, PROFILE_SAMPLE_TYPE, encode_value_type, &cpu);
	encode_table(w, e, PROFILE_SAMPLE, profile__sample_count(e->p), encode_sample);
	encode_table(w, e, PROFILE_MAPPING, e->nmaps, encode_mapping);
	encode_table(w, e, PROFILE_LOCATION, profile__frame_count(e->p), encode_location);
	encode_table(w, e, PROFILE_FUNCTION, e->nfuncs, encode_function);
	for (i = 0; i < nstrings && !w->err; i++)
		pb_writer__string(w, PROFILE_STRING_TABLE, strpool__str(e->strings, i));
	put_u64(w, PROFILE_TIME_NANOS, meta->time_ns);
	put_u64(w, PROFILE_DURATION_NANOS, meta->duration_ns);
	pb_writer__submessage(w, PROFILE_PERIOD_TYPE, encode_value_type, &cpu);
	put_u64(w, PROFILE_PERIOD, meta->period_ns);
	pb_writer__packed_uint64(w, PROFILE_COMMENT, e->comments, profile__comment_count(e->p));
	put_u64(w, PROFILE_DEFAULT_SAMPLE_TYPE, e->s.cpu);
	return w->err;
}

/* The tables of the first pass, then the message into w. */
static int encode_into(const struct profile *p, struct pb_writer *w)
{
	struct encoder e = {.p = p};
	int err;

	e.strings = strpool__new();
	if (!e.strings) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = collect(&e);
	if (err) {
		pr_err("building tables: %s", strerror(-err));
		goto cleanup;
	}
	err = encode_profile(w, &e);
	if (err)
		pr_err("encoding: %s", strerror(-err));
cleanup:
	free(e.comments);
	free(e.samples);
	free(e.maps);
	free(e.map_id);
	free(e.map_at);
	free(e.funcs);
	free(e.frame_func);
	free(e.inline_func);
	strpool__free(e.strings);
	return err;
}

/* Compressed as it is encoded: the uncompressed message is never held whole. */
int pprof__encode_gz(const struct profile *p, uint8_t **out, size_t *out_len)
{
	struct gzip_stream *gz;
	struct pb_writer w;
	int err;

	*out = NULL;
	*out_len = 0;
	err = compress__gzip_begin(&gz);
	if (err)
		return err;
	pb_writer__init_sink(&w, compress__gzip_write, gz);
	err = encode_into(p, &w);
	if (err) {
		compress__gzip_free(gz);
		return err;
	}
	return compress__gzip_end(gz, out, out_len);
}
