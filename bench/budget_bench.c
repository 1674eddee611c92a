/*
 * budget_bench.c - a large capture opened under a memory budget (issue 16):
 * open time (the first frame today: the whole file is decoded before it),
 * peak RSS sampled every 5 ms, zoom/pan frames (every lane's 200 columns
 * over a random window, log-uniform widths from the whole span down to
 * 10 us) with the cache file's pages out of the process and out of the
 * page cache before each frame (fdatasync + POSIX_FADV_DONTNEED: the frame
 * reads the disk), the same frames warm, and the whole-capture kernel table
 * (gt_kernel_stats_compute) cold.  Make the capture with bench/budget_gen.sh.
 * With a file of format 1.1 (a per-lane summary): the head open (file
 * evicted from the page cache first: POSIX_FADV_DONTNEED) and first
 * frame from the summary (what `gtrace open` shows while the events load),
 * and the same frames drawn as the viewer draws them (the summary when the
 * columns are at least two finest buckets wide, else the events).
 * Prints "name value unit" lines.
 * usage: budget_bench FILE [BUDGET (default 1G)] [FRAMES (default 200)] [zoomed-out|zoomed-in]
 * (zoomed-out: only the frames the summary draws, FRAMES of them warm and cold, of every
 * lane and of a screen of 50 lanes from a random first;
 * zoomed-in: only the frames the summary does not draw (widths log-uniform
 * from 10 us to 200 columns of two finest buckets), cold, each lane as the
 * viewer reads it (its 200 columns, a host lane's innermost event per busy
 * column), every lane and a screen of 50 lanes from a random first, with
 * and without gt_store_prefetch first (the viewer's frame), then pans: from a
 * cold start, 8 steps of an eighth of the width each)
 * BUDGET_BENCH_FRAMES=1 prints each cold zoomed-in frame (window, time, CPU,
 * faults, the prefetch's time and bytes, bytes read, the reads the device
 * under the cache file completed and their time summed) to stderr; =2 also the
 * lanes that faulted and in which query.  BUDGET_BENCH_SETTLE=S: the
 * zoomed-in frames start S seconds after the open, the disk under the
 * cache file probed every 5 s meanwhile (settle_probe lines)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "core/store/store_priv.h"
#include "gtrace/gtfile.h"
#include "gtrace/kernel_stats.h"
#include "gtrace/lsum.h"
#include "gtrace/load.h"
#include "gtrace/report.h"
#include "rss.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of the calling thread (the machine is shared: wall times
 * wait for a core) */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* one frame: 200 columns of every lane over [t0, t0 + w) */
static double frame(const struct gt_store *s, int64_t t0, int64_t w, uint64_t *sink)
{
	struct gt_bucket b[200];
	double t = now_s();
	for (uint32_t i = 0; i < gt_store_lane_count(s); i++) {
		/* as the viewer's rows (tui/trace_draw.c) */
		gt_store_read_tick_span(s, gt_store_lane_at(s, i), t0, t0 + 200 * (w / 200 + 1));
		gt_store_lane_buckets(gt_store_lane_at(s, i), t0, w / 200 + 1, 200, b);
		for (int c = 0; c < 200; c++)
			*sink += (uint64_t)b[c].busy_ns + b[c].count;
	}
	return now_s() - t;
}

/* one frame as the viewer draws it: each lane from the file's summary
 * when the columns are wide enough, else from the events; *from_sum = 1
 * when every lane came from the summary */
static double frame_view(const struct gt_store *s, uint32_t l0, uint32_t nl, int64_t t0, int64_t w,
			 uint64_t *sink, int *from_sum)
{
	struct gt_bucket b[200];
	const struct gt_lsum *m = gt_store_summary(s);
	double t = now_s();
	*from_sum = 1;
	for (uint32_t i = l0; i < l0 + nl; i++) {
		if (!gt_lsum_buckets(m, i, t0, w / 200 + 1, 200, b, NULL, NULL)) {
			gt_store_read_tick_span(s, gt_store_lane_at(s, i), t0, t0 + 200 * (w / 200 + 1));
			gt_store_lane_buckets(gt_store_lane_at(s, i), t0, w / 200 + 1, 200, b);
			*from_sum = 0;
		}
		for (int c = 0; c < 200; c++)
			*sink += (uint64_t)b[c].busy_ns + b[c].count;
	}
	return now_s() - t;
}

