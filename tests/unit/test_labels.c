// SPDX-License-Identifier: MIT
/* Series labels: the sorted set, --label checks, and cgroup identities from /proc text. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "deliver/labels.h"
#include "test.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

TEST(labels_sorted_unique)
{
	struct labels l = {0}, u = {0};

	CHECK_INT(labels__set(&l, "pid", "1"), ==, 0);
	CHECK_INT(labels__set(&l, "__name__", "process_cpu"), ==, 0);
	CHECK_INT(labels__set(&l, "comm", "a"), ==, 0);
	CHECK_INT(labels__set(&l, "comm", "b"), ==, 0);
	CHECK_INT(l.n, ==, 3);
	CHECK_STR(l.v[0].name, "__name__");
	CHECK_STR(l.v[1].name, "comm");
	CHECK_STR(l.v[2].name, "pid");
	CHECK_STR(labels__get(&l, "comm"), "b");
	CHECK(!labels__get(&l, "nope"));
	CHECK_INT(labels__set(&u, "pid", "2"), ==, 0);
	CHECK_INT(labels__set(&u, "env", "x"), ==, 0);
	CHECK_INT(labels__merge(&l, &u), ==, 0);
	CHECK_INT(l.n, ==, 4);
	CHECK_STR(labels__get(&l, "pid"), "2");
	labels__clear(&l);
	labels__clear(&u);
	labels__clear(NULL);
}

TEST(labels_parse_arg)
{
	struct labels l = {0};

	CHECK(!labels__parse_arg(&l, "env=prod"));
	CHECK(!labels__parse_arg(&l, "team_1=a=b"));
	CHECK(!labels__parse_arg(&l, "__name__=parca_agent_cpu"));
	CHECK(!labels__parse_arg(&l, "region=z\xc3\xbcrich"));
	CHECK_STR(labels__get(&l, "team_1"), "a=b");
	CHECK(labels__parse_arg(&l, "noequals"));
	CHECK(labels__parse_arg(&l, "=v"));
	CHECK(labels__parse_arg(&l, "1abc=v"));
	CHECK(labels__parse_arg(&l, "a-b=v"));
	CHECK(labels__parse_arg(&l, "__x=v"));
	CHECK(labels__parse_arg(&l, "k="));
	CHECK(labels__parse_arg(&l, "k=a\nb"));
	CHECK(labels__parse_arg(&l, "k=\xff"));
	CHECK(labels__parse_arg(&l, "k=\xc0\xaf")); /* overlong '/' */
	CHECK(labels__parse_arg(&l, "__name__=has space"));
	CHECK_INT(l.n, ==, 4);
	labels__clear(&l);
}

TEST(labels_defaults)
{
	struct labels l = {0};
	char host[256];

	CHECK_INT(labels__defaults(&l, "known_tree"), ==, 0);
	CHECK_STR(labels__get(&l, "__name__"), "process_cpu");
	CHECK_STR(labels__get(&l, "service_name"), "known_tree");
	CHECK_INT(gethostname(host, sizeof(host)), ==, 0);
	CHECK_STR(labels__get(&l, "hostname"), host);
	CHECK(labels__get(&l, "kernel_release") && labels__get(&l, "arch"));
	CHECK_INT(l.n, ==, 5);
	labels__clear(&l);
}

static struct cgroup_identity parse(const char *text)
{
	struct cgroup_identity cg;

	CHECK_INT(labels__parse_cgroup(text, strlen(text), &cg), ==, 0);
	return cg;
}

TEST(labels_cgroup_v2_docker)
{
	struct cgroup_identity cg = parse("0::/system.slice/docker-" ID64 ".scope\n");

	CHECK_STR(cg.path, "/system.slice/docker-" ID64 ".scope");
	CHECK_STR(cg.container_id, ID64);
	CHECK_STR(cg.unit, "docker-" ID64 ".scope");
}

