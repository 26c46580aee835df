/* SPDX-License-Identifier: MIT */
/*
 * What the symbolizer hands out for an address: the frame, its module and
 * the functions inlined there. Apart from symbolizer.h so that the frame
 * table, which holds them, need not include the symbolizer that holds it.
 */
#ifndef CPROF_SYMBOLIZER_FRAME_H
#define CPROF_SYMBOLIZER_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "resolve/frame_kind.h"
#include "resolve/line_status.h"

/* Where code was: a mapping of a file or of anonymous memory, or the kernel. */
struct symbolizer_module {
	uint64_t start;	      /* runtime start address */
	uint64_t limit;	      /* runtime end address (exclusive) */
	uint64_t offset;      /* file offset of start */
	const char *path;     /* "" for anonymous memory */
	const char *build_id; /* lowercase hex GNU build ID; "" if unknown */
	bool kernel;	      /* the kernel image pseudo-module */
	/* The program's own file: the lowest file-backed code mapping of its address space. */
	bool main_exe;
};

/* The answer for one address (or a placeholder for what was lost). */
struct symbolizer_frame {
	uint64_t address;	 /* runtime instruction address; 0 for a placeholder */
	uint32_t module;	 /* module id, 0 = none */
	const char *name;	 /* display name, never NULL (a fallback if unknown) */
	const char *system_name; /* raw/mangled name; == name when no demangling */
	bool kernel;		 /* kernel-space frame */
	bool unknown;		 /* no symbol: name is a module+offset fallback or a placeholder */
	bool function_start;	 /* unknown, named FILE+0xSTART of its function (.eh_frame_hdr) */
	bool waiting;		 /* its name comes with symbolizer__finish; a stand-in until then */
	uint8_t kind;		 /* enum frame_kind: what the frame holds, whatever its name */
	/* Set by symbolizer__finish: source file (NULL: none) and line, or why there are none. */
	const char *file;
	uint32_t line;
	uint8_t line_status; /* enum symbolizer_line */
	/*
	 * The functions inlined at the address (symbolizer__inlines), innermost
	 * first; file and line are then the outermost call's, in name's code.
	 */
	uint16_t ninlines;
	uint32_t inline_first;
};

/* An inlined function at a frame's address, and the file and line in its code. */
struct symbolizer_inline {
	const char *name;	 /* display name (demangled) */
	const char *system_name; /* raw name */
	const char *file;	 /* NULL: unknown */
	uint32_t line;
};

#endif
