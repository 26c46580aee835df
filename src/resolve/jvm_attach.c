// SPDX-License-Identifier: MIT
/*
 * The JVM attach client; the protocol and the rules are in jvm_attach.h.
 * Learnt from HotSpot's listener (attachListener_linux.cpp: the trigger
 * file must belong to the JVM's effective user, the socket is made 0600 and
 * checks its peer is that user or root) and its client
 * (VirtualMachineImpl.java: signal only a process whose SigCgt has
 * SIGQUIT, the file in /proc/PID/root/tmp, the PID of the JVM's own
 * namespace in both names).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fuse_file.h"
#include "lib/procfs.h"
#include "lib/textscan.h"
#include "resolve/jvm_attach.h"

#define LOG_MODULE "jvm"
#include "lib/log.h"

/* What /proc/PID/status says of the JVM: its effective user, and whether it catches SIGQUIT. */
struct jvm_status {
	uint32_t euid;
	bool catches_quit;
};

/* The hex mask after "Sig...:" has SIGQUIT (bit 2). */
static bool mask_has_quit(const char *p, const char *end)
{
	uint64_t v = 0;
	int n = 0;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	/* The low 64 bits are the last 16 digits. */
	for (; p < end && n < 16 && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'));
	     p++, n++)
		v = v << 4 | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	return v & (1ull << (SIGQUIT - 1));
}

static int read_status(uint32_t pid, struct jvm_status *js)
{
	char path[64], buf[8192];
	const char *line, *end, *p;
	bool cgt = false, ign = false, uid = false;
	uint64_t v;
	int len;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	len = procfs__read_small(path, buf, sizeof(buf));
	if (len < 0)
		return len;
	for (line = buf; line < buf + len; line = end + 1) {
		end = memchr(line, '\n', (size_t)(buf + len - line));
		end = end ? end : buf + len;
		if (!strncmp(line, "SigCgt:", 7))
			cgt = mask_has_quit(line + 7, end);
		else if (!strncmp(line, "SigIgn:", 7))
			ign = mask_has_quit(line + 7, end);
		else if (!strncmp(line, "Uid:", 4)) {
			/* Real, then effective. */
			p = line + 4;
			while (p < end && (*p == '\t' || *p == ' '))
				p++;
			uid = textscan__dec(&p, end, &v);
			while (p < end && (*p == '\t' || *p == ' '))
				p++;
			uid = uid && textscan__dec(&p, end, &v) && v <= UINT32_MAX;
			js->euid = (uint32_t)v;
		}
	}
	js->catches_quit = cgt && !ign;
	return uid ? 0 : -EINVAL;
}

static int openat2_fd(int dfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = {.flags = flags | O_CLOEXEC, .resolve = resolve};
	int fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* The JVM's /tmp, inside its root and without a link on the way (O_PATH). */
static int open_tmp(uint32_t pid, uint32_t ns_pid, enum jvm_attach_failure *why)
{
	char path[64];
	uint64_t key;
	int root, fd;

	snprintf(path, sizeof(path), "/tmp/.java_pid%u", ns_pid);
	/* A FUSE daemon (or another user namespace's mount) could hold any lookup there. */
	if (fuse_file__path_needs_child(pid, path, &key)) {
		*why = JVM_ATTACH_NO_TMP;
		return -EPERM;
	}
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		*why = JVM_ATTACH_GONE;
		return -errno;
	}
	fd = openat2_fd(root, "tmp", O_PATH | O_DIRECTORY,
			RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	close(root);
	if (fd < 0)
		*why = JVM_ATTACH_NO_TMP;
	return fd;
}

/*
 * The socket in tmp (O_PATH), if it is one of the JVM's user: -ENOENT while
 * there is none.
 */
static int open_socket_file(int tmp, uint32_t ns_pid, uint32_t euid, enum jvm_attach_failure *why)
{
	char name[32];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), ".java_pid%u", ns_pid);
	fd = openat2_fd(tmp, name, O_PATH | O_NOFOLLOW, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (fd < 0) {
		if (fd != -ENOENT)
			*why = JVM_ATTACH_BAD_SOCKET;
		return fd;
	}
	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode) || st.st_uid != euid) {
		close(fd);
		*why = JVM_ATTACH_BAD_SOCKET;
		return -EPERM;
	}
	return fd;
}

/*
 * A pidfd of pid while it is the process that started at start_time and
 * catches SIGQUIT: the signal then reaches that process or none.
 */
