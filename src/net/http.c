// SPDX-License-Identifier: MIT
/*
 * HTTP/1.1 client; see http.h. Every socket is non-blocking and every wait
 * is a poll() with a deadline, so no server, however slow or silent, holds
 * cprof longer than the timeouts it was given. Connection: close keeps the
 * client free of connection reuse and its stale-connection corner cases; one
 * upload per interval does not need keep-alive.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LOG_MODULE "http"
#include "net/http.h"
#include "net/proxy.h"
#include "net/tls.h"
#include "lib/cancel.h"
#include "lib/clock.h"
#include "lib/log.h"

#define MAX_CHUNK_LINE	 1024
#define RECV_FIRST_SIZE	 4096
#define MAX_REQUEST_HEAD (16u << 10)
/* A streamed response's one buffer: its whole head, or a piece of its body. */
#define STREAM_BUF_SIZE (HTTP_MAX_HEADER_BYTES + (16u << 10))

/* Response parsing. */

void http_response__clear(struct http_response *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nfields; i++) {
		free(r->fields[i].name);
		free(r->fields[i].value);
	}
	free(r->fields);
	free(r->body);
	*r = (struct http_response){0};
}

const char *http_response__field(const struct http_response *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nfields; i++)
		if (strcasecmp(r->fields[i].name, name) == 0)
			return r->fields[i].value;
	return NULL;
}

/* The line at pos: *eol at its CR or LF, *next past the LF. False if no LF yet. */
static bool line_at(const uint8_t *b, size_t len, size_t pos, size_t *eol, size_t *next)
{
	const uint8_t *nl = memchr(b + pos, '\n', len - pos);

	if (!nl)
		return false;
	*next = (size_t)(nl - b) + 1;
	*eol = (size_t)(nl - b);
	if (*eol > pos && b[*eol - 1] == '\r')
		(*eol)--;
	return true;
}

