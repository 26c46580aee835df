// SPDX-License-Identifier: MIT
/*
 * The pprof reader; see pprof_input.h. The message is read where it lies,
 * in three walks over its top-level fields:
 *
 * 1. The tables. Each string, mapping, location and function is noted by
 *    where its bytes are (and its id), not decoded; sample types, period
 *    and times are read. Protobuf lets the tables come in any order, so
 *    string indexes are checked after this walk, and ids once the tables
 *    are sorted by id.
 * 2. The comments: those cprof writes say the profile is cprof's (whose
 *    JIT code is in mappings without a name) and how many samples it lost.
 * 3. The samples, each drawn as it is read. A location is decoded when a
 *    sample first names it, into the pieces of its frames, which the next
 *    samples reuse.
 *
 * What the reader keeps is an entry of fixed size per table element (8
 * bytes a string, 16 a mapping or function, 24 a location) and the pieces
 * of the locations samples name: at most 6 bytes per byte of the message,
 * whose smallest location takes 4 (real profiles: under 1). Nothing is
 * allocated for a count the input claims, only for what it holds. The
 * nesting is profile.proto's (sample, label; location, line), and groups
 * (wire types 3 and 4, which nest without end) are refused, as pprof
 * refuses them.
 *
 * Strictness is pprof's where pprof checks (a bad varint, a length past the
 * end, a string index out of range, an id 0 or twice, a sample whose value
 * count is not the sample types', a location or function it names that is
 * not there), and more where it is lenient on what is drawn: a location
 * naming a mapping that is not there is refused, as no frame can be named
 * from it. Elements no sample uses are checked for their form only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "encode/compress.h"
#include "encode/flame.h"
#include "encode/pprof_input.h"
#include "encode/pprof_proto.h"
#include "lib/array.h"
#include "lib/sbuf.h"

/* Every table element's id: MAPPING_ID, LOCATION_ID, FUNCTION_ID. */
#define ID 1

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LEN = 2, WIRE_FIXED32 = 5 };

#define UNSET	      UINT32_MAX
#define MAX_VARINT    10
#define CPROF_COMMENT "cprof: "
#define CPROF_LOSS    "cprof: samples taken "
#define UNKNOWN	      "[unknown]"

/* Bytes of the message: a string, or a table element. */
struct span {
	uint32_t off, len;
};

struct entry {
	uint64_t id;
	uint32_t off, len;
};

struct table {
	struct entry *v;
	size_t n, cap;
	const char *what; /* "mapping", ... */
};

struct value_type {
	uint64_t type, unit; /* string indexes */
};

/* What is left to read of a message. */
struct pb {
	const uint8_t *p, *end;
};

struct field {
	uint32_t num;
	uint32_t wire;
	uint64_t v;	   /* WIRE_VARINT, and the fixed ones */
	struct pb sub;	   /* WIRE_LEN */
	const uint8_t *at; /* its key */
};

/* A mapping, as much as names a frame. */
struct map_info {
	bool present;
	uint64_t start, limit, offset;
	struct span file;
	bool kernel, jit;
};

struct labels {
	uint64_t comm, thread; /* string indexes; 0: none */
	int64_t tid;
	bool has_tid;
};

struct reader {
	const uint8_t *data;
	size_t len;
	struct flame *f;
	struct pprof_input_info *info;
	const char *sample_type;

	struct span *strings;
	size_t nstrings, strings_cap;
	struct table maps, locs, funcs;
	struct value_type *types;
	size_t ntypes, types_cap;
	struct value_type period_type;
	uint64_t period, time_ns, duration_ns; /* int64 in the message */
	uint64_t default_type, drop_frames, keep_frames;
	size_t nsamples;
	size_t vi; /* the value drawn, of each sample's */
	bool cprof;

	uint32_t *loc_first, *loc_n; /* by location index: its pieces in pool, root first */
	uint32_t *pool;
	size_t npool, pool_cap;
	uint64_t *ids; /* a sample's location ids */
	size_t ids_cap;
	uint64_t *fids; /* a location's function ids */
	size_t fids_cap;
	uint32_t *pieces; /* a sample's, root first */
	struct sbuf name;
};

/* The first error's reason, with the byte it is at; -EBADMSG. */
static int __attribute__((format(printf, 3, 4)))
fail(struct reader *r, const uint8_t *at, const char *fmt, ...)
{
	char *why = r->info->why;
	size_t size = sizeof(r->info->why);
	va_list ap;
	int n;

	if (why[0])
		return -EBADMSG;
	va_start(ap, fmt);
	n = vsnprintf(why, size, fmt, ap);
	va_end(ap);
	if (at && n >= 0 && (size_t)n < size)
		snprintf(why + n, size - (size_t)n, " (byte %zu)", (size_t)(at - r->data));
	return -EBADMSG;
}

