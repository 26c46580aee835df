// SPDX-License-Identifier: MIT
/*
 * Kernel symbolization from /proc/kallsyms.
 *
 * Only text symbols are kept: types t/T (functions, local and global) and
 * w/W (weak symbols, which in the kernel are almost always weak function
 * definitions). Data symbols can never be an instruction pointer.
 *
 * kallsyms has no sizes, so each symbol is given a plausible extent:
 *  - kernel image symbols end at the next symbol, and never beyond _etext
 *    (or _einittext for init code); the _etext/_einittext markers themselves
 *    are not kept, so an address past the end of text finds nothing;
 *  - module, BPF and trampoline symbols, and every symbol when the markers
 *    are missing, end at the next symbol and at most KSYM_MAX_EXTENT past
 *    their start, so an address in unlisted code is not blamed on whatever
 *    happens to be listed last.
 * Aliases (several names at one address) keep one name, chosen as for ELF:
 * global > weak > local, then fewer leading underscores, shorter, strcmp.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_MODULE "ksyms"
#include "log.h"
#include "ksyms.h"
#include "textscan.h"

/* Far larger than any kernel function (the largest in vmlinux are ~20 KiB). */
#define KSYM_MAX_EXTENT (256 * 1024)

enum ksym_bind {
	KSYM_LOCAL,
	KSYM_WEAK,
	KSYM_GLOBAL,
};

/* A parsed symbol; names are arena offsets until the arena stops moving. */
struct ksym_entry {
	uint64_t addr;
	uint32_t name_off;
	uint32_t mod_off; /* NO_MODULE for the kernel image */
	uint32_t name_len;
	uint8_t bind;
};

#define NO_MODULE UINT32_MAX

struct ksyms {
	struct ksym *syms;
	uint64_t *ends; /* exclusive end of syms[i] */
	size_t count;
	char *names;
	bool hidden;
};

struct text_marks {
	uint64_t etext, sinittext, einittext;
	bool have_etext, have_sinit, have_einit, have_init;
};

static int leading_underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Sorts by address, the preferred alias first. */
static int cmp_entry(const void *a, const void *b, void *arena)
{
	const struct ksym_entry *x = a, *y = b;
	const char *xn, *yn;
	int ux, uy;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->bind != y->bind)
		return x->bind > y->bind ? -1 : 1;
	xn = (const char *)arena + x->name_off;
	yn = (const char *)arena + y->name_off;
	ux = leading_underscores(xn);
	uy = leading_underscores(yn);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (x->name_len != y->name_len)
		return x->name_len < y->name_len ? -1 : 1;
	return strcmp(xn, yn);
}

/* Entry of a symbol line, or false when the line is not a text symbol. */
static bool parse_line(const char *s, const char *end, char *arena, size_t *arena_len,
		       uint32_t *last_mod, struct ksym_entry *e, bool *any_line)
{
	const char *name, *mod = NULL;
	size_t name_len, mod_len = 0;
	char type;

	if (!textscan__hex(&s, end, &e->addr) || s >= end || *s != ' ')
		return false;
	s++;
	if (end - s < 2 || s[1] != ' ')
		return false;
	type = s[0];
	s += 2;
	name = s;
	while (s < end && *s != ' ' && *s != '\t' && *s != '\r')
		s++;
	name_len = s - name;
	if (!name_len || name_len > UINT32_MAX)
		return false;
	/* Only well-formed lines count towards deciding whether addresses are hidden. */
	*any_line = true;
	switch (type) {
	case 'T':
		e->bind = KSYM_GLOBAL;
		break;
	case 'W':
	case 'w':
		e->bind = KSYM_WEAK;
		break;
	case 't':
		e->bind = KSYM_LOCAL;
		break;
	default:
		return false;
	}
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s < end && *s == '[') {
		const char *close = memchr(s, ']', end - s);

		/* A cut-off module name would attribute the symbol to the kernel image. */
		if (!close)
			return false;
		mod = s + 1;
		mod_len = close - mod;
	}

	e->name_off = *arena_len;
	e->name_len = name_len;
	memcpy(arena + *arena_len, name, name_len);
	arena[*arena_len + name_len] = '\0';
	*arena_len += name_len + 1;

	e->mod_off = NO_MODULE;
	if (mod) {
		/* Lines of one module are consecutive: share its name with the previous line. */
		if (*last_mod != NO_MODULE && strlen(arena + *last_mod) == mod_len &&
		    !memcmp(arena + *last_mod, mod, mod_len)) {
			e->mod_off = *last_mod;
		} else {
			e->mod_off = *arena_len;
			memcpy(arena + *arena_len, mod, mod_len);
			arena[*arena_len + mod_len] = '\0';
			*arena_len += mod_len + 1;
			*last_mod = e->mod_off;
		}
	}
	return true;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t bounded_end(uint64_t addr, uint64_t next)
{
	uint64_t cap = addr > UINT64_MAX - KSYM_MAX_EXTENT ? UINT64_MAX : addr + KSYM_MAX_EXTENT;

	return min_u64(next, cap);
}

static uint64_t symbol_end(const struct ksym *s, uint64_t next, const struct text_marks *tm)
{
	if (s->module || !tm->have_etext)
		return bounded_end(s->addr, next);
	if (s->addr < tm->etext)
		return min_u64(next, tm->etext);
	if (tm->have_init && s->addr >= tm->sinittext && s->addr < tm->einittext)
		return min_u64(next, tm->einittext);
	return bounded_end(s->addr, next);
}

