// SPDX-License-Identifier: MIT
/* The bias of a file's executable mapping; see exec_bias.h. */
#include <errno.h>

#include "unwind/exec_bias.h"

int exec_bias(Elf *elf, const struct proc_map *m, uint64_t *bias)
{
	GElf_Phdr ph;
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	/*
	 * By the file range, not the offset alone: lld maps the file's first
	 * page twice (read-only, then executable), so the mapping's offset may
	 * fall in the read-only segment before the code.
	 */
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (ph.p_offset + ph.p_filesz <= m->offset ||
		    ph.p_offset >= m->offset + (m->end - m->start))
			continue;
		*bias = m->start - m->offset + ph.p_offset - ph.p_vaddr;
		return 0;
	}
	return -ENOENT;
}
