#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build the pinned third-party libraries for one FLAVOR:
#
#   third_party/build.sh FLAVOR        (FLAVOR: x86_64 | asan | arm64)
#
# Result, all under .output/FLAVOR/deps/ (the Makefile's $(DEPS)):
#   include/  bpf/*.h (libbpf), linux/{bpf,bpf_common,btf}.h (libbpf's newer
#             UAPI copies), libelf.h gelf.h nlist.h, zlib.h zconf.h,
#             libiberty/demangle.h (+ the two headers it includes),
#             mbedtls/*.h psa/*.h (mbedtls/mbedtls_config.h is ours)
#   lib/      libbpf.a libelf.a libz.a libiberty-demangle.a, libmbedtls.a
#             libmbedx509.a libmbedcrypto.a, mimalloc.o (malloc & co.; not
#             in the asan flavor)
#   uapi/     kernel UAPI headers only (linux/ asm/ asm-generic/), for
#             `-idirafter`: musl has no kernel headers of its own, and taking
#             /usr/include whole would pull glibc's headers into a musl build
#   logs/     one log per step; build/ per-flavor build trees; stamps/
#   .stamp    touched last (the Makefile's target)
#
# Sources come from third_party/fetch.sh (pinned in third_party/versions). Each
# package is rebuilt only when its stamp (version, flavor, compiler, flags, this
# script's hash, its dependencies' stamps; for mbedTLS also our configuration's
# hash) changed or an output is missing.
set -euo pipefail

TP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$TP_DIR")
SRC=$TP_DIR/src
JOBS=2

# Run from a parent make, we inherit its MAKEFLAGS (jobserver, command-line
# variables such as CC=...) and whatever CFLAGS-like variables are in the
# environment; zlib's configure and libbpf's make would pick those up. Every
# setting below is passed explicitly instead.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEFILES MAKEOVERRIDES \
	CC AR RANLIB LD CROSS_COMPILE CFLAGS CPPFLAGS LDFLAGS LDLIBS EXTRA_CFLAGS EXTRA_LDFLAGS \
	OBJDIR DESTDIR PREFIX LIBDIR INCLUDEDIR UAPIDIR CHOST \
	MBEDTLS_PATH WARNING_CFLAGS GEN_FILES SHARED DEBUG WINDOWS WINDOWS_BUILD APPLE_BUILD

die() { printf 'third_party/build.sh: %s\n' "$*" >&2; exit 1; }
step() { printf '  %-8s %s\n' "$1" "$2"; }

