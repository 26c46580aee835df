/* SPDX-License-Identifier: MIT */
/*
 * TLS for uploads, over mbedTLS: a client configuration built once per run
 * (the trust store is parsed once, whatever the number of uploads), and
 * connections on sockets that http.c has connected. Every wait is a poll()
 * with the caller's deadline and cancel token, as for plain HTTP, so a
 * server that stalls its handshake holds cprof no longer than a silent one.
 *
 * Failures come back as a negative errno and one line that names the cause
 * the way a user can act on it: the certificate's names on a host-name
 * mismatch, its end date when expired, the trust store used when the CA is
 * unknown, the alert the server sent when it ended the handshake.
 */
#ifndef CPROF_TLS_H
#define CPROF_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cancel;

struct tls_opts {
	/* Trusted CAs: a PEM file, or a directory of them; NULL for the trust store's. */
	const char *ca_file;
	const char *ca_dir;
	const char *cert_file; /* client certificate (PEM), or NULL */
	const char *key_file;  /* its private key (PEM or DER, not encrypted) */
	bool insecure;	       /* no certificate check at all (--insecure-skip-verify) */
};

/* The configuration every connection of a run shares. */
struct tls_client;

/*
 * Loads the CAs and the client certificate. Returns 0, or a negative errno
 * with a one-line reason in err (a file that cannot be read or holds no
 * certificate, a key that does not match its certificate...).
 */
int tls_client__new(const struct tls_opts *o, struct tls_client **out, char *err, size_t err_size);
void tls_client__free(struct tls_client *c);
/* How many CAs are trusted (0 with insecure). */
int tls_client__ca_count(const struct tls_client *c);

struct tls_conn;

/*
 * The handshake on the connected non-blocking socket fd, sending name as
 * SNI and checking the certificate against it, within deadline
 * (clock__mono_ms). The connection does not own fd.
 */
int tls_conn__open(const struct tls_client *c, int fd, const char *name, int64_t deadline,
		   const struct cancel *cancel, struct tls_conn **out, char *msg, size_t msg_size);
/* Writes all of data: 0, or a negative errno with the reason in msg. */
int tls_conn__write(struct tls_conn *t, const void *data, size_t len, int64_t deadline,
		    const struct cancel *cancel, char *msg, size_t msg_size);
/*
 * Reads what has arrived, waiting for some until deadline: the number of
 * bytes, 0 at the end of the stream (the server's close_notify, or a close
 * without one), or a negative errno with the reason in msg.
 */
ssize_t tls_conn__read(struct tls_conn *t, void *buf, size_t cap, int64_t deadline,
		       const struct cancel *cancel, char *msg, size_t msg_size);
/*
 * What a server that closes a TLS 1.3 connection without a response may
 * mean: it refused the client certificate after the handshake (TLS 1.3
 * lets it), with no alert if it is Node's. "" when cprof sent none.
 */
const char *tls_conn__close_hint(const struct tls_conn *t);
void tls_conn__free(struct tls_conn *t);

#endif
