# SPDX-License-Identifier: MIT
#
# cprof build: BPF object -> skeleton -> static user-space binary.
# `./build.sh` installs the toolchain and third-party sources, then runs make.
# Quiet unless V=1. Everything generated lives in .output/.
#
# FLAVOR selects the toolchain:
#   x86_64  static musl binary (default on x86_64 hosts)
#   asan    glibc + AddressSanitizer/UBSan, for the sanitizer test run
#   arm64   static musl cross build with clang (see third_party/build.sh);
#           `make arm64` builds .output/arm64/cprof on any host
#   fuzz    clang with libFuzzer coverage + ASan/UBSan, for tests/fuzz (deps of asan)

HOST_ARCH := $(shell uname -m)
FLAVOR ?= $(HOST_ARCH)
OUT := .output/$(FLAVOR)
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip

ifeq ($(FLAVOR),fuzz)
# Library code gets coverage instrumentation too, or libFuzzer fuzzes blind.
CC := clang
BPF_ARCH := x86
DEPS_FLAVOR := asan
SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
EXTRA_CFLAGS := $(SAN) -O1
EXTRA_LDFLAGS := -fsanitize=fuzzer,address,undefined
STATIC :=
else ifeq ($(FLAVOR),asan)
CC := clang
BPF_ARCH := x86
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
EXTRA_CFLAGS := $(SAN) -O1
EXTRA_LDFLAGS := $(SAN)
STATIC :=
else ifeq ($(FLAVOR),arm64)
CC := $(CURDIR)/.output/arm64/toolchain/cc
BPF_ARCH := arm64
EXTRA_CFLAGS := -O2
STATIC := -static
else
CC := musl-gcc
BPF_ARCH := x86
# src/lib/memcpy.c takes the place of musl's (it says why).
EXTRA_CFLAGS := -O2 -DCPROF_OWN_MEMCPY
STATIC := -static
endif

DEPS_FLAVOR ?= $(FLAVOR)
DEPS := .output/$(DEPS_FLAVOR)/deps

BPF_OUT := .output/bpf-$(BPF_ARCH)
# Kernels before 5.3 reject any backward jump, loop or not; clang's tail
# merging makes shared blocks that are reached by jumping back. The test
# tests/gates/bpf_object.sh checks the result.
BPF_CFLAGS := -mllvm -enable-tail-merge=false
BLOBS := $(BPF_OUT)/sampler.bpf.gz.inc $(BPF_OUT)/unwinder.bpf.gz.inc \
	$(BPF_OUT)/ksym_names.bpf.gz.inc
SKEL := $(BPF_OUT)/sampler.skel.h $(BPF_OUT)/unwinder.skel.h $(BPF_OUT)/ksym_names.skel.h $(BLOBS)

CFLAGS := -std=gnu11 -g -Wall -Wextra -Werror -Wno-missing-field-initializers \
	-D_GNU_SOURCE -fno-omit-frame-pointer $(EXTRA_CFLAGS) \
	-Isrc -Ibpf -I$(BPF_OUT) -I$(OUT) -I$(DEPS)/include -idirafter $(DEPS)/uapi
# A GNU build ID names the binary's content: its own unwind table is kept in
# the table store by it (a command's process runs cprof until its exec), and
# debuginfod and symbol stores key on it.
LDFLAGS := $(STATIC) -Wl,--build-id=sha1 $(EXTRA_LDFLAGS)
# mbedTLS (TLS for uploads) is three archives, each needing the next.
LDLIBS := -L$(DEPS)/lib -lbpf -lelf -lz -liberty-demangle -lmbedtls -lmbedx509 -lmbedcrypto
# The static binaries allocate with mimalloc (third_party/build.sh says why);
# an object, not an archive, so that its malloc is taken before musl's.
ifneq ($(STATIC),)
LDLIBS += $(DEPS)/lib/mimalloc.o
# The shipped binaries keep only the functions and data cprof reaches (the
# deps are built with a section each too: third_party/build.sh).
CFLAGS += -ffunction-sections -fdata-sections
LDFLAGS += -Wl,--gc-sections
endif

