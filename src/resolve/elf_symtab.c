// SPDX-License-Identifier: MIT
/*
 * ELF function symbols, PT_LOAD segments and build ID, via libelf.
 *
 * The files come from whatever processes run on the machine, so nothing in
 * them is trusted: every offset and size is checked against the real file
 * size before libelf is asked for data, counts are derived from those sizes,
 * and every loop advances. A file we cannot make sense of is refused at open
 * or yields an empty table; it never crashes the profiler.
 *
 * The pieces of this object (elf_symtab_internal.h): elf_symtab_ranges.c turns
 * the symbol tables into ranges, elf_symtab_kept.c keeps them in the store
 * between runs, elf_symtab_starts.c finds functions' starts without symbols.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdatomic.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_MODULE "elf"
#include "lib/clock.h"
#include "lib/elf_build_id.h"
#include "lib/load_budget.h"
#include "lib/log.h"
#include "lib/range.h"
#include "lib/sigbus.h"
#include "lib/dwarf_line.h"
#include "resolve/elf_dwarf.h"
#include "resolve/elf_symtab.h"
#include "store/table_store.h"
#include "resolve/elf_symtab_internal.h"

/*
 * -ETIME once the run's time for loading is over (load_budget.h), or the
 * loader that holds e was stopped (symtab_loader.h).
 */
int over_time(const struct elf_symtab *e)
{
	if (e->stop && atomic_load(e->stop))
		return -ETIME;
	return load_budget__over(e->budget) ? -ETIME : 0;
}

bool range_in_file(const struct elf_symtab *e, uint64_t off, uint64_t size)
{
	return off <= e->file_size && size <= e->file_size - off;
}

static void scan_notes(struct elf_symtab *e, Elf_Data *data)
{
	size_t n = elf_build_id__in_notes(data, e->build_id_bytes);

	if (n)
		elf_build_id__hex(e->build_id_bytes, n, e->build_id, sizeof(e->build_id));
	e->build_id_len = n;
}

static int read_segments_and_notes(struct elf_symtab *e)
{
	size_t phnum, i, n = 0;
	Elf_Scn *scn = NULL;
	GElf_Phdr ph;

	if (elf_getphdrnum(e->elf, &phnum)) {
		pr_debug("%s: program headers: %s", e->path, elf_errmsg(-1));
		return -ENOEXEC;
	}
	/* An Elf32_Phdr is 32 bytes: more headers than that could not fit in the file. */
	if (phnum > e->file_size / 32) {
		pr_debug("%s: %zu program headers in a %llu-byte file", e->path, phnum,
			 (unsigned long long)e->file_size);
		return -ENOEXEC;
	}
	e->segs = calloc(phnum ? phnum : 1, sizeof(*e->segs));
	if (!e->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(e->elf, i, &ph)) {
			pr_debug("%s: program header %zu: %s", e->path, i, elf_errmsg(-1));
			return -ENOEXEC;
		}
		if (ph.p_type == PT_LOAD) {
			e->segs[n++] = (struct elf_segment){
				.offset = ph.p_offset,
				.vaddr = ph.p_vaddr,
				.filesz = ph.p_filesz,
				.memsz = ph.p_memsz,
				.flags = ph.p_flags,
			};
		} else if (ph.p_type == PT_NOTE && !e->build_id[0] && ph.p_filesz &&
			   range_in_file(e, ph.p_offset, ph.p_filesz)) {
			Elf_Data *d =
				elf_getdata_rawchunk(e->elf, ph.p_offset, ph.p_filesz,
						     ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);

			if (d)
				scan_notes(e, d);
		}
	}
	e->nsegs = n;

	/* Files without program headers (some debug files) may still carry the note. */
	while (!e->build_id[0] && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !sh.sh_size ||
		    (sh.sh_flags & SHF_COMPRESSED) || !range_in_file(e, sh.sh_offset, sh.sh_size))
			continue;
		d = elf_getdata(scn, NULL);
		if (d)
			scan_notes(e, d);
	}
	return 0;
}

/*
 * .gnu_debuglink: the debug file's name, NUL-terminated and padded to 4
 * bytes, then the CRC32 of that file in the ELF file's byte order.
 */