/* A base-128 number: at most 10 bytes, the 10th holding only bit 63. */
static int varint(struct reader *r, struct pb *b, uint64_t *v)
{
	const uint8_t *start = b->p;
	uint64_t x = 0;
	unsigned i;

	for (i = 0; i < MAX_VARINT; i++) {
		if (b->p == b->end)
			return fail(r, start, "a number cut short by the end of its message");
		if (i == MAX_VARINT - 1 && *b->p > 1)
			return fail(r, start, "a number of more than 64 bits");
		x |= (uint64_t)(*b->p & 0x7f) << (7 * i);
		if (!(*b->p++ & 0x80))
			break;
	}
	*v = x;
	return 0;
}

static uint64_t load_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static int next_field(struct reader *r, struct pb *b, struct field *f)
{
	uint64_t key, n;
	int err;

	*f = (struct field){.at = b->p};
	err = varint(r, b, &key);
	if (err)
		return err;
	if (key >> 3 == 0 || key >> 3 > (1u << 29) - 1)
		return fail(r, f->at, "field number %" PRIu64 ", not one protobuf allows",
			    key >> 3);
	f->num = (uint32_t)(key >> 3);
	f->wire = (uint32_t)(key & 7);
	switch (f->wire) {
	case WIRE_VARINT:
		return varint(r, b, &f->v);
	case WIRE_FIXED64:
	case WIRE_FIXED32:
		n = f->wire == WIRE_FIXED64 ? 8 : 4;
		if ((size_t)(b->end - b->p) < n)
			return fail(r, f->at, "field %u cut short by the end of its message",
				    f->num);
		f->v = load_le(b->p, (unsigned)n);
		b->p += n;
		return 0;
	case WIRE_LEN:
		err = varint(r, b, &n);
		if (err)
			return err;
		if (n > (uint64_t)(b->end - b->p))
			return fail(r, f->at,
				    "field %u of %" PRIu64 " bytes, past the end of its message",
				    f->num, n);
		f->sub = (struct pb){b->p, b->p + n};
		b->p += n;
		return 0;
	default:
		return fail(r, f->at, "field %u of wire type %u (a group, or none)", f->num,
			    f->wire);
	}
}

/* what: the message the field is of ("profile", "mapping", ...). */
static int expect(struct reader *r, const struct field *f, uint32_t wire, const char *what)
{
	if (f->wire == wire)
		return 0;
	return fail(r, f->at, "%s field %u of wire type %u, not %u", what, f->num, f->wire, wire);
}

/* A repeated number, packed (one field of many) or not (one field each). */
struct varints {
	struct pb b;
	uint64_t one;
	bool packed, done;
};

static int varints_begin(struct reader *r, const struct field *f, const char *what,
			 struct varints *it)
{
	*it = (struct varints){.b = f->sub, .one = f->v, .packed = f->wire == WIRE_LEN};
	if (f->wire == WIRE_LEN || f->wire == WIRE_VARINT)
		return 0;
	return fail(r, f->at, "%s field %u of wire type %u, not 0 or 2", what, f->num, f->wire);
}

/* The next number into *v; false at the end, or at an error (*err). */
static bool varints_next(struct reader *r, struct varints *it, uint64_t *v, int *err)
{
	if (*err)
		return false;
	if (!it->packed) {
		*v = it->one;
		return !it->done && (it->done = true);
	}
	if (it->b.p == it->b.end)
		return false;
	*err = varint(r, &it->b, v);
	return !*err;
}

/*
 * The numbers of a message whose fields 1 to n - 1 are all numbers (ids,
 * string indexes, addresses), into v[1..n-1], 0 for those it lacks; of a
 * field given twice the last counts, as protobuf merges. Its other fields
 * are checked for their form and skipped.
 */
static int read_numbers(struct reader *r, struct pb b, const char *what, uint64_t *v, uint32_t n)
{
	struct field f;
	int err;

	memset(v, 0, n * sizeof(*v));
	while (b.p < b.end) {
		err = next_field(r, &b, &f);
		if (!err && f.num < n)
			err = expect(r, &f, WIRE_VARINT, what);
		if (err)
			return err;
		if (f.num < n)
			v[f.num] = f.v;
	}
	return 0;
}

/* The numbers of field f of parent's, which must be a message (a what). */
static int read_message(struct reader *r, const struct field *f, const char *parent,
			const char *what, uint64_t *v, uint32_t n)
{
	int err = expect(r, f, WIRE_LEN, parent);

	return err ? err : read_numbers(r, f->sub, what, v, n);
}

/* The bytes of a table element. */
static struct pb element(const struct reader *r, const struct entry *e)
{
	return (struct pb){r->data + e->off, r->data + e->off + e->len};
}

