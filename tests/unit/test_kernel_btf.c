// SPDX-License-Identifier: MIT
/*
 * kernel_btf against bpftool as the oracle on this machine's vmlinux BTF,
 * through windows of several sizes (so that names and records straddle
 * their boundaries), in a bounded amount of memory; then on the BTF of our
 * own BPF object, and on BTF built here: every kind, kind_flag offsets,
 * duplicate and look-alike names, anonymous members (CONFIG_RANDSTRUCT's
 * layout), and damaged input, which must fail cleanly (the ASan build checks
 * that every read stays inside the exact-size copies).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "unwind/kernel_btf.h"
#include "unwinder.skel.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* Windows for the file reader: the smallest allowed, odd ones, and the default. */
static const size_t windows[] = {24, 25, 27, 31, 40, 64, 4095, KERNEL_BTF_BUF_SIZE};

static int memfd_of(const void *buf, size_t len)
{
	int fd = memfd_create("btf", MFD_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(write(fd, buf, len) == (ssize_t)len);
	return fd;
}

/*
 * The facts from an exact-size copy in memory, and from a file through each
 * window: every reader must give the same answer, which is returned.
 */
static int parse_all(const void *buf, size_t len, struct kernel_btf_facts *out)
{
	struct kernel_btf_facts want = {0xdead, 0xbeef}, got;
	void *copy = malloc(len ? len : 1);
	size_t i;
	int fd, err, err2;

	CHECK(copy);
	memcpy(copy, buf, len);
	err = kernel_btf__parse(copy, len, &want);
	free(copy);
	fd = memfd_of(buf, len);
	for (i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		got = (struct kernel_btf_facts){0xdead, 0xbeef};
		err2 = kernel_btf__read_fd_buffered(fd, windows[i], &got);
		if (err2 != err || (!err && memcmp(&got, &want, sizeof(got)) != 0))
			test_fail(__FILE__, __LINE__,
				  "window %zu: %d (%u, %u), in memory %d (%u, %u)", windows[i],
				  err2, got.task_stack_off, got.pt_regs_size, err,
				  want.task_stack_off, want.pt_regs_size);
	}
	close(fd);
	*out = want;
	return err;
}

/* BTF built here: a type section, a string section, then both behind a header. */
struct blob {
	uint8_t types[4096];
	size_t tlen;
	char strs[1024];
	size_t slen;
	uint8_t out[8192];
	size_t len;
	struct btf_header hdr;
};

static void blob_init(struct blob *b)
{
	memset(b, 0, sizeof(*b));
	b->slen = 1; /* "" at offset 0, as in all BTF */
}

static uint32_t str(struct blob *b, const char *s)
{
	size_t n = strlen(s) + 1, off = b->slen;

	CHECK(b->slen + n <= sizeof(b->strs));
	memcpy(b->strs + b->slen, s, n);
	b->slen += n;
	return (uint32_t)off;
}

static void u32(struct blob *b, uint32_t v)
{
	CHECK(b->tlen + 4 <= sizeof(b->types));
	memcpy(b->types + b->tlen, &v, 4);
	b->tlen += 4;
}

static void type(struct blob *b, uint32_t name, uint32_t kind, bool kflag, uint32_t vlen,
		 uint32_t size_or_type)
{
	u32(b, name);
	u32(b, (uint32_t)kflag << 31 | kind << 24 | vlen);
	u32(b, size_or_type);
}

static void member(struct blob *b, uint32_t name, uint32_t type_id, uint32_t offset)
{
	u32(b, name);
	u32(b, type_id);
	u32(b, offset);
}

/* Lays out header, types, strings (as pahole and clang do); the header can be changed after. */
static const uint8_t *blob_finish(struct blob *b)
{
	b->hdr = (struct btf_header){.magic = BTF_MAGIC,
				     .version = BTF_VERSION,
				     .hdr_len = sizeof(b->hdr),
				     .type_len = (uint32_t)b->tlen,
				     .str_off = (uint32_t)b->tlen,
				     .str_len = (uint32_t)b->slen};
	memcpy(b->out, &b->hdr, sizeof(b->hdr));
	memcpy(b->out + sizeof(b->hdr), b->types, b->tlen);
	memcpy(b->out + sizeof(b->hdr) + b->tlen, b->strs, b->slen);
	b->len = sizeof(b->hdr) + b->tlen + b->slen;
	return b->out;
}

static void blob_set_header(struct blob *b, const struct btf_header *h)
{
	memcpy(b->out, h, sizeof(*h));
}

enum {
	NO_PT_REGS = 1 << 0,  /* pt_regs only as a union */
	NO_STACK = 1 << 1,    /* task_struct without the member */
	KFLAG = 1 << 2,	      /* task_struct with kind_flag and a bitfield */
	AFTER_FACTS = 1 << 3, /* where the facts end, in b->tlen: the caller stops here */
	STACK_FIRST = 1 << 4, /* the string "stack" before the others */
	BITFIELD_STACK = 1 << 5,
};

/*
 * Every kind, look-alikes of the names (a FWD task_struct, a UNION pt_regs,
 * a STRUCT task_structure with a stack, members xstack and stac), then the
 * facts: task_struct.stack at byte 8 (bit 64; with KFLAG, byte 16) and
 * sizeof(pt_regs) 168, each followed by a second struct of its name, which
 * does not count. Returns the types' length up to and with the facts.
 */
static size_t kernel_like(struct blob *b, unsigned int flags)
{
	uint32_t s_int, s_long, s_task, s_regs, s_stack, s_e, s_v, s_sec, s_f;
	uint32_t s_task_x, s_xstack, s_stac, s_regs_x;
	size_t facts_end;

	blob_init(b);
	s_stack = flags & STACK_FIRST ? str(b, "stack") : 0;
	s_int = str(b, "int");
	s_long = str(b, "long");
	s_task_x = str(b, "task_structure");
	s_xstack = str(b, "xstack");
	s_stac = str(b, "stac");
	s_regs_x = str(b, "pt_regs_x");
	s_e = str(b, "E");
	s_v = str(b, "v");
	s_sec = str(b, ".data");
	s_f = str(b, "f");
	s_task = str(b, "task_struct");
	s_regs = str(b, "pt_regs");
	if (!(flags & STACK_FIRST))
		s_stack = str(b, "stack");

	type(b, s_int, BTF_KIND_INT, false, 0, 4); /* [1] */
	u32(b, 32 | BTF_INT_SIGNED << 24);
	type(b, 0, BTF_KIND_PTR, false, 0, 1);	 /* [2] */
	type(b, 0, BTF_KIND_ARRAY, false, 0, 0); /* [3] */
	u32(b, 1);
	u32(b, 1);
	u32(b, 4);
	type(b, s_e, BTF_KIND_ENUM, false, 2, 4); /* [4] */
	u32(b, s_e);
	u32(b, 0);
	u32(b, s_v);
	u32(b, 1);
	type(b, s_e, BTF_KIND_ENUM64, false, 1, 8); /* [5] */
	u32(b, s_e);
	u32(b, 1);
	u32(b, 2);
	type(b, 0, BTF_KIND_FUNC_PROTO, false, 2, 1); /* [6] */
	u32(b, s_v);
	u32(b, 1);
	u32(b, 0);
	u32(b, 2);
	type(b, s_f, BTF_KIND_FUNC, false, 0, 6); /* [7] */
	type(b, s_v, BTF_KIND_VAR, false, 0, 1);  /* [8] */
	u32(b, BTF_VAR_GLOBAL_ALLOCATED);
	type(b, s_sec, BTF_KIND_DATASEC, false, 1, 4); /* [9] */
	u32(b, 8);
	u32(b, 0);
	u32(b, 4);
	type(b, s_e, BTF_KIND_DECL_TAG, false, 0, 8); /* [10] */
	u32(b, (uint32_t)-1);
	type(b, s_long, BTF_KIND_FLOAT, false, 0, 8); /* [11] */
	type(b, s_e, BTF_KIND_TYPE_TAG, false, 0, 2); /* [12] */
	type(b, s_task, BTF_KIND_FWD, false, 0, 0);   /* [13] */
	type(b, 0, BTF_KIND_TYPEDEF, false, 0, 1);    /* [14] */
	type(b, 0, BTF_KIND_VOLATILE, false, 0, 1);   /* [15] */
	type(b, 0, BTF_KIND_CONST, false, 0, 2);      /* [16] */
	type(b, 0, BTF_KIND_RESTRICT, false, 0, 2);   /* [17] */
	type(b, s_regs, BTF_KIND_UNION, false, 1, 8); /* [18] */
	member(b, s_int, 1, 0);
	type(b, s_task_x, BTF_KIND_STRUCT, false, 1, 8); /* [19] */
	member(b, s_stack, 2, 0);
	type(b, s_regs_x, BTF_KIND_STRUCT, false, 0, 99); /* [20] */
	if (flags & KFLAG) {
		type(b, s_task, BTF_KIND_STRUCT, true, 4, 64); /* [21] */
		member(b, s_xstack, 1, 3u << 24 | 5);
		member(b, s_stac, 1, 0);
		member(b, 0, 1, 7u << 24 | 40); /* an unnamed bitfield */
		member(b, s_stack, 2, (flags & BITFIELD_STACK ? 8u << 24 : 0) | 128);
	} else {
		type(b, s_task, BTF_KIND_STRUCT, false, flags & NO_STACK ? 2 : 3, 64); /* [21] */
		member(b, s_xstack, 1, 0);
		member(b, s_stac, 1, 32);
		if (!(flags & NO_STACK))
			member(b, s_stack, 2, 64);
	}
	type(b, s_task, BTF_KIND_STRUCT, false, 1, 64); /* [22], not the first */
	member(b, s_stack, 2, 0);
	if (!(flags & NO_PT_REGS)) {
		type(b, s_regs, BTF_KIND_STRUCT, false, 2, 168); /* [23] */
		member(b, s_long, 11, 0);
		member(b, s_int, 1, 64);
	}
	facts_end = b->tlen;
	type(b, s_regs, BTF_KIND_STRUCT, false, 0, 7); /* not the first */
	blob_finish(b);
	return facts_end;
}

TEST(kernel_btf_blob_facts)
{
	struct kernel_btf_facts f;
	struct blob b;

	kernel_like(&b, 0);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, 0);
	CHECK_INT(f.task_stack_off, ==, 8);
	CHECK_INT(f.pt_regs_size, ==, 168);
	/* A name at offset 0 of its window, and the first string of the section. */
	kernel_like(&b, STACK_FIRST);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, 0);
	CHECK_INT(f.task_stack_off, ==, 8);
}

