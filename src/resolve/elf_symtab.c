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
 * The symbol table is turned once into sorted, non-overlapping address ranges
 * so a lookup is a single binary search:
 *  - .symtab is preferred and .dynsym fills in the addresses it does not name
 *    (a stripped file has only .dynsym; a full .symtab already holds every
 *    .dynsym entry, and comparing those duplicates name by name was the
 *    bulk of the load time of large C++ binaries);
 *  - a Go program without a .symtab (built with -ldflags=-s) still has
 *    Go's own function table, .gopclntab (go_pclntab.h), which the runtime
 *    needs for its stack traces: its functions fill in what .dynsym does
 *    not name, named as Go prints them ("main.(*T).m");
 *  - aliases at one address keep one name, chosen as for the kernel
 *    (symbol_rank.h): GLOBAL > WEAK > LOCAL, fewer leading underscores, shorter;
 *  - a sized symbol covers [value, value + size); a size-0 symbol (asm code,
 *    _init, crtstuff) covers up to the next symbol, but never past the end of
 *    its executable PT_LOAD segment, of its section (so _init does not claim
 *    the .plt after it) or of a sized symbol that encloses it;
 *  - a symbol nested in another (asm entry points inside a larger function)
 *    wins over its container for its own extent.
 * Names are then copied into one private arena and the file is closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdatomic.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
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
#include "lib/u64map.h"
#include "lib/dwarf_line.h"
#include "resolve/elf_dwarf.h"
#include "resolve/elf_plt.h"
#include "resolve/elf_symtab.h"
#include "lib/go_pclntab.h"
#include "resolve/symbol_file.h"
#include "symbol_loader.h"
#include "unwind/table_store.h"
#include "unwind/eh_frame_hdr.h"
#include "resolve/symbol_rank.h"

/* A .gnu_debuglink names a file in a directory; longer is not a file name. */
#define MAX_DEBUGLINK_LEN 255

struct elf_segment {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
	uint64_t memsz;
	uint32_t flags;
};

struct elf_symtab {
	char *path;
	int fd;
	void *image; /* private copy of an in-memory ELF image, or NULL */
	Elf *elf;
	uint64_t file_size;
	struct kept_source source; /* what fstat said at open; zero for an image */
	struct elf_segment *segs;
	size_t nsegs;
	char build_id[2 * ELF_BUILD_ID_MAX + 1];
	uint8_t build_id_bytes[ELF_BUILD_ID_MAX];
	size_t build_id_len;
	bool has_symtab;
	char debuglink[MAX_DEBUGLINK_LEN + 1]; /* "" when none */
	uint32_t debuglink_crc;
	struct elf_symtab *debug; /* separate debug file: its .symtab replaces ours */
	char *debug_path;	  /* kept after the debug file is closed */
	bool loaded;
	struct symbol_range *ranges;
	size_t nranges;
	size_t nsyms;
	char *names;
	/* Of the symbols, those from Go's table, and where it was (for the debug line). */
	size_t go_syms;
	const char *go_where;
	int go_layout;
	/*
	 * Without a .symtab: the functions .eh_frame_hdr knows, as offsets
	 * from fn_base, sorted, to name code no symbol covers by its
	 * function's start.
	 */
	struct fn_extent *fns;
	size_t nfns;
	uint64_t fn_base;
	/* A file's: read at the first address no symbol names, then closed. */
	int fns_fd;
	struct table_store *store; /* borrowed: where the ranges are kept between runs */
	bool from_store;
	struct load_budget *budget; /* borrowed: caps, deadline and counts; NULL: none */
	bool released;		    /* the file was let go before its symbols were loaded */
	size_t held;		    /* symbols counted in budget->symbols_held */
	/* Its line table's sections (or its debug file's), copied at the load; NULL: see dwarf_err.
	 */
	struct dwarf_ctx *dwarf;
	int dwarf_err;
	bool no_lines;	 /* elf_symtab__keep_lines(false): not copied */
	bool no_inlines; /* elf_symtab__keep_lines(.., false): .debug_info not copied */
	/* During elf_symtab__load: set from another thread to end the load (NULL: none). */
	const atomic_bool *stop;
};

struct fn_extent {
	uint32_t start; /* from fn_base */
	uint32_t size;
};

/* A candidate from a symbol table; name points into libelf's (mapped) data. */
struct cand {
	uint64_t start;
	uint64_t size;
	const char *name;
	uint32_t shndx;	    /* 0 when unknown (SHN_XINDEX) */
	uint16_t strtab;    /* index in load_ctx.tabs */
	uint8_t bind;	    /* enum symbol_bind */
	uint8_t from_debug; /* shndx is a section of the debug file */
	uint8_t label;	    /* STT_NOTYPE in code: an assembler label, not a function */
};

/* One symbol per address, after alias selection. */
struct usym {
	uint64_t start;
	uint64_t end;
	const char *name;
	uint16_t strtab;
	bool sized;
};

