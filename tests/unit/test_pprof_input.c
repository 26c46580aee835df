// SPDX-License-Identifier: MIT
/*
 * pprof profiles read back for a flame graph (cprof -i): cprof's own drawn
 * as the same tree its folded stacks and its model give; a Go CPU profile
 * drawn stack for stack as `go tool pprof -traces` reads it; a small
 * profile made field by field, packed and not, with inlined frames, frames
 * without lines, the sample type chosen; and hostile input: every prefix,
 * every byte changed, bad numbers, ids and string indexes out of range, and
 * gzip bombs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build/profile.h"
#include "encode/compress.h"
#include "encode/flame.h"
#include "encode/folded.h"
#include "encode/folded_input.h"
#include "lib/pb_writer.h"
#include "encode/pprof.h"
#include "encode/pprof_input.h"
#include "test.h"

/* A tree as text, a line a frame: "depth:name@start+count", and its kind's letter. */
static char *tree_text(const struct flame *f, bool kinds)
{
	static const char letter[FLAME_KINDS] = "UKJNTLPMR";
	struct flame_box *b;
	size_t n, i, len = 0, cap = 4096;
	char *out = malloc(cap);
	int w;

	CHECK(out);
	CHECK_INT(flame__layout(f, 0, &b, &n), ==, 0);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		for (;;) {
			w = snprintf(out + len, cap - len, "%u:%s@%" PRIu64 "+%" PRIu64 "%s%.*s\n",
				     b[i].depth, b[i].name ? b[i].name : "[merged]", b[i].start,
				     b[i].count, kinds ? " " : "", kinds, &letter[b[i].kind]);
			CHECK(w > 0);
			if ((size_t)w < cap - len)
				break;
			cap *= 2;
			out = realloc(out, cap);
			CHECK(out);
		}
		len += (size_t)w;
	}
	free(b);
	return out;
}

static struct flame *new_flame(void)
{
	struct flame *f = NULL;

	CHECK_INT(flame__new(&f), ==, 0);
	return f;
}

/* data read as a pprof profile into a new flame; the return code in *rc. */
static struct flame *read_pprof(const void *data, size_t len, const char *type, int *rc,
				struct pprof_input_info *info)
{
	struct pprof_input_opts o = {.sample_type = type};
	struct flame *f = new_flame();

	*rc = pprof_input__parse(data, len, &o, f, info);
	return f;
}