static void pr_dist(const char *tag, double *ms, int n)
{
	if (!n) {
		printf("frame_%s_n 0\n", tag);
		return;
	}
	qsort(ms, (size_t)n, sizeof(*ms), cmp_d);
	printf("frame_%s_n %d\n", tag, n);
	printf("frame_%s_p50 %.2f ms\n", tag, ms[n / 2]);
	printf("frame_%s_p99 %.2f ms\n", tag, ms[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1]);
	printf("frame_%s_max %.2f ms\n", tag, ms[n - 1]);
}

/* the viewer's frames (summary when zoomed out): all of them, and those
 * drawn from the summary alone */
static void frames_view(struct gt_store *s, int n, int cold, const char *tag)
{
	double *all = calloc((size_t)n, sizeof(*all)), *zs = calloc((size_t)n, sizeof(*zs));
	int nz = 0;
	int64_t lo = gt_store_t_min(s), span = gt_store_t_max(s) - lo;
	uint64_t sink = 0;
	uint64_t saved = rng;
	rng = 0x9e3779b97f4a7c15ull;   /* the same windows as frames() */
	for (int k = 0; k < n; k++) {
		double lw = unif() * __builtin_log((double)span / 1e4);
		int64_t w = (int64_t)(1e4 * __builtin_exp(lw));
		int64_t t0 = lo + (int64_t)(unif() * (double)(span - w));
		if (cold && s->arena)
			store_arena_cold(s->arena);
		int fs;
		all[k] = frame_view(s, 0, (uint32_t)gt_store_lane_count(s), t0, w, &sink, &fs) * 1e3;
		if (fs)
			zs[nz++] = all[k];
	}
	rng = saved;
	char t2[64];
	snprintf(t2, sizeof(t2), "view_%s", tag);
	pr_dist(t2, all, n);
	snprintf(t2, sizeof(t2), "view_%s_summary_only", tag);
	pr_dist(t2, zs, nz);
	fprintf(stderr, "(sink %llu)\n", (unsigned long long)sink);
	free(all);
	free(zs);
}

/* zoomed-out frames only: widths log-uniform from the narrowest the
 * summary draws (200 columns of two finest buckets) to the whole span;
 * every lane, or nl lanes from a random first (a screen of the viewer) */
static void frames_zoomed_out(struct gt_store *s, int n, int cold, uint32_t nl, const char *tag)
{
	uint32_t nlanes = (uint32_t)gt_store_lane_count(s);
	if (nl > nlanes)
		nl = nlanes;
	const struct gt_lsum *m = gt_store_summary(s);
	int64_t lo = gt_store_t_min(s), span = gt_store_t_max(s) - lo;
	if (!m || 400 * m->base_ns >= span)
		return;
	double *ms = calloc((size_t)n, sizeof(*ms));
	double wmin = 400.0 * (double)m->base_ns;
	uint64_t sink = 0;
	int nz = 0;
	for (int k = 0; k < n; k++) {
		double lw = unif() * __builtin_log((double)span / wmin);
		int64_t w = (int64_t)(wmin * __builtin_exp(lw));
		int64_t t0 = lo + (int64_t)(unif() * (double)(span - w));
		if (cold && s->arena)
			store_arena_cold(s->arena);
		uint32_t l0 = nl < nlanes ? (uint32_t)(unif() * (double)(nlanes - nl + 1)) : 0;
		l0 = l0 > nlanes - nl ? nlanes - nl : l0;
		int fs;
		double f = frame_view(s, l0, nl, t0, w, &sink, &fs) * 1e3;
		if (fs)
			ms[nz++] = f;
	}
	char t2[64];
	snprintf(t2, sizeof(t2), "zoomed_out_%s", tag);
	pr_dist(t2, ms, nz);
	fprintf(stderr, "(sink %llu)\n", (unsigned long long)sink);
	free(ms);
}

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double last_cpu_ms;   /* CPU time of the last frame_in (this thread, user + sys) */
static double last_pf_ms;    /* ... of it in gt_store_prefetch (wall) */
static size_t last_pf_bytes; /* the bytes it advised */
static int lane_faults;   /* BUDGET_BENCH_FRAMES=2: per lane faults of each frame */

