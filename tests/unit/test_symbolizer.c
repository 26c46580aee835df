// SPDX-License-Identifier: MIT
/*
 * The symbolizer on a live process, this one: a function with a C++-mangled
 * name (shown demangled, kept raw as system_name), the vDSO (named from
 * cprof's copy), JIT code named from a perf map (and named once the map
 * gains the entry, after the next interval), and the fallbacks for what
 * cannot be named.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build/profile.h"
#include "resolve/elf_symtab.h"
#include "resolve/symbolizer.h"
#include "test.h"
#include "unwind/eh_frame_hdr.h"

/* A C++ name, given by an asm label so the test needs no C++ compiler. */
__attribute__((noinline)) int mangled_fn(int x) __asm__("_ZN5cprof4test10mangled_fnEi");
__attribute__((noinline)) int mangled_fn(int x)
{
	return x * 3 + 1;
}

struct fixture {
	struct profile *prof;
	struct symbolizer *sym;
};

static void setup(struct fixture *f)
{
	struct profile_meta meta = {.hz = 99, .period_ns = 1000000000ull / 99};

	f->prof = profile__new(&meta);
	CHECK(f->prof);
	CHECK_INT(symbolizer__new(&f->sym), ==, 0);
}

static void teardown(struct fixture *f)
{
	symbolizer__free(f->sym);
	profile__free(f->prof);
}

/* The profile's frame for what the symbolizer answered for addr as a leaf of pid's stack. */
static const struct profile_frame *frame_of(struct fixture *f, uint32_t pid, uint64_t addr)
{
	uint32_t frame = 0;

	CHECK_INT(symbolizer__user_frames(f->sym, &(struct symbolizer_task){.pid = pid, .space = 0},
					  &addr, 1, &frame),
		  ==, 0);
	CHECK(frame);
	CHECK_INT(profile__add_symbolized(f->prof, f->sym, &frame, 1, &frame), ==, 0);
	return profile__frame(f->prof, frame);
}

/* The frame of addr as a leaf of our own stack. */
static const struct profile_frame *leaf(struct fixture *f, uint64_t addr)
{
	return frame_of(f, (uint32_t)getpid(), addr);
}

TEST(symbolizer_demangles_for_display)
{
	struct fixture f;
	const struct profile_frame *fr;

	setup(&f);
	CHECK_INT(mangled_fn(1), ==, 4);
	fr = leaf(&f, (uint64_t)(uintptr_t)mangled_fn);
	CHECK_STR(fr->name, "cprof::test::mangled_fn(int)");
	CHECK_STR(fr->system_name, "_ZN5cprof4test10mangled_fnEi");
	CHECK(fr->kind == FRAME_CODE && !fr->kernel);
	/* A C name is its own system name. */
	fr = leaf(&f, (uint64_t)(uintptr_t)setup);
	CHECK_STR(fr->name, "setup");
	CHECK(fr->name == fr->system_name);
	teardown(&f);
}

/*
 * The answers are the symbolizer's own. Equal answers share an id (a leaf and
 * a return address one past it name the same instruction), and ids are good
 * until the request after symbolizer__finish, which begins a new generation.
 */
TEST(symbolizer_answers_without_a_profile)
{
	uint64_t addr = (uint64_t)(uintptr_t)mangled_fn + 1, ips[2] = {addr, addr};
	const struct symbolizer_module *m;
	const struct symbolizer_frame *fr;
	struct symbolizer *s;
	uint32_t ids[2], gen;

	CHECK_INT(mangled_fn(2), ==, 7);
	CHECK_INT(symbolizer__new(&s), ==, 0);
	CHECK_INT(symbolizer__user_frames(
			  s, &(struct symbolizer_task){.pid = (uint32_t)getpid(), .space = 0}, ips,
			  2, ids),
		  ==, 0);
	CHECK(ids[0] && ids[0] == ids[1]);
	fr = symbolizer__frame(s, ids[0]);
	CHECK(fr);
	CHECK_STR(fr->name, "cprof::test::mangled_fn(int)");
	CHECK_STR(fr->system_name, "_ZN5cprof4test10mangled_fnEi");
	CHECK_U64(fr->address, ==, addr);
	CHECK(!fr->kernel && !fr->unknown && !fr->waiting);
	m = symbolizer__module(s, fr->module);
	CHECK(m);
	CHECK(*m->path && !m->kernel);
	CHECK(m->start <= addr && addr < m->limit);
	CHECK(!symbolizer__frame(s, 0) && !symbolizer__module(s, 0));

	gen = symbolizer__generation(s);
	CHECK_INT(symbolizer__finish(s, true), ==, 0);
	CHECK_STR(symbolizer__frame(s, ids[0])->name, "cprof::test::mangled_fn(int)");
	CHECK_INT(symbolizer__generation(s), ==, gen);
	CHECK(symbolizer__placeholder(s, "[no stack]", FRAME_LOST, 0));
	CHECK_INT(symbolizer__generation(s), !=, gen);
	symbolizer__free(s);
}