static void read_debuglink(struct elf_symtab *e, Elf_Scn *scn, const GElf_Shdr *sh)
{
	const unsigned char *d, *crc;
	Elf_Data *data;
	size_t len, crc_off;

	if (sh->sh_type != SHT_PROGBITS || (sh->sh_flags & SHF_COMPRESSED) ||
	    !range_in_file(e, sh->sh_offset, sh->sh_size))
		return;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf)
		return;
	d = data->d_buf;
	len = strnlen((const char *)d, data->d_size);
	crc_off = (len + 4) & ~(size_t)3;
	/* A name with a '/' would leave the directories the debug file is looked for in. */
	if (!len || len > MAX_DEBUGLINK_LEN || crc_off + 4 > data->d_size || memchr(d, '/', len) ||
	    (len <= 2 && d[0] == '.' && d[len - 1] == '.'))
		return;
	crc = d + crc_off;
	if (elf_getident(e->elf, NULL)[EI_DATA] == ELFDATA2MSB)
		e->debuglink_crc = (uint32_t)crc[0] << 24 | crc[1] << 16 | crc[2] << 8 | crc[3];
	else
		e->debuglink_crc = (uint32_t)crc[3] << 24 | crc[2] << 16 | crc[1] << 8 | crc[0];
	memcpy(e->debuglink, d, len);
	e->debuglink[len] = '\0';
}

/* Whether there is a symbol table to read, and where a separate debug file is. */
static void scan_sections(struct elf_symtab *e)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		shstrndx = 0;
	while ((scn = elf_nextscn(e->elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		/* A table stripped into a debug file stays as SHT_NOBITS: not one to read. */
		if (sh.sh_type == SHT_SYMTAB && sh.sh_size)
			e->has_symtab = true;
		if (!e->debuglink[0] && shstrndx &&
		    (name = elf_strptr(e->elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".gnu_debuglink"))
			read_debuglink(e, scn, &sh);
	}
}

/*
 * libelf quietly indexes only the headers that fit in a truncated file; we
 * refuse such a file instead, as it is not the one that was mapped.
 */
static int check_header_tables(struct elf_symtab *e, const GElf_Ehdr *eh)
{
	size_t phsize = gelf_fsize(e->elf, ELF_T_PHDR, 1, EV_CURRENT);
	size_t shsize = gelf_fsize(e->elf, ELF_T_SHDR, 1, EV_CURRENT);
	uint64_t shnum = eh->e_shnum;
	size_t n;

	if (eh->e_phnum && eh->e_phnum != PN_XNUM &&
	    (eh->e_phentsize != phsize ||
	     !range_in_file(e, eh->e_phoff, (uint64_t)eh->e_phnum * phsize))) {
		pr_debug("%s: program headers lie outside the file", e->path);
		return -ENOEXEC;
	}
	/* With extended numbering the count lives in section 0. */
	if (!shnum && eh->e_shoff && !elf_getshdrnum(e->elf, &n))
		shnum = n;
	if (shnum && (eh->e_shentsize != shsize || shnum > e->file_size / shsize ||
		      !range_in_file(e, eh->e_shoff, shnum * shsize))) {
		pr_debug("%s: section headers lie outside the file", e->path);
		return -ENOEXEC;
	}
	return 0;
}

static struct elf_symtab *new_symtab(const char *display_path)
{
	struct elf_symtab *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->fd = -1;
	e->dwarf_err = -ENOENT;
	e->fns_fd = -1;
	e->path = strdup(display_path);
	if (!e->path) {
		free(e);
		return NULL;
	}
	return e;
}

/* The checks and reads common to files and memory images, once e->elf is set. */
static int read_headers(struct elf_symtab *e)
{
	GElf_Ehdr eh;
	int err;

	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &eh)) {
		pr_debug("%s: not a usable ELF file: %s", e->path, elf_errmsg(-1));
		return -ENOEXEC;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		pr_debug("%s: ELF type %u is neither an executable nor a shared object", e->path,
			 eh.e_type);
		return -ENOEXEC;
	}
	err = check_header_tables(e, &eh);
	if (err)
		return err;
	err = read_segments_and_notes(e);
	if (err)
		return err;
	scan_sections(e);
	return 0;
}

static int begin_mapped(void *arg)
{
	struct elf_symtab *e = arg;

	e->elf = e->image ? elf_memory(e->image, e->file_size)
			  : elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	return read_headers(e);
}

/*
 * Hands the file (e->fd) or the in-memory copy (e->image) to libelf and
 * reads its headers, from a mapping its owner may truncate (sigbus.h).
 */
