/* SPDX-License-Identifier: MIT */
/*
 * cprof's mbedTLS 3.6 configuration: a TLS client for uploads to profiling
 * servers, nothing more. Written from nothing (not a trimmed copy of the
 * default mbedtls_config.h): every option below is on because something in
 * the list that follows needs it.
 *
 *   - TLS 1.2 and TLS 1.3, client side only: no server, no DTLS;
 *   - TLS 1.3 with the ephemeral (ECDHE) key exchange mode, groups x25519,
 *     secp256r1 and secp384r1; TLS 1.2 with ECDHE-ECDSA and ECDHE-RSA;
 *   - AES-GCM and ChaCha20-Poly1305 only (no CBC, no CCM, no NULL cipher);
 *   - server certificates: X.509 parsing (PEM or DER, single files,
 *     bundles, directories such as SSL_CERT_DIR), chain verification,
 *     expiry and host-name checks; RSA (PKCS#1 v1.5 and PSS) and ECDSA
 *     signatures over SHA-256/384/512;
 *   - a client certificate's private key, unencrypted: PKCS#1 RSA, SEC1 EC
 *     and PKCS#8 (RSA or EC) keys, PEM or DER;
 *   - entropy from the OS (Linux getrandom(), else /dev/urandom) into
 *     CTR_DRBG.
 *
 * third_party/build.sh compiles the library with
 * -DMBEDTLS_CONFIG_FILE pointing here, and installs this file as
 * .output/FLAVOR/deps/include/mbedtls/mbedtls_config.h, in place of the
 * default one: code compiled against the deps' headers sees exactly this
 * configuration without any flag. Editing this file rebuilds the library
 * (it is part of the package's stamp). mbedtls/check_config.h, included by
 * build_info.h after this file, rejects inconsistent combinations.
 *
 * Threading: MBEDTLS_THREADING_C is off. PSA crypto (which TLS 1.3 and
 * MBEDTLS_USE_PSA_CRYPTO use) keeps global state, so only one thread at a
 * time may call into mbedTLS (cprof's uploads all run on the delivery
 * thread), and psa_crypto_init() must come before any TLS, X.509 or PK call.
 */
#ifndef CPROF_MBEDTLS_CONFIG_H
#define CPROF_MBEDTLS_CONFIG_H

/* Lets code check that it sees this configuration, not mbedTLS's default. */
#define CPROF_MBEDTLS_CONFIG 1

/* ---- system -------------------------------------------------------------- */

/* Assembly for bignum multiplication on x86_64 and aarch64 (RSA, ECC). */
#define MBEDTLS_HAVE_ASM
/* time() and gmtime_r(): certificates' validity periods are checked. */
#define MBEDTLS_HAVE_TIME
#define MBEDTLS_HAVE_TIME_DATE
/* mbedtls_x509_crt_parse_file() and _parse_path() (CA bundles,
 * SSL_CERT_DIR), mbedtls_pk_parse_keyfile() (client keys). */
#define MBEDTLS_FS_IO

/* ---- randomness ---------------------------------------------------------- */

/* The platform entropy source (entropy_poll.c): getrandom(), else
 * /dev/urandom. Its accumulator hashes with SHA-512. */
#define MBEDTLS_ENTROPY_C
#define MBEDTLS_CTR_DRBG_C

/* ---- symmetric ciphers and hashes ---------------------------------------- */

/* AES (CTR_DRBG and AES-GCM), with AES-NI on x86_64 and the Armv8 crypto
 * extension on aarch64 when the CPU has them (checked at run time):
 * faster, and constant-time, unlike the table-based software AES. */
#define MBEDTLS_AES_C
#define MBEDTLS_AESNI_C
#define MBEDTLS_AESCE_C
#define MBEDTLS_GCM_C
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C
/* No MBEDTLS_CIPHER_C: with PSA doing TLS's record protection nothing
 * needs the generic cipher layer, and GCM then goes straight to AES
 * (MBEDTLS_BLOCK_CIPHER_C, enabled by mbedTLS itself). */

#define MBEDTLS_MD_C
/* SHA-1: certificate parsing needs it. mbedtls_x509_crt_parse() rejects a
 * certificate whose signature algorithm it does not know, and 30 of the
 * 144 roots in Debian 12's CA bundle are self-signed with
 * sha1WithRSAEncryption (DigiCert Global Root CA, GlobalSign Root CA,
 * Baltimore CyberTrust Root...): without SHA-1 they would not be trusted.
 * A root's own signature is never checked; the default verification
 * profile still refuses SHA-1 signatures in a chain, and the TLS
 * handshake never offers SHA-1 signatures. */
#define MBEDTLS_SHA1_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA384_C
#define MBEDTLS_SHA512_C
/* TLS 1.3's key schedule (PSA HKDF-Extract and -Expand need it on). */
#define MBEDTLS_HKDF_C

/* ---- public-key cryptography --------------------------------------------- */

