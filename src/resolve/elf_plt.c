// SPDX-License-Identifier: MIT
/* Names of PLT stubs; see elf_plt.h. Every read is bounded by its section. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/u64map.h"
#include "resolve/elf_plt.h"

#define X86_STUB	16
#define A64_PLT_HEADER	32
#define A64_STUB	16
#define R_A64_JUMP_SLOT 1026

/* What the stubs are looked up in: GOT slot -> relocation's symbol, and the names. */
struct plt_ctx {
	Elf *elf;
	struct elf_plt *out;
	size_t cap;
	struct u64map *slots; /* GOT address -> dynamic symbol index */
	Elf_Data *dynsym;
	Elf_Data *dynstr;
	GElf_Shdr rela_plt;
	Elf_Data *rela_plt_data;
};

static const char *section_name(Elf *elf, const GElf_Shdr *sh)
{
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	return elf_strptr(elf, shstrndx, sh->sh_name);
}

/* The symbol's name plus "@plt" appended to out->names; its offset in *at. */
static int add_name(struct plt_ctx *c, size_t sym, uint32_t *at)
{
	struct elf_plt *p = c->out;
	const char *name;
	GElf_Sym s;
	size_t len;
	char *n;

	if (!c->dynsym || !c->dynstr || !gelf_getsym(c->dynsym, (int)sym, &s) ||
	    s.st_name >= c->dynstr->d_size)
		return -ENOENT;
	name = (const char *)c->dynstr->d_buf + s.st_name;
	len = strnlen(name, c->dynstr->d_size - s.st_name);
	if (!len || len == c->dynstr->d_size - s.st_name)
		return -ENOENT;
	n = realloc(p->names, p->names_size + len + sizeof("@plt"));
	if (!n)
		return -ENOMEM;
	p->names = n;
	memcpy(n + p->names_size, name, len);
	memcpy(n + p->names_size + len, "@plt", sizeof("@plt"));
	*at = (uint32_t)p->names_size;
	p->names_size += len + sizeof("@plt");
	return 0;
}

