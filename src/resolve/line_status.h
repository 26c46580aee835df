/* SPDX-License-Identifier: MIT */
/*
 * A frame's source line status, apart from symbolizer.h so that
 * source_lines.h, which the symbolizer includes, need not include it back.
 */
#ifndef CPROF_LINE_STATUS_H
#define CPROF_LINE_STATUS_H

/*
 * Whether a frame has a source line (symbolizer__finish looks them up), or
 * why not. Only user frames a symbol names are looked up.
 */
enum symbolizer_line {
	SYM_LINE_NOT_ASKED,   /* kernel, JIT, unnamed or placeholder frames */
	SYM_LINE_FOUND,	      /* file and line are set */
	SYM_LINE_NO_DEBUG,    /* neither the file nor its debug file has .debug_line */
	SYM_LINE_NO_ROW,      /* the line table covers no row at the address */
	SYM_LINE_UNREADABLE,  /* it did not inflate, or its units could not be read */
	SYM_LINE_REFUSED,     /* over DWARF_MAX_SECTION_BYTES (lib/dwarf_line.h) */
	SYM_LINE_UNSUPPORTED, /* compressed with other than zlib */
	SYM_LINE_CUT_OFF,     /* the run's time for loading was over (load_budget.h) */
	/*
	 * No frame's status: where the summary counts samples by their leaf's
	 * status (summary__line_samples), the samples with an inlined function
	 * in any frame, beside them.
	 */
	SYM_LINE_INLINED,
	SYM_LINE_MAX,
};

#endif