#define CHECK_TEXT(got, want)                                                     \
	do {                                                                      \
		char *_g = (got);                                                 \
		if (strcmp(_g, (want))) {                                         \
			fprintf(stderr, "--- got:\n%s--- want:\n%s", _g, (want)); \
			test_fail(__FILE__, __LINE__, "%s differs", #got);        \
		}                                                                 \
		free(_g);                                                         \
	} while (0)

/* ---- cprof's own profiles ------------------------------------------------------------ */

enum { F_START = 1, F_MAIN, F_WORK, F_LIB, F_UNNAMED, F_SYSCALL, F_JIT, F_TRUNC, F_KLOST, F_UNK };

static struct profile *cprof_profile(void)
{
	struct profile_meta meta = {.hz = 99,
				    .period_ns = 10101010,
				    .time_ns = 1700000000123456789ull,
				    .duration_ns = 3000000000ull};
	struct profile_mapping maps[] = {
		{.start = 0x400000,
		 .limit = 0x500000,
		 .path = "/opt/app/bin/app",
		 .build_id = "",
		 .main_exe = true},
		{.start = 0x7f0000000000,
		 .limit = 0x7f0000200000,
		 .offset = 0x28000,
		 .path = "/usr/lib/libc.so.6",
		 .build_id = "0123abcd"},
		{.start = 0xffffffff81000000,
		 .limit = 0xffffffff82000000,
		 .path = "",
		 .build_id = "",
		 .kernel = true},
		{.start = 0x3e000000, .limit = 0x3e100000, .path = "", .build_id = ""},
	};
	struct profile_frame frames[] = {
		{.mapping = 1, .address = 0x401000, .name = "_start"},
		{.mapping = 1, .address = 0x401100, .name = "main"},
		{.mapping = 1, .address = 0x401200, .name = "work(int)", .system_name = "_Z4worki"},
		{.mapping = 2, .address = 0x7f0000001234, .name = "memcpy"},
		{.mapping = 2,
		 .address = 0x7f00000055aa,
		 .name = "libc.so.6+0x2d5aa",
		 .kind = FRAME_UNNAMED},
		{.mapping = 3,
		 .address = 0xffffffff81001000,
		 .name = "do_syscall_64",
		 .kernel = true},
		{.mapping = 4,
		 .address = 0x3e000040,
		 .name = "LazyCompile:*run app.js:3",
		 .kind = FRAME_JIT},
		{.name = "[truncated: no CFI for the code]", .kind = FRAME_TRUNCATED},
		{.name = "[kernel stack lost: error]", .kind = FRAME_LOST, .kernel = true},
		{.address = 0xdead, .name = "[unknown]", .kind = FRAME_UNNAMED},
	};
	static const uint32_t s1[] = {F_WORK, F_MAIN, F_START},
			      s2[] = {F_LIB, F_WORK, F_MAIN, F_START},
			      s3[] = {F_SYSCALL, F_LIB, F_MAIN, F_START},
			      s4[] = {F_UNNAMED, F_TRUNC}, s5[] = {F_JIT, F_MAIN, F_START},
			      s6[] = {F_KLOST, F_WORK, F_MAIN}, s7[] = {F_UNK};
	struct profile_labels app = {.pid = 10, .comm = "app", .thread_name = "app"},
			      app2 = {.pid = 11, .comm = "app", .thread_name = "app"},
			      worker = {.pid = 10,
					.tid = 12,
					.comm = "app",
					.thread_name = "worker"},
			      node = {.pid = 20, .comm = "node", .thread_name = "node"},
			      idle = {.comm = "swapper/0", .thread_name = "swapper/0"};
	struct profile *p = profile__new(&meta);
	size_t i;

	CHECK(p);
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		CHECK_INT(profile__add_mapping(p, &maps[i]), ==, i + 1);
	for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		CHECK_INT(profile__add_frame(p, &frames[i]), ==, i + 1);
	CHECK_INT(profile__add_sample(p, s1, 3, &app, 40), ==, 0);
	/* Another process of the same name and stack: one stack in the graph. */
	CHECK_INT(profile__add_sample(p, s1, 3, &app2, 5), ==, 0);
	CHECK_INT(profile__add_sample(p, s2, 4, &app, 12), ==, 0);
	CHECK_INT(profile__add_sample(p, s3, 4, &worker, 7), ==, 0);
	CHECK_INT(profile__add_sample(p, s4, 2, &app, 3), ==, 0);
	CHECK_INT(profile__add_sample(p, s5, 3, &node, 9), ==, 0);
	CHECK_INT(profile__add_sample(p, s6, 3, &app, 2), ==, 0);
	CHECK_INT(profile__add_sample(p, s7, 1, &node, 1), ==, 0);
	CHECK_INT(profile__add_sample(p, NULL, 0, &idle, 6), ==, 0);
	CHECK_INT(profile__add_comment(p, "cprof: samples taken 88, in profile 85, lost 3 "
					  "(counts map full, or no room for a spilled or copied "
					  "stack); never taken 0"),
		  ==, 0);
	return p;
}

/*
 * The three ways from cprof's model to a graph agree: its pprof read back
 * (frames and kinds) is the tree the model gives straight (svg.c's way),
 * and, by names and counts, the tree of its folded stacks read back. (The
 * folded text marks kernel frames only, so its kinds are names' kinds.)
 */
TEST(pprof_input_cprof_round_trip)
{
	struct profile *p = cprof_profile();
	struct flame *direct = new_flame(), *from_folded = new_flame(), *from_pprof;
	struct folded_input_stats st;
	struct pprof_input_info info;
	uint8_t *gz;
	char *folded;
	size_t gz_len, folded_len;
	int rc;

	CHECK_INT(flame__add_profile(direct, p), ==, 0);
	CHECK_INT(folded__encode(p, &folded, &folded_len), ==, 0);
	CHECK_INT(folded_input__parse(folded, folded_len, from_folded, &st), ==, 0);
	CHECK_INT(pprof__encode_gz(p, &gz, &gz_len), ==, 0);
	from_pprof = read_pprof(gz, gz_len, NULL, &rc, &info);
	CHECK_INT(rc, ==, 0);
	CHECK_TEXT(tree_text(from_pprof, true), tree_text(direct, true));
	CHECK_TEXT(tree_text(from_pprof, false), tree_text(from_folded, false));
	/* What the subtitle says. */
	CHECK_U64(flame__total(from_pprof), ==, 85);
	CHECK_U64(info.stacks, ==, 9);
	CHECK(info.counts);
	CHECK_STR(info.type, "samples/count");
	CHECK_U64(info.time_ns, ==, 1700000000123456789ull);
	CHECK_U64(info.duration_ns, ==, 3000000000ull);
	CHECK_U64(info.hz, ==, 99);
	CHECK(info.lost_known);
	CHECK_U64(info.lost, ==, 3);
	CHECK_U64(info.negative + info.too_deep + info.overflow, ==, 0);
	/* The same, not gzipped; and its CPU time. */
	flame__free(from_pprof);
	{
		uint8_t *pb;
		size_t pb_len;
		const char *why;

		CHECK_INT(compress__gunzip(gz, gz_len, 1 << 20, &pb, &pb_len, &why), ==, 0);
		from_pprof = read_pprof(pb, pb_len, NULL, &rc, &info);
		CHECK_INT(rc, ==, 0);
		CHECK_TEXT(tree_text(from_pprof, true), tree_text(direct, true));
		flame__free(from_pprof);
		from_pprof = read_pprof(pb, pb_len, "cpu", &rc, &info);
		CHECK_INT(rc, ==, 0);
		CHECK_U64(flame__total(from_pprof), ==, 85 * 10101010ull);
		CHECK(!info.counts);
		CHECK_STR(info.type, "cpu/nanoseconds");
		free(pb);
	}
	flame__free(from_pprof);
	flame__free(from_folded);
	flame__free(direct);
	free(folded);
	free(gz);
	profile__free(p);
}

/* ---- a Go CPU profile against go tool pprof ------------------------------------------- */

/* hotA and hotB take 2:1; inner is inlined into hotB, so its samples have two lines. */
static const char go_prog[] = "package main\n"
			      "\n"
			      "import (\n"
			      "\t\"context\"\n"
			      "\t\"os\"\n"
			      "\t\"runtime/pprof\"\n"
			      "\t\"time\"\n"
			      ")\n"
			      "\n"
			      "var sink uint64\n"
			      "\n"
			      "//go:noinline\n"
			      "func hotA(n int) uint64 {\n"
			      "\tvar s uint64\n"
			      "\tfor i := 0; i < n; i++ {\n"
			      "\t\ts += uint64(i) * 7\n"
			      "\t}\n"
			      "\treturn s\n"
			      "}\n"
			      "\n"
			      "func inner(n int) uint64 {\n"
			      "\tvar s uint64\n"
			      "\tfor i := 0; i < n; i++ {\n"
			      "\t\ts ^= uint64(i) * 3\n"
			      "\t}\n"
			      "\treturn s\n"
			      "}\n"
			      "\n"
			      "//go:noinline\n"
			      "func hotB(n int) uint64 { return inner(n) + 1 }\n"
			      "\n"
			      "func main() {\n"
			      "\tf, err := os.Create(os.Args[1])\n"
			      "\tif err != nil {\n"
			      "\t\tpanic(err)\n"
			      "\t}\n"
			      "\tpprof.StartCPUProfile(f)\n"
			      "\tend := time.Now().Add(time.Second)\n"
			      "\tpprof.Do(context.Background(), pprof.Labels(\"worker\", \"w1\"), "
			      "func(context.Context) {\n"
			      "\t\tfor time.Now().Before(end) {\n"
			      "\t\t\tsink += hotA(100000)\n"
			      "\t\t\tsink += hotB(100000)\n"
			      "\t\t}\n"
			      "\t})\n"
			      "\tpprof.StopCPUProfile()\n"
			      "\tf.Close()\n"
			      "}\n";

static void run(const char *cmd)
{
	if (system(cmd) != 0)
		test_fail(__FILE__, __LINE__, "failed: %s", cmd);
}

/* A frame's line of -traces: ten columns of its count (or blanks), three blanks, its name. */
static bool frame_line(const char *line, size_t len, uint64_t *count)
{
	size_t blanks = strspn(line, " "), i;

	if (len < 14 || strncmp(line + 10, "   ", 3) || line[13] == ' ')
		return false;
	for (i = blanks; i < 10; i++)
		if (line[i] < '0' || line[i] > '9')
			return false;
	if (blanks < 10)
		*count = strtoull(line + blanks, NULL, 10);
	return true;
}

/*
 * The stacks of `go tool pprof -traces` output into f, root first: blocks
 * between lines of dashes, each a sample's labels ("key:  value"), then its
 * frames leaf first, the first line led by its count, inlined frames
 * marked " (inline)".
 */
static void add_traces(struct flame *f, FILE *in)
{
	uint32_t pieces[512], n = 0, i, lo;
	uint64_t count = 0;
	char line[4096], *name;
	size_t len;

	while (fgets(line, sizeof(line), in)) {
		len = strcspn(line, "\n");
		line[len] = '\0';
		if (!strncmp(line, "-----------+", 12)) {
			for (i = 0, lo = n; i < n / 2; i++, lo--) {
				uint32_t t = pieces[i];

				pieces[i] = pieces[lo - 1];
				pieces[lo - 1] = t;
			}
			if (n)
				CHECK_INT(flame__add(f, pieces, n, count), ==, 0);
			n = 0;
			count = 0;
			continue;
		}
		if (!frame_line(line, len, &count))
			continue;
		name = line + 13;
		if (len > 22 && !strcmp(line + len - 9, " (inline)"))
			line[len - 9] = '\0';
		CHECK(n < sizeof(pieces) / sizeof(pieces[0]));
		pieces[n] = flame__piece(f, name, FLAME_USER);
		CHECK(pieces[n++]);
	}
}

TEST(pprof_input_go_cpu_profile)
{
	char dir[256], cmd[4096], env[2048], path[300];
	struct pprof_input_info info;
	struct flame *ours, *theirs;
	uint8_t *data;
	size_t len;
	FILE *in;
	int rc;

	if (system("command -v go >/dev/null 2>&1") != 0)
		SKIP("go is not installed (Debian: golang-go, which ./build.sh test installs)");
	snprintf(dir, sizeof(dir), "%s/go-pprof", test_tmp_dir());
	mkdir(dir, 0700);
	snprintf(env, sizeof(env),
		 "GOFLAGS= GO111MODULE= GOENV=off CGO_ENABLED=0 HOME='%s' GOCACHE='%s/cache' "
		 "GOPATH='%s/path' PPROF_TMPDIR='%s' PPROF_BINARY_PATH='%s'",
		 dir, dir, dir, dir, dir);
	snprintf(path, sizeof(path), "%s/prog.go", dir);
	in = fopen(path, "w");
	CHECK(in);
	CHECK_INT(fputs(go_prog, in), >=, 0);
	CHECK_INT(fclose(in), ==, 0);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && env %s go build -o prog prog.go >build.log 2>&1 && ./prog cpu.pb.gz",
		 dir, env);
	run(cmd);
	snprintf(path, sizeof(path), "%s/cpu.pb.gz", dir);
	data = test_read_file(path, &len);
	ours = read_pprof(data, len, NULL, &rc, &info);
	CHECK_INT(rc, ==, 0);
	CHECK_STR(info.type, "samples/count");
	CHECK_U64(info.hz, ==, 100);
	CHECK_U64(info.duration_ns, >=, 1000000000ull);
	CHECK_U64(info.time_ns, >, 0);
	CHECK(!info.lost_known);
	/* At 100 Hz for a second, 2:1, minus what the scheduler took. */
	CHECK_U64(flame__total(ours), >=, 30);

	theirs = new_flame();
	snprintf(cmd, sizeof(cmd), "env %s go tool pprof -traces -sample_index=samples '%s' 2>&1",
		 env, path);
	in = popen(cmd, "r");
	CHECK(in);
	add_traces(theirs, in);
	CHECK_INT(pclose(in), ==, 0);
	CHECK_U64(flame__total(theirs), ==, flame__total(ours));
	CHECK_TEXT(tree_text(ours, false), tree_text(theirs, false));
	/* The inlined function has its own frame, above the one it was inlined into. */
	{
		char *t = tree_text(ours, false), *at = strstr(t, ":main.inner@");

		CHECK(at);
		CHECK(strstr(t, ":main.hotB@") < at);
		free(t);
	}
	flame__free(theirs);
	flame__free(ours);
	free(data);
}

