// SPDX-License-Identifier: MIT
/*
 * The running kernel's build ID is read from raw notes (/sys/kernel/notes)
 * and its facts from a file of the table store: both outside input. Each
 * input goes to both readers; a record that decodes must encode back to
 * itself.
 *
 * Seeds (fixtures/corpus/kernel_facts): notes as a kernel lays them out (a
 * Linux note, a Xen note, the GNU build ID), and a kept record.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/elf_build_id.h"
#include "unwind/kernel_facts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t id[ELF_BUILD_ID_MAX], rec[KERNEL_FACTS_BYTES];
	struct kernel_btf_facts f;
	size_t n = elf_build_id__in_raw_notes(data, size, id);

	if (n > ELF_BUILD_ID_MAX)
		abort();
	if (!kernel_facts__decode(data, size, &f)) {
		kernel_facts__encode(&f, rec);
		if (memcmp(rec, data, sizeof(rec)))
			abort();
	}
	return 0;
}
