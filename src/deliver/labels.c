// SPDX-License-Identifier: MIT
/*
 * Series labels; see labels.h. Both servers reject a whole request for one
 * bad label (Parca: invalid or duplicate name, no __name__; Pyroscope: the
 * same, plus invalid UTF-8 values), and in continuous mode a rejected
 * request is a lost interval. So user labels are checked when the options
 * are parsed, and values that come from processes are cleaned here.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "deliver/labels.h"
#include "lib/procfs.h"

#define MAX_VALUE_BYTES 1024
#define DEFAULT_NAME	"process_cpu"

static size_t find(const struct labels *l, const char *name, bool *found)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->v[mid].name, name);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

int labels__set(struct labels *l, const char *name, const char *value)
{
	char *v = strdup(value), *n = NULL;
	struct label *arr;
	bool found;
	size_t i = find(l, name, &found);

	if (!v)
		return -ENOMEM;
	if (found) {
		free(l->v[i].value);
		l->v[i].value = v;
		return 0;
	}
	n = strdup(name);
	arr = n ? reallocarray(l->v, l->n + 1, sizeof(*arr)) : NULL;
	if (!arr) {
		free(n);
		free(v);
		return -ENOMEM;
	}
	l->v = arr;
	memmove(&arr[i + 1], &arr[i], (l->n - i) * sizeof(*arr));
	arr[i] = (struct label){n, v};
	l->n++;
	return 0;
}

const char *labels__get(const struct labels *l, const char *name)
{
	bool found;
	size_t i = find(l, name, &found);

	return found ? l->v[i].value : NULL;
}

int labels__merge(struct labels *dst, const struct labels *src)
{
	size_t i;
	int err;

	for (i = 0; i < src->n; i++) {
		err = labels__set(dst, src->v[i].name, src->v[i].value);
		if (err)
			return err;
	}
	return 0;
}

void labels__clear(struct labels *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].value);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Prometheus' label-name rule, which Parca and Pyroscope enforce. */
static bool valid_name(const char *name)
{
	const char *p;

	if (!(isalpha((unsigned char)*name) || *name == '_'))
		return false;
	for (p = name + 1; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return false;
	return true;
}

static bool valid_metric_name(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_' || *s == ':'))
		return false;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == ':'))
			return false;
	return true;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past Unicode are invalid. */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

static bool clean_value(const char *v)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t n = strlen(v), i = 0, k;

	while (i < n) {
		if (s[i] < 0x20 || s[i] == 0x7f)
			return false;
		k = utf8_len(s + i, n - i);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

/* Replaces what a server would refuse with '?' and caps the length. */
static void sanitize(const char *in, char *out, size_t size)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t n = strlen(in), i = 0, o = 0, k;

	while (i < n && o + 1 < size) {
		k = s[i] < 0x20 || s[i] == 0x7f ? 0 : utf8_len(s + i, n - i);
		if (!k) {
			out[o++] = '?';
			i++;
			continue;
		}
		if (o + k >= size)
			break;
		memcpy(out + o, s + i, k);
		o += k;
		i += k;
	}
	out[o] = '\0';
}

const char *labels__parse_arg(struct labels *l, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[256];
	size_t n;

	if (!eq)
		return "expected NAME=VALUE";
	n = (size_t)(eq - arg);
	if (n == 0 || n >= sizeof(name))
		return "the label name must have 1 to 255 characters";
	memcpy(name, arg, n);
	name[n] = '\0';
	if (!valid_name(name))
		return "label names are letters, digits and '_', not starting with a digit";
	if (name[0] == '_' && name[1] == '_' && strcmp(name, "__name__") != 0)
		return "names starting with '__' are reserved (except __name__)";
	if (!eq[1])
		return "the label value is empty";
	if (strlen(eq + 1) > MAX_VALUE_BYTES)
		return "the label value is longer than 1024 bytes";
	if (!clean_value(eq + 1))
		return "the label value must be UTF-8 without control characters";
	if (strcmp(name, "__name__") == 0 && !valid_metric_name(eq + 1))
		return "__name__ must be a metric name: letters, digits, '_' and ':'";
	return labels__set(l, name, eq + 1) ? "out of memory" : NULL;
}

