// SPDX-License-Identifier: MIT
/*
 * TLS connections for uploads; see tls.h. mbedTLS is built from our own
 * configuration (third_party/mbedtls): client side only, TLS 1.2 and 1.3,
 * ECDHE with RSA or ECDSA certificates, AES-GCM and ChaCha20-Poly1305.
 *
 * The server's certificate is checked by mbedTLS against the trusted CAs and
 * the name; a callback keeps what the check saw of the server's own
 * certificate (its names and dates), which the error message needs and
 * mbedTLS does not keep once the handshake has failed.
 */
#define MBEDTLS_ALLOW_PRIVATE_ACCESS /* the alert a server sent: ssl.in_msg[1] */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <psa/crypto.h>

#define LOG_MODULE "tls"
#include "net/tls.h"
#include "lib/cancel.h"
#include "lib/log.h"

struct tls_client {
	mbedtls_ssl_config conf;
	mbedtls_x509_crt ca;
	mbedtls_x509_crt cert;
	mbedtls_pk_context key;
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
	bool has_cert;
	int nca;
	char trust[320]; /* where the CAs came from, for messages */
};

/* What the check saw of the server's own certificate. */
struct leaf {
	bool seen;
	char names[256];
	mbedtls_x509_time valid_from, valid_to;
};

struct tls_conn {
	mbedtls_ssl_context ssl;
	const struct tls_client *c;
	int fd;
	int sock_err; /* the socket's error behind a failed send or receive */
	struct leaf leaf;
	char name[256];
};

/* The usual places of a system's CA bundle, as curl and Go look for them. */
static const char *const system_bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt",		     /* Debian, Ubuntu, Alpine, Arch */
	"/etc/pki/tls/certs/ca-bundle.crt",		     /* Fedora, RHEL */
	"/etc/ssl/ca-bundle.pem",			     /* openSUSE */
	"/etc/pki/tls/cacert.pem",			     /* OpenELEC */
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* CentOS, RHEL 7 */
	"/etc/ssl/cert.pem",				     /* Alpine, macOS-like layouts */
};

static int count_certs(const mbedtls_x509_crt *crt)
{
	int n = 0;

	for (; crt && crt->raw.len; crt = crt->next)
		n++;
	return n;
}

/* The trusted CAs: the file or directory asked for, else the system's bundle. */
static int load_cas(struct tls_client *c, const struct tls_opts *o, char *err, size_t err_size)
{
	const char *path = o->ca_file;
	size_t i;
	int ret;

	if (!path && o->ca_dir) {
		ret = mbedtls_x509_crt_parse_path(&c->ca, o->ca_dir);
		snprintf(c->trust, sizeof(c->trust), "the directory %s", o->ca_dir);
	} else {
		for (i = 0; !path && i < sizeof(system_bundles) / sizeof(*system_bundles); i++)
			if (access(system_bundles[i], R_OK) == 0)
				path = system_bundles[i];
		if (!path) {
			snprintf(err, err_size,
				 "no trusted CAs: no system CA bundle (such as %s) was found; name "
				 "one with --ca-file or SSL_CERT_FILE",
				 system_bundles[0]);
			return -ENOENT;
		}
		ret = mbedtls_x509_crt_parse_file(&c->ca, path);
		snprintf(c->trust, sizeof(c->trust), "%s", path);
	}
	c->nca = count_certs(&c->ca);
	/* A bundle may hold a certificate mbedTLS cannot read (ret > 0): the others serve. */
	if (c->nca == 0) {
		snprintf(err, err_size, "no CA certificate could be read from %s%s", c->trust,
			 ret == MBEDTLS_ERR_X509_FILE_IO_ERROR ? " (cannot read it)" : "");
		return ret == MBEDTLS_ERR_X509_FILE_IO_ERROR ? -ENOENT : -EINVAL;
	}
	if (ret > 0)
		pr_debug("%d certificates of %s could not be read; %d CAs trusted", ret, c->trust,
			 c->nca);
	return 0;
}

