// SPDX-License-Identifier: MIT
/*
 * Two facts from the kernel's BTF; see kernel_btf.h. The format is the
 * kernel's (include/uapi/linux/btf.h, Documentation/bpf/btf.rst): a header
 * (magic, version, flags, hdr_len, then the offsets and lengths of the type
 * and string sections, relative to the end of the header), a string
 * section of NUL-terminated names, and a type section of records, each a
 * struct btf_type followed by data whose size its kind and vlen give. Type
 * ids are the records' ordinal numbers, from 1.
 *
 * Names are offsets into the string section, and the types come before the
 * strings in the file, so one forward pass cannot name what it reads. Pass
 * 1 reads the strings and notes where "task_struct", "pt_regs" and "stack"
 * are; pass 2 reads the types and compares offsets. If task_struct has no
 * member named stack but anonymous struct or union members (a kernel built
 * with CONFIG_RANDSTRUCT wraps most of task_struct in one), each further
 * pass looks one level deeper into those, by type id.
 *
 * A stream reads a region (a section) of the input: from a file through
 * one window, whose boundaries fall anywhere in a record or a name, or
 * straight from memory. Nothing is read outside the region or the input.
 */
#include <byteswap.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_MODULE "btf"
#include "lib/log.h"
#include "unwind/kernel_btf.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* Deduplicated BTF (the kernel's) has each name once; more copies are refused. */
#define MAX_COPIES 8
/* Anonymous members looked into per level, and levels. */
#define MAX_ANON  16
#define MAX_DEPTH 4

struct btf_stream {
	int fd; /* -1: the input is mem */
	const uint8_t *mem;
	uint64_t size; /* of the input */
	uint8_t *buf;  /* fd: the window */
	size_t buf_size;
	const uint8_t *cur; /* the next unread byte */
	size_t avail;	    /* bytes read from cur on, all inside the region */
	uint64_t pos;	    /* input offset of cur */
	uint64_t end;	    /* of the region */
};

enum name_id {
	NAME_TASK_STRUCT,
	NAME_PT_REGS,
	NAME_STACK,
	NAME_VMA,
	NAME_VM_PGOFF,
	NAME_VM_FILE,
	NAME_FILE,
	NAME_F_INODE,
	NAME_INODE,
	NAME_I_INO,
	NAME_I_SB,
	NAME_SUPER_BLOCK,
	NAME_S_DEV,
	NR_NAMES
};

static const struct {
	const char *str;
	size_t len;
} names[NR_NAMES] = {
	[NAME_TASK_STRUCT] = {"task_struct", sizeof("task_struct") - 1},
	[NAME_PT_REGS] = {"pt_regs", sizeof("pt_regs") - 1},
	[NAME_STACK] = {"stack", sizeof("stack") - 1},
	[NAME_VMA] = {"vm_area_struct", sizeof("vm_area_struct") - 1},
	[NAME_VM_PGOFF] = {"vm_pgoff", sizeof("vm_pgoff") - 1},
	[NAME_VM_FILE] = {"vm_file", sizeof("vm_file") - 1},
	[NAME_FILE] = {"file", sizeof("file") - 1},
	[NAME_F_INODE] = {"f_inode", sizeof("f_inode") - 1},
	[NAME_INODE] = {"inode", sizeof("inode") - 1},
	[NAME_I_INO] = {"i_ino", sizeof("i_ino") - 1},
	[NAME_I_SB] = {"i_sb", sizeof("i_sb") - 1},
	[NAME_SUPER_BLOCK] = {"super_block", sizeof("super_block") - 1},
	[NAME_S_DEV] = {"s_dev", sizeof("s_dev") - 1},
};

/* The optional facts (struct kernel_file_offs): members at the top level of a struct. */
enum member_id { M_VM_PGOFF, M_VM_FILE, M_F_INODE, M_I_INO, M_I_SB, M_S_DEV, NR_MEMBERS };

static const struct {
	enum name_id strct, member;
} members[NR_MEMBERS] = {
	[M_VM_PGOFF] = {NAME_VMA, NAME_VM_PGOFF}, [M_VM_FILE] = {NAME_VMA, NAME_VM_FILE},
	[M_F_INODE] = {NAME_FILE, NAME_F_INODE},  [M_I_INO] = {NAME_INODE, NAME_I_INO},
	[M_I_SB] = {NAME_INODE, NAME_I_SB},	  [M_S_DEV] = {NAME_SUPER_BLOCK, NAME_S_DEV},
};