#define MBEDTLS_BIGNUM_C
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15 /* RSA PKCS#1 v1.5 signatures */
#define MBEDTLS_PKCS1_V21 /* RSA-PSS signatures (TLS 1.3's rsa_pss_rsae_*) */
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_NIST_OPTIM /* fast reduction for the NIST curves */
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_SECP384R1_ENABLED
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C

/* PSA crypto: TLS 1.3 is built on it, and 3.6 wants X.509, PK and TLS 1.2
 * to use it too. No persistent key storage, no secure elements. */
#define MBEDTLS_PSA_CRYPTO_C
#define MBEDTLS_USE_PSA_CRYPTO

/* ---- ASN.1, PEM, keys, certificates -------------------------------------- */

#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C /* ECDSA signatures are ASN.1 encoded */
#define MBEDTLS_OID_C
#define MBEDTLS_BASE64_C
#define MBEDTLS_PEM_PARSE_C
#define MBEDTLS_PK_C
/* Unencrypted PKCS#1 RSA, SEC1 EC and PKCS#8 keys, PEM or DER. Encrypted
 * keys would need PKCS#5/PKCS#12 and CBC: not supported. */
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C
/* RSA-PSS outside TLS 1.3's own CertificateVerify: certificates signed
 * with id-RSASSA-PSS (some private PKIs issue them), and a TLS 1.2
 * server's ServerKeyExchange signed with rsa_pss_rsae_*, as OpenSSL signs
 * it when the client offers those (third_party/patches/mbedtls/ says why
 * that needs a patch of 3.6.6). */
#define MBEDTLS_X509_RSASSA_PSS_SUPPORT

/* ---- TLS ----------------------------------------------------------------- */

#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_SSL_PROTO_TLS1_3
#define MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_EPHEMERAL_ENABLED
/* RFC 8446 D.4: look like TLS 1.2 resumption to middleboxes. */
#define MBEDTLS_SSL_TLS1_3_COMPATIBILITY_MODE
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
/* RFC 7627, against TLS 1.2's triple-handshake attack. */
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET
#define MBEDTLS_SSL_SERVER_NAME_INDICATION
/* TLS 1.3 requires it; cprof prints the certificate's names on a
 * host-name mismatch. */
#define MBEDTLS_SSL_KEEP_PEER_CERTIFICATE
/* Tell the server why a handshake was abandoned (its logs then say). */
#define MBEDTLS_SSL_ALL_ALERT_MESSAGES

/* mbedtls_strerror(): the error's text, for messages to the user. Measured
 * on x86_64: 14 KB of code and strings (a handshake program stripped,
 * 12 KB larger). */
#define MBEDTLS_ERROR_C

/* Off on purpose (for the record): MBEDTLS_SSL_SRV_C, MBEDTLS_SSL_PROTO_DTLS,
 * MBEDTLS_DEBUG_C, MBEDTLS_CIPHER_MODE_CBC, MBEDTLS_CCM_C,
 * MBEDTLS_CIPHER_NULL_CIPHER, MBEDTLS_SSL_RENEGOTIATION,
 * MBEDTLS_SSL_SESSION_TICKETS (every connection does a full handshake; a
 * TLS 1.3 server's NewSessionTicket is read and ignored), MBEDTLS_SSL_ALPN,
 * MBEDTLS_X509_CRL_PARSE_C, MBEDTLS_ECP_DP_SECP521R1_ENABLED (a server
 * certificate on P-521 is refused), MBEDTLS_ECDSA_DETERMINISTIC and
 * MBEDTLS_HMAC_DRBG_C (ECDSA signs with CTR_DRBG's randomness),
 * MBEDTLS_NET_C and MBEDTLS_TIMING_C (cprof does its own sockets and
 * timeouts, through mbedtls_ssl_set_bio()), MBEDTLS_PLATFORM_C,
 * MBEDTLS_THREADING_C (see the top), MBEDTLS_PSA_KEY_STORE_DYNAMIC (PSA
 * keeps at most MBEDTLS_PSA_KEY_SLOT_COUNT = 32 keys at once; a connection
 * uses a few), MBEDTLS_PSA_CRYPTO_STORAGE_C, MBEDTLS_SELF_TEST. */

/* ---- sizes --------------------------------------------------------------- */

/* Incoming records: the full 16 KB a server may send (without the max
 * fragment length extension, which servers often ignore, there is no way
 * to ask for less). Outgoing: 16 KB too, because mbedTLS does not split
 * an outgoing TLS handshake message over records: the ClientHello and a
 * client certificate chain must each fit in one, and a chain with an
 * RSA-4096 intermediate can pass 4 KB. It costs 12 KB of heap per
 * connection over 4096. */
#define MBEDTLS_SSL_IN_CONTENT_LEN 16384
#define MBEDTLS_SSL_OUT_CONTENT_LEN 16384

#endif /* CPROF_MBEDTLS_CONFIG_H */
