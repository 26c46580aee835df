/* SPDX-License-Identifier: MIT */
/*
 * Asking a running HotSpot JVM (JDK 17 and later) to write its perf map,
 * as `jcmd PID Compiler.perfmap` does, through the JVM's attach mechanism:
 * an empty file .attach_pidNSPID of the JVM's user in its /tmp and a
 * SIGQUIT make the JVM open the socket /tmp/.java_pidNSPID; the request is
 * protocol version "1", the command "jcmd" and its argument, each ended by
 * a NUL, padded to three arguments; the reply is a status line, then text.
 *
 * Everything the process and its /tmp say is untrusted (it may only pretend
 * to be a JVM): its /tmp is reached inside its root without any link, the
 * socket must be a socket of the JVM's user, the signal goes only to a
 * process that catches SIGQUIT (any other would die of it), through a
 * pidfd so that no process that took the PID gets it, and every wait and
 * read ends by the caller's deadline, the reply cut at JVM_ATTACH_MAX_REPLY.
 */
#ifndef CPROF_JVM_ATTACH_H
#define CPROF_JVM_ATTACH_H

#include <stddef.h>
#include <stdint.h>

/* More than Compiler.perfmap ever says (nothing, or one error line). */
#define JVM_ATTACH_MAX_REPLY (64u << 10)

/* Why a JVM was not asked, or its answer not taken; counted in the summary. */
enum jvm_attach_failure {
	JVM_ATTACH_OK,
	JVM_ATTACH_GONE,	  /* the process exited, or is another one now */
	JVM_ATTACH_NO_SIGQUIT,	  /* it does not catch SIGQUIT: not signalled */
	JVM_ATTACH_NO_PIDFD,	  /* no pidfd (Linux before 5.3): not signalled */
	JVM_ATTACH_NO_TMP,	  /* its /tmp not reachable without links, or on FUSE */
	JVM_ATTACH_BAD_SOCKET,	  /* .java_pidN is not a socket of the JVM's user */
	JVM_ATTACH_NO_SOCKET,	  /* no socket by the deadline */
	JVM_ATTACH_NO_CONNECTION, /* the socket took no connection */
	JVM_ATTACH_TIMEOUT,	  /* no whole reply by the deadline */
	JVM_ATTACH_TOO_LONG,	  /* a reply over JVM_ATTACH_MAX_REPLY */
	JVM_ATTACH_BAD_REPLY,	  /* not "STATUS\n...", or a status other than 0 */
	JVM_ATTACH_FAILURES,
};

/*
 * Asks JVM pid (ns_pid in its own PID namespace, 0: the same; start_time
 * as /proc/PID/stat says, so that a process that took the PID is not
 * asked) to write its perf map; returns by deadline_ns (CLOCK_MONOTONIC).
 * 0 when it answered status 0, else -errno and *why.
 */
int jvm_attach__perf_map(uint32_t pid, uint32_t ns_pid, uint64_t start_time, uint64_t deadline_ns,
			 enum jvm_attach_failure *why);
/*
 * Parses a reply: the status (a decimal number of at most 9 digits,
 * optionally negative) on its first line, then text from *text_off.
 * 0, or -EBADMSG.
 */
int jvm_attach__parse_reply(const char *buf, size_t len, int *status, size_t *text_off);
/* A short phrase for the summary and debug output. */
const char *jvm_attach__failure_name(enum jvm_attach_failure why);

#endif