TEST(kernel_btf_kind_flag)
{
	struct kernel_btf_facts f;
	struct blob b;
	uint32_t off;

	/*
	 * With kind_flag the top byte is a bitfield's size, not part of the
	 * offset: bitfields before stack are stepped over, and stack itself
	 * must not be one.
	 */
	kernel_like(&b, KFLAG);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, 0);
	CHECK_INT(f.task_stack_off, ==, 16);
	CHECK_INT(f.pt_regs_size, ==, 168);
	kernel_like(&b, KFLAG | BITFIELD_STACK);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);

	/* Without it the whole word is the offset. */
	blob_init(&b);
	type(&b, str(&b, "task_struct"), BTF_KIND_STRUCT, false, 1, 8);
	member(&b, str(&b, "stack"), 0, 1u << 24 | 64);
	type(&b, str(&b, "pt_regs"), BTF_KIND_STRUCT, false, 0, 1);
	blob_finish(&b);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, 0);
	CHECK_INT(f.task_stack_off, ==, (1u << 24 | 64) / 8);

	/* Not on a byte. */
	blob_init(&b);
	off = str(&b, "stack");
	type(&b, str(&b, "task_struct"), BTF_KIND_STRUCT, false, 1, 8);
	member(&b, off, 0, 68);
	type(&b, str(&b, "pt_regs"), BTF_KIND_STRUCT, false, 0, 1);
	blob_finish(&b);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);
}

