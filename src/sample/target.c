// SPDX-License-Identifier: MIT
/*
 * Two pipes make the start of the command race-free: the child blocks on
 * `go` until the parent has attached, and reports an exec failure through
 * `err` (close-on-exec, so a successful exec closes it with nothing written).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sample/target.h"

#define LOG_MODULE "command"
#include "lib/log.h"

struct target {
	pid_t pid;
	int go_fd;  /* parent writes one byte to release the child */
	int err_fd; /* child writes its exec errno on failure */
	bool reaped;
	int status;
	char name[256];
};

int target__spawn(char *const argv[], struct target **out)
{
	int go[2] = {-1, -1}, errp[2] = {-1, -1}, err;
	struct target *t;
	char c;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	snprintf(t->name, sizeof(t->name), "%s", argv[0]);
	if (pipe2(go, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		pr_err("pipe: %s", strerror(-err));
		goto cleanup;
	}
	t->pid = fork();
	if (t->pid < 0) {
		err = -errno;
		pr_err("cannot start %s: fork: %s", argv[0], strerror(-err));
		goto cleanup;
	}
	if (t->pid == 0) {
		close(go[1]);
		close(errp[0]);
		/* The parent exiting without a byte also releases us; then just exit. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		/* cprof ignores nothing the command should inherit. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		err = errno;
		if (write(errp[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	t->go_fd = go[1];
	t->err_fd = errp[0];
	*out = t;
	return 0;
cleanup:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	free(t);
	return err;
}

pid_t target__pid(const struct target *t)
{
	return t->pid;
}

int target__release(struct target *t)
{
	int child_errno = 0;
	ssize_t n;

	if (write(t->go_fd, "g", 1) != 1) {
		int err = -errno;

		pr_err("cannot start %s: %s", t->name, strerror(-err));
		return err;
	}
	close(t->go_fd);
	t->go_fd = -1;
	do {
		n = read(t->err_fd, &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	close(t->err_fd);
	t->err_fd = -1;
	if (n == sizeof(child_errno)) {
		pr_err("cannot run %s: %s", t->name, strerror(child_errno));
		target__wait(t, &t->status);
		return -child_errno;
	}
	return 0;
}

bool target__exited(struct target *t, int *status)
{
	pid_t r;

	if (!t->reaped) {
		r = waitpid(t->pid, &t->status, WNOHANG);
		if (r == t->pid)
			t->reaped = true;
	}
	if (t->reaped && status)
		*status = t->status;
	return t->reaped;
}

int target__wait(struct target *t, int *status)
{
	pid_t r;

	while (!t->reaped) {
		r = waitpid(t->pid, &t->status, 0);
		if (r == t->pid)
			t->reaped = true;
		else if (r < 0 && errno != EINTR)
			return -errno;
	}
	if (status)
		*status = t->status;
	return 0;
}

int target__exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

void target__free(struct target *t)
{
	if (!t)
		return;
	if (t->go_fd >= 0)
		close(t->go_fd);
	if (t->err_fd >= 0)
		close(t->err_fd);
	if (!t->reaped && t->pid > 0) {
		kill(t->pid, SIGKILL);
		target__wait(t, NULL);
	}
	free(t);
}
