// SPDX-License-Identifier: MIT
/*
 * One generation's frame table: equal answers share an id and different
 * ones do not, names are interned once and shown demangled without their
 * symbol version, and ids of another table or none answer NULL.
 */
#include "resolve/frame_table.h"
#include "test.h"

TEST(frame_table_equal_frames_share_an_id)
{
	struct frame_table *t = frame_table__new();
	uint32_t a, b, c, d;

	CHECK(t);
	a = frame_table__add_frame(t, 1, 0x1000, "main", false, FRAME_CODE);
	b = frame_table__add_frame(t, 1, 0x1000, "main", false, FRAME_CODE);
	c = frame_table__add_frame(t, 1, 0x1001, "main", false, FRAME_CODE);
	d = frame_table__add_frame(t, 1, 0x1000, "main", true, FRAME_CODE);
	CHECK(a && c && d);
	CHECK_INT(a, ==, b);
	CHECK_INT(a, !=, c);
	CHECK_INT(a, !=, d);
	CHECK_INT(c, !=, d);
	CHECK_STR(frame_table__frame(t, a)->name, "main");
	CHECK(frame_table__frame(t, a)->name == frame_table__frame(t, c)->name);
	CHECK(!frame_table__frame(t, 0));
	CHECK(!frame_table__frame(t, d + 1));
	frame_table__free(t);
}

TEST(frame_table_names_shown_demangled_without_version)
{
	struct frame_table *t = frame_table__new();
	const struct symbolizer_frame *f;
	uint32_t id, unknown;

	CHECK(t);
	id = frame_table__add_frame(t, 0, 1, "_ZN5cprof4test10mangled_fnEi", false, FRAME_CODE);
	f = frame_table__frame(t, id);
	CHECK_STR(f->name, "cprof::test::mangled_fn(int)");
	CHECK_STR(f->system_name, "_ZN5cprof4test10mangled_fnEi");
	id = frame_table__add_frame(t, 0, 2, "clock_gettime@@GLIBC_2.17", false, FRAME_CODE);
	f = frame_table__frame(t, id);
	CHECK_STR(f->name, "clock_gettime");
	CHECK_STR(f->system_name, "clock_gettime@@GLIBC_2.17");
	/* An unknown frame's name is a placeholder or an address: shown as is. */
	unknown = frame_table__add_frame(t, 0, 3, "_ZN5cprof4test10mangled_fnEi", false,
					 FRAME_UNNAMED);
	CHECK_STR(frame_table__frame(t, unknown)->name, "_ZN5cprof4test10mangled_fnEi");
	CHECK(frame_table__intern(t, "x") == frame_table__intern(t, "x"));
	frame_table__free(t);
}

TEST(frame_table_modules_by_content)
{
	struct frame_table *t = frame_table__new();
	struct symbolizer_module m = {.start = 0x1000, .limit = 0x2000};
	uint32_t a, b, c;

	CHECK(t);
	m.path = frame_table__intern(t, "/bin/true");
	m.build_id = frame_table__intern(t, "");
	a = frame_table__add_module(t, &m);
	b = frame_table__add_module(t, &m);
	m.offset = 0x1000;
	c = frame_table__add_module(t, &m);
	CHECK(a && c);
	CHECK_INT(a, ==, b);
	CHECK_INT(a, !=, c);
	CHECK_STR(frame_table__module(t, a)->path, "/bin/true");
	CHECK_U64(frame_table__module(t, c)->offset, ==, 0x1000);
	CHECK(!frame_table__module(t, c + 1));
	CHECK(!frame_table__kernel(t)->module);
	CHECK(frame_table__kernel(t)->ids[0] && frame_table__kernel(t)->ids[1]);
	frame_table__free(t);
}

TEST(frame_table_free_null)
{
	frame_table__free(NULL);
}
