/*
 * test_livefile.c - a live session streams every event to its capture file
 * (tui/live_rec.c) while the store holds at most its budget: the simulated
 * trainer (`gtrace demo --trainer`) runs the steps of an hour of training
 * (38 M events) into a session with a 256 MiB budget, time compressed: as
 * fast as the session takes them (--lossless: the trainer waits for room
 * in the ring, so a loaded machine makes the test slower, never lossy);
 * truth is the trainer's own count of the events it generated and
 * published, and the file read back fresh, which must equal the session's
 * store at past points of the trace.  RSS is sampled throughout.
 *
 * GTRACE_LIVEFILE_SIM_S sets the simulated seconds (default 3600; 600 under
 * the sanitizers, whose receiver is slower).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gtrace/gtfile.h"
#include "gtrace/lsum.h"
#include "live_sess.h"
#include "live_rec.h"
#include "../../bench/rss.h"

/* events/s the ring test's trainer is paced to (GTRACE_LIVEFILE_RATE sets
 * it; slower under the sanitizers), and the hour test's simulated length */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RATE_DEFAULT 100000.0
#define SIM_S_DEFAULT 600.0      /* ten simulated minutes */
#else
#define RATE_DEFAULT 150000.0
#define SIM_S_DEFAULT 3600.0
#endif
static double rate_ev_s(void)
{
	const char *e = getenv("GTRACE_LIVEFILE_RATE");
	return e && atof(e) > 0 ? atof(e) : RATE_DEFAULT;
}
#define RATE rate_ev_s()
/* the hour test: the comm-bound trainer's step, and the most events/s it
 * is let publish (it waits for the session when that is slower) */
#define STEP_S 0.0791
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOUR_RATE 300000.0
#else
#define HOUR_RATE 1000000.0
#endif
#define BUDGET (256ull << 20)
/* fixed overhead beside the budget: the 64 MiB ring mapping, the writer's
 * buffers, the binary and libc, the lane tables */
#define OVERHEAD (192ull << 20)

static char dir[256];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gtrace-livefile-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	setenv("TMPDIR", dir, 1);
}

static void teardown(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* start the trainer at rate_ev_s events/s with the options `more` (ending
 * with NULL), waiting for its viewer; its pid, its stderr into errpath */
static pid_t start_trainer_with(double rate_ev_s, const char *errpath, const char *const *more)
{
	const char *b = getenv("GTRACE_BUILD");
	cr_assert_not_null(b, "GTRACE_BUILD not set");
	char exe[512], rate[32];
	snprintf(exe, sizeof(exe), "%s/tui/gtrace", b);
	snprintf(rate, sizeof(rate), "%.0f", rate_ev_s);
	const char *argv[24] = { "gtrace", "demo", "--trainer", "--gpus", "1", "--scenario",
				 "comm-bound", "--rate", rate, "--wait", "--linger", "10" };
	size_t n = 12;
	while (*more && n < 23)
		argv[n++] = *more++;
	argv[n] = NULL;
	int out[2];
	cr_assert_eq(pipe(out), 0);
	pid_t p = fork();
	cr_assert(p >= 0);
	if (p == 0) {
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (e >= 0)
			dup2(e, 2);
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	char line[128] = "";
	FILE *f = fdopen(out[0], "r");
	cr_assert(f && fgets(line, sizeof(line), f), "the trainer did not start");
	fclose(f);
	return p;
}

/* the trainer for `seconds` of wall time */
static pid_t start_trainer_at(double seconds, double rate_ev_s, const char *errpath)
{
	char secs[32];
	snprintf(secs, sizeof(secs), "%.3f", seconds);
	return start_trainer_with(rate_ev_s, errpath, (const char *const[]){ "--seconds", secs, NULL });
}

/* the hour's trainer: N steps, as fast as the session takes them up to
 * rate_ev_s (--lossless: it waits for room in the ring rather than losing
 * events, so the count to check is the simulator's own whatever the load) */
static pid_t start_trainer_steps(long steps, double rate_ev_s, const char *errpath)
{
	char nsteps[32];
	snprintf(nsteps, sizeof(nsteps), "%ld", steps);
	return start_trainer_with(rate_ev_s, errpath,
				  (const char *const[]){ "--steps", nsteps, "--lossless", NULL });
}

/* the trainer's "N events generated, M published" */
static void trainer_counts(const char *errpath, unsigned long long *gen, unsigned long long *pub)
{
	FILE *f = fopen(errpath, "r");
	cr_assert_not_null(f);
	char line[512];
	*gen = *pub = 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "; ");
		if (p && strstr(line, "events generated"))
			sscanf(p + 2, "%llu events generated, %llu published", gen, pub);
	}
	fclose(f);
}