/* bytes this process had read from storage so far (/proc/self/io read_bytes:
 * faults and read-ahead included); 0 where not readable */
static unsigned long long io_read_bytes(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	unsigned long long v = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "read_bytes: %llu", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/* the reads the device under the cache file completed so far and the time
 * they took in all (ms, summed over reads: one slow read shows), from
 * /sys/dev/block/MAJ:MIN/stat; 0 where not readable */
static char dev_stat[64];
static void dev_reads(unsigned long long *n, unsigned long long *ms)
{
	FILE *f = dev_stat[0] ? fopen(dev_stat, "r") : NULL;
	*n = *ms = 0;
	if (f && fscanf(f, "%llu %*u %*u %llu", n, ms) != 2)
		*n = *ms = 0;
	if (f)
		fclose(f);
}

/* lanes [l0, l0 + nl) over [t0, t0 + 200 cols) as the viewer reads a
 * zoomed-in row: prefetch first when pf */
static double frame_in(const struct gt_store *s, uint32_t l0, uint32_t nl, int64_t t0, int64_t w,
		       int pf, uint64_t *sink)
{
	double c0 = thread_cpu_s();
	struct gt_bucket b[200];
	static uint32_t ids[1 << 16];
	int64_t npc = w / 200 + 1;
	double t = now_s();
	if (pf) {
		for (uint32_t i = 0; i < nl; i++)
			ids[i] = l0 + i;
		last_pf_bytes = gt_store_prefetch(s, ids, nl, t0, t0 + 200 * npc);
	}
	last_pf_ms = (now_s() - t) * 1e3;
	for (uint32_t i = l0; i < l0 + nl; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, i);
		struct rusage r0 = { 0 }, r1 = { 0 }, r2 = { 0 };
		if (lane_faults)
			getrusage(RUSAGE_THREAD, &r0);
		gt_store_read_tick_span(s, l, t0, t0 + 200 * npc);   /* as the viewer's rows */
		gt_store_lane_buckets(l, t0, npc, 200, b);
		if (lane_faults)
			getrusage(RUSAGE_THREAD, &r1);
		for (int c = 0; c < 200; c++) {
			*sink += (uint64_t)b[c].busy_ns + b[c].count;
			if (l->key.type == GT_LANE_HOST && (b[c].count || b[c].busy_ns))
				*sink += gt_store_lane_event_at(l, t0 + c * npc + npc / 2);
		}
		if (lane_faults)
			getrusage(RUSAGE_THREAD, &r2);
		size_t f, la;
		gt_store_lane_range(l, t0, t0 + 200 * npc, &f, &la);   /* the names */
		*sink += la - f;
		if (lane_faults && r2.ru_majflt > r0.ru_majflt)   /* which lane faulted, in which query */
			fprintf(stderr, "  lane %u type %d n %zu: %ld faults in buckets, %ld in event_at\n", i,
				(int)l->key.type, l->n, r1.ru_majflt - r0.ru_majflt,
				r2.ru_majflt - r1.ru_majflt);
	}
	double r = now_s() - t;
	last_cpu_ms = (thread_cpu_s() - c0) * 1e3;
	return r;
}

/* echo 1 > /proc/sys/vm/drop_caches (root): the whole page cache, once per
 * sequence.  Not 3: that also drops the file systems' own caches (inodes,
 * the cache file's extent map), which a large read of other data (the
 * issue's way of making the page cache cold) leaves; the first frames then
 * waited on ext4 reading its extent blocks one at a time */
static void drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1)
		fprintf(stderr, "budget_bench: drop_caches not written (not root?)\n");
	if (fd >= 0)
		close(fd);
}

/* BUDGET_BENCH_SETTLE=S: wait S seconds after the open before the frames,
 * probing the disk under the cache file every 5 s: 1 s of reads of 4 KiB
 * at random places holding data, O_DIRECT (no page cache), one at a time,
 * their p50, p99 and max.
 * The cache file is made cold once first (its first fdatasync); the probe
 * shows how the device answers after it */
