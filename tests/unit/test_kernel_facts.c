// SPDX-License-Identifier: MIT
/*
 * The kernel's build ID from raw notes (as /sys/kernel/notes holds them),
 * the kept form of the kernel facts, and the facts kept in a store: the
 * second read comes from the store and agrees with the kernel's BTF; a
 * damaged record is read from the BTF again and written over.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/elf_build_id.h"
#include "test.h"
#include "unwind/kernel_facts.h"
#include "store/table_store.h"

/* Appends a note: header, name and description, each padded to 4 bytes. */
static size_t note(uint8_t *buf, size_t at, const char *name, uint32_t type, const void *desc,
		   uint32_t desc_len)
{
	uint32_t h[3] = {(uint32_t)strlen(name) + 1, desc_len, type};

	memcpy(buf + at, h, sizeof(h));
	at += sizeof(h);
	memset(buf + at, 0, (h[0] + 3) & ~3u);
	memcpy(buf + at, name, h[0]);
	at += (h[0] + 3) & ~3u;
	memset(buf + at, 0, (desc_len + 3) & ~3u);
	memcpy(buf + at, desc, desc_len);
	return at + ((desc_len + 3) & ~3u);
}

TEST(kernel_facts_build_id_in_raw_notes)
{
	uint8_t buf[256], id[ELF_BUILD_ID_MAX], want[20];
	size_t n = 0, len;

	for (size_t i = 0; i < sizeof(want); i++)
		want[i] = (uint8_t)(0xa0 + i);
	/* The kernel's own notes come first: a Linux note, a Xen one, then the ID. */
	n = note(buf, n, "Linux", 6, "6.1.0", 6);
	n = note(buf, n, "Xen", 18, "\x00\x00\x00\x80", 4);
	len = note(buf, n, "GNU", NT_GNU_BUILD_ID, want, sizeof(want));
	CHECK_U64(elf_build_id__in_raw_notes(buf, len, id), ==, sizeof(want));
	CHECK(!memcmp(id, want, sizeof(want)));
	/* Cut anywhere inside the build ID's note: none, and no read past the end. */
	for (size_t cut = n; cut < len; cut++)
		CHECK_U64(elf_build_id__in_raw_notes(buf, cut, id), ==, 0);
	/* A build ID of another owner, or of type 3 under another name: none. */
	len = note(buf, 0, "GNV", NT_GNU_BUILD_ID, want, sizeof(want));
	CHECK_U64(elf_build_id__in_raw_notes(buf, len, id), ==, 0);
	/* Sizes that wrap a 32-bit sum end the search. */
	{
		uint32_t h[3] = {0xfffffffcu, 0xfffffff0u, NT_GNU_BUILD_ID};

		memcpy(buf, h, sizeof(h));
		CHECK_U64(elf_build_id__in_raw_notes(buf, sizeof(buf), id), ==, 0);
	}
	CHECK_U64(elf_build_id__in_raw_notes(buf, 0, id), ==, 0);
}

