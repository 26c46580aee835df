// SPDX-License-Identifier: MIT
/*
 * ksym_names: the kernel's own lookup against /proc/kallsyms on this
 * machine. Some 600 text symbols (more than two runs of the program) are
 * named at their address and one byte in, each as one of the names kallsyms
 * lists at that address (aliases share one); an address of no kernel symbol
 * is -ENOENT. Needs root, Linux 5.14 and kallsyms addresses shown.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resolve/ksym_names.h"
#include "test.h"

#define WANT 600

struct sym {
	uint64_t addr;
	char name[128];
};

struct syms {
	struct sym *v;
	size_t n, cap;
};

/* Every text symbol of kallsyms, in its order (by address, modules after). */
static void read_kallsyms(struct syms *s)
{
	char line[512], type, name[256];
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "re");

	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 ||
		    (type != 't' && type != 'T') || strlen(name) >= sizeof(s->v->name))
			continue;
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 4096;
			s->v = realloc(s->v, s->cap * sizeof(*s->v));
			CHECK(s->v);
		}
		s->v[s->n].addr = addr;
		strcpy(s->v[s->n].name, name);
		s->n++;
	}
	fclose(f);
}

/* Whether kallsyms lists name at addr (aliases sit next to each other). */
static bool listed_at(const struct syms *s, size_t at, uint64_t addr, const char *name)
{
	size_t i;

	for (i = at; i > 0 && s->v[i - 1].addr == addr; i--)
		;
	for (; i < s->n && s->v[i].addr == addr; i++)
		if (!strcmp(s->v[i].name, name))
			return true;
	return false;
}

struct answers {
	char (*names)[128];
	int *errs;
	size_t calls;
};

static void on_name(void *ctx, size_t i, const char *name, int err)
{
	struct answers *a = ctx;

	CHECK_INT(i, ==, a->calls);
	a->calls++;
	a->errs[i] = err;
	if (!err)
		snprintf(a->names[i], sizeof(a->names[i]), "%s", name);
}

TEST(ksym_names_agree_with_kallsyms)
{
	struct syms s = {0};
	struct ksym_names *kn = NULL;
	uint64_t addrs[2 * WANT + 1];
	size_t picked[WANT], n = 0, i, step;
	struct answers a = {0};
	int err;

	if (geteuid() != 0)
		SKIP("needs root for BPF");
	err = ksym_names__new(&kn);
	if (err == -EACCES)
		SKIP("kallsyms hides its addresses here");
	if (err)
		SKIP("the kernel's lookup cannot load here (Linux 5.14+): %s", strerror(-err));
	read_kallsyms(&s);
	CHECK_INT(s.n, >, WANT);
	step = s.n / WANT;
	for (i = 0; i < s.n && n < WANT; i += step) {
		/* A symbol with room after it for the address one byte in. */
		if (i + 1 < s.n && s.v[i + 1].addr <= s.v[i].addr + 1)
			continue;
		picked[n] = i;
		addrs[2 * n] = s.v[i].addr;
		addrs[2 * n + 1] = s.v[i].addr + 1;
		n++;
	}
	CHECK_INT(n, >, WANT / 2);
	addrs[2 * n] = 0x1000; /* user space: no kernel symbol */
	a.names = calloc(2 * n + 1, sizeof(*a.names));
	a.errs = calloc(2 * n + 1, sizeof(*a.errs));
	CHECK(a.names && a.errs);
	CHECK_INT(ksym_names__name(kn, addrs, 2 * n + 1, on_name, &a), ==, 0);
	CHECK_INT(a.calls, ==, 2 * n + 1);
	for (i = 0; i < 2 * n; i++) {
		const struct sym *want = &s.v[picked[i / 2]];

		if (a.errs[i] || !listed_at(&s, picked[i / 2], want->addr, a.names[i]))
			test_fail(__FILE__, __LINE__, "0x%" PRIx64 " (%s+%zu): %s, \"%s\"",
				  addrs[i], want->name, i % 2, strerror(-a.errs[i]), a.names[i]);
	}
	CHECK_INT(a.errs[2 * n], ==, -ENOENT);
	free(a.names);
	free(a.errs);
	free(s.v);
	ksym_names__free(kn);
}