/* the events of lane l overlapping [t0, t1) of both stores are the same */
static void same_window(const struct gt_store *a, const struct gt_store *b, int64_t t0, int64_t t1)
{
	cr_assert_eq(gt_store_lane_count(a), gt_store_lane_count(b));
	size_t seen = 0;
	for (uint32_t l = 0; l < gt_store_lane_count(a); l++) {
		const struct gt_lane *x = gt_store_lane_at(a, l), *y = gt_store_lane_at(b, l);
		cr_assert_eq(x->key.type, y->key.type);
		cr_assert_eq(x->key.id, y->key.id);
		size_t i = gt_store_lane_lower_start(x, t0), j = gt_store_lane_lower_start(y, t0);
		for (; i < x->n && x->ev[i].start_ns < t1; i++, j++) {
			cr_assert(j < y->n, "lane %u: the file lacks event %zu", l, i);
			const struct gt_event *e = &x->ev[i], *f = &y->ev[j];
			cr_assert(e->start_ns == f->start_ns && e->dur_ns == f->dur_ns &&
				  e->name == f->name && e->kind == f->kind && e->corr == f->corr,
				  "lane %u event %zu differs", l, i);
			seen++;
		}
		cr_assert(j >= y->n || y->ev[j].start_ns >= t1, "lane %u: the file has more", l);
	}
	cr_assert(seen > 0, "no events in [%lld, %lld)", (long long)t0, (long long)t1);
}

TestSuite(livefile, .init = setup, .fini = teardown);

