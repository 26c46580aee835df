/* SPDX-License-Identifier: MIT */
/*
 * Reads of mapped files that a user can truncate. libelf maps the files
 * cprof reads (ELF_C_READ_MMAP); a user who truncates their own library
 * while cprof parses it makes cprof's next read of a page past the new end
 * raise SIGBUS, which would end root's cprof and lose its profile. Code that
 * reads such a mapping runs under sigbus__call: the fault ends that call
 * with -EIO, on the thread that took it, and is counted. A SIGBUS outside
 * any such call ends cprof as before.
 *
 * What the cut-off call had allocated and not yet handed to its caller is
 * lost (a file's worth at most, bounded by the load caps); the caller
 * treats the file as unreadable.
 */
#ifndef CPROF_SIGBUS_H
#define CPROF_SIGBUS_H

#include <stdint.h>

/* Installs the handler; 0 or -errno. Once, before any thread starts. */
int sigbus__install(void);
/* fn(arg)'s result, or -EIO when a SIGBUS cut it off. Calls may nest. */
int sigbus__call(int (*fn)(void *), void *arg);
/* Calls cut off by a SIGBUS since the start, on every thread. */
uint64_t sigbus__faults(void);

#endif