# ---- flavor table --------------------------------------------------------------
# One entry per flavor: compiler, archiver, flags, and where the kernel UAPI
# headers come from (linux/ and asm-generic/ are arch independent; asm/ is not).
# A cross flavor only needs its own entry here. TRIPLE, MUSL_INC, MUSL_LIB,
# GCC_LIB, MUSL_SO (musl's shared libc.so, which is also its dynamic loader)
# and LDSO (the loader's path in a running system) describe the flavor's clang
# musl toolchain (write_toolchain); CROSS_DEBS are the binary packages
# (third_party/versions) it is made from.
flavor_config() {
	TRIPLE='' CROSS_DEBS=() RANLIB=ranlib
	case $FLAVOR in
	x86_64)
		# The shipped binary: static musl.
		CC=musl-gcc
		AR="ar"
		# A section per function and per object: the binary's link keeps
		# only what cprof calls (--gc-sections in the Makefile).
		CFLAGS="-O2 -fPIC -fno-omit-frame-pointer -ffunction-sections -fdata-sections"
		UAPI_INC=/usr/include
		UAPI_ASM=/usr/include/x86_64-linux-gnu/asm
		UAPI_PKG=linux-libc-dev
		# The clang toolchain builds only the static fixtures for QEMU guests.
		TRIPLE=x86_64-linux-musl
		MUSL_INC=/usr/include/x86_64-linux-musl
		MUSL_LIB=/usr/lib/x86_64-linux-musl
		MUSL_SO=/lib/x86_64-linux-musl/libc.so # Debian's musl, which musl-dev depends on
		LDSO=/lib/ld-musl-x86_64.so.1
		GCC_LIB=$(dirname "$(gcc -print-libgcc-file-name)")
		;;
	asan)
		# Host glibc gcc; the sanitizer build links these with clang. The deps
		# themselves are not instrumented, frame pointers keep ASan's fast
		# unwinder going through them.
		CC=gcc
		AR="ar"
		CFLAGS="-O1 -g -fPIC -fno-omit-frame-pointer"
		UAPI_INC=/usr/include
		UAPI_ASM=/usr/include/x86_64-linux-gnu/asm
		UAPI_PKG=linux-libc-dev
		;;
	arm64)
		# Cross build on any host: clang and lld for aarch64-linux-musl over
		# Debian's arm64 musl, libgcc and UAPI headers, unpacked, not installed.
		CROSS_DEBS=(musl-dev:arm64 musl:arm64 libgcc-12-dev-arm64-cross linux-libc-dev-arm64-cross)
		TRIPLE=aarch64-linux-musl
		MUSL_INC=$SRC/musl-dev_arm64/usr/include/aarch64-linux-musl
		MUSL_LIB=$SRC/musl-dev_arm64/usr/lib/aarch64-linux-musl
		MUSL_SO=$SRC/musl_arm64/lib/aarch64-linux-musl/libc.so
		LDSO=/lib/ld-musl-aarch64.so.1
		GCC_LIB=$SRC/libgcc-12-dev-arm64-cross/usr/lib/gcc-cross/aarch64-linux-gnu/12
		CC=$ROOT/.output/arm64/toolchain/cc
		AR=llvm-ar
		RANLIB=llvm-ranlib
		CFLAGS="-O2 -fPIC -fno-omit-frame-pointer -ffunction-sections -fdata-sections"
		UAPI_INC=$SRC/linux-libc-dev-arm64-cross/usr/aarch64-linux-gnu/include
		UAPI_ASM=$UAPI_INC/asm
		UAPI_PKG=linux-libc-dev-arm64-cross
		;;
	*)
		die "unknown flavor '$FLAVOR' (expected x86_64, asan or arm64)"
		;;
	esac
}

# After fetching and write_toolchain: is everything the flavor names there?
check_toolchain() {
	command -v "$CC" >/dev/null || die "compiler $CC for flavor $FLAVOR not found (run ./build.sh to install the toolchain)"
	command -v "$AR" >/dev/null || die "archiver $AR for flavor $FLAVOR not found (run ./build.sh to install the toolchain)"
	[[ -d $UAPI_ASM ]] || die "kernel UAPI headers not found at $UAPI_ASM (install $UAPI_PKG)"
}