static int add_entry(struct reader *r, struct table *t, const struct field *f)
{
	uint64_t v[ID + 1];
	int err = read_message(r, f, "profile", t->what, v, ID + 1);

	if (err)
		return err;
	if (array__grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return -ENOMEM;
	t->v[t->n++] = (struct entry){.id = v[ID],
				      .off = (uint32_t)(f->sub.p - r->data),
				      .len = (uint32_t)(f->sub.end - f->sub.p)};
	return 0;
}

static int read_value_type(struct reader *r, const struct field *f, struct value_type *vt)
{
	uint64_t v[VALUE_TYPE_UNIT + 1];
	int err = read_message(r, f, "profile", "value type", v, VALUE_TYPE_UNIT + 1);

	if (!err)
		*vt = (struct value_type){v[VALUE_TYPE_TYPE], v[VALUE_TYPE_UNIT]};
	return err;
}

static int add_type(struct reader *r, const struct field *f)
{
	if (r->ntypes == PPROF_INPUT_MAX_TYPES)
		return fail(r, f->at, "more than %d sample types", PPROF_INPUT_MAX_TYPES);
	if (array__grow((void **)&r->types, &r->types_cap, r->ntypes + 1, sizeof(*r->types)))
		return -ENOMEM;
	return read_value_type(r, f, &r->types[r->ntypes++]);
}

static int add_string(struct reader *r, const struct field *f)
{
	int err = expect(r, f, WIRE_LEN, "profile");

	if (err)
		return err;
	if (!r->nstrings && f->sub.end != f->sub.p)
		return fail(r, f->at, "string_table[0] is not the empty string");
	if (array__grow((void **)&r->strings, &r->strings_cap, r->nstrings + 1,
			sizeof(*r->strings)))
		return -ENOMEM;
	r->strings[r->nstrings++] = (struct span){.off = (uint32_t)(f->sub.p - r->data),
						  .len = (uint32_t)(f->sub.end - f->sub.p)};
	return 0;
}

static int check_comments(struct reader *r, const struct field *f)
{
	struct varints it;
	uint64_t v;
	int err = varints_begin(r, f, "profile", &it);

	while (varints_next(r, &it, &v, &err))
		;
	return err;
}

/* Walk 1: everything but the samples' and comments' contents. */
static int read_tables(struct reader *r)
{
	uint64_t *scalar[PROFILE_DEFAULT_SAMPLE_TYPE + 1] = {
		[PROFILE_DROP_FRAMES] = &r->drop_frames,
		[PROFILE_KEEP_FRAMES] = &r->keep_frames,
		[PROFILE_TIME_NANOS] = &r->time_ns,
		[PROFILE_DURATION_NANOS] = &r->duration_ns,
		[PROFILE_PERIOD] = &r->period,
		[PROFILE_DEFAULT_SAMPLE_TYPE] = &r->default_type,
	};
	struct pb b = {r->data, r->data + r->len};
	struct field f;
	int err = 0;

	while (!err && b.p < b.end) {
		err = next_field(r, &b, &f);
		if (err)
			break;
		/* Two profiles one after the other make one message, their tables mixed. */
		if (f.num == PROFILE_TIME_NANOS && r->time_ns && f.wire == WIRE_VARINT && f.v)
			return fail(r, f.at, "time_nanos twice: two profiles concatenated");
		if (f.num < sizeof(scalar) / sizeof(scalar[0]) && scalar[f.num]) {
			err = expect(r, &f, WIRE_VARINT, "profile");
			if (!err)
				*scalar[f.num] = f.v;
		} else if (f.num == PROFILE_SAMPLE_TYPE) {
			err = add_type(r, &f);
		} else if (f.num == PROFILE_SAMPLE) {
			err = expect(r, &f, WIRE_LEN, "profile");
			r->nsamples++;
		} else if (f.num == PROFILE_MAPPING || f.num == PROFILE_LOCATION ||
			   f.num == PROFILE_FUNCTION) {
			err = add_entry(r,
					f.num == PROFILE_MAPPING    ? &r->maps
					: f.num == PROFILE_LOCATION ? &r->locs
								    : &r->funcs,
					&f);
		} else if (f.num == PROFILE_STRING_TABLE) {
			err = add_string(r, &f);
		} else if (f.num == PROFILE_PERIOD_TYPE) {
			err = read_value_type(r, &f, &r->period_type);
		} else if (f.num == PROFILE_COMMENT) {
			err = check_comments(r, &f);
		}
		/* Any other: a field of a later profile.proto, or none; skipped. */
	}
	return err;
}

static bool string_ok(const struct reader *r, uint64_t idx)
{
	return idx < r->nstrings;
}

static int check_string(struct reader *r, uint64_t idx, const uint8_t *at, const char *what)
{
	if (string_ok(r, idx))
		return 0;
	return fail(r, at, "%s: string %" PRIu64 ", past the string table's %zu", what, idx,
		    r->nstrings);
}

static const uint8_t *str_bytes(const struct reader *r, uint64_t idx, size_t *len)
{
	*len = r->strings[idx].len;
	return r->data + r->strings[idx].off;
}

static bool str_eq(const struct reader *r, uint64_t a, uint64_t b)
{
	size_t na, nb;
	const uint8_t *x = str_bytes(r, a, &na), *y = str_bytes(r, b, &nb);

	return na == nb && !memcmp(x, y, na);
}

static bool str_is(const struct reader *r, uint64_t idx, const char *s)
{
	size_t n, len = strlen(s);
	const uint8_t *b = str_bytes(r, idx, &n);

	return n == len && !memcmp(b, s, n);
}

static int check_strings(struct reader *r)
{
	const uint64_t own[] = {r->period_type.type, r->period_type.unit, r->default_type,
				r->drop_frames, r->keep_frames};
	size_t i;
	int err = 0;

	for (i = 0; i < r->ntypes && !err; i++) {
		err = check_string(r, r->types[i].type, NULL, "sample_type");
		if (!err)
			err = check_string(r, r->types[i].unit, NULL, "sample_type");
	}
	for (i = 0; i < sizeof(own) / sizeof(own[0]) && !err; i++)
		err = check_string(r, own[i], NULL, "profile");
	return err;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Sorted by id, for lookups; an id 0 or twice is refused, as pprof refuses it. */
static int sort_table(struct reader *r, struct table *t)
{
	size_t i;

	if (!t->n)
		return 0;
	qsort(t->v, t->n, sizeof(*t->v), cmp_entry);
	if (!t->v[0].id)
		return fail(r, r->data + t->v[0].off, "a %s with id 0", t->what);
	for (i = 1; i < t->n; i++)
		if (t->v[i].id == t->v[i - 1].id)
			return fail(r, r->data + t->v[i].off, "two %ss with id %" PRIu64, t->what,
				    t->v[i].id);
	return 0;
}

/* The index of the element with that id, or -1. */
static ssize_t find(const struct table *t, uint64_t id)
{
	size_t lo = 0, hi = t->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->v[mid].id == id)
			return (ssize_t)mid;
		if (t->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* "type/unit", cut to fit, control characters made '_': it is printed, one line. */
static void type_name(const struct reader *r, const struct value_type *vt, char *out, size_t size)
{
	size_t tn, un, i, n = 0;
	const uint8_t *t = str_bytes(r, vt->type, &tn), *u = str_bytes(r, vt->unit, &un);

	for (i = 0; i < tn + 1 + un && n + 1 < size; i++, n++) {
		out[n] = (char)(i < tn ? t[i] : i == tn ? '/' : u[i - tn - 1]);
		if ((unsigned char)out[n] < 0x20 || out[n] == 0x7f)
			out[n] = '_';
	}
	out[n] = '\0';
}

static int unknown_type(struct reader *r)
{
	char *why = r->info->why, one[64];
	size_t size = sizeof(r->info->why), i, n;

	n = (size_t)snprintf(why, size, "no sample type '%s' in it; it has", r->sample_type);
	for (i = 0; i < r->ntypes && n < size; i++) {
		type_name(r, &r->types[i], one, sizeof(one));
		n += (size_t)snprintf(why + n, size - n, "%s %s", i ? "," : "", one);
	}
	if (!r->ntypes && n < size)
		snprintf(why + n, size - n, " none");
	return -ENOENT;
}

/*
 * The value drawn: the type asked for; else the first "samples" (cprof's
 * and Go's CPU profiles have samples/count beside cpu/nanoseconds: counts
 * are what a flame graph says); else the profile's default_sample_type,
 * else the last, as pprof chooses.
 */
static int choose_type(struct reader *r)
{
	size_t i;

	if (!r->ntypes) {
		if (r->nsamples)
			return fail(r, NULL, "samples, but no sample_type");
		return r->sample_type ? unknown_type(r) : 0;
	}
	for (i = 0; i < r->ntypes; i++)
		if (str_is(r, r->types[i].type, r->sample_type ? r->sample_type : "samples"))
			goto found;
	if (r->sample_type)
		return unknown_type(r);
	for (i = 0; r->default_type && i < r->ntypes; i++)
		if (str_eq(r, r->types[i].type, r->default_type))
			goto found;
	i = r->ntypes - 1;
found:
	r->vi = i;
	r->info->counts = str_is(r, r->types[i].type, "samples");
	type_name(r, &r->types[i], r->info->type, sizeof(r->info->type));
	return 0;
}

static bool has_prefix(const uint8_t *s, size_t n, const char *prefix)
{
	size_t len = strlen(prefix);

	return n >= len && !memcmp(s, prefix, len);
}

/* cprof's loss comment: "cprof: samples taken N, in profile N, lost N; ...". */
static void read_loss(struct reader *r, const uint8_t *s, size_t n)
{
	static const char key[] = ", lost ";
	size_t i, k = sizeof(key) - 1;
	uint64_t v = 0;

	for (i = 0; i + k <= n && memcmp(s + i, key, k); i++)
		;
	if (i + k >= n || s[i + k] < '0' || s[i + k] > '9')
		return;
	for (i += k; i < n && s[i] >= '0' && s[i] <= '9' && v < UINT64_MAX / 10 - 9; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	r->info->lost_known = true;
	r->info->lost += v;
}

/* Walk 2: the comments, whose string indexes are checked now that the table is whole. */
static int read_comments(struct reader *r)
{
	struct pb b = {r->data, r->data + r->len};
	struct varints it;
	struct field f;
	const uint8_t *s;
	uint64_t idx;
	size_t n;
	int err = 0;

	while (!err && b.p < b.end) {
		err = next_field(r, &b, &f);
		if (err || f.num != PROFILE_COMMENT)
			continue;
		err = varints_begin(r, &f, "profile", &it);
		while (varints_next(r, &it, &idx, &err)) {
			err = check_string(r, idx, f.at, "comment");
			if (err)
				break;
			s = str_bytes(r, idx, &n);
			if (has_prefix(s, n, CPROF_COMMENT))
				r->cprof = true;
			if (has_prefix(s, n, CPROF_LOSS))
				read_loss(r, s, n);
		}
	}
	return err;
}

/* Bytes into the name being made; a NUL (a string may hold one) becomes '_'. */
static void name_add(struct sbuf *b, const uint8_t *s, size_t n)
{
	size_t i, at = b->len;

	sbuf__add(b, (const char *)s, n);
	for (i = at; !b->err && i < b->len; i++)
		if (!b->data[i])
			b->data[i] = '_';
}

/* The name made so far, from string idx or else "[unknown]". */
static void name_begin(struct reader *r, uint64_t idx)
{
	const uint8_t *s;
	size_t n;

	r->name.len = 0;
	s = str_bytes(r, idx, &n);
	if (n)
		name_add(&r->name, s, n);
	else
		sbuf__str(&r->name, UNKNOWN);
}

/* The name made, NUL-terminated; NULL when out of memory. */
static char *name_end(struct reader *r)
{
	sbuf__add(&r->name, "", 1);
	return r->name.err ? NULL : r->name.data;
}

/*
 * The piece of the name made, of the kind its name says, else its mapping's;
 * 0: no memory. A frame in a mapping is code, whatever its function's name
 * (a user chooses that): only one without a mapping (cprof's placeholders,
 * a profile of names alone) may be a marker, or be of a kind by its suffix.
 */
static uint32_t frame_piece(struct reader *r, const struct map_info *m)
{
	char *name = name_end(r);
	enum flame_kind kind;
	size_t len;

	if (!name)
		return 0;
	kind = flame__kind_of_name(name, &len);
	if (m->present && kind != FLAME_UNNAMED) {
		kind = FLAME_USER;
		len = strlen(name);
	}
	name[len] = '\0';
	if (kind == FLAME_USER && m->kernel)
		kind = FLAME_KERNEL;
	else if (kind == FLAME_USER && m->jit)
		kind = FLAME_JIT;
	return flame__piece(r->f, name, kind);
}

/* JIT code: named, in memory that is no file's (cprof writes it without a name) or a memfd. */
static bool jit_file(const struct reader *r, const uint8_t *s, size_t n)
{
	return (!n && r->cprof) || has_prefix(s, n, "[anon") || has_prefix(s, n, "/memfd:") ||
	       has_prefix(s, n, "//anon");
}

static int read_mapping(struct reader *r, size_t idx, struct map_info *m)
{
	const struct entry *e = &r->maps.v[idx];
	uint64_t v[MAPPING_BUILD_ID + 1];
	const uint8_t *s;
	size_t n;
	int err = read_numbers(r, element(r, e), "mapping", v, MAPPING_BUILD_ID + 1);

	if (!err)
		err = check_string(r, v[MAPPING_FILENAME], r->data + e->off, "mapping");
	if (!err)
		err = check_string(r, v[MAPPING_BUILD_ID], r->data + e->off, "mapping");
	if (err)
		return err;
	s = str_bytes(r, v[MAPPING_FILENAME], &n);
	*m = (struct map_info){.present = true,
			       .start = v[MAPPING_MEMORY_START],
			       .limit = v[MAPPING_MEMORY_LIMIT],
			       .offset = v[MAPPING_FILE_OFFSET],
			       .file = r->strings[v[MAPPING_FILENAME]],
			       .kernel = has_prefix(s, n, PPROF_KERNEL_MAPPING),
			       .jit = jit_file(r, s, n)};
	return 0;
}

/*
 * A frame no function names: its mapping's file name and the address as an
 * offset in that file (where the mapping says), as cprof names code no
 * symbol covers, so that the same code in two processes is one frame.
 */
static uint32_t address_piece(struct reader *r, const struct map_info *m, uint64_t addr)
{
	const uint8_t *file = r->data + m->file.off, *base = file, *p;
	size_t n = m->file.len;

	for (p = file; p < file + n; p++)
		if (*p == '/' && p + 1 < file + n)
			base = p + 1;
	r->name.len = 0;
	if (m->present && n)
		name_add(&r->name, base, (size_t)(file + n - base));
	else
		sbuf__str(&r->name, UNKNOWN);
	if (m->present && addr >= m->start && addr < m->limit)
		addr = addr - m->start + m->offset;
	if (addr || m->present)
		sbuf__printf(&r->name, "+0x%" PRIx64, addr);
	return frame_piece(r, m);
}

/* A function's piece: its name, else its system name, else the address's. */
static int function_piece(struct reader *r, uint64_t id, uint64_t loc_id, const struct map_info *m,
			  uint64_t addr, uint32_t *piece)
{
	ssize_t idx = find(&r->funcs, id);
	uint64_t v[FUNCTION_FILENAME + 1];
	const uint8_t *at;
	int err, i;

	if (idx < 0)
		return fail(r, NULL,
			    "location %" PRIu64 " names function %" PRIu64
			    ", which is not in the profile",
			    loc_id, id);
	at = r->data + r->funcs.v[idx].off;
	err = read_numbers(r, element(r, &r->funcs.v[idx]), "function", v, FUNCTION_FILENAME + 1);
	for (i = FUNCTION_NAME; !err && i <= FUNCTION_FILENAME; i++)
		err = check_string(r, v[i], at, "function");
	if (err)
		return err;
	if (r->strings[v[FUNCTION_NAME]].len || r->strings[v[FUNCTION_SYSTEM_NAME]].len) {
		name_begin(r, r->strings[v[FUNCTION_NAME]].len ? v[FUNCTION_NAME]
							       : v[FUNCTION_SYSTEM_NAME]);
		*piece = frame_piece(r, m);
	} else {
		*piece = address_piece(r, m, addr);
	}
	return *piece ? 0 : -ENOMEM;
}

static int add_function_id(struct reader *r, const struct field *lf, uint64_t loc_id, size_t *n)
{
	uint64_t v[LINE_FUNCTION_ID + 1];
	int err = read_message(r, lf, "location", "line", v, LINE_FUNCTION_ID + 1);

	if (err)
		return err;
	if (!v[LINE_FUNCTION_ID])
		return fail(r, lf->at, "location %" PRIu64 " has a line without a function",
			    loc_id);
	if (array__grow((void **)&r->fids, &r->fids_cap, *n + 1, sizeof(*r->fids)))
		return -ENOMEM;
	r->fids[(*n)++] = v[LINE_FUNCTION_ID];
	return 0;
}

static int add_piece(struct reader *r, uint32_t piece)
{
	if (!piece || r->npool == UNSET ||
	    array__grow((void **)&r->pool, &r->pool_cap, r->npool + 1, sizeof(*r->pool)))
		return -ENOMEM;
	r->pool[r->npool++] = piece;
	return 0;
}

/*
 * The pieces of location idx, root first: its lines are leaf first (the
 * last is the function the others were inlined into), so they go in
 * backwards; a location without lines is one frame named by its address.
 */
static int location_pieces(struct reader *r, size_t idx)
{
	const struct entry *e = &r->locs.v[idx];
	struct pb b = element(r, e);
	uint64_t mapping = 0, addr = 0;
	struct map_info m = {0};
	size_t nf = 0, first = r->npool;
	uint32_t piece = 0;
	struct field f;
	ssize_t mi;
	int err;

	if (r->loc_n[idx] != UNSET)
		return 0;
	while (b.p < b.end) {
		err = next_field(r, &b, &f);
		if (!err && (f.num == LOCATION_MAPPING_ID || f.num == LOCATION_ADDRESS))
			err = expect(r, &f, WIRE_VARINT, "location");
		else if (!err && f.num == LOCATION_LINE)
			err = add_function_id(r, &f, e->id, &nf);
		if (err)
			return err;
		if (f.num == LOCATION_MAPPING_ID)
			mapping = f.v;
		else if (f.num == LOCATION_ADDRESS)
			addr = f.v;
	}
	if (mapping) {
		mi = find(&r->maps, mapping);
		if (mi < 0)
			return fail(r, r->data + e->off,
				    "location %" PRIu64 " names mapping %" PRIu64
				    ", which is not in the profile",
				    e->id, mapping);
		err = read_mapping(r, (size_t)mi, &m);
		if (err)
			return err;
	}
	if (!nf) {
		err = add_piece(r, address_piece(r, &m, addr));
		if (err)
			return err;
	}
	while (nf-- > 0) {
		err = function_piece(r, r->fids[nf], e->id, &m, addr, &piece);
		if (!err)
			err = add_piece(r, piece);
		if (err)
			return err;
	}
	r->loc_first[idx] = (uint32_t)first;
	r->loc_n[idx] = (uint32_t)(r->npool - first);
	return 0;
}

static int read_label(struct reader *r, const struct field *lf, size_t sample, struct labels *l)
{
	uint64_t v[LABEL_NUM_UNIT + 1];
	int err = read_message(r, lf, "sample", "label", v, LABEL_NUM_UNIT + 1);

	if (err)
		return err;
	if (!string_ok(r, v[LABEL_KEY]) || !string_ok(r, v[LABEL_STR]) ||
	    !string_ok(r, v[LABEL_NUM_UNIT]))
		return fail(r, lf->at, "sample %zu: a label's string past the string table's %zu",
			    sample, r->nstrings);
	/* cprof's labels (docs/profile.md): comm and thread_name strings, tid a number. */
	if (v[LABEL_STR] && str_is(r, v[LABEL_KEY], "comm")) {
		l->comm = v[LABEL_STR];
	} else if (v[LABEL_STR] && str_is(r, v[LABEL_KEY], "thread_name")) {
		l->thread = v[LABEL_STR];
	} else if (!v[LABEL_STR] && str_is(r, v[LABEL_KEY], "tid")) {
		l->tid = (int64_t)v[LABEL_NUM];
		l->has_tid = true;
	}
	return 0;
}

/* The process and thread levels, as folded.c writes them: "comm", "thread_name/tid". */
static int label_pieces(struct reader *r, const struct labels *l, uint32_t *n)
{
	char *text;

	*n = 0;
	if (!l->comm && !l->has_tid)
		return 0;
	name_begin(r, l->comm);
	text = name_end(r);
	r->pieces[(*n)++] = text ? flame__piece(r->f, text, FLAME_PROCESS) : 0;
	if (l->has_tid) {
		name_begin(r, l->thread ? l->thread : l->comm);
		sbuf__printf(&r->name, "/%" PRId64, l->tid);
		text = name_end(r);
		r->pieces[(*n)++] = text ? flame__piece(r->f, text, FLAME_PROCESS) : 0;
	}
	return r->pieces[0] && r->pieces[*n - 1] ? 0 : -ENOMEM;
}

/* Walk 3, one sample: its fields read, its stack drawn. */
static int draw_sample(struct reader *r, const struct field *sf, size_t sample)
{
	struct pb b = sf->sub;
	struct labels l = {0};
	struct varints it;
	struct field f;
	size_t nids = 0, nval = 0, i;
	uint64_t v, value = 0;
	uint32_t k, n, levels;
	ssize_t idx;
	bool deep = false;
	int err = 0;

	while (!err && b.p < b.end) {
		err = next_field(r, &b, &f);
		if (err)
			break;
		if (f.num == SAMPLE_LOCATION_ID) {
			err = varints_begin(r, &f, "sample", &it);
			while (varints_next(r, &it, &v, &err)) {
				err = array__grow((void **)&r->ids, &r->ids_cap, nids + 1,
						  sizeof(*r->ids));
				if (!err)
					r->ids[nids++] = v;
			}
		} else if (f.num == SAMPLE_VALUE) {
			err = varints_begin(r, &f, "sample", &it);
			while (varints_next(r, &it, &v, &err))
				if (nval++ == r->vi)
					value = v;
		} else if (f.num == SAMPLE_LABEL) {
			err = read_label(r, &f, sample, &l);
		}
	}
	if (err)
		return err;
	if (nval != r->ntypes)
		return fail(r, sf->at, "sample %zu has %zu values for %zu sample types", sample,
			    nval, r->ntypes);
	err = label_pieces(r, &l, &levels);
	k = levels;
	for (i = nids; !err && i-- > 0;) {
		idx = find(&r->locs, r->ids[i]);
		if (idx < 0)
			return fail(r, sf->at,
				    "sample %zu names location %" PRIu64
				    ", which is not in the profile",
				    sample, r->ids[i]);
		err = location_pieces(r, (size_t)idx);
		if (err)
			break;
		n = r->loc_n[idx];
		/* Too deep: the rest is still checked, not drawn. */
		if (deep || k - levels + n > PPROF_INPUT_MAX_DEPTH) {
			deep = true;
			continue;
		}
		memcpy(r->pieces + k, r->pool + r->loc_first[idx], n * sizeof(*r->pieces));
		k += n;
	}
	if (err || !value)
		return err;
	if ((int64_t)value < 0)
		r->info->negative++;
	else if (deep)
		r->info->too_deep++;
	else if (value > UINT64_MAX / 2 - flame__total(r->f))
		r->info->overflow++;
	else if (flame__add(r->f, r->pieces, k, value))
		return -ENOMEM;
	else
		r->info->stacks++;
	return 0;
}

static int draw_samples(struct reader *r)
{
	struct pb b = {r->data, r->data + r->len};
	struct field f;
	size_t sample = 0;
	int err = 0;

	while (!err && b.p < b.end) {
		err = next_field(r, &b, &f);
		if (!err && f.num == PROFILE_SAMPLE)
			err = draw_sample(r, &f, ++sample);
	}
	return err;
}

/* What the subtitle says: the start, the length, the rate (a period in nanoseconds). */
static void read_meta(struct reader *r)
{
	struct pprof_input_info *in = r->info;

	in->time_ns = (int64_t)r->time_ns > 0 ? r->time_ns : 0;
	in->duration_ns = (int64_t)r->duration_ns > 0 ? r->duration_ns : 0;
	if ((int64_t)r->period > 0 && str_is(r, r->period_type.unit, "nanoseconds"))
		in->hz = (UINT64_C(1000000000) + r->period / 2) / r->period;
}

static int read_profile(struct reader *r)
{
	int err;

	if (r->len > UINT32_MAX)
		return fail(r, NULL, "%zu bytes: more than 4 GiB", r->len);
	err = read_tables(r);
	if (!err && !r->nstrings)
		err = fail(r, NULL, "no string table: not a pprof profile");
	if (!err)
		err = check_strings(r);
	if (!err)
		err = sort_table(r, &r->maps);
	if (!err)
		err = sort_table(r, &r->locs);
	if (!err)
		err = sort_table(r, &r->funcs);
	if (!err)
		err = choose_type(r);
	if (err)
		return err;
	r->loc_first = calloc(r->locs.n + 1, sizeof(*r->loc_first));
	r->loc_n = malloc((r->locs.n + 1) * sizeof(*r->loc_n));
	r->pieces = malloc((PPROF_INPUT_MAX_DEPTH + 2) * sizeof(*r->pieces));
	if (!r->loc_first || !r->loc_n || !r->pieces)
		return -ENOMEM;
	memset(r->loc_n, 0xff, (r->locs.n + 1) * sizeof(*r->loc_n));
	err = read_comments(r);
	if (!err)
		err = draw_samples(r);
	if (!err)
		read_meta(r);
	return err;
}

bool pprof_input__is_gzip(const void *data, size_t len)
{
	const uint8_t *p = data;

	return len >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

static size_t unpack_limit(size_t len)
{
	size_t max = len > PPROF_INPUT_UNPACK_MAX / PPROF_INPUT_UNPACK_RATIO
			     ? PPROF_INPUT_UNPACK_MAX
			     : len * PPROF_INPUT_UNPACK_RATIO;

	return max < PPROF_INPUT_UNPACK_MIN ? PPROF_INPUT_UNPACK_MIN : max;
}

static int unpack(const void *data, size_t len, size_t max, uint8_t **out, size_t *out_len,
		  struct pprof_input_info *info)
{
	const char *why;
	int err = compress__gunzip(data, len, max, out, out_len, &why);

	if (err == -EFBIG)
		snprintf(info->why, sizeof(info->why),
			 "it unpacks to more than %zu MiB, the most %zu bytes of gzip may (%d "
			 "times that, at least %zu MiB, at most %zu MiB): a gzip bomb?",
			 max >> 20, len, PPROF_INPUT_UNPACK_RATIO, PPROF_INPUT_UNPACK_MIN >> 20,
			 PPROF_INPUT_UNPACK_MAX >> 20);
	else if (err == -EBADMSG)
		snprintf(info->why, sizeof(info->why), "gzip: %s", why);
	return err;
}

int pprof_input__parse(const void *data, size_t len, const struct pprof_input_opts *o,
		       struct flame *f, struct pprof_input_info *info)
{
	struct reader r = {.data = data,
			   .len = len,
			   .f = f,
			   .info = info,
			   .sample_type = o ? o->sample_type : NULL,
			   .maps.what = "mapping",
			   .locs.what = "location",
			   .funcs.what = "function"};
	uint8_t *unpacked = NULL;
	int err = 0;

	*info = (struct pprof_input_info){0};
	if (pprof_input__is_gzip(data, len)) {
		err = unpack(data, len, o && o->max_unpacked ? o->max_unpacked : unpack_limit(len),
			     &unpacked, &r.len, info);
		r.data = unpacked;
	}
	if (!err)
		err = read_profile(&r);
	free(unpacked);
	free(r.strings);
	free(r.maps.v);
	free(r.locs.v);
	free(r.funcs.v);
	free(r.types);
	free(r.loc_first);
	free(r.loc_n);
	free(r.pool);
	free(r.ids);
	free(r.fids);
	free(r.pieces);
	free(r.name.data);
	return err;
}
