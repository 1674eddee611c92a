/*
 * live_bench.c - a live capture at a high event rate, streamed to its
 * capture file (tui/live_rec.c) at a memory budget: the simulated trainer
 * (`gtrace demo --trainer`, paced to RATE events/s, waiting for its
 * viewer) publishes for SECONDS; this process is the viewer's session
 * without the screen (live_sess_poll, as the viewer's loop calls it).
 *
 *   live_bench GTRACE RATE SECONDS [BUDGET_MIB] [GPUS] [RING_S]
 *
 * Prints one line per wall second (t, events in, rate, RSS, capture file
 * size, events the store holds, the store's cache file on disk), then
 * "key value" lines: events received, the trainer's count, lost (ring
 * overflow + malformed), the session's CPU time, RSS at the quarters of
 * the run and its maximum.  RING_S > 0: --ring RING_S seconds (the capture
 * file's segments and the store both keep the window; the figures then
 * also say what the store cut and its most events and cache file).  Needs TMPDIR on a disk that keeps
 * up (the capture file is written there and removed).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"
#include "live_sess.h"
#include "live_rec.h"
#include "rss.h"

static double rss_mib(void)
{
	return (double)rss_bytes() / 1048576.0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: live_bench GTRACE RATE SECONDS [BUDGET_MIB] [GPUS]\n");
		return 2;
	}
	const char *exe = argv[1], *rate = argv[2], *secs = argv[3];
	double budget_mib = argc > 4 ? atof(argv[4]) : 256;
	const char *gpus = argc > 5 ? argv[5] : "4";
	double ring_s = argc > 6 ? atof(argv[6]) : 0;
	char errpath[] = "/tmp/live_bench-XXXXXX";
	int ef = mkstemp(errpath);
	int out[2];
	if (ef < 0 || pipe(out) < 0)
		return 1;
	pid_t tp = fork();
	if (tp == 0) {
		dup2(out[1], 1);
		dup2(ef, 2);
		close(out[0]);
		execl(exe, "gtrace", "demo", "--trainer", "--gpus", gpus, "--rate", rate, "--seconds", secs,
		      "--wait", "--linger", "10", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	char line[256];
	FILE *po = fdopen(out[0], "r");
	if (!po || !fgets(line, sizeof(line), po)) {
		fprintf(stderr, "live_bench: the trainer did not start\n");
		return 1;
	}
	fclose(po);

	struct gt_store *s = gt_store_new();
	gt_store_set_budget(s, (size_t)(budget_mib * 1048576.0));
	struct live_sess ss;
	live_sess_init(&ss, s, 0);
	char err[512];
	struct live_rec rec;
	if (live_sess_add(&ss, tp, err, sizeof(err)) < 0 ||
	    live_rec_open(&rec, s, NULL, 0, (int64_t)(ring_s * 1e9), err, sizeof(err)) < 0) {
		fprintf(stderr, "live_bench: %s\n", err);
		kill(tp, SIGTERM);
		return 1;
	}
	ss.rec = &rec;
	double t0 = bench_ms(CLOCK_MONOTONIC), cpu0 = bench_cpu_s(), last = t0;
	double rss[4096], cache[4096];
	size_t held[4096];
	int nr = 0;
	uint64_t ev_last = 0;
	printf("# t_s events ev_per_s rss_mib file_mib store_events cache_mib (budget %.0f MiB, ring %.0f s)\n",
	       budget_mib, ring_s);
	while (!live_sess_done(&ss)) {
		int r = live_sess_poll(&ss);
		if (r < 0) {
			fprintf(stderr, "live_bench: %s\n", ss.msg);
			return 1;
		}
		double now = bench_ms(CLOCK_MONOTONIC);
		if (now - last >= 1000) {
			double m = rss_mib();
			double c = (double)gt_store_cache_disk_bytes(s) / 1048576.0;
			if (nr < 4096) {
				cache[nr] = c;
				held[nr] = gt_store_event_count(s);
				rss[nr++] = m;
			}
			printf("%.0f %llu %.0f %.1f %.1f %zu %.1f\n", (now - t0) / 1e3,
			       (unsigned long long)ss.events, (double)(ss.events - ev_last) * 1e3 / (now - last),
			       m, (double)live_rec_bytes(&rec) / 1048576.0, gt_store_event_count(s), c);
			fflush(stdout);
			ev_last = ss.events;
			last = now;
		}
		if (r == 0) {
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
		}
	}
	double wall = (bench_ms(CLOCK_MONOTONIC) - t0) / 1e3, cpu = bench_cpu_s() - cpu0;
	live_sess_close(&ss);
	uint64_t bytes = live_rec_bytes(&rec);
	int rc = live_rec_close(&rec, s, err, sizeof(err));
	int st;
	waitpid(tp, &st, 0);
	unsigned long long gen = 0, pub = 0;
	FILE *f = fopen(errpath, "r");
	while (f && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "; ");
		if (p && strstr(line, "events generated"))
			sscanf(p + 2, "%llu events generated, %llu published", &gen, &pub);
	}
	if (f)
		fclose(f);
	unlink(errpath);
	const struct gt_drops *d = gt_store_drops(s);
	double mx = 0;
	for (int i = 0; i < nr; i++)
		mx = rss[i] > mx ? rss[i] : mx;
	printf("rate_asked %s\nseconds %.1f\nevents %llu\ngenerated %llu\npublished %llu\n"
	       "lost %llu\nring_overflow %llu\nevents_per_s %.0f\ncpu_s %.1f\nfile_mib %.1f\n", rate, wall,
	       (unsigned long long)ss.events, gen, pub, (unsigned long long)gt_store_drops_lost(d),
	       (unsigned long long)d->ring_overflow, (double)ss.events / wall, cpu,
	       (double)bytes / 1048576.0);
	for (int q = 1; q <= 4 && nr; q++)
		printf("rss_mib_at_%d_of_4 %.1f\n", q, rss[(nr - 1) * q / 4]);
	printf("rss_mib_max %.1f\nbudget_mib %.0f\n", mx, budget_mib);
	double cmx = 0;
	size_t hmx = 0;
	for (int i = 0; i < nr; i++) {
		cmx = cache[i] > cmx ? cache[i] : cmx;
		hmx = held[i] > hmx ? held[i] : hmx;
	}
	for (int q = 1; q <= 4 && nr; q++)
		printf("cache_mib_at_%d_of_4 %.1f\nstore_events_at_%d_of_4 %zu\n", q, cache[(nr - 1) * q / 4],
		       q, held[(nr - 1) * q / 4]);
	printf("cache_mib_max %.1f\nstore_events_max %zu\nstore_cut %llu\nring_s %.0f\n", cmx, hmx,
	       (unsigned long long)gt_store_dropped(s, NULL), ring_s);
	gt_store_free(s);
	if (rc < 0)
		fprintf(stderr, "live_bench: %s\n", err);
	return rc < 0 || ss.events != pub || gt_store_drops_lost(d) ? 1 : 0;
}