# ---- clang musl toolchain ------------------------------------------------------
# .output/FLAVOR/toolchain/cc: clang as a static musl compiler for TRIPLE, the
# way musl-gcc wraps gcc: musl's headers before clang's own and, when linking,
# musl's crt files and libc.a and libgcc.a around the inputs, linked by lld. An
# empty --sysroot keeps the host's glibc headers and libraries out. It is the
# arm64 flavor's CC; on x86_64 it builds the static fixtures for QEMU guests
# (clang, as for all fixtures: GCC 12 leaves the frame setup out of leaf functions).
# lld would write a short xxHash build ID; sha1 is what GNU ld and debuginfod use.
#
# .output/FLAVOR/toolchain/cc-dynamic: the same compiler linking against musl's
# shared libc.so (copied to toolchain/lib/, alone there so that -lc cannot
# find libc.a): PIE programs whose interpreter is LDSO, and -shared libraries.
# musl's dlopen works only in a dynamically linked program, so the QEMU
# guests' dlopen fixture is built with it; the guest gets toolchain/lib/libc.so
# as its LDSO (musl's libc.so is its own dynamic loader).
write_toolchain() {
	local dir=$ROOT/.output/$FLAVOR/toolchain resource f
	resource=$(clang -print-resource-dir)
	for f in "$MUSL_INC/stdio.h" "$MUSL_LIB/libc.a" "$MUSL_LIB/crt1.o" "$MUSL_LIB/Scrt1.o" "$MUSL_SO" \
		"$GCC_LIB/libgcc.a" "$GCC_LIB/crtbeginT.o" "$GCC_LIB/crtbeginS.o" "$resource/include/stddef.h"; do
		[[ -e $f ]] || die "toolchain for $FLAVOR: $f missing"
	done
	mkdir -p "$dir/sysroot" "$dir/lib"
	install -m 755 "$MUSL_SO" "$dir/lib/libc.so"
	{
		toolchain_prelude static
		cat <<-'EOF'
			exec clang -static -nostdlib -fuse-ld=lld -Wl,--build-id=sha1 -Wno-unused-command-line-argument \
				-L"$musl_lib" "$musl_lib/crt1.o" "$musl_lib/crti.o" "$gcc_lib/crtbeginT.o" "$@" \
				-lc "$gcc_lib/libgcc.a" "$gcc_lib/crtend.o" "$musl_lib/crtn.o"
		EOF
	} >"$dir/cc.tmp"
	{
		toolchain_prelude dynamic -fPIC
		printf '%s=%q\n' libc_dir "$dir/lib" ldso "$LDSO"
		cat <<-'EOF'
			set -- -nostdlib -fuse-ld=lld -Wl,--build-id=sha1 -Wno-unused-command-line-argument "$@"
			[ -n "$shared" ] && exec clang "$@" "$musl_lib/crti.o" "$gcc_lib/crtbeginS.o" \
				-L"$libc_dir" -lc "$gcc_lib/libgcc.a" "$gcc_lib/crtendS.o" "$musl_lib/crtn.o"
			exec clang -pie -Wl,--dynamic-linker="$ldso" "$musl_lib/Scrt1.o" "$musl_lib/crti.o" \
				"$gcc_lib/crtbeginS.o" "$@" -L"$libc_dir" -lc "$gcc_lib/libgcc.a" "$gcc_lib/crtendS.o" \
				"$musl_lib/crtn.o"
		EOF
	} >"$dir/cc-dynamic.tmp"
	chmod +x "$dir/cc.tmp" "$dir/cc-dynamic.tmp"
	mv "$dir/cc.tmp" "$dir/cc"
	mv "$dir/cc-dynamic.tmp" "$dir/cc-dynamic"
}

# toolchain_prelude KIND [FLAGS]: the start of a wrapper script (write_toolchain's
# dir and resource), up to its compile-only exit: musl's and clang's headers,
# FLAGS on every command; sets link (not -c/-S/-E...) and shared (-shared).
toolchain_prelude() {
	echo "#!/bin/sh"
	echo "# Generated by third_party/build.sh: clang as a $1 $TRIPLE compiler."
	printf '%s=%q\n' triple "$TRIPLE" sysroot "$dir/sysroot" musl_inc "$MUSL_INC" \
		musl_lib "$MUSL_LIB" gcc_lib "$GCC_LIB" clang_inc "$resource/include" flags "${2:-}"
	cat <<-'EOF'
		link=1 shared=
		for a in "$@"; do
			case $a in
			-c | -S | -E | -M | -MM | -dumpversion | -dumpmachine | --version) link= ;;
			-shared) shared=1 ;;
			esac
		done
		set -- --target="$triple" --sysroot="$sysroot" -nostdinc -isystem "$musl_inc" \
			-isystem "$clang_inc" $flags "$@"
		[ -z "$link" ] && exec clang "$@"
	EOF
}

# ---- helpers -------------------------------------------------------------------

