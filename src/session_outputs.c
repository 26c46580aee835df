// SPDX-License-Identifier: MIT
/*
 * What a run writes and uploads: the profile to its file (pprof, folded or
 * the flame graph), the upload with a file as fallback, continuous mode's
 * intervals handed to the delivery thread, and the upload's setup.
 */
#include "session_internal.h"

#define LOG_MODULE NULL
#include "lib/log.h"

/* The flame graph, titled with what was profiled, where and how. */
static int write_svg(const struct session_opts *o, struct profile *prof,
		     const struct summary_info *info, struct output *out)
{
	const struct profile_meta *pm = profile__meta(prof);
	struct svg_meta meta = {.time_ns = pm->time_ns,
				.duration_ns = pm->duration_ns,
				.hz = pm->hz,
				.lost_known = true,
				.lost = summary__lost_samples(info)};
	struct sbuf target = {0};
	struct utsname uts;
	char *svg = NULL;
	size_t len = 0, i;
	int err;

	for (i = 0; o->command && o->command[i]; i++)
		sbuf__printf(&target, "%s%s", i ? " " : "", o->command[i]);
	if (o->npids)
		sbuf__str(&target, o->npids > 1 ? "PIDs " : "PID ");
	for (i = 0; i < o->npids; i++)
		sbuf__printf(&target, "%s%u", i ? ", " : "", o->pids[i]);
	if (!o->command && !o->npids)
		sbuf__str(&target, "the whole system");
	sbuf__add(&target, "", 1);
	meta.target = target.err ? NULL : target.data;
	if (uname(&uts) == 0) {
		meta.host = uts.nodename;
		meta.kernel = uts.release;
	}
	err = svg__encode(prof, &o->svg, &meta, &svg, &len);
	if (!err)
		err = output__write(out, svg, len);
	if (!err)
		fprintf(stderr, "cprof: wrote %s%s (flame graph, %zu bytes)\n",
			strcmp(output__path(out), "stdout") ? "" : "the flame graph to ",
			output__path(out), len);
	free(svg);
	free(target.data);
	return err;
}

static int write_pprof(struct profile *prof, struct output *out)
{
	uint8_t *gz = NULL;
	size_t gz_len = 0;
	int err;

	err = pprof__encode_gz(prof, &gz, &gz_len);
	if (err) {
		pr_err("cannot encode the pprof profile: %s", strerror(-err));
		return err;
	}
	err = output__write(out, gz, gz_len);
	if (!err)
		fprintf(stderr, "cprof: wrote %s%s (pprof, %zu bytes)\n",
			strcmp(output__path(out), "stdout") ? "" : "the profile to ",
			output__path(out), gz_len);
	free(gz);
	return err;
}

int run__write_profile(const struct session_opts *o, struct profile *prof,
		       const struct summary_info *info, struct output *out)
{
	char *text = NULL;
	size_t text_len = 0;
	int err;

	if (o->format == FORMAT_SVG)
		return write_svg(o, prof, info, out);
	if (o->format == FORMAT_PPROF)
		return write_pprof(prof, out);
	err = folded__encode(prof, &text, &text_len);
	if (err) {
		pr_err("cannot encode the folded profile: %s", strerror(-err));
		return err;
	}
	err = output__write(out, text, text_len);
	free(text);
	return err;
}

/*
 * The upload failed and -o draws a flame graph: the profile itself is kept
 * too, as the server would have had it, beside the graph (app.svg:
 * app.pb.gz; stdout: cprof.pb.gz).
 */
static void keep_pprof(const struct session_opts *o, struct profile *prof)
{
	size_t n = strlen(o->output);
	struct output *out = NULL;
	char path[PATH_MAX];

	if (!strcmp(o->output, "-"))
		snprintf(path, sizeof(path), "cprof.pb.gz");
	else if (n > 4 && !strcasecmp(o->output + n - 4, ".svg"))
		snprintf(path, sizeof(path), "%.*s.pb.gz", (int)(n - 4), o->output);
	else
		snprintf(path, sizeof(path), "%s.pb.gz", o->output);
	if (output__open(path, true, &out) == 0)
		write_pprof(prof, out);
	else
		pr_err("cannot keep the profile in %s", path);
	output__free(out);
}

