/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * Shared by bpf/ksym_names.bpf.c and src/resolve/ksym_names.c: the slots in
 * which user space leaves kernel addresses and the program writes the names
 * the kernel gives them.
 */
#ifndef CPROF_KSYM_NAMES_ABI_H
#define CPROF_KSYM_NAMES_ABI_H

#include <linux/types.h>

#define CPROF_KSYM_SLOTS     256 /* addresses named per run of the program */
#define CPROF_KSYM_NAME_SIZE 240

struct cprof_ksym_slot {
	__u64 addr;
	/* bpf_snprintf's result: the name's length with its NUL, or a negative errno. */
	__s64 len;
	char name[CPROF_KSYM_NAME_SIZE];
};

#endif