# log_run LOG CMD...: append CMD's output to LOG; on failure show the end of
# the log and stop. V=1 also shows the output live.
log_run() {
	local log=$1
	shift
	printf '+ %s\n' "$*" >>"$log"
	local rc=0
	if [[ ${V:-} == 1 ]]; then
		"$@" 2>&1 | tee -a "$log" || rc=$?
	else
		"$@" >>"$log" 2>&1 || rc=$?
	fi
	if [[ $rc -ne 0 ]]; then
		echo "---- last 30 lines of $log ----" >&2
		tail -n 30 "$log" >&2
		die "step failed (exit $rc); full log: $log"
	fi
}

in_dir() { cd "$1" && shift && "$@"; }

src_version() { awk -v n="$1" '$1 == "source" && $2 == n { print $3 }' "$TP_DIR/versions"; }

# The stamp key of a package: everything its output depends on. Dependencies'
# keys are folded in, so a rebuilt zlib also rebuilds what was built against it.
pkg_key() {
	local name=$1
	shift
	printf 'package=%s version=%s flavor=%s\n' "$name" "$(src_version "$name")" "$FLAVOR"
	printf 'cc=%s (%s) ar=%s cflags=%s\n' "$CC" "$("$CC" -dumpversion)" "$AR" "$CFLAGS"
	printf 'source=%s\n' "$(sha256sum <"$SRC/$name.fetched" | cut -d' ' -f1)"
	printf 'recipe=%s\n' "$RECIPE"
	printf 'toolchain=%s\n' "$TOOLCHAIN_KEY"
	local dep
	for dep in "$@"; do
		printf 'dep %s=%s\n' "$dep" "$(sha256sum <"$DEPS/stamps/$dep" | cut -d' ' -f1)"
	done
}

# up_to_date NAME KEY OUTPUT...: stamp matches and every output exists.
up_to_date() {
	local name=$1 key=$2 out
	shift 2
	[[ -f $DEPS/stamps/$name && "$(cat "$DEPS/stamps/$name")" == "$key" ]] || return 1
	for out in "$@"; do
		[[ -e $DEPS/$out ]] || return 1
	done
}

# begin_build NAME LOG: fresh build dir and log for a package.
begin_build() {
	rm -f "$DEPS/stamps/$1"
	rm -rf "$DEPS/build/$1"
	mkdir -p "$DEPS/build/$1"
	: >"$2"
}

# ---- kernel UAPI headers -------------------------------------------------------

build_uapi() {
	local key
	key=$(printf 'uapi %s=%s from %s %s\n' "$UAPI_PKG" \
		"$(cat "$SRC/$UAPI_PKG.fetched" 2>/dev/null ||
			dpkg-query -W -f='${Version}' "$UAPI_PKG" 2>/dev/null || echo unknown)" "$UAPI_INC" "$UAPI_ASM")
	up_to_date uapi "$key" uapi/linux/perf_event.h uapi/asm/unistd.h uapi/asm-generic/int-ll64.h && return 0
	step UAPI "$UAPI_ASM ($FLAVOR)"
	rm -f "$DEPS/stamps/uapi"
	rm -rf "$DEPS/uapi"
	mkdir -p "$DEPS/uapi"
	cp -a "$UAPI_INC/linux" "$UAPI_INC/asm-generic" "$DEPS/uapi/"
	cp -a "$UAPI_ASM" "$DEPS/uapi/asm"
	echo "$key" >"$DEPS/stamps/uapi"
}

# ---- zlib ----------------------------------------------------------------------

build_zlib() {
	local key b=$DEPS/build/zlib log=$DEPS/logs/zlib.log
	key=$(pkg_key zlib)
	up_to_date zlib "$key" lib/libz.a include/zlib.h include/zconf.h && return 0
	step BUILD "zlib ($FLAVOR)"
	begin_build zlib "$log"
	# zlib's configure writes into its tree (Makefile, zconf.h): build in a copy.
	cp -a "$SRC/zlib/." "$b/"
	log_run "$log" in_dir "$b" env CC="$CC" AR="$AR" RANLIB="$RANLIB" CFLAGS="$CFLAGS" \
		./configure --static --prefix=/nonexistent
	log_run "$log" make -C "$b" -j"$JOBS" libz.a
	install -m 644 "$b/libz.a" "$DEPS/lib/"
	install -m 644 "$b/zlib.h" "$b/zconf.h" "$DEPS/include/"
	echo "$key" >"$DEPS/stamps/zlib"
}