static int pidfd_of_jvm(uint32_t pid, uint64_t start_time, const struct jvm_status *js,
			enum jvm_attach_failure *why)
{
	uint64_t now;
	int fd;

	if (!js->catches_quit) {
		*why = JVM_ATTACH_NO_SIGQUIT;
		return -EPERM;
	}
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0) {
		/* kill(2) could reach a process that took the PID meanwhile. */
		*why = errno == ENOSYS ? JVM_ATTACH_NO_PIDFD : JVM_ATTACH_GONE;
		return -errno;
	}
	if (procfs__start_time(pid, &now) || now != start_time) {
		close(fd);
		*why = JVM_ATTACH_GONE;
		return -ESRCH;
	}
	return fd;
}

/*
 * The trigger file, made new (never through a link, never over a file) and
 * given to the JVM's user, whose file alone the JVM takes for a trigger.
 * -EEXIST: one is there already (another client's), which serves as well.
 */
static int make_trigger(int tmp, uint32_t ns_pid, uint32_t euid, char *name, size_t size)
{
	int fd, err = 0;

	snprintf(name, size, ".attach_pid%u", ns_pid);
	fd = openat(tmp, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	if (fchown(fd, euid, (gid_t)-1))
		err = -errno;
	close(fd);
	if (err)
		unlinkat(tmp, name, 0);
	return err;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = {.tv_sec = (time_t)(ms / 1000),
			      .tv_nsec = (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/* Waits by deadline for the socket the signal starts: its O_PATH fd, or -errno. */
static int await_socket(int tmp, uint32_t ns_pid, uint32_t euid, uint64_t deadline,
			enum jvm_attach_failure *why)
{
	uint64_t step = 10, now;
	int fd;

	for (;;) {
		fd = open_socket_file(tmp, ns_pid, euid, why);
		if (fd != -ENOENT)
			return fd;
		now = clock__mono_ns();
		if (now >= deadline) {
			*why = JVM_ATTACH_NO_SOCKET;
			return -ETIMEDOUT;
		}
		sleep_ms((deadline - now) / 1000000 < step ? (deadline - now) / 1000000 + 1 : step);
		step = step < 80 ? step * 2 : step;
	}
}

/* The socket of the JVM: there already, or started by the trigger and a SIGQUIT. */
static int find_socket(uint32_t pid, uint32_t ns_pid, uint64_t start_time, int tmp,
		       uint64_t deadline, enum jvm_attach_failure *why)
{
	struct jvm_status js;
	char name[32];
	bool made;
	int fd, pidfd, err;

	if (read_status(pid, &js)) {
		*why = JVM_ATTACH_GONE;
		return -ESRCH;
	}
	fd = open_socket_file(tmp, ns_pid, js.euid, why);
	if (fd != -ENOENT)
		return fd;
	pidfd = pidfd_of_jvm(pid, start_time, &js, why);
	if (pidfd < 0)
		return pidfd;
	err = make_trigger(tmp, ns_pid, js.euid, name, sizeof(name));
	made = !err;
	if (err && err != -EEXIST) {
		close(pidfd);
		*why = JVM_ATTACH_NO_TMP;
		return err;
	}
	err = syscall(SYS_pidfd_send_signal, pidfd, SIGQUIT, NULL, 0) ? -errno : 0;
	close(pidfd);
	fd = err ? err : await_socket(tmp, ns_pid, js.euid, deadline, why);
	if (err)
		*why = JVM_ATTACH_GONE;
	if (made)
		unlinkat(tmp, name, 0);
	return fd;
}

/* Connected to the socket file sfd names (through /proc/self/fd: no path is resolved again). */
static int connect_to(int sfd, enum jvm_attach_failure *why)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, err = 0;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", sfd);
	/* A full backlog (EAGAIN): a listener that does not accept. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = -errno;
	if (err) {
		close(fd);
		*why = JVM_ATTACH_NO_CONNECTION;
		return err;
	}
	return fd;
}

/* Sends all of buf by deadline; EPIPE is an error, never a signal. */
static int send_all(int fd, const char *buf, size_t len, uint64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	uint64_t now;
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		now = clock__mono_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		poll(&p, 1, (int)((deadline - now) / 1000000) + 1);
	}
	return 0;
}

/* Reads the reply until the JVM closes, by deadline, at most JVM_ATTACH_MAX_REPLY bytes. */
static int read_reply(int fd, char *buf, size_t *len, uint64_t deadline,
		      enum jvm_attach_failure *why)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	uint64_t now;
	ssize_t n;

	*len = 0;
	for (;;) {
		n = recv(fd, buf + *len, JVM_ATTACH_MAX_REPLY - *len, MSG_DONTWAIT);
		if (n == 0)
			return 0;
		if (n > 0) {
			*len += (size_t)n;
			if (*len == JVM_ATTACH_MAX_REPLY) {
				*why = JVM_ATTACH_TOO_LONG;
				return -EMSGSIZE;
			}
			continue;
		}
		if (errno != EAGAIN && errno != EINTR) {
			*why = JVM_ATTACH_NO_CONNECTION;
			return -errno;
		}
		now = clock__mono_ns();
		if (now >= deadline) {
			*why = JVM_ATTACH_TIMEOUT;
			return -ETIMEDOUT;
		}
		poll(&p, 1, (int)((deadline - now) / 1000000) + 1);
	}
}

int jvm_attach__parse_reply(const char *buf, size_t len, int *status, size_t *text_off)
{
	size_t i = 0, digits = 0;
	bool neg = false;
	int v = 0;

	if (i < len && buf[i] == '-') {
		neg = true;
		i++;
	}
	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++, digits++) {
		if (digits == 9)
			return -EBADMSG;
		v = v * 10 + (buf[i] - '0');
	}
	if (!digits || (i < len && buf[i] != '\n'))
		return -EBADMSG;
	*status = neg ? -v : v;
	*text_off = i < len ? i + 1 : i;
	return 0;
}

/* Sends the request over the connection and takes the reply's status. */
static int request(int fd, uint32_t pid, uint64_t deadline, enum jvm_attach_failure *why)
{
	static const char req[] = "1\0jcmd\0Compiler.perfmap\0\0"; /* and the literal's own NUL */
	char *buf = malloc(JVM_ATTACH_MAX_REPLY);
	size_t len = 0, off;
	int err, status = -1;

	if (!buf)
		return -ENOMEM;
	err = send_all(fd, req, sizeof(req), deadline);
	if (err)
		*why = err == -ETIMEDOUT ? JVM_ATTACH_TIMEOUT : JVM_ATTACH_NO_CONNECTION;
	if (!err)
		err = read_reply(fd, buf, &len, deadline, why);
	if (!err && (jvm_attach__parse_reply(buf, len, &status, &off) || status)) {
		*why = JVM_ATTACH_BAD_REPLY;
		err = -EBADMSG;
	}
	if (err)
		pr_debug("PID %u: reply of %zu bytes, status %d", pid, len, status);
	free(buf);
	return err;
}

int jvm_attach__perf_map(uint32_t pid, uint32_t ns_pid, uint64_t start_time, uint64_t deadline_ns,
			 enum jvm_attach_failure *why)
{
	int tmp, sfd = -1, fd = -1, err;

	*why = JVM_ATTACH_OK;
	ns_pid = ns_pid ? ns_pid : pid;
	tmp = open_tmp(pid, ns_pid, why);
	if (tmp < 0)
		return tmp;
	sfd = find_socket(pid, ns_pid, start_time, tmp, deadline_ns, why);
	err = sfd < 0 ? sfd : 0;
	if (!err) {
		fd = connect_to(sfd, why);
		err = fd < 0 ? fd : 0;
	}
	if (!err)
		err = request(fd, pid, deadline_ns, why);
	if (fd >= 0)
		close(fd);
	if (sfd >= 0)
		close(sfd);
	close(tmp);
	return err;
}

const char *jvm_attach__failure_name(enum jvm_attach_failure why)
{
	static const char *const names[JVM_ATTACH_FAILURES] = {
		[JVM_ATTACH_OK] = "none",
		[JVM_ATTACH_GONE] = "gone",
		[JVM_ATTACH_NO_SIGQUIT] = "does not catch SIGQUIT",
		[JVM_ATTACH_NO_PIDFD] = "no pidfd to signal it by (Linux before 5.3)",
		[JVM_ATTACH_NO_TMP] = "its /tmp not reachable without links, or on FUSE",
		[JVM_ATTACH_BAD_SOCKET] = "not a socket of its user",
		[JVM_ATTACH_NO_SOCKET] = "no attach socket in time",
		[JVM_ATTACH_NO_CONNECTION] = "took no connection",
		[JVM_ATTACH_TIMEOUT] = "no reply in time",
		[JVM_ATTACH_TOO_LONG] = "reply too long",
		[JVM_ATTACH_BAD_REPLY] = "not a successful reply",
	};

	return (unsigned)why < JVM_ATTACH_FAILURES ? names[why] : "?";
}