int labels__defaults(struct labels *l, const char *service_name)
{
	char value[MAX_VALUE_BYTES + 1];
	struct utsname u;
	int err;

	sanitize(service_name && *service_name ? service_name : "unknown", value, sizeof(value));
	err = labels__set(l, "__name__", DEFAULT_NAME);
	if (!err)
		err = labels__set(l, "service_name", value);
	if (err || uname(&u))
		return err ? err : -errno;
	sanitize(u.nodename, value, sizeof(value));
	err = labels__set(l, "hostname", value);
	sanitize(u.release, value, sizeof(value));
	if (!err)
		err = labels__set(l, "kernel_release", value);
	sanitize(u.machine, value, sizeof(value));
	if (!err)
		err = labels__set(l, "arch", value);
	return err;
}

static bool has_controller(const char *list, size_t len, const char *name)
{
	size_t nlen = strlen(name);
	const char *p = list, *end = list + len;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p)), *e = comma ? comma : end;

		if ((size_t)(e - p) == nlen && memcmp(p, name, nlen) == 0)
			return true;
		p = e + 1;
	}
	return false;
}

/* A run of exactly 64 lowercase hex digits in s[0..len), as container runtimes name cgroups. */
static const char *find_container_id(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t j = i;

		while (j < len && isxdigit((unsigned char)s[j]) && !isupper((unsigned char)s[j]))
			j++;
		if (j - i == 64)
			return s + i;
		i = j + 1;
	}
	return NULL;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len > n && memcmp(s + len - n, suffix, n) == 0;
}

/* Container ID and systemd unit: the innermost path component that has one. */
static void identify(struct cgroup_identity *out)
{
	const char *path = out->path, *end = path + strlen(path);

	while (end > path) {
		const char *start = end;
		size_t n;

		while (start > path && start[-1] != '/')
			start--;
		n = (size_t)(end - start);
		if (!out->container_id[0]) {
			const char *id = find_container_id(start, n);

			if (id)
				memcpy(out->container_id, id, 64);
		}
		if (!out->unit[0] && n < sizeof(out->unit) &&
		    (ends_with(start, n, ".service") || ends_with(start, n, ".scope")))
			memcpy(out->unit, start, n);
		end = start > path ? start - 1 : start;
	}
}

int labels__parse_cgroup(const char *text, size_t len, struct cgroup_identity *out)
{
	const char *p = text, *end = text + len, *best = NULL;
	size_t best_len = 0;
	int best_rank = 0;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		const char *c1 = memchr(p, ':', (size_t)(e - p));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
		int rank = 0;

		if (c2) {
			const char *path = c2 + 1;
			size_t plen = (size_t)(e - path);
			size_t clen = (size_t)(c2 - c1 - 1);

			/* cgroup v2 first; in v1, systemd's tree, then the cpu controller's. */
			if (c1 - p == 1 && p[0] == '0' && clen == 0)
				rank = 3;
			else if (has_controller(c1 + 1, clen, "name=systemd"))
				rank = 2;
			else if (has_controller(c1 + 1, clen, "cpu"))
				rank = 1;
			if (rank > best_rank && plen > 1 && path[0] == '/') {
				best = path;
				best_len = plen;
				best_rank = rank;
			}
		}
		p = e + 1;
	}
	if (!best)
		return -ENOENT;
	if (best_len >= sizeof(out->path))
		best_len = sizeof(out->path) - 1;
	memcpy(out->path, best, best_len);
	identify(out);
	return 0;
}

int labels__read_cgroup(uint32_t pid, struct cgroup_identity *out)
{
	char path[64], buf[8192];
	int n;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	n = procfs__read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	return labels__parse_cgroup(buf, (size_t)n, out);
}

int labels__add_process(struct labels *l, uint32_t pid, const char *comm,
			const struct cgroup_identity *cg)
{
	char value[MAX_VALUE_BYTES + 1];
	int err;

	snprintf(value, sizeof(value), "%u", pid);
	err = labels__set(l, "pid", value);
	if (!err && comm && *comm) {
		sanitize(comm, value, sizeof(value));
		err = labels__set(l, "comm", value);
	}
	if (err || !cg || !cg->path[0])
		return err;
	sanitize(cg->path, value, sizeof(value));
	err = labels__set(l, "cgroup", value);
	if (!err && cg->container_id[0])
		err = labels__set(l, "container_id", cg->container_id);
	if (!err && cg->unit[0]) {
		sanitize(cg->unit, value, sizeof(value));
		err = labels__set(l, "systemd_unit", value);
	}
	return err;
}