# ---- libelf (from elfutils) ----------------------------------------------------
# elfutils' configure insists on argp/fts/obstack for its tools, which musl
# lacks; libelf itself needs none of that. So compile exactly libelf_a_SOURCES
# from libelf/Makefile.am, plus lib/eu-search.c (eu_tsearch & co., which
# libelf calls since 0.192), with a config.h made from a few compile probes.

# probe_decl HEADER SYMBOL: 1 if SYMBOL (function or macro) is declared by HEADER.
probe_decl() {
	printf '#include <%s>\nint main(void) {\n#ifndef %s\n(void) %s;\n#endif\nreturn 0; }\n' \
		"$1" "$2" "$2" >"$PROBE_DIR/p.c"
	if "$CC" -D_GNU_SOURCE -c "$PROBE_DIR/p.c" -o "$PROBE_DIR/p.o" >>"$PROBE_LOG" 2>&1; then
		echo 1
	else
		echo 0
	fi
}

# probe_header HEADER: 1 if HEADER exists.
probe_header() {
	printf '#include <%s>\nint main(void) { return 0; }\n' "$1" >"$PROBE_DIR/p.c"
	if "$CC" -D_GNU_SOURCE -c "$PROBE_DIR/p.c" -o "$PROBE_DIR/p.o" >>"$PROBE_LOG" 2>&1; then
		echo 1
	else
		echo 0
	fi
}

write_elfutils_config_h() {
	local out=$1 version error_h
	version=$(sed -n 's/^AC_INIT(\[elfutils\],\[\([^]]*\)\].*/\1/p' "$SRC/elfutils/configure.ac")
	[[ -n $version ]] || die "cannot read the elfutils version from configure.ac"
	PROBE_DIR=$(dirname "$out")
	PROBE_LOG=$DEPS/logs/libelf.log
	# glibc has error.h; musl only err.h (system.h then declares error() itself,
	# which libelf never calls).
	if [[ $(probe_header error.h) == 1 ]]; then
		error_h="#define HAVE_ERROR_H 1"
	elif [[ $(probe_header err.h) == 1 ]]; then
		error_h="#define HAVE_ERR_H 1"
	else
		die "libelf: the C library has neither error.h nor err.h"
	fi
	cat >"$out" <<-EOF
		/* Generated by third_party/build.sh for flavor $FLAVOR ($CC). */
		#define PACKAGE "elfutils"
		#define PACKAGE_NAME "elfutils"
		#define PACKAGE_TARNAME "elfutils"
		#define PACKAGE_VERSION "$version"
		#define PACKAGE_STRING "elfutils $version"
		#define PACKAGE_BUGREPORT "https://sourceware.org/bugzilla"
		#define PACKAGE_URL "http://elfutils.org/"
		#define VERSION "$version"
		#define HAVE_VISIBILITY 1
		#define HAVE_GCC_STRUCT 1
		#define HAVE_FALLTHROUGH 1
		$error_h
		#define HAVE_DECL_MEMPCPY $(probe_decl string.h mempcpy)
		#define HAVE_DECL_MEMRCHR $(probe_decl string.h memrchr)
		#define HAVE_DECL_RAWMEMCHR $(probe_decl string.h rawmemchr)
		#define HAVE_DECL_REALLOCARRAY $(probe_decl stdlib.h reallocarray)
		#define HAVE_DECL_POWEROF2 $(probe_decl sys/param.h powerof2)
		#define HAVE_STDATOMIC_H $(probe_header stdatomic.h)
	EOF
	# mremap is a GNU extension (both glibc and musl have it).
	[[ $(probe_decl sys/mman.h mremap) == 1 ]] && echo "#define HAVE_MREMAP 1" >>"$out"
	echo "#include <eu-config.h>" >>"$out"
	rm -f "$PROBE_DIR/p.c" "$PROBE_DIR/p.o"
}

