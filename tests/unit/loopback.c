// SPDX-License-Identifier: MIT
/* The scripted HTTP peer of loopback.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/file.h"
#include "loopback.h"
#include "test.h"

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int listen_any(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		int err = -errno;

		close(fd);
		return err;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

uint16_t loopback__closed_port(void)
{
	uint16_t port = 0;
	int fd = listen_any(&port);

	if (fd >= 0)
		close(fd);
	return port;
}

/* Reads one request: headers, then as many body bytes as Content-Length says. */
static void read_request(int fd, int log_fd)
{
	char buf[65536];
	size_t len = 0, need = 0;
	char *end = NULL;

	while (len < sizeof(buf) - 1) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);

		if (n <= 0)
			break;
		if (log_fd >= 0 && write(log_fd, buf + len, (size_t)n) < 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		if (!end) {
			end = strstr(buf, "\r\n\r\n");
			if (end) {
				const char *cl = strcasestr(buf, "\r\nContent-Length:");

				need = (size_t)(end + 4 - buf) +
				       (cl ? strtoul(cl + 17, NULL, 10) : 0);
			}
		}
		if (end && len >= need)
			break;
	}
}

static void serve(int lfd, const struct loopback_reply *replies, size_t n, const char *log)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct loopback_reply *r = &replies[i];
		int fd = accept(lfd, NULL, NULL), log_fd;
		size_t off = 0;

		if (fd < 0)
			_exit(1);
		log_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		read_request(fd, log_fd);
		if (log_fd >= 0)
			close(log_fd);
		if (r->delay_ms)
			sleep_ms(r->delay_ms);
		if (r->silent)
			sleep_ms(30000);
		while (off < r->len) {
			size_t k = r->piece && r->piece < r->len - off ? r->piece : r->len - off;
			ssize_t w = write(fd, r->data + off, k);

			if (w <= 0)
				break;
			off += (size_t)w;
			if (r->piece)
				sleep_ms(2);
		}
		close(fd);
	}
	_exit(0);
}

int loopback__start(struct loopback *lb, const struct loopback_reply *replies, size_t n)
{
	int lfd;

	memset(lb, 0, sizeof(*lb));
	snprintf(lb->log, sizeof(lb->log), "%s/loopback-%d-%ld.log", test_tmp_dir(), (int)getpid(),
		 (long)time(NULL));
	unlink(lb->log);
	lfd = listen_any(&lb->port);
	if (lfd < 0)
		return lfd;
	lb->pid = fork();
	if (lb->pid < 0) {
		close(lfd);
		return -errno;
	}
	if (lb->pid == 0) {
		/* A test that fails early never stops us: go with it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGPIPE, SIG_IGN);
		serve(lfd, replies, n, lb->log);
	}
	close(lfd);
	return 0;
}

void loopback__stop(struct loopback *lb)
{
	if (lb->pid > 0) {
		kill(lb->pid, SIGKILL);
		waitpid(lb->pid, NULL, 0);
		lb->pid = 0;
	}
}

char *loopback__requests(const struct loopback *lb, size_t *len)
{
	char *data = NULL;

	*len = 0;
	if (file__read_all(lb->log, &data, len))
		return NULL;
	return data;
}