static bool is_tchar(uint8_t c)
{
	/* strchr() finds the terminating NUL too: a NUL byte is no token character. */
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int add_field(struct http_response *r, const uint8_t *line, size_t len)
{
	const uint8_t *colon = memchr(line, ':', len), *v, *end = line + len;
	struct http_field *f;
	size_t i, nlen;

	if (!colon || colon == line)
		return -EBADMSG;
	nlen = (size_t)(colon - line);
	for (i = 0; i < nlen; i++)
		if (!is_tchar(line[i]))
			return -EBADMSG;
	for (v = colon + 1; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	for (const uint8_t *c = v; c < end; c++)
		if ((*c < 0x20 && *c != '\t') || *c == 0x7f)
			return -EBADMSG;
	if (r->nfields == HTTP_MAX_FIELDS)
		return -EFBIG;
	f = reallocarray(r->fields, r->nfields + 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	r->fields = f;
	f = &f[r->nfields];
	f->name = strndup((const char *)line, nlen);
	f->value = strndup((const char *)v, (size_t)(end - v));
	if (!f->name || !f->value) {
		free(f->name);
		free(f->value);
		return -ENOMEM;
	}
	for (i = 0; i < nlen; i++)
		f->name[i] = (char)tolower((unsigned char)f->name[i]);
	r->nfields++;
	return 0;
}

/* Field lines up to an empty line, starting at *pos; on success *pos is past it. */
static int parse_fields(const uint8_t *b, size_t len, size_t *pos, struct http_response *r)
{
	size_t start = *pos, p = *pos, eol, next;
	int err;

	for (;;) {
		if (!line_at(b, len, p, &eol, &next))
			return len - start > HTTP_MAX_HEADER_BYTES ? -EFBIG : -EAGAIN;
		if (next - start > HTTP_MAX_HEADER_BYTES)
			return -EFBIG;
		if (eol == p)
			break;
		/* Obsolete line folding is forbidden in responses (RFC 9112 5.2). */
		if (b[p] == ' ' || b[p] == '\t')
			return -EBADMSG;
		err = add_field(r, b + p, eol - p);
		if (err)
			return err;
		p = next;
	}
	*pos = next;
	return 0;
}

static int parse_status_line(const uint8_t *b, size_t len, size_t *pos, int *status)
{
	size_t eol, next, p = *pos;

	if (!line_at(b, len, p, &eol, &next))
		return len - p > HTTP_MAX_HEADER_BYTES ? -EFBIG : -EAGAIN;
	if (eol - p < 12 || memcmp(b + p, "HTTP/1.", 7) != 0 || !isdigit(b[p + 7]) ||
	    b[p + 8] != ' ' || !isdigit(b[p + 9]) || !isdigit(b[p + 10]) || !isdigit(b[p + 11]) ||
	    (eol - p > 12 && b[p + 12] != ' '))
		return -EBADMSG;
	for (size_t i = p + 12; i < eol; i++)
		if ((b[i] < 0x20 && b[i] != '\t') || b[i] == 0x7f)
			return -EBADMSG;
	*status = (b[p + 9] - '0') * 100 + (b[p + 10] - '0') * 10 + (b[p + 11] - '0');
	if (*status < 100)
		return -EBADMSG;
	*pos = next;
	return 0;
}

static int append_body(struct http_response *r, const uint8_t *data, size_t n, size_t max_body)
{
	uint8_t *nb;

	if (n > max_body - r->body_len)
		return -EFBIG;
	nb = realloc(r->body, r->body_len + n + 1);
	if (!nb)
		return -ENOMEM;
	r->body = nb;
	memcpy(nb + r->body_len, data, n);
	r->body_len += n;
	nb[r->body_len] = '\0';
	return 0;
}

/* "5, 5" is one length said twice; "5, 6" is a malformed message (RFC 9110 8.6). */
static int content_length(const struct http_response *r, uint64_t *out, bool *present)
{
	bool seen = false;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < r->nfields; i++) {
		const char *s = r->fields[i].value;

		if (strcmp(r->fields[i].name, "content-length") != 0)
			continue;
		while (*s) {
			uint64_t x = 0;
			const char *d = s;

			while (isdigit((unsigned char)*s)) {
				if (x > (UINT64_MAX - 9) / 10)
					return -EBADMSG;
				x = x * 10 + (uint64_t)(*s++ - '0');
			}
			if (s == d || (seen && x != v))
				return -EBADMSG;
			v = x;
			seen = true;
			while (*s == ' ' || *s == '\t')
				s++;
			if (*s == ',')
				s++;
			else if (*s)
				return -EBADMSG;
			while (*s == ' ' || *s == '\t')
				s++;
		}
	}
	*present = seen;
	*out = v;
	return 0;
}

/* Transfer-Encoding: the body is chunked when the final coding is "chunked". */
static int transfer_encoding(const struct http_response *r, bool *present, bool *chunked)
{
	const char *last = NULL;
	size_t i;

	*present = *chunked = false;
	for (i = 0; i < r->nfields; i++) {
		const char *v = r->fields[i].value, *c;

		if (strcmp(r->fields[i].name, "transfer-encoding") != 0)
			continue;
		*present = true;
		c = strrchr(v, ',');
		last = c ? c + 1 : v;
	}
	if (*present) {
		while (*last == ' ' || *last == '\t')
			last++;
		*chunked = strncasecmp(last, "chunked", 7) == 0 &&
			   (!last[7] || last[7] == ' ' || last[7] == '\t' || last[7] == ';');
	}
	return 0;
}

static int parse_chunked(const uint8_t *b, size_t len, size_t pos, size_t max_body,
			 struct http_response *r)
{
	size_t eol, next;
	int err;

	for (;;) {
		uint64_t size = 0;
		size_t p, digits = 0;

		if (!line_at(b, len, pos, &eol, &next)) {
			r->need = len + 1;
			return len - pos > MAX_CHUNK_LINE ? -EBADMSG : -EAGAIN;
		}
		/* The same bound whether the line came whole or in pieces (http_body). */
		if (eol - pos > MAX_CHUNK_LINE)
			return -EBADMSG;
		for (p = pos; p < eol && isxdigit(b[p]); p++) {
			if (++digits > 15)
				return -EBADMSG;
			size = size * 16 +
			       (uint64_t)(isdigit(b[p]) ? b[p] - '0' : (tolower(b[p]) - 'a' + 10));
		}
		while (p < eol && (b[p] == ' ' || b[p] == '\t'))
			p++;
		if (!digits || (p < eol && b[p] != ';'))
			return -EBADMSG;
		pos = next;
		if (size == 0) {
			err = parse_fields(b, len, &pos, r);
			if (err == -EAGAIN)
				r->need = len + 1;
			return err;
		}
		if (size > max_body - r->body_len)
			return -EFBIG;
		/* The chunk data, then its CRLF. */
		if (len - pos < size + 2) {
			r->need = pos + (size_t)size + 2;
			return -EAGAIN;
		}
		if (b[pos + size] != '\r' || b[pos + size + 1] != '\n')
			return -EBADMSG;
		err = append_body(r, b + pos, (size_t)size, max_body);
		if (err)
			return err;
		pos += (size_t)size + 2;
	}
}

/* The head of the final response: 1xx ones skipped; *pos past it. */
static int parse_head(const uint8_t *b, size_t len, size_t *pos, struct http_response *r)
{
	int err;

	for (;;) {
		http_response__clear(r);
		err = parse_status_line(b, len, pos, &r->status);
		if (!err)
			err = parse_fields(b, len, pos, r);
		if (err) {
			if (err == -EAGAIN)
				r->need = len + 1;
			return err;
		}
		if (r->status >= 200)
			return 0;
		/* 101 would switch protocols, which we never ask for. */
		if (r->status == 101)
			return -EBADMSG;
	}
}

enum framing {
	FRAMING_NONE,
	FRAMING_LENGTH,
	FRAMING_CHUNKED,
	FRAMING_CLOSE, /* delimited by the end of the connection */
};

/* How the body after head r is delimited (RFC 9112 6.3); *length for FRAMING_LENGTH. */
static int body_framing(const struct http_response *r, enum framing *framing, uint64_t *length)
{
	bool has_cl, has_te, chunked;
	int err;

	err = content_length(r, length, &has_cl);
	if (!err)
		err = transfer_encoding(r, &has_te, &chunked);
	if (err)
		return err;
	if (r->status == 204 || r->status == 304)
		*framing = FRAMING_NONE;
	else if (has_te && chunked)
		*framing = FRAMING_CHUNKED;
	else if (!has_te && has_cl)
		*framing = FRAMING_LENGTH;
	else
		*framing = FRAMING_CLOSE;
	return 0;
}

static int parse_once(const uint8_t *b, size_t len, bool eof, size_t max_body,
		      struct http_response *r)
{
	enum framing framing = FRAMING_NONE;
	size_t pos = 0;
	uint64_t cl = 0;
	int err;

	err = parse_head(b, len, &pos, r);
	if (!err)
		err = body_framing(r, &framing, &cl);
	if (err)
		return err;
	switch (framing) {
	case FRAMING_NONE:
		return append_body(r, b, 0, max_body);
	case FRAMING_CHUNKED:
		return parse_chunked(b, len, pos, max_body, r);
	case FRAMING_LENGTH:
		if (cl > max_body)
			return -EFBIG;
		if (len - pos < cl) {
			r->need = pos + (size_t)cl;
			return -EAGAIN;
		}
		return append_body(r, b + pos, (size_t)cl, max_body);
	case FRAMING_CLOSE:
		break;
	}
	if (len - pos > max_body)
		return -EFBIG;
	if (!eof) {
		r->need = SIZE_MAX;
		return -EAGAIN;
	}
	return append_body(r, b + pos, len - pos, max_body);
}

/* The end of a parse: an empty body is still a string, so callers never see NULL. */
static int finish_parse(const uint8_t *buf, bool eof, int err, struct http_response *r)
{
	if (!err && !r->body)
		err = append_body(r, buf, 0, 0);
	if (err) {
		size_t need = r->need;

		http_response__clear(r);
		r->need = need;
		if (err == -EAGAIN && eof)
			err = -ECONNRESET;
	}
	return err;
}

int http__parse_response(const uint8_t *buf, size_t len, bool eof, size_t max_body,
			 struct http_response *r)
{
	*r = (struct http_response){0};
	return finish_parse(buf, eof, parse_once(buf, len, eof, max_body, r), r);
}

int http__parse_head(const uint8_t *buf, size_t len, bool eof, struct http_response *r,
		     size_t *head_len)
{
	size_t pos = 0;
	int err;

	*r = (struct http_response){0};
	err = finish_parse(buf, eof, parse_head(buf, len, &pos, r), r);
	if (!err)
		*head_len = pos;
	return err;
}

/* The streaming body decoder. */

enum chunk_state {
	CHUNK_SIZE,	   /* hex digits of the size */
	CHUNK_SIZE_WS,	   /* blanks after them */
	CHUNK_EXT,	   /* an extension, up to the end of the line */
	CHUNK_SIZE_LF,	   /* after a CR that ends the size line */
	CHUNK_DATA,	   /* the chunk's bytes */
	CHUNK_DATA_CR,	   /* the CRLF after them */
	CHUNK_DATA_LF,	   /* the LF of that CRLF */
	CHUNK_FIELD_START, /* a trailer field's first byte, or the end of the trailers */
	CHUNK_FIELD_NAME,  /* the rest of its name */
	CHUNK_FIELD_VALUE, /* its value */
	CHUNK_FIELD_LF,	   /* after a CR that ends a field line */
	CHUNK_END_LF,	   /* after the CR of the empty line that ends the body */
};

int http_body__init(struct http_body *b, const struct http_response *r, uint64_t max_body)
{
	enum framing framing = FRAMING_NONE;
	uint64_t cl = 0;
	int err;

	*b = (struct http_body){.max = max_body, .nfields = r->nfields};
	err = body_framing(r, &framing, &cl);
	if (err)
		return err;
	if (framing == FRAMING_LENGTH && cl > max_body)
		return -EFBIG;
	b->framing = framing;
	b->state = CHUNK_SIZE;
	/* Chunked wins over a Content-Length beside it (RFC 9112 6.3), which then says nothing. */
	b->left = framing == FRAMING_LENGTH ? cl : 0;
	b->done = framing == FRAMING_NONE || (framing == FRAMING_LENGTH && !cl);
	return 0;
}

/* The end of a chunk-size line: the chunk's data next, or the trailers after the last. */
static int chunk_size_done(struct http_body *b)
{
	if (!b->left) {
		b->state = CHUNK_FIELD_START;
		return 0;
	}
	if (b->left > b->max - b->total)
		return -EFBIG;
	b->state = CHUNK_DATA;
	return 0;
}

/* One byte of a chunked body outside chunk data, as parse_chunked and parse_fields read it. */
static int chunk_byte(struct http_body *b, uint8_t c)
{
	switch (b->state) {
	case CHUNK_SIZE:
	case CHUNK_SIZE_WS:
		if (b->state == CHUNK_SIZE && isxdigit(c)) {
			if (++b->digits > 15)
				return -EBADMSG;
			b->left = b->left * 16 +
				  (uint64_t)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
			return 0;
		}
		if (!b->digits)
			return -EBADMSG;
		if (c == ' ' || c == '\t')
			b->state = CHUNK_SIZE_WS;
		else if (c == ';')
			b->state = CHUNK_EXT;
		else if (c == '\r')
			b->state = CHUNK_SIZE_LF;
		else if (c == '\n')
			return chunk_size_done(b);
		else
			return -EBADMSG;
		return 0;
	case CHUNK_EXT:
		if (c == '\n')
			return chunk_size_done(b);
		return 0;
	case CHUNK_SIZE_LF:
		return c == '\n' ? chunk_size_done(b) : -EBADMSG;
	case CHUNK_DATA_CR:
		b->state = CHUNK_DATA_LF;
		return c == '\r' ? 0 : -EBADMSG;
	case CHUNK_DATA_LF:
		*b = (struct http_body){.framing = b->framing,
					.state = CHUNK_SIZE,
					.total = b->total,
					.max = b->max,
					.nfields = b->nfields};
		return c == '\n' ? 0 : -EBADMSG;
	case CHUNK_FIELD_START:
		if (c == '\n' || c == '\r') {
			b->done = c == '\n';
			b->state = CHUNK_END_LF;
			return 0;
		}
		/* A field: a token, then a colon; no obsolete line folding (RFC 9112 5.2). */
		if (!is_tchar(c))
			return -EBADMSG;
		if (b->nfields++ == HTTP_MAX_FIELDS)
			return -EFBIG;
		b->state = CHUNK_FIELD_NAME;
		return 0;
	case CHUNK_FIELD_NAME:
		if (c == ':')
			b->state = CHUNK_FIELD_VALUE;
		else if (!is_tchar(c))
			return -EBADMSG;
		return 0;
	case CHUNK_FIELD_VALUE:
		if (c == '\r')
			b->state = CHUNK_FIELD_LF;
		else if (c == '\n')
			b->state = CHUNK_FIELD_START;
		else if ((c < 0x20 && c != '\t') || c == 0x7f)
			return -EBADMSG;
		return 0;
	case CHUNK_FIELD_LF:
		b->state = CHUNK_FIELD_START;
		return c == '\n' ? 0 : -EBADMSG;
	case CHUNK_END_LF:
		b->done = c == '\n';
		return b->done ? 0 : -EBADMSG;
	}
	return -EBADMSG;
}

static int decode_chunked(struct http_body *b, uint8_t *buf, size_t len, size_t *out_len)
{
	size_t i = 0, out = 0;
	int err;

	while (i < len && !b->done) {
		if (b->state == CHUNK_DATA) {
			size_t n = len - i < b->left ? len - i : (size_t)b->left;

			memmove(buf + out, buf + i, n);
			out += n;
			i += n;
			b->left -= n;
			b->total += n;
			if (!b->left)
				b->state = CHUNK_DATA_CR;
			continue;
		}
		if (b->state <= CHUNK_SIZE_LF && ++b->line > MAX_CHUNK_LINE + 2)
			return -EBADMSG;
		if (b->state >= CHUNK_FIELD_START && ++b->trailer > HTTP_MAX_HEADER_BYTES)
			return -EFBIG;
		err = chunk_byte(b, buf[i++]);
		if (err)
			return err;
	}
	*out_len = out;
	return 0;
}

int http_body__decode(struct http_body *b, uint8_t *buf, size_t len, bool eof, size_t *out_len)
{
	size_t n = len;
	int err;

	*out_len = 0;
	if (b->done)
		return 1;
	if (b->framing == FRAMING_CHUNKED) {
		err = decode_chunked(b, buf, len, out_len);
		if (err)
			return err;
	} else {
		/* Content-Length, or up to the end: the bytes are the body as they came. */
		if (b->framing == FRAMING_LENGTH && n > b->left)
			n = (size_t)b->left;
		if (n > b->max - b->total)
			return -EFBIG;
		b->total += n;
		b->left -= b->framing == FRAMING_LENGTH ? n : 0;
		b->done = (b->framing == FRAMING_LENGTH && !b->left) ||
			  (b->framing == FRAMING_CLOSE && eof);
		*out_len = n;
	}
	if (b->done)
		return 1;
	return eof ? -ECONNRESET : 0;
}

/* The client. */

/* The end of a step (connect, send, receive): timeout_ms away, or the request's end if sooner. */
static int64_t step_deadline(const struct http_request *req)
{
	int64_t d = clock__mono_ms() + req->timeout_ms;

	return req->deadline && req->deadline < d ? req->deadline : d;
}

static int connect_one(const struct addrinfo *ai, int64_t deadline, const struct cancel *cancel,
		       int *fd_out)
{
	socklen_t len = sizeof(int);
	int fd, err = 0, soerr = 0;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		goto cleanup;
	if (errno != EINPROGRESS) {
		err = -errno;
		goto cleanup;
	}
	err = cancel__wait_fd(cancel, fd, POLLOUT, deadline);
	if (!err && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
		err = -errno;
	else if (!err && soerr)
		err = -soerr;
cleanup:
	if (err) {
		close(fd);
		return err;
	}
	*fd_out = fd;
	return 0;
}

static int connect_any(const struct http_url *u, const struct http_request *req, int *fd, char *msg,
		       size_t msg_size)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL, *ai;
	int64_t deadline = step_deadline(req);
	int rc, err = -EHOSTUNREACH;
	char what[48] = "";

	if (req->proxy)
		snprintf(what, sizeof(what), "the proxy (%s) ", req->proxy->source);

	rc = getaddrinfo(u->host, u->port, &hints, &res);
	if (rc) {
		snprintf(msg, msg_size, "cannot resolve %s%s: %s", what, u->host,
			 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		err = connect_one(ai, deadline, req->cancel, fd);
		if (!err || err == -ECANCELED || err == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	if (err == -ETIMEDOUT)
		snprintf(msg, msg_size, "connect to %s%s:%s timed out after %d ms", what, u->host,
			 u->port, req->timeout_ms);
	else if (err)
		snprintf(msg, msg_size, "connect to %s%s:%s: %s", what, u->host, u->port,
			 strerror(-err));
	return err;
}

/* A connection: the socket, and TLS over it for https. */
struct conn {
	int fd;
	struct tls_conn *tls;
	char detail[256]; /* TLS's own account of a failure, if it had one */
};

static int conn_send(struct conn *c, const void *data, size_t len, int64_t deadline,
		     const struct cancel *cancel)
{
	const uint8_t *p = data;
	int err;

	if (c->tls)
		return tls_conn__write(c->tls, data, len, deadline, cancel, c->detail,
				       sizeof(c->detail));
	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			err = cancel__wait_fd(cancel, c->fd, POLLOUT, deadline);
			if (err)
				return err;
			continue;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Bytes received (waiting for some until deadline), 0 at the end of the stream, or -errno. */
static ssize_t conn_recv(struct conn *c, void *buf, size_t cap, int64_t deadline,
			 const struct cancel *cancel)
{
	ssize_t n;
	int err;

	if (c->tls)
		return tls_conn__read(c->tls, buf, cap, deadline, cancel, c->detail,
				      sizeof(c->detail));
	for (;;) {
		err = cancel__wait_fd(cancel, c->fd, POLLIN, deadline);
		if (err)
			return err;
		n = recv(c->fd, buf, cap, 0);
		if (n >= 0)
			return n;
		if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
	}
}

static int build_head(const struct http_url *u, const struct http_request *req, char *head,
		      size_t size, size_t *len)
{
	size_t n, i;
	int w;

	/* Through a proxy (http:// only: https:// is tunnelled), the absolute form. */
	const bool absolute = req->proxy && !u->tls;

	w = snprintf(head, size,
		     "%s %s%s%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %zu\r\nConnection: "
		     "close\r\n",
		     req->method, absolute ? "http://" : "", absolute ? u->hostport : "",
		     req->target, u->hostport, req->body_len);
	if (w < 0 || (size_t)w >= size)
		return -E2BIG;
	n = (size_t)w;
	if (absolute && req->proxy->authorization[0]) {
		w = snprintf(head + n, size - n, "Proxy-Authorization: %s\r\n",
			     req->proxy->authorization);
		if (w < 0 || (size_t)w >= size - n)
			return -E2BIG;
		n += (size_t)w;
	}
	for (i = 0; i < req->nheaders; i++) {
		w = snprintf(head + n, size - n, "%s: %s\r\n", req->headers[i].name,
			     req->headers[i].value);
		if (w < 0 || (size_t)w >= size - n)
			return -E2BIG;
		n += (size_t)w;
	}
	if (size - n < 3)
		return -E2BIG;
	memcpy(head + n, "\r\n", 3);
	*len = n + 2;
	return 0;
}

/*
 * Some more bytes (waiting for them until deadline): their number, or
 * -errno. *eof is set when the stream ends, then 0 is returned.
 */
static ssize_t recv_more(struct conn *c, void *buf, size_t cap, int64_t deadline,
			 const struct cancel *cancel, bool *eof)
{
	ssize_t n = conn_recv(c, buf, cap, deadline, cancel);

	/* A reset after a complete response still leaves that response. */
	if (n == 0 || (n == -ECONNRESET && !c->tls)) {
		*eof = true;
		return 0;
	}
	return n;
}

/* The one line that says why receiving failed, len bytes into the response. */
static void receive_failed(int err, const struct conn *c, const struct http_request *req,
			   uint64_t len, char *msg, size_t msg_size)
{
	switch (err) {
	case -ETIMEDOUT:
		snprintf(msg, msg_size,
			 "no complete response within %d ms (%" PRIu64 " bytes received)",
			 req->timeout_ms, len);
		break;
	case -ECONNRESET:
		if (len)
			snprintf(msg, msg_size,
				 "the server closed the connection mid-response (%" PRIu64
				 " bytes received)",
				 len);
		else
			snprintf(msg, msg_size,
				 "the server closed the connection without a response%s",
				 c->tls ? tls_conn__close_hint(c->tls) : "");
		break;
	case -EBADMSG:
		snprintf(msg, msg_size, "malformed HTTP response from the server");
		break;
	case -EFBIG:
		snprintf(msg, msg_size, "the server's response is larger than allowed (%zu bytes)",
			 req->max_body);
		break;
	default:
		if (c->detail[0])
			snprintf(msg, msg_size, "%s", c->detail);
		else
			snprintf(msg, msg_size, "receiving the response: %s", strerror(-err));
	}
}

static int receive(struct conn *c, const struct http_request *req, struct http_response *resp,
		   char *msg, size_t msg_size)
{
	int64_t deadline = step_deadline(req);
	/* Room for the headers and a chunked encoding of the largest body allowed. */
	size_t cap_limit = HTTP_MAX_HEADER_BYTES + 2 * req->max_body + 4096;
	size_t len = 0, cap = 0, need = 1;
	uint8_t *buf = NULL;
	bool eof = false;
	int err;

	for (;;) {
		ssize_t n;

		if (len >= need || eof) {
			err = http__parse_response(buf, len, eof, req->max_body, resp);
			if (err != -EAGAIN)
				break;
			need = resp->need;
		}
		if (len == cap) {
			uint8_t *nb;
			size_t ncap = cap ? cap * 2 : RECV_FIRST_SIZE;

			if (cap >= cap_limit) {
				err = -EFBIG;
				break;
			}
			if (ncap > cap_limit)
				ncap = cap_limit;
			nb = realloc(buf, ncap);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		n = recv_more(c, buf + len, cap - len, deadline, req->cancel, &eof);
		if (n < 0) {
			err = (int)n;
			break;
		}
		len += (size_t)n;
	}
	if (err)
		receive_failed(err, c, req, len, msg, msg_size);
	free(buf);
	return err;
}

/*
 * receive() for a request with a body sink: the head in memory, the body of
 * a 2xx response decoded as it arrives and handed to the sink, through one
 * buffer of a fixed size.
 */
static int receive_streamed(struct conn *c, const struct http_request *req,
			    struct http_response *resp, char *msg, size_t msg_size)
{
	int64_t deadline = step_deadline(req);
	uint8_t *buf = malloc(STREAM_BUF_SIZE);
	size_t len = 0, head_len = 0, out = 0;
	uint64_t received = 0;
	struct http_body body;
	bool eof = false;
	int err = -EAGAIN, rc;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	while (err == -EAGAIN) {
		if (len == STREAM_BUF_SIZE) {
			err = -EFBIG;
			break;
		}
		n = recv_more(c, buf + len, STREAM_BUF_SIZE - len, deadline, req->cancel, &eof);
		if (n < 0) {
			err = (int)n;
			break;
		}
		len += (size_t)n;
		err = http__parse_head(buf, len, eof, resp, &head_len);
	}
	received = len;
	if (err || resp->status / 100 != 2)
		goto cleanup;
	err = http_body__init(&body, resp, req->max_body);
	len -= head_len;
	memmove(buf, buf + head_len, len);
	while (!err) {
		rc = http_body__decode(&body, buf, len, eof, &out);
		if (rc < 0) {
			err = rc;
			break;
		}
		if (out) {
			err = req->write_body(req->body_ctx, buf, out);
			if (err) {
				snprintf(msg, msg_size, "writing the response body: %s",
					 strerror(-err));
				goto cleanup;
			}
		}
		if (rc == 1)
			break;
		n = recv_more(c, buf, STREAM_BUF_SIZE, deadline, req->cancel, &eof);
		if (n < 0)
			err = (int)n;
		len = n > 0 ? (size_t)n : 0;
		received += len;
	}
cleanup:
	if (err && !msg[0])
		receive_failed(err, c, req, received, msg, msg_size);
	if (err)
		http_response__clear(resp);
	free(buf);
	return err;
}

/* Why the proxy refused the tunnel, for its answer's status. */
static void tunnel_refused(const struct http_request *req, const struct http_url *url, int status,
			   char *msg, size_t msg_size)
{
	const struct proxy *p = req->proxy;

	if (status == 407 && !p->authorization[0])
		snprintf(msg, msg_size,
			 "the proxy (%s) wants a login: give it in the proxy's URL, "
			 "http://user:password@%s",
			 p->source, p->url.hostport);
	else if (status == 407)
		snprintf(msg, msg_size, "the proxy (%s) refused the login in its URL", p->source);
	else
		snprintf(msg, msg_size, "the proxy (%s) refused the tunnel to %s:%s: HTTP %d",
			 p->source, url->host, url->port, status);
}

/* A CONNECT tunnel through the proxy to the server, for TLS end to end. */
static int tunnel(const struct http_url *url, const struct http_request *req, struct conn *c,
		  char *msg, size_t msg_size)
{
	int64_t deadline = step_deadline(req);
	char head[1024];
	uint8_t reply[4096];
	size_t len = 0, head_len = 0;
	int n, err, status = 0;
	ssize_t got;

	n = snprintf(head, sizeof(head), "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n%s%s%s\r\n",
		     url->host, url->port, url->host, url->port,
		     req->proxy->authorization[0] ? "Proxy-Authorization: " : "",
		     req->proxy->authorization, req->proxy->authorization[0] ? "\r\n" : "");
	if (n < 0 || (size_t)n >= sizeof(head))
		return -E2BIG;
	err = conn_send(c, head, (size_t)n, deadline, req->cancel);
	/* One byte at a time: what follows the answer is the server's, for TLS. */
	while (!err) {
		err = proxy__parse_connect_reply(reply, len, &status, &head_len);
		if (err != -EAGAIN)
			break;
		got = len < sizeof(reply) ? conn_recv(c, reply + len, 1, deadline, req->cancel)
					  : -EFBIG;
		err = got > 0 ? 0 : got == 0 ? -ECONNRESET : (int)got;
		len += got > 0 ? 1 : 0;
	}
	if (err == -ECANCELED)
		snprintf(msg, msg_size, "interrupted");
	else if (err == -ETIMEDOUT)
		snprintf(msg, msg_size, "the proxy (%s) did not answer CONNECT within %d ms",
			 req->proxy->source, req->timeout_ms);
	else if (err)
		snprintf(msg, msg_size, "the proxy (%s) gave no usable answer to CONNECT: %s",
			 req->proxy->source,
			 err == -EBADMSG ? "not HTTP"
			 : err == -EFBIG ? "too large"
					 : strerror(-err));
	else if (status / 100 != 2) {
		tunnel_refused(req, url, status, msg, msg_size);
		err = -ECONNREFUSED;
	}
	return err;
}

/* TLS on the connected socket, for an https:// URL. */
static int start_tls(const struct http_url *url, const struct http_request *req, struct conn *c,
		     char *msg, size_t msg_size)
{
	if (!req->tls) {
		snprintf(msg, msg_size, "https:// without a TLS configuration");
		return -EINVAL;
	}
	return tls_conn__open(req->tls, c->fd, req->server_name ? req->server_name : url->host,
			      step_deadline(req), req->cancel, &c->tls, msg, msg_size);
}

static int send_request(struct conn *c, const struct http_request *req, const char *head,
			size_t head_len)
{
	int64_t deadline = step_deadline(req);
	int err;

	err = conn_send(c, head, head_len, deadline, req->cancel);
	if (!err && req->body_len)
		err = conn_send(c, req->body, req->body_len, deadline, req->cancel);
	return err;
}

int http__request(const struct http_url *url, const struct http_request *req,
		  struct http_response *resp, char *msg, size_t msg_size)
{
	char head[MAX_REQUEST_HEAD];
	struct conn c = {.fd = -1};
	size_t head_len;
	int err, send_err;

	*resp = (struct http_response){0};
	msg[0] = '\0';
	if (req->cancel && cancel__triggered(req->cancel)) {
		snprintf(msg, msg_size, "interrupted");
		return -ECANCELED;
	}
	err = build_head(url, req, head, sizeof(head), &head_len);
	if (err) {
		snprintf(msg, msg_size, "request headers too large");
		return err;
	}
	err = connect_any(req->proxy ? &req->proxy->url : url, req, &c.fd, msg, msg_size);
	if (err)
		return err;
	if (req->proxy && url->tls) {
		err = tunnel(url, req, &c, msg, msg_size);
		if (err)
			goto cleanup;
	}
	if (url->tls) {
		err = start_tls(url, req, &c, msg, msg_size);
		if (err)
			goto cleanup;
	}
	pr_debug("%s %s://%s%s (%zu bytes)", req->method, url->tls ? "https" : "http",
		 url->hostport, req->target, req->body_len);
	send_err = send_request(&c, req, head, head_len);
	if (send_err == -ETIMEDOUT || send_err == -ECANCELED) {
		err = send_err;
		snprintf(msg, msg_size, "%s",
			 err == -ETIMEDOUT ? "sending the request timed out" : "interrupted");
		goto cleanup;
	}
	/* A server may answer (e.g. 413) and close before reading the whole body. */
	if (req->write_body)
		err = receive_streamed(&c, req, resp, msg, msg_size);
	else
		err = receive(&c, req, resp, msg, msg_size);
	if (err && send_err) {
		if (c.detail[0])
			snprintf(msg, msg_size, "%s", c.detail);
		else
			snprintf(msg, msg_size, "sending the request: %s", strerror(-send_err));
		err = send_err;
	}
cleanup:
	tls_conn__free(c.tls);
	close(c.fd);
	if (err)
		http_response__clear(resp);
	return err;
}
