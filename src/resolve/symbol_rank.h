/* SPDX-License-Identifier: MIT */
/*
 * Which name a symbol table keeps when several name one address, shared by
 * the ELF tables (elf_symtab.c) and the kernel's (ksyms.c) so both choose
 * alike: global > weak > local, then fewer leading underscores (__foo is
 * usually the implementation behind foo), then shorter, then bytewise, so
 * the choice is the same whatever order the table lists the aliases in.
 */
#ifndef CPROF_SYMBOL_RANK_H
#define CPROF_SYMBOL_RANK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A symbol's binding, in order of preference (higher preferred). */
enum symbol_bind {
	SYMBOL_LOCAL,
	SYMBOL_WEAK,
	SYMBOL_GLOBAL,
};

static inline size_t symbol_rank_underscores(const char *name, size_t len)
{
	size_t n = 0;

	while (n < len && name[n] == '_')
		n++;
	return n;
}

/* <0 when alias a is preferred to alias b, >0 when b is, 0 for the same name and binding. */
static inline int symbol_rank_cmp(int a_bind, const char *a, size_t a_len, int b_bind,
				  const char *b, size_t b_len)
{
	size_t ua, ub;

	if (a_bind != b_bind)
		return a_bind > b_bind ? -1 : 1;
	ua = symbol_rank_underscores(a, a_len);
	ub = symbol_rank_underscores(b, b_len);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (a_len != b_len)
		return a_len < b_len ? -1 : 1;
	return memcmp(a, b, a_len);
}

/*
 * The order of symbol_rank_cmp without its bytewise step, in 32 bits, lower
 * preferred: for a sort key built before the names are kept. Underscores
 * past 63 and lengths past 2^24 - 1 saturate.
 */
static inline uint32_t symbol_rank_key(int bind, const char *name, size_t len)
{
	size_t u = symbol_rank_underscores(name, len);

	if (u > 0x3f)
		u = 0x3f;
	if (len > 0xffffff)
		len = 0xffffff;
	return (uint32_t)(SYMBOL_GLOBAL - bind) << 30 | (uint32_t)u << 24 | (uint32_t)len;
}

#endif
