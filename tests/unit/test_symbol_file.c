// SPDX-License-Identifier: MIT
/*
 * Symbols as the store keeps them (symbol_file.h): ranges read back with
 * the same bounds and names; an image of another version, file, size or
 * debug file, a truncated one and one with any byte changed are refused;
 * so are ranges that do not hold together, even with a checksum that
 * matches. And libc's symbols and function extents (its FDEs' ranges)
 * kept by one run and read back by the next (elf_symtab__keep_in) name
 * every address as loading them from the file does, and are what the next
 * run uses.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resolve/elf_symtab.h"
#include "resolve/symbol_file.h"
#include "test.h"
#include "store/table_store.h"

#define VERSION "test-loader"

/* Two symbols, the first split around a third nested in it: its name is used twice. */
static const struct symbol_range sample[] = {
	{0x1000, 0x1040, 0x1000, "outer"}, {0x1040, 0x1050, 0x1040, "inner"},
	{0x1050, 0x1100, 0x1000, "outer"}, {0x2000, 0x2001, 0x2000, "one_byte"},
	{0x3000, 0x3800, 0x3000, ""},
};
#define NSAMPLE (sizeof(sample) / sizeof(sample[0]))

static struct symbol_file_id sample_id(void)
{
	struct symbol_file_id id = {.build_id = {0xab, 0xcd, 0xef}, .build_id_len = 3};

	id.file = (struct kept_source){.dev = 8, .ino = 42, .size = 123456, .ctime_ns = 7};
	id.debug = (struct kept_source){.dev = 8, .ino = 43, .size = 789, .ctime_ns = 9};
	return id;
}

/* Encodes the sample, with "outer" at one pointer for both its ranges. */
static uint8_t *encode_sample(const struct symbol_file_id *id, size_t *len)
{
	struct symbol_range r[NSAMPLE];
	void *img;

	memcpy(r, sample, sizeof(r));
	r[2].name = r[0].name;
	CHECK_INT(symbol_file__encode(r, NSAMPLE, 4, id, VERSION, &img, len), ==, 0);
	return img;
}

/* Decodes a copy of img (8-byte aligned, as malloc gives). */
static int decode(const void *img, size_t len, const struct symbol_file_id *id)
{
	struct symbol_set set;
	void *copy = malloc(len ? len : 1);
	int err;

	CHECK(copy);
	memcpy(copy, img, len);
	err = symbol_file__decode(copy, len, id, VERSION, &set);
	symbol_set__clear(&set);
	free(copy);
	return err;
}

TEST(symbol_file_round_trip_keeps_every_range)
{
	struct symbol_file_id id = sample_id(), said;
	char version[SYMBOL_FILE_VERSION_LEN];
	struct symbol_set set;
	uint8_t *img;
	size_t len, i;

	img = encode_sample(&id, &len);
	CHECK_INT(symbol_file__describe(img, len, &said, version), ==, 0);
	CHECK_STR(version, VERSION);
	CHECK(!memcmp(&said, &id, sizeof(id)));
	CHECK_INT(symbol_file__decode(img, len, &id, VERSION, &set), ==, 0);
	CHECK_U64(set.nranges, ==, NSAMPLE);
	CHECK_U64(set.nsyms, ==, 4);
	for (i = 0; i < NSAMPLE; i++) {
		CHECK_U64(set.ranges[i].start, ==, sample[i].start);
		CHECK_U64(set.ranges[i].end, ==, sample[i].end);
		CHECK_U64(set.ranges[i].sym_start, ==, sample[i].sym_start);
		CHECK_STR(set.ranges[i].name, sample[i].name);
	}
	/* A name shared by neighbours is kept once: outer, inner, outer again, one_byte, "". */
	CHECK_U64(set.names_len, ==,
		  sizeof("outer") + sizeof("inner") + sizeof("outer") + sizeof("one_byte") + 1);
	symbol_set__clear(&set);
	symbol_set__clear(&set);
	free(img);
	/* A file without symbols keeps that too. */
	CHECK_INT(symbol_file__encode(NULL, 0, 0, &id, VERSION, (void **)&img, &len), ==, 0);
	CHECK_INT(decode(img, len, &id), ==, 0);
	free(img);
}