static int load_client_cert(struct tls_client *c, const struct tls_opts *o, char *err,
			    size_t err_size)
{
	int ret;

	if (!o->cert_file && !o->key_file)
		return 0;
	if (!o->cert_file || !o->key_file) {
		snprintf(err, err_size, "a client certificate needs both --cert and --key");
		return -EINVAL;
	}
	ret = mbedtls_x509_crt_parse_file(&c->cert, o->cert_file);
	if (ret || !count_certs(&c->cert)) {
		snprintf(err, err_size, "cannot read a certificate from %s%s", o->cert_file,
			 ret == MBEDTLS_ERR_X509_FILE_IO_ERROR ? " (cannot read the file)"
							       : " (not a PEM or DER certificate)");
		return -EINVAL;
	}
	ret = mbedtls_pk_parse_keyfile(&c->key, o->key_file, NULL, mbedtls_ctr_drbg_random,
				       &c->drbg);
	if (ret) {
		snprintf(err, err_size, "cannot read a private key from %s%s", o->key_file,
			 ret == MBEDTLS_ERR_PK_FILE_IO_ERROR ? " (cannot read the file)"
			 : ret == MBEDTLS_ERR_PK_PASSWORD_REQUIRED
				 ? " (it is encrypted; cprof reads unencrypted keys)"
				 : " (not a PEM or DER RSA or EC key)");
		return -EINVAL;
	}
	if (mbedtls_pk_check_pair(&c->cert.pk, &c->key, mbedtls_ctr_drbg_random, &c->drbg)) {
		snprintf(err, err_size, "the key in %s does not belong to the certificate in %s",
			 o->key_file, o->cert_file);
		return -EINVAL;
	}
	ret = mbedtls_ssl_conf_own_cert(&c->conf, &c->cert, &c->key);
	if (ret) {
		snprintf(err, err_size, "cannot use the client certificate (mbedTLS error -0x%04x)",
			 (unsigned int)-ret);
		return -EINVAL;
	}
	c->has_cert = true;
	return 0;
}