static void settle(struct gt_store *s)
{
	const char *e = getenv("BUDGET_BENCH_SETTLE");
	int secs = e ? atoi(e) : 0;
	if (secs <= 0 || !s->arena)
		return;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", store_arena_fd(s->arena));
	int fd = open(path, O_RDONLY | O_DIRECT);
	off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : 0;
	void *buf = NULL;
	if (fd < 0 || size <= 0 || posix_memalign(&buf, 4096, 4096)) {
		fprintf(stderr, "budget_bench: no disk probe (%s)\n", strerror(errno));
		sleep((unsigned)secs);
	}
	/* the cold procedure's first fdatasync comes here, not at frame 0: the
	 * file system asks the device to flush its write cache then */
	double t0 = now_s();
	store_arena_cold(s->arena);
	printf("settle_cold %.0f ms (page tables, fdatasync, page cache)\n", (now_s() - t0) * 1e3);
	for (int k = 0; buf && k * 5 <= secs; k++) {
		static double lat[4096];
		int n = 0;
		double p0 = now_s();
		for (int i = 0; i < 4096 && now_s() - p0 < 1.0; i++) {
			off_t at = lseek(fd, (off_t)(unif() * (double)size) & ~(off_t)4095, SEEK_DATA);
			if (at < 0)
				continue;
			double a = now_s();
			if (pread(fd, buf, 4096, at & ~(off_t)4095) == 4096)
				lat[n++] = (now_s() - a) * 1e3;
		}
		qsort(lat, (size_t)n, sizeof(*lat), cmp_d);
		printf("settle_probe %.0f s: %d direct 4 KiB reads in 1 s, p50 %.2f p99 %.2f max %.2f ms\n",
		       now_s() - t0, n, n ? lat[n / 2] : 0.0, n ? lat[n * 99 / 100] : 0.0,
		       n ? lat[n - 1] : 0.0);
		double next = t0 + (k + 1) * 5.0;
		if (k * 5 < secs && next > now_s())
			usleep((useconds_t)((next - now_s()) * 1e6));
	}
	free(buf);
	if (fd >= 0)
		close(fd);
}

/* zoomed-in frames, cold (the cache file evicted before each frame) */
static const char *only_variant;   /* argv[5]: run the zoomed-in variants whose tag holds it */