SRCS := $(sort $(wildcard src/*.c src/*/*.c))
OBJS := $(patsubst src/%.c,$(OUT)/obj/%.o,$(SRCS))
LIB_OBJS := $(filter-out $(OUT)/obj/main.o,$(OBJS))
TEST_SRCS := $(sort $(wildcard tests/unit/*.c))
TEST_OBJS := $(patsubst tests/unit/%.c,$(OUT)/obj/tests/%.o,$(TEST_SRCS))

FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZERS := $(patsubst tests/fuzz/%.c,.output/fuzz/bin/%,$(FUZZ_SRCS))

FIXTURE_SRCS := $(sort $(wildcard fixtures/src/*.c))
FIXTURES := $(patsubst fixtures/src/%.c,.output/fixtures/%,$(FIXTURE_SRCS))

.DELETE_ON_ERROR:

.PHONY: FORCE all deps cprof unit-tests fuzzers fixtures guest-fixtures arm64 test check test-unit demo \
	clean distclean format format-files

all: cprof fixtures

deps: $(DEPS)/.stamp

$(DEPS)/.stamp: third_party/build.sh third_party/fetch.sh third_party/versions \
		$(wildcard third_party/patches/*/*.patch) third_party/mbedtls/cprof_mbedtls_config.h
	$(call msg,DEPS,$(DEPS_FLAVOR))
	$(Q)third_party/build.sh $(DEPS_FLAVOR)

# The BPF object is built without any CO-RE relocation so that it also loads
# on kernels without /sys/kernel/btf/vmlinux; bpf/sampler_abi.h is shared with user space.
$(BPF_OUT)/sampler.bpf.o: bpf/sampler.bpf.c bpf/sample.h bpf/sampler_abi.h Makefile $(DEPS)/.stamp | $(BPF_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) $(BPF_CFLAGS) -I$(DEPS)/include \
		-idirafter $(DEPS)/uapi -Wall -Werror -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

# The unwinder needs Linux 5.5 (bpf_probe_read_user): an object of its own,
# so that the sampler's stays loadable on 4.18.
$(BPF_OUT)/unwinder.bpf.o: bpf/unwinder.bpf.c bpf/sample.h bpf/unwind_abi.h bpf/unwind_step.h bpf/sampler_abi.h \
		Makefile $(DEPS)/.stamp | $(BPF_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -I$(DEPS)/include \
		-idirafter $(DEPS)/uapi -Wall -Werror -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

# Names kernel addresses with the kernel's own lookup (Linux 5.14+; else
# /proc/kallsyms is read): global data and a loop are fine here.
$(BPF_OUT)/ksym_names.bpf.o: bpf/ksym_names.bpf.c bpf/ksym_names_abi.h Makefile $(DEPS)/.stamp | $(BPF_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -I$(DEPS)/include \
		-idirafter $(DEPS)/uapi -Wall -Werror -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(BPF_OUT)/ksym_names.skel.h: $(BPF_OUT)/ksym_names.bpf.o bpf/compress_skeleton.awk
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name ksym_names_bpf > $@.tmp
	$(Q)awk -v skel=ksym_names_bpf -v blob=ksym_names -f bpf/compress_skeleton.awk $@.tmp > $@
	$(Q)rm -f $@.tmp

$(BPF_OUT)/unwinder.skel.h: $(BPF_OUT)/unwinder.bpf.o bpf/compress_skeleton.awk
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name unwinder_bpf > $@.tmp
	$(Q)awk -v skel=unwinder_bpf -v blob=unwinder -f bpf/compress_skeleton.awk $@.tmp > $@
	$(Q)rm -f $@.tmp

$(BPF_OUT)/sampler.skel.h: $(BPF_OUT)/sampler.bpf.o bpf/compress_skeleton.awk
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sampler_bpf > $@.tmp
	$(Q)awk -v skel=sampler_bpf -v blob=sampler -f bpf/compress_skeleton.awk $@.tmp > $@
	$(Q)rm -f $@.tmp

# The objects, gzipped, as C array elements for src/sample/bpf_blob.c (the
# skeletons take their bytes from there: bpf/compress_skeleton.awk).
$(BLOBS): $(BPF_OUT)/%.bpf.gz.inc: $(BPF_OUT)/%.bpf.o
	$(call msg,GZIP,$@)
	$(Q)gzip -9 -n -c $< | od -An -v -tx1 | \
		awk '{ for (i = 1; i <= NF; i++) printf "0x%s,", $$i; print "" }' > $@

# Rewritten only when the version or commit changes, so main.o rebuilds then and only then.
$(OUT)/version.h: FORCE | $(OUT)/obj
	$(Q)printf '#define CPROF_VERSION "%s"\n#define CPROF_GIT_REV "%s"\n' '$(VERSION)' \
		'$(GIT_REV)' > $@.tmp
	$(Q)cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(OUT)/obj/main.o: $(OUT)/version.h

# The flame graph's script and style sheet (src/encode/flamegraph.js, .css)
# as C string literals for src/encode/svg.c, without indentation and
# whole-line // comments: the binary carries the code, the repository its
# explanations. A "]]>" would end the SVG's CDATA section early.
$(OUT)/flamegraph_%.inc: src/encode/flamegraph.% Makefile | $(OUT)/obj
	$(call msg,GEN,$@)
	$(Q)! grep -n ']]>' $< || { echo "$<: ']]>' would end the SVG's CDATA section" >&2; exit 1; }
	$(Q)sed -e 's/^[[:space:]]*//' -e '/^\/\//d' -e '/^$$/d' -e 's/\\/\\\\/g' -e 's/"/\\"/g' \
		-e 's/^/"/' -e 's/$$/\\n"/' $< > $@

$(OUT)/obj/encode/svg.o: $(OUT)/flamegraph_js.inc $(OUT)/flamegraph_css.inc

# The unwind table builder, named by a hash of its sources: a table kept on
# disk (src/unwind/kept_tables.c) is read back only by the builder that made it.
TABLE_BUILDER_SRCS := $(sort $(wildcard src/unwind/*.c src/unwind/*.h)) bpf/unwind_abi.h \
	bpf/sampler_abi.h bpf/mix64.h src/lib/elf_image.c src/lib/elf_image.h src/store/kept_image.c \
	src/lib/go_pclntab.c src/lib/go_pclntab.h
$(OUT)/table_builder.h: $(TABLE_BUILDER_SRCS) | $(OUT)/obj
	$(Q)printf '#define CPROF_TABLE_BUILDER "%s"\n' \
		"$$(cat $(TABLE_BUILDER_SRCS) | sha256sum | cut -c1-16)" > $@

$(OUT)/obj/unwind/kept_tables.o: $(OUT)/table_builder.h

# The symbol loader, likewise: symbols kept on disk (src/resolve/symbol_file.h)
# are read back only by the loader that made them.
SYMBOL_LOADER_SRCS := src/resolve/elf_symtab.c src/resolve/elf_symtab_ranges.c \
	src/resolve/elf_symtab_kept.c src/resolve/elf_symtab_starts.c src/resolve/elf_symtab_internal.h \
	src/resolve/elf_plt.c src/resolve/elf_plt.h \
	src/lib/go_pclntab.c src/lib/go_pclntab.h src/resolve/symbol_rank.h \
	src/resolve/symbol_file.c src/resolve/symbol_file.h src/lib/elf_build_id.c \
	src/unwind/eh_frame_hdr.c src/unwind/eh_frame_hdr.h src/unwind/cfi_entries.c \
	src/store/kept_image.c
$(OUT)/symbol_loader.h: $(SYMBOL_LOADER_SRCS) | $(OUT)/obj
	$(Q)printf '#define CPROF_SYMBOL_LOADER "%s"\n' \
		"$$(cat $(SYMBOL_LOADER_SRCS) | sha256sum | cut -c1-16)" > $@

$(OUT)/obj/resolve/elf_symtab_kept.o: $(OUT)/symbol_loader.h

FORCE:

$(OUT)/obj/%.o: src/%.c $(SKEL) $(DEPS)/.stamp | $(OUT)/obj
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/obj/tests/%.o: tests/unit/%.c $(SKEL) $(DEPS)/.stamp | $(OUT)/obj/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -MMD -MP -c $< -o $@

$(OUT)/cprof: $(OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUT)/unit_tests: $(TEST_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The shipped binary keeps its symbol table (cprof can profile itself) but not DWARF.
ifeq ($(FLAVOR),$(HOST_ARCH))
cprof: $(OUT)/cprof
	$(Q)$(LLVM_STRIP) --strip-debug -o cprof $(OUT)/cprof
else
cprof: $(OUT)/cprof
endif

unit-tests: $(OUT)/unit_tests

# libFuzzer targets (tests/fuzz/fuzz_*.c) over the parsers of outside input.
# `make fuzzers` builds them in the fuzz flavor; tests/fuzz/run runs them.
ifeq ($(FLAVOR),fuzz)
# The demanglers are fuzzed through demangle.c: compiled here with coverage,
# linked before the deps' uninstrumented archive, so libFuzzer sees into them.
IBERTY_SRC := third_party/src/libiberty/libiberty
IBERTY_OBJS := $(patsubst %,$(OUT)/obj/iberty/%.o,cp-demangle rust-demangle safe-ctype)
.SECONDARY: $(IBERTY_OBJS)

$(OUT)/obj/iberty/%.o: $(DEPS)/.stamp
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -DHAVE_STDLIB_H -DHAVE_STRING_H -DHAVE_LIMITS_H -g $(EXTRA_CFLAGS) \
		-I$(IBERTY_SRC)/../include -c $(IBERTY_SRC)/$*.c -o $@

.output/fuzz/bin/%: tests/fuzz/%.c $(LIB_OBJS) $(IBERTY_OBJS) | .output/fuzz/bin
	$(call msg,FUZZER,$@)
	$(Q)$(CC) $(CFLAGS) $(EXTRA_LDFLAGS) $< $(LIB_OBJS) $(IBERTY_OBJS) $(LDLIBS) -o $@

fuzzers: $(FUZZERS)
else
fuzzers:
	$(Q)$(MAKE) --no-print-directory FLAVOR=fuzz fuzzers
endif

.output/fuzz/bin:
	$(Q)mkdir -p $@

# Fixtures are ordinary glibc programs, as a user's workload would be: dynamic,
# PIE unless the name says nopie, frame pointers in every function so stacks
# are complete. clang, because GCC 12 skips the frame setup in leaf functions
# that use no stack even with -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer,
# which hides the caller of a sampled leaf from a frame-pointer unwinder.
FIXTURE_CFLAGS := -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline \
	-fno-optimize-sibling-calls -Wall -Werror
.output/fixtures/%: fixtures/src/%.c | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)$(CLANG) $(FIXTURE_CFLAGS) $(if $(findstring nopie,$*),-no-pie -fno-pie,) -o $@ $< -lpthread

# Fixtures for symbolization tests (tests/e2e/symbolize_*.sh), made from the
# ones above:
# - known_tree_stripped: no symbol table at all, and a .gnu_debuglink (name +
#   CRC32) to known_tree_stripped.debug, its separate debug file;
# - known_tree_buildid: stripped, no debuglink, so only its GNU build ID can
#   find the debug file (the test lays out a DEBUG_DIR/.build-id/ tree);
# - cpp_names: real C++ mangling, compiled as C++ but linked without libstdc++.
SYMBOLIZE_FIXTURES := .output/fixtures/known_tree_stripped .output/fixtures/known_tree_stripped.debug \
	.output/fixtures/known_tree_buildid .output/fixtures/cpp_names
.output/fixtures/known_tree_stripped.debug: .output/fixtures/known_tree
	$(call msg,FIXTURE,$@)
	$(Q)objcopy --only-keep-debug $< $@
.output/fixtures/known_tree_stripped: .output/fixtures/known_tree .output/fixtures/known_tree_stripped.debug
	$(call msg,FIXTURE,$@)
	$(Q)objcopy --strip-all --add-gnu-debuglink=$(word 2,$^) $< $@
.output/fixtures/known_tree_buildid: .output/fixtures/known_tree
	$(call msg,FIXTURE,$@)
	$(Q)objcopy --strip-all $< $@
.output/fixtures/cpp_names: fixtures/src/cpp_names.cc | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)$(CLANG) -x c++ -std=c++17 -fno-exceptions -fno-rtti $(FIXTURE_CFLAGS) -o $@ $<
# end of fixtures for symbolization tests

# The library dlopen_call loads (tests/e2e/mappings.sh). Its source is in
# fixtures/src/lib/, out of the wildcard of the fixture programs.
# brief calls libc through the GOT, not PLT stubs: a lazy-binding stub has no
# symbol (perf names them func@plt, cprof does not yet), and the mapping tests
# check that every frame in brief itself is named.
.output/fixtures/brief: FIXTURE_CFLAGS += -fno-plt
LIB_FIXTURES := .output/fixtures/libplugin.so
.output/fixtures/lib%.so: fixtures/src/lib/%.c | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)$(CLANG) $(FIXTURE_CFLAGS) -shared -fPIC -o $@ $<

# Fixtures of the unwinding test (tests/e2e/unwind.sh), in
# fixtures/src/unwind/: built the way distributions build programs, -O2 and
# no frame pointers (fp_leaf alone keeps them, as GCC does: not in leaves), by
# gcc unless the name says otherwise, and without -fno-inline or
# -fno-optimize-sibling-calls: the sources keep their call trees with
# attributes, and where the compiler makes a tail call the test expects it.
# brief_nofp, dlopen_call_nofp and libplugin_nofp.so are the mapping tests'
# fixtures built this way. static_musl and static_musl_gcc are nofp.c linked
# statically against musl, by the clang musl toolchain (see guest-fixtures;
# lld writes an .eh_frame_hdr) and by musl-gcc, as cprof itself is (GCC asks
# ld for no .eh_frame_hdr in a static link: the FDEs are there, unindexed).
# The Go fixture is built by the test (Go is a test package).
UNWIND_CFLAGS := -O2 -g -fomit-frame-pointer -Wall -Werror
UNWIND_GCC := fp_leaf qsort_cb threads_nofp signal_work
UNWIND_FIXTURES := $(addprefix .output/fixtures/,$(UNWIND_GCC) nofp_gcc nofp_clang static_musl \
	static_musl_gcc cxx_nofp deep_recursion brief_nofp dlopen_call_nofp libplugin_nofp.so)
UNWIND_DEPS := fixtures/src/unwind/unwind.h Makefile
# cfa_regs: x86_64 assembly whose CFA is in rax and behind rdx.
ifeq ($(HOST_ARCH),x86_64)
UNWIND_GCC += cfa_regs
UNWIND_FIXTURES += .output/fixtures/cfa_regs
endif
.output/fixtures/fp_leaf: UNWIND_CFLAGS := -O2 -g -fno-omit-frame-pointer -Wall -Werror
$(addprefix .output/fixtures/,$(UNWIND_GCC)): .output/fixtures/%: fixtures/src/unwind/%.c \
		$(UNWIND_DEPS) | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)gcc $(UNWIND_CFLAGS) -o $@ $< -lpthread
.output/fixtures/nofp_gcc: fixtures/src/unwind/nofp.c $(UNWIND_DEPS) | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)gcc $(UNWIND_CFLAGS) -o $@ $<
.output/fixtures/nofp_clang: fixtures/src/unwind/nofp.c $(UNWIND_DEPS) | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)$(CLANG) $(UNWIND_CFLAGS) -o $@ $<
.output/fixtures/static_musl: fixtures/src/unwind/nofp.c $(UNWIND_DEPS) $(DEPS)/.stamp | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)$(CURDIR)/.output/$(FLAVOR)/toolchain/cc $(UNWIND_CFLAGS) -o $@ $<
.output/fixtures/static_musl_gcc: fixtures/src/unwind/nofp.c $(UNWIND_DEPS) | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)musl-gcc -static $(UNWIND_CFLAGS) -o $@ $<
.output/fixtures/cxx_nofp: fixtures/src/unwind/cxx_nofp.cc $(UNWIND_DEPS) | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)g++ $(UNWIND_CFLAGS) -o $@ $<
.output/fixtures/deep_recursion: fixtures/src/unwind/deep_recursion.cc $(UNWIND_DEPS) \
		| .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)g++ $(UNWIND_CFLAGS) -o $@ $<
# -fno-plt as for brief (above).
.output/fixtures/brief_nofp: fixtures/src/brief.c Makefile | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)gcc $(UNWIND_CFLAGS) -fno-plt -o $@ $<
.output/fixtures/dlopen_call_nofp: fixtures/src/dlopen_call.c Makefile | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)gcc $(UNWIND_CFLAGS) -o $@ $<
.output/fixtures/libplugin_nofp.so: fixtures/src/lib/plugin.c Makefile | .output/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)gcc $(UNWIND_CFLAGS) -shared -fPIC -o $@ $<

fixtures: $(FIXTURES) $(SYMBOLIZE_FIXTURES) $(LIB_FIXTURES) $(UNWIND_FIXTURES)

# Static copies for the QEMU guests of qemu/run, which have no C library: the
# flavor's clang musl toolchain (third_party/build.sh), the same flags.
GUEST_FIXTURES := $(addprefix $(OUT)/fixtures/,known_tree syscall_heavy drop_cap brief)
$(OUT)/fixtures/%: fixtures/src/%.c $(DEPS)/.stamp | $(OUT)/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)$(CURDIR)/.output/$(FLAVOR)/toolchain/cc $(FIXTURE_CFLAGS) -idirafter $(DEPS)/uapi \
		-o $@ $< -lpthread

# musl's dlopen works only in a dynamically linked program: dlopen_call and
# the library it loads are linked against musl's libc.so (toolchain/cc-dynamic),
# which the guest also gets as its dynamic loader (qemu/initramfs.sh).
GUEST_FIXTURES += $(OUT)/fixtures/dlopen_call $(OUT)/fixtures/libplugin.so
$(OUT)/fixtures/dlopen_call: fixtures/src/dlopen_call.c $(DEPS)/.stamp | $(OUT)/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)$(CURDIR)/.output/$(FLAVOR)/toolchain/cc-dynamic $(FIXTURE_CFLAGS) -o $@ $<
$(OUT)/fixtures/lib%.so: fixtures/src/lib/%.c $(DEPS)/.stamp | $(OUT)/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)$(CURDIR)/.output/$(FLAVOR)/toolchain/cc-dynamic $(FIXTURE_CFLAGS) -shared -o $@ $<

# The unwinding test's call tree without frame pointers (-O2, as distributions
# build): on every guest kernel its stacks must be walked whole with its CFI.
GUEST_FIXTURES += $(OUT)/fixtures/nofp
$(OUT)/fixtures/nofp: fixtures/src/unwind/nofp.c $(UNWIND_DEPS) $(DEPS)/.stamp | $(OUT)/fixtures
	$(call msg,FIXTURE,$@)
	$(Q)$(CURDIR)/.output/$(FLAVOR)/toolchain/cc $(UNWIND_CFLAGS) -o $@ $<

guest-fixtures: $(GUEST_FIXTURES)

# The arm64 binary, cross-built: .output/arm64/cprof (./build.sh arm64).
arm64:
	$(Q)$(MAKE) --no-print-directory FLAVOR=arm64 cprof

# bench: the symbolization benchmark driver of bench/run, built like cprof
# and linked against its objects, so it times the code the profiler runs;
# the startup timer (figure 5), which needs only libbpf's syscall wrappers;
# the cost of following every task (events_cost, src/sample/task_events.c);
# bench/stacks' process plumbing (stacks_run); and the unwind tables'
# figures (unwind_tables).
.PHONY: bench test-tools
bench: $(OUT)/symbench $(OUT)/startup $(OUT)/events_cost $(OUT)/stacks_run $(OUT)/unwind_tables

$(OUT)/symbench: bench/symbench.c $(LIB_OBJS) $(DEPS)/.stamp
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

$(OUT)/unwind_tables: bench/unwind_tables.c $(LIB_OBJS) $(DEPS)/.stamp
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

$(OUT)/events_cost: bench/events_cost.c $(LIB_OBJS) $(DEPS)/.stamp
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

# Test tools: cfi_dump prints what the CFI reader finds (tests/e2e/cfi_readelf.sh).
TEST_TOOLS := $(OUT)/cfi_dump
test-tools: $(TEST_TOOLS)
$(OUT)/cfi_dump: tests/tools/cfi_dump.c $(LIB_OBJS) $(DEPS)/.stamp
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

$(OUT)/startup: bench/startup.c $(DEPS)/.stamp
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LDLIBS) -o $@

$(OUT)/stacks_run: bench/stacks_run.c $(DEPS)/.stamp
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -o $@
# end bench

$(BPF_OUT) $(OUT)/obj $(OUT)/obj/tests $(OUT)/fixtures .output/fixtures:
	$(Q)mkdir -p $@

# The whole suite: unit tests (musl and ASan+UBSan builds) and end-to-end tests,
# which check the arm64 build too (its BPF object; the QEMU matrix runs it).
test: all unit-tests
	$(Q)$(MAKE) --no-print-directory FLAVOR=asan unit-tests
	$(Q)$(MAKE) --no-print-directory FLAVOR=arm64 cprof
	$(Q)tests/run

# The developer's quick run (docs/testing.md): the musl unit tests and the
# scripts tagged "# tag: quick"; no ASan build, no arm64 build, no QEMU, no fuzzing.
check: all unit-tests
	$(Q)tests/run --quick

test-unit: unit-tests fixtures
	$(Q)tests/run --unit-only

# README command 1: profile the bundled workload with a known call tree, as
# a pprof profile and as a flame graph.
demo: all
	./cprof -F 499 -o cprof.pb.gz -- .output/fixtures/known_tree 3
	./cprof -F 499 -o cprof.svg -- .output/fixtures/known_tree 3
	@echo "Open cprof.svg in a browser; read cprof.pb.gz with: go tool pprof -top cprof.pb.gz"

clean:
	rm -rf $(OUT) .output/bpf-* .output/fixtures cprof

distclean:
	rm -rf .output third_party/src qemu/cache cprof

# The one list of files under house style; tests/gates/style.sh checks the same list.
FORMAT_FILES := $(sort $(wildcard src/*.[ch] src/*/*.[ch] bpf/*.[ch] tests/unit/*.[ch] \
	tests/fuzz/*.c tests/tools/*.c fixtures/src/*.c fixtures/src/lib/*.c \
	fixtures/src/unwind/*.[ch] fixtures/src/unwind/*.cc fixtures/make_project/*.[ch] bench/*.c \
	bench/workloads/*.c bench/workloads/*.cc))

format:
	clang-format -i $(FORMAT_FILES)

format-files:
	@echo $(FORMAT_FILES)

-include $(wildcard $(OUT)/obj/*.d $(OUT)/obj/*/*.d)