static int begin_elf(struct elf_symtab *e)
{
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		pr_debug("libelf: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	err = sigbus__call(begin_mapped, e);
	if (err == -EIO)
		pr_debug("%s: truncated while its headers were read", e->path);
	return err;
}

int elf_symtab__open_fd(int fd, const char *display_path, struct elf_symtab **out)
{
	struct elf_symtab *e = NULL;
	struct stat st;
	int err = 0;

	*out = NULL;
	if (!display_path)
		display_path = "(fd)";
	e = new_symtab(display_path);
	if (!e) {
		close(fd);
		return -ENOMEM;
	}
	e->fd = fd;
	if (fstat(fd, &st)) {
		err = -errno;
		pr_debug("%s: stat: %s", display_path, strerror(-err));
		goto cleanup;
	}
	/* A FIFO or device could block or never end. */
	if (!S_ISREG(st.st_mode)) {
		pr_debug("%s: not a regular file", display_path);
		err = -EINVAL;
		goto cleanup;
	}
	e->file_size = st.st_size;
	kept_source__of(&e->source, &st);
	err = begin_elf(e);
	if (err)
		goto cleanup;
	*out = e;
	e = NULL;
cleanup:
	elf_symtab__free(e);
	return err;
}

int elf_symtab__open_memory(const void *image, size_t size, const char *display_path,
			    struct elf_symtab **out)
{
	struct elf_symtab *e;
	int err;

	*out = NULL;
	if (!image || !size)
		return -EINVAL;
	e = new_symtab(display_path ? display_path : "(memory)");
	if (!e)
		return -ENOMEM;
	/* libelf may convert data in place: it gets a copy, which also outlives the caller's. */
	e->image = malloc(size);
	if (!e->image) {
		err = -ENOMEM;
		goto cleanup;
	}
	memcpy(e->image, image, size);
	e->file_size = size;
	err = begin_elf(e);
	if (err)
		goto cleanup;
	*out = e;
	e = NULL;
cleanup:
	elf_symtab__free(e);
	return err;
}

int elf_symtab__open(const char *path, struct elf_symtab **out)
{
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_debug("open %s: %s", path, strerror(-err));
		return err;
	}
	return elf_symtab__open_fd(fd, path, out);
}

/* Releases the file once everything needed from it has been copied out. */
static void close_file(struct elf_symtab *e)
{
	if (e->elf) {
		elf_end(e->elf);
		e->elf = NULL;
	}
	if (e->fd >= 0) {
		close(e->fd);
		e->fd = -1;
	}
	free(e->image);
	e->image = NULL;
	elf_symtab__free(e->debug);
	e->debug = NULL;
}

/* The symbols e held go back to the run's LOAD_MAX_HELD_SYMBOLS. */
static void release_held(struct elf_symtab *e)
{
	if (e->held && e->budget)
		atomic_fetch_sub(&e->budget->symbols_held, e->held);
	e->held = 0;
}

/* Lets its line table go, and what the budget counted of it. */
static void drop_dwarf(struct elf_symtab *e)
{
	if (e->dwarf && e->budget)
		atomic_fetch_sub(&e->budget->dwarf_held, dwarf_ctx__bytes(e->dwarf));
	dwarf_ctx__free(e->dwarf);
	e->dwarf = NULL;
	e->dwarf_err = -ENOENT;
}

void elf_symtab__free(struct elf_symtab *e)
{
	if (!e)
		return;
	release_held(e);
	close_file(e);
	if (e->fns_fd >= 0)
		close(e->fns_fd);
	free(e->segs);
	free(e->ranges);
	free(e->names);
	free(e->fns);
	free(e->path);
	free(e->debug_path);
	drop_dwarf(e);
	free(e);
}

const char *elf_symtab__build_id(const struct elf_symtab *e)
{
	return e && e->build_id[0] ? e->build_id : NULL;
}

void elf_symtab__keep_in(struct elf_symtab *e, struct table_store *store)
{
	if (e)
		e->store = store;
}

void elf_symtab__set_budget(struct elf_symtab *e, struct load_budget *budget)
{
	if (e)
		e->budget = budget;
}

bool elf_symtab__holds_file(const struct elf_symtab *e)
{
	return e && (e->fd >= 0 || e->fns_fd >= 0 || e->debug);
}

void elf_symtab__release_file(struct elf_symtab *e)
{
	if (!elf_symtab__holds_file(e))
		return;
	close_file(e);
	if (e->fns_fd >= 0)
		close(e->fns_fd);
	e->fns_fd = -1;
	e->released = true;
}

