// SPDX-License-Identifier: MIT
/*
 * Kernel facts kept by build ID; see kernel_facts.h. The kernel's build ID
 * is in its own notes (/sys/kernel/notes, the image's .notes section); the
 * store's file is named "kernel-<build ID in hex>".
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define LOG_MODULE "btf"
#include "lib/elf_build_id.h"
#include "lib/file.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "unwind/kernel_facts.h"
#include "store/table_store.h"

#define KERNEL_NOTES  "/sys/kernel/notes"
#define FACTS_MAGIC   0x666b7063u /* "cpkf" */
#define FACTS_VERSION 2u	  /* 2: with the offsets of a mapping's file identity */
/* A kernel's notes are a few hundred bytes. */
#define NOTES_MAX 4096

#define FACTS_WORDS 8

static uint64_t check_of(const uint32_t w[FACTS_WORDS])
{
	uint64_t h = 0;
	int i;

	for (i = 0; i < FACTS_WORDS; i += 2)
		h = hash_u64(h ^ ((uint64_t)w[i] << 32 | w[i + 1]));
	return h;
}

void kernel_facts__encode(const struct kernel_btf_facts *f, uint8_t out[KERNEL_FACTS_BYTES])
{
	const struct kernel_file_offs *o = &f->files;
	uint32_t w[FACTS_WORDS] = {FACTS_MAGIC,
				   FACTS_VERSION,
				   f->task_stack_off,
				   f->pt_regs_size,
				   o->found,
				   (uint32_t)o->vma_pgoff << 16 | o->vma_file,
				   (uint32_t)o->file_inode << 16 | o->inode_ino,
				   (uint32_t)o->inode_sb << 16 | o->sb_dev};
	uint64_t check = check_of(w);

	memcpy(out, w, sizeof(w));
	memcpy(out + sizeof(w), &check, sizeof(check));
}

int kernel_facts__decode(const void *buf, size_t len, struct kernel_btf_facts *out)
{
	uint32_t w[FACTS_WORDS];
	uint64_t check;

	if (len != KERNEL_FACTS_BYTES)
		return -EINVAL;
	memcpy(w, buf, sizeof(w));
	memcpy(&check, (const uint8_t *)buf + sizeof(w), sizeof(check));
	/* What the BTF reader can find: a member offset inside task_struct, a register file. */
	if (w[0] != FACTS_MAGIC || w[1] != FACTS_VERSION || check != check_of(w) || !w[2] ||
	    w[2] % 8 || w[2] >= 1u << 16 || !w[3] || w[3] % 8 || w[3] > 4096 || w[4] > 1 ||
	    (!w[4] && (w[5] || w[6] || w[7])))
		return -EINVAL;
	*out = (struct kernel_btf_facts){
		.task_stack_off = w[2],
		.pt_regs_size = w[3],
		.files = {w[4], w[5] >> 16, w[5] & 0xffff, w[6] >> 16, w[6] & 0xffff, w[7] >> 16,
			  w[7] & 0xffff},
	};
	return 0;
}

/* The store's key for the running kernel: 0, or -ENOENT when it has no build ID. */
static int kernel_key(char *buf, size_t size)
{
	char notes[NOTES_MAX];
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t n = 0;
	int len = file__read_small(KERNEL_NOTES, notes, sizeof(notes));

	if (len > 0)
		n = elf_build_id__in_raw_notes(notes, (size_t)len, id);
	if (!n || size < sizeof("kernel-") + 2 * n)
		return -ENOENT;
	memcpy(buf, "kernel-", sizeof("kernel-") - 1);
	elf_build_id__hex(id, n, buf + sizeof("kernel-") - 1, size - (sizeof("kernel-") - 1));
	return 0;
}

int kernel_facts__read(struct table_store *store, struct kernel_btf_facts *out)
{
	char key[sizeof("kernel-") + 2 * ELF_BUILD_ID_MAX];
	uint8_t rec[KERNEL_FACTS_BYTES + 1];
	bool keyed = store && !kernel_key(key, sizeof(key));
	int len, err;

	if (keyed) {
		len = table_store__read_kept(store, key, rec, sizeof(rec));
		if (len > 0 && !kernel_facts__decode(rec, (size_t)len, out)) {
			pr_debug("task_struct.stack at %u, sizeof(pt_regs) %u, a mapping's "
				 "file: %s (kept for %s)",
				 out->task_stack_off, out->pt_regs_size,
				 out->files.found ? "found" : "not found", key);
			return 0;
		}
	}
	err = kernel_btf__read_vmlinux(out);
	if (!err && keyed) {
		kernel_facts__encode(out, rec);
		table_store__write_kept(store, key, rec, KERNEL_FACTS_BYTES);
	}
	return err;
}
