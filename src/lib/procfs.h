/* SPDX-License-Identifier: MIT */
/* Small, bounded reads of /proc files that any process on the host controls. */
#ifndef CPROF_PROCFS_H
#define CPROF_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* lib/file.h's readers for /proc files: a file that is not there means -ESRCH, "gone". */
int procfs__read_small(const char *path, char *buf, size_t size);
int procfs__read_all(const char *path, char **out, size_t *len);
/* Process name from /proc/PID/comm without the newline; -ESRCH when gone. */
int procfs__comm(uint32_t pid, char *buf, size_t size);
/* True while /proc/PID exists (a zombie still counts). */
bool procfs__pid_exists(uint32_t pid);
/* The process's real user ID from /proc/PID/status, as the host sees it. */
int procfs__uid(uint32_t pid, uint32_t *uid);
/* The thread group (process) a thread ID belongs to, from /proc/TID/status. */
int procfs__tgid(uint32_t tid, uint32_t *tgid);
/* The PID in the process's own PID namespace (last NSpid field); = pid if not namespaced. */
int procfs__ns_pid(uint32_t pid, uint32_t *ns_pid);
/* The process's start time in clock ticks since boot (field 22 of /proc/PID/stat). */
int procfs__start_time(uint32_t pid, uint64_t *ticks);
/* True for a kernel thread (kthreadd and its children): it has no user memory. */
bool procfs__is_kernel_thread(uint32_t pid);
/* kernel.perf_event_max_sample_rate: the fastest sampling event the kernel allows now. */
int procfs__perf_max_sample_rate(uint64_t *rate);

#endif