/* The vDSO's clock_gettime entry point, found through a copy of the image and nm. */
TEST(symbolizer_names_vdso_frames)
{
	const struct profile_frame *fr;
	unsigned long long value = 0;
	char cmd[1024], line[512], want[128] = "";
	size_t size;
	const void *image = test_vdso(&size);
	uintptr_t base = (uintptr_t)image;
	struct fixture f;
	FILE *p;

	if (!image)
		SKIP("no vDSO on this system");
	if (system("command -v nm >/dev/null 2>&1"))
		SKIP("nm not installed");
	snprintf(cmd, sizeof(cmd), "%s/vdso.so", test_tmp_dir());
	p = fopen(cmd, "w");
	CHECK(p);
	CHECK_INT(fwrite(image, 1, size, p), ==, size);
	fclose(p);
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only %s/vdso.so", test_tmp_dir());
	p = popen(cmd, "r");
	CHECK(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long v;
		char t, name[128];

		/* nm shows versions: "__vdso_clock_gettime@@LINUX_2.6". */
		/* x86_64 and arm64 names. */
		if (sscanf(line, "%llx %c %127[^@\n]", &v, &t, name) == 3 &&
		    (!strcmp(name, "__vdso_clock_gettime") ||
		     !strcmp(name, "__kernel_clock_gettime"))) {
			value = v;
			snprintf(want, sizeof(want), "%s", name);
		}
	}
	pclose(p);
	if (!value)
		SKIP("this vDSO has no clock_gettime entry point");

	setup(&f);
	/* The vDSO's first PT_LOAD maps file offset 0 at virtual address 0. */
	fr = leaf(&f, base + value + 1);
	CHECK_STR(fr->name, want);
	CHECK(fr->kind == FRAME_CODE);
	CHECK_STR(profile__mapping(f.prof, fr->mapping)->path, "[vdso]");
	CHECK(*profile__mapping(f.prof, fr->mapping)->build_id);
	teardown(&f);
}

/*
 * The vDSO's code that no exported symbol covers (on 6.18, x86_64, the
 * clock reading below the first export) is shown at the start of its
 * function, from the image's FDEs: every address inside, leaf or return
 * address, is "[vdso]+0xSTART", unknown, and counted.
 */