int tls_client__new(const struct tls_opts *o, struct tls_client **out, char *err, size_t err_size)
{
	struct tls_client *c;
	psa_status_t st;
	int ret, rc = -EINVAL;

	*out = NULL;
	err[0] = '\0';
	st = psa_crypto_init();
	if (st != PSA_SUCCESS) {
		snprintf(err, err_size, "cannot start the crypto library (PSA status %d)", (int)st);
		return -EIO;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	mbedtls_ssl_config_init(&c->conf);
	mbedtls_x509_crt_init(&c->ca);
	mbedtls_x509_crt_init(&c->cert);
	mbedtls_pk_init(&c->key);
	mbedtls_entropy_init(&c->entropy);
	mbedtls_ctr_drbg_init(&c->drbg);
	ret = mbedtls_ctr_drbg_seed(&c->drbg, mbedtls_entropy_func, &c->entropy,
				    (const unsigned char *)"cprof", 5);
	if (ret) {
		snprintf(err, err_size, "cannot seed the random generator (mbedTLS error -0x%04x)",
			 (unsigned int)-ret);
		rc = -EIO;
		goto cleanup;
	}
	ret = mbedtls_ssl_config_defaults(&c->conf, MBEDTLS_SSL_IS_CLIENT,
					  MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (ret) {
		snprintf(err, err_size, "cannot set up TLS (mbedTLS error -0x%04x)",
			 (unsigned int)-ret);
		goto cleanup;
	}
	mbedtls_ssl_conf_rng(&c->conf, mbedtls_ctr_drbg_random, &c->drbg);
	mbedtls_ssl_conf_min_tls_version(&c->conf, MBEDTLS_SSL_VERSION_TLS1_2);
	if (o->insecure) {
		mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_NONE);
	} else {
		rc = load_cas(c, o, err, err_size);
		if (rc)
			goto cleanup;
		mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
		mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
	}
	rc = load_client_cert(c, o, err, err_size);
	if (rc)
		goto cleanup;
	*out = c;
	return 0;
cleanup:
	tls_client__free(c);
	return rc;
}

void tls_client__free(struct tls_client *c)
{
	if (!c)
		return;
	mbedtls_ssl_config_free(&c->conf);
	mbedtls_x509_crt_free(&c->ca);
	mbedtls_x509_crt_free(&c->cert);
	mbedtls_pk_free(&c->key);
	mbedtls_ctr_drbg_free(&c->drbg);
	mbedtls_entropy_free(&c->entropy);
	free(c);
}

int tls_client__ca_count(const struct tls_client *c)
{
	return c->nca;
}

/* The socket under mbedTLS: non-blocking, waits are ours (wait_for). */
static int bio_send(void *ctx, const unsigned char *buf, size_t len)
{
	struct tls_conn *t = ctx;
	ssize_t n = send(t->fd, buf, len, MSG_NOSIGNAL);

	if (n >= 0)
		return (int)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	t->sock_err = -errno;
	return errno == ECONNRESET || errno == EPIPE ? MBEDTLS_ERR_NET_CONN_RESET
						     : MBEDTLS_ERR_NET_SEND_FAILED;
}

static int bio_recv(void *ctx, unsigned char *buf, size_t len)
{
	struct tls_conn *t = ctx;
	ssize_t n = recv(t->fd, buf, len, 0);

	if (n >= 0)
		return (int)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_READ;
	t->sock_err = -errno;
	return errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_RECV_FAILED;
}

/* Appends the certificate's DNS and IP names to l->names, comma-separated. */
static void keep_names(struct leaf *l, const mbedtls_x509_crt *crt)
{
	const mbedtls_x509_sequence *s;
	size_t n = 0;
	int w;

	l->names[0] = '\0';
	for (s = &crt->subject_alt_names; s && s->buf.p && n < sizeof(l->names); s = s->next) {
		const unsigned char *p = s->buf.p;
		size_t len = s->buf.len;
		const char *sep = n ? ", " : "";

		if (s->buf.tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_X509_SAN_DNS_NAME))
			w = snprintf(l->names + n, sizeof(l->names) - n, "%s%.*s", sep,
				     (int)(len < 200 ? len : 200), (const char *)p);
		else if (s->buf.tag ==
				 (MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_X509_SAN_IP_ADDRESS) &&
			 len == 4)
			w = snprintf(l->names + n, sizeof(l->names) - n, "%s%u.%u.%u.%u", sep, p[0],
				     p[1], p[2], p[3]);
		else if (s->buf.tag ==
				 (MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_X509_SAN_IP_ADDRESS) &&
			 len == 16)
			w = snprintf(l->names + n, sizeof(l->names) - n, "%san IPv6 address", sep);
		else
			continue;
		if (w < 0)
			break;
		n += (size_t)w;
	}
	/* Only a certificate without names is matched by its subject's common name. */
	if (!n)
		mbedtls_x509_dn_gets(l->names, sizeof(l->names), &crt->subject);
}

static int on_verify(void *ctx, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	struct leaf *l = ctx;

	(void)flags;
	if (depth == 0) {
		l->seen = true;
		l->valid_from = crt->valid_from;
		l->valid_to = crt->valid_to;
		keep_names(l, crt);
	}
	return 0;
}

/* Waits for what mbedTLS asked for (ret: WANT_READ or WANT_WRITE). */
static int wait_for(struct tls_conn *t, int ret, int64_t deadline, const struct cancel *cancel)
{
	return cancel__wait_fd(cancel, t->fd, ret == MBEDTLS_ERR_SSL_WANT_WRITE ? POLLOUT : POLLIN,
			       deadline);
}

static bool wants_io(int ret)
{
	return ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE;
}

