// SPDX-License-Identifier: MIT
/* Finds .eh_frame and .debug_frame in an ELF file; see elf_cfi.h. */
#include <errno.h>
#include <gelf.h>
#include <string.h>

#define LOG_MODULE "cfi"
#include "lib/load_budget.h"
#include "lib/log.h"
#include "unwind/elf_cfi.h"
#include "unwind/eh_frame_hdr.h"

/* Over the cap, from the headers alone: a compressed one is not inflated to see. */
static bool over_cap(Elf_Scn *scn, const GElf_Shdr *sh)
{
	GElf_Chdr ch;

	if (sh->sh_flags & SHF_COMPRESSED)
		return !gelf_getchdr(scn, &ch) || ch.ch_size > LOAD_MAX_CFI_BYTES;
	return sh->sh_size > LOAD_MAX_CFI_BYTES;
}

static int section_data(Elf_Scn *scn, const GElf_Shdr *sh, struct cfi_section *out)
{
	Elf_Data *d;

	if (over_cap(scn, sh))
		return -EFBIG;

	/* Debug files often compress .debug_frame; .eh_frame never is (the loader maps it). */
	if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return -EINVAL;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return -ENOENT;
	out->data = d->d_buf;
	out->size = d->d_size;
	return 0;
}

static void add_code(Elf_Scn *scn, const GElf_Shdr *sh, struct elf_cfi *c)
{
	Elf_Data *d = elf_getdata(scn, NULL);

	if (d && d->d_buf && d->d_size == sh->sh_size)
		c->code[c->ncode++] = (struct elf_cfi_code){sh->sh_addr, d->d_buf, d->d_size};
}

/*
 * Filler bytes compilers and linkers put between functions: x86 NOPs of
 * every length (0x90, 66 .. 0f 1f /0 with their ModRM and zero
 * displacements, cs prefixes) and int3. No run of these bytes transfers
 * control (no ret, jmp, call, syscall or ud2 can be spelled with them), so
 * it cannot be a function of its own.
 */
static bool x86_padding(const uint8_t *p, size_t n)
{
	static const bool filler[256] = {
		[0x00] = true, [0x90] = true, [0xcc] = true, [0x66] = true,
		[0x2e] = true, [0x0f] = true, [0x1f] = true, [0x40] = true,
		[0x44] = true, [0x80] = true, [0x84] = true,
	};
	size_t i;

	for (i = 0; i < n; i++)
		if (!filler[p[i]])
			return false;
	return true;
}

/* AArch64: NOP words, or zero words (udf #0, a trap). */
static bool a64_padding(const uint8_t *p, size_t n)
{
	uint32_t w;
	size_t i;

	if (n % 4)
		return false;
	for (i = 0; i < n; i += 4) {
		memcpy(&w, p + i, 4);
		if (w && w != 0xd503201f)
			return false;
	}
	return true;
}

static bool is_padding(const void *arg, uint64_t begin, uint64_t end)
{
	const struct elf_cfi *c = arg;
	const struct elf_cfi_code *code;
	size_t i;

	for (i = 0; i < c->ncode; i++) {
		code = &c->code[i];
		if (begin < code->addr || end > code->addr + code->size || begin >= end)
			continue;
		if (c->arch == CFI_ARCH_AARCH64)
			return a64_padding(code->data + (begin - code->addr), end - begin);
		return x86_padding(code->data + (begin - code->addr), end - begin);
	}
	return false;
}

static void find_sections(Elf *elf, struct elf_cfi *c)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *name;
	int err;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if ((sh.sh_flags & SHF_EXECINSTR) && c->ncode < ELF_CFI_MAX_CODE)
			add_code(scn, &sh, c);
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!c->has_eh_frame && !strcmp(name, ".eh_frame")) {
			err = section_data(scn, &sh, &c->eh_frame);
			c->has_eh_frame = !err;
			c->eh_frame.vaddr = sh.sh_addr;
		} else if (!c->has_debug_frame && !strcmp(name, ".debug_frame")) {
			err = section_data(scn, &sh, &c->debug_frame);
			c->has_debug_frame = !err;
		} else {
			continue;
		}
		c->over_cap |= err == -EFBIG;
	}
}

/* More sections than any real file has (libLLVM: under 50), not looked through. */
#define ELF_CFI_MAX_SECTIONS 65536

static uint64_t claimed(Elf_Scn *scn, const GElf_Shdr *sh)
{
	GElf_Chdr ch;

	if (!(sh->sh_flags & SHF_COMPRESSED))
		return sh->sh_size;
	return gelf_getchdr(scn, &ch) ? ch.ch_size : UINT64_MAX;
}

uint64_t elf_cfi__claimed_bytes(Elf *elf)
{
	size_t shstrndx, n;
	Elf_Scn *scn = NULL;
	uint64_t sum = 0, add;
	const char *name;
	GElf_Shdr sh;

	if (elf_getshdrnum(elf, &n) || !n || n > ELF_CFI_MAX_SECTIONS ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return UINT64_MAX;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, ".eh_frame") && strcmp(name, ".debug_frame")))
			continue;
		add = claimed(scn, &sh);
		sum = sum + add < sum ? UINT64_MAX : sum + add;
	}
	return sum;
}

/* Without section headers, the loader's view: PT_GNU_EH_FRAME and its eh_frame_ptr. */
static void find_by_segment(Elf *elf, struct elf_cfi *c)
{
	struct eh_frame_hdr *h;
	size_t size;
	char *image = elf_rawfile(elf, &size);

	if (!image || eh_frame_hdr__from_elf(image, size, &h))
		return;
	if (eh_frame_hdr__eh_frame(h, &c->eh_frame.data, &c->eh_frame.size, &c->eh_frame.vaddr))
		c->has_eh_frame = true;
	if (c->has_eh_frame && c->eh_frame.size > LOAD_MAX_CFI_BYTES) {
		c->has_eh_frame = false;
		c->over_cap = true;
	}
	eh_frame_hdr__free(h);
}

int elf_cfi__read(Elf *elf, struct elf_cfi *c)
{
	GElf_Ehdr eh;

	memset(c, 0, sizeof(*c));
	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	if (eh.e_machine == EM_X86_64)
		c->arch = CFI_ARCH_X86_64;
	else if (eh.e_machine == EM_AARCH64)
		c->arch = CFI_ARCH_AARCH64;
	else
		return -ENOEXEC;
	c->eh_frame.format = CFI_EH_FRAME;
	c->debug_frame.format = CFI_DEBUG_FRAME;
	c->eh_frame.bases.addr_size = 8;
	c->debug_frame.bases.addr_size = 8;
	find_sections(elf, c);
	if (!c->has_eh_frame)
		find_by_segment(elf, c);
	return 0;
}

void elf_cfi__sources(const struct elf_cfi *c, const struct elf_cfi *debug,
		      struct unwind_sources *out)
{
	memset(out, 0, sizeof(*out));
	out->arch = c->arch;
	if (c->has_eh_frame)
		out->sections[out->nsections++] = &c->eh_frame;
	if (c->has_debug_frame)
		out->sections[out->nsections++] = &c->debug_frame;
	else if (debug && debug->has_debug_frame && debug->arch == c->arch)
		out->sections[out->nsections++] = &debug->debug_frame;
	if (c->ncode) {
		out->is_padding = is_padding;
		out->padding_arg = c;
	}
}