/* Records the text markers and says whether the symbol is an end marker (not kept). */
static bool note_marker(const struct ksym_entry *e, const char *name, struct text_marks *tm)
{
	if (e->mod_off != NO_MODULE)
		return false;
	if (!strcmp(name, "_etext")) {
		tm->etext = e->addr;
		tm->have_etext = true;
		return true;
	}
	if (!strcmp(name, "_einittext")) {
		tm->einittext = e->addr;
		tm->have_einit = true;
		return true;
	}
	if (!strcmp(name, "_sinittext")) {
		tm->sinittext = e->addr;
		tm->have_sinit = true;
	}
	return false;
}

int ksyms__parse(const char *text, size_t len, struct ksyms **out)
{
	const char *p, *end;
	struct ksym_entry *ents = NULL;
	struct text_marks tm = {};
	struct ksyms *k = NULL;
	size_t n = 0, cap = 0, arena_len = 0, i, j;
	uint32_t last_mod = NO_MODULE;
	bool any_line = false, any_addr = false;
	char *shrunk;
	int err = 0;

	*out = NULL;
	if (!text && len)
		return -EINVAL;
	/* NULL with len 0 is an empty input; pointer arithmetic on NULL is not allowed. */
	p = text ? text : "";
	end = p + len;
	/* Arena offsets are 32-bit; kallsyms is ~10 MB, so 4 GiB is no limit in practice. */
	if (len >= UINT32_MAX)
		return -E2BIG;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	/* Names are substrings of lines, NUL instead of separator: never more than len + 1. */
	k->names = malloc(len + 1);
	if (!k->names) {
		err = -ENOMEM;
		goto cleanup;
	}

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *eol = nl ? nl : end;
		struct ksym_entry e;

		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			struct ksym_entry *ne = realloc(ents, ncap * sizeof(*ents));

			if (!ne) {
				err = -ENOMEM;
				goto cleanup;
			}
			ents = ne;
			cap = ncap;
		}
		if (parse_line(p, eol, k->names, &arena_len, &last_mod, &e, &any_line)) {
			if (e.addr)
				any_addr = true;
			if (!note_marker(&e, k->names + e.name_off, &tm))
				ents[n++] = e;
		} else if (eol > p) {
			/* Non-text symbols also reveal whether addresses are hidden. */
			const char *q = p;
			uint64_t addr;

			if (textscan__hex(&q, eol, &addr) && q < eol && *q == ' ') {
				any_line = true;
				any_addr |= addr != 0;
			}
		}
		p = nl ? nl + 1 : end;
	}
	tm.have_init = tm.have_sinit && tm.have_einit && tm.einittext > tm.sinittext;

	if (any_line && !any_addr) {
		/* kptr_restrict: every address reads as 0. */
		k->hidden = true;
		n = 0;
		arena_len = 0;
	}

	if (n)
		qsort_r(ents, n, sizeof(*ents), cmp_entry, k->names);
	/* Keep the first (preferred) entry of each address. */
	for (i = 0, j = 0; i < n; i++)
		if (!j || ents[i].addr != ents[j - 1].addr)
			ents[j++] = ents[i];
	n = j;

	shrunk = realloc(k->names, arena_len ? arena_len : 1);
	if (shrunk)
		k->names = shrunk;
	k->syms = calloc(n ? n : 1, sizeof(*k->syms));
	k->ends = calloc(n ? n : 1, sizeof(*k->ends));
	if (!k->syms || !k->ends) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		k->syms[i].addr = ents[i].addr;
		k->syms[i].name = k->names + ents[i].name_off;
		k->syms[i].module =
			ents[i].mod_off == NO_MODULE ? NULL : k->names + ents[i].mod_off;
	}
	for (i = 0; i < n; i++)
		k->ends[i] =
			symbol_end(&k->syms[i], i + 1 < n ? k->syms[i + 1].addr : UINT64_MAX, &tm);
	k->count = n;
	*out = k;
	k = NULL;
cleanup:
	free(ents);
	ksyms__free(k);
	return err;
}

/* /proc/kallsyms reports size 0 and is ~10 MB: read big chunks until EOF. */
static int read_all(int fd, char **buf_out, size_t *len_out)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap), *nbuf;
	ssize_t r;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (cap - len < 64 * 1024) {
			nbuf = realloc(buf, cap * 2);
			if (!nbuf) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = nbuf;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			err = -errno;
			if (err == -EINTR)
				continue;
			goto cleanup;
		}
		if (!r)
			break;
		len += r;
	}
	*buf_out = buf;
	*len_out = len;
	buf = NULL;
cleanup:
	free(buf);
	return err;
}

int ksyms__load(const char *path, struct ksyms **out)
{
	char *buf = NULL;
	size_t len = 0;
	int fd, err;

	*out = NULL;
	if (!path)
		path = "/proc/kallsyms";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_warn("open %s: %s", path, strerror(-err));
		return err;
	}
	err = read_all(fd, &buf, &len);
	close(fd);
	if (err) {
		pr_warn("read %s: %s", path, strerror(-err));
		goto cleanup;
	}
	err = ksyms__parse(buf, len, out);
	if (err)
		pr_warn("parse %s: %s", path, strerror(-err));
	else
		pr_debug("%s: %zu text symbols%s", path, (*out)->count,
			 (*out)->hidden ? " (addresses hidden)" : "");
cleanup:
	free(buf);
	return err;
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->ends);
	free(k->names);
	free(k);
}

const struct ksym *ksyms__lookup(const struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!k || k->hidden)
		return NULL;
	hi = k->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= k->ends[lo - 1])
		return NULL;
	return &k->syms[lo - 1];
}

bool ksyms__hidden(const struct ksyms *k)
{
	return k && k->hidden;
}

size_t ksyms__count(const struct ksyms *k)
{
	return k ? k->count : 0;
}
