// SPDX-License-Identifier: MIT
/*
 * The kernel's BTF is read from sysfs, but the reader takes every length,
 * count and offset from the file; a kernel of a newer format, or a corrupt
 * file, must be a clean error. Each input is read from memory and as a file
 * through a small window (its size from the input's length, so boundaries
 * move through records and names); both readers must agree.
 *
 * Seeds (fixtures/corpus/kernel_btf): the .BTF sections of our two BPF
 * objects (clang's BTF, every common kind), the unwinder's with a struct
 * task_struct appended (the facts found in real BTF), and a small
 * hand-built one with kind_flag bitfields and an anonymous struct holding
 * stack, as a kernel built with CONFIG_RANDSTRUCT has.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unwind/kernel_btf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kernel_btf_facts mem = {0}, file = {0};
	int err, err2, fd;

	err = kernel_btf__parse(data, size, &mem);
	fd = memfd_create("fuzz-btf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	err2 = kernel_btf__read_fd_buffered(fd, 24 + size % 41, &file);
	close(fd);
	if (err != err2 || (!err && memcmp(&mem, &file, sizeof(mem)) != 0))
		abort();
	return 0;
}
