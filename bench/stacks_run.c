// SPDX-License-Identifier: MIT
/*
 * Process plumbing for bench/stacks. It profiles each workload in the
 * profilers' command mode (`cprof -- CMD`, `perf record -- CMD`), where the
 * profiler waits for the workload, so the rusage that GNU time reports for
 * the profiler would include the workload's: its CPU time, and its peak RSS,
 * a maximum over both that no subtraction undoes (xz -9 on bench/stacks'
 * text peaks at 39 MB, cprof at 2-4 MB). This keeps the workload's rusage
 * out of the profiler's:
 *
 *   stacks_run --reap FILE -- COMMAND [ARG...]
 *       Becomes a child subreaper, runs COMMAND, and reaps COMMAND and every
 *       process orphaned under it. Writes "CPU_SECONDS MAXRSS_KB" of those
 *       orphans (the workload: user+sys, and the largest peak RSS), then the
 *       same of COMMAND (with the children it waited for: the profiler) to
 *       FILE, CPU to the microsecond (GNU time's -v gives hundredths, too
 *       coarse for cprof's 0.02-0.05 s). Exits with COMMAND's status.
 *   stacks_run --detach -- COMMAND [ARG...]
 *       Runs COMMAND as its child and, once it has exited, exits with its
 *       status without reaping it (waitid with WNOWAIT): the zombie goes to
 *       the nearest subreaper, so whoever waits for this process (the
 *       profiler) adds none of COMMAND's rusage to its own.
 *
 * bench/stacks runs: stacks_run --reap FILE -- PROFILER ... -- stacks_run
 * --detach -- WORKLOAD ...
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(void)
{
	fprintf(stderr, "usage: stacks_run --reap FILE -- COMMAND [ARG...]\n"
			"       stacks_run --detach -- COMMAND [ARG...]\n");
	exit(2);
}

/* The shell's convention: the exit status, or 128 + the signal. */
static int status_of(int code, int value)
{
	return code == CLD_EXITED ? value : 128 + value;
}

static pid_t spawn(char **argv)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("stacks_run: fork");
		exit(1);
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "stacks_run: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static double seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static int reap(const char *file, char **argv)
{
	pid_t command, pid;
	int status, rc = 1;
	double cpu = 0, command_cpu = 0;
	long maxrss = 0, command_maxrss = 0;
	struct rusage ru;
	FILE *out;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
		perror("stacks_run: PR_SET_CHILD_SUBREAPER");
		return 1;
	}
	command = spawn(argv);
	/* Until no child is left: COMMAND, and whatever was orphaned under it. */
	while ((pid = wait4(-1, &status, 0, &ru)) > 0 || errno == EINTR) {
		if (pid <= 0)
			continue;
		if (pid == command) {
			rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			command_cpu = seconds(ru.ru_utime) + seconds(ru.ru_stime);
			command_maxrss = ru.ru_maxrss;
			continue;
		}
		cpu += seconds(ru.ru_utime) + seconds(ru.ru_stime);
		if (ru.ru_maxrss > maxrss)
			maxrss = ru.ru_maxrss;
	}
	out = fopen(file, "w");
	if (!out ||
	    fprintf(out, "%.6f %ld %.6f %ld\n", cpu, maxrss, command_cpu, command_maxrss) < 0 ||
	    fclose(out) != 0) {
		fprintf(stderr, "stacks_run: %s: %s\n", file, strerror(errno));
		return 1;
	}
	return rc;
}

static int detach(char **argv)
{
	siginfo_t si;
	pid_t pid = spawn(argv);

	memset(&si, 0, sizeof(si));
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0) {
		if (errno != EINTR) {
			perror("stacks_run: waitid");
			return 1;
		}
	}
	return status_of(si.si_code, si.si_status);
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "--reap") == 0 && strcmp(argv[3], "--") == 0)
		return reap(argv[2], argv + 4);
	if (argc >= 4 && strcmp(argv[1], "--detach") == 0 && strcmp(argv[2], "--") == 0)
		return detach(argv + 3);
	usage();
	return 2;
}