bool elf_symtab__released(const struct elf_symtab *e)
{
	return e && e->released;
}

/* elf_begin reads the header from the mapping. */
static int reopen_mapped(void *arg)
{
	struct elf_symtab *e = arg;

	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	return 0;
}

int elf_symtab__reopen_fd(struct elf_symtab *e, int fd)
{
	struct stat st;

	/* Another file at the same place (it was replaced since) is not this one. */
	if (!e || !e->released || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != e->file_size) {
		close(fd);
		return -ESTALE;
	}
	e->released = false;
	/* Loaded: only the function extents still need the file. */
	if (e->loaded) {
		e->fns_fd = fd;
		return 0;
	}
	e->fd = fd;
	if (sigbus__call(reopen_mapped, e))
		e->elf = NULL;
	return e->elf ? 1 : -ENOEXEC;
}

bool elf_symtab__has_symtab(const struct elf_symtab *e)
{
	return e && e->has_symtab;
}

const char *elf_symtab__debuglink(const struct elf_symtab *e, uint32_t *crc)
{
	if (!e || !e->debuglink[0])
		return NULL;
	if (crc)
		*crc = e->debuglink_crc;
	return e->debuglink;
}

/*
 * A debug file that comes after the symbols were loaded (from debuginfod):
 * they are loaded again, from it alone, as the file itself is closed by
 * then; its .symtab holds what .dynsym did too, less the PLT stubs.
 */
static void drop_symbols(struct elf_symtab *e)
{
	release_held(e);
	free(e->ranges);
	free(e->names);
	e->ranges = NULL;
	e->names = NULL;
	e->nranges = 0;
	e->nsyms = 0;
	e->loaded = false;
}

const char *elf_symtab__path(const struct elf_symtab *e)
{
	return e ? e->path : NULL;
}

int elf_symtab__set_debug_file(struct elf_symtab *e, struct elf_symtab *debug)
{
	if (!e || !debug || !debug->elf || (e->loaded && e->has_symtab)) {
		elf_symtab__free(debug);
		return -EINVAL;
	}
	/* A debug file with another build ID belongs to another build. */
	if (e->build_id[0] && strcmp(e->build_id, debug->build_id)) {
		pr_debug("%s: build ID %s, not %s of %s", debug->path,
			 debug->build_id[0] ? debug->build_id : "(none)", e->build_id, e->path);
		elf_symtab__free(debug);
		return -ESTALE;
	}
	free(e->debug_path);
	e->debug_path = strdup(debug->path);
	if (!e->debug_path) {
		elf_symtab__free(debug);
		return -ENOMEM;
	}
	elf_symtab__free(e->debug);
	e->debug = debug;
	if (e->loaded)
		drop_symbols(e);
	return 0;
}

const char *elf_symtab__debug_path(const struct elf_symtab *e)
{
	return e ? e->debug_path : NULL;
}