/* Where a name is in the string section. */
struct name_offs {
	uint32_t off[MAX_COPIES];
	unsigned int n;
};

/* A struct or union (by type id) that may hold `stack`, at bit_off in task_struct. */
struct container {
	uint32_t id;
	uint64_t bit_off;
};

struct search {
	struct name_offs offs[NR_NAMES];
	bool level0; /* the container is the first STRUCT named task_struct */
	struct container in[MAX_ANON], next[MAX_ANON];
	unsigned int n_in, n_next;
	bool have_task, have_stack, have_regs;
	uint64_t stack_bits;
	uint32_t pt_regs_size;
	uint32_t structs_seen;	/* 1 << name_id of the member structs met (the first of each) */
	uint32_t members_found; /* 1 << member_id */
	uint64_t member_bits[NR_MEMBERS];
};

static int stream__seek(struct btf_stream *s, uint64_t off, uint64_t len)
{
	/* Both come from u32 fields: no overflow. */
	if (off + len > s->size) {
		pr_debug("section [%llu, +%llu) past the end (%llu bytes)", (unsigned long long)off,
			 (unsigned long long)len, (unsigned long long)s->size);
		return -EINVAL;
	}
	s->pos = off;
	s->end = off + len;
	if (s->fd < 0) {
		s->cur = s->mem + off;
		s->avail = len;
		return 0;
	}
	if (lseek(s->fd, (off_t)off, SEEK_SET) < 0)
		return -errno;
	s->cur = s->buf;
	s->avail = 0;
	return 0;
}

/* At least n (at most the window's size) contiguous bytes at s->cur; -EINVAL past the region. */
static int stream__fill(struct btf_stream *s, size_t n)
{
	if (s->avail >= n)
		return 0;
	if (n > s->end - s->pos || s->fd < 0) /* from memory, avail is the rest of the region */
		return -EINVAL;
	memmove(s->buf, s->cur, s->avail);
	s->cur = s->buf;
	while (s->avail < n) {
		uint64_t left = s->end - s->pos - s->avail;
		size_t room = s->buf_size - s->avail;
		ssize_t r = read(s->fd, s->buf + s->avail, left < room ? (size_t)left : room);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0) /* the file shrank since fstat */
			return -EINVAL;
		s->avail += (size_t)r;
	}
	return 0;
}

static void stream__take(struct btf_stream *s, size_t n)
{
	s->cur += n;
	s->avail -= n;
	s->pos += n;
}