/* The alerts of RFC 8446 section 6 and RFC 5246 that a server may end with. */
static const struct {
	unsigned char code;
	const char *name;
} alerts[] = {
	{10, "unexpected_message"},
	{20, "bad_record_mac"},
	{40, "handshake_failure"},
	{42, "bad_certificate"},
	{43, "unsupported_certificate"},
	{44, "certificate_revoked"},
	{45, "certificate_expired"},
	{46, "certificate_unknown"},
	{47, "illegal_parameter"},
	{48, "unknown_ca"},
	{49, "access_denied"},
	{50, "decode_error"},
	{51, "decrypt_error"},
	{70, "protocol_version"},
	{71, "insufficient_security"},
	{80, "internal_error"},
	{86, "inappropriate_fallback"},
	{90, "user_canceled"},
	{109, "missing_extension"},
	{110, "unsupported_extension"},
	{112, "unrecognized_name"},
	{116, "certificate_required"},
	{120, "no_application_protocol"},
};

static const char *alert_name(unsigned int a)
{
	size_t i;

	for (i = 0; i < sizeof(alerts) / sizeof(*alerts); i++)
		if (alerts[i].code == a)
			return alerts[i].name;
	return NULL;
}

/*
 * Why a server that cprof got as far as checking the certificate of (so
 * version, ciphers and key exchange were agreed) ends the handshake without
 * a clearer alert: what OpenSSL servers do with client certificates.
 */
static const char *client_cert_hint(const struct tls_conn *t)
{
	return t->c->has_cert ? ": it may have refused cprof's client certificate"
			      : ": it may want a client certificate (--cert and --key)";
}

/* What an alert from the server most likely means for the user. */
static const char *alert_hint(const struct tls_conn *t, unsigned int a)
{
	switch (a) {
	case 116:
		return ": it wants a client certificate (--cert and --key)";
	case 42:
	case 43:
	case 44:
	case 45:
	case 46:
	case 48:
	case 49:
		return client_cert_hint(t);
	case 70:
		return ": no TLS version in common (cprof speaks TLS 1.2 and 1.3)";
	case 40:
	case 71:
		return t->leaf.seen ? client_cert_hint(t)
				    : ": no cipher suite or key exchange in common";
	case 112:
		return ": it does not serve that name (--server-name sets the one sent)";
	default:
		return "";
	}
}

static int alert_error(const struct tls_conn *t, const char *when, char *msg, size_t msg_size)
{
	unsigned int a = t->ssl.in_msg ? t->ssl.in_msg[1] : 0;
	const char *name = alert_name(a);

	if (name)
		snprintf(msg, msg_size, "server %s ended the TLS %s with the alert %s%s", t->name,
			 when, name, alert_hint(t, a));
	else
		snprintf(msg, msg_size, "server %s ended the TLS %s with the alert %u", t->name,
			 when, a);
	return a == 116 || (a >= 42 && a <= 49) ? -EKEYREJECTED : -EPROTO;
}

static void format_time(const mbedtls_x509_time *tm, char *buf, size_t size)
{
	snprintf(buf, size, "%04d-%02d-%02d %02d:%02d:%02d UTC", tm->year, tm->mon, tm->day,
		 tm->hour, tm->min, tm->sec);
}