TEST(symbolizer_vdso_local_code_at_function_start)
{
	struct eh_frame_hdr *cfi = NULL;
	struct elf_symtab *exported = NULL;
	const uint64_t *st;
	const struct profile_frame *fr;
	struct cfi_fde fde, other;
	char modules[512], want[64];
	size_t size, i, nlocal = 0;
	const void *image = test_vdso(&size);
	uintptr_t base = (uintptr_t)image;
	uint64_t ips[2], end, counted;
	uint32_t frames[2];
	struct utsname u;
	struct fixture f;

	if (!image)
		SKIP("no vDSO on this system");
	CHECK_INT(uname(&u), ==, 0);
	snprintf(modules, sizeof(modules), "/lib/modules/%s/vdso", u.release);
	if (!access(modules, F_OK))
		SKIP("%s may name the vDSO's local functions", modules);
	CHECK_INT(eh_frame_hdr__from_elf(image, size, &cfi), ==, 0);
	CHECK_INT(elf_symtab__open_memory(image, size, "[vdso]", &exported), ==, 0);
	setup(&f);
	CHECK_INT(symbolizer__set_debug_dir(f.sym, ""), ==, 0);
	st = symbolizer__stats(f.sym);
	/* The vDSO's first PT_LOAD maps file offset 0 at virtual address 0. */
	for (i = 0; i < eh_frame_hdr__count(cfi); i++) {
		CHECK_INT(eh_frame_hdr__fde(cfi, i, &fde), ==, 0);
		if (fde.pc_range < 4 || elf_symtab__lookup(exported, fde.pc_begin, NULL))
			continue;
		nlocal++;
		snprintf(want, sizeof(want), "[vdso]+0x%llx", (unsigned long long)fde.pc_begin);
		fr = leaf(&f, base + fde.pc_begin + fde.pc_range / 2);
		CHECK_STR(fr->name, want);
		CHECK(fr->kind == FRAME_UNNAMED);
		CHECK_STR(profile__mapping(f.prof, fr->mapping)->path, "[vdso]");
		/* A return address is looked up a byte before: a call at the end is its function's.
		 */
		end = fde.pc_begin + fde.pc_range;
		ips[0] = base + fde.pc_begin + 1;
		ips[1] = base + end;
		CHECK_INT(symbolizer__user_frames(
				  f.sym,
				  &(struct symbolizer_task){.pid = (uint32_t)getpid(), .space = 0},
				  ips, 2, frames),
			  ==, 0);
		CHECK_INT(profile__add_symbolized(f.prof, f.sym, frames, 2, frames), ==, 0);
		CHECK_STR(profile__frame(f.prof, frames[0])->name, want);
		CHECK_STR(profile__frame(f.prof, frames[1])->name, want);
		CHECK_U64(st[SYM_STAT_FUNCTION_STARTS], ==, 3 * nlocal);
		/* Past the end, in padding no function holds: the address itself, not counted. */
		counted = st[SYM_STAT_FUNCTION_STARTS];
		if (!elf_symtab__lookup(exported, end, NULL) &&
		    (i + 1 == eh_frame_hdr__count(cfi) ||
		     (eh_frame_hdr__fde(cfi, i + 1, &other) == 0 && other.pc_begin > end))) {
			snprintf(want, sizeof(want), "[vdso]+0x%llx", (unsigned long long)end);
			CHECK_STR(leaf(&f, base + end)->name, want);
			CHECK_U64(st[SYM_STAT_FUNCTION_STARTS], ==, counted);
		}
	}
	teardown(&f);
	elf_symtab__free(exported);
	eh_frame_hdr__free(cfi);
	if (!nlocal)
		SKIP("every function of this vDSO is exported");
}

static void write_perf_map(const char *path, const char *text)
{
	FILE *m = fopen(path, "w");

	CHECK(m);
	fputs(text, m);
	CHECK_INT(fclose(m), ==, 0);
}

TEST(symbolizer_names_jit_frames_from_perf_map)
{
	char path[64], text[256];
	const struct profile_frame *fr;
	struct fixture f;
	uint64_t code;
	uint8_t *mem;

	mem = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mem != MAP_FAILED);
	code = (uint64_t)(uintptr_t)mem;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(text, sizeof(text), "bad line\n%llx 100 Builtin:hot code\n",
		 (unsigned long long)code);
	write_perf_map(path, text);

	setup(&f);
	fr = leaf(&f, code + 0x10);
	CHECK_STR(fr->name, "Builtin:hot code");
	CHECK(fr->kind == FRAME_JIT);
	CHECK_STR(profile__mapping(f.prof, fr->mapping)->path, "");
	CHECK_INT(symbolizer__stats(f.sym)[SYM_STAT_PERF_MAP_BAD_LINES], ==, 1);

	/* Not in the map yet: the honest fallback, counted as unknown. */
	fr = leaf(&f, code + 0x1008);
	CHECK(!frame_kind__named(fr->kind));
	snprintf(text, sizeof(text), "[anon]+0x%llx", (unsigned long long)code + 0x1008);
	CHECK_STR(fr->name, text);
	CHECK_INT(symbolizer__stats(f.sym)[SYM_STAT_UNKNOWN_USER], ==, 1);

	/* The runtime compiles more code; the next interval reads the map again. */
	snprintf(text, sizeof(text), "bad line\n%llx 100 Builtin:hot code\n%llx 20 later\n",
		 (unsigned long long)code, (unsigned long long)code + 0x1000);
	write_perf_map(path, text);
	fr = leaf(&f, code + 0x1008);
	CHECK(!frame_kind__named(fr->kind));
	symbolizer__new_interval(f.sym, UINT64_MAX);
	fr = leaf(&f, code + 0x1008);
	CHECK_STR(fr->name, "later");
	CHECK(fr->kind == FRAME_JIT);
	CHECK_INT(symbolizer__stats(f.sym)[SYM_STAT_UNKNOWN_USER], ==, 0);
	CHECK_INT(symbolizer__stats(f.sym)[SYM_STAT_PERF_MAP_BAD_LINES], ==, 1);
	teardown(&f);
	unlink(path);
	munmap(mem, 8192);
}

