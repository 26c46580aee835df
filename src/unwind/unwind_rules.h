/* SPDX-License-Identifier: MIT */
/*
 * The dictionary of distinct compact rules that every unwind table refers
 * to by a 16-bit id. Real code needs few (3,883 across 1,179 Debian files
 * on x86_64), so one dictionary serves all tables of a run and is what the
 * BPF program's rule array holds. Id 0 is the no-CFI rule.
 */
#ifndef CPROF_UNWIND_RULES_H
#define CPROF_UNWIND_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "unwind_abi.h"

struct unwind_rules;

int unwind_rules__new(struct unwind_rules **out);
void unwind_rules__free(struct unwind_rules *r);
/*
 * The rule's id, added if new: 0 or -ENOSPC when the dictionary is full (its
 * last id is kept for the stop CPROF_STOP_NO_RULE_ROOM), -ENOMEM.
 */
int unwind_rules__id(struct unwind_rules *r, const struct cprof_unwind_rule *rule, uint32_t *id);
size_t unwind_rules__count(const struct unwind_rules *r);
/* All rules, by id (valid until the next unwind_rules__id). */
const struct cprof_unwind_rule *unwind_rules__all(const struct unwind_rules *r);

#endif