static void frames_zoomed_in(struct gt_store *s, int n, uint32_t nl, int pf, const char *tag)
{
	if (only_variant && !strstr(tag, only_variant))
		return;
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	const struct gt_lsum *m = gt_store_summary(s);
	int64_t lo = gt_store_t_min(s), span = gt_store_t_max(s) - lo;
	uint32_t nlanes = (uint32_t)gt_store_lane_count(s);
	double wmax = m && 400.0 * (double)m->base_ns < (double)span ? 400.0 * (double)m->base_ns :
								       (double)span;
	if (nl > nlanes)
		nl = nlanes;
	if (nl > 1u << 16)
		nl = 1u << 16;
	double *ms = calloc((size_t)n, sizeof(*ms)), *pan = calloc((size_t)n * 8, sizeof(*pan));
	double *cpu = calloc((size_t)n, sizeof(*cpu)), *wid = calloc((size_t)n * 2, sizeof(*wid));
	uint64_t sink = 0, saved = rng;
	size_t incore = 0;
	rng = 0x2545f4914f6cdd1dull;   /* the same windows for every variant */
	struct stat st;
	if (s->arena && fstat(store_arena_fd(s->arena), &st) == 0)
		snprintf(dev_stat, sizeof(dev_stat), "/sys/dev/block/%u:%u/stat", major(st.st_dev),
			 minor(st.st_dev));
	drop_caches();
	for (int k = 0; k < n; k++) {
		double lw = unif() * __builtin_log(wmax / 1e4);
		int64_t w = (int64_t)(1e4 * __builtin_exp(lw));
		int64_t t0 = lo + (int64_t)(unif() * (double)(span - w));
		uint32_t l0 = (uint32_t)(unif() * (double)(nlanes - nl + 1));
		if (s->arena) {
			store_arena_cold(s->arena);
			incore += store_arena_incore(s->arena);
		}
		struct rusage rf0, rf1;
		unsigned long long io0 = io_read_bytes(), dn0, dms0, dn1, dms1;
		dev_reads(&dn0, &dms0);
		getrusage(RUSAGE_THREAD, &rf0);
		ms[k] = frame_in(s, l0, nl, t0, w, pf, &sink) * 1e3;
		cpu[k] = last_cpu_ms;
		getrusage(RUSAGE_THREAD, &rf1);
		dev_reads(&dn1, &dms1);
		if (getenv("BUDGET_BENCH_FRAMES"))   /* each cold frame: its window, time, faults, reads */
			fprintf(stderr, "frame %d lanes %u+%u width %.3f ms: %.2f ms, %.2f ms CPU, "
				"%ld major / %ld minor faults, prefetch %.2f ms advised %.0f KiB, "
				"%.0f KiB read, device %llu reads %llu ms\n",
				k, l0, nl, (double)w / 1e6, ms[k], cpu[k],
				rf1.ru_majflt - rf0.ru_majflt, rf1.ru_minflt - rf0.ru_minflt,
				pf ? last_pf_ms : 0.0, (double)last_pf_bytes / 1024,
				(double)(io_read_bytes() - io0) / 1024, dn1 - dn0, dms1 - dms0);
		wid[2 * k] = ms[k];
		wid[2 * k + 1] = (double)w;
		/* pans from here: each step an eighth of the width to the right */
		for (int p = 0; p < 8; p++)
			pan[k * 8 + p] = frame_in(s, l0, nl, t0 + (int64_t)(p + 1) * (w / 8), w, pf,
						  &sink) * 1e3;
	}
	rng = saved;
	char t2[64];
	snprintf(t2, sizeof(t2), "zoomed_in_%s", tag);
	pr_dist(t2, ms, n);
	snprintf(t2, sizeof(t2), "zoomed_in_cpu_%s", tag);
	pr_dist(t2, cpu, n);
	qsort(wid, (size_t)n, 2 * sizeof(*wid), cmp_d);   /* pairs (time, width) by time */
	printf("zoomed_in_%s_slowest_widths", tag);
	for (int k = n - 1; k >= 0 && k >= n - 3; k--)
		printf(" %.3f ms", wid[2 * k + 1] / 1e6);
	printf(" (windows of the 3 slowest frames)\n");
	snprintf(t2, sizeof(t2), "pan_%s", tag);
	pr_dist(t2, pan, n * 8);
	printf("zoomed_in_%s_cache_pages_incore_after_cold %.1f (mean)\n", tag, (double)incore / n);
	getrusage(RUSAGE_SELF, &ru1);
	printf("zoomed_in_%s_major_faults %.1f a frame (pans included)\n", tag,
	       (double)(ru1.ru_majflt - ru0.ru_majflt) / (n * 9));
	fprintf(stderr, "(sink %llu)\n", (unsigned long long)sink);
	free(ms);
	free(pan);
	free(cpu);
	free(wid);
}

