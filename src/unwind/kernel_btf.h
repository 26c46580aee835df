/* SPDX-License-Identifier: MIT */
/*
 * Facts about the running kernel, from its BTF (/sys/kernel/btf/vmlinux):
 * where a task keeps its kernel stack (the byte offset of task_struct's
 * member `stack`) and sizeof(struct pt_regs). The BPF unwinder finds a
 * task's saved user registers at the top of that stack when a sample lands
 * in the kernel. Optionally, where a mapping's file identity is (struct
 * kernel_file_offs), for the walk that finds a pc's table by its file.
 *
 * The file is 5-6 MB and cprof's whole peak RSS is about 3 MB, so it is not
 * loaded (nor given to libbpf): it is read in passes through one fixed
 * window, the strings first (to learn the offsets of the three names), then
 * the types. Every length and count in it is checked: corrupt or truncated
 * BTF is -EINVAL, never a read out of bounds or an endless loop.
 */
#ifndef CPROF_KERNEL_BTF_H
#define CPROF_KERNEL_BTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The window of kernel_btf__read_fd: all the memory a read allocates. */
#define KERNEL_BTF_BUF_SIZE (64 * 1024)

/*
 * Where a mapping's file identity is, for the walk by file (bpf_find_vma):
 * the byte offsets of vm_area_struct's vm_pgoff and vm_file, file's
 * f_inode, inode's i_ino and i_sb, super_block's s_dev. Optional: found
 * says whether all six were (at the top level of their struct, each a
 * whole field below 64 KiB).
 */
/* No padding in either struct: facts are compared whole (memcmp), padding and all. */
struct kernel_file_offs {
	uint16_t found; /* 1: all the offsets below were found */
	uint16_t vma_pgoff, vma_file, file_inode, inode_ino, inode_sb, sb_dev;
};

struct kernel_btf_facts {
	uint32_t task_stack_off; /* offsetof(struct task_struct, stack) */
	uint32_t pt_regs_size;	 /* sizeof(struct pt_regs) */
	struct kernel_file_offs files;
	uint16_t reserved; /* 0 */
};

/*
 * From an open BTF file, read from its start through a KERNEL_BTF_BUF_SIZE
 * buffer (the file must be seekable). 0; -ENOENT if either fact is
 * missing; -EINVAL if the BTF is malformed, truncated, of an unknown kind
 * or of the other byte order; -ENOMEM; -errno of a failed read or seek.
 */
int kernel_btf__read_fd(int fd, struct kernel_btf_facts *out);
/*
 * The same through a buffer of buf_size bytes (at least 24, a BTF header):
 * tests move the window's boundaries through the records with small ones.
 */
int kernel_btf__read_fd_buffered(int fd, size_t buf_size, struct kernel_btf_facts *out);
/* The same over BTF in memory (tests, fuzzing): the same code, another reader. */
int kernel_btf__parse(const void *buf, size_t len, struct kernel_btf_facts *out);
/* From /sys/kernel/btf/vmlinux: -ENOENT also when the kernel has no BTF. */
int kernel_btf__read_vmlinux(struct kernel_btf_facts *out);

#endif