int elf_symtab__offset_to_vaddr(const struct elf_symtab *e, uint64_t file_offset, uint64_t *vaddr)
{
	size_t i;

	if (!e)
		return -EINVAL;
	for (i = 0; i < e->nsegs; i++) {
		const struct elf_segment *s = &e->segs[i];

		if (file_offset >= s->offset && file_offset - s->offset < s->filesz) {
			*vaddr = file_offset - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

void elf_symtab__count_failure(struct elf_symtab *e, int err)
{
	if (err == -ETIME) {
		if (e->budget)
			e->budget->symtabs_abandoned++;
		pr_debug("%s: symbols not loaded: the run is over", e->path);
	} else if (err == -EFBIG && e->budget) {
		e->budget->symtabs_refused++;
	} else if (err == -ENOSPC && e->budget) {
		e->budget->symtabs_over_held++;
		pr_debug("%s: symbols not loaded: %u held by other files", e->path,
			 LOAD_MAX_HELD_SYMBOLS);
	} else if (e->released) {
		/* Let go, and not the same file when opened again: the process had replaced it. */
		pr_debug("%s: symbols not loaded: the file could not be opened again", e->path);
	} else {
		pr_warn("%s: cannot load symbols: %s", e->path, strerror(-err));
	}
}

bool elf_symtab__loaded(const struct elf_symtab *e)
{
	return e && e->loaded;
}

/*
 * Its debug file's line table, else its own, copied before the files are
 * closed: lines are looked up when the profile ends (elf_symtab__dwarf).
 */
static void copy_dwarf(struct elf_symtab *e)
{
	uint64_t n;

	drop_dwarf(e);
	if (e->no_lines)
		return;
	if (e->debug)
		e->dwarf_err = elf_dwarf__read(e->debug->elf, e->debug->file_size, !e->no_inlines,
					       &e->dwarf);
	if (e->dwarf_err == -ENOENT)
		e->dwarf_err = elf_dwarf__read(e->elf, e->file_size, !e->no_inlines, &e->dwarf);
	if (!e->dwarf || !e->budget)
		return;
	n = dwarf_ctx__bytes(e->dwarf);
	if (atomic_fetch_add(&e->budget->dwarf_held, n) + n > LOAD_MAX_HELD_DWARF_BYTES) {
		atomic_fetch_sub(&e->budget->dwarf_held, n);
		dwarf_ctx__free(e->dwarf);
		e->dwarf = NULL;
		e->dwarf_err = -ENOSPC;
	}
}

void elf_symtab__keep_lines(struct elf_symtab *e, bool keep, bool inlines)
{
	if (!e)
		return;
	e->no_lines = !keep;
	e->no_inlines = !inlines;
}

struct dwarf_ctx *elf_symtab__dwarf(struct elf_symtab *e, int *err)
{
	*err = !e ? -ENOENT : e->loaded ? e->dwarf_err : -EAGAIN;
	return e && e->loaded ? e->dwarf : NULL;
}

/* elf_symtab__load's reads of the file's (or its debug file's) mapping. */
static int load_mapped(void *arg)
{
	struct elf_symtab *e = arg;
	int err = load_or_recall(e);

	/*
	 * An in-memory image (the vDSO) now; a file at the first address no
	 * symbol names: parsing every FDE doubles libLLVM's load time (34 -> 64
	 * ms) and its peak RSS growth (9 -> 23 MB, .eh_frame's pages), which
	 * most files, their code all named, never need.
	 */
	if (!err && !e->has_symtab && !e->debug && e->image)
		err = load_function_extents(e);
	else if (!err && !e->has_symtab && !e->debug && e->fd >= 0)
		e->fns_fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 0);
	if (!err)
		copy_dwarf(e);
	return err;
}

int elf_symtab__load(struct elf_symtab *e, const atomic_bool *stop)
{
	uint64_t t0;
	int err;

	if (!e || e->loaded)
		return 0;
	e->loaded = true;
	e->stop = stop;
	t0 = clock__mono_ns();
	err = sigbus__call(load_mapped, e);
	if (err == -EIO)
		pr_debug("%s: truncated while its symbols were read", e->path);
	if (!err && e->budget) {
		atomic_fetch_add(&e->budget->symbols_held, e->nsyms);
		e->held = e->nsyms;
	}
	if (err) {
		drop_symbols(e);
		e->loaded = true; /* and it behaves as empty from now on */
		e->go_syms = 0;
	} else if (e->go_syms) {
		pr_debug(
			"%s: %zu function symbols, %zu of them from %s (Go 1.%d layout), loaded in "
			"%.1f ms",
			e->path, e->nsyms, e->go_syms, e->go_where,
			e->go_layout == 12 ? 2 : e->go_layout % 100, (clock__mono_ns() - t0) / 1e6);
	} else {
		pr_debug("%s: %zu function symbols%s%s, %s in %.1f ms", e->path, e->nsyms,
			 e->debug_path ? " from " : "", e->debug_path ? e->debug_path : "",
			 e->from_store ? "read back from the store" : "loaded",
			 (clock__mono_ns() - t0) / 1e6);
	}
	close_file(e);
	e->stop = NULL;
	return err;
}

void ensure_loaded(struct elf_symtab *e)
{
	int err = elf_symtab__load(e, NULL);

	if (err)
		elf_symtab__count_failure(e, err);
}

const char *elf_symtab__lookup(struct elf_symtab *e, uint64_t vaddr, uint64_t *sym_offset)
{
	const struct symbol_range *r;
	ptrdiff_t i;

	if (!e)
		return NULL;
	ensure_loaded(e);
	i = range_find(e->ranges, e->nranges, sizeof(*e->ranges), vaddr);
	if (i < 0)
		return NULL;
	r = &e->ranges[i];
	if (sym_offset)
		*sym_offset = vaddr - r->sym_start;
	return r->name;
}

size_t elf_symtab__symbol_count(struct elf_symtab *e)
{
	if (!e)
		return 0;
	ensure_loaded(e);
	return e->nsyms;
}