/* ---- a profile made field by field ------------------------------------------------------ */

/* A message being written: its bytes grow in buf. */
struct msg {
	struct pb_buffer buf;
	struct pb_writer w;
};

static void msg_init(struct msg *m)
{
	memset(m, 0, sizeof(*m));
	pb_writer__init_buffer(&m->w, &m->buf);
}

static void put(struct msg *m, uint32_t field, uint64_t v)
{
	CHECK_INT(pb_writer__uint64(&m->w, field, v), ==, 0);
}

/* sub written into m as field, and freed. */
static void put_msg(struct msg *m, uint32_t field, struct msg *sub)
{
	CHECK_INT(pb_writer__bytes(&m->w, field, sub->buf.data, sub->buf.len), ==, 0);
	pb_buffer__free(&sub->buf);
}

static void put_ids(struct msg *m, uint32_t field, const uint64_t *v, size_t n, bool unpacked)
{
	size_t i;

	if (!unpacked) {
		CHECK_INT(pb_writer__packed_uint64(&m->w, field, v, n), ==, 0);
		return;
	}
	for (i = 0; i < n; i++)
		put(m, field, v[i]);
}

static void put_pair(struct msg *m, uint32_t field, uint64_t a, uint64_t b)
{
	struct msg sub;

	msg_init(&sub);
	put(&sub, 1, a);
	put(&sub, 2, b);
	put_msg(m, field, &sub);
}

