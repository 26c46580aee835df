// SPDX-License-Identifier: MIT
/*
 * Three scans of the demangled text, each linear: past the return type,
 * then a copy that leaves out every template argument list and parameter
 * list. Operator names are read as one token first, so that the '<' of
 * "operator<<" or the "()" of "operator()" is never taken for a bracket.
 */
#include <stdbool.h>
#include <string.h>

#include "lib/short_name.h"

/* Rust qualified paths kept open at once ("<<A as B>::C as D>"); deeper ones are dropped. */
#define KEPT_DEPTH 16

/* Names whose words are not a return type: the rest after them is a function's. */
static const char *const special_prefixes[] = {
	"non-virtual thunk to ",      "virtual thunk to ",	   "covariant return thunk to ",
	"TLS init function for ",     "TLS wrapper function for ", "transaction clone for ",
	"non-transaction clone for ",
};

/* Words after a parameter list that qualify the method, not name it. */
static const char *const qualifiers[] = {" const", " volatile", " noexcept", " &&", " &"};

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The length of the operator name at s ("operator<<=", "operator()", "operator"), else 0. */
static size_t operator_len(const char *name, const char *s)
{
	size_t n = 8;

	if (!has_prefix(s, "operator") || (s > name && ident_char(s[-1])) || ident_char(s[8]))
		return 0;
	if ((s[8] == '(' && s[9] == ')') || (s[8] == '[' && s[9] == ']'))
		return 10;
	while (n < 11 && s[n] && strchr("+-*/%^&|~!=<>,", s[n]))
		n++;
	return n;
}

/*
 * Just past the close of the group that opens at s ('(', '<', '[' or '{'),
 * or NULL when it does not close. Operator names inside are skipped whole;
 * in a '<' group, parentheses are groups of their own ("Foo<(1>0)>").
 */
static const char *group_end(const char *name, const char *s)
{
	char open = *s, close = open == '(' ? ')' : open == '<' ? '>' : open == '[' ? ']' : '}';
	const char *e;
	int depth = 0;
	size_t op;

	for (; *s; s++) {
		op = operator_len(name, s);
		if (op) {
			s += op - 1;
		} else if (open == '<' && *s == '(') {
			e = group_end(name, s);
			if (!e)
				return NULL;
			s = e - 1;
		} else if (*s == open) {
			depth++;
		} else if (*s == close && !--depth) {
			return s + 1;
		}
	}
	return NULL;
}

/*
 * Where the function's name begins in name: past its return type ("void ",
 * "std::vector<int> const& "). The name ends at its parameter list; spaces
 * after an operator belong to it ("operator new"), " [clone" is a tag.
 */
static const char *past_return_type(const char *name)
{
	const char *s = name, *start = name, *e;

	while (*s && !operator_len(name, s)) {
		if (strchr("(<[{", *s)) {
			e = group_end(name, s);
			if (!e || (*s == '(' && !has_prefix(s, "(anonymous namespace)")))
				break;
			s = e;
			continue;
		}
		if (*s == ' ') {
			if (s[1] == '[')
				break;
			start = s + 1;
		}
		s++;
	}
	return start;
}

/* s past the qualifiers that follow a parameter list (" const &&"). */
static const char *past_qualifiers(const char *s)
{
	size_t i, n;

	for (i = 0; i < sizeof(qualifiers) / sizeof(qualifiers[0]); i++) {
		n = strlen(qualifiers[i]);
		if (!strncmp(s, qualifiers[i], n) && !ident_char(s[n])) {
			s += n;
			i = (size_t)-1; /* again from the first: "const &" */
		}
	}
	return s;
}

struct out {
	char *buf;
	size_t size, off;
};

static void put(struct out *o, const char *s, size_t n)
{
	while (n-- && o->off + 1 < o->size)
		o->buf[o->off++] = *s++;
}

/* A '<' that begins a path component opens a Rust qualified path, not template arguments. */
static bool opens_path(const char *begin, const char *s)
{
	return s == begin || s[-1] == '<' || (s - begin >= 2 && s[-1] == ':' && s[-2] == ':');
}

const char *short_name__trim(const char *name, char *buf, size_t size)
{
	struct out o = {buf, size, 0};
	const char *kept[KEPT_DEPTH]; /* the closing '>' of each qualified path open */
	const char *s = name, *begin, *e;
	size_t i, op, nkept = 0;

	for (i = 0; i < sizeof(special_prefixes) / sizeof(special_prefixes[0]); i++)
		if (has_prefix(s, special_prefixes[i]))
			s += strlen(special_prefixes[i]);
	put(&o, name, (size_t)(s - name));
	begin = s = past_return_type(s);
	while (*s) {
		op = operator_len(name, s);
		e = *s == '(' || *s == '<' ? group_end(name, s) : NULL;
		if (op) {
			put(&o, s, op);
			s += op;
		} else if (nkept && s == kept[nkept - 1]) {
			nkept--;
			put(&o, s++, 1);
		} else if (has_prefix(s, "(anonymous namespace)")) {
			put(&o, s, 21);
			s += 21;
		} else if (e && *s == '<' && opens_path(begin, s) && nkept < KEPT_DEPTH) {
			kept[nkept++] = e - 1;
			put(&o, s++, 1);
		} else if (e) {
			s = *s == '(' ? past_qualifiers(e) : e;
		} else {
			put(&o, s++, 1);
		}
	}
	while (o.off && buf[o.off - 1] == ' ')
		o.off--;
	buf[o.off] = '\0';
	return buf;
}
