// SPDX-License-Identifier: MIT
/*
 * Reading a FUSE file through a child process; why in fuse_file.h. The
 * state (mounts whose server did not answer, children left behind, the
 * last mountinfo read) is the run's, shared by every thread that opens
 * files, under one lock that is never held while a child runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fuse_file.h"
#include "lib/mountinfo.h"
#include "lib/procfs.h"

#define LOG_MODULE "fuse"
#include "lib/log.h"

#define MAX_SILENT 64
#define MAX_LEFT   64
/* How long one process's mountinfo is reused: the burst of opens of its maps. */
#define MOUNTINFO_REUSE_NS (100 * 1000 * 1000ull)

struct child_result {
	int err;
	struct stat st;
};

static struct {
	pthread_mutex_t lock;
	uint64_t silent[MAX_SILENT]; /* mounts whose server did not answer */
	unsigned nsilent;
	uint64_t spent_ns;    /* in all FUSE reads of this profile so far */
	pid_t left[MAX_LEFT]; /* children not waited for yet */
	unsigned nleft;
	struct fuse_file_counts counts;
	uint32_t info_pid; /* whose mountinfo is in info */
	bool info_userns;  /* its mount namespace is a user namespace's not ours */
	uint64_t info_ns;
	char *info;
	size_t info_len;
} fuse = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The child's copy buffer: its own after fork, so no malloc there. */
static char copy_buf[64 << 10];

/*
 * Whether the mount namespace of pid belongs to a user namespace other than
 * ours: mounts there may be a user's own (overlays among them).
 */
static bool users_mounts(uint32_t pid)
{
	struct stat theirs, ours;
	char path[64];
	int fd, ns;

	snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	ns = ioctl(fd, NS_GET_USERNS);
	close(fd);
	if (ns < 0)
		return true;
	fd = fstat(ns, &theirs);
	close(ns);
	return fd || stat("/proc/self/ns/user", &ours) || theirs.st_ino != ours.st_ino ||
	       theirs.st_dev != ours.st_dev;
}

/* Whether a file on a mount of class c, in the table read, is read by a child. */
static bool needs_child_locked(enum mount_class c)
{
	return c == MOUNT_FUSE || c == MOUNT_UNKNOWN || (c == MOUNT_STACKED && fuse.info_userns);
}

/* Under the lock: pid's mountinfo, read again unless just read (or when fresh is asked). */
static int mountinfo_locked(uint32_t pid, bool fresh)
{
	char path[64];
	uint64_t now = clock__mono_ns();
	int err;

	if (!fresh && fuse.info && fuse.info_pid == pid && now - fuse.info_ns < MOUNTINFO_REUSE_NS)
		return 0;
	free(fuse.info);
	fuse.info = NULL;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%u/mountinfo", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	err = procfs__read_all(path, &fuse.info, &fuse.info_len);
	if (err)
		return err;
	fuse.info_pid = pid;
	fuse.info_userns = pid && users_mounts(pid);
	fuse.info_ns = now;
	return 0;
}

static enum mount_class dev_class_locked(uint32_t pid, uint32_t major, uint32_t minor)
{
	enum mount_class c = MOUNT_UNKNOWN;

	if (!mountinfo_locked(pid, false))
		c = mountinfo__class_of_dev(fuse.info, fuse.info_len, major, minor);
	/* Not there: maybe mounted since the table was read. */
	if (c == MOUNT_UNKNOWN && !mountinfo_locked(pid, true))
		c = mountinfo__class_of_dev(fuse.info, fuse.info_len, major, minor);
	return c;
}

bool fuse_file__dev_needs_child(uint32_t pid, uint32_t major, uint32_t minor, uint64_t *key)
{
	enum mount_class c;
	bool child;

	*key = makedev(major, minor);
	pthread_mutex_lock(&fuse.lock);
	c = dev_class_locked(pid, major, minor);
	/*
	 * A process that has exited has no table; a device is one superblock
	 * for every namespace while a file of it is mapped, so ours says too.
	 */
	if (c == MOUNT_UNKNOWN && pid)
		c = dev_class_locked(0, major, minor);
	child = needs_child_locked(c);
	pthread_mutex_unlock(&fuse.lock);
	return child;
}

bool fuse_file__path_needs_child(uint32_t pid, const char *path, uint64_t *key)
{
	uint32_t major = 0, minor = 0;
	bool child = false;

	pthread_mutex_lock(&fuse.lock);
	/*
	 * No table: the process is gone, and its root with it; the open fails
	 * by itself. Where the process's user may mount (its own user
	 * namespace), an overlay may appear on the path between this look and
	 * the open: always the child there.
	 */
	if (!mountinfo_locked(pid, true))
		child = fuse.info_userns ||
			needs_child_locked(mountinfo__class_of_path(fuse.info, fuse.info_len, path,
								    &major, &minor));
	pthread_mutex_unlock(&fuse.lock);
	*key = makedev(major, minor);
	return child;
}

/* Under the lock: reaps what children have ended. */
static void reap_locked(void)
{
	unsigned i = 0;

	while (i < fuse.nleft)
		if (waitpid(fuse.left[i], NULL, WNOHANG) != 0)
			fuse.left[i] = fuse.left[--fuse.nleft];
		else
			i++;
}

static void leave(pid_t pid)
{
	pthread_mutex_lock(&fuse.lock);
	reap_locked();
	if (waitpid(pid, NULL, WNOHANG) == 0 && fuse.nleft < MAX_LEFT)
		fuse.left[fuse.nleft++] = pid;
	pthread_mutex_unlock(&fuse.lock);
}

/*
 * How long a file of mount key may take, in ms: 0 when its server did not
 * answer before, or the run's budget is spent (counted then).
 */