static const char *const strings[] = {
	"",
	"samples",
	"count",
	"cpu",
	"nanoseconds",
	"main",
	"work",
	"inlined",
	"/usr/bin/app",
	"comm",
	"app",
	"tid",
	"thread_name",
	"worker",
	"[kernel.kallsyms]",
	"do_syscall_64",
	"_Z4workv",
	"[anon:v8]",
	"LazyCompile:foo",
	"cprof: samples taken 10, in profile 7, lost 3 (counts map full)",
};
enum {
	S_SAMPLES = 1,
	S_COUNT,
	S_CPU,
	S_NS,
	S_MAIN,
	S_WORK,
	S_INLINED,
	S_APP_PATH,
	S_COMM,
	S_APP,
	S_TID,
	S_THREAD_NAME,
	S_WORKER,
	S_KERNEL,
	S_SYSCALL,
	S_WORK_SYS,
	S_ANON,
	S_JIT,
	S_COMMENT,
	S_COUNT_ALL
};

/* The small profile; each field a test changes, 0 for the usual. */
struct spec {
	bool unpacked;	       /* location ids and values one field each */
	uint64_t sample_loc;   /* sample 1's caller location (1) */
	uint64_t line_fn;      /* location 2's outer function (2) */
	uint64_t loc_mapping;  /* location 3's mapping (1) */
	uint64_t fn_name;      /* function 1's name (S_MAIN) */
	uint64_t label_key;    /* sample 1's label key (S_COMM) */
	uint64_t loc1_id;      /* location 1's id (1) */
	int nvalues;	       /* values of sample 1 (2) */
	const char *string0;   /* string_table[0] ("") */
	uint64_t first_type;   /* sample_type[0].type (S_SAMPLES) */
	uint64_t default_type; /* default_sample_type (none) */
	size_t deep;	       /* locations of one more sample (none) */
};

/*
 * Samples, leaf first: [2, 1] x3 labelled comm=app; [4, 3, 2, 1] x2 comm=app,
 * tid=7, thread_name=worker; [5, 1] x1; [1] x-4; [6, 1] x1. Location 2 has
 * two lines (inlined into work); 3 and 5 name no function; 4 is in the
 * kernel's mapping, 6 in anonymous memory (JIT).
 */