TEST(symbolizer_fallbacks_never_borrow_a_name)
{
	const struct profile_frame *fr;
	struct fixture f;
	uint32_t ns = 0;
	char line[256];
	FILE *st;

	setup(&f);
	/* Nothing is mapped at page 1. */
	fr = leaf(&f, 0x1008);
	CHECK_STR(fr->name, "[unknown]");
	CHECK(fr->kind == FRAME_UNNAMED);
	CHECK_INT(fr->mapping, ==, 0);
	CHECK_INT(symbolizer__stats(f.sym)[SYM_STAT_UNKNOWN_USER], ==, 1);

	/* Our own namespace PID, as /proc/self/status's NSpid line ends. */
	st = fopen("/proc/self/status", "r");
	CHECK(st);
	while (fgets(line, sizeof(line), st))
		if (!strncmp(line, "NSpid:", 6)) {
			char *last = strrchr(line, '\t');

			ns = (uint32_t)strtoul(last ? last + 1 : line + 6, NULL, 10);
		}
	fclose(st);
	CHECK_INT(symbolizer__ns_pid(
			  f.sym, &(struct symbolizer_task){.pid = (uint32_t)getpid(), .space = 0}),
		  ==, ns && ns != (uint32_t)getpid() ? ns : 0);
	CHECK_INT(
		symbolizer__ns_pid(f.sym, &(struct symbolizer_task){.pid = 0x7fffffff, .space = 0}),
		==, 0);
	teardown(&f);
}

/* A process in its own PID namespace is PID 1 there: that is its ns_pid label. */
TEST(symbolizer_ns_pid_of_namespaced_process)
{
	struct {
		int err;
		pid_t child;
	} msg = {0};
	struct fixture f;
	int ready[2];
	uint32_t ns;
	pid_t outer;

	CHECK_INT(pipe(ready), ==, 0);
	outer = fork();
	CHECK(outer >= 0);
	if (outer == 0) {
		/* The next child of this process is the new namespace's init. */
		if (unshare(CLONE_NEWPID))
			msg.err = errno;
		else if ((msg.child = fork()) == 0)
			pause();
		if (msg.child < 0)
			msg.err = errno;
		/* One write: the parent reads both fields at once. */
		if (write(ready[1], &msg, sizeof(msg)) != sizeof(msg))
			_exit(1);
		if (msg.child > 0)
			waitpid(msg.child, NULL, 0);
		_exit(0);
	}
	if (read(ready[0], &msg, sizeof(msg)) != sizeof(msg))
		msg.err = EIO;
	if (msg.err) {
		kill(outer, SIGKILL);
		waitpid(outer, NULL, 0);
		SKIP("cannot create a PID namespace: %s", strerror(msg.err));
	}
	setup(&f);
	symbolizer__note_process(f.sym, (uint32_t)msg.child);
	ns = symbolizer__ns_pid(f.sym,
				&(struct symbolizer_task){.pid = (uint32_t)msg.child, .space = 0});
	teardown(&f);
	/* The namespace's init goes before any check can end the test. */
	kill(msg.child, SIGKILL);
	waitpid(outer, NULL, 0);
	CHECK_INT(ns, ==, 1);
}

/* The load address of path in process pid (its mapping at file offset 0), or 0. */
static uint64_t load_base(pid_t pid, const char *path)
{
	char maps[64], line[1024];
	unsigned long long start = 0, s, off;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	if (!f)
		return 0;
	while (!start && fgets(line, sizeof(line), f))
		if (strstr(line, path) && sscanf(line, "%llx-%*x %*s %llx", &s, &off) == 2 && !off)
			start = s;
	fclose(f);
	return start;
}

/* The value of a text symbol of path, from nm; 0 when missing. */
static uint64_t symbol_value(const char *path, const char *name)
{
	char cmd[1024], line[256], want[128];
	unsigned long long v = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	snprintf(want, sizeof(want), " T %s\n", name);
	p = popen(cmd, "r");
	CHECK(p);
	while (fgets(line, sizeof(line), p))
		if (strstr(line, want))
			sscanf(line, "%llx", &v);
	pclose(p);
	return v;
}