TEST(symbol_file_refuses_other_files_versions_and_damage)
{
	struct symbol_file_id id = sample_id(), other;
	struct symbol_set set;
	uint8_t *img;
	size_t len, i;

	img = encode_sample(&id, &len);
	other = id;
	other.build_id[0] ^= 1;
	CHECK_INT(decode(img, len, &other), ==, -EINVAL);
	/* Another file of the same build ID and size, or the same one changed since. */
	other = id;
	other.file.ino++;
	CHECK_INT(decode(img, len, &other), ==, -EINVAL);
	other = id;
	other.file.ctime_ns++;
	CHECK_INT(decode(img, len, &other), ==, -EINVAL);
	/* The same file without a debug file now, or with another one. */
	other = id;
	memset(&other.debug, 0, sizeof(other.debug));
	CHECK_INT(decode(img, len, &other), ==, -EINVAL);
	other = id;
	other.debug.mtime_ns++;
	CHECK_INT(decode(img, len, &other), ==, -EINVAL);
	CHECK_INT(symbol_file__decode(img, len, &id, "another-loader", &set), ==, -EINVAL);
	CHECK(!set.ranges && !set.nranges);
	/* Cut anywhere. */
	for (i = 0; i < len; i++)
		CHECK_INT(decode(img, i, &id), ==, -EINVAL);
	/* Any byte changed: the header's checks or the checksum. */
	for (i = 0; i < len; i++) {
		img[i] ^= 0x40;
		CHECK_INT(decode(img, len, &id), ==, -EINVAL);
		img[i] ^= 0x40;
	}
	CHECK_INT(decode(img, len, &id), ==, 0);
	free(img);
}

/* The image's ranges: 32 bytes each, just before the names. */
static uint64_t *ranges_of(uint8_t *img, size_t len, size_t names_len)
{
	return (uint64_t *)(img + len - names_len) - 4 * NSAMPLE;
}

/* Damage made to hold a matching checksum: the structure's own checks refuse it. */
TEST(symbol_file_refuses_ranges_that_do_not_hold)
{
	struct symbol_file_id id = sample_id();
	struct symbol_range r[NSAMPLE];
	size_t len, names_len = 6 + 6 + 6 + 9 + 1;
	uint64_t *d, keep;
	uint8_t *img;
	void *none;
	int field, range;

	img = encode_sample(&id, &len);
	d = ranges_of(img, len, names_len);
	CHECK_U64(d[0], ==, 0x1000);
	CHECK_U64(d[4 * (NSAMPLE - 1)], ==, 0x3000);
	/* Each range: start, end, sym_start, name offset. */
	const uint64_t bad[][3] = {
		{1, 0, 0x1000},		   /* the first ends where it starts */
		{1, 0, 0x0fff},		   /* ... or before */
		{2, 0, 0x1001},		   /* its symbol starts after it */
		{3, 0, 6 + 6 + 6 + 9 + 1}, /* its name starts past the names */
		{0, 1, 0x1030},		   /* the second starts inside the first */
		{0, 3, 0x1000},		   /* the fourth starts before the third */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		field = (int)bad[i][0];
		range = (int)bad[i][1];
		keep = d[4 * range + field];
		d[4 * range + field] = bad[i][2];
		symbol_file__seal(img, len);
		CHECK_INT(decode(img, len, &id), ==, -EINVAL);
		d[4 * range + field] = keep;
	}
	/* Names that do not end with a NUL. */
	img[len - 1] = 'x';
	symbol_file__seal(img, len);
	CHECK_INT(decode(img, len, &id), ==, -EINVAL);
	img[len - 1] = 0;
	symbol_file__seal(img, len);
	CHECK_INT(decode(img, len, &id), ==, 0);
	free(img);
	/* Nor does encode take ranges out of order, or unnamed. */
	memcpy(r, sample, sizeof(r));
	r[1].start = 0x1030;
	CHECK_INT(symbol_file__encode(r, NSAMPLE, 4, &id, VERSION, &none, &len), ==, -EINVAL);
	memcpy(r, sample, sizeof(r));
	r[3].name = NULL;
	CHECK_INT(symbol_file__encode(r, NSAMPLE, 4, &id, VERSION, &none, &len), ==, -EINVAL);
}

/* The one kept file of the store at dir whose name starts with prefix: its path. */
static const char *kept_file(const char *dir, const char *prefix)
{
	static char path[PATH_MAX + 256];
	struct dirent *d;
	int found = 0;
	DIR *dp = opendir(dir);

	CHECK(dp);
	while ((d = readdir(dp)))
		if (!strncmp(d->d_name, prefix, strlen(prefix))) {
			snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
			found++;
		}
	closedir(dp);
	CHECK_INT(found, ==, 1);
	return path;
}

/* The kept file replaced by img, as another run (or damage) would leave it. */
static void replace_file(const char *path, const void *img, size_t len)
{
	FILE *f;

	CHECK_INT(unlink(path), ==, 0);
	f = fopen(path, "wx");
	CHECK(f);
	CHECK_U64(fwrite(img, 1, len, f), ==, len);
	CHECK_INT(fclose(f), ==, 0);
}

