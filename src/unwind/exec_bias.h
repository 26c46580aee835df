/* SPDX-License-Identifier: MIT */
/*
 * Where a mapped ELF file's code sits: the bias between a process's
 * addresses in one executable mapping of the file and the file's own
 * addresses, those its CFI and symbols use (file address = pc - bias).
 */
#ifndef CPROF_EXEC_BIAS_H
#define CPROF_EXEC_BIAS_H

#include <gelf.h>
#include <stdint.h>

#include "lib/proc_maps.h"

/*
 * The bias of the executable segment (PT_LOAD with PF_X) that overlaps the
 * file range m maps. -ENOENT when none does, -EINVAL when the program
 * headers cannot be read.
 */
int exec_bias(Elf *elf, const struct proc_map *m, uint64_t *bias);

#endif
