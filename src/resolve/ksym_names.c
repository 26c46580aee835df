// SPDX-License-Identifier: MIT
/*
 * Loads bpf/ksym_names.bpf.c and runs it over batches of addresses. The
 * answer is what "%ps" prints: "name", "name [module]", or the address in
 * hex when no symbol holds it (or the kernel has no kallsyms).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "resolve/ksym_names.h"
#include "ksym_names_abi.h"
#include "ksym_names.skel.h"

#define LOG_MODULE "ksyms"
#include "lib/kernel_caps.h"
#include "lib/log.h"

struct ksym_names {
	struct ksym_names_bpf *k;
	int prog_fd;
};

/*
 * Whether /proc/kallsyms shows this process its addresses: kptr_restrict
 * (or no CAP_SYSLOG) zeroes them all. The first page suffices: the per-CPU
 * symbols at its start have small but non-zero addresses after the first.
 */
static bool kallsyms_shown(void)
{
	char buf[4096];
	bool shown = false;
	ssize_t n;
	int fd;

	fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (ssize_t i = 0; i < n && !shown; i++) {
		/* Addresses are the hex digits at the start of each line. */
		if (i && buf[i - 1] != '\n')
			continue;
		for (ssize_t j = i; j < n && buf[j] != ' ' && !shown; j++)
			shown = buf[j] != '0';
	}
	return shown;
}

int ksym_names__new(struct ksym_names **out)
{
	struct ksym_names *kn;
	int err;

	*out = NULL;
	/* What kallsyms hides from this process, cprof does not show either. */
	if (!kallsyms_shown())
		return -EACCES;
	kn = calloc(1, sizeof(*kn));
	if (!kn)
		return -ENOMEM;
	kn->k = ksym_names_bpf__open();
	if (!kn->k) {
		err = -errno;
		goto cleanup;
	}
	/* Refused as the verifier before 5.17 would refuse it, when that kernel is emulated. */
	err = kernel_caps__has(KCAP_KSYM_PROG) ? ksym_names_bpf__load(kn->k) : -EINVAL;
	if (err) {
		kernel_caps__fell_back(KCAP_KSYM_PROG);
		goto cleanup;
	}
	/* Without a mapping of its global data, the answers could not be read. */
	if (!kn->k->bss) {
		err = -EOPNOTSUPP;
		goto cleanup;
	}
	kn->prog_fd = bpf_program__fd(kn->k->progs.cprof_ksym_names);
	*out = kn;
	return 0;
cleanup:
	ksym_names__free(kn);
	return err;
}

/* The symbol's name in what "%ps" printed, or -ENOENT / -ENAMETOOLONG. */
static int parse(struct cprof_ksym_slot *s, const char **name)
{
	char *mod;

	if (s->len < 0)
		return (int)s->len;
	if (s->len > CPROF_KSYM_NAME_SIZE)
		return -ENAMETOOLONG;
	s->name[CPROF_KSYM_NAME_SIZE - 1] = '\0';
	if (!s->name[0] || !strncmp(s->name, "0x", 2))
		return -ENOENT;
	/* "name [module]": the module is not part of the name, as in kallsyms. */
	mod = strstr(s->name, " [");
	if (mod)
		*mod = '\0';
	*name = s->name;
	return 0;
}

int ksym_names__name(struct ksym_names *kn, const uint64_t *addrs, size_t n, ksym_names_fn fn,
		     void *ctx)
{
	struct ksym_names_bpf__bss *bss = kn->k->bss;
	LIBBPF_OPTS(bpf_test_run_opts, run);
	size_t done, i, batch;
	const char *name;
	int err;

	for (done = 0; done < n; done += batch) {
		batch = n - done < CPROF_KSYM_SLOTS ? n - done : CPROF_KSYM_SLOTS;
		for (i = 0; i < batch; i++) {
			bss->slots[i].addr = addrs[done + i];
			bss->slots[i].len = -ENODATA;
		}
		bss->count = (__u32)batch;
		if (bpf_prog_test_run_opts(kn->prog_fd, &run)) {
			err = -errno;
			pr_debug("cannot run the kernel's symbol lookup: %s", strerror(-err));
			return err;
		}
		for (i = 0; i < batch; i++) {
			name = NULL;
			err = parse(&bss->slots[i], &name);
			fn(ctx, done + i, name, err);
		}
	}
	return 0;
}

void ksym_names__free(struct ksym_names *kn)
{
	if (!kn)
		return;
	ksym_names_bpf__destroy(kn->k);
	free(kn);
}