/*
 * A process first seen before it ran exec (as a fork is), which then exits:
 * only the second look of symbolizer__recheck_new, while it lived, knows
 * the program it became.
 */
TEST(symbolizer_recheck_sees_exec_before_exit)
{
	const char *fixture = test_build_fixture("known_tree");
	char line[256], exe[64];
	uint64_t hot_a, base = 0;
	struct fixture f;
	int go[2], i;
	pid_t child;

	if (system("command -v nm >/dev/null 2>&1"))
		SKIP("nm not installed");
	hot_a = symbol_value(fixture, "hot_a");
	CHECK(hot_a);

	CHECK_INT(pipe(go), ==, 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			execl(fixture, fixture, "5", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	setup(&f);
	symbolizer__note_process(f.sym, (uint32_t)child);
	CHECK(symbolizer__process_name(
		f.sym, &(struct symbolizer_task){.pid = (uint32_t)child, .space = 0}));
	CHECK(strcmp(symbolizer__process_name(
			     f.sym, &(struct symbolizer_task){.pid = (uint32_t)child, .space = 0}),
		     "known_tree"));
	CHECK_INT(write(go[1], "x", 1), ==, 1);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)child);
	for (i = 0; i < 200 && !base; i++) {
		usleep(10000);
		if (readlink(exe, line, sizeof(line)) > 0)
			base = load_base(child, fixture);
	}
	usleep(60000);
	symbolizer__recheck_new(f.sym);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK(base);
	CHECK_STR(symbolizer__process_name(
			  f.sym, &(struct symbolizer_task){.pid = (uint32_t)child, .space = 0}),
		  "known_tree");
	CHECK_STR(frame_of(&f, (uint32_t)child, base + hot_a + 4)->name, "hot_a");
	teardown(&f);
}

/* Open descriptors of this process on path. */
static int fds_on(const char *path)
{
	char real[4096], link[64], target[4096];
	int fd, n = 0;
	ssize_t len;

	CHECK(realpath(path, real));
	for (fd = 0; fd < 1024; fd++) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += !strcmp(target, real);
	}
	return n;
}

/* Starts the fixture and waits until it runs (its program is mapped); 0 on failure. */
static pid_t start_fixture(const char *fixture, uint64_t *base)
{
	pid_t child = fork();
	int i;

	CHECK(child >= 0);
	if (child == 0) {
		execl(fixture, fixture, "5", (char *)NULL);
		_exit(127);
	}
	*base = 0;
	for (i = 0; i < 500 && !*base; i++) {
		usleep(10000);
		*base = load_base(child, fixture);
	}
	return child;
}

