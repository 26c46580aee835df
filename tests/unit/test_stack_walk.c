// SPDX-License-Identifier: MIT
/*
 * The user-space walk on real stacks: a fixture runs glibc's qsort (whose
 * internals have no frame pointers), is stopped with ptrace at moments of
 * its choosing twenty times, and each time its registers and the top
 * 64 KiB of its stack are copied, as the kernel copies them for a sample;
 * the walk must reach the thread's root (_start) through qsort's frames
 * (compare_ints, msort_with_tmp..., qsort_r, sort_rounds, main,
 * __libc_start_call_main, __libc_start_main, _start), every time. Tables come from the
 * files the process maps, as in a profile.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc_tables.h"
#include "test.h"
#include "unwind/stack_walk.h"

#define STACK_COPY (64 * 1024)

/* Stops the process, copies what a sample would hold, lets it go on. */
static void snapshot(pid_t pid, struct stack_snapshot *snap, uint8_t *stack)
{
	struct user_regs_struct regs;
	char path[64];
	ssize_t n;
	int fd, status;

	CHECK_INT(ptrace(PTRACE_ATTACH, pid, 0, 0), ==, 0);
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK_INT(ptrace(PTRACE_GETREGS, pid, 0, &regs), ==, 0);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	/* The stack may end before 64 KiB: take pages while they read, as the kernel copies. */
	snap->stack_size = 0;
	while (snap->stack_size < STACK_COPY) {
		uint64_t at = regs.rsp + snap->stack_size;
		size_t chunk = 4096 - (at & 4095);

		if (chunk > STACK_COPY - snap->stack_size)
			chunk = STACK_COPY - snap->stack_size;
		n = pread(fd, stack + snap->stack_size, chunk, at);
		if (n <= 0)
			break;
		snap->stack_size += n;
	}
	close(fd);
	CHECK_INT(ptrace(PTRACE_DETACH, pid, 0, 0), ==, 0);
	snap->pc = regs.rip;
	snap->sp = regs.rsp;
	snap->fp = regs.rbp;
	snap->stack = stack;
}

static bool has(char names[][64], uint32_t n, const char *want)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], want))
			return true;
	return false;
}

TEST(stack_walk_through_glibc_qsort_reaches_start)
{
	static uint8_t stack[STACK_COPY];
	char names[CPROF_MAX_STACK_DEPTH][64];
	const char *fixture = test_build_fixture("libc_qsort");
	struct timespec pause = {0, 7 * 1000 * 1000};
	struct stack_walk w;
	struct walk_result res;
	struct proc_tables p = {0};
	int i, complete = 0, in_qsort = 0;
	uint32_t j;
	pid_t pid;

#if !defined(__x86_64__)
	SKIP("ptrace snapshots are taken with x86_64 registers");
#endif
	pid = proc_tables__run(&p, fixture, "3");
	w = (struct stack_walk){unwind_rules__all(p.rules), unwind_rules__count(p.rules), ~0ull,
				proc_tables__find, &p};
	for (i = 0; i < 20; i++) {
		struct stack_snapshot snap = {0};

		snapshot(pid, &snap, stack);
		stack_walk__run(&w, &snap, &res);
		for (j = 0; j < res.n; j++)
			snprintf(names[j], sizeof(names[j]), "%s",
				 proc_tables__name(&p, res.ips[j], j == 0));
		if (res.stop == CPROF_STOP_NONE && !strcmp(names[res.n - 1], "_start") &&
		    has(names, res.n, "main") && has(names, res.n, "sort_rounds"))
			complete++;
		else {
			fprintf(stderr,
				"  walk %d: stop %u, %u frames (pc %#lx sp %#lx copied %zu):", i,
				res.stop, res.n, (unsigned long)snap.pc, (unsigned long)snap.sp,
				snap.stack_size);
			for (j = 0; j < res.n; j++)
				fprintf(stderr, " %s", names[j]);
			fprintf(stderr, "\n");
		}
		in_qsort += has(names, res.n, "qsort_r");
		nanosleep(&pause, NULL);
	}
	proc_tables__kill(pid);
	proc_tables__free(&p);
	CHECK_INT(complete, ==, 20);
	CHECK(in_qsort >= 10);
}