Test(livefile, hour_equivalent, .timeout = 900)
{
	const char *env = getenv("GTRACE_LIVEFILE_SIM_S");
	double sim_s = env ? atof(env) : SIM_S_DEFAULT;
	long steps = (long)(sim_s / STEP_S) + 1;
	char errpath[320];
	snprintf(errpath, sizeof(errpath), "%s/trainer.err", dir);
	int64_t wall0 = live_mono_ns();
	pid_t tp = start_trainer_steps(steps, HOUR_RATE, errpath);

	struct gt_store *s = gt_store_new();
	cr_assert_not_null(s);
	cr_assert_eq(gt_store_set_budget(s, BUDGET), 0);
	struct live_sess ss;
	live_sess_init(&ss, s, 0);
	char err[512];
	cr_assert_eq(live_sess_add(&ss, tp, err, sizeof(err)), 0, "%s", err);
	struct live_rec rec;
	cr_assert_eq(live_rec_open(&rec, s, NULL, 0, 0, err, sizeof(err)), 0, "%s", err);
	ss.rec = &rec;
	cr_assert(!strncmp(rec.path, dir, strlen(dir)), "temporary file %s not under TMPDIR", rec.path);

	size_t rss_max = 0, samples = 0;
	int64_t t_end = live_mono_ns() + (int64_t)840 * 1000000000, last = 0;
	while (!live_sess_done(&ss) && live_mono_ns() < t_end) {
		int r = live_sess_poll(&ss);
		cr_assert(r >= 0, "poll: %d %s", r, ss.msg);
		int64_t now = live_mono_ns();
		if (now - last >= 250000000) {
			size_t v = rss_bytes();
			rss_max = v > rss_max ? v : rss_max;
			samples++;
			last = now;
		}
		if (r == 0) {
			struct timespec ts = { 0, 5000000 };
			nanosleep(&ts, NULL);
		}
	}
	cr_assert(live_sess_done(&ss), "the session did not end");
	live_sess_close(&ss);
	int st;
	cr_assert_eq(waitpid(tp, &st, 0), tp);
	unsigned long long gen, pub;
	trainer_counts(errpath, &gen, &pub);
	cr_assert(gen > 0 && gen == pub, "trainer: %llu generated, %llu published", gen, pub);
	/* every event recorded: the session's count, nothing lost */
	cr_assert_eq(ss.events, pub, "session %llu events, trainer %llu", (unsigned long long)ss.events, pub);
	cr_assert_eq(gt_store_drops_lost(gt_store_drops(s)), 0);
	cr_assert_eq(rec.events, pub);

	/* keep it (a link to the temporary file), close: complete, temp gone */
	char kept[320];
	snprintf(kept, sizeof(kept), "%s/kept.gtrace", dir);
	char msg[256];
	cr_assert_eq(live_rec_keep(&rec, s, kept, msg, sizeof(msg)), 0, "%s", msg);
	char tmpdir_path[PATH_MAX];
	snprintf(tmpdir_path, sizeof(tmpdir_path), "%s", rec.dir);
	cr_assert_eq(live_rec_close(&rec, s, err, sizeof(err)), 0, "%s", err);
	cr_assert_neq(access(tmpdir_path, F_OK), 0, "%s was not removed", tmpdir_path);

	/* a fresh open of the file holds every event; the past equals it */
	struct gt_store *f = gt_store_new();
	struct gt_file_info info;
	cr_assert_eq(gt_file_read(kept, f, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert(!info.truncated);
	cr_assert_eq(gt_store_event_count(f), pub);
	int64_t t0 = gt_store_t_min(f), t1 = gt_store_t_max(f);
	cr_assert_eq(t0, gt_store_t_min(s));
	cr_assert_eq(t1, gt_store_t_max(s));
	/* the simulated span is the hour asked (a step of slack each way) */
	cr_assert((double)(t1 - t0) / 1e9 > sim_s * 0.97, "span %.1f s of %.0f", (double)(t1 - t0) / 1e9, sim_s);
	for (int k = 0; k < 9; k++) {
		int64_t a = t0 + (t1 - t0) / 10 * k;
		same_window(s, f, a, a + 200000000);
	}
	gt_store_free(f);
	gt_store_free(s);
	double wall_s = (double)(live_mono_ns() - wall0) / 1e9;
	fprintf(stderr, "livefile: %.0f simulated s in %.1f wall s (%.0f events/s), %llu events, "
		"max RSS %.1f MiB (%zu samples), budget %llu MiB\n", sim_s, wall_s,
		(double)pub / wall_s, pub, (double)rss_max / 1048576.0,
		samples, BUDGET >> 20);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* the sanitizer's shadow memory and its quarantine of freed blocks
	 * (256 MiB by default) are in RSS and are not the capture's */
	cr_skip_test("RSS bound not asserted under a sanitizer: max RSS %.1f MiB", (double)rss_max / 1048576.0);
#endif
	cr_assert(rss_max < BUDGET + OVERHEAD, "max RSS %.1f MiB over budget %llu MiB + %llu MiB",
		  (double)rss_max / 1048576.0, BUDGET >> 20, OVERHEAD >> 20);
}

/* run a session on the trainer until it ends; every dt_ms call fn (may be
 * NULL) once with the session */
static void drive(struct live_sess *ss, int at_ms, void (*fn)(struct live_sess *ss, void *ctx),
		  void *ctx)
{
	int64_t t0 = live_mono_ns(), t_end = t0 + 120 * (int64_t)1000000000;
	int called = 0;
	while (!live_sess_done(ss) && live_mono_ns() < t_end) {
		int r = live_sess_poll(ss);
		cr_assert(r >= 0, "poll: %d %s", r, ss->msg);
		if (fn && !called && live_mono_ns() - t0 >= (int64_t)at_ms * 1000000) {
			fn(ss, ctx);
			called = 1;
		}
		if (r == 0) {
			struct timespec ts = { 0, 5000000 };
			nanosleep(&ts, NULL);
		}
	}
	cr_assert(live_sess_done(ss), "the session did not end");
	cr_assert(!fn || called);
}

struct keep_ctx {
	char name[320];
	uint64_t events_then;
};

static void keep_now(struct live_sess *ss, void *ctx)
{
	struct keep_ctx *k = ctx;
	char msg[256];
	cr_assert_eq(live_rec_keep(ss->rec, ss->s, k->name, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert(strstr(msg, "saved "), "%s", msg);
	/* a second W to the same name is refused, nothing replaced */
	cr_assert_eq(live_rec_keep(ss->rec, ss->s, k->name, msg, sizeof(msg)), -EEXIST);
	cr_assert(strstr(msg, "exists; not replaced"), "%s", msg);
	k->events_then = gt_store_event_count(ss->s);
	/* what W wrote opens now, while the capture goes on: the store cut to
	   the window then, event for event */
	struct gt_store *f = gt_store_new();
	struct gt_file_info info;
	char err[512];
	cr_assert_eq(gt_file_read(k->name, f, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert(gt_store_event_count(f) > 0);
	cr_assert_eq(gt_store_event_count(f), k->events_then, "%zu != %llu", gt_store_event_count(f),
		     (unsigned long long)k->events_then);
	gt_store_free(f);
}

static const char *meta(const struct gt_store *s, const char *key)
{
	const char *v = gt_store_meta_get(s, key);
	cr_assert_not_null(v, "no metadata %s", key);
	return v;
}

/* --ring with W in the middle: the kept name holds the store cut to the
 * window then, the window at exit; the live store runs within 1.5 windows;
 * kept + discarded = published, the discarded range before the kept one */
Test(livefile, ring_keep, .timeout = 180)
{
	char errpath[320];
	snprintf(errpath, sizeof(errpath), "%s/trainer.err", dir);
	/* 2.5 wall s at RATE / 2 events/s: ~47 s of comm-bound trace (~14 s
	 * under the sanitizers), a 5 s ring */
	pid_t tp = start_trainer_at(2.5, RATE / 2, errpath);
	struct gt_store *s = gt_store_new();
	struct live_sess ss;
	live_sess_init(&ss, s, 0);
	char err[512];
	cr_assert_eq(live_sess_add(&ss, tp, err, sizeof(err)), 0, "%s", err);
	struct live_rec rec;
	int64_t ring = 5 * (int64_t)1000000000;
	cr_assert_eq(live_rec_open(&rec, s, NULL, 0, ring, err, sizeof(err)), 0, "%s", err);
	ss.rec = &rec;
	struct keep_ctx k;
	snprintf(k.name, sizeof(k.name), "%s/ring-kept.gtrace", dir);
	drive(&ss, 1500, keep_now, &k);
	live_sess_close(&ss);
	int st;
	cr_assert_eq(waitpid(tp, &st, 0), tp);
	unsigned long long gen, pub;
	trainer_counts(errpath, &gen, &pub);
	cr_assert(gen > 0 && gen == pub && ss.events == pub);
	/* the live store: every event published is in it or cut, and it holds
	   at least the window and at most 1.5 windows (lanes cut once they
	   hold half a window more; a batch's lag beside) */
	cr_assert_eq(gt_store_event_count(s) + gt_store_dropped(s, NULL), pub);
	double held = (double)(gt_store_t_max(s) - gt_store_t_min(s)) / 1e9;
	cr_assert(held >= 5.0 && held < 5.0 * 1.5 + 1.0, "the store holds %.3f s of a 5 s ring", held);
	char segdir[PATH_MAX];
	snprintf(segdir, sizeof(segdir), "%s", rec.dir);
	cr_assert(rec.disc_events > 0, "a 5 s ring over ~14-47 s removed no segment");
	cr_assert_eq(live_rec_close(&rec, s, err, sizeof(err)), 0, "%s", err);
	cr_assert_neq(access(segdir, F_OK), 0, "%s left behind", segdir);
	/* what the ring discarded: what the store cut (the last cut at close,
	   to the window exactly) */
	int64_t s_last;
	uint64_t disc = gt_store_dropped(s, &s_last);
	cr_assert(disc > 0, "a 5 s ring over ~14-47 s discarded nothing");
	struct gt_store *f = gt_store_new();
	struct gt_file_info info;
	cr_assert_eq(gt_file_read(k.name, f, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert(!info.truncated);
	/* the kept name holds the window at exit: the store, event for event,
	   and with what was cut every event published */
	cr_assert_eq(gt_store_event_count(f), gt_store_event_count(s));
	cr_assert_eq(gt_store_event_count(f) + disc, pub, "kept %zu + discarded %llu != %llu",
		     gt_store_event_count(f), (unsigned long long)disc, pub);
	cr_assert(gt_store_event_count(f) > k.events_then / 4);
	cr_assert_eq(strtoull(meta(f, "ring_discarded_events"), NULL, 10), disc);
	cr_assert_str_eq(meta(f, "ring_window_ns"), "5000000000");
	int64_t d1 = strtoll(meta(f, "ring_discarded_to_ns"), NULL, 10);
	int64_t d0 = strtoll(meta(f, "ring_discarded_from_ns"), NULL, 10);
	cr_assert_eq(d1, s_last);
	cr_assert(d0 < gt_store_t_min(f), "the discarded range starts before the kept one");
	cr_assert(d1 < gt_store_t_max(f) - ring, "discarded events within the last 5 s");
	/* every event starts in the last 5 s (a counter's value moved to the
	   window's start): no more, and, the capture being dense, no less */
	double span = (double)(gt_store_t_max(f) - gt_store_t_min(f)) / 1e9;
	cr_assert(span > 4.9 && span <= 5.0, "kept span %.3f s", span);
	/* the file's summary (its zoomed-out frames) is of its own events: per
	   lane, the events it counts are the lane's (read without the events,
	   as open's first frame does) */
	struct gt_store *hd = gt_store_new();
	cr_assert_eq(gt_file_read_head(k.name, hd, &info, err, sizeof(err)), 0, "%s", err);
	const struct gt_lsum *m = gt_store_summary(hd);
	cr_assert_not_null(m, "the ring's file has no summary");
	size_t checked = 0;
	for (uint32_t l = 0; l < gt_store_lane_count(f); l++) {
		const struct gt_lane *ln = gt_store_lane_at(f, l);
		if (ln->key.type == GT_LANE_COUNTER)
			continue;   /* the allocated-bytes lanes are built on reading */
		uint32_t lh = gt_store_lane(hd, &ln->key);
		struct gt_bucket b;
		cr_assert(gt_lsum_buckets(m, lh, m->origin_ns, 2 * (gt_store_t_max(f) - m->origin_ns) + 2, 1,
					  &b, NULL, NULL));
		cr_assert_eq(b.count, ln->n, "lane %u: the summary counts %u events, the file has %zu", l,
			     b.count, ln->n);
		checked++;
	}
	cr_assert_gt(checked, 0);
	gt_store_free(hd);
	gt_store_free(f);
	gt_store_free(s);
}

/* the receiver never waits on the cache file (issue 16): with every call
 * the budget's thread makes on the cache file slowed to 1 s
 * (GTRACE_STORE_SLOW_US, a slow disk), a session at 300 k events/s under a
 * 16 MiB budget (engaged within a second, arrays moved, lanes mapped ahead)
 * still drains its ring: nothing lost, and no poll lasts as long as one
 * slowed call (one made on the receiver's thread would) */
Test(livefile, slow_cache_file, .timeout = 180)
{
	setenv("GTRACE_STORE_SLOW_US", "1000000", 1);
	char errpath[320];
	snprintf(errpath, sizeof(errpath), "%s/trainer.err", dir);
	pid_t tp = start_trainer_at(6, 300000, errpath);
	struct gt_store *s = gt_store_new();
	cr_assert_eq(gt_store_set_budget(s, 16u << 20), 0);
	struct live_sess ss;
	live_sess_init(&ss, s, 0);
	char err[512];
	cr_assert_eq(live_sess_add(&ss, tp, err, sizeof(err)), 0, "%s", err);
	struct live_rec rec;
	cr_assert_eq(live_rec_open(&rec, s, NULL, 0, 0, err, sizeof(err)), 0, "%s", err);
	ss.rec = &rec;
	int64_t t_end = live_mono_ns() + (int64_t)120e9, worst = 0;
	while (!live_sess_done(&ss) && live_mono_ns() < t_end) {
		int64_t a = live_mono_ns();
		int r = live_sess_poll(&ss);
		int64_t d = live_mono_ns() - a;
		worst = d > worst ? d : worst;
		cr_assert(r >= 0, "poll: %d %s", r, ss.msg);
		if (r == 0) {
			struct timespec ts = { 0, 5000000 };
			nanosleep(&ts, NULL);
		}
	}
	cr_assert(live_sess_done(&ss), "the session did not end");
	live_sess_close(&ss);
	int st;
	cr_assert_eq(waitpid(tp, &st, 0), tp);
	unsigned long long gen, pub;
	trainer_counts(errpath, &gen, &pub);
	cr_assert(gen > 0 && gen == pub, "trainer: %llu generated, %llu published", gen, pub);
	cr_assert_eq(ss.events, pub);
	cr_assert_eq(gt_store_drops_lost(gt_store_drops(s)), 0);
	/* the slowed calls did happen, on the budget's thread */
	uint64_t off = gt_store_cache_offloaded(s);
	fprintf(stderr, "slow_cache_file: %llu events, longest poll %.0f ms, %llu cache-file calls "
		"offloaded (1 s each)\n", pub, (double)worst / 1e6, (unsigned long long)off);
	cr_assert(off >= 1, "no cache-file call was made on the budget's thread");
	cr_assert(worst < 1000000000, "a poll took %.0f ms: the receiver waited on a slowed call",
		  (double)worst / 1e6);
	cr_assert_eq(live_rec_close(&rec, s, err, sizeof(err)), 0, "%s", err);
	gt_store_free(s);
}
