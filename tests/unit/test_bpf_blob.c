// SPDX-License-Identifier: MIT
/*
 * The BPF objects gzipped in the binary: each inflates to an ELF file of
 * the size the build gave it, once (the same bytes on every call, as libbpf
 * needs them alive), and an unknown name gets nothing.
 */
#include <string.h>

#include "sample/bpf_blob.h"
#include "test.h"

TEST(bpf_blob_objects_inflate_to_elf)
{
	static const char *const names[] = {"sampler", "unwinder", "ksym_names"};
	size_t i, sz, again;

	for (i = 0; i < sizeof(names) / sizeof(*names); i++) {
		const unsigned char *b = bpf_blob__bytes(names[i], &sz);

		CHECK(b != NULL);
		CHECK(sz > 1000);
		CHECK(b && memcmp(b,
				  "\x7f"
				  "ELF",
				  4) == 0);
		CHECK(bpf_blob__bytes(names[i], &again) == (const void *)b);
		CHECK_INT(again, ==, sz);
	}
	CHECK(bpf_blob__bytes("nosuch", &sz) == NULL);
	CHECK_INT(sz, ==, 0);
}