TEST(kernel_btf_missing_facts)
{
	struct kernel_btf_facts f;
	struct blob b;

	kernel_like(&b, NO_PT_REGS); /* a union and a second struct pt_regs only */
	CHECK_INT(parse_all(b.out, b.len, &f), ==, 0);
	CHECK_INT(f.pt_regs_size, ==, 7);
	kernel_like(&b, NO_STACK); /* the first task_struct decides */
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -ENOENT);

	/* No struct pt_regs at all, only a union of the name. */
	blob_init(&b);
	type(&b, str(&b, "task_struct"), BTF_KIND_STRUCT, false, 1, 8);
	member(&b, str(&b, "stack"), 0, 0);
	type(&b, str(&b, "pt_regs"), BTF_KIND_UNION, false, 0, 1);
	blob_finish(&b);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -ENOENT);

	/* Only a FWD task_struct. */
	blob_init(&b);
	type(&b, str(&b, "task_struct"), BTF_KIND_FWD, false, 0, 0);
	str(&b, "stack");
	type(&b, str(&b, "pt_regs"), BTF_KIND_STRUCT, false, 0, 1);
	blob_finish(&b);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -ENOENT);

	/* No such names. */
	blob_init(&b);
	type(&b, str(&b, "int"), BTF_KIND_INT, false, 0, 4);
	u32(&b, 32);
	blob_finish(&b);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -ENOENT);

	/* Empty sections. */
	blob_init(&b);
	blob_finish(&b);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -ENOENT);
}

TEST(kernel_btf_truncated_file)
{
	struct kernel_btf_facts f;
	struct blob b;
	size_t len;

	kernel_like(&b, KFLAG);
	for (len = 0; len < b.len; len++) {
		int err = parse_all(b.out, len, &f);

		if (err != -EINVAL)
			test_fail(__FILE__, __LINE__, "%zu of %zu bytes: %d", len, b.len, err);
	}
	CHECK_INT(parse_all(b.out, b.len, &f), ==, 0);
}