static int stream__skip(struct btf_stream *s, uint64_t n)
{
	if (n > s->end - s->pos)
		return -EINVAL;
	if (n <= s->avail) {
		stream__take(s, (size_t)n);
		return 0;
	}
	/* Only a file has bytes beyond avail. */
	n -= s->avail;
	stream__take(s, s->avail);
	if (lseek(s->fd, (off_t)n, SEEK_CUR) < 0)
		return -errno;
	s->pos += n;
	return 0;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Three u32 (a struct btf_type or btf_member), consumed. */
static int stream__u32x3(struct btf_stream *s, uint32_t v[3])
{
	int err = stream__fill(s, 12);

	if (err)
		return err;
	v[0] = get_u32(s->cur);
	v[1] = get_u32(s->cur + 4);
	v[2] = get_u32(s->cur + 8);
	stream__take(s, 12);
	return 0;
}

static bool name_is(const struct search *q, enum name_id name, uint32_t off)
{
	unsigned int i;

	for (i = 0; i < q->offs[name].n; i++) {
		if (q->offs[name].off[i] == off)
			return true;
	}
	return false;
}

static int note_string(struct search *q, const char *str, size_t len, uint64_t off)
{
	int i;

	for (i = 0; i < NR_NAMES; i++) {
		struct name_offs *o = &q->offs[i];

		if (names[i].len != len || memcmp(names[i].str, str, len) != 0)
			continue;
		if (o->n == MAX_COPIES) {
			pr_debug("more than %d copies of the name %s", MAX_COPIES, names[i].str);
			return -EINVAL;
		}
		o->off[o->n++] = (uint32_t)off;
	}
	return 0;
}

/*
 * Pass 1, over the string section: the offsets of the names. A string can
 * span windows; only its first bytes are kept, as many as the longest name
 * has and one more, which tells a longer string from a name.
 */
static int find_names(struct btf_stream *s, struct search *q)
{
	char head[sizeof("vm_area_struct")];
	uint64_t start = 0; /* of the current string, in the section */
	size_t len = 0;	    /* of the current string so far */
	int err;

	while (s->pos < s->end) {
		const uint8_t *p;
		size_t n;

		err = stream__fill(s, 1);
		if (err)
			return err;
		p = s->cur;
		n = s->avail;
		while (n) {
			const uint8_t *nul = memchr(p, 0, n);
			size_t k = nul ? (size_t)(nul - p) : n;

			if (len < sizeof(head))
				memcpy(head + len, p,
				       k < sizeof(head) - len ? k : sizeof(head) - len);
			len += k;
			if (!nul)
				break;
			if (len < sizeof(head)) {
				err = note_string(q, head, len, start);
				if (err)
					return err;
			}
			start += len + 1;
			len = 0;
			p += k + 1;
			n -= k + 1;
		}
		stream__take(s, s->avail);
	}
	/* An unterminated last string is no name. */
	return 0;
}

/* Whether the struct or union with this id and name is one `stack` is looked for in. */
static bool container_of_stack(struct search *q, uint32_t id, uint32_t kind, uint32_t name_off,
			       uint64_t *bit_base)
{
	unsigned int i;

	if (q->level0) {
		if (q->have_task || kind != BTF_KIND_STRUCT ||
		    !name_is(q, NAME_TASK_STRUCT, name_off))
			return false;
		q->have_task = true;
		*bit_base = 0;
		return true;
	}
	for (i = 0; i < q->n_in; i++) {
		if (q->in[i].id == id) {
			*bit_base = q->in[i].bit_off;
			return true;
		}
	}
	return false;
}

/* Whether the struct named name_off is the first of a name the optional facts are in. */
static bool member_struct(struct search *q, uint32_t name_off)
{
	uint32_t bit;
	int i;

	for (i = 0; i < NR_MEMBERS; i++) {
		bit = 1u << members[i].strct;
		if (!(q->structs_seen & bit) && name_is(q, members[i].strct, name_off)) {
			q->structs_seen |= bit;
			return true;
		}
	}
	return false;
}

/* The optional facts' members of a struct just met (member_struct), at its top level. */
static int visit_members(struct btf_stream *s, struct search *q, const uint32_t t[3])
{
	uint32_t vlen = BTF_INFO_VLEN(t[1]), i, bits;
	bool kflag = BTF_INFO_KFLAG(t[1]);
	uint32_t m[3];
	int j, err;

	for (i = 0; i < vlen; i++) {
		err = stream__u32x3(s, m);
		if (err)
			return err;
		bits = kflag ? BTF_MEMBER_BIT_OFFSET(m[2]) : m[2];
		/* A bitfield, or a field that is not a whole byte, is not found. */
		if ((kflag && BTF_MEMBER_BITFIELD_SIZE(m[2])) || bits % 8)
			continue;
		for (j = 0; j < NR_MEMBERS; j++) {
			if (name_is(q, members[j].strct, t[0]) &&
			    name_is(q, members[j].member, m[0])) {
				q->members_found |= 1u << j;
				q->member_bits[j] = bits;
			}
		}
	}
	return 0;
}

/* The members of a struct or union: `stack`, or anonymous members to look into next. */
static int visit_struct(struct btf_stream *s, struct search *q, uint32_t id, const uint32_t t[3])
{
	uint32_t kind = BTF_INFO_KIND(t[1]), vlen = BTF_INFO_VLEN(t[1]);
	bool kflag = BTF_INFO_KFLAG(t[1]);
	uint64_t base;
	uint32_t i;
	int err;

	if (q->level0 && !q->have_regs && kind == BTF_KIND_STRUCT &&
	    name_is(q, NAME_PT_REGS, t[0])) {
		q->have_regs = true;
		q->pt_regs_size = t[2];
	}
	if (q->level0 && kind == BTF_KIND_STRUCT && member_struct(q, t[0]))
		return visit_members(s, q, t);
	if (q->have_stack || !container_of_stack(q, id, kind, t[0], &base))
		return stream__skip(s, (uint64_t)vlen * sizeof(struct btf_member));
	for (i = 0; i < vlen; i++) {
		uint32_t m[3], bits;

		err = stream__u32x3(s, m);
		if (err)
			return err;
		/* With kind_flag, the offset holds a bitfield's size above its bit offset. */
		bits = kflag ? BTF_MEMBER_BIT_OFFSET(m[2]) : m[2];
		if (name_is(q, NAME_STACK, m[0])) {
			if ((kflag && BTF_MEMBER_BITFIELD_SIZE(m[2])) || (base + bits) % 8) {
				pr_debug("task_struct.stack at bit %llu is not a byte",
					 (unsigned long long)(base + bits));
				return -EINVAL;
			}
			q->have_stack = true;
			q->stack_bits = base + bits;
			return stream__skip(s,
					    (uint64_t)(vlen - i - 1) * sizeof(struct btf_member));
		}
		if (m[0] == 0 && q->n_next < MAX_ANON)
			q->next[q->n_next++] = (struct container){m[1], base + bits};
	}
	return 0;
}

/* Bytes after a struct btf_type of this kind; -EINVAL for a kind this code does not know. */
static int trailing_size(uint32_t kind, uint32_t vlen, uint64_t *size)
{
	switch (kind) {
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		*size = 0;
		return 0;
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		*size = 4;
		return 0;
	case BTF_KIND_ARRAY:
		*size = sizeof(struct btf_array);
		return 0;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		*size = (uint64_t)vlen * sizeof(struct btf_member);
		return 0;
	case BTF_KIND_ENUM:
		*size = (uint64_t)vlen * sizeof(struct btf_enum);
		return 0;
	case BTF_KIND_FUNC_PROTO:
		*size = (uint64_t)vlen * sizeof(struct btf_param);
		return 0;
	case BTF_KIND_DATASEC:
		*size = (uint64_t)vlen * sizeof(struct btf_var_secinfo);
		return 0;
	case BTF_KIND_ENUM64:
		*size = (uint64_t)vlen * sizeof(struct btf_enum64);
		return 0;
	default:
		return -EINVAL;
	}
}

/* Whether this pass has all it can find, and the rest of the types can go unread. */
static bool pass_done(const struct search *q)
{
	uint32_t all = 0;
	int i;

	for (i = 0; i < NR_MEMBERS; i++)
		all |= 1u << members[i].strct;
	if (q->level0)
		return q->have_regs && q->have_task && (q->structs_seen & all) == all;
	return q->have_stack;
}

/*
 * Whether only the optional facts are left to find in this pass: types it
 * cannot read past then end the search for those, not the read.
 */
static bool optional_left(const struct search *q)
{
	return q->level0 && q->have_task && q->have_regs && q->have_stack;
}

/* Pass 2 and later, over the type section. */
static int walk_types(struct btf_stream *s, struct search *q)
{
	uint32_t id;
	int err;

	for (id = 1; s->pos < s->end && !pass_done(q); id++) {
		uint32_t t[3], kind;
		uint64_t size;
		/* A record cut or unknown after the needed facts ends the pass. */
		bool optional = optional_left(q);

		err = stream__u32x3(s, t);
		if (err)
			return optional ? 0 : err;
		kind = BTF_INFO_KIND(t[1]);
		if (kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION) {
			err = visit_struct(s, q, id, t);
			if (err)
				return optional ? 0 : err;
			continue;
		}
		if (trailing_size(kind, BTF_INFO_VLEN(t[1]), &size)) {
			pr_debug("type %u: unknown kind %u", id, kind);
			return optional ? 0 : -EINVAL;
		}
		err = stream__skip(s, size);
		if (err)
			return optional ? 0 : err;
	}
	return 0;
}

/* The optional facts: all six members, each below 64 KiB, or none. */
static void file_offs(const struct search *q, struct kernel_file_offs *out)
{
	uint16_t off[NR_MEMBERS];
	int i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < NR_MEMBERS; i++) {
		if (!(q->members_found & (1u << i)) || q->member_bits[i] / 8 > UINT16_MAX) {
			pr_debug("no offsets of a mapping's file identity");
			return;
		}
		off[i] = (uint16_t)(q->member_bits[i] / 8);
	}
	*out = (struct kernel_file_offs){true,		 off[M_VM_PGOFF], off[M_VM_FILE],
					 off[M_F_INODE], off[M_I_INO],	  off[M_I_SB],
					 off[M_S_DEV]};
	pr_debug("vm_pgoff at %u, vm_file %u, f_inode %u, i_ino %u, i_sb %u, s_dev %u",
		 out->vma_pgoff, out->vma_file, out->file_inode, out->inode_ino, out->inode_sb,
		 out->sb_dev);
}