static void small_profile(const struct spec *sp, uint8_t **out, size_t *len)
{
	struct spec s = *sp;
	struct msg p, m, l;
	size_t i;

	s.sample_loc = s.sample_loc ? s.sample_loc : 1;
	s.line_fn = s.line_fn ? s.line_fn : 2;
	s.loc_mapping = s.loc_mapping ? s.loc_mapping : 1;
	s.fn_name = s.fn_name ? s.fn_name : S_MAIN;
	s.label_key = s.label_key ? s.label_key : S_COMM;
	s.loc1_id = s.loc1_id ? s.loc1_id : 1;
	s.nvalues = s.nvalues ? s.nvalues : 2;
	s.first_type = s.first_type ? s.first_type : S_SAMPLES;
	msg_init(&p);
	put_pair(&p, 1, s.first_type, S_COUNT);
	put_pair(&p, 1, S_CPU, S_NS);
	{
		const uint64_t locs[] = {2, s.sample_loc}, vals[] = {3, 30000};

		msg_init(&m);
		put_ids(&m, 1, locs, 2, s.unpacked);
		put_ids(&m, 2, vals, (size_t)s.nvalues, s.unpacked);
		put_pair(&m, 3, s.label_key, S_APP);
		put_msg(&p, 2, &m);
	}
	{
		const uint64_t locs[] = {4, 3, 2, 1}, vals[] = {2, 20000};

		msg_init(&m);
		put_ids(&m, 1, locs, 4, s.unpacked);
		put_ids(&m, 2, vals, 2, s.unpacked);
		put_pair(&m, 3, S_THREAD_NAME, S_WORKER);
		put_pair(&m, 3, S_COMM, S_APP);
		msg_init(&l);
		put(&l, 1, S_TID);
		put(&l, 3, 7);
		put_msg(&m, 3, &l);
		put_msg(&p, 2, &m);
	}
	{
		const uint64_t locs[] = {5, 1}, vals[] = {1, 10000}, neg[] = {(uint64_t)-4, 0},
			       jit[] = {6, 1};

		msg_init(&m);
		put_ids(&m, 1, locs, 2, s.unpacked);
		put_ids(&m, 2, vals, 2, s.unpacked);
		put_msg(&p, 2, &m);
		msg_init(&m);
		put_ids(&m, 1, locs + 1, 1, s.unpacked);
		put_ids(&m, 2, neg, 2, s.unpacked);
		put_msg(&p, 2, &m);
		msg_init(&m);
		put_ids(&m, 1, jit, 2, s.unpacked);
		put_ids(&m, 2, vals, 2, s.unpacked);
		put_msg(&p, 2, &m);
	}
	if (s.deep) {
		msg_init(&m);
		for (i = 0; i < s.deep; i++)
			put(&m, 1, 1);
		put_ids(&m, 2, (const uint64_t[]){1, 1}, 2, false);
		put_msg(&p, 2, &m);
	}
	{
		/* The program (file offset 0x1000), the kernel, JIT code: id, start, limit, offset,
		 * file */
		const uint64_t maps[][5] = {
			{1, 0x400000, 0x500000, 0x1000, S_APP_PATH},
			{2, 0xffffffff81000000, 0xffffffff82000000, 0, S_KERNEL},
			{3, 0x3e000000, 0x3e100000, 0, S_ANON},
		};

		for (i = 0; i < 3; i++) {
			msg_init(&m);
			for (size_t j = 0; j < 5; j++)
				if (maps[i][j])
					put(&m, (uint32_t)j + 1, maps[i][j]);
			put_msg(&p, 3, &m);
		}
	}
	{
		/* id, mapping, address, functions of its lines (leaf first) */
		const uint64_t locs[][5] = {
			{s.loc1_id, 1, 0x401000, 1, 0},
			{2, 1, 0x401100, 3, s.line_fn},
			{3, s.loc_mapping, 0x402345, 0, 0},
			{4, 2, 0xffffffff81001000, 4, 0},
			{5, 1, 0x401200, 5, 0},
			{6, 3, 0x3e000040, 6, 0},
		};

		for (i = 0; i < 6; i++) {
			msg_init(&m);
			put(&m, 1, locs[i][0]);
			put(&m, 2, locs[i][1]);
			put(&m, 3, locs[i][2]);
			for (size_t j = 3; j < 5 && locs[i][j]; j++) {
				msg_init(&l);
				put(&l, 1, locs[i][j]);
				put(&l, 2, 10 + j);
				put_msg(&m, 4, &l);
			}
			put_msg(&p, 4, &m);
		}
	}
	{
		/* id, name, system_name; function 5 has neither */
		const uint64_t fns[][3] = {
			{1, s.fn_name, s.fn_name},
			{2, S_WORK, S_WORK_SYS},
			{3, S_INLINED, 0},
			{4, S_SYSCALL, S_SYSCALL},
			{5, 0, 0},
			{6, S_JIT, 0},
		};

		for (i = 0; i < 6; i++) {
			msg_init(&m);
			put(&m, 1, fns[i][0]);
			if (fns[i][1])
				put(&m, 2, fns[i][1]);
			if (fns[i][2])
				put(&m, 3, fns[i][2]);
			put_msg(&p, 5, &m);
		}
	}
	CHECK_INT(pb_writer__string(&p.w, 6, s.string0 ? s.string0 : ""), ==, 0);
	for (i = 1; i < S_COUNT_ALL; i++)
		CHECK_INT(pb_writer__string(&p.w, 6, strings[i]), ==, 0);
	put(&p, 9, 1700000000000000000ull);
	put(&p, 10, 2000000000ull);
	put_pair(&p, 11, S_CPU, S_NS);
	put(&p, 12, 10000000);
	put(&p, 13, S_COMMENT);
	if (s.default_type)
		put(&p, 14, s.default_type);
	CHECK_INT(p.w.err, ==, 0);
	*out = p.buf.data;
	*len = p.buf.len;
}