/* Sections shorter than their data: a cut record is -EINVAL, a missing one -ENOENT. */
TEST(kernel_btf_cut_sections)
{
	struct kernel_btf_facts f;
	struct btf_header h;
	struct blob b;
	size_t facts_end = kernel_like(&b, 0), end_of_names, cut;

	h = b.hdr;
	for (cut = 0; cut <= b.tlen; cut++) {
		int err;

		h.type_len = (uint32_t)cut;
		blob_set_header(&b, &h);
		err = parse_all(b.out, b.len, &f);
		if (cut >= facts_end)
			CHECK_INT(err, ==, 0);
		else if (err != -EINVAL && (err != -ENOENT || cut % 4))
			test_fail(__FILE__, __LINE__, "types cut at %zu: %d", cut, err);
	}
	/* "stack" ends the strings: cut before its NUL, it is no name. */
	end_of_names = b.slen;
	h = b.hdr;
	for (cut = 0; cut <= b.slen; cut++) {
		int err;

		h.str_len = (uint32_t)cut;
		blob_set_header(&b, &h);
		err = parse_all(b.out, b.len, &f);
		CHECK_INT(err, ==, cut == end_of_names ? 0 : -ENOENT);
	}
}

TEST(kernel_btf_huge_counts)
{
	struct kernel_btf_facts f;
	struct btf_header h;
	struct blob b;
	uint32_t kinds[] = {BTF_KIND_STRUCT,	 BTF_KIND_UNION,   BTF_KIND_ENUM,
			    BTF_KIND_FUNC_PROTO, BTF_KIND_DATASEC, BTF_KIND_ENUM64};
	size_t i;

	/* A vlen far past the section, before the facts. */
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		blob_init(&b);
		type(&b, str(&b, "pt_regs"), kinds[i], false, 0xffff, 4);
		member(&b, 0, 0, 0);
		type(&b, str(&b, "task_struct"), BTF_KIND_STRUCT, false, 1, 8);
		member(&b, str(&b, "stack"), 0, 0);
		blob_finish(&b);
		CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);
	}
	/* In the struct searched, and in the last record. */
	blob_init(&b);
	type(&b, str(&b, "pt_regs"), BTF_KIND_STRUCT, false, 0, 4);
	type(&b, str(&b, "task_struct"), BTF_KIND_STRUCT, false, 0xffff, 8);
	member(&b, str(&b, "int"), 0, 0);
	str(&b, "stack");
	blob_finish(&b);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);

	/* Header lengths and offsets past the file. */
	kernel_like(&b, 0);
	h = b.hdr;
	h.type_len = UINT32_MAX;
	blob_set_header(&b, &h);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);
	h = b.hdr;
	h.str_off = UINT32_MAX;
	blob_set_header(&b, &h);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);
	h = b.hdr;
	h.hdr_len = UINT32_MAX;
	blob_set_header(&b, &h);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);
}

/*
 * The facts and the structs that say where a mapping's file is, each member
 * at a byte offset of its own: vm_area_struct {vm_start, vm_pgoff 152,
 * vm_file 160}, file {f_inode 32}, inode {i_sb 40, i_ino 64}, super_block
 * {s_dev 16}. how: 0, 1 (s_dev a bitfield), 2 (no struct inode), 3 (a
 * second vm_area_struct after the first, which does not count).
 */
static void file_structs(struct blob *b, int how)
{
	uint32_t s_int, s_task, s_regs, s_stack, s_vma, s_start, s_pgoff, s_vfile, s_file;
	uint32_t s_finode, s_inode, s_ino, s_sb, s_super, s_dev;

	blob_init(b);
	s_int = str(b, "long");
	s_task = str(b, "task_struct");
	s_regs = str(b, "pt_regs");
	s_stack = str(b, "stack");
	s_vma = str(b, "vm_area_struct");
	s_start = str(b, "vm_start");
	s_pgoff = str(b, "vm_pgoff");
	s_vfile = str(b, "vm_file");
	s_file = str(b, "file");
	s_finode = str(b, "f_inode");
	s_inode = str(b, "inode");
	s_ino = str(b, "i_ino");
	s_sb = str(b, "i_sb");
	s_super = str(b, "super_block");
	s_dev = str(b, "s_dev");
	type(b, s_int, BTF_KIND_INT, false, 0, 8); /* [1] */
	u32(b, 64);
	type(b, s_task, BTF_KIND_STRUCT, false, 1, 64); /* [2] */
	member(b, s_stack, 1, 64);
	type(b, s_regs, BTF_KIND_STRUCT, false, 1, 168); /* [3] */
	member(b, s_int, 1, 0);
	type(b, s_vma, BTF_KIND_STRUCT, false, 3, 200); /* [4] */
	member(b, s_start, 1, 0);
	member(b, s_pgoff, 1, 152 * 8);
	member(b, s_vfile, 1, 160 * 8);
	type(b, s_file, BTF_KIND_STRUCT, false, 1, 100); /* [5] */
	member(b, s_finode, 1, 32 * 8);
	if (how != 2) {
		type(b, s_inode, BTF_KIND_STRUCT, false, 2, 100); /* [6] */
		member(b, s_sb, 1, 40 * 8);
		member(b, s_ino, 1, 64 * 8);
	}
	type(b, s_super, BTF_KIND_STRUCT, how == 1, 1, 100);
	member(b, s_dev, 1, how == 1 ? 20u << 24 | 16 * 8 : 16 * 8);
	if (how == 3) {
		type(b, s_vma, BTF_KIND_STRUCT, false, 1, 8);
		member(b, s_pgoff, 1, 8);
	}
	blob_finish(b);
}