static void frames(struct gt_store *s, int n, int cold, const char *tag)
{
	double *ms = calloc((size_t)n, sizeof(*ms));
	int64_t lo = gt_store_t_min(s), span = gt_store_t_max(s) - lo;
	uint64_t sink = 0;
	for (int k = 0; k < n; k++) {
		/* width log-uniform in [10 us, span]; start uniform */
		double lw = unif() * __builtin_log((double)span / 1e4);
		int64_t w = (int64_t)(1e4 * __builtin_exp(lw));
		int64_t t0 = lo + (int64_t)(unif() * (double)(span - w));
		if (cold && s->arena)
			store_arena_cold(s->arena);
		ms[k] = frame(s, t0, w, &sink) * 1e3;
	}
	qsort(ms, (size_t)n, sizeof(*ms), cmp_d);
	printf("frame_%s_p50 %.2f ms\n", tag, ms[n / 2]);
	printf("frame_%s_p99 %.2f ms\n", tag, ms[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1]);
	printf("frame_%s_max %.2f ms\n", tag, ms[n - 1]);
	fprintf(stderr, "(sink %llu)\n", (unsigned long long)sink);
	free(ms);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: budget_bench FILE [BUDGET] [FRAMES] [zoomed-out]\n");
		return 2;
	}
	size_t budget = (size_t)1 << 30;
	if (argc > 2 && gt_parse_size(argv[2], &budget)) {
		fprintf(stderr, "budget_bench: bad budget '%s'\n", argv[2]);
		return 2;
	}
	int nf = argc > 3 ? atoi(argv[3]) : 200;
	struct rss_sampler rs;
	size_t base = rss_bytes();
	if (rss_sampler_start(&rs, 5000)) {
		fprintf(stderr, "budget_bench: cannot start the RSS sampler\n");
		return 1;
	}
	/* the viewer's open of a file with a summary: the head (tables, index,
	 * summary) and the first frame from it, before any event is decoded */
	{
		/* the file out of the page cache: the head reads the disk */
		int fd = open(argv[1], O_RDONLY);
		if (fd >= 0) {
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
		struct gt_store *h = gt_store_new();
		gt_store_set_budget(h, budget);   /* as gtrace open does: the pages' cap */
		struct gt_file_info info;
		char e2[512];
		double t_h0 = now_s(), c_h0 = cpu_s();
		int hrc = gt_file_read_head(argv[1], h, &info, e2, sizeof(e2));
		double t_head = now_s() - t_h0, c_head = cpu_s() - c_h0;
		if (hrc) {
			printf("head_open unavailable (%s)\n", e2);
		} else {
			uint64_t sk = 0;
			int fs;
			double c_f0 = cpu_s();
			double tf = frame_view(h, 0, (uint32_t)gt_store_lane_count(h), gt_store_t_min(h), gt_store_t_max(h) - gt_store_t_min(h), &sk, &fs);
			double c_f = cpu_s() - c_f0;
			/* the same frame again: its pages loaded */
			double c_f1 = cpu_s();
			double tf2 = frame_view(h, 0, (uint32_t)gt_store_lane_count(h), gt_store_t_min(h), gt_store_t_max(h) - gt_store_t_min(h), &sk, &fs);
			printf("first_frame_cpu head %.1f ms + frame %.1f ms; frame again %.1f ms (%.1f ms CPU)\n",
			       c_head * 1e3, c_f * 1e3, tf2 * 1e3, (cpu_s() - c_f1) * 1e3);
			const struct gt_lsum *m = gt_store_summary(h);
			size_t ents = 0, loads, loaded, pages;
			int perr;
			for (size_t i = 0; i < m->nlanes; i++)
				for (int k = 0; k < m->nlev; k++)
					ents += m->lane[i].n[k];
			gt_lsum_page_stats(m, &loads, &loaded, &pages, &perr);
			printf("summary_pages %zu loaded_by_first_frame %zu (error %d) resident %.1f MB\n",
			       pages, loads, perr, gt_lsum_resident(m) / 1e6);
			printf("head_open %.1f ms\n", t_head * 1e3);
			printf("first_frame_from_summary %.1f ms (all lanes from it: %d)\n", tf * 1e3, fs);
			printf("first_frame_total %.1f ms\n", (t_head + tf) * 1e3);
			printf("summary_levels %d base %lld ns resident entries %zu (%.0f MB)\n", m->nlev,
			       (long long)m->base_ns, ents, ents * sizeof(struct gt_lsum_ent) / 1e6);
			printf("rss_after_head %.0f MB\n", rss_bytes() / 1e6);
		}
		gt_store_free(h);
	}
	printf("rss_peak_head_and_frames %.0f MB\n", rss_sampler_peak(&rs) / 1e6);
	struct gt_load_opts lo = { .memory_bytes = budget };
	struct gt_store *s = NULL;
	char err[512];
	double t = now_s(), c_open = cpu_s();
	if (gt_load((const char *const *)&argv[1], 1, &lo, &s, err, sizeof(err))) {
		fprintf(stderr, "budget_bench: %s\n", err);
		return 1;
	}
	double t_open = now_s() - t;
	c_open = cpu_s() - c_open;
	uint64_t sink = 0;
	/* a frame of the whole span from the events (at 1 B events ~25 GB
	 * read, 40 s); zoomed-in runs go from the open straight to their
	 * frames, as a user zooms in after opening */
	int zin = argc > 4 && !strcmp(argv[4], "zoomed-in");
	double t_first = zin ? -1 : frame(s, gt_store_t_min(s), gt_store_t_max(s) - gt_store_t_min(s), &sink);
	printf("events %zu\n", gt_store_event_count(s));
	printf("lanes %zu\n", gt_store_lane_count(s));
	printf("budget %.0f MB\n", budget / 1e6);
	printf("decoded_bytes %.0f MB\n", gt_store_bytes(s) / 1e6);
	printf("open %.2f s (%.2f s CPU of the reading thread)\n", t_open, c_open);
	if (!zin)
		printf("first_frame_after_open %.1f ms\n", t_first * 1e3);
	printf("open_rate %.1f Mevents/s\n", gt_store_event_count(s) / t_open / 1e6);
	printf("rss_peak_open %.0f MB\n", rss_sampler_peak(&rs) / 1e6);
	printf("rss_base %.0f MB\n", base / 1e6);
	lane_faults = getenv("BUDGET_BENCH_FRAMES") && !strcmp(getenv("BUDGET_BENCH_FRAMES"), "2");
	if (argc > 4 && !strcmp(argv[4], "zoomed-in")) {
		only_variant = argc > 5 ? argv[5] : NULL;
		settle(s);
		struct rusage r0, r1;
		getrusage(RUSAGE_SELF, &r0);
		double w0 = now_s();
		frames_zoomed_in(s, nf, UINT32_MAX, 0, "all_lanes_no_prefetch");
		frames_zoomed_in(s, nf, UINT32_MAX, 1, "all_lanes_prefetch");
		frames_zoomed_in(s, nf, 50, 0, "screen50_no_prefetch");
		frames_zoomed_in(s, nf, 50, 1, "screen50_prefetch");
		getrusage(RUSAGE_SELF, &r1);
		printf("zoomed_in_cpu user %.2f s sys %.2f s wall %.2f s\n",
		       (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6,
		       (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6,
		       now_s() - w0);
		printf("rss_peak %.0f MB\n", rss_sampler_stop(&rs) / 1e6);
		gt_store_free(s);
		return 0;
	}
	if (!getenv("BUDGET_BENCH_NO_BUILD")) {
		/* what the writers add at close: the summary built from the store */
		struct gt_lsum *m = NULL;
		double tb = now_s();
		if (gt_lsum_build(s, &m))
			fprintf(stderr, "budget_bench: gt_lsum_build: out of memory\n");
		printf("summary_build %.2f s\n", now_s() - tb);
		gt_lsum_free(m);
	}
	int only_zoomed = argc > 4 && !strcmp(argv[4], "zoomed-out");
	if (!only_zoomed) {
		frames(s, nf, 0, "warm");
		frames(s, nf, 1, "cold");
		frames_view(s, nf, 0, "warm");
		frames_view(s, nf, 1, "cold");
	}
	frames_zoomed_out(s, nf, 0, UINT32_MAX, "warm");
	frames_zoomed_out(s, nf, 1, UINT32_MAX, "cold");
	frames_zoomed_out(s, nf, 0, 50, "screen50_warm");
	frames_zoomed_out(s, nf, 1, 50, "screen50_cold");
	if (s->arena)
		store_arena_cold(s->arena);
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_kernel_stats_result kr;
	t = now_s();
	double c_k = cpu_s();
	if (gt_kernel_stats_compute(s, &sc, NULL, &kr, err, sizeof(err))) {
		fprintf(stderr, "budget_bench: %s\n", err);
		return 1;
	}
	double t_k = now_s() - t;
	printf("kernel_table_cold_cpu %.2f s (the calling thread)\n", cpu_s() - c_k);
	printf("kernel_table_cold %.2f s\n", t_k);
	printf("kernel_table_rows %zu\n", kr.nrows);
	printf("kernel_table_count %llu\n", (unsigned long long)kr.count);
	gt_kernel_stats_result_done(&kr);
	printf("rss_peak %.0f MB\n", rss_sampler_stop(&rs) / 1e6);
	printf("resident_at_end %.0f MB\n", gt_store_resident_bytes(s) / 1e6);
	gt_store_free(s);
	return 0;
}