# The libelf sources: libelf_a_SOURCES in libelf/Makefile.am (a "\"-continued list).
libelf_sources() {
	awk '/^libelf_a_SOURCES[ \t]*=/ { on = 1; sub(/^[^=]*=/, "") }
	     on { cont = sub(/\\[ \t]*$/, ""); printf "%s ", $0; if (!cont) exit }' \
		"$SRC/elfutils/libelf/Makefile.am" | tr -s ' \t' '\n' | sed '/^$/d'
}

build_libelf() {
	local key b=$DEPS/build/libelf log=$DEPS/logs/libelf.log
	key=$(pkg_key elfutils zlib)
	up_to_date libelf "$key" lib/libelf.a include/libelf.h include/gelf.h && return 0
	step BUILD "libelf ($FLAVOR)"
	begin_build libelf "$log"
	write_elfutils_config_h "$b/config.h"
	local srcs
	srcs=$(libelf_sources | sed 's|^|libelf/|')
	[[ $(wc -l <<<"$srcs") -gt 50 ]] || die "libelf: could not read libelf_a_SOURCES from libelf/Makefile.am"
	srcs+=$'\nlib/eu-search.c'
	# A throwaway makefile, for -j and for make's error handling. Objects go to
	# the flavor's build dir; the source tree is only read. Include order as in
	# elfutils' config/eu.am (libelf/elf.h, elfutils' copy, is only seen here).
	cat >"$b/Makefile" <<-'EOF'
		.RECIPEPREFIX := >
		OBJS := $(addprefix obj/,$(notdir $(SRCS:.c=.o)))
		vpath %.c $(TOP)/libelf $(TOP)/lib
		libelf.a: $(OBJS)
		> rm -f $@
		> $(AR) rcs $@ $^
		obj/%.o: %.c | obj
		> $(CC) $(CFLAGS) -c $< -o $@
		obj:
		> mkdir -p $@
	EOF
	log_run "$log" make -C "$b" -j"$JOBS" TOP="$SRC/elfutils" SRCS="$(tr '\n' ' ' <<<"$srcs")" \
		CC="$CC" AR="$AR" \
		CFLAGS="-std=gnu99 -D_GNU_SOURCE -DHAVE_CONFIG_H $CFLAGS -iquote . -I$b \
			-I$SRC/elfutils/libelf -I$SRC/elfutils/lib -I$DEPS/include -Wall"
	install -m 644 "$b/libelf.a" "$DEPS/lib/"
	install -m 644 "$SRC/elfutils/libelf/"{libelf.h,gelf.h,nlist.h} "$DEPS/include/"
	echo "$key" >"$DEPS/stamps/libelf"
}

# ---- libbpf ----------------------------------------------------------------------

build_libbpf() {
	local key b=$DEPS/build/libbpf log=$DEPS/logs/libbpf.log
	key=$(pkg_key libbpf zlib libelf uapi)
	up_to_date libbpf "$key" lib/libbpf.a include/bpf/libbpf.h include/bpf/bpf_helpers.h \
		include/linux/bpf.h && return 0
	step BUILD "libbpf ($FLAVOR)"
	begin_build libbpf "$log"
	# Out of tree through OBJDIR. The UAPI headers come -idirafter so that the
	# C library's own headers win (musl's, not glibc's); libbpf's bundled
	# include/uapi (newer linux/bpf.h) still comes first via its own -I.
	log_run "$log" make -C "$SRC/libbpf/src" -j"$JOBS" \
		BUILD_STATIC_ONLY=y NO_PKG_CONFIG=1 \
		CC="$CC" AR="$AR" CFLAGS="$CFLAGS" \
		EXTRA_CFLAGS="-I$DEPS/include -idirafter $DEPS/uapi" \
		OBJDIR="$b" DESTDIR="$DEPS" PREFIX= LIBDIR=/lib INCLUDEDIR=/include UAPIDIR=/include \
		install install_uapi_headers
	# Its libbpf.pc would name a wrong prefix; nothing here uses pkg-config.
	rm -rf "$DEPS/lib/pkgconfig"
	echo "$key" >"$DEPS/stamps/libbpf"
}