TEST(kernel_btf_file_offsets)
{
	struct kernel_btf_facts f;
	struct blob b;
	int how;

	for (how = 0; how < 4; how++) {
		file_structs(&b, how);
		memset(&f, 0xff, sizeof(f));
		CHECK_INT(kernel_btf__parse(b.out, b.len, &f), ==, 0);
		CHECK_INT(f.task_stack_off, ==, 8);
		CHECK_INT(f.pt_regs_size, ==, 168);
		/* A bitfield s_dev, or no inode: none of the six, not some. */
		CHECK_INT(f.files.found, ==, how == 0 || how == 3);
		if (!f.files.found) {
			CHECK_INT(f.files.vma_pgoff, ==, 0);
			CHECK_INT(f.files.sb_dev, ==, 0);
			continue;
		}
		CHECK_INT(f.files.vma_pgoff, ==, 152);
		CHECK_INT(f.files.vma_file, ==, 160);
		CHECK_INT(f.files.file_inode, ==, 32);
		CHECK_INT(f.files.inode_ino, ==, 64);
		CHECK_INT(f.files.inode_sb, ==, 40);
		CHECK_INT(f.files.sb_dev, ==, 16);
	}
}

TEST(kernel_btf_bad_header)
{
	struct kernel_btf_facts f;
	struct btf_header h;
	struct blob b;

	kernel_like(&b, 0);
	h = b.hdr;
	h.magic = 0x9feb; /* BTF of the other byte order is refused */
	blob_set_header(&b, &h);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);
	h = b.hdr;
	h.version = 2;
	blob_set_header(&b, &h);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);
	h = b.hdr;
	h.flags = 1;
	blob_set_header(&b, &h);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);
	h = b.hdr;
	h.hdr_len = sizeof(h) - 1;
	blob_set_header(&b, &h);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);

	/* A longer header (a newer kernel's): the offsets count from its end. */
	h = b.hdr;
	h.hdr_len = sizeof(h) + 8;
	memmove(b.out + sizeof(h) + 8, b.out + sizeof(h), b.len - sizeof(h));
	memset(b.out + sizeof(h), 0, 8);
	blob_set_header(&b, &h);
	CHECK_INT(parse_all(b.out, b.len + 8, &f), ==, 0);
	CHECK_INT(f.task_stack_off, ==, 8);

	/* Sections in the other order, with a gap. */
	kernel_like(&b, 0);
	h = b.hdr;
	h.str_off = 0;
	h.type_off = b.hdr.str_len + 4;
	memcpy(b.out + sizeof(h), b.strs, b.slen);
	memset(b.out + sizeof(h) + b.slen, 0xff, 4);
	memcpy(b.out + sizeof(h) + b.slen + 4, b.types, b.tlen);
	blob_set_header(&b, &h);
	CHECK_INT(parse_all(b.out, b.len + 4, &f), ==, 0);
	CHECK_INT(f.task_stack_off, ==, 8);
	CHECK_INT(f.pt_regs_size, ==, 168);
}

TEST(kernel_btf_unknown_kind)
{
	struct kernel_btf_facts f;
	uint32_t kinds[] = {BTF_KIND_UNKN, NR_BTF_KINDS, 31};
	struct blob b;
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		blob_init(&b);
		type(&b, 0, kinds[i], false, 0, 0);
		type(&b, str(&b, "task_struct"), BTF_KIND_STRUCT, false, 1, 8);
		member(&b, str(&b, "stack"), 0, 0);
		type(&b, str(&b, "pt_regs"), BTF_KIND_STRUCT, false, 0, 1);
		blob_finish(&b);
		CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);
	}
}