static int read_facts(struct btf_stream *s, struct kernel_btf_facts *out)
{
	struct search q = {0};
	struct btf_header h;
	int err, depth;

	err = stream__seek(s, 0, sizeof(h));
	if (!err)
		err = stream__fill(s, sizeof(h));
	if (err)
		return err;
	memcpy(&h, s->cur, sizeof(h));
	/*
	 * BTF is in the byte order of the kernel that wrote it, the order of
	 * the machine cprof runs on; a swapped magic is refused, not swapped.
	 * Flags are all reserved: one set may change the format.
	 */
	if (h.magic != BTF_MAGIC || h.version != BTF_VERSION || h.flags || h.hdr_len < sizeof(h)) {
		pr_debug(
			"not BTF this code reads: magic 0x%x%s, version %u, flags 0x%x, hdr_len %u",
			h.magic, h.magic == bswap_16(BTF_MAGIC) ? " (other byte order)" : "",
			h.version, h.flags, h.hdr_len);
		return -EINVAL;
	}
	err = stream__seek(s, (uint64_t)h.hdr_len + h.str_off, h.str_len);
	if (!err)
		err = find_names(s, &q);
	if (err)
		return err;
	if (!q.offs[NAME_TASK_STRUCT].n || !q.offs[NAME_PT_REGS].n || !q.offs[NAME_STACK].n) {
		pr_debug("no task_struct, pt_regs or stack among the names");
		return -ENOENT;
	}
	q.level0 = true;
	for (depth = 0; depth <= MAX_DEPTH; depth++) {
		err = stream__seek(s, (uint64_t)h.hdr_len + h.type_off, h.type_len);
		if (!err)
			err = walk_types(s, &q);
		if (err)
			return err;
		if (q.have_stack || !q.n_next || !q.have_task || !q.have_regs)
			break;
		memcpy(q.in, q.next, q.n_next * sizeof(q.next[0]));
		q.n_in = q.n_next;
		q.n_next = 0;
		q.level0 = false;
	}
	if (!q.have_task || !q.have_stack || !q.have_regs) {
		pr_debug("no struct task_struct with a member stack, or no struct pt_regs");
		return -ENOENT;
	}
	if (q.stack_bits / 8 > UINT32_MAX)
		return -EINVAL;
	*out = (struct kernel_btf_facts){.task_stack_off = (uint32_t)(q.stack_bits / 8),
					 .pt_regs_size = q.pt_regs_size};
	file_offs(&q, &out->files);
	pr_debug("task_struct.stack at %u, sizeof(pt_regs) %u", out->task_stack_off,
		 out->pt_regs_size);
	return 0;
}

