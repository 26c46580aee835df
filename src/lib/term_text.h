/* SPDX-License-Identifier: MIT */
/*
 * Names from outside (process names, file paths, symbols) are data: shown
 * on a terminal raw, their escape sequences and newlines would retitle the
 * window, clear the screen or forge lines of cprof's own. One rule says
 * which bytes a terminal could act on, for every writer that shows names:
 * C0 controls (newline, tab, ESC...), DEL, C1 controls (U+0080-U+009F) and
 * the bidirectional overrides that reorder a line, and every byte outside
 * valid UTF-8 (a lone 0x9b is CSI to an 8-bit terminal).
 */
#ifndef CPROF_TERM_TEXT_H
#define CPROF_TERM_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The length of the character at s (n > 0 bytes left): a UTF-8 sequence, or
 * one byte when s does not start a valid one; *control says whether a
 * terminal could act on it.
 */
size_t term_text__char(const char *s, size_t n, bool *control);

/*
 * s for a terminal: every byte of a control character as \xHH, the rest as
 * it is, into buf (size > 0; cut at a character to fit). Returns buf.
 */
const char *term_text__escape(const char *s, char *buf, size_t size);

/*
 * Whether s shows nothing to tell it by: empty, or only spaces and control
 * characters (whose escapes say nothing of what they name).
 */
bool term_text__blank(const char *s);

#endif
