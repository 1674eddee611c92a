/*
 * file_bench.c - speed and size of the .gtrace file: builds a store of N
 * events, writes it (MB/s, events/s, file bytes per event), opens it RUNS
 * times (events/s, median; the time includes gt_store_finish) and reports the
 * resident bytes per event of the opened store (gt_store_bytes).
 * Source: the simulator (gt_sim_generate, a data-parallel trainer: 8 GPUs with
 * compute, copy and NCCL streams, host threads with correlated launch calls),
 * or with --synthetic a simple generator (16 GPU lanes of kernels with 50
 * names, 8 host lanes of cudaLaunchKernel with correlation ids).
 * Prints "name value unit" lines.
 * usage: file_bench [EVENTS] [RUNS] [--synthetic] [--level N] [--dir DIR]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "gtrace/sim.h"
#include "gtrace/store.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of this process (user + system: page faults count) */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct gt_store *synthetic(size_t n)
{
	struct gt_store *s = gt_store_new();
	uint32_t names[50], gl[16], hl[8];
	char buf[96];
	for (int i = 0; i < 50; i++) {
		snprintf(buf, sizeof(buf), "void at::native::kernel_%d<float, %d>(TensorIterator&)", i,
			 i % 5);
		names[i] = gt_store_intern_cstr(s, buf);
	}
	uint32_t launch = gt_store_intern_cstr(s, "cudaLaunchKernel");
	struct gt_kconf kc = { { 1024, 1, 1 }, { 256, 1, 1 }, 32, 0, 0, 50.0f };
	uint32_t k = gt_store_kconf(s, &kc);
	for (int i = 0; i < 16; i++) {
		struct gt_lane_key key = { .type = GT_LANE_GPU, .device = i / 2, .id = 7 + i % 2 };
		gl[i] = gt_store_lane(s, &key);
		gt_store_reserve(s, gl[i], n / 32 + 1);
	}
	for (int i = 0; i < 8; i++) {
		struct gt_lane_key key = { .type = GT_LANE_HOST, .device = -1, .pid = 10, .id = 100 + i };
		hl[i] = gt_store_lane(s, &key);
		gt_store_reserve(s, hl[i], n / 16 + 1);
	}
	int64_t tg[16], th[8];
	for (int i = 0; i < 16; i++)
		tg[i] = 1700000000000000000ll;
	for (int i = 0; i < 8; i++)
		th[i] = 1700000000000000000ll;
	uint32_t corr = 1;
	for (size_t i = 0; i + 1 < n; i += 2, corr++) {
		uint64_t r = next();
		int g = (int)(r % 16), h = g / 2;
		struct gt_event he = { .start_ns = th[h], .dur_ns = 2000 + (int64_t)(r >> 40) % 3000,
				       .name = launch, .lane = hl[h], .corr = corr,
				       .kind = GT_EV_RUNTIME, .flags = GT_EVF_LAUNCH };
		th[h] += he.dur_ns + 500 + (int64_t)(r >> 50) % 800;
		int64_t st = tg[g] > he.start_ns + 4000 ? tg[g] : he.start_ns + 4000;
		struct gt_event ge = { .start_ns = st, .dur_ns = 1000 + (int64_t)((r >> 8) % 40000),
				       .arg = k, .name = names[(r >> 24) % 50], .lane = gl[g],
				       .corr = corr, .kind = GT_EV_KERNEL };
		tg[g] = st + ge.dur_ns + 300;
		gt_store_add(s, &he);
		gt_store_add(s, &ge);
	}
	gt_store_finish(s);
	return s;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t n = 10000000;
	int runs = 5, synth = 0, level = 0;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int pos = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--synthetic"))
			synth = 1;
		else if (!strcmp(argv[i], "--level") && i + 1 < argc)
			level = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (pos++ == 0)
			n = strtoull(argv[i], NULL, 10);
		else
			runs = atoi(argv[i]);
	}
	if (runs < 1 || runs > 99)
		runs = 5;
	char err[512], path[512];
	snprintf(path, sizeof(path), "%s/file_bench_%d.gtrace", dir, (int)getpid());
	double t0 = now_s();
	struct gt_store *s;
	if (synth) {
		s = synthetic(n);
	} else {
		struct gt_sim_opts o = { .gpus = 8, .events = n, .seed = 1 };
		s = gt_store_new();
		if (gt_sim_generate(&o, s, err, sizeof(err))) {
			fprintf(stderr, "file_bench: %s\n", err);
			return 1;
		}
	}
	size_t ne = gt_store_event_count(s);
	printf("source %s\n", synth ? "synthetic" : "sim");
	printf("events %zu count\n", ne);
	printf("lanes %zu count\n", gt_store_lane_count(s));
	printf("build_s %.3f s\n", now_s() - t0);

	struct gt_file_writer_opts wo = { .zstd_level = level };
	t0 = now_s();
	double cw = cpu_s();
	if (gt_file_write_store_opts(s, path, &wo, err, sizeof(err))) {
		fprintf(stderr, "file_bench: %s\n", err);
		return 1;
	}
	double tw = now_s() - t0;
	cw = cpu_s() - cw;
	struct stat st;
	stat(path, &st);
	printf("write_s %.3f s\n", tw);
	printf("write_mb_per_s %.1f MB/s\n", (double)st.st_size / 1e6 / tw);
	printf("write_events_per_s %.2f M/s\n", (double)ne / 1e6 / tw);
	printf("write_cpu_s %.3f s\n", cw);
	printf("file_bytes %lld bytes\n", (long long)st.st_size);
	printf("file_bytes_per_event %.2f bytes\n", (double)st.st_size / (double)ne);

	double v[100], c[100];
	size_t bytes = 0;
	for (int i = 0; i < runs; i++) {
		struct gt_store *r = gt_store_new();
		struct gt_file_info info;
		t0 = now_s();
		double c0 = cpu_s();
		int rc = gt_file_read(path, r, &info, err, sizeof(err));
		v[i] = now_s() - t0;
		c[i] = cpu_s() - c0;
		if (rc || info.events != ne) {
			fprintf(stderr, "file_bench: open failed: %s\n", err);
			return 1;
		}
		bytes = gt_store_bytes(r);
		gt_store_free(r);
	}
	qsort(v, (size_t)runs, sizeof(*v), cmpd);
	qsort(c, (size_t)runs, sizeof(*c), cmpd);
	printf("open_s %.3f s (median of %d, min %.3f, max %.3f)\n", v[runs / 2], runs, v[0],
	       v[runs - 1]);
	printf("open_events_per_s %.2f M/s\n", (double)ne / 1e6 / v[runs / 2]);
	printf("open_cpu_s %.3f s (median of %d, one thread: events per CPU-second below)\n",
	       c[runs / 2], runs);
	printf("open_events_per_cpu_s %.2f M/s\n", (double)ne / 1e6 / c[runs / 2]);
	printf("open_store_bytes_per_event %.2f bytes\n", (double)bytes / (double)ne);
	printf("source_store_bytes_per_event %.2f bytes\n", (double)gt_store_bytes(s) / (double)ne);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("max_rss %.0f MB\n", (double)ru.ru_maxrss / 1024);
	unlink(path);
	gt_store_free(s);
	return 0;
}