/*
 * One-shot upload. Whatever the server does, the profile is kept: written
 * to the output file when the upload fails, and also when -o asked for it.
 */
int run__upload_or_save(struct run *r, const struct summary_info *info, struct output *out)
{
	enum upload_result res = UPLOAD_REJECTED;
	struct batch *b = NULL;
	int err;

	err = batcher__make(r->batcher, r->prof, &b);
	if (!err && !b->nseries) {
		fprintf(stderr, "cprof: the profile has no samples: nothing to upload\n");
		res = UPLOAD_OK;
	} else if (!err) {
		signals__cancel_upload_with(r->cancel);
		res = delivery__send_now(r->upload, b, ONESHOT_ATTEMPTS, r->cancel);
		signals__cancel_upload_with(NULL);
		if (res == UPLOAD_OK)
			fprintf(stderr, "cprof: uploaded the profile to %s (%s, %zu series)\n",
				upload__url(r->upload),
				upload__protocol_name(upload__protocol(r->upload)), b->nseries);
		else
			pr_err("the upload to %s failed: %s", upload__url(r->upload),
			       res == UPLOAD_CANCELED ? "interrupted"
						      : upload__last_error(r->upload));
	}
	batch__free(b);
	if (res == UPLOAD_OK && !r->o->output_given)
		return 0;
	err = run__write_profile(r->o, r->prof, info, out);
	if (res != UPLOAD_OK && r->o->format != FORMAT_PPROF)
		keep_pprof(r->o, r->prof);
	if (res != UPLOAD_OK)
		return EXIT_UPLOAD_FAILED;
	return err ? 1 : 0;
}

/*
 * Continuous mode: the interval ends at now (the maps were just drained).
 * Its profile goes to the delivery thread; the next begins at the same
 * instant. Only running out of memory stops the run.
 */
int run__end_interval(struct run *r, uint64_t now, bool last)
{
	struct summary_info cur, delta;
	struct profile_meta meta;
	struct profile *next;
	struct batch *b = NULL;

	/* Before the counters are read: a kernel symbol gone meanwhile counts as unknown. */
	profile__finish_frames(r->prof, r->sym, last);
	run__read_info(r, &cur);
	delta = run__since(&cur, &r->prev);
	delta.interval = true;
	delta.duration_ns = now - r->interval_start;
	delta.unnamed_samples = summary__unnamed_samples(r->prof, &delta.function_start_samples);
	r->unnamed_samples += delta.unnamed_samples;
	r->function_start_samples += delta.function_start_samples;
	summary__line_samples(r->prof, delta.line_samples);
	for (int i = 0; i < SYM_LINE_MAX; i++)
		r->line_samples[i] += delta.line_samples[i];
	delta.unmapped_samples =
		summary__unmapped_samples(r->prof, delta.unmapped_who, sizeof(delta.unmapped_who));
	r->unmapped_samples += delta.unmapped_samples;
	delta.truncated_samples = summary__truncated_samples(r->prof, delta.truncated_who,
							     sizeof(delta.truncated_who));
	r->prev = cur;
	profile__set_duration(r->prof, delta.duration_ns);
	summary__add_comments(r->prof, &delta);
	r->intervals++;
	r->samples += profile__total_count(r->prof);
	if (batcher__make(r->batcher, r->prof, &b)) {
		r->unbatched++;
	} else if (!b->nseries) {
		r->empty_intervals++;
		batch__free(b);
	} else {
		pr_info("interval %" PRIu64 ": %" PRIu64
			" samples in %zu series, %zu bytes: queued",
			r->intervals, profile__total_count(r->prof), b->nseries, batch__size(b));
		delivery__submit(r->delivery, b);
	}
	if (last)
		return 0;
	meta = *profile__meta(r->prof);
	meta.time_ns += delta.duration_ns;
	meta.duration_ns = 0;
	next = profile__new(&meta);
	if (!next) {
		pr_err("out of memory starting a new interval");
		return -ENOMEM;
	}
	profile__free(r->prof);
	r->prof = next;
	r->interval_start = now;
	return 0;
}