static const char small_tree[] = "0:all@0+7 R\n"
				 "1:app@0+5 P\n"
				 "2:main@0+3 U\n"
				 "3:work@0+3 U\n"
				 "4:inlined@0+3 U\n"
				 "2:worker/7@3+2 P\n"
				 "3:main@3+2 U\n"
				 "4:work@3+2 U\n"
				 "5:inlined@3+2 U\n"
				 "6:app+0x3345@3+2 N\n"
				 "7:do_syscall_64@3+2 K\n"
				 "1:main@5+2 U\n"
				 "2:LazyCompile:foo@5+1 J\n"
				 "2:app+0x2200@6+1 N\n";

/* The spec's profile read; the return code, and info->why on an error. */
static int read_spec(const struct spec *sp, const char *type, struct flame **f,
		     struct pprof_input_info *info)
{
	uint8_t *data;
	size_t len;
	int rc;

	small_profile(sp, &data, &len);
	*f = read_pprof(data, len, type, &rc, info);
	free(data);
	return rc;
}

TEST(pprof_input_small_profile)
{
	struct pprof_input_info info;
	struct flame *f;

	CHECK_INT(read_spec(&(struct spec){0}, NULL, &f, &info), ==, 0);
	CHECK_TEXT(tree_text(f, true), small_tree);
	CHECK_U64(info.stacks, ==, 4);
	CHECK_U64(info.negative, ==, 1);
	CHECK(info.lost_known);
	CHECK_U64(info.lost, ==, 3);
	CHECK_U64(info.hz, ==, 100);
	CHECK_U64(info.duration_ns, ==, 2000000000ull);
	flame__free(f);
	/* Numbers one field each, as proto2 writers do: the same profile. */
	CHECK_INT(read_spec(&(struct spec){.unpacked = true}, NULL, &f, &info), ==, 0);
	CHECK_TEXT(tree_text(f, true), small_tree);
	flame__free(f);
}

/* Which values are drawn: the samples; else the profile's default; else the last. */
TEST(pprof_input_sample_type)
{
	struct pprof_input_info info;
	struct flame *f;

	CHECK_INT(read_spec(&(struct spec){0}, "cpu", &f, &info), ==, 0);
	CHECK_U64(flame__total(f), ==, 70000);
	CHECK_STR(info.type, "cpu/nanoseconds");
	flame__free(f);
	CHECK_INT(read_spec(&(struct spec){.first_type = S_WORK}, NULL, &f, &info), ==, 0);
	CHECK_STR(info.type, "cpu/nanoseconds");
	CHECK(!info.counts);
	flame__free(f);
	CHECK_INT(read_spec(&(struct spec){.first_type = S_WORK, .default_type = S_WORK}, NULL, &f,
			    &info),
		  ==, 0);
	CHECK_STR(info.type, "work/count");
	CHECK_U64(flame__total(f), ==, 7);
	flame__free(f);
	CHECK_INT(read_spec(&(struct spec){0}, "alloc_space", &f, &info), ==, -ENOENT);
	CHECK_STR(info.why, "no sample type 'alloc_space' in it; it has samples/count, "
			    "cpu/nanoseconds");
	flame__free(f);
}

/* Each refused with a reason that names it. */
TEST(pprof_input_bad_references)
{
	static const struct {
		struct spec s;
		const char *why;
	} cases[] = {
		{{.sample_loc = 99}, "sample 1 names location 99, which is not in the profile"},
		{{.line_fn = 99}, "location 2 names function 99, which is not in the profile"},
		{{.loc_mapping = 99}, "location 3 names mapping 99, which is not in the profile"},
		{{.fn_name = 999}, "function: string 999, past the string table's 20"},
		{{.label_key = 999}, "sample 1: a label's string past the string table's 20"},
		{{.loc1_id = 2}, "two locations with id 2"},
		{{.nvalues = 1}, "sample 1 has 1 values for 2 sample types"},
		{{.string0 = "x"}, "string_table[0] is not the empty string"},
		{{.first_type = 20}, "sample_type: string 20, past the string table's 20"},
	};
	struct pprof_input_info info;
	struct flame *f;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(read_spec(&cases[i].s, NULL, &f, &info), ==, -EBADMSG);
		if (strncmp(info.why, cases[i].why, strlen(cases[i].why)))
			test_fail(__FILE__, __LINE__, "case %zu: \"%s\", not \"%s...\"", i,
				  info.why, cases[i].why);
		flame__free(f);
	}
}

/* The profile, then bytes appended: a field as a later one would be (a message's last wins). */
static int read_appended(const void *extra, size_t n, struct pprof_input_info *info)
{
	uint8_t *data, *all;
	struct flame *f;
	size_t len;
	int rc;

	small_profile(&(struct spec){0}, &data, &len);
	all = malloc(len + n);
	CHECK(all);
	memcpy(all, data, len);
	memcpy(all + len, extra, n);
	f = read_pprof(all, len + n, NULL, &rc, info);
	flame__free(f);
	free(all);
	free(data);
	return rc;
}

