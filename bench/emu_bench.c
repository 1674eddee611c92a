/*
 * emu_bench.c - live capture through the CUDA/CUPTI emulator
 * (tests/cudaemu/).
 *
 *  1. drain: the capture thread's work per record, in process: walk
 *     CUPTI buffers with the emulator's cuptiActivityGetNextRecord,
 *     convert (capture/convert.c) and publish into a ring; half Kernel10
 *     records with 10,000 launch configurations, half runtime API records.
 *     Median records/s of RUNS (the ring is emptied between batches,
 *     untimed).
 *  2. end to end: `gtrace record -- cudaemu_trainer` paced to RATE kernels
 *     per second for SECONDS with 10,000 configurations (4 threads, 2
 *     devices); received events, lost, and the achieved kernel rate.
 *
 * usage: emu_bench BUILD_DIR [RECORDS [RUNS [RATE [SECONDS]]]]
 *        (default 4000000 5 200000 10)
 * output: "name value unit" lines.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cupti.h>
#include "bench.h"
#include "gtrace/gtfile.h"
#include "gtrace/publisher.h"
#include "gtrace/ring.h"
#include "../capture/convert.h"

#define BUF_BYTES (4u << 20)

static char names[97][64];

/* one CUPTI buffer: alternating API and kernel records; returns valid bytes */
static size_t fill(uint8_t *buf, uint32_t *corr, unsigned *seed)
{
	size_t off = 0, ka = (sizeof(CUpti_ActivityKernel10) + 7) & ~(size_t)7,
	       aa = (sizeof(CUpti_ActivityAPI) + 7) & ~(size_t)7;
	while (off + ka + aa <= BUF_BYTES) {
		CUpti_ActivityAPI *a = (void *)(buf + off);
		memset(a, 0, aa);
		a->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
		a->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
		a->start = 1000000000ull + *corr * 1000ull;
		a->end = a->start + 300;
		a->threadId = 100 + *corr % 4;
		a->correlationId = ++*corr;
		off += aa;
		CUpti_ActivityKernel10 *k = (void *)(buf + off);
		memset(k, 0, ka);
		int c = (int)(rand_r(seed) % 10000);
		k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k->start = a->end + 100;
		k->end = k->start + 2000;
		k->deviceId = *corr % 2;
		k->streamId = 1 + *corr % 8;
		k->gridX = 1 + c;
		k->gridY = 1 + c % 3;
		k->gridZ = 1;
		k->blockX = 128;
		k->blockY = 1;
		k->blockZ = 1;
		k->correlationId = *corr;
		k->name = names[c % 97];
		off += ka;
	}
	return off;
}

/* the drain thread's API-name lookup (gcupti caches CUPTI's names) */
static const char *api_name(void *ctx, int driver, uint32_t cbid)
{
	(void)ctx;
	(void)driver;
	(void)cbid;
	return "cudaLaunchKernel";
}

static void drain_ring(struct gt_ring *c)
{
	uint32_t n;
	const struct gt_ring_rec *m;
	while ((m = gt_ring_peek(c, &n)))
		gt_ring_release(c, n);
}

static double drain_run(uint64_t records, uint8_t **bufs, size_t *valid, int nbuf)
{
	uint64_t cap = 1u << 21;
	void *mem = aligned_alloc(4096, gt_ring_bytes(cap));
	memset(mem, 0, gt_ring_bytes(cap));
	struct gt_ring pr, c;
	gt_ring_init_mem(&pr, mem, cap, 1);
	memset(&c, 0, sizeof(c));
	c.hdr = pr.hdr;
	c.rec = pr.rec;
	c.mask = pr.mask;
	struct convert cv;
	convert_init(&cv, 1, 0);
	cv.api_name = api_name;
	struct gt_publisher p;
	gt_publisher_init(&p);
	gt_publisher_reset(&p, &pr);
	struct gt_publisher_dict d = convert_dict(&cv);
	double timed = 0;
	uint64_t done = 0;
	for (int b = 0; done < records; b = (b + 1) % nbuf) {
		double t0 = bench_ms(CLOCK_MONOTONIC);
		CUpti_Activity *rec = NULL;
		while (cuptiActivityGetNextRecord(bufs[b], valid[b], &rec) == CUPTI_SUCCESS) {
			struct gt_event e;
			if (convert_record(&cv, rec, &e) == 1)
				gt_publisher_event(&p, &e, &d);
			done++;
		}
		timed += bench_ms(CLOCK_MONOTONIC) - t0;
		drain_ring(&c);
	}
	if (atomic_load(&pr.hdr->ring_overflow))
		fprintf(stderr, "emu_bench: ring overflow in the drain part\n");
	gt_publisher_done(&p);
	convert_done(&cv);
	free(mem);
	return (double)done / (timed / 1e3);
}

