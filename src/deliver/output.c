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
#include "lib/file.h"
#include "lib/log.h"

struct output {
	char *path;
	char *target;	/* path, with a symbolic link followed: what the file replaces */
	char *tmp_path; /* a regular file is written here, then renamed over target */
	int fd;
	bool is_stdout;
	bool renamed; /* tmp_path is now target */
};

/*
 * A file being written never stands under its final name: the profile goes to
 * a temporary file in the same directory, renamed over the target once
 * complete, so an interruption leaves the old file or none, never half a one.
 * Devices and pipes (/dev/null, a FIFO) are written in place.
 */
static int open_temporary(struct output *o)
{
	const char *slash;
	int dirlen;
	mode_t mask;
	int fd, err;

	/* Fail now, not after the profile, if the target itself is not writable. */
	fd = open(o->path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		return -errno;
	if (fd >= 0)
		close(fd);
	/* A link is followed, as writing through it would: the file it names is replaced. */
	o->target = realpath(o->path, NULL);
	if (!o->target)
		o->target = strdup(o->path);
	if (!o->target)
		return -ENOMEM;
	slash = strrchr(o->target, '/');
	dirlen = slash ? (int)(slash - o->target) + 1 : 0;
	if (asprintf(&o->tmp_path, "%.*s.%s.cprof-XXXXXX", dirlen, o->target,
		     slash ? slash + 1 : o->target) < 0) {
		o->tmp_path = NULL;
		return -ENOMEM;
	}
	o->fd = mkostemp(o->tmp_path, O_CLOEXEC);
	if (o->fd < 0) {
		err = -errno;
		free(o->tmp_path);
		o->tmp_path = NULL;
		return err;
	}
	/* mkostemp makes it 0600; a profile is as readable as any file the user makes. */
	mask = umask(0);
	umask(mask);
	if (fchmod(o->fd, 0644 & ~mask))
		pr_debug("cannot make %s readable: %s", o->tmp_path, strerror(errno));
	return 0;
}

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
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		err = o->fd < 0 ? -errno : 0;
	} else {
		err = open_temporary(o);
	}
	if (err) {
		pr_err("cannot write output file '%s': %s", path, strerror(-err));
		goto cleanup;
	}
	*out = o;
	return 0;
cleanup:
	output__free(o);
	return err;
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
	err = file__write_all(fd, data, len);
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
	int err;

	err = file__write_all(o->fd, data, len);
	/* close() is where some filesystems report a failed write. */
	if (!err && !o->is_stdout) {
		if (close(o->fd))
			err = -errno;
		o->fd = -1;
	}
	if (!err && o->tmp_path && rename(o->tmp_path, o->target))
		err = -errno;
	if (!err) {
		o->renamed = o->tmp_path != NULL;
		return 0;
	}
	pr_err("cannot write %s: %s", o->is_stdout ? "to stdout" : o->path, strerror(-err));
	save_fallback(o, data, len);
	return err;
}

const char *output__temporary_path(const struct output *o)
{
	/* Kept until output__free, so a signal handler may hold on to it. */
	return o->renamed ? NULL : o->tmp_path;
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
	if (o->tmp_path && !o->renamed)
		unlink(o->tmp_path);
	free(o->tmp_path);
	free(o->target);
	free(o->path);
	free(o);
}