/*
 * The string tables names point into. They are copied whole once the
 * symbols are chosen: one memcpy per table rather than a strlen and a
 * memcpy per name, which was a third of the load time of large tables.
 */
struct strtab_ref {
	const char *str;
	size_t size;
	size_t base; /* offset of the copy in elf_symtab.names */
};

struct load_ctx {
	const struct elf_symtab *of; /* the file whose symbols are loaded (its budget and stop) */
	struct strtab_ref *tabs;
	size_t ntabs;
	size_t bytes;	      /* total size of tabs */
	size_t max_bytes;     /* crafted tables that overlap must not multiply memory */
	struct u64map *index; /* from_debug << 32 | section index -> tabs index */
};

/*
 * -ETIME once the run's time for loading is over (load_budget.h), or the
 * loader that holds e was stopped (symtab_loader.h).
 */
static int over_time(const struct elf_symtab *e)
{
	if (e->stop && atomic_load(e->stop))
		return -ETIME;
	return load_budget__over(e->budget) ? -ETIME : 0;
}

static bool range_in_file(const struct elf_symtab *e, uint64_t off, uint64_t size)
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

/* Hands the file (e->fd) or the in-memory copy (e->image) to libelf and reads its headers. */
static int begin_elf(struct elf_symtab *e)
{
	if (elf_version(EV_CURRENT) == EV_NONE) {
		pr_debug("libelf: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	e->elf = e->image ? elf_memory(e->image, e->file_size)
			  : elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	return read_headers(e);
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
	e->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
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

static enum symbol_bind bind_of(unsigned int stb)
{
	switch (stb) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return SYMBOL_GLOBAL;
	case STB_WEAK:
		return SYMBOL_WEAK;
	default:
		return SYMBOL_LOCAL;
	}
}

/* Whether alias x is preferred over alias y (symbol_rank.h). */
static bool better_alias(const struct cand *x, const struct cand *y)
{
	if (x->label != y->label)
		return !x->label;
	return symbol_rank_cmp(x->bind, x->name, strlen(x->name), y->bind, y->name,
			       strlen(y->name)) < 0;
}

/*
 * Stable LSD radix sort by start address, one byte per pass, skipping bytes
 * that are the same in every key (most of them: a file spans a few MiB).
 * Large tables made qsort, and musl's in particular, the bulk of load time.
 */
static int sort_by_start(struct cand *c, size_t n)
{
	size_t count[8][256] = {}, pos[256], i, sum;
	struct cand *tmp, *src = c, *dst;
	int b, d;

	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	for (i = 0; i < n; i++)
		for (b = 0; b < 8; b++)
			count[b][(c[i].start >> (8 * b)) & 0xff]++;
	for (b = 0; b < 8; b++) {
		struct cand *t;

		for (d = 0; d < 256 && count[b][d] != n; d++)
			;
		if (d < 256)
			continue;
		for (d = 0, sum = 0; d < 256; d++) {
			pos[d] = sum;
			sum += count[b][d];
		}
		for (i = 0; i < n; i++)
			dst[pos[(src[i].start >> (8 * b)) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != c)
		memcpy(c, src, n * sizeof(*c));
	free(tmp);
	return 0;
}

/* The string table a symbol table links to, trimmed so every name in it is terminated. */
static bool get_strtab(struct elf_symtab *e, size_t ndx, const char **str, size_t *size)
{
	Elf_Scn *scn = elf_getscn(e->elf, ndx);
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    (sh.sh_flags & SHF_COMPRESSED) || !range_in_file(e, sh.sh_offset, sh.sh_size))
		return false;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return false;
	n = d->d_size;
	while (n && ((const char *)d->d_buf)[n - 1])
		n--;
	*str = d->d_buf;
	*size = n;
	return true;
}

/* The index of the string table a symbol table links to, registered on first use. */
static int strtab_index(struct elf_symtab *e, bool from_debug, uint32_t link, struct load_ctx *ctx,
			const char **str, size_t *strsz, uint16_t *idx)
{
	uint64_t key = (uint64_t)from_debug << 32 | link, v;
	struct strtab_ref *t;

	if (!get_strtab(e, link, str, strsz)) {
		pr_debug("%s: symbol table links to no usable string table", e->path);
		return -ENOEXEC;
	}
	if (u64map__get(ctx->index, key, &v)) {
		*idx = (uint16_t)v;
		return 0;
	}
	if (ctx->ntabs > UINT16_MAX || *strsz > ctx->max_bytes - ctx->bytes) {
		pr_debug("%s: too many or too large string tables", e->path);
		return -E2BIG;
	}
	t = realloc(ctx->tabs, (ctx->ntabs + 1) * sizeof(*ctx->tabs));
	if (!t)
		return -ENOMEM;
	ctx->tabs = t;
	t[ctx->ntabs] = (struct strtab_ref){.str = *str, .size = *strsz, .base = ctx->bytes};
	if (u64map__set(ctx->index, key, ctx->ntabs))
		return -ENOMEM;
	ctx->bytes += *strsz;
	*idx = (uint16_t)ctx->ntabs++;
	return 0;
}

/*
 * A label hand-written code puts in an executable section without .type
 * (ld.so's _start and _dl_start_user): named as perf names it, up to the
 * next symbol. Not ARM's mapping symbols ($x, $d), nor data markers.
 */
static bool code_label(const struct elf_symtab *f, const GElf_Sym *sym, const char *str)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (str[sym->st_name] == '$' || sym->st_shndx == SHN_XINDEX)
		return false;
	scn = elf_getscn(f->elf, sym->st_shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

static int collect(struct elf_symtab *e, bool from_debug, struct load_ctx *ctx, Elf_Scn *scn,
		   const GElf_Shdr *sh, struct cand **cands, size_t *n, size_t *cap)
{
	size_t nsyms, i, strsz, entsize;
	const char *str;
	uint16_t strtab;
	Elf_Data *d;
	int err;

	if (!range_in_file(e, sh->sh_offset, sh->sh_size) || (sh->sh_flags & SHF_COMPRESSED)) {
		pr_debug("%s: symbol table lies outside the file", e->path);
		return -ENOEXEC;
	}
	err = strtab_index(e, from_debug, sh->sh_link, ctx, &str, &strsz, &strtab);
	if (err)
		return err;
	d = elf_getdata(scn, NULL);
	if (!d) {
		pr_debug("%s: symbol table: %s", e->path, elf_errmsg(-1));
		return -ENOEXEC;
	}
	entsize = gelf_getclass(e->elf) == ELFCLASS32 ? sizeof(Elf32_Sym) : sizeof(Elf64_Sym);
	nsyms = d->d_size / entsize;
	if (*cap - *n < nsyms) {
		size_t ncap = *n + nsyms;
		struct cand *nc = realloc(*cands, (ncap ? ncap : 1) * sizeof(**cands));

		if (!nc)
			return -ENOMEM;
		*cands = nc;
		*cap = ncap;
	}
	for (i = 0; i < nsyms; i++) {
		unsigned int type;
		GElf_Sym sym;

		if (i % LOAD_CHECK_EVERY == LOAD_CHECK_EVERY - 1 && over_time(ctx->of))
			return -ETIME;
		if (!gelf_getsym(d, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		/* Undefined (imports), absolute and common symbols are not code here. */
		if (sym.st_shndx == SHN_UNDEF ||
		    (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
			continue;
		if (!sym.st_value || sym.st_name >= strsz || !str[sym.st_name])
			continue;
		if (type == STT_NOTYPE && !code_label(e, &sym, str))
			continue;
		(*cands)[(*n)++] = (struct cand){
			.start = sym.st_value,
			.size = sym.st_size,
			.name = str + sym.st_name,
			.shndx = sym.st_shndx == SHN_XINDEX ? 0 : sym.st_shndx,
			.strtab = strtab,
			.bind = bind_of(GELF_ST_BIND(sym.st_info)),
			.from_debug = from_debug,
			.label = type == STT_NOTYPE,
		};
	}
	return 0;
}

/* End of the executable segment containing vaddr, or UINT64_MAX if none does. */
static uint64_t exec_segment_end(const struct elf_symtab *e, uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < e->nsegs; i++) {
		const struct elf_segment *s = &e->segs[i];

		if ((s->flags & PF_X) && vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz)
			return s->memsz > UINT64_MAX - s->vaddr ? UINT64_MAX : s->vaddr + s->memsz;
	}
	return UINT64_MAX;
}

/* End of the allocated section containing vaddr, or UINT64_MAX if unknown. */
static uint64_t section_end(const struct elf_symtab *e, uint32_t shndx, uint64_t vaddr)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (!shndx || !(scn = elf_getscn(e->elf, shndx)) || !gelf_getshdr(scn, &sh) ||
	    !(sh.sh_flags & SHF_ALLOC) || vaddr < sh.sh_addr || vaddr - sh.sh_addr >= sh.sh_size)
		return UINT64_MAX;
	return sh.sh_size > UINT64_MAX - sh.sh_addr ? UINT64_MAX : sh.sh_addr + sh.sh_size;
}

/* Collapses aliases and gives every symbol its end. Returns the number kept. */
static size_t to_usyms(const struct elf_symtab *e, const struct cand *c, size_t n, struct usym *u)
{
	size_t i, j, k = 0, best;
	uint64_t covered = 0; /* end of the sized functions so far */

	for (i = 0; i < n; i = j) {
		uint64_t end = UINT64_MAX;
		bool sized = false;

		for (j = i; j < n && c[j].start == c[i].start && c[j].label;)
			j++;
		/* Labels inside a function with a size are its own jump targets: it keeps its name.
		 */
		if (j > i && (j == n || c[j].start != c[i].start) && c[i].start < covered)
			continue;
		for (j = i, best = i; j < n && c[j].start == c[i].start; j++) {
			uint64_t s_end;

			if (j > i && better_alias(&c[j], &c[best]))
				best = j;
			if (!c[j].size)
				continue;
			s_end = c[j].size > UINT64_MAX - c[j].start ? UINT64_MAX
								    : c[j].start + c[j].size;
			if (!sized || s_end > end)
				end = s_end;
			sized = true;
			if (!c[j].label && s_end > covered)
				covered = s_end;
		}
		if (!sized) {
			uint64_t seg_end = exec_segment_end(e, c[i].start);

			end = section_end(c[best].from_debug ? e->debug : e, c[best].shndx,
					  c[i].start);
			if (seg_end < end)
				end = seg_end;
		}
		u[k++] = (struct usym){
			.start = c[i].start,
			.end = end,
			.name = c[best].name,
			.strtab = c[best].strtab,
			.sized = sized,
		};
	}
	/* Unsized symbols hold their segment/section limit; the next symbol bounds them too. */
	for (i = 0; i < k; i++) {
		uint64_t next;

		if (u[i].sized)
			continue;
		next = i + 1 < k ? u[i + 1].start : UINT64_MAX;
		if (next < u[i].end)
			u[i].end = next;
		/* Last symbol, outside any executable segment: nothing bounds it but itself. */
		if (u[i].end == UINT64_MAX)
			u[i].end = u[i].start + 1;
	}
	return k;
}

static void emit(struct symbol_range *r, size_t *nr, uint64_t start, uint64_t end,
		 const struct usym *s)
{
	if (start >= end)
		return;
	r[(*nr)++] = (struct symbol_range){
		.start = start,
		.end = end,
		.sym_start = s->start,
		.name = s->name,
	};
}

/*
 * Sweeps symbols in address order with a stack of the ones still open, so
 * that nested symbols split their container. Each symbol emits at most one
 * range when it is pushed (the container's part before it) and one when it
 * is popped: at most 2 * n ranges.
 */
static int to_ranges(struct usym *u, size_t n, struct symbol_range *r, size_t *nr)
{
	size_t *stack, depth = 0, i;
	uint64_t cursor = 0;

	stack = malloc((n ? n : 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	*nr = 0;
	/* One pass past the end, at UINT64_MAX, closes whatever is still open. */
	for (i = 0; i <= n; i++) {
		uint64_t at = i < n ? u[i].start : UINT64_MAX;

		while (depth && u[stack[depth - 1]].end <= at) {
			const struct usym *t = &u[stack[--depth]];

			emit(r, nr, cursor, t->end, t);
			if (t->end > cursor)
				cursor = t->end;
		}
		if (i == n)
			break;
		if (depth) {
			const struct usym *top = &u[stack[depth - 1]];

			emit(r, nr, cursor, u[i].start, top);
			/* A label inside a function must not take over the function's tail. */
			if (!u[i].sized && u[i].end > top->end)
				u[i].end = top->end;
		}
		cursor = u[i].start;
		stack[depth++] = i;
	}
	free(stack);
	return 0;
}

/* Copies the string tables into one arena and points the symbols at their copies. */
static int copy_names(struct elf_symtab *e, const struct load_ctx *ctx, struct usym *u, size_t n)
{
	size_t i;

	e->names = malloc(ctx->bytes ? ctx->bytes : 1);
	if (!e->names)
		return -ENOMEM;
	for (i = 0; i < ctx->ntabs; i++)
		memcpy(e->names + ctx->tabs[i].base, ctx->tabs[i].str, ctx->tabs[i].size);
	for (i = 0; i < n; i++) {
		const struct strtab_ref *t = &ctx->tabs[u[i].strtab];

		u[i].name = e->names + t->base + (u[i].name - t->str);
	}
	return 0;
}

/* Appends the candidates of every table of one type; a bad table is skipped. */
static int collect_all(struct elf_symtab *e, bool from_debug, uint32_t type, struct load_ctx *ctx,
		       struct cand **cands, size_t *n, size_t *cap)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err;

	while ((scn = elf_nextscn(e->elf, scn))) {
		/* A table stripped into a debug file is SHT_NOBITS and so never matches. */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		err = collect(e, from_debug, ctx, scn, &sh, cands, n, cap);
		if (err == -ENOMEM || err == -ETIME)
			return err;
	}
	return 0;
}

/* Whether a candidate in c[0..n), sorted by start, starts at addr. */
static bool has_start(const struct cand *c, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && c[lo].start == addr;
}

/*
 * The PLT stubs no symbol starts at, as candidates named NAME@plt; their
 * names go in as one more string table. c[0..n) is sorted by start.
 */
static int add_plt_stubs(struct elf_symtab *e, struct load_ctx *ctx, struct elf_plt *plt,
			 struct cand **c, size_t *n, size_t *cap)
{
	struct strtab_ref *t;
	size_t i, had = *n;
	struct cand *nc;
	int err = elf_plt__read(e->elf, plt);

	if (err || !plt->n)
		return err;
	if (ctx->ntabs > UINT16_MAX || plt->names_size > ctx->max_bytes - ctx->bytes)
		return 0;
	t = realloc(ctx->tabs, (ctx->ntabs + 1) * sizeof(*ctx->tabs));
	if (!t)
		return -ENOMEM;
	ctx->tabs = t;
	t[ctx->ntabs] = (struct strtab_ref){plt->names, plt->names_size, ctx->bytes};
	ctx->bytes += plt->names_size;
	if (*cap - *n < plt->n) {
		nc = realloc(*c, (*n + plt->n) * sizeof(**c));
		if (!nc)
			return -ENOMEM;
		*c = nc;
		*cap = *n + plt->n;
	}
	for (i = 0; i < plt->n; i++) {
		if (has_start(*c, had, plt->stubs[i].start))
			continue;
		(*c)[(*n)++] = (struct cand){
			.start = plt->stubs[i].start,
			.size = plt->stubs[i].size,
			.name = plt->names + plt->stubs[i].name,
			.strtab = (uint16_t)ctx->ntabs,
			.bind = SYMBOL_LOCAL,
		};
	}
	ctx->ntabs++;
	return 0;
}

/*
 * A Go program's functions from its .gopclntab, where no symbol of
 * c[0..n) (sorted, from .dynsym) starts; their names go in as one more
 * string table, which *go owns until the names are copied.
 */
static int add_go_functions(struct elf_symtab *e, struct load_ctx *ctx, struct go_pclntab **go,
			    struct cand **c, size_t *n, size_t *cap)
{
	size_t size, i, had = *n, count, names_size;
	struct go_pclntab_info info;
	const char *names;
	struct strtab_ref *t;
	const void *image;
	struct cand *nc;
	int err;

	image = e->image ? e->image : elf_rawfile(e->elf, &size);
	if (e->image)
		size = e->file_size;
	if (!image)
		return 0;
	err = go_pclntab__from_elf(image, size, go);
	if (err) {
		/* Not a Go program, or a table not to be trusted: no names from it. */
		if (err != -ENOENT && err != -ENOEXEC)
			pr_debug("%s: Go function table: %s", e->path, strerror(-err));
		/* Over the cap (load_budget.h): the file is refused whole, and counted. */
		return err == -ENOMEM || err == -EFBIG ? err : 0;
	}
	count = go_pclntab__count(*go);
	names = go_pclntab__names(*go, &names_size);
	if (!count || ctx->ntabs > UINT16_MAX || names_size > ctx->max_bytes - ctx->bytes)
		return 0;
	t = realloc(ctx->tabs, (ctx->ntabs + 1) * sizeof(*ctx->tabs));
	if (!t)
		return -ENOMEM;
	ctx->tabs = t;
	t[ctx->ntabs] = (struct strtab_ref){names, names_size, ctx->bytes};
	ctx->bytes += names_size;
	if (*cap - *n < count) {
		nc = realloc(*c, (*n + count) * sizeof(**c));
		if (!nc)
			return -ENOMEM;
		*c = nc;
		*cap = *n + count;
	}
	for (i = 0; i < count; i++) {
		uint64_t start, end;
		const char *name;

		if (go_pclntab__func(*go, i, &start, &end, &name) || end <= start ||
		    has_start(*c, had, start))
			continue;
		(*c)[(*n)++] = (struct cand){
			.start = start,
			.size = end - start,
			.name = name,
			.strtab = (uint16_t)ctx->ntabs,
			.bind = SYMBOL_GLOBAL,
		};
	}
	ctx->ntabs++;
	go_pclntab__info(*go, &info);
	e->go_syms = *n - had;
	e->go_where = info.where;
	e->go_layout = info.version;
	return 0;
}

/* Entries and name bytes of e's tables of one type, from their headers alone. */
static void table_sizes(const struct elf_symtab *e, uint32_t type, uint64_t *count, uint64_t *bytes)
{
	size_t entsize =
		gelf_getclass(e->elf) == ELFCLASS32 ? sizeof(Elf32_Sym) : sizeof(Elf64_Sym);
	Elf_Scn *scn = NULL, *str;
	GElf_Shdr sh, ssh;

	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		*count += sh.sh_size / entsize;
		if ((str = elf_getscn(e->elf, sh.sh_link)) && gelf_getshdr(str, &ssh))
			*bytes += ssh.sh_size;
	}
}

/*
 * Whether the tables load_symbols reads hold more than a run loads for one
 * file (load_budget.h). Such a file is refused whole rather than cut: a
 * table read in part would name the code of the missing symbols after the
 * last one read before it.
 */
/* Entries and name bytes of the tables load_symbols reads, from their headers alone. */
static void claimed(const struct elf_symtab *e, uint64_t *count, uint64_t *bytes)
{
	*count = *bytes = 0;
	if (e->debug)
		table_sizes(e->debug, SHT_SYMTAB, count, bytes);
	else if (e->elf)
		table_sizes(e, SHT_SYMTAB, count, bytes);
	if (e->elf)
		table_sizes(e, SHT_DYNSYM, count, bytes);
}

uint64_t elf_symtab__symbols_claimed(const struct elf_symtab *e)
{
	uint64_t count = 0, bytes;

	if (e && !e->loaded)
		claimed(e, &count, &bytes);
	return count;
}

static bool over_caps(const struct elf_symtab *e)
{
	uint64_t count, bytes;

	claimed(e, &count, &bytes);
	if (count <= LOAD_MAX_SYMBOLS && bytes <= LOAD_MAX_NAME_BYTES)
		return false;
	pr_debug("%s: %llu symbols with %llu bytes of names: over the cap of %u or %u MiB", e->path,
		 (unsigned long long)count, (unsigned long long)bytes, LOAD_MAX_SYMBOLS,
		 LOAD_MAX_NAME_BYTES >> 20);
	return true;
}

static int load_symbols(struct elf_symtab *e)
{
	struct load_ctx ctx = {
		.of = e,
		.max_bytes = 2 * (e->file_size + (e->debug ? e->debug->file_size : 0)),
		.index = u64map__new(),
	};
	struct go_pclntab *go = NULL;
	struct elf_plt plt = {0};
	struct cand *cands = NULL;
	struct usym *u = NULL;
	size_t n = 0, cap = 0, nu, nr, nsymtab, i, kept, sorted;
	int err = 0;

	if (!ctx.index)
		return -ENOMEM;
	if (!e->elf && !e->debug)
		err = -EBADF;
	else if (over_caps(e))
		err = -EFBIG;
	if (err)
		goto cleanup;
	/* A debug file's .symtab describes the same addresses as the stripped file's would. */
	if (e->debug)
		err = collect_all(e->debug, true, SHT_SYMTAB, &ctx, &cands, &n, &cap);
	else
		err = collect_all(e, false, SHT_SYMTAB, &ctx, &cands, &n, &cap);
	if (err)
		goto cleanup;
	err = sort_by_start(cands, n);
	if (!err)
		err = over_time(e);
	if (err)
		goto cleanup;
	nsymtab = n;
	/* Closed when a debug file came late (drop_symbols). */
	err = e->elf ? collect_all(e, false, SHT_DYNSYM, &ctx, &cands, &n, &cap) : 0;
	if (err)
		goto cleanup;
	for (i = nsymtab, kept = nsymtab; i < n; i++)
		if (!has_start(cands, nsymtab, cands[i].start))
			cands[kept++] = cands[i];
	/* Sorted again only when something was added: each sort was a tenth of libc's load. */
	n = kept;
	if (n > nsymtab)
		err = sort_by_start(cands, n);
	sorted = n;
	/* A debug file's .symtab would name the Go functions, and more. */
	e->go_syms = 0;
	if (!err && !e->has_symtab && !e->debug) {
		err = add_go_functions(e, &ctx, &go, &cands, &n, &cap);
		if (!err && n > sorted)
			err = sort_by_start(cands, n);
		sorted = n;
	}
	if (!err && e->elf)
		err = add_plt_stubs(e, &ctx, &plt, &cands, &n, &cap);
	if (!err && n > sorted)
		err = sort_by_start(cands, n);
	/* Each step below takes a few tenths of a second for the largest tables. */
	if (!err)
		err = over_time(e);
	if (err)
		goto cleanup;
	u = malloc((n ? n : 1) * sizeof(*u));
	if (!u) {
		err = -ENOMEM;
		goto cleanup;
	}
	nu = to_usyms(e, cands, n, u);
	/* Done with: the arrays below would otherwise add to the peak (libLLVM: 1.8 MB). */
	free(cands);
	cands = NULL;
	/* The names still point into the mapped file: copy them before it goes. */
	err = over_time(e);
	if (!err)
		err = copy_names(e, &ctx, u, nu);
	if (!err)
		err = over_time(e);
	if (err)
		goto cleanup;
	e->ranges = malloc((2 * nu + 1) * sizeof(*e->ranges));
	if (!e->ranges) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = to_ranges(u, nu, e->ranges, &nr);
	if (err)
		goto cleanup;
	/* Nesting is rare, so most of the 2n worst case is unused. */
	if (nr) {
		struct symbol_range *shrunk = realloc(e->ranges, nr * sizeof(*e->ranges));

		if (shrunk)
			e->ranges = shrunk;
	}
	e->nranges = nr;
	e->nsyms = nu;
cleanup:
	elf_plt__free(&plt);
	go_pclntab__free(go);
	free(cands);
	free(u);
	free(ctx.tabs);
	u64map__free(ctx.index);
	return err;
}

/*
 * The FDE table of .eh_frame_hdr, kept small: 8 bytes a function. Only for
 * images without a .symtab (from themselves or a debug file), where it
 * names what the dynamic symbols do not.
 */
static int load_function_extents(struct elf_symtab *e)
{
	struct eh_frame_hdr *h;
	struct cfi_fde fde;
	size_t size, i, n;
	const void *image = e->image ? e->image : elf_rawfile(e->elf, &size);
	int err;

	if (e->image)
		size = e->file_size;
	if (!image || eh_frame_hdr__from_elf(image, size, &h))
		return 0;
	n = eh_frame_hdr__count(h);
	e->fns = n ? malloc(n * sizeof(*e->fns)) : NULL;
	err = n && !e->fns ? -ENOMEM : 0;
	for (i = 0; !err && i < n; i++) {
		if (eh_frame_hdr__fde(h, i, &fde))
			continue;
		if (!e->nfns)
			e->fn_base = fde.pc_begin;
		/* Entries are sorted by start; a file past 4 GiB of code keeps what fits. */
		if (fde.pc_begin - e->fn_base > UINT32_MAX || fde.pc_range > UINT32_MAX)
			break;
		e->fns[e->nfns++] = (struct fn_extent){(uint32_t)(fde.pc_begin - e->fn_base),
						       (uint32_t)fde.pc_range};
	}
	eh_frame_hdr__free(h);
	return err;
}

/* What is kept of the file is of this very file, and of the debug file debug (NULL: none). */
static void file_id(const struct elf_symtab *e, struct symbol_file_id *id,
		    const struct elf_symtab *debug)
{
	memset(id, 0, sizeof(*id));
	memcpy(id->build_id, e->build_id_bytes, e->build_id_len);
	id->build_id_len = (uint32_t)e->build_id_len;
	id->file = e->source;
	if (debug)
		id->debug = debug->source;
}

/* The name kept under: prefix, the build ID, and where the files are (table_store.h). */
static bool kept_key(const struct elf_symtab *e, const struct symbol_file_id *id,
		     const char *prefix, char *key, size_t size)
{
	uint64_t place = kept_source__place(&id->file) ^ kept_source__place(&id->debug);

	return (size_t)snprintf(key, size, "%s-%s-%016llx", prefix, e->build_id,
				(unsigned long long)place) < size;
}

/*
 * What the symbols are loaded from and the name they are kept under: false
 * if they are not kept (no store, no build ID, an in-memory image, or a
 * debug file that came after the file was closed, whose symbols lack the
 * file's own).
 */
static bool kept_id(const struct elf_symtab *e, struct symbol_file_id *id, char *key, size_t size)
{
	if (!e->store || !e->elf || e->image || !e->build_id_len ||
	    !table_store__trusts(e->store, &e->source) ||
	    (e->debug && !table_store__trusts(e->store, &e->debug->source)))
		return false;
	file_id(e, id, e->debug);
	return kept_key(e, id, "sym", key, size);
}

/* What an earlier run kept under key for this file, into *set: 0, or -errno. */
static int read_kept(struct elf_symtab *e, const struct symbol_file_id *id, const char *key,
		     struct symbol_set *set)
{
	size_t len;
	char *buf;
	int err;

	memset(set, 0, sizeof(*set));
	err = table_store__read_kept_all(e->store, key, &buf, &len);
	if (err)
		return err;
	err = symbol_file__decode(buf, len, id, CPROF_SYMBOL_LOADER, set);
	free(buf);
	if (err == -EINVAL)
		pr_debug("%s: %s not used: another version's, or corrupt", e->path, key);
	return err;
}

/* The symbols kept by an earlier run, if any are there for this file: 0, or -errno. */
static int load_kept(struct elf_symtab *e, const struct symbol_file_id *id, const char *key)
{
	struct symbol_set set;
	int err = read_kept(e, id, key, &set);

	if (err)
		return err;
	e->ranges = set.ranges;
	e->nranges = set.nranges;
	e->nsyms = set.nsyms;
	e->names = set.names;
	e->from_store = true;
	return 0;
}

/* Keeps n ranges of nsyms symbols of this file under key, best effort. */
static void keep(struct elf_symtab *e, const struct symbol_range *r, size_t n, size_t nsyms,
		 const struct symbol_file_id *id, const char *key)
{
	void *buf;
	size_t len;

	if (symbol_file__encode(r, n, nsyms, id, CPROF_SYMBOL_LOADER, &buf, &len))
		return;
	table_store__write_kept(e->store, key, buf, len);
	free(buf);
}

/* The symbols, kept by an earlier run or loaded now (and then kept). */
/* Whether loading e would hold more than the run's LOAD_MAX_HELD_SYMBOLS. */
static bool over_held(const struct elf_symtab *e)
{
	uint64_t count, bytes;

	if (!e->budget)
		return false;
	claimed(e, &count, &bytes);
	return atomic_load(&e->budget->symbols_held) + count > LOAD_MAX_HELD_SYMBOLS;
}

static int load_or_recall(struct elf_symtab *e)
{
	struct symbol_file_id id;
	char key[2 * ELF_BUILD_ID_MAX + 32];
	bool kept = kept_id(e, &id, key, sizeof(key));
	int err;

	/* Stopped: not even what is kept is read, the run is over. */
	if (e->stop && atomic_load(e->stop))
		return -ETIME;
	if (over_held(e))
		return -ENOSPC;
	if (kept && !load_kept(e, &id, key))
		return 0;
	if (over_time(e))
		return -ETIME;
	err = load_symbols(e);
	/* Stopped, the run is over: the store may be gone by now (symtab_loader__stop). */
	if (!err && kept && !(e->stop && atomic_load(e->stop)))
		keep(e, e->ranges, e->nranges, e->nsyms, &id, key);
	return err;
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

int elf_symtab__load(struct elf_symtab *e, const atomic_bool *stop)
{
	uint64_t t0;
	int err;

	if (!e || e->loaded)
		return 0;
	e->loaded = true;
	e->stop = stop;
	t0 = clock__mono_ns();
	err = load_or_recall(e);
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
	if (!err)
		copy_dwarf(e);
	close_file(e);
	e->stop = NULL;
	return err;
}

static void ensure_loaded(struct elf_symtab *e)
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

/* The key a file's function extents are kept under; false if they are not kept. */
static bool extents_id(const struct elf_symtab *e, struct symbol_file_id *id, char *key,
		       size_t size)
{
	if (!e->store || !e->build_id_len || !table_store__trusts(e->store, &e->source))
		return false;
	file_id(e, id, NULL);
	return kept_key(e, id, "fns", key, size);
}

/* The extents kept by an earlier run, as ranges without names: 0, or -errno. */
static int recall_extents(struct elf_symtab *e, const struct symbol_file_id *id, const char *key)
{
	struct symbol_set set;
	int err = read_kept(e, id, key, &set);
	size_t i;

	e->fns = err ? NULL : malloc((set.nranges ? set.nranges : 1) * sizeof(*e->fns));
	if (!err && !e->fns)
		err = -ENOMEM;
	for (i = 0; !err && i < set.nranges; i++) {
		const struct symbol_range *r = &set.ranges[i];

		if (!i)
			e->fn_base = r->start;
		/* As load_function_extents keeps them. */
		if (r->start - e->fn_base > UINT32_MAX || r->end - r->start > UINT32_MAX)
			break;
		e->fns[e->nfns++] = (struct fn_extent){(uint32_t)(r->start - e->fn_base),
						       (uint32_t)(r->end - r->start)};
	}
	symbol_set__clear(&set);
	return err;
}

/*
 * Kept as ranges named "": only when they are apart and none is empty, so
 * that a lookup among them finds what it finds in the file's.
 */
static void keep_extents(struct elf_symtab *e, const struct symbol_file_id *id, const char *key)
{
	struct symbol_range *r = malloc((e->nfns ? e->nfns : 1) * sizeof(*r));
	size_t i;

	for (i = 0; r && i < e->nfns && e->fns[i].size; i++) {
		uint64_t start = e->fn_base + e->fns[i].start;

		r[i] = (struct symbol_range){start, start + e->fns[i].size, start, ""};
	}
	if (r && i == e->nfns)
		keep(e, r, e->nfns, e->nfns, id, key);
	free(r);
}

/* The function extents of a file, read once, the first time they are needed. */
static void load_file_extents(struct elf_symtab *e)
{
	struct symbol_file_id id;
	char key[2 * ELF_BUILD_ID_MAX + 32];
	bool kept;
	int err;

	if (e->fns_fd < 0)
		return;
	kept = extents_id(e, &id, key, sizeof(key));
	if (kept && !recall_extents(e, &id, key)) {
		pr_debug("%s: %zu function extents, read back from the store", e->path, e->nfns);
		goto cleanup;
	}
	e->elf = elf_begin(e->fns_fd, ELF_C_READ_MMAP, NULL);
	err = e->elf ? load_function_extents(e) : -EINVAL;
	if (err)
		pr_debug("%s: no function extents: %s", e->path, strerror(-err));
	else
		pr_debug("%s: %zu function extents from .eh_frame_hdr", e->path, e->nfns);
	if (!err && kept)
		keep_extents(e, &id, key);
	elf_end(e->elf);
	e->elf = NULL;
cleanup:
	close(e->fns_fd);
	e->fns_fd = -1;
}

bool elf_symtab__function_start(struct elf_symtab *e, uint64_t vaddr, uint64_t *start)
{
	size_t lo = 0, hi, mid;
	uint64_t off;

	if (!e)
		return false;
	ensure_loaded(e);
	load_file_extents(e);
	if (!e->nfns || vaddr < e->fn_base || vaddr - e->fn_base > UINT32_MAX)
		return false;
	off = vaddr - e->fn_base;
	for (hi = e->nfns; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if (e->fns[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || off - e->fns[lo - 1].start >= e->fns[lo - 1].size)
		return false;
	*start = e->fn_base + e->fns[lo - 1].start;
	return true;
}

size_t elf_symtab__symbol_count(struct elf_symtab *e)
{
	if (!e)
		return 0;
	ensure_loaded(e);
	return e->nsyms;
}