/* Why the server's certificate was refused, from mbedTLS's flags. */
static int verify_error(const struct tls_conn *t, char *msg, size_t msg_size)
{
	uint32_t f = mbedtls_ssl_get_verify_result(&t->ssl);
	const struct leaf *l = &t->leaf;
	char when[40];

	if (f & MBEDTLS_X509_BADCERT_CN_MISMATCH)
		snprintf(msg, msg_size,
			 "the server's certificate is for %s, not %s (--server-name sets the name "
			 "to check)",
			 l->seen && l->names[0] ? l->names : "no name", t->name);
	else if (f & MBEDTLS_X509_BADCERT_EXPIRED) {
		format_time(&l->valid_to, when, sizeof(when));
		snprintf(msg, msg_size, "the certificate of server %s expired on %s", t->name,
			 l->seen ? when : "an earlier date");
	} else if (f & MBEDTLS_X509_BADCERT_FUTURE) {
		format_time(&l->valid_from, when, sizeof(when));
		snprintf(msg, msg_size,
			 "the certificate of server %s is not valid before %s (is this host's "
			 "clock right?)",
			 t->name, l->seen ? when : "a later date");
	} else if (f & MBEDTLS_X509_BADCERT_NOT_TRUSTED)
		snprintf(msg, msg_size,
			 "the certificate of server %s is not signed by a trusted CA (trusted: %d "
			 "CAs of %s; --ca-file names another)",
			 t->name, t->c->nca, t->c->trust);
	else if (f & (MBEDTLS_X509_BADCERT_BAD_MD | MBEDTLS_X509_BADCERT_BAD_PK |
		      MBEDTLS_X509_BADCERT_BAD_KEY))
		snprintf(msg, msg_size,
			 "the certificate of server %s uses a signature or key that is not "
			 "accepted (flags 0x%x)",
			 t->name, (unsigned int)f);
	else
		snprintf(msg, msg_size, "the certificate of server %s was refused (flags 0x%x)",
			 t->name, (unsigned int)f);
	return -EKEYREJECTED;
}

/* One line for a failed call of mbedTLS (ret), during what `when` says. */
static int tls_error(const struct tls_conn *t, int ret, const char *when, char *msg,
		     size_t msg_size)
{
	switch (ret) {
	case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
		return verify_error(t, msg, msg_size);
	case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE:
		return alert_error(t, when, msg, msg_size);
	case MBEDTLS_ERR_SSL_CONN_EOF:
	case MBEDTLS_ERR_NET_CONN_RESET:
		snprintf(msg, msg_size, "server %s closed the connection during the TLS %s%s",
			 t->name, when,
			 strcmp(when, "handshake") ? ""
			 : t->leaf.seen		   ? client_cert_hint(t)
						   : " (is it an https server?)");
		return -ECONNRESET;
	case MBEDTLS_ERR_NET_SEND_FAILED:
	case MBEDTLS_ERR_NET_RECV_FAILED:
		snprintf(msg, msg_size, "TLS %s with server %s: %s", when, t->name,
			 strerror(t->sock_err ? -t->sock_err : EIO));
		return t->sock_err ? t->sock_err : -EIO;
	case MBEDTLS_ERR_SSL_INVALID_RECORD:
	case MBEDTLS_ERR_SSL_UNSUPPORTED_EXTENSION:
	case MBEDTLS_ERR_SSL_DECODE_ERROR:
		snprintf(msg, msg_size,
			 "server %s does not speak TLS as expected during the %s (is it an "
			 "http:// server?)",
			 t->name, when);
		return -EPROTO;
	case MBEDTLS_ERR_SSL_BAD_PROTOCOL_VERSION:
		snprintf(msg, msg_size,
			 "server %s offers no TLS version cprof speaks (TLS 1.2 and 1.3)", t->name);
		return -EPROTO;
	case MBEDTLS_ERR_SSL_HANDSHAKE_FAILURE:
		snprintf(msg, msg_size,
			 "TLS handshake with server %s failed: no cipher suite, key exchange or "
			 "signature algorithm in common",
			 t->name);
		return -EPROTO;
	default:
		snprintf(msg, msg_size, "TLS %s with server %s failed (mbedTLS error -0x%04x)",
			 when, t->name, (unsigned int)-ret);
		return -EPROTO;
	}
}

static int wait_error(const struct tls_conn *t, int err, const char *when, char *msg,
		      size_t msg_size)
{
	if (err == -ETIMEDOUT)
		snprintf(msg, msg_size, "the TLS %s with server %s timed out", when, t->name);
	else if (err == -ECANCELED)
		snprintf(msg, msg_size, "interrupted");
	else
		snprintf(msg, msg_size, "TLS %s with server %s: %s", when, t->name, strerror(-err));
	return err;
}

