/* SPDX-License-Identifier: MIT */
/*
 * Function symbols of one ELF file (.symtab, else .dynsym), plus what is
 * needed to map a file offset back to an ELF virtual address (PT_LOAD
 * segments) and the GNU build ID that identifies the file.
 *
 * Opening reads only the ELF header, program headers and notes; the symbol
 * table is loaded, sorted and deduplicated on the first lookup, or before
 * it by elf_symtab__load on another thread. Names point into one private
 * copy of the string table, so they live as long as the object.
 *
 * Threads: an object is used by one thread at a time, with no lock. What
 * opening read (path, build ID, segments, whether it has a .symtab, its
 * debuglink) never changes after, and any thread may read it: the
 * elf_symtab__build_id, __path, __has_symtab, __debuglink and
 * __offset_to_vaddr below. Everything else (loading, lookups, function
 * starts, releasing or reopening the file, setting a debug file) changes
 * it, and belongs to whoever holds the object: the symbolizer, or while it
 * is posted to the symbol loader (symtab_loader.h), that thread alone.
 */
#ifndef CPROF_ELF_SYMTAB_H
#define CPROF_ELF_SYMTAB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_symtab;
struct table_store;
struct load_budget;

int elf_symtab__open(const char *path, struct elf_symtab **out);
/* Takes ownership of fd (closed by elf_symtab__free or on error). */
int elf_symtab__open_fd(int fd, const char *display_path, struct elf_symtab **out);
/* An ELF image in memory (the vDSO), copied: the caller's buffer may go away. */
int elf_symtab__open_memory(const void *image, size_t size, const char *display_path,
			    struct elf_symtab **out);
void elf_symtab__free(struct elf_symtab *e);

/* Lowercase hex GNU build ID, or NULL if the file has none. */
const char *elf_symtab__build_id(const struct elf_symtab *e);

/*
 * Where the file's symbol ranges are kept between runs (src/resolve/
 * symbol_file.h): read back from there, once made, by its build ID and
 * size and those of its debug file; NULL: loaded from the file each time.
 */
void elf_symtab__keep_in(struct elf_symtab *e, struct table_store *store);
/*
 * The run's caps and deadline (lib/load_budget.h), borrowed: a table over a
 * cap, or whose load the deadline cuts off, is counted there and stays
 * empty; NULL: no caps.
 */
void elf_symtab__set_budget(struct elf_symtab *e, struct load_budget *budget);

/*
 * Descriptors: whether the file (or its debug file) is still open, and
 * letting it go until the symbols are needed, when the caller hands the
 * same file back: 1 if the symbols are still to be read from it (and from
 * its debug file, which the caller attaches again), 0 if only the function
 * extents are, -ESTALE if it is not the same size any more (fd is taken in
 * every case). The caller keeps the number of open files bounded.
 */
bool elf_symtab__holds_file(const struct elf_symtab *e);
void elf_symtab__release_file(struct elf_symtab *e);
bool elf_symtab__released(const struct elf_symtab *e);
int elf_symtab__reopen_fd(struct elf_symtab *e, int fd);

/* Whether the file has a .symtab; a stripped file has only .dynsym, if that. */
bool elf_symtab__has_symtab(const struct elf_symtab *e);
/* The .gnu_debuglink file name and its CRC32, or NULL when the file has none. */
const char *elf_symtab__debuglink(const struct elf_symtab *e, uint32_t *crc);
/*
 * Takes debug (a separate debug file, see debug_file.h) as the source of the
 * .symtab; .dynsym still comes from e. Refused (-ESTALE) when both have build
 * IDs and they differ, or (-EINVAL) when e has a .symtab of its own. After
 * the symbols were loaded (a file fetched later), they are loaded again from
 * debug alone on the next lookup, and names looked up before are invalid.
 * debug is owned by e from here on, or freed on error.
 */
int elf_symtab__set_debug_file(struct elf_symtab *e, struct elf_symtab *debug);
/* The path the file was opened as (for messages). */
const char *elf_symtab__path(const struct elf_symtab *e);
/* The debug file's path, or NULL when there is none. */
const char *elf_symtab__debug_path(const struct elf_symtab *e);

/*
 * Converts a file offset to the ELF virtual address using the PT_LOAD segment
 * that contains it: vaddr = off - p_offset + p_vaddr. -ENOENT if none does.
 */
int elf_symtab__offset_to_vaddr(const struct elf_symtab *e, uint64_t file_offset, uint64_t *vaddr);

/*
 * Name of the function symbol covering vaddr, or NULL. *sym_offset (optional)
 * gets vaddr - symbol start. Loads the table on first use; a table that fails
 * to load is reported once and then behaves as empty.
 */
const char *elf_symtab__lookup(struct elf_symtab *e, uint64_t vaddr, uint64_t *sym_offset);

/*
 * Loads the symbol table now, if it was not (as the first lookup would):
 * from what the store keeps, or the file and its debug file, which are
 * closed after. Checks the budget's deadline every LOAD_CHECK_EVERY
 * entries, and *stop (NULL: never), set by another thread to end the
 * load: a load cut off or refused leaves the table empty. 0, or the
 * failure, which the caller counts with elf_symtab__count_failure (a
 * lookup does). The CPU and IO of a file's symbols, for the symbol loader.
 */
int elf_symtab__load(struct elf_symtab *e, const atomic_bool *stop);
/*
 * A load's failure, in e's budget: over a cap (refused), or cut off by the
 * deadline or a stop (abandoned); any other is told.
 */
void elf_symtab__count_failure(struct elf_symtab *e, int err);
/*
 * The entries of the symbol tables a load would read, as their section
 * headers claim them (0 once loaded, or with no file open): what a load
 * will cost, before it begins.
 */
uint64_t elf_symtab__symbols_claimed(const struct elf_symtab *e);
/* Whether the symbol table was loaded (or failed to): lookups read no file. */
bool elf_symtab__loaded(const struct elf_symtab *e);

/*
 * For an in-memory image (the vDSO) without a symbol table: the first
 * address of the function holding vaddr, as its call frame information
 * (.eh_frame_hdr) knows it, so that code no symbol names is shown per
 * function, not per instruction. False when no FDE covers vaddr, the image
 * has a .symtab, or it is a file (see load_function_extents).
 */
bool elf_symtab__function_start(struct elf_symtab *e, uint64_t vaddr, uint64_t *start);

/*
 * Whether the load copies the file's line table for elf_symtab__dwarf, and
 * its sections for inlined functions (default: both).
 */
void elf_symtab__keep_lines(struct elf_symtab *e, bool keep, bool inlines);

struct dwarf_ctx;
/*
 * The file's DWARF line table (its debug file's if that has one), copied
 * when the symbols were loaded, or NULL with *err: -EAGAIN (not loaded
 * yet), -ENOENT (none), or why it was not kept (-EFBIG over
 * DWARF_MAX_SECTION_BYTES, -ENOSPC the budget's files held
 * LOAD_MAX_HELD_DWARF_BYTES, -EOPNOTSUPP compressed with other than zlib).
 * Owned by e.
 */
struct dwarf_ctx *elf_symtab__dwarf(struct elf_symtab *e, int *err);

/* Number of function symbols after loading/dedup (loads the table). */
size_t elf_symtab__symbol_count(struct elf_symtab *e);

#endif