static int add_stub(struct plt_ctx *c, uint64_t start, uint32_t size, size_t sym)
{
	struct elf_plt *p = c->out;
	struct elf_plt_stub *v;
	uint32_t name;
	int err = add_name(c, sym, &name);

	if (err)
		return err == -ENOMEM ? err : 0;
	if (p->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		v = realloc(p->stubs, c->cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->stubs = v;
	}
	p->stubs[p->n++] = (struct elf_plt_stub){start, size, name};
	return 0;
}

/* Remembers which symbol each GOT slot of a RELA section's function relocations is for. */
static int index_slots(struct plt_ctx *c, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Rela r;
	size_t i, n;

	if (!d || !sh->sh_entsize)
		return 0;
	n = d->d_size / sh->sh_entsize;
	for (i = 0; i < n && gelf_getrela(d, (int)i, &r); i++) {
		unsigned int type = GELF_R_TYPE(r.r_info);

		if (type == R_X86_64_JUMP_SLOT && GELF_R_SYM(r.r_info) &&
		    u64map__set(c->slots, r.r_offset, GELF_R_SYM(r.r_info)))
			return -ENOMEM;
	}
	return 0;
}

/* The GOT slot an x86_64 stub jumps through, if its code is a stub's. */
static bool x86_slot(const uint8_t *code, size_t size, uint64_t at, uint64_t *slot)
{
	static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t i = 0;
	int32_t disp;

	if (size >= 4 && !memcmp(code, endbr64, 4))
		i = 4;
	if (i < size && code[i] == 0xf2) /* bnd */
		i++;
	if (i + 6 > size || code[i] != 0xff || code[i + 1] != 0x25)
		return false;
	memcpy(&disp, code + i + 2, 4);
	*slot = at + i + 6 + (int64_t)disp;
	return true;
}

static int x86_section(struct plt_ctx *c, const GElf_Shdr *sh, Elf_Data *d, uint32_t stub)
{
	const uint8_t *code = d->d_buf;
	uint64_t off, slot, sym;
	int err;

	for (off = 0; off + stub <= d->d_size; off += stub) {
		if (!x86_slot(code + off, stub, sh->sh_addr + off, &slot) ||
		    !u64map__get(c->slots, slot, &sym))
			continue;
		err = add_stub(c, sh->sh_addr + off, stub, sym);
		if (err)
			return err;
	}
	return 0;
}

static int a64_plt(struct plt_ctx *c, const GElf_Shdr *plt)
{
	size_t i, n;
	GElf_Rela r;
	int err;

	if (!c->rela_plt_data || !c->rela_plt.sh_entsize)
		return 0;
	n = c->rela_plt_data->d_size / c->rela_plt.sh_entsize;
	for (i = 0; i < n && gelf_getrela(c->rela_plt_data, (int)i, &r); i++) {
		if (A64_PLT_HEADER + (i + 1) * A64_STUB > plt->sh_size)
			break;
		if (GELF_R_TYPE(r.r_info) != R_A64_JUMP_SLOT || !GELF_R_SYM(r.r_info))
			continue;
		err = add_stub(c, plt->sh_addr + A64_PLT_HEADER + i * A64_STUB, A64_STUB,
			       GELF_R_SYM(r.r_info));
		if (err)
			return err;
	}
	return 0;
}

/* First pass: the dynamic symbols and the relocations. */
static int read_relocations(struct plt_ctx *c)
{
	Elf_Scn *scn = NULL, *link;
	const char *name;
	GElf_Shdr sh, lsh;
	int err;

	while ((scn = elf_nextscn(c->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
			continue;
		name = section_name(c->elf, &sh);
		link = elf_getscn(c->elf, sh.sh_link);
		if (!c->dynsym && link && gelf_getshdr(link, &lsh) && lsh.sh_type == SHT_DYNSYM) {
			c->dynsym = elf_getdata(link, NULL);
			link = elf_getscn(c->elf, lsh.sh_link);
			c->dynstr = link ? elf_getdata(link, NULL) : NULL;
		}
		/*
		 * Only .rela.plt: .rela.dyn would name .plt.got's few stubs, but
		 * reading its (mostly RELATIVE) entries costs large libraries
		 * megabytes of pages.
		 */
		if (!name || strcmp(name, ".rela.plt"))
			continue;
		c->rela_plt = sh;
		c->rela_plt_data = elf_getdata(scn, NULL);
		err = index_slots(c, scn, &sh);
		if (err)
			return err;
	}
	return 0;
}

static int read_stubs(struct plt_ctx *c, unsigned int machine)
{
	Elf_Scn *scn = NULL;
	const char *name;
	GElf_Shdr sh;
	Elf_Data *d;
	int err = 0;

	while (!err && (scn = elf_nextscn(c->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = section_name(c->elf, &sh);
		d = name && !strncmp(name, ".plt", 4) ? elf_getdata(scn, NULL) : NULL;
		if (!d || !d->d_buf)
			continue;
		if (machine == EM_AARCH64 && !strcmp(name, ".plt"))
			err = a64_plt(c, &sh);
		else if (machine == EM_X86_64 &&
			 (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec")))
			err = x86_section(c, &sh, d, X86_STUB);
	}
	return err;
}

int elf_plt__read(Elf *elf, struct elf_plt *out)
{
	struct plt_ctx c = {.elf = elf, .out = out};
	GElf_Ehdr eh;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!gelf_getehdr(elf, &eh) || (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64))
		return 0;
	c.slots = u64map__new();
	if (!c.slots)
		return -ENOMEM;
	err = read_relocations(&c);
	if (!err)
		err = read_stubs(&c, eh.e_machine);
	u64map__free(c.slots);
	if (err)
		elf_plt__free(out);
	return err;
}

void elf_plt__free(struct elf_plt *p)
{
	if (!p)
		return;
	free(p->stubs);
	free(p->names);
	memset(p, 0, sizeof(*p));
}