static void stop_fixture(pid_t child)
{
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

/*
 * A program whose last process has exited and been forgotten has its ELF file
 * released (here at once; after a minute in cprof): its descriptor, held until
 * its symbols are needed, and its symbol table. The files of processes still
 * known stay and are not read again; a program run anew is read anew.
 */
/* Where the known_tree fixture's hot_a is, from nm (the test is skipped without it). */
static uint64_t hot_a_of(const char *fixture)
{
	uint64_t v;

	if (system("command -v nm >/dev/null 2>&1"))
		SKIP("nm not installed");
	v = symbol_value(fixture, "hot_a");
	CHECK(v);
	return v;
}

TEST(symbolizer_closes_elf_files_nobody_maps)
{
	const char *fixture = test_build_fixture("known_tree");
	const uint64_t *st;
	uint64_t hot_a, base, opened;
	const char *name;
	struct fixture f;
	pid_t child;

	hot_a = hot_a_of(fixture);
	setup(&f);
	symbolizer__set_elf_idle(f.sym, 0);
	st = symbolizer__stats(f.sym);
	CHECK_STR(leaf(&f, (uint64_t)(uintptr_t)mangled_fn + 4)->system_name,
		  "_ZN5cprof4test10mangled_fnEi");

	child = start_fixture(fixture, &base);
	CHECK(base);
	symbolizer__note_process(f.sym, (uint32_t)child);
	CHECK_INT(fds_on(fixture), ==, 1);
	/* While it runs, nothing is released. */
	symbolizer__new_interval(f.sym, UINT64_MAX);
	CHECK_U64(st[SYM_STAT_ELF_FILES_CLOSED], ==, 0);
	CHECK_INT(fds_on(fixture), ==, 1);
	stop_fixture(child);
	/* Found gone at one drain, forgotten at the next: its program is released then. */
	symbolizer__new_interval(f.sym, UINT64_MAX);
	CHECK_U64(st[SYM_STAT_ELF_FILES_CLOSED], ==, 0);
	symbolizer__new_interval(f.sym, UINT64_MAX);
	CHECK_U64(st[SYM_STAT_ELF_FILES_CLOSED], >=, 1);
	CHECK_INT(fds_on(fixture), ==, 0);

	/* This process still maps its own program: named without reading it again. */
	opened = st[SYM_STAT_ELF_FILES];
	CHECK_STR(leaf(&f, (uint64_t)(uintptr_t)symbol_value + 4)->name, "symbol_value");
	CHECK_U64(st[SYM_STAT_ELF_FILES], ==, opened);

	/* Run again, the fixture is read again, and named. */
	child = start_fixture(fixture, &base);
	CHECK(base);
	name = frame_of(&f, (uint32_t)child, base + hot_a + 4)->name;
	stop_fixture(child);
	CHECK_STR(name, "hot_a");
	CHECK_U64(st[SYM_STAT_ELF_FILES], >, opened);
	teardown(&f);
}

TEST(symbolizer_lets_files_go_and_opens_them_again)
{
	const char *fixture = test_build_fixture("known_tree");
	uint64_t hot_a = hot_a_of(fixture), base;
	const uint64_t *st;
	struct fixture f;
	pid_t child;

	setup(&f);
	symbolizer__set_max_open(f.sym, 1);
	st = symbolizer__stats(f.sym);
	child = start_fixture(fixture, &base);
	CHECK(base);
	/* Its program, its libc and its loader: one stays open, the program (mapped first) goes. */
	symbolizer__note_process(f.sym, (uint32_t)child);
	CHECK_U64(st[SYM_STAT_ELF_FILES], >=, 2);
	CHECK_U64(st[SYM_STAT_ELF_FILES_RELEASED], >=, 1);
	CHECK_INT(fds_on(fixture), ==, 0);
	/* A sample there: opened again through the process, and named. */
	CHECK_STR(frame_of(&f, (uint32_t)child, base + hot_a + 4)->name, "hot_a");
	CHECK_U64(st[SYM_STAT_ELF_FILES_REOPENED], ==, 1);
	/* Loaded, it needs its file no more. */
	CHECK_INT(fds_on(fixture), ==, 0);
	stop_fixture(child);
	teardown(&f);
}

/*
 * With the loader, a file's symbols are not loaded on the caller's thread:
 * its frame waits, under its offset, and is named when the profile is
 * finished (the last profile waits for the load). The next profile finds
 * them loaded.
 */
TEST(symbolizer_loads_symbols_off_the_caller)
{
	const char *fixture = test_build_fixture("known_tree");
	uint64_t hot_a = hot_a_of(fixture), base, addr;
	const struct symbolizer_frame *fr;
	struct symbolizer_task task;
	struct symbolizer *s;
	uint32_t id;
	pid_t child;

	CHECK_INT(symbolizer__new(&s), ==, 0);
	CHECK_INT(symbolizer__load_off_loop(s), ==, 0);
	child = start_fixture(fixture, &base);
	CHECK(base);
	task = (struct symbolizer_task){.pid = (uint32_t)child};
	addr = base + hot_a + 4;
	CHECK_INT(symbolizer__user_frames(s, &task, &addr, 1, &id), ==, 0);
	fr = symbolizer__frame(s, id);
	CHECK(fr->waiting && fr->unknown);
	CHECK(strstr(fr->name, "known_tree+0x"));
	CHECK_INT(symbolizer__finish(s, true), ==, 0);
	fr = symbolizer__frame(s, id);
	CHECK_STR(fr->name, "hot_a");
	CHECK(!fr->waiting && !fr->unknown);
	CHECK_U64(symbolizer__stats(s)[SYM_STAT_UNKNOWN_USER], ==, 0);
	/* Loaded by now: named at once. */
	CHECK_INT(symbolizer__user_frames(s, &task, &addr, 1, &id), ==, 0);
	fr = symbolizer__frame(s, id);
	CHECK_STR(fr->name, "hot_a");
	CHECK(!fr->waiting);
	stop_fixture(child);
	symbolizer__free(s);
}