TEST(kernel_btf_duplicate_names)
{
	struct kernel_btf_facts f;
	uint32_t stack = 0;
	struct blob b;
	int i;

	/* BTF need not be deduplicated: a name may be any of its copies. */
	blob_init(&b);
	for (i = 0; i < 8; i++)
		stack = str(&b, "stack");
	type(&b, str(&b, "task_struct"), BTF_KIND_STRUCT, false, 1, 8);
	member(&b, stack, 0, 24);
	type(&b, str(&b, "pt_regs"), BTF_KIND_STRUCT, false, 0, 1);
	blob_finish(&b);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, 0);
	CHECK_INT(f.task_stack_off, ==, 3);

	/* More copies than kept is refused rather than misread. */
	str(&b, "stack");
	blob_finish(&b);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -EINVAL);
}

/*
 * CONFIG_RANDSTRUCT wraps most of task_struct in an anonymous struct: the
 * member is found through anonymous members, defined before or after
 * task_struct, up to 4 levels down, with their offsets added.
 */
TEST(kernel_btf_anonymous_members)
{
	struct kernel_btf_facts f;
	uint32_t s_stack, s_int;
	struct blob b;
	int depth, i;

	blob_init(&b);
	s_stack = str(&b, "stack");
	s_int = str(&b, "int");
	type(&b, s_int, BTF_KIND_INT, false, 0, 4); /* [1] */
	u32(&b, 32);
	type(&b, 0, BTF_KIND_UNION, false, 2, 8); /* [2] */
	member(&b, s_int, 1, 0);
	member(&b, 0, 4, 0);
	type(&b, str(&b, "task_struct"), BTF_KIND_STRUCT, false, 4, 256); /* [3] */
	member(&b, s_int, 1, 0);
	member(&b, 0, 1, 32);			   /* an unnamed int: not a struct */
	member(&b, 0, 2, 64);			   /* a union without stack */
	member(&b, 0, 5, 1024);			   /* stack in here */
	type(&b, 0, BTF_KIND_STRUCT, false, 1, 8); /* [4] */
	member(&b, s_int, 1, 0);
	type(&b, 0, BTF_KIND_STRUCT, false, 2, 16); /* [5] */
	member(&b, s_int, 1, 0);
	member(&b, s_stack, 1, 64);
	type(&b, str(&b, "pt_regs"), BTF_KIND_STRUCT, false, 0, 168); /* [6] */
	blob_finish(&b);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, 0);
	CHECK_INT(f.task_stack_off, ==, (1024 + 64) / 8);
	CHECK_INT(f.pt_regs_size, ==, 168);

	/* A chain of anonymous structs, each one level deeper at 64 bits more. */
	for (depth = 1; depth <= 6; depth++) {
		blob_init(&b);
		s_stack = str(&b, "stack");
		type(&b, str(&b, "task_struct"), BTF_KIND_STRUCT, false, 1, 256); /* [1] */
		member(&b, 0, 2, 64);
		for (i = 2; i <= depth; i++) { /* [2..depth] */
			type(&b, 0, BTF_KIND_STRUCT, false, 1, 8);
			member(&b, 0, (uint32_t)i + 1, 64);
		}
		type(&b, 0, BTF_KIND_STRUCT, false, 1, 8); /* [depth + 1] */
		member(&b, s_stack, 0, 0);
		type(&b, str(&b, "pt_regs"), BTF_KIND_STRUCT, false, 0, 168);
		blob_finish(&b);
		if (depth <= 4) {
			CHECK_INT(parse_all(b.out, b.len, &f), ==, 0);
			CHECK_INT(f.task_stack_off, ==, depth * 8);
		} else {
			CHECK_INT(parse_all(b.out, b.len, &f), ==, -ENOENT);
		}
	}

	/* An anonymous member of its own type ends, without the member. */
	blob_init(&b);
	s_stack = str(&b, "stack");
	type(&b, str(&b, "task_struct"), BTF_KIND_STRUCT, false, 1, 256); /* [1] */
	member(&b, 0, 2, 64);
	type(&b, 0, BTF_KIND_STRUCT, false, 1, 8); /* [2] */
	member(&b, 0, 2, 8);
	type(&b, str(&b, "pt_regs"), BTF_KIND_STRUCT, false, 0, 168);
	blob_finish(&b);
	CHECK_INT(parse_all(b.out, b.len, &f), ==, -ENOENT);
}

