// SPDX-License-Identifier: MIT
/*
 * .eh_frame_hdr and .eh_frame come from the profiled programs (and the
 * kernel's vDSO). An input that starts like an ELF file is an image for
 * eh_frame_hdr__from_elf; any other is two raw sections behind a small
 * header (struct raw_head). Every answer must be consistent: an FDE found
 * for an address covers it.
 *
 * Each section gets its own exact-size copy, so that ASan catches a read
 * past the end of either one.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/eh_frame_hdr.h"

struct raw_head {
	uint8_t flags; /* bit 0: 32-bit addresses; bit 1: a data base */
	uint8_t hdr_size[2];
	uint8_t hdr_vaddr[8];
	uint8_t eh_frame_vaddr[8];
	uint8_t data_base[8];
};

static void check_fde(const struct cfi_fde *f, uint64_t vaddr)
{
	if (vaddr - f->pc_begin >= f->pc_range)
		abort();
}

static void probe(const struct eh_frame_hdr *h, const uint8_t *data, size_t size)
{
	struct cfi_fde fde;
	uint64_t a, begin, end;
	size_t i;

	for (i = 0; i < eh_frame_hdr__count(h) && i < 256; i++) {
		if (eh_frame_hdr__fde(h, i, &fde))
			continue;
		if (fde.insns_size > size || fde.cie_insns_size > size)
			abort();
		begin = fde.pc_begin;
		end = begin + fde.pc_range;
		if (eh_frame_hdr__find(h, begin, &fde) == 0)
			check_fde(&fde, begin);
		if (end && eh_frame_hdr__find(h, end - 1, &fde) == 0)
			check_fde(&fde, end - 1);
		if (eh_frame_hdr__find(h, end, &fde) == 0)
			check_fde(&fde, end);
	}
	/* Addresses from the tail of the input. */
	for (i = 0; i < 8 && 8 * (i + 1) <= size; i++) {
		memcpy(&a, data + size - 8 * (i + 1), 8);
		if (eh_frame_hdr__find(h, a, &fde) == 0)
			check_fde(&fde, a);
	}
}

static void raw_sections(const uint8_t *data, size_t size)
{
	struct eh_frame_sections sec = {0};
	struct eh_frame_hdr *h = NULL;
	struct raw_head head;
	uint8_t *hdr, *ehf;
	size_t hsize;

	if (size < sizeof(head))
		return;
	memcpy(&head, data, sizeof(head));
	data += sizeof(head);
	size -= sizeof(head);
	hsize = (size_t)head.hdr_size[0] | (size_t)head.hdr_size[1] << 8;
	if (hsize > size)
		hsize = size;
	hdr = malloc(hsize ? hsize : 1);
	ehf = malloc(size - hsize ? size - hsize : 1);
	if (!hdr || !ehf)
		goto cleanup;
	memcpy(hdr, data, hsize);
	memcpy(ehf, data + hsize, size - hsize);
	sec.hdr = hdr;
	sec.hdr_size = hsize;
	sec.eh_frame = ehf;
	sec.eh_frame_size = size - hsize;
	memcpy(&sec.hdr_vaddr, head.hdr_vaddr, 8);
	memcpy(&sec.eh_frame_vaddr, head.eh_frame_vaddr, 8);
	memcpy(&sec.data_base, head.data_base, 8);
	sec.has_data_base = head.flags & 2;
	sec.addr_size = head.flags & 1 ? 4 : 8;
	if (eh_frame_hdr__new(&sec, &h) == 0) {
		probe(h, data, size);
		eh_frame_hdr__free(h);
	}
cleanup:
	free(hdr);
	free(ehf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eh_frame_hdr *h = NULL;
	uint8_t *copy;

	if (size < SELFMAG || memcmp(data, ELFMAG, SELFMAG)) {
		raw_sections(data, size);
		return 0;
	}
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (eh_frame_hdr__from_elf(copy, size, &h) == 0) {
		probe(h, copy, size);
		eh_frame_hdr__free(h);
	}
	free(copy);
	return 0;
}
