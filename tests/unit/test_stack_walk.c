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

/*
 * Whether pc is in the tail of libgcc's context install (__builtin_eh_return
 * in _Unwind_RaiseException and its kin): from the store of the handler's
 * address into the return slot, some 40 bytes before the end, through the
 * restore of the landing frame's registers to mov %rcx,%rsp; pop %rcx;
 * jmp *%rcx. The CFI there still describes the thrower's frame, on a stack
 * and registers already made the handler's: no unwinder following it
 * (perf's neither) finds the real callers (the return slot names the
 * landing pad), so such a snapshot is not counted.
 */
static bool installing_handler(pid_t pid, uint64_t pc)
{
	static const uint8_t tail[] = {0x48, 0x89, 0xcc, 0x59, 0xff, 0xe1};
	uint8_t code[64];
	char path[64];
	size_t k;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	if (pread(fd, code, sizeof(code), (off_t)(pc - 8)) != (ssize_t)sizeof(code)) {
		close(fd);
		return false;
	}
	close(fd);
	/* The tail starts at most 5 bytes before pc (pc in it) or 48 after. */
	for (k = 3; k + sizeof(tail) <= sizeof(code); k++)
		if (!memcmp(code + k, tail, sizeof(tail)))
			return true;
	return false;
}

/* One fixture's walks: how many reached the root through main, how many passed `via`. */
struct walks {
	int total, complete, via;
	int stopped_no_cfi; /* walks that ended at root, but where CFI ends */
};

static void walk_fixture(const char *name, const char *root, const char *via, int count,
			 struct walks *out)
{
	static uint8_t stack[STACK_COPY];
	static char names[CPROF_UNWIND_MAX_DEPTH][64]; /* as deep as any --max-stack */
	struct timespec pause = {0, 7 * 1000 * 1000};
	struct proc_tables p = {0};
	struct walk_result res;
	struct stack_walk w;
	uint32_t j;
	pid_t pid;
	int i;

	memset(out, 0, sizeof(*out));
	pid = proc_tables__run(&p, test_build_fixture(name), "3");
	w = (struct stack_walk){unwind_rules__all(p.rules), unwind_rules__count(p.rules), ~0ull,
				proc_tables__find, &p};
	for (i = 0; i < count; i++) {
		struct stack_snapshot snap = {0};

		snapshot(pid, &snap, stack);
		if (installing_handler(pid, snap.pc)) {
			fprintf(stderr, "  %s walk %d: in libgcc's handler install, not counted\n",
				name, i);
			continue;
		}
		stack_walk__run(&w, &snap, &res);
		for (j = 0; j < res.n; j++)
			snprintf(names[j], sizeof(names[j]), "%s",
				 proc_tables__name(&p, res.ips[j], j == 0));
		out->total++;
		out->via += has(names, res.n, via);
		if (res.stop == CPROF_STOP_NO_CFI && !strcmp(names[res.n - 1], root) &&
		    has(names, res.n, "main")) {
			out->stopped_no_cfi++;
		} else if (res.stop == CPROF_STOP_NONE && !strcmp(names[res.n - 1], root) &&
			   has(names, res.n, "main")) {
			out->complete++;
		} else {
			const struct proc_map *m = proc_maps__find(p.maps, snap.pc);

			fprintf(stderr,
				"  %s walk %d: stop %u, %u frames (copied %zu; pc %#llx in %s):",
				name, i, res.stop, res.n, snap.stack_size,
				(unsigned long long)snap.pc, m && m->path ? m->path : "no mapping");
			for (j = 0; j < res.n; j++)
				fprintf(stderr, " %s", names[j]);
			fprintf(stderr, "\n");
		}
		nanosleep(&pause, NULL);
	}
	proc_tables__kill(pid);
	proc_tables__free(&p);
}

#if defined(__x86_64__)
#define NEED_X86()
#else
#define NEED_X86() SKIP("ptrace snapshots are taken with x86_64 registers")
#endif

/* glibc's qsort: its internal msort_with_tmp frames have no frame pointers. */
TEST(stack_walk_through_glibc_qsort_reaches_start)
{
	struct walks r;

	NEED_X86();
	walk_fixture("libc_qsort", "_start", "qsort_r", 20, &r);
	CHECK_INT(r.complete, ==, r.total);
	CHECK(r.via >= r.total / 2);
}

/* gcc -O2 without frame pointers: main -> work -> mid -> hot_a / hot_b. */
TEST(stack_walk_gcc_o2_without_frame_pointers)
{
	struct walks r;

	NEED_X86();
	walk_fixture("nofp_gcc", "_start", "mid", 20, &r);
	CHECK_INT(r.complete, ==, r.total);
	CHECK_INT(r.via, ==, r.total);
}

/*
 * A signal handler doing a quarter of the work: walks from inside it go
 * through the kernel's signal frame (glibc's __restore_rt, CFI with 'S')
 * back into main's loop, and on to _start.
 */
TEST(stack_walk_through_a_signal_frame)
{
	struct walks r;

	NEED_X86();
	walk_fixture("signal_work", "_start", "handler", 40, &r);
	CHECK_INT(r.complete, ==, r.total);
	CHECK(r.via >= 1);
}

/*
 * Static musl binaries (clang + lld with .eh_frame_hdr, gcc without): the
 * program's frames have CFI, musl's libc.a none, so every walk ends at
 * libc_start_main_stage2, where the CFI ends, and says so.
 */
static void check_static(const char *name)
{
	struct walks r;

	walk_fixture(name, "libc_start_main_stage2", "mid", 10, &r);
	CHECK_INT(r.via, ==, r.total);
	CHECK_INT(r.stopped_no_cfi, ==, r.total);
}

TEST(stack_walk_static_musl_stops_where_cfi_ends)
{
	NEED_X86();
	check_static("static_musl");
	check_static("static_musl_gcc");
}

/* C++ at -O2: templates, std::sort, exceptions thrown and caught. */
TEST(stack_walk_cxx_o2)
{
	struct walks r;

	NEED_X86();
	walk_fixture("cxx_nofp", "_start", "_ZN2uw3runEd", 20, &r);
	CHECK_INT(r.complete, ==, r.total);
	CHECK_INT(r.via, ==, r.total);
}
