// SPDX-License-Identifier: MIT
/* The shared rule dictionary; see unwind_rules.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/u64map.h"
#include "unwind/unwind_rule.h"
#include "unwind/unwind_rules.h"

struct unwind_rules {
	struct cprof_unwind_rule *rules;
	size_t n, cap;
	struct u64map *ids; /* hash -> id; a colliding rule takes the next free hash */
};

static uint64_t rule_hash(const struct cprof_unwind_rule *r)
{
	uint64_t a, b;
	uint32_t c;

	_Static_assert(sizeof(*r) == 20, "every byte of a rule hashed");
	memcpy(&a, r, 8);
	memcpy(&b, (const char *)r + 8, 8);
	memcpy(&c, (const char *)r + 16, 4);
	return hash_u64(a ^ hash_u64(b ^ hash_u64(c)));
}

/*
 * The last id is kept for the rule that says the dictionary is full, which
 * the table builder puts where a rule found no room (unwind_table.c): it
 * could never be added once the dictionary was full, and the table failed
 * to build instead.
 */
static bool room_rule(const struct cprof_unwind_rule *rule)
{
	struct cprof_unwind_rule room = unwind_rule_stop(CPROF_STOP_NO_RULE_ROOM);

	return !memcmp(rule, &room, sizeof(room));
}

static int add(struct unwind_rules *r, const struct cprof_unwind_rule *rule, uint64_t h,
	       uint32_t *id)
{
	size_t cap = r->cap ? 2 * r->cap : 256;
	struct cprof_unwind_rule *n;

	if (r->n == CPROF_UNWIND_MAX_RULES ||
	    (r->n == CPROF_UNWIND_MAX_RULES - 1 && !room_rule(rule)))
		return -ENOSPC;
	if (r->n == r->cap) {
		n = realloc(r->rules, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->rules = n;
		r->cap = cap;
	}
	if (u64map__set(r->ids, h, r->n))
		return -ENOMEM;
	r->rules[r->n] = *rule;
	*id = (uint32_t)r->n++;
	return 0;
}

int unwind_rules__new(struct unwind_rules **out)
{
	struct cprof_unwind_rule none = unwind_rule_stop(CPROF_STOP_NO_CFI);
	struct unwind_rules *r = calloc(1, sizeof(*r));
	uint32_t id;
	int err = -ENOMEM;

	*out = NULL;
	if (!r)
		return err;
	r->ids = u64map__new();
	if (r->ids)
		err = unwind_rules__id(r, &none, &id);
	if (err) {
		unwind_rules__free(r);
		return err;
	}
	*out = r;
	return 0;
}

void unwind_rules__free(struct unwind_rules *r)
{
	if (!r)
		return;
	u64map__free(r->ids);
	free(r->rules);
	free(r);
}

int unwind_rules__id(struct unwind_rules *r, const struct cprof_unwind_rule *rule, uint32_t *id)
{
	uint64_t h = rule_hash(rule), v;

	/* Rules are compared whole: padding-free, so memcmp is exact. */
	for (; u64map__get(r->ids, h, &v); h++) {
		if (!memcmp(&r->rules[v], rule, sizeof(*rule))) {
			*id = (uint32_t)v;
			return 0;
		}
	}
	return add(r, rule, h, id);
}

size_t unwind_rules__count(const struct unwind_rules *r)
{
	return r->n;
}

const struct cprof_unwind_rule *unwind_rules__all(const struct unwind_rules *r)
{
	return r->rules;
}