/* The end of a continuous run: what was sampled, and where it all went. */
int run__finish_continuous(struct run *r, const struct summary_info *total)
{
	struct delivery_stats st;
	bool complete;

	fprintf(stderr,
		"cprof: %" PRIu64 " %s in %.2f s at %" PRIu64 " Hz on %d %s, %" PRIu64
		" %s of up to %.2f s\n",
		r->samples, plural(r->samples, "sample", "samples"),
		(double)total->duration_ns / 1e9, total->hz, total->ncpus,
		plural((uint64_t)total->ncpus, "CPU", "CPUs"), r->intervals,
		plural(r->intervals, "interval", "intervals"), (double)r->o->interval_ms / 1e3);
	summary__print_losses(stderr, r->samples, total);
	delivery__finish(r->delivery, &st);
	fprintf(stderr,
		"cprof: upload to %s (%s): %" PRIu64 " %s to send, %" PRIu64 " sent (%" PRIu64
		" after a stay in the spool), %" PRIu64 " spooled, %" PRIu64
		" still in the spool %s, %" PRIu64 " refused, %" PRIu64 " dropped\n",
		upload__url(r->upload), upload__protocol_name(upload__protocol(r->upload)),
		st.submitted, plural(st.submitted, "interval", "intervals"), st.sent,
		st.sent_from_spool, st.spooled, st.in_spool, spool__dir(r->spool), st.rejected,
		st.dropped);
	if (st.found_in_spool)
		fprintf(stderr,
			"cprof: %" PRIu64
			" of those sent were left in the spool by an earlier run\n",
			st.found_in_spool);
	if (st.not_ours)
		fprintf(stderr,
			"cprof: %" PRIu64 " %s in the spool %s %s not a regular file of uid %u:"
			" left there, not sent\n",
			st.not_ours, plural(st.not_ours, "entry", "entries"), spool__dir(r->spool),
			plural(st.not_ours, "was", "were"), (unsigned)geteuid());
	if (r->empty_intervals)
		fprintf(stderr, "cprof: %" PRIu64 " %s no samples: nothing to send\n",
			r->empty_intervals,
			plural(r->empty_intervals, "interval had", "intervals had"));
	if (r->unbatched)
		fprintf(stderr,
			"cprof: %" PRIu64 " %s not be prepared for upload (out of memory)\n",
			r->unbatched, plural(r->unbatched, "interval could", "intervals could"));
	complete = !st.in_spool && !st.rejected && !st.dropped && !st.not_ours && !r->unbatched;
	return complete ? 0 : EXIT_UPLOAD_FAILED;
}

/* What Pyroscope lists the profile under: the command, the process, or the host. */
static void service_name(const struct run *r, char *buf, size_t size)
{
	const char *slash;

	if (r->o->command) {
		slash = strrchr(r->o->command[0], '/');
		snprintf(buf, size, "%s", slash ? slash + 1 : r->o->command[0]);
	} else if (r->npids) {
		if (procfs__comm(r->pids[0], buf, size))
			snprintf(buf, size, "%u", r->pids[0]);
	} else {
		snprintf(buf, size, "host");
	}
}

int run__setup_upload(struct run *r)
{
	const struct session_opts *o = r->o;
	char service[256];
	int err;

	service_name(r, service, sizeof(service));
	err = upload__new(o->upload, &r->upload);
	if (err)
		return err;
	/* Whole-system mode: a series per process. */
	err = batcher__new(service, o->labels, !o->npids && !o->command, &r->batcher);
	if (err) {
		pr_err("cannot set up the upload: %s", strerror(-err));
		return err;
	}
	if (o->interval_ms)
		return spool__open(o->spool_dir, o->spool_max_bytes, &r->spool);
	err = cancel__new(&r->cancel);
	if (err)
		pr_err("cannot set up the upload: %s", strerror(-err));
	return err;
}