/*
 * After a call of mbedTLS that made no progress (ret < 0): 0 once the socket
 * is ready for it to be made again, else the error, with its line in msg.
 */
static int wait_or_fail(struct tls_conn *t, int ret, const char *when, int64_t deadline,
			const struct cancel *cancel, char *msg, size_t msg_size)
{
	int err;

	if (!wants_io(ret))
		return tls_error(t, ret, when, msg, msg_size);
	err = wait_for(t, ret, deadline, cancel);
	return err ? wait_error(t, err, when, msg, msg_size) : 0;
}

int tls_conn__open(const struct tls_client *c, int fd, const char *name, int64_t deadline,
		   const struct cancel *cancel, struct tls_conn **out, char *msg, size_t msg_size)
{
	struct tls_conn *t;
	int ret, err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(msg, msg_size, "out of memory");
		return -ENOMEM;
	}
	t->c = c;
	t->fd = fd;
	snprintf(t->name, sizeof(t->name), "%s", name);
	mbedtls_ssl_init(&t->ssl);
	ret = mbedtls_ssl_setup(&t->ssl, &c->conf);
	if (!ret)
		ret = mbedtls_ssl_set_hostname(&t->ssl, name);
	if (ret) {
		snprintf(msg, msg_size, "cannot set up TLS for %s (mbedTLS error -0x%04x)", name,
			 (unsigned int)-ret);
		err = -EINVAL;
		goto cleanup;
	}
	mbedtls_ssl_set_verify(&t->ssl, on_verify, &t->leaf);
	mbedtls_ssl_set_bio(&t->ssl, t, bio_send, bio_recv, NULL);
	while ((ret = mbedtls_ssl_handshake(&t->ssl))) {
		err = wait_or_fail(t, ret, "handshake", deadline, cancel, msg, msg_size);
		if (err)
			goto cleanup;
	}
	pr_debug("%s with %s, %s", mbedtls_ssl_get_version(&t->ssl), name,
		 mbedtls_ssl_get_ciphersuite(&t->ssl));
	*out = t;
	return 0;
cleanup:
	tls_conn__free(t);
	return err;
}

int tls_conn__write(struct tls_conn *t, const void *data, size_t len, int64_t deadline,
		    const struct cancel *cancel, char *msg, size_t msg_size)
{
	const unsigned char *p = data;
	int ret, err;

	while (len) {
		ret = mbedtls_ssl_write(&t->ssl, p, len);
		if (ret > 0) {
			p += ret;
			len -= (size_t)ret;
			continue;
		}
		err = wait_or_fail(t, ret, "connection", deadline, cancel, msg, msg_size);
		if (err)
			return err;
	}
	return 0;
}

ssize_t tls_conn__read(struct tls_conn *t, void *buf, size_t cap, int64_t deadline,
		       const struct cancel *cancel, char *msg, size_t msg_size)
{
	int ret, err;

	for (;;) {
		ret = mbedtls_ssl_read(&t->ssl, buf, cap);
		if (ret >= 0)
			return ret;
		/* A close without close_notify ends the stream too: HTTP says where it ends. */
		if (ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || ret == MBEDTLS_ERR_SSL_CONN_EOF ||
		    ret == MBEDTLS_ERR_NET_CONN_RESET)
			return 0;
		/* TLS 1.3 servers send tickets after the handshake; cprof does not resume. */
		if (ret == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET)
			continue;
		err = wait_or_fail(t, ret, "connection", deadline, cancel, msg, msg_size);
		if (err)
			return err;
	}
}

const char *tls_conn__close_hint(const struct tls_conn *t)
{
	return t->c->has_cert ? " (it may have refused cprof's client certificate)" : "";
}

void tls_conn__free(struct tls_conn *t)
{
	if (!t)
		return;
	mbedtls_ssl_free(&t->ssl);
	free(t);
}
