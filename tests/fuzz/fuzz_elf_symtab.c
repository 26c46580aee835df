// SPDX-License-Identifier: MIT
/*
 * ELF files come from any process on the host, including a container that
 * crafted its binary to attack the profiler. The input is handed over as a
 * file (memfd), exactly as elf_symtab sees real mappings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "resolve/elf_symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_symtab *e = NULL;
	uint64_t vaddr, off, probe;
	size_t i;
	int fd;

	fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	if (elf_symtab__open_fd(fd, "fuzz", &e))
		return 0;
	elf_symtab__build_id(e);
	elf_symtab__symbol_count(e);
	/* Offsets and addresses taken from the tail of the input, plus fixed ones. */
	for (i = 0; i < 16; i++) {
		probe = i * 0x400;
		if (size >= 8 * (i + 1))
			memcpy(&probe, data + size - 8 * (i + 1), 8);
		off = probe;
		if (elf_symtab__offset_to_vaddr(e, off, &vaddr) == 0)
			elf_symtab__lookup(e, vaddr, NULL);
		elf_symtab__lookup(e, probe, NULL);
	}
	elf_symtab__free(e);
	return 0;
}
