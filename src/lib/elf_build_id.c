// SPDX-License-Identifier: MIT
/* The GNU build ID of an ELF file; see elf_build_id.h. */
#include <stdbool.h>
#include <string.h>

#include "lib/elf_build_id.h"

size_t elf_build_id__in_notes(Elf_Data *data, uint8_t id[ELF_BUILD_ID_MAX])
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (off < data->d_size && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off))) {
		const char *name = (const char *)data->d_buf + name_off;

		/* gelf_getnote checked that name and desc lie within data. */
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    nh.n_descsz > 0 && nh.n_descsz <= ELF_BUILD_ID_MAX) {
			memcpy(id, (const uint8_t *)data->d_buf + desc_off, nh.n_descsz);
			return nh.n_descsz;
		}
		if (next <= off)
			break;
		off = next;
	}
	return 0;
}

size_t elf_build_id__hex(const uint8_t *id, size_t n, char *buf, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (!size)
		return 0;
	for (i = 0; i < n && 2 * i + 2 < size; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * i] = '\0';
	return 2 * i;
}

static uint64_t align4(uint64_t v)
{
	return (v + 3) & ~(uint64_t)3;
}

size_t elf_build_id__in_raw_notes(const void *buf, size_t len, uint8_t id[ELF_BUILD_ID_MAX])
{
	const uint8_t *p = buf;
	uint64_t off = 0, desc, end;
	uint32_t h[3]; /* name size, description size, type */

	while (off <= len && len - off >= sizeof(h)) {
		memcpy(h, p + off, sizeof(h));
		desc = align4(off + sizeof(h) + h[0]);
		end = desc + h[1];
		if (end > len)
			return 0;
		if (h[2] == NT_GNU_BUILD_ID && h[0] == 4 &&
		    !memcmp(p + off + sizeof(h), "GNU", 4) && h[1] > 0 &&
		    h[1] <= ELF_BUILD_ID_MAX) {
			memcpy(id, p + desc, h[1]);
			return h[1];
		}
		off = align4(end);
	}
	return 0;
}

static bool in_file(uint64_t off, uint64_t size, uint64_t file_size)
{
	return size && off <= file_size && size <= file_size - off;
}

size_t elf_build_id(Elf *elf, uint64_t file_size, uint8_t id[ELF_BUILD_ID_MAX])
{
	size_t phnum = 0, i, n = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	Elf_Data *d;

	if (elf_getphdrnum(elf, &phnum))
		phnum = 0;
	for (i = 0; i < phnum && !n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE ||
		    !in_file(ph.p_offset, ph.p_filesz, file_size))
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (d)
			n = elf_build_id__in_notes(d, id);
	}
	while (!n && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    (sh.sh_flags & SHF_COMPRESSED) || !in_file(sh.sh_offset, sh.sh_size, file_size))
			continue;
		d = elf_getdata(scn, NULL);
		if (d)
			n = elf_build_id__in_notes(d, id);
	}
	return n;
}
