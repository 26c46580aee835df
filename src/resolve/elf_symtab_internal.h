/* SPDX-License-Identifier: MIT */
/*
 * What the files of struct elf_symtab share (elf_symtab.c names them): the
 * object itself and the functions one file calls in another. Inside
 * src/resolve only; the API is elf_symtab.h.
 */
#ifndef CPROF_ELF_SYMTAB_INTERNAL_H
#define CPROF_ELF_SYMTAB_INTERNAL_H

#include <gelf.h>
#include <libelf.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/elf_build_id.h"
#include "resolve/elf_symtab.h"
#include "resolve/symbol_file.h"
#include "store/table_store.h"

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

/* elf_symtab.c */
int over_time(const struct elf_symtab *e);
bool range_in_file(const struct elf_symtab *e, uint64_t off, uint64_t size);
void ensure_loaded(struct elf_symtab *e);

/* elf_symtab_ranges.c */
void claimed_symbols(const struct elf_symtab *e, uint64_t *count, uint64_t *bytes);
int load_symbols(struct elf_symtab *e);

/* elf_symtab_kept.c */
void kept_file_id(const struct elf_symtab *e, struct symbol_file_id *id,
		  const struct elf_symtab *debug);
bool kept_key(const struct elf_symtab *e, const struct symbol_file_id *id, const char *prefix,
	      char *key, size_t size);
int read_kept(struct elf_symtab *e, const struct symbol_file_id *id, const char *key,
	      struct symbol_set *set);
void keep_ranges(struct elf_symtab *e, const struct symbol_range *r, size_t n, size_t nsyms,
		 const struct symbol_file_id *id, const char *key);
int load_or_recall(struct elf_symtab *e);

/* elf_symtab_starts.c */
int load_function_extents(struct elf_symtab *e);

#endif