TEST(pprof_input_bad_wire_format)
{
	static const struct {
		const char *bytes;
		size_t n;
		const char *why;
	} cases[] = {
		{"\x78\xff\xff\xff\xff\xff\xff\xff\xff\xff", 10,
		 "a number cut short by the end of its message"},
		{"\x78\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81\x01", 12,
		 "a number of more than 64 bits"},
		{"\x78\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11,
		 "a number of more than 64 bits"},
		{"\x78\x80", 2, "a number cut short"},
		{"\x32\x05"
		 "ab",
		 4, "field 6 of 5 bytes, past the end of its message"},
		{"\x32\xff\xff\xff\xff\x0f", 6, "field 6 of 4294967295 bytes, past the end"},
		{"\x0b", 1, "field 1 of wire type 3 (a group, or none)"},
		{"\x00", 1, "field number 0"},
		{"\x4a\x01\x00", 3, "profile field 9 of wire type 2, not 0"},
		{"\x48\x01", 2, "time_nanos twice: two profiles concatenated"},
		{"\x12\x02\x08", 3, "field 2 of 2 bytes, past the end"},
		{"\x12\x02\x0b\x00", 4, "field 1 of wire type 3"},
		{"\x6a\x01\x63", 3, "comment: string 99, past"},
		{"\x79\x01\x02\x03", 4, "field 15 cut short"},
	};
	struct pprof_input_info info;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(read_appended(cases[i].bytes, cases[i].n, &info), ==, -EBADMSG);
		if (!strstr(info.why, cases[i].why))
			test_fail(__FILE__, __LINE__, "case %zu: \"%s\", not \"%s\"", i, info.why,
				  cases[i].why);
	}
	/* Fields of a later profile.proto (doc_url), of every wire type, are skipped. */
	CHECK_INT(read_appended("\x78\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11, &info), ==, 0);
	CHECK_INT(
		read_appended("\x78\x05\x81\x01\x01\x02\x03\x04\x05\x06\x07\x08\x85\x01\x01\x02\x03"
			      "\x04\x82\x01\x02xy",
			      23, &info),
		==, 0);
}

/* A stack deeper than any profiler's is skipped and counted, not drawn. */
TEST(pprof_input_too_deep)
{
	struct pprof_input_info info;
	struct flame *f;

	CHECK_INT(read_spec(&(struct spec){.deep = PPROF_INPUT_MAX_DEPTH}, NULL, &f, &info), ==, 0);
	CHECK_U64(info.too_deep, ==, 0);
	CHECK_U64(flame__total(f), ==, 8);
	flame__free(f);
	CHECK_INT(read_spec(&(struct spec){.deep = PPROF_INPUT_MAX_DEPTH + 1}, NULL, &f, &info), ==,
		  0);
	CHECK_U64(info.too_deep, ==, 1);
	CHECK_TEXT(tree_text(f, true), small_tree);
	flame__free(f);
}

/* data[0..len) in a buffer of exactly that size (ASan sees a byte read past it), read. */
static int read_exact(const uint8_t *data, size_t len, uint64_t *total)
{
	struct pprof_input_info info;
	uint8_t *copy = malloc(len ? len : 1);
	struct flame *f;
	int rc;

	CHECK(copy);
	memcpy(copy, data, len);
	f = read_pprof(copy, len, NULL, &rc, &info);
	if (rc)
		CHECK(info.why[0] && strlen(info.why) < sizeof(info.why) &&
		      !strchr(info.why, '\n'));
	*total = flame__total(f);
	flame__free(f);
	free(copy);
	return rc;
}

/* Cut at every length, it is refused with a reason, or is a smaller profile: never more. */
TEST(pprof_input_every_prefix)
{
	uint8_t *data, *gz;
	size_t len, gz_len, n;
	struct gzip_stream *s;
	uint64_t total;
	int rc;

	small_profile(&(struct spec){0}, &data, &len);
	for (n = 0; n < len; n++) {
		rc = read_exact(data, n, &total);
		CHECK(rc == 0 || rc == -EBADMSG);
		CHECK_U64(total, <=, 7);
	}
	CHECK_INT(compress__gzip_begin(&s), ==, 0);
	CHECK_INT(compress__gzip_write(s, data, len), ==, 0);
	CHECK_INT(compress__gzip_end(s, &gz, &gz_len), ==, 0);
	for (n = 0; n < gz_len; n++)
		CHECK_INT(read_exact(gz, n, &total), ==, -EBADMSG);
	CHECK_INT(read_exact(gz, gz_len, &total), ==, 0);
	CHECK_U64(total, ==, 7);
	free(gz);
	free(data);
}

/* Any byte changed: read or refused, never a crash (under ASan: never a byte out of bounds). */
TEST(pprof_input_every_byte_changed)
{
	static const uint8_t values[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
	uint8_t *data;
	size_t len, n, i;
	uint64_t total;
	uint8_t keep;
	int rc;

	small_profile(&(struct spec){0}, &data, &len);
	for (n = 0; n < len; n++) {
		keep = data[n];
		for (i = 0; i <= sizeof(values); i++) {
			data[n] = i < sizeof(values) ? values[i] : keep ^ 0x08;
			rc = read_exact(data, len, &total);
			CHECK(rc == 0 || rc == -EBADMSG);
		}
		data[n] = keep;
	}
	free(data);
}

/* n bytes of zeros, gzipped. */
static uint8_t *gzip_zeros(size_t n, size_t *gz_len)
{
	static uint8_t zeros[1 << 16];
	struct gzip_stream *s;
	uint8_t *gz;
	size_t k;

	CHECK_INT(compress__gzip_begin(&s), ==, 0);
	for (; n; n -= k) {
		k = n < sizeof(zeros) ? n : sizeof(zeros);
		CHECK_INT(compress__gzip_write(s, zeros, k), ==, 0);
	}
	CHECK_INT(compress__gzip_end(s, &gz, gz_len), ==, 0);
	return gz;
}

/* A gzip bomb is refused once it passes the limit, not unpacked whole. */
TEST(pprof_input_gzip_bomb)
{
	struct pprof_input_opts o = {.max_unpacked = 1 << 20};
	struct pprof_input_info info;
	struct flame *f = new_flame();
	size_t gz_len;
	uint8_t *gz;

	/* Exactly the limit unpacks (and is no profile: zeros are field 0); a byte more does not.
	 */
	gz = gzip_zeros(1 << 20, &gz_len);
	CHECK_INT(pprof_input__parse(gz, gz_len, &o, f, &info), ==, -EBADMSG);
	CHECK_STR(info.why, "field number 0, not one protobuf allows (byte 0)");
	free(gz);
	gz = gzip_zeros((1 << 20) + 1, &gz_len);
	CHECK_INT(pprof_input__parse(gz, gz_len, &o, f, &info), ==, -EFBIG);
	CHECK(strstr(info.why, "it unpacks to more than 1 MiB"));
	free(gz);
	/* The default limit: 128 times the file, at least 64 MiB. 100 MiB in 100 KB. */
	gz = gzip_zeros((size_t)100 << 20, &gz_len);
	CHECK_U64(gz_len, <, 512 << 10);
	CHECK_INT(pprof_input__parse(gz, gz_len, NULL, f, &info), ==, -EFBIG);
	CHECK(strstr(info.why, "it unpacks to more than 64 MiB"));
	CHECK(strstr(info.why, "a gzip bomb?"));
	free(gz);
	flame__free(f);
}

/* Gzip members one after another are one file, as gzip -d reads them; anything else after is not.
 */
TEST(pprof_input_gzip_members)
{
	struct pprof_input_info info;
	struct gzip_stream *s;
	uint8_t *data, *a, *b, *both;
	size_t len, a_len, b_len;
	struct flame *f;
	int rc;

	small_profile(&(struct spec){0}, &data, &len);
	CHECK_INT(compress__gzip_begin(&s), ==, 0);
	CHECK_INT(compress__gzip_write(s, data, len / 2), ==, 0);
	CHECK_INT(compress__gzip_end(s, &a, &a_len), ==, 0);
	CHECK_INT(compress__gzip_begin(&s), ==, 0);
	CHECK_INT(compress__gzip_write(s, data + len / 2, len - len / 2), ==, 0);
	CHECK_INT(compress__gzip_end(s, &b, &b_len), ==, 0);
	both = malloc(a_len + b_len + 2);
	CHECK(both);
	memcpy(both, a, a_len);
	memcpy(both + a_len, b, b_len);
	f = read_pprof(both, a_len + b_len, NULL, &rc, &info);
	CHECK_INT(rc, ==, 0);
	CHECK_TEXT(tree_text(f, true), small_tree);
	flame__free(f);
	memcpy(both + a_len + b_len, "\x1f", 1);
	f = read_pprof(both, a_len + b_len + 1, NULL, &rc, &info);
	CHECK_INT(rc, ==, -EBADMSG);
	CHECK_STR(info.why, "gzip: bytes after the gzip data");
	flame__free(f);
	memcpy(both + a_len + b_len, "\x1f\x8b", 2);
	f = read_pprof(both, a_len + b_len + 2, NULL, &rc, &info);
	CHECK_INT(rc, ==, -EBADMSG);
	CHECK_STR(info.why, "gzip: the gzip data is cut short");
	flame__free(f);
	free(both);
	free(b);
	free(a);
	free(data);
}

/* Not a profile at all: text, or nothing. */
TEST(pprof_input_not_a_profile)
{
	struct pprof_input_info info;
	struct flame *f;
	int rc;

	f = read_pprof("app;main;hot_a 70\n", 18, NULL, &rc, &info);
	CHECK_INT(rc, ==, -EBADMSG);
	flame__free(f);
	f = read_pprof("", 0, NULL, &rc, &info);
	CHECK_INT(rc, ==, -EBADMSG);
	CHECK_STR(info.why, "no string table: not a pprof profile");
	flame__free(f);
	/* The empty string alone: a profile, without samples. */
	f = read_pprof("\x32\x00", 2, NULL, &rc, &info);
	CHECK_INT(rc, ==, 0);
	CHECK_U64(info.stacks, ==, 0);
	CHECK_STR(info.type, "");
	flame__free(f);
}