TEST(kernel_facts_record_round_trip)
{
	struct kernel_btf_facts f = {.task_stack_off = 32, .pt_regs_size = 168}, back = {0};
	uint8_t rec[KERNEL_FACTS_BYTES];

	kernel_facts__encode(&f, rec);
	CHECK_INT(kernel_facts__decode(rec, sizeof(rec), &back), ==, 0);
	CHECK_U64(back.task_stack_off, ==, 32);
	CHECK_U64(back.pt_regs_size, ==, 168);
	CHECK(!back.files.found);
	/* With where a mapping's file is: each offset back in its place. */
	f.files = (struct kernel_file_offs){true, 152, 160, 32, 64, 40, 16};
	kernel_facts__encode(&f, rec);
	CHECK_INT(kernel_facts__decode(rec, sizeof(rec), &back), ==, 0);
	CHECK(back.files.found);
	CHECK_U64(back.files.vma_pgoff, ==, 152);
	CHECK_U64(back.files.vma_file, ==, 160);
	CHECK_U64(back.files.file_inode, ==, 32);
	CHECK_U64(back.files.inode_ino, ==, 64);
	CHECK_U64(back.files.inode_sb, ==, 40);
	CHECK_U64(back.files.sb_dev, ==, 16);
	CHECK_INT(kernel_facts__decode(rec, sizeof(rec) - 1, &back), ==, -EINVAL);
	/* Any byte changed: refused. */
	for (size_t i = 0; i < sizeof(rec); i++) {
		rec[i] ^= 0x10;
		CHECK_INT(kernel_facts__decode(rec, sizeof(rec), &back), ==, -EINVAL);
		rec[i] ^= 0x10;
	}
	/* Well formed, but no fact a kernel has: refused. */
	f.pt_regs_size = 0;
	kernel_facts__encode(&f, rec);
	CHECK_INT(kernel_facts__decode(rec, sizeof(rec), &back), ==, -EINVAL);
	f.pt_regs_size = 168;
	f.task_stack_off = 33;
	kernel_facts__encode(&f, rec);
	CHECK_INT(kernel_facts__decode(rec, sizeof(rec), &back), ==, -EINVAL);
}

/* The one kept file in dir (the kernel's), into path; 0 if there is none. */
static int kept_path(const char *dir, char *path, size_t size)
{
	char cmd[PATH_MAX + 64];
	FILE *p;
	int found;

	snprintf(cmd, sizeof(cmd), "ls %s/kernel-*.kept 2>/dev/null", dir);
	p = popen(cmd, "r");
	CHECK(p);
	found = fgets(path, (int)size, p) != NULL;
	pclose(p);
	if (found)
		path[strcspn(path, "\n")] = '\0';
	return found;
}

TEST(kernel_facts_kept_in_the_store)
{
	struct kernel_btf_facts btf, first, again;
	char dir[PATH_MAX], path[PATH_MAX];
	struct table_store *s;
	int fd;

	if (kernel_btf__read_vmlinux(&btf))
		SKIP("no kernel BTF here");
	snprintf(dir, sizeof(dir), "%s/facts", test_tmp_dir());
	CHECK_INT(table_store__open(dir, 1 << 20, &s), ==, 0);
	CHECK_INT(kernel_facts__read(s, &first), ==, 0);
	CHECK(!memcmp(&first, &btf, sizeof(btf)));
	if (!kept_path(dir, path, sizeof(path))) {
		table_store__free(s);
		SKIP("this kernel has no build ID in /sys/kernel/notes: nothing is kept");
	}
	CHECK_INT(kernel_facts__read(s, &again), ==, 0);
	CHECK(!memcmp(&again, &btf, sizeof(btf)));
	/* Damaged: read from the BTF again, and written over. */
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, "garbage", 7), ==, 7);
	close(fd);
	CHECK_INT(kernel_facts__read(s, &again), ==, 0);
	CHECK(!memcmp(&again, &btf, sizeof(btf)));
	{
		uint8_t rec[KERNEL_FACTS_BYTES + 1];
		char key[PATH_MAX];
		struct kernel_btf_facts kept;
		size_t n = strlen(path) - strlen(dir) - 1 - strlen(".kept");

		memcpy(key, path + strlen(dir) + 1, n);
		key[n] = '\0';
		CHECK_INT(table_store__read_kept(s, key, rec, sizeof(rec)), ==, KERNEL_FACTS_BYTES);
		CHECK_INT(kernel_facts__decode(rec, KERNEL_FACTS_BYTES, &kept), ==, 0);
		CHECK(!memcmp(&kept, &btf, sizeof(btf)));
	}
	/* Without a store: the BTF, every time. */
	CHECK_INT(kernel_facts__read(NULL, &again), ==, 0);
	CHECK(!memcmp(&again, &btf, sizeof(btf)));
	table_store__free(s);
}