int kernel_btf__parse(const void *buf, size_t len, struct kernel_btf_facts *out)
{
	struct btf_stream s = {.fd = -1, .mem = buf, .size = len};

	return read_facts(&s, out);
}

int kernel_btf__read_fd_buffered(int fd, size_t buf_size, struct kernel_btf_facts *out)
{
	struct btf_stream s = {.fd = fd, .buf_size = buf_size};
	struct stat st;
	int err;

	if (buf_size < sizeof(struct btf_header))
		return -EINVAL;
	/* The size bounds the sections as a buffer's length does; sysfs gives it. */
	if (fstat(fd, &st))
		return -errno;
	s.size = (uint64_t)st.st_size;
	s.buf = malloc(buf_size);
	if (!s.buf)
		return -ENOMEM;
	err = read_facts(&s, out);
	free(s.buf);
	return err;
}

int kernel_btf__read_fd(int fd, struct kernel_btf_facts *out)
{
	return kernel_btf__read_fd_buffered(fd, KERNEL_BTF_BUF_SIZE, out);
}

int kernel_btf__read_vmlinux(struct kernel_btf_facts *out)
{
	int fd, err;

	fd = open(VMLINUX_BTF, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_debug("%s: %s", VMLINUX_BTF, strerror(-err));
		return err;
	}
	err = kernel_btf__read_fd(fd, out);
	close(fd);
	return err;
}
