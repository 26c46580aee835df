// SPDX-License-Identifier: MIT
/*
 * The probe behind lazy_maps__supported: a one-entry hash map without
 * preallocation, and a perf_event program that looks it up. Until Linux 6.1
 * (and on PREEMPT_RT builds) the verifier refuses the program ("perf_event
 * programs can only use preallocated hash map"): the sampling program could
 * then not load with such maps, so they stay preallocated.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/kernel_caps.h"
#include "sample/lazy_maps.h"

#define LOG_MODULE "bpf"
#include "lib/log.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool supported;

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})

static void probe(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_NO_PREALLOC);
	int map_fd = -1, prog_fd = -1, err = 0;

	if (!kernel_caps__has(KCAP_LAZY_MAPS)) {
		err = -EINVAL; /* the verifier's answer before 6.1 */
		goto cleanup;
	}
	map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "cprof_probe", sizeof(__u32), sizeof(__u64), 1,
				&mo);
	if (map_fd < 0) {
		err = -errno;
		goto cleanup;
	}
	{
		/* *(u32 *)(fp - 4) = 0; r0 = lookup(map, fp - 4); return 0 */
		const struct bpf_insn insns[] = {
			INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
			INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd),
			INSN(0, 0, 0, 0, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		};

		prog_fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "cprof_probe", "GPL", insns,
					sizeof(insns) / sizeof(insns[0]), NULL);
	}
	if (prog_fd < 0)
		err = -errno;
cleanup:
	supported = !err;
	if (!supported)
		kernel_caps__fell_back(KCAP_LAZY_MAPS);
	if (supported)
		pr_debug("hash maps allocated as they fill: yes");
	else
		pr_debug("hash maps allocated as they fill: no (%s): preallocated", strerror(-err));
	if (prog_fd >= 0)
		close(prog_fd);
	if (map_fd >= 0)
		close(map_fd);
}

bool lazy_maps__supported(void)
{
	pthread_once(&once, probe);
	return supported;
}

int lazy_maps__apply(struct bpf_map *m)
{
	return bpf_map__set_map_flags(m, bpf_map__map_flags(m) | BPF_F_NO_PREALLOC);
}