TEST(labels_cgroup_v2_kubernetes)
{
	struct cgroup_identity cg =
		parse("0::/kubepods.slice/kubepods-burstable.slice/"
		      "kubepods-burstable-pod1f2e3d4c_5b6a_7980_a1b2_c3d4e5f60718.slice/"
		      "cri-containerd-" ID64 ".scope\n");

	CHECK_STR(cg.container_id, ID64);
	CHECK_STR(cg.unit, "cri-containerd-" ID64 ".scope");
}

TEST(labels_cgroup_systemd_service)
{
	struct cgroup_identity cg = parse("0::/system.slice/sshd.service\n");

	CHECK_STR(cg.path, "/system.slice/sshd.service");
	CHECK_STR(cg.container_id, "");
	CHECK_STR(cg.unit, "sshd.service");
}

TEST(labels_cgroup_v1_and_hybrid)
{
	/* v1 with cgroupfs: the cpu controller's path, a bare container ID. */
	struct cgroup_identity cg = parse("12:memory:/docker/" ID64 "\n"
					  "4:cpu,cpuacct:/docker/" ID64 "\n"
					  "1:devices:/\n");

	CHECK_STR(cg.path, "/docker/" ID64);
	CHECK_STR(cg.container_id, ID64);
	CHECK_STR(cg.unit, "");
	/* Hybrid: the unified line wins over systemd's, which wins over cpu's. */
	cg = parse("9:name=systemd:/user.slice/user-0.slice/session-3.scope\n"
		   "1:cpu:/other\n"
		   "0::/user.slice/user-0.slice/session-3.scope\n");
	CHECK_STR(cg.path, "/user.slice/user-0.slice/session-3.scope");
	CHECK_STR(cg.unit, "session-3.scope");
	cg = parse("9:name=systemd:/init.scope\n1:cpu:/other\n0::/\n");
	CHECK_STR(cg.path, "/init.scope");
}

TEST(labels_cgroup_root_and_garbage)
{
	struct cgroup_identity cg;
	static const char *const none[] = {
		"0::/\n",
		"",
		"garbage\n",
		"1:cpu\n",
		"0::relative/path\n",
		"4:memory:/process_api/e326e184272152953310eb64c4d165f3\n0::/\n",
	};
	size_t i;

	for (i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		CHECK_INT(labels__parse_cgroup(none[i], strlen(none[i]), &cg), ==, -ENOENT);
	/* 63 or 65 hex digits are not a container ID; upper case neither. */
	cg = parse("0::/x/"
		   "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"
		   "\n");
	CHECK_STR(cg.container_id, "");
	cg = parse("0::/x/" ID64 "0\n");
	CHECK_STR(cg.container_id, "");
	cg = parse("0::/x/0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF\n");
	CHECK_STR(cg.container_id, "");
}

TEST(labels_cgroup_of_self)
{
	struct cgroup_identity cg;
	int err = labels__read_cgroup((uint32_t)getpid(), &cg);

	CHECK(err == 0 || err == -ENOENT);
	CHECK_INT(labels__read_cgroup(2147483646, &cg), ==, -ESRCH);
}

TEST(labels_process_values_are_cleaned)
{
	struct cgroup_identity cg = parse("0::/system.slice/a\x01"
					  "b.service\n");
	struct labels l = {0};

	CHECK_INT(labels__add_process(&l, 42, "ev\xffil\n", &cg), ==, 0);
	CHECK_STR(labels__get(&l, "pid"), "42");
	CHECK_STR(labels__get(&l, "comm"), "ev?il?");
	CHECK_STR(labels__get(&l, "cgroup"), "/system.slice/a?b.service");
	CHECK_STR(labels__get(&l, "systemd_unit"), "a?b.service");
	CHECK(!labels__get(&l, "container_id"));
	labels__clear(&l);
	CHECK_INT(labels__add_process(&l, 7, "x", NULL), ==, 0);
	CHECK_INT(l.n, ==, 2);
	labels__clear(&l);
}