static int may_take(uint64_t key)
{
	uint64_t budget = FUSE_FILE_RUN_BUDGET_MS * 1000000ull;
	int ms = 0;
	unsigned i;

	pthread_mutex_lock(&fuse.lock);
	if (fuse.spent_ns < budget)
		ms = (int)((budget - fuse.spent_ns) / 1000000);
	ms = ms < FUSE_FILE_TIMEOUT_MS ? ms : FUSE_FILE_TIMEOUT_MS;
	for (i = 0; ms && i < fuse.nsilent; i++)
		if (fuse.silent[i] == key)
			ms = 0;
	if (!ms)
		fuse.counts.unanswered++;
	pthread_mutex_unlock(&fuse.lock);
	return ms;
}

/* Accounts for one read that took ns; remembers its mount if it was not answered. */
static void note_read(uint64_t key, uint64_t ns, bool answered)
{
	pthread_mutex_lock(&fuse.lock);
	fuse.spent_ns += ns;
	if (!answered) {
		if (fuse.nsilent < MAX_SILENT)
			fuse.silent[fuse.nsilent++] = key;
		fuse.counts.unanswered++;
	}
	pthread_mutex_unlock(&fuse.lock);
}

/* In the child: every descriptor but keep_a and keep_b closed (the parent's perf events, ...). */
static void close_others(int keep_a, int keep_b)
{
	int lo = keep_a < keep_b ? keep_a : keep_b, hi = keep_a < keep_b ? keep_b : keep_a, fd;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3, lo - 1, 0) == 0 &&
	    syscall(SYS_close_range, lo + 1, hi - 1, 0) == 0 &&
	    syscall(SYS_close_range, hi + 1, ~0u, 0) == 0)
		return;
#endif
	for (fd = 3; fd < 65536; fd++)
		if (fd != lo && fd != hi)
			close(fd);
}

/* The child: async-signal-safe calls only, then _exit. */
static void child_main(int memfd, int out, fuse_file_open_fn open_fn, const void *arg)
{
	struct child_result r = {0};
	off_t off = 0;
	ssize_t n;
	int sig, fd;

	/* (Not SIGABRT: musl takes a lock for it, which another thread may have held.) */
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGABRT)
			signal(sig, SIG_DFL);
	close_others(memfd, out);
	fd = open_fn(arg);
	if (fd < 0)
		r.err = fd;
	else if (fstat(fd, &r.st))
		r.err = -errno;
	else if (!S_ISREG(r.st.st_mode))
		r.err = -EINVAL;
	else if ((uint64_t)r.st.st_size > FUSE_FILE_MAX_BYTES)
		r.err = -EFBIG;
	while (!r.err && off < r.st.st_size) {
		n = pread(fd, copy_buf, sizeof(copy_buf), off);
		if (n <= 0 || pwrite(memfd, copy_buf, (size_t)n, off) != n)
			r.err = n < 0 ? -errno : -EIO;
		off += n;
	}
	/* Answered before the file is closed: a FLUSH the server holds delays only the child. */
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

/* Waits ms for the child's answer: 0 and *r, or -ETIMEDOUT. */
static int await(int in, int ms, struct child_result *r)
{
	uint64_t end = clock__mono_ns() + (uint64_t)ms * 1000000ull, now;
	struct pollfd p = {.fd = in, .events = POLLIN};
	ssize_t n;

	while ((now = clock__mono_ns()) < end) {
		if (poll(&p, 1, (int)((end - now) / 1000000) + 1) <= 0)
			continue;
		n = read(in, r, sizeof(*r));
		return n == sizeof(*r) ? 0 : -EIO;
	}
	return -ETIMEDOUT;
}

int fuse_file__copy(uint64_t key, fuse_file_open_fn open_fn, const void *arg, struct stat *st)
{
	struct child_result r;
	int memfd, p[2], err, ms = may_take(key);
	uint64_t t0 = clock__mono_ns();
	pid_t pid;

	if (!ms)
		return -ETIMEDOUT;
	memfd = (int)syscall(SYS_memfd_create, "cprof-fuse-copy", MFD_CLOEXEC);
	if (memfd < 0)
		return -errno;
	/*
	 * Writable by others as far as its mode says, so that nothing made
	 * from a copy is kept between runs (kept_source__trusted): the owner
	 * the daemon gave may be anyone's, root's too.
	 */
	if (fchmod(memfd, 0666) || pipe2(p, O_CLOEXEC)) {
		err = -errno;
		close(memfd);
		return err;
	}
	pid = fork();
	if (pid == 0)
		child_main(memfd, p[1], open_fn, arg);
	close(p[1]);
	err = pid < 0 ? -errno : await(p[0], ms, &r);
	close(p[0]);
	if (pid > 0) {
		if (err == -ETIMEDOUT) {
			kill(pid, SIGKILL);
			pr_debug("a file on FUSE (device %u:%u): no answer in %d ms: no other file "
				 "of it is read",
				 major(key), minor(key), ms);
		}
		note_read(key, clock__mono_ns() - t0, err != -ETIMEDOUT);
		leave(pid);
	}
	if (!err) {
		*st = r.st;
		err = r.err;
	}
	if (err) {
		close(memfd);
		return err;
	}
	pthread_mutex_lock(&fuse.lock);
	fuse.counts.copied++;
	pthread_mutex_unlock(&fuse.lock);
	return memfd;
}

void fuse_file__counts(struct fuse_file_counts *c)
{
	pthread_mutex_lock(&fuse.lock);
	*c = fuse.counts;
	pthread_mutex_unlock(&fuse.lock);
}

void fuse_file__new_interval(void)
{
	pthread_mutex_lock(&fuse.lock);
	fuse.spent_ns = 0;
	pthread_mutex_unlock(&fuse.lock);
}