/* The .BTF section of our unwinder's BPF object (clang's BTF, with pt_regs). */
static uint8_t *unwinder_btf(size_t *len)
{
	const void *obj;
	size_t obj_size, shstrndx;
	Elf_Scn *scn = NULL;
	uint8_t *copy = NULL;
	GElf_Shdr sh;
	Elf *elf;

	obj = unwinder_bpf__elf_bytes(&obj_size);
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)obj, obj_size);
	CHECK(elf && !elf_getshdrstrndx(elf, &shstrndx));
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		CHECK(gelf_getshdr(scn, &sh));
		if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".BTF") != 0)
			continue;
		d = elf_getdata(scn, NULL);
		CHECK(d && d->d_size);
		copy = malloc(d->d_size);
		CHECK(copy);
		memcpy(copy, d->d_buf, d->d_size);
		*len = d->d_size;
		break;
	}
	elf_end(elf);
	CHECK(copy);
	return copy;
}

TEST(kernel_btf_bpf_object)
{
	struct kernel_btf_facts f;
	struct btf_header h;
	size_t len, i, off;
	uint8_t *btf, *grown;
	uint32_t v, task, stack;

	btf = unwinder_btf(&len);
	CHECK_INT(parse_all(btf, len, &f), ==, -ENOENT); /* no task_struct */
	for (i = 0; i < len; i++)
		CHECK_INT(parse_all(btf, i, &f), ==, -EINVAL);

	/*
	 * The same BTF with a struct task_struct added at the end of the
	 * types: the walk goes through all of clang's records to it.
	 */
	memcpy(&h, btf, sizeof(h));
	if (h.hdr_len != sizeof(h) || h.type_off != 0 || h.str_off != h.type_len ||
	    len != sizeof(h) + h.type_len + h.str_len)
		SKIP("the object's BTF is not laid out as header, types, strings");
	grown = malloc(len + 24 + sizeof("task_struct") + sizeof("stack"));
	CHECK(grown);
	memcpy(grown, btf, sizeof(h) + h.type_len);
	off = sizeof(h) + h.type_len;
	task = h.str_len;
	stack = h.str_len + sizeof("task_struct");
	v = task;
	memcpy(grown + off, &v, 4);
	v = BTF_KIND_STRUCT << 24 | 1;
	memcpy(grown + off + 4, &v, 4);
	v = 64;
	memcpy(grown + off + 8, &v, 4);
	memcpy(grown + off + 12, &stack, 4);
	v = 0;
	memcpy(grown + off + 16, &v, 4);
	v = 320;
	memcpy(grown + off + 20, &v, 4);
	off += 24;
	memcpy(grown + off, btf + sizeof(h) + h.type_len, h.str_len);
	off += h.str_len;
	memcpy(grown + off, "task_struct", sizeof("task_struct"));
	off += sizeof("task_struct");
	memcpy(grown + off, "stack", sizeof("stack"));
	off += sizeof("stack");
	h.type_len += 24;
	h.str_off = h.type_len;
	h.str_len += (uint32_t)(sizeof("task_struct") + sizeof("stack"));
	memcpy(grown, &h, sizeof(h));
	CHECK_INT(parse_all(grown, off, &f), ==, 0);
	CHECK_INT(f.task_stack_off, ==, 40);
	CHECK_INT(f.pt_regs_size, ==, 168); /* the object's own, x86_64's */
	free(grown);
	free(btf);
}

/* What `bpftool btf dump file ... format raw` says of the facts; false if it cannot tell. */
/* bpftool's raw dump of the kernel's BTF, to read with fgets. */
static FILE *bpftool_dump(void)
{
	const char *bpftool = getenv("BPFTOOL") ? getenv("BPFTOOL") : "bpftool";
	char cmd[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s btf dump file %s format raw 2>/dev/null", bpftool,
		 VMLINUX_BTF);
	p = popen(cmd, "r");
	CHECK(p);
	return p;
}

static bool bpftool_facts(struct kernel_btf_facts *want)
{
	bool in_task = false, seen_task = false, have_stack = false, have_regs = false;
	char line[1024], kind[32], name[128];
	unsigned int id, size, type_id, bits;
	FILE *p = bpftool_dump();

	while (fgets(line, sizeof(line), p)) {
		if (line[0] == '[') {
			in_task = false;
			if (sscanf(line, "[%u] %31s '%127[^']' size=%u", &id, kind, name, &size) !=
			    4)
				continue;
			if (strcmp(kind, "STRUCT") != 0)
				continue;
			if (!seen_task && strcmp(name, "task_struct") == 0)
				in_task = seen_task = true;
			if (!have_regs && strcmp(name, "pt_regs") == 0) {
				want->pt_regs_size = size;
				have_regs = true;
			}
		} else if (in_task &&
			   sscanf(line, "\t'%127[^']' type_id=%u bits_offset=%u", name, &type_id,
				  &bits) == 3 &&
			   strcmp(name, "stack") == 0) {
			want->task_stack_off = bits / 8;
			have_stack = true;
		}
	}
	pclose(p);
	return have_stack && have_regs;
}

