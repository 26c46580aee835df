// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deliver/output.h"

#define LOG_MODULE "output"
#include "lib/log.h"

struct output {
	char *path;
	int fd;
	bool is_stdout;
	bool created; /* we created it: remove it if we never write */
	bool written;
	bool regular;
};

int output__open(const char *path, bool binary, struct output **out)
{
	struct output *o;
	struct stat st;
	int err;

	*out = NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->fd = -1;
	o->path = strdup(path);
	if (!o->path) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (strcmp(path, "-") == 0) {
		if (binary && isatty(STDOUT_FILENO)) {
			pr_err("refusing to write a binary profile to a terminal: use -o FILE, "
			       "redirect stdout, or --format folded");
			err = -EINVAL;
			goto cleanup;
		}
		o->is_stdout = true;
		o->fd = STDOUT_FILENO;
		*out = o;
		return 0;
	}
	o->created = stat(path, &st) != 0;
	o->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (o->fd < 0) {
		err = -errno;
		pr_err("cannot write output file '%s': %s", path, strerror(-err));
		goto cleanup;
	}
	if (fstat(o->fd, &st) == 0)
		o->regular = S_ISREG(st.st_mode);
	*out = o;
	return 0;
cleanup:
	output__free(o);
	return err;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

static void save_fallback(const struct output *o, const void *data, size_t len)
{
	const char *dir = getenv("TMPDIR");
	const char *base = strrchr(o->path, '/');
	char path[4096];
	int fd, err;

	base = base ? base + 1 : o->path;
	if (o->is_stdout || !*base)
		base = "cprof.out";
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/cprof-%d-%ld-%s", dir, (int)getpid(), (long)time(NULL),
		 base);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		pr_err("the profile could not be saved to %s either: %s", path, strerror(errno));
		return;
	}
	err = write_all(fd, data, len);
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		pr_err("the profile could not be saved to %s either: %s", path, strerror(-err));
		unlink(path);
		return;
	}
	pr_err("the profile was saved to %s instead", path);
}

int output__write(struct output *o, const void *data, size_t len)
{
	int err = 0;

	if (o->regular && ftruncate(o->fd, 0))
		err = -errno;
	if (!err)
		err = write_all(o->fd, data, len);
	/* close() is where some filesystems report a failed write. */
	if (!err && !o->is_stdout) {
		if (close(o->fd))
			err = -errno;
		o->fd = -1;
	}
	if (!err) {
		o->written = true;
		return 0;
	}
	pr_err("cannot write %s: %s", o->is_stdout ? "to stdout" : o->path, strerror(-err));
	save_fallback(o, data, len);
	return err;
}

const char *output__path(const struct output *o)
{
	return o->is_stdout ? "stdout" : o->path;
}

void output__free(struct output *o)
{
	if (!o)
		return;
	if (o->fd >= 0 && !o->is_stdout)
		close(o->fd);
	if (o->created && !o->written && o->path && o->regular)
		unlink(o->path);
	free(o->path);
	free(o);
}
