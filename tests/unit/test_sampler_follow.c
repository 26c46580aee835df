/*
 * Children of a target that the fork hook did not add (the kernel skips a
 * hook where another BPF program or a bpf() call is under way on that CPU)
 * are added from the kernel's fork record instead: sampler__follow_late
 * adds a live child of a target once, and nothing else. Before
 * sampler__start no hook is attached, which stands for a skipped one; after
 * it the hook follows a fork itself and nothing is left to add. Needs root.
 */
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <unistd.h>

#include "proc_tables.h"
#include "sample/sampler.h"
#include "test.h"

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static pid_t fork_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

TEST(sampler_follows_late_the_forks_its_hook_missed)
{
	struct sampler_opts so = {.hz = 99, .filter_pids = true, .follow_children = true};
	uint32_t self = (uint32_t)getpid();
	uint64_t samples, hooks;
	struct sampler *s = NULL;
	pid_t a, b;

	if (geteuid() != 0)
		SKIP("needs root for BPF");
	libbpf_set_print(quiet);
	CHECK_INT(sampler__new(&so, &s), ==, 0);
	CHECK_INT(sampler__add_target(s, self), ==, 0);

	a = fork_sleeper();
	CHECK(a > 0);
	CHECK_INT(sampler__follow_late(s, self, (uint32_t)a), ==, 1);
	CHECK_INT(sampler__follow_late(s, self, (uint32_t)a), ==, 0); /* already a target */
	/* The parent must be a target: init is not. */
	CHECK_INT(sampler__follow_late(s, 1, (uint32_t)a), ==, 0);
	proc_tables__kill(a);
	/* Gone by the time its record is read: nothing to sample, nothing added. */
	CHECK_INT(sampler__prune_targets(s), ==, 1);
	CHECK_INT(sampler__follow_late(s, self, (uint32_t)a), ==, 0);

	CHECK_INT(sampler__start(s), ==, 0);
	b = fork_sleeper();
	CHECK(b > 0);
	/* The hook, when this kernel lets it attach, followed the fork itself. */
	if (sampler__space_of(s, (uint32_t)b))
		CHECK_INT(sampler__follow_late(s, self, (uint32_t)b), ==, 0);
	proc_tables__kill(b);
	sampler__skipped(s, &samples, &hooks);
	sampler__stop(s);
	/* Nothing stops the hooks here: a skipped run would be another program's doing. */
	fprintf(stderr, "  skipped runs: sampling %llu, hooks %llu\n", (unsigned long long)samples,
		(unsigned long long)hooks);
	CHECK_INT(sampler__follow_late(s, self, (uint32_t)getppid()), ==, 0); /* stopped */
	sampler__free(s);
}
