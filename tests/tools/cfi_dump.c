// SPDX-License-Identifier: MIT
/*
 * cfi_dump FILE [eh_frame|debug_frame]: prints the rows cprof's CFI reader
 * (src/unwind/cfi_entries.c, cfi_program.c) finds in FILE, one FDE at a
 * time, in the terms of `readelf --debug-dump=frames-interp`, so that
 * tests/e2e/cfi_readelf.sh can compare the two row by row:
 *
 *   FDE 0000000000001040..0000000000001066
 *   0000000000001040 rsp+8 ra=c-8
 *   0000000000001044 rsp+16 rbx=c-16 ra=c-8
 *
 * A register with no rule, or an undefined one, is left out (readelf shows
 * both as "u"); an unusable row prints "error OPCODE".
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/cfi_entries.h"
#include "unwind/cfi_program.h"

struct dump {
	enum cfi_arch arch;
	uint64_t ra_column;
	unsigned long fdes;
	unsigned long rows;
	unsigned long bad;
};

static const char *reg_name(const struct dump *d, unsigned int reg, char *buf, size_t size)
{
	static const char *const x86[] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
					  "r8",	 "r9",	"r10", "r11", "r12", "r13", "r14", "r15"};

	if (reg == d->ra_column)
		return "ra";
	if (d->arch == CFI_ARCH_X86_64 && reg < 16)
		return x86[reg];
	if (d->arch == CFI_ARCH_AARCH64 && reg < 31)
		snprintf(buf, size, "x%u", reg);
	else if (d->arch == CFI_ARCH_AARCH64 && reg == 31)
		snprintf(buf, size, "sp");
	else if (d->arch == CFI_ARCH_AARCH64 && reg >= 64 && reg < 96)
		snprintf(buf, size, "v%u", reg - 64);
	else
		snprintf(buf, size, "r%u", reg);
	return buf;
}

static void print_rule(const struct dump *d, unsigned int reg, const struct cfi_reg *r)
{
	char b1[16], b2[16];
	const char *name;

	/* Most of the 128 registers have no rule: name only those that have one. */
	if (r->rule == CFI_REG_UNSET || r->rule == CFI_REG_UNDEFINED)
		return;
	name = reg_name(d, reg, b1, sizeof(b1));
	switch (r->rule) {
	case CFI_REG_SAME:
		printf(" %s=s", name);
		break;
	case CFI_REG_OFFSET:
		printf(" %s=c%+" PRId64, name, r->offset);
		break;
	case CFI_REG_VAL_OFFSET:
		printf(" %s=v%+" PRId64, name, r->offset);
		break;
	case CFI_REG_REGISTER:
		printf(" %s=%s", name, reg_name(d, r->reg, b2, sizeof(b2)));
		break;
	case CFI_REG_EXPR:
		printf(" %s=exp", name);
		break;
	case CFI_REG_VAL_EXPR:
		printf(" %s=vexp", name);
		break;
	}
}

static int print_row(const struct cfi_row *row, void *arg)
{
	struct dump *d = arg;
	char buf[16];
	unsigned int i;

	d->rows++;
	printf("%016" PRIx64, row->begin);
	if (row->error) {
		d->bad++;
		printf(" error %s 0x%02x\n", strerror(-row->error), row->bad_opcode);
		return 0;
	}
	if (row->cfa.rule == CFI_CFA_EXPR)
		printf(" exp");
	else if (row->cfa.rule == CFI_CFA_REG_OFFSET)
		printf(" %s%+" PRId64, reg_name(d, row->cfa.reg, buf, sizeof(buf)),
		       row->cfa.offset);
	else
		printf(" none");
	for (i = 0; i < CFI_MAX_REGS; i++)
		if (i != d->ra_column)
			print_rule(d, i, &row->regs[i]);
	if (d->ra_column < CFI_MAX_REGS)
		print_rule(d, d->ra_column, &row->regs[d->ra_column]);
	if (row->ra_signed)
		printf(" ra_signed");
	printf("\n");
	return 0;
}

static int find_section(Elf *elf, const char *name, Elf_Data **data, uint64_t *addr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name) || sh.sh_type == SHT_NOBITS)
			continue;
		*data = elf_getdata(scn, NULL);
		*addr = sh.sh_addr;
		return *data ? 0 : -EINVAL;
	}
	return -ENOENT;
}

static int dump_section(struct dump *d, const struct cfi_section *sec)
{
	struct cfi_program *prog;
	struct cfi_fde fde;
	uint64_t off = 0;
	int err = cfi_program__new(d->arch, &prog);

	while (!err) {
		err = cfi_section__next(sec, &off, &fde);
		if (err == -ENOENT) {
			err = 0;
			break;
		}
		if (err) {
			printf("bad entry: %s\n", strerror(-err));
			d->bad++;
			err = 0;
			continue;
		}
		d->fdes++;
		d->ra_column = fde.ra_column;
		printf("FDE %016" PRIx64 "..%016" PRIx64 "\n", fde.pc_begin,
		       fde.pc_begin + fde.pc_range);
		err = cfi_program__run(prog, &fde, print_row, d);
	}
	cfi_program__free(prog);
	return err;
}

int main(int argc, char **argv)
{
	const char *which = argc > 2 ? argv[2] : "eh_frame";
	struct cfi_section sec = {0};
	struct dump d = {0};
	Elf_Data *data;
	GElf_Ehdr eh;
	uint64_t addr;
	Elf *elf;
	int fd, err;

	if (argc < 2) {
		fprintf(stderr, "usage: cfi_dump FILE [eh_frame|debug_frame]\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	fd = open(argv[1], O_RDONLY);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh)) {
		fprintf(stderr, "cfi_dump: %s: not an ELF file\n", argv[1]);
		return 1;
	}
	d.arch = eh.e_machine == EM_AARCH64 ? CFI_ARCH_AARCH64 : CFI_ARCH_X86_64;
	sec.format = strcmp(which, "debug_frame") ? CFI_EH_FRAME : CFI_DEBUG_FRAME;
	err = find_section(elf, sec.format == CFI_EH_FRAME ? ".eh_frame" : ".debug_frame", &data,
			   &addr);
	if (err) {
		fprintf(stderr, "cfi_dump: %s: no .%s\n", argv[1], which);
		return 1;
	}
	sec.data = data->d_buf;
	sec.size = data->d_size;
	sec.vaddr = sec.format == CFI_EH_FRAME ? addr : 0;
	sec.bases.addr_size = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	err = dump_section(&d, &sec);
	fprintf(stderr, "cfi_dump: %lu FDEs, %lu rows, %lu unusable\n", d.fdes, d.rows, d.bad);
	elf_end(elf);
	close(fd);
	return err ? 1 : 0;
}