/* The byte offset of a top-level member of the first STRUCT of a name, as bpftool dumps it; -1. */
static int bpftool_member(const char *strct, const char *want)
{
	char line[1024], kind[32], name[128];
	unsigned int id, size, type_id, bits;
	bool in = false, seen = false;
	FILE *p = bpftool_dump();
	int off = -1;

	while (fgets(line, sizeof(line), p)) {
		if (line[0] == '[') {
			in = !seen &&
			     sscanf(line, "[%u] %31s '%127[^']' size=%u", &id, kind, name, &size) ==
				     4 &&
			     !strcmp(kind, "STRUCT") && !strcmp(name, strct);
			seen |= in;
		} else if (in && off < 0 &&
			   sscanf(line, "\t'%127[^']' type_id=%u bits_offset=%u", name, &type_id,
				  &bits) == 3 &&
			   !strcmp(name, want)) {
			off = (int)(bits / 8);
		}
	}
	pclose(p);
	return off;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

TEST(kernel_btf_vmlinux)
{
	struct kernel_btf_facts want, got = {0}, again;
	double first, best = 1e9, t;
	struct timespec t0;
	size_t i;
	int fd;

	if (access(VMLINUX_BTF, R_OK) != 0)
		SKIP("%s: %s (a kernel without CONFIG_DEBUG_INFO_BTF)", VMLINUX_BTF,
		     strerror(errno));
	if (!bpftool_facts(&want))
		SKIP("bpftool cannot dump %s, or shows no task_struct.stack (nested?)",
		     VMLINUX_BTF);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_INT(kernel_btf__read_vmlinux(&got), ==, 0);
	first = ms_since(&t0);
	CHECK_INT(got.task_stack_off, ==, want.task_stack_off);
	CHECK_INT(got.pt_regs_size, ==, want.pt_regs_size);
	/* Where a mapping's file is (the walk by file), as bpftool shows it. */
	CHECK(got.files.found);
	CHECK_INT(got.files.vma_pgoff, ==, bpftool_member("vm_area_struct", "vm_pgoff"));
	CHECK_INT(got.files.vma_file, ==, bpftool_member("vm_area_struct", "vm_file"));
	CHECK_INT(got.files.file_inode, ==, bpftool_member("file", "f_inode"));
	CHECK_INT(got.files.inode_ino, ==, bpftool_member("inode", "i_ino"));
	CHECK_INT(got.files.inode_sb, ==, bpftool_member("inode", "i_sb"));
	CHECK_INT(got.files.sb_dev, ==, bpftool_member("super_block", "s_dev"));
	for (i = 0; i < 5; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_INT(kernel_btf__read_vmlinux(&again), ==, 0);
		t = ms_since(&t0);
		best = t < best ? t : best;
	}
	fprintf(stderr,
		"kernel_btf: task_struct.stack at %u, sizeof(pt_regs) %u, read in %.2f ms "
		"(best of 5: %.2f ms)\n",
		got.task_stack_off, got.pt_regs_size, first, best);

	/* Windows whose boundaries fall everywhere; the 24-byte one reads 24 bytes a call. */
	fd = open(VMLINUX_BTF, O_RDONLY);
	CHECK(fd >= 0);
	for (i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		again = (struct kernel_btf_facts){0};
		CHECK_INT(kernel_btf__read_fd_buffered(fd, windows[i], &again), ==, 0);
		CHECK(memcmp(&again, &got, sizeof(got)) == 0);
	}
	close(fd);
}

/* The peak resident set, in KiB. */
static long vm_hwm(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib;
}

/*
 * The 5.5 MB file costs its window, not its size: the peak grows by far
 * less than the file (128 KiB here with musl; ASan's shadow memory and
 * redzones about 530 KiB).
 */
#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define PEAK_LIMIT_KIB 2048
#else
#define PEAK_LIMIT_KIB 512
#endif

TEST(kernel_btf_vmlinux_peak_memory)
{
	struct kernel_btf_facts f;
	long before, after;
	FILE *clear;

	if (access(VMLINUX_BTF, R_OK) != 0)
		SKIP("%s: %s", VMLINUX_BTF, strerror(errno));
	/* "5" resets the peak to the current resident set (Linux 4.0). */
	clear = fopen("/proc/self/clear_refs", "w");
	if (!clear || fputs("5", clear) < 0 || fclose(clear) != 0)
		SKIP("cannot reset the peak RSS: %s", strerror(errno));
	before = vm_hwm();
	CHECK_INT(kernel_btf__read_vmlinux(&f), ==, 0);
	after = vm_hwm();
	CHECK(before > 0);
	fprintf(stderr, "kernel_btf: peak RSS grew by %ld KiB\n", after - before);
	CHECK_INT(after - before, <, PEAK_LIMIT_KIB);
}
