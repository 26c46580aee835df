/* SPDX-License-Identifier: MIT */
/*
 * What a frame holds, said where the frame is made (the symbolizer, the
 * session's placeholders) and carried with it into the profile: the
 * summary and the flame graph read it here, never from the frame's name,
 * which for code is whatever its file or perf map says (a user's function
 * may well be called "[truncated: x]"). Whether a frame is the kernel's is
 * said apart (a lost kernel stack is both kernel and lost).
 */
#ifndef CPROF_FRAME_KIND_H
#define CPROF_FRAME_KIND_H

#include <stdbool.h>

enum frame_kind {
	FRAME_CODE,	 /* code a symbol names: an ELF file's (user) or kallsyms' (kernel) */
	FRAME_JIT,	 /* named code in memory no file holds, or a memfd: JIT code's places */
	FRAME_UNNAMED,	 /* code no symbol names: MODULE+0xOFFSET, [unknown], [kernel] */
	FRAME_WAITING,	 /* code named when the profile is finished; a stand-in until then */
	FRAME_TRUNCATED, /* no code: the root end of a walk that stopped ("[truncated: ...]") */
	FRAME_LOST,	 /* no code: a lost stack ("[user stack lost: ...]", "[no stack]") */
	FRAME_KINDS,
};

/* Whether a symbol or a perf map names the code (the others' names are cprof's own). */
static inline bool frame_kind__named(enum frame_kind kind)
{
	return kind == FRAME_CODE || kind == FRAME_JIT;
}

/* The text of a truncated walk's placeholder: this, why, and "]". */
#define FRAME_TRUNCATED_PREFIX "[truncated: "

#endif