# ---- libiberty's demanglers --------------------------------------------------------
# Only the C++ (Itanium ABI) and Rust demanglers. Their callback entry points
# need nothing from the rest of libiberty but safe-ctype.c, so neither its
# configure nor xmalloc & co. come along; the same three files build for
# every flavor's compiler.

build_libiberty() {
	local key b=$DEPS/build/libiberty log=$DEPS/logs/libiberty.log f
	key=$(pkg_key libiberty)
	up_to_date libiberty "$key" lib/libiberty-demangle.a include/libiberty/demangle.h && return 0
	step BUILD "libiberty demanglers ($FLAVOR)"
	begin_build libiberty "$log"
	for f in cp-demangle rust-demangle safe-ctype; do
		# shellcheck disable=SC2086 # CFLAGS is a list of flags
		log_run "$log" "$CC" -DHAVE_STDLIB_H -DHAVE_STRING_H -DHAVE_LIMITS_H $CFLAGS \
			-I"$SRC/libiberty/include" -c "$SRC/libiberty/libiberty/$f.c" -o "$b/$f.o"
	done
	log_run "$log" "$AR" rcs "$b/libiberty-demangle.a" "$b/cp-demangle.o" "$b/rust-demangle.o" \
		"$b/safe-ctype.o"
	install -m 644 "$b/libiberty-demangle.a" "$DEPS/lib/"
	mkdir -p "$DEPS/include/libiberty"
	install -m 644 "$SRC/libiberty/include/"{demangle.h,libiberty.h,ansidecl.h} \
		"$DEPS/include/libiberty/"
	echo "$key" >"$DEPS/stamps/libiberty"
}

# ---- mimalloc ------------------------------------------------------------------------
# The shipped static binaries' allocator (x86_64, arm64; the sanitizer build
# keeps its own). musl's mallocng hands freed memory back to the kernel a
# few pages at a time: some 500 munmap and madvise calls in a profile of a
# few seconds, each a TLB shootdown to every CPU cprof's threads ran on,
# then a page fault for each page touched again. One object, mimalloc.o,
# defines malloc & co. and is linked whole into every static link, ahead of
# musl's (third_party/README.md has the figures).

build_mimalloc() {
	local key b=$DEPS/build/mimalloc log=$DEPS/logs/mimalloc.log
	key=$(pkg_key mimalloc)
	up_to_date mimalloc "$key" lib/mimalloc.o && return 0
	step BUILD "mimalloc ($FLAVOR)"
	begin_build mimalloc "$log"
	# shellcheck disable=SC2086 # CFLAGS is a list of flags
	log_run "$log" "$CC" $CFLAGS -DNDEBUG -DMI_MALLOC_OVERRIDE -DMI_STATIC_LIB \
		-I"$SRC/mimalloc/include" -c "$SRC/mimalloc/src/static.c" -o "$b/mimalloc.o"
	install -m 644 "$b/mimalloc.o" "$DEPS/lib/"
	echo "$key" >"$DEPS/stamps/mimalloc"
}

# ---- mbedTLS -------------------------------------------------------------------------
# TLS for uploads. Configured by our third_party/mbedtls/cprof_mbedtls_config.h
# (a TLS 1.2/1.3 client and no more; its hash is part of the stamp), given to
# the library's compiles as MBEDTLS_CONFIG_FILE and installed as
# include/mbedtls/mbedtls_config.h, so that cprof's code compiled against
# these headers sees the very configuration the library was built with.
# mbedTLS's own library/Makefile, in a per-flavor copy of library/ and
# 3rdparty/ (the objects land next to the sources; include/, scripts/ and
# framework/ are only read, so symlinks do). The files it would generate
# with Perl or Python (error.c, version_features.c, the PSA driver
# wrappers...) are in the release tarball; GEN_FILES empty keeps them, and
# PERL=false PYTHON=false make any attempt to regenerate one fail loudly.