static int e2e(const char *build, double rate, int seconds)
{
	char gtrace[1200], trainer[1200], lp[1200], work[32], rates[32];
	snprintf(gtrace, sizeof(gtrace), "%s/tui/gtrace", build);
	snprintf(trainer, sizeof(trainer), "%s/tests/cudaemu/cudaemu_trainer", build);
	snprintf(lp, sizeof(lp), "%s/tests/cudaemu", build);
	int threads = 4;
	/* 8 of the trainer's 10 submissions are kernels: RATE kernels/s is
	 * RATE / 0.8 submissions/s */
	long per = (long)(rate / 0.8 * seconds / threads);
	snprintf(work, sizeof(work), "%ld", per);
	snprintf(rates, sizeof(rates), "%.0f", rate / 0.8);
	const char *file = "/tmp/gtrace-emu-bench.gtrace";
	double t0 = bench_ms(CLOCK_MONOTONIC);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("LD_LIBRARY_PATH", lp, 1);
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		execl(gtrace, "gtrace", "record", "-q", "--force", "-o", file, "--", trainer, "--out", "-",
		      "--threads", "4", "--work", work, "--configs", "10000", "--rate", rates,
		      "--dur-ns", "1000", (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	double wall = (bench_ms(CLOCK_MONOTONIC) - t0) / 1e3;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "emu_bench: gtrace record failed\n");
		return 1;
	}
	struct gt_store *s = gt_store_new();
	struct gt_file_info info;
	char err[512];
	if (gt_file_read(file, s, &info, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	uint64_t kernels = 0, all = 0;
	int64_t k0 = INT64_MAX, k1 = 0;
	for (uint32_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, l);
		for (size_t i = 0; i < ln->n; i++) {
			const struct gt_event *e = &ln->ev[i];
			all++;
			if (e->kind != GT_EV_KERNEL)
				continue;
			kernels++;
			k0 = e->start_ns < k0 ? e->start_ns : k0;
			k1 = e->start_ns > k1 ? e->start_ns : k1;
		}
	}
	uint64_t expect = 2ull * (uint64_t)per * (uint64_t)threads;
	printf("e2e_events %llu events\n", (unsigned long long)all);
	printf("e2e_expected %llu events\n", (unsigned long long)expect);
	const struct gt_drops *dr = gt_store_drops(s);
	printf("e2e_lost %llu events (cupti_dropped %llu, buffers_declined %llu, ring_overflow %llu)\n",
	       (unsigned long long)gt_store_drops_lost(dr), (unsigned long long)dr->cupti_dropped,
	       (unsigned long long)dr->buffers_declined, (unsigned long long)dr->ring_overflow);
	printf("e2e_kernel_rate %.0f kernels/s\n", k1 > k0 ? (double)kernels / ((double)(k1 - k0) / 1e9) : 0);
	printf("e2e_wall %.2f s\n", wall);
	gt_store_free(s);
	unlink(file);
	return all == expect ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: emu_bench BUILD_DIR [RECORDS [RUNS [RATE [SECONDS]]]]\n");
		return 2;
	}
	uint64_t records = argc > 2 ? strtoull(argv[2], NULL, 10) : 4000000;
	int runs = argc > 3 ? atoi(argv[3]) : 5;
	double rate = argc > 4 ? atof(argv[4]) : 200000;
	int seconds = argc > 5 ? atoi(argv[5]) : 10;
	for (int i = 0; i < 97; i++)
		snprintf(names[i], sizeof(names[i]), "void emu_kernel_%d<float, 128>(float*, int)", i);
	enum { NBUF = 8 };
	uint8_t *bufs[NBUF];
	size_t valid[NBUF];
	uint32_t corr = 0;
	unsigned seed = 1;
	for (int b = 0; b < NBUF; b++) {
		bufs[b] = aligned_alloc(8, BUF_BYTES);
		valid[b] = fill(bufs[b], &corr, &seed);
	}
	double r[32];
	runs = runs < 1 ? 1 : runs > 32 ? 32 : runs;
	for (int i = 0; i < runs; i++)
		r[i] = drain_run(records, bufs, valid, NBUF);
	bench_sort(r, runs);
	printf("drain_records %.1f M records/s (median of %d, min %.1f, max %.1f)\n",
	       r[runs / 2] / 1e6, runs, r[0] / 1e6, r[runs - 1] / 1e6);
	for (int b = 0; b < NBUF; b++)
		free(bufs[b]);
	return seconds > 0 ? e2e(argv[1], rate, seconds) : 0;
}
