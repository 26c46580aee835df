// SPDX-License-Identifier: MIT
/* Fixtures of the DWARF readers' tests; see dwarf_fixtures.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf_fixtures.h"
#include "test.h"

void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	CHECK_INT(fputs(text, f), >=, 0);
	CHECK_INT(fclose(f), ==, 0);
}

static void add_addr(struct addrs *a, uint64_t v)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		a->v = realloc(a->v, a->cap * sizeof(*a->v));
		CHECK(a->v);
	}
	a->v[a->n++] = v;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Every function's start, and each step-th byte inside it, sorted and unique. */
void function_addrs(const char *file, unsigned step, struct addrs *a)
{
	char cmd[2048], line[4096], type;
	unsigned long long start, size, off;
	FILE *p;
	size_t i, j;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s'", file);
	p = popen(cmd, "r");
	CHECK(p);
	while (fgets(line, sizeof(line), p)) {
		/* Symbols without a size have three fields: not functions of a compiled unit. */
		if (sscanf(line, "%llx %llx %c", &start, &size, &type) != 3)
			continue;
		if (type != 'T' && type != 't' && type != 'W' && type != 'i')
			continue;
		for (off = 0; off < size; off += off ? step : 1)
			add_addr(a, start + off);
	}
	pclose(p);
	CHECK_INT(a->n, >, 0);
	qsort(a->v, a->n, sizeof(*a->v), cmp_u64);
	for (i = j = 0; i < a->n; i++)
		if (!j || a->v[j - 1] != a->v[i])
			a->v[j++] = a->v[i];
	a->n = j;
}

/* Debian's libc's debug file (libc6-dbg), by the build ID of the system's libc. */
const char *libc_debug_file(void)
{
	static char path[1024];
	char cmd[1024], id[128] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | awk '/Build ID/ { print $3 }'",
		 test_system_libc());
	p = popen(cmd, "r");
	CHECK(p);
	if (!fgets(id, sizeof(id), p))
		id[0] = '\0';
	pclose(p);
	id[strcspn(id, "\n")] = '\0';
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	if (strlen(id) < 8 || access(path, R_OK))
		test_skip("no debug file for %s (libc6-dbg not installed)", test_system_libc());
	return path;
}