MBEDTLS_CONFIG=$TP_DIR/mbedtls/cprof_mbedtls_config.h

build_mbedtls() {
	local key b=$DEPS/build/mbedtls log=$DEPS/logs/mbedtls.log d
	key=$(
		pkg_key mbedtls
		printf 'config=%s\n' "$(sha256sum <"$MBEDTLS_CONFIG" | cut -d' ' -f1)"
	)
	up_to_date mbedtls "$key" lib/libmbedtls.a lib/libmbedx509.a lib/libmbedcrypto.a \
		include/mbedtls/ssl.h include/mbedtls/mbedtls_config.h include/psa/crypto.h && return 0
	step BUILD "mbedtls ($FLAVOR)"
	begin_build mbedtls "$log"
	cp -a "$SRC/mbedtls/library" "$SRC/mbedtls/3rdparty" "$b/"
	for d in include scripts framework; do
		ln -s "$SRC/mbedtls/$d" "$b/$d"
	done
	# AR_DASH empty: "ar src" suits both GNU ar and llvm-ar. For size, -Os:
	# one handshake per upload, 57 KB less in the binary.
	log_run "$log" make -C "$b/library" -j"$JOBS" CC="$CC" AR="$AR" AR_DASH= \
		CFLAGS="${CFLAGS/-O2/-Os} -DMBEDTLS_CONFIG_FILE='\"$MBEDTLS_CONFIG\"'" \
		GEN_FILES= PERL=false PYTHON=false \
		libmbedcrypto.a libmbedx509.a libmbedtls.a
	install -m 644 "$b/library/"{libmbedtls.a,libmbedx509.a,libmbedcrypto.a} "$DEPS/lib/"
	# Headers afresh (a version bump may drop some), then our configuration
	# in place of the default one.
	for d in mbedtls psa; do
		rm -rf "${DEPS:?}/include/$d"
		mkdir -p "$DEPS/include/$d"
		install -m 644 "$SRC/mbedtls/include/$d/"*.h "$DEPS/include/$d/"
	done
	install -m 644 "$MBEDTLS_CONFIG" "$DEPS/include/mbedtls/mbedtls_config.h"
	echo "$key" >"$DEPS/stamps/mbedtls"
}

# ---- main --------------------------------------------------------------------------

main() {
	[[ $# -eq 1 ]] || die "usage: third_party/build.sh FLAVOR   (x86_64 | asan | arm64)"
	FLAVOR=$1
	flavor_config
	DEPS=$ROOT/.output/$FLAVOR/deps
	RECIPE=$(sha256sum <"${BASH_SOURCE[0]}" | cut -d' ' -f1)

	"$TP_DIR/fetch.sh"
	[[ ${#CROSS_DEBS[@]} -eq 0 ]] || "$TP_DIR/fetch.sh" "${CROSS_DEBS[@]}"
	# The pins of the toolchain's packages: bumping one rebuilds everything.
	TOOLCHAIN_KEY=$(for d in "${CROSS_DEBS[@]}"; do cat "$SRC/${d/:/_}.fetched"; done)

	mkdir -p "$DEPS"/{include,lib,logs,stamps,build}
	# Two makes building the same flavor at once must not interleave.
	exec 8>"$DEPS/.lock"
	flock 8
	# No "done" marker while building: a failed run must not look finished.
	rm -f "$DEPS/.stamp"

	[[ -z $TRIPLE ]] || write_toolchain
	check_toolchain
	build_uapi
	build_zlib
	build_libelf
	build_libbpf
	build_libiberty
	build_mbedtls
	[[ $FLAVOR == asan ]] || build_mimalloc
	touch "$DEPS/.stamp"
}

main "$@"
