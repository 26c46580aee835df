/* SPDX-License-Identifier: MIT */
/* Base64 for HTTP Basic credentials (RFC 7617): the only encoding they use. */
#ifndef CPROF_BASE64_H
#define CPROF_BASE64_H

/* The padded base64 of the string in, malloc'd; NULL without memory. */
char *base64__encode(const char *in);

#endif