/* Changes the first letter of every copy of name in the image; the new letter. */
static char rename_all(uint8_t *img, size_t len, const char *name)
{
	char needle[256], letter = name[0] == 'Z' ? 'Y' : 'Z';
	size_t n = strlen(name) + 2;
	uint8_t *at = img;

	snprintf(needle + 1, sizeof(needle) - 1, "%s", name);
	needle[0] = 0;
	while ((at = memmem(at, len - (size_t)(at - img), needle, n))) {
		at[1] = (uint8_t)letter;
		at += n - 1;
	}
	return letter;
}

static struct elf_symtab *open_kept(const char *path, struct table_store *s)
{
	struct elf_symtab *e;

	CHECK_INT(elf_symtab__open(path, &e), ==, 0);
	elf_symtab__keep_in(e, s);
	return e;
}

/*
 * Every 61st address of the file's first bytes names the same, at the same
 * offset, and is in the same function by the FDEs (libc has no .symtab).
 */
static void check_same_names(struct elf_symtab *a, struct elf_symtab *b, uint64_t size,
			     size_t *named)
{
	uint64_t addr, oa, ob, sa, sb;
	const char *na, *nb;
	size_t starts = 0;

	*named = 0;
	for (addr = 0; addr < size; addr += 61) {
		bool fa = elf_symtab__function_start(a, addr, &sa);

		CHECK(fa == elf_symtab__function_start(b, addr, &sb));
		if (fa) {
			CHECK_U64(sa, ==, sb);
			starts++;
		}
		na = elf_symtab__lookup(a, addr, &oa);
		nb = elf_symtab__lookup(b, addr, &ob);
		CHECK(!na == !nb);
		if (!na)
			continue;
		CHECK_STR(na, nb);
		CHECK_U64(oa, ==, ob);
		(*named)++;
	}
	CHECK_U64(elf_symtab__symbol_count(a), ==, elf_symtab__symbol_count(b));
	CHECK(starts > 1000);
}

TEST(elf_symtab_reads_kept_symbols_back)
{
	const char *libc = test_system_libc(), *dir = test_tmp_dir(), *kept, *name = NULL;
	struct elf_symtab *plain, *first, *again;
	char store_dir[PATH_MAX], letter;
	struct table_store *s;
	uint64_t addr, off;
	uint8_t *img;
	size_t len, named;
	struct stat st;

	snprintf(store_dir, sizeof(store_dir), "%s/symbols", dir);
	CHECK_INT(table_store__open(store_dir, 64 << 20, &s), ==, 0);
	CHECK_INT(stat(libc, &st), ==, 0);
	CHECK_INT(elf_symtab__open(libc, &plain), ==, 0);
	/* The first run loads them from the file and keeps them; the next reads them back. */
	first = open_kept(libc, s);
	check_same_names(plain, first, (uint64_t)st.st_size, &named);
	CHECK(named > 1000);
	CHECK(kept_file(store_dir, "fns-"));
	kept = kept_file(store_dir, "sym-");
	again = open_kept(libc, s);
	check_same_names(plain, again, (uint64_t)st.st_size, &named);
	elf_symtab__free(again);

	/* Proof that the next run reads them: a name changed in the kept file shows. */
	img = test_read_file(kept, &len);
	for (addr = 0x1000; addr < (uint64_t)st.st_size; addr += 61) {
		name = elf_symtab__lookup(plain, addr, &off);
		if (name && strlen(name) >= 6 && strlen(name) < 200)
			break;
	}
	CHECK(name);
	name = strdup(name);
	CHECK(name);
	letter = rename_all(img, len, name);
	symbol_file__seal(img, len);
	replace_file(kept, img, len);
	again = open_kept(libc, s);
	CHECK(elf_symtab__lookup(again, addr, &off)[0] == letter);
	CHECK_STR(elf_symtab__lookup(again, addr, &off) + 1, name + 1);
	elf_symtab__free(again);
	free((char *)name);

	/* A kept file that fails a check is loaded afresh, and kept again. */
	img[len / 2] ^= 1;
	replace_file(kept, img, len);
	again = open_kept(libc, s);
	check_same_names(plain, again, (uint64_t)st.st_size, &named);
	elf_symtab__free(again);
	again = open_kept(libc, s);
	check_same_names(plain, again, (uint64_t)st.st_size, &named);
	free(img);
	elf_symtab__free(again);
	elf_symtab__free(first);
	elf_symtab__free(plain);
	table_store__free(s);
}
