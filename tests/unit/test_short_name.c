// SPDX-License-Identifier: MIT
/*
 * The summary's short names (issue 38, item 9): return types, template
 * arguments, parameter lists and their qualifiers go; operator names,
 * anonymous namespaces, Rust qualified paths and clone tags stay.
 */
#include <string.h>

#include "lib/short_name.h"
#include "test.h"

static void check_short(const char *name, const char *want)
{
	char buf[512];

	short_name__trim(name, buf, sizeof(buf));
	if (strcmp(buf, want))
		test_fail(__FILE__, __LINE__, "'%s' became '%s', want '%s'", name, buf, want);
}

TEST(short_name_cxx_signatures)
{
	check_short("main", "main");
	check_short("shapes::Accumulator<long>::add(long, int)", "shapes::Accumulator::add");
	check_short("shapes::mix(unsigned int)", "shapes::mix");
	check_short("void std::sort<int*>(int*, int*)", "std::sort");
	check_short("std::vector<int, std::allocator<int> > const& ns::Foo<long>::get(int) const",
		    "ns::Foo::get");
	check_short("v8::internal::MaybeHandle<v8::internal::Object> v8::internal::(anonymous "
		    "namespace)::Invoke(v8::internal::Isolate*, v8::internal::(anonymous "
		    "namespace)::InvokeParams const&)",
		    "v8::internal::(anonymous namespace)::Invoke");
	check_short("std::_Rb_tree<std::__cxx11::basic_string<char, std::char_traits<char>, "
		    "std::allocator<char> >, std::pair<std::__cxx11::basic_string<char, "
		    "std::char_traits<char>, std::allocator<char> > const, int> >::_M_erase("
		    "std::_Rb_tree_node<std::pair<std::__cxx11::basic_string<char, "
		    "std::char_traits<char>, std::allocator<char> > const, int> >*)",
		    "std::_Rb_tree::_M_erase");
	check_short("Foo::bar() const &&", "Foo::bar");
	check_short("foo(int) [clone .cold]", "foo [clone .cold]");
	check_short("std::__cxx11::basic_string<char>::_M_create[abi:cxx11](unsigned long&)",
		    "std::__cxx11::basic_string::_M_create[abi:cxx11]");
	check_short("Foo::bar()::{lambda(int)#1}::operator()(int) const",
		    "Foo::bar::{lambda#1}::operator()");
	check_short("non-virtual thunk to Foo::~Foo()", "non-virtual thunk to Foo::~Foo");
}

TEST(short_name_operators)
{
	check_short("std::basic_ostream<char>& std::operator<< <std::char_traits<char> >("
		    "std::basic_ostream<char>&, char const*)",
		    "std::operator<<");
	check_short("bool operator<(Foo const&, Foo const&)", "operator<");
	check_short("Foo::operator->() const", "Foo::operator->");
	check_short("Foo::operator new(unsigned long)", "Foo::operator new");
	check_short("Foo::operator unsigned int() const", "Foo::operator unsigned int");
	check_short("Foo<(1>0)>::bar()", "Foo::bar");
	check_short("operators_table(int)", "operators_table");
}

TEST(short_name_rust_paths)
{
	check_short("<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop",
		    "<alloc::vec::Vec as core::ops::drop::Drop>::drop");
	check_short("core::ptr::drop_in_place<alloc::vec::Vec<u8>>", "core::ptr::drop_in_place");
	check_short("<<A as B>::C as D>::e", "<<A as B>::C as D>::e");
}

/* Text that does not close, or no room: a copy as far as it goes, never past buf. */
TEST(short_name_unbalanced_and_small)
{
	char buf[8];

	check_short("f(int", "f(int");
	check_short("a<b", "a<b");
	check_short("x>y", "x>y");
	check_short("", "");
	CHECK_STR(short_name__trim("ns::abcdefghij(int)", buf, sizeof(buf)), "ns::abc");
	CHECK_STR(short_name__trim("ns::f", buf, 1), "");
}
