/*
 * import_bench.c - trace JSON import speed and memory.
 *
 *   import_bench [--runs N] [--threads T] PATH...   time gt_load on each file or directory
 *   import_bench --gen OUT.json --mb N              write a realistic Kineto trace of ~N MB
 *
 * Prints one line per file: "import FILE raw_mb=... runs=... median_s=...
 * mb_per_s=... median_cpu_s=... mb_per_cpu_s=... events=... store_mb=...
 * peak_rss_mb=..." (cpu = user + sys of all threads) where raw_mb is the
 * decompressed JSON size and peak_rss_mb the process's peak resident set
 * (a child process per file, so files do not share a peak).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "gtrace/load.h"
#include "bench.h"

/* decompressed size of a (maybe gzip) file, or of the files of a directory */
static double raw_mb(const char *path)
{
	DIR *d = opendir(path);
	if (d) {
		struct dirent *de;
		double sum = 0;
		char p[4096];
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
			sum += raw_mb(p);
		}
		closedir(d);
		return sum;
	}
	gzFile g = gzopen(path, "rb");
	if (!g)
		return 0;
	static char buf[1 << 16];
	double n = 0;
	int k;
	while ((k = gzread(g, buf, sizeof(buf))) > 0)
		n += k;
	gzclose(g);
	return n / 1e6;
}

static int bench_one(const char *path, int runs, int threads)
{
	double t[64], c[64];
	size_t events = 0, bytes = 0;
	if (runs > 64)
		runs = 64;
	for (int r = 0; r < runs; r++) {
		struct gt_load_opts o = { .flags = GT_LOAD_QUIET, .threads = threads };
		struct gt_store *s = NULL;
		char err[512];
		double t0 = bench_ms(CLOCK_MONOTONIC) / 1e3, c0 = bench_cpu_s();
		if (gt_load(&path, 1, &o, &s, err, sizeof(err))) {
			fprintf(stderr, "import_bench: %s\n", err);
			return 1;
		}
		t[r] = bench_ms(CLOCK_MONOTONIC) / 1e3 - t0;
		c[r] = bench_cpu_s() - c0;
		events = gt_store_event_count(s);
		bytes = gt_store_bytes(s);
		gt_store_free(s);
	}
	bench_sort(t, runs);
	bench_sort(c, runs);
	double med = t[runs / 2], mb = raw_mb(path);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("import %s raw_mb=%.1f runs=%d threads=%d median_s=%.3f min_s=%.3f mb_per_s=%.0f "
	       "median_cpu_s=%.3f mb_per_cpu_s=%.0f events=%zu store_mb=%.1f peak_rss_mb=%.1f\n",
	       path, mb, runs, threads, med, t[0], mb / med, c[runs / 2], mb / c[runs / 2], events,
	       (double)bytes / 1e6,
	       (double)ru.ru_maxrss / 1024.0);
	return 0;
}

/* a realistic Kineto trace: per step a ProfilerStep span, cpu ops, launch
 * calls with flows and kernels on two streams, copies, an NCCL kernel */
static int gen(const char *out, double mb)
{
	FILE *f = fopen(out, "w");
	if (!f) {
		perror(out);
		return 1;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	static const char *const kn[] = {
		"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
		"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)",
		"ampere_sgemm_128x64_tn",
	};
	fprintf(f, "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 1},\n"
		   "  \"traceEvents\": [\n");
	long long ts = 1700000000000000LL, corr = 1, ext = 1;
	int step = 1;
	long done = 0, limit = (long)(mb * 1e6);
	while (done < limit) {
		long n0 = ftell(f);
		fprintf(f, "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": 4242, \"tid\": 4242, "
			   "\"ts\": %lld.000, \"dur\": 90000.000, \"args\": {\"External id\": %lld}},\n", step++, ts, ext++);
		for (int k = 0; k < 400; k++) {
			long long t = ts + k * 200;
			int s = k % 7 == 0 ? 20 : 7;
			fprintf(f, "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 4242, \"tid\": 4242, "
				   "\"ts\": %lld.125, \"dur\": 35.500, \"args\": {\"External id\": %lld, \"Record function id\": 0, "
				   "\"Input Dims\": [[256, 1024], [1024, 1024], []], \"Input type\": [\"float\", \"float\", \"Scalar\"], \"Ev Idx\": %d}},\n",
				t, ext, k);
			fprintf(f, "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 4242, \"tid\": 4242, "
				   "\"ts\": %lld.250, \"dur\": 6.125, \"args\": {\"External id\": %lld, \"cbid\": 211, \"correlation\": %lld}},\n",
				t + 10, ext, corr);
			fprintf(f, "  {\"ph\": \"s\", \"id\": %lld, \"pid\": 4242, \"tid\": 4242, \"ts\": %lld.250, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n",
				corr, t + 10);
			fprintf(f, "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, \"ts\": %lld.375, \"dur\": %d.640, "
				   "\"args\": {\"External id\": %lld, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": %d, \"correlation\": %lld, "
				   "\"registers per thread\": 128, \"shared memory\": 49152, \"blocks per SM\": 1.185185, \"warps per SM\": 9.481482, "
				   "\"grid\": [128, 2, 1], \"block\": [256, 1, 1], \"est. achieved occupancy %%\": 14}},\n",
				kn[k % 4], s, t + 30, 20 + k % 150, ext, s, corr);
			fprintf(f, "  {\"ph\": \"f\", \"id\": %lld, \"pid\": 0, \"tid\": %d, \"ts\": %lld.375, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n",
				corr, s, t + 30);
			corr++;
			ext++;
		}
		ts += 100000;
		done += ftell(f) - n0;
	}
	fprintf(f, "  {\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 1700000000000000, \"dur\": %lld, \"pid\": \"Spans\", "
		   "\"tid\": \"PyTorch Profiler\", \"name\": \"PyTorch Profiler (0)\", \"args\": {\"Op count\": 0}}\n  ],\n"
		   "  \"traceName\": \"generated\"\n}\n", ts - 1700000000000000LL);
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	int runs = 5, threads = 0, rc = 0;
	if (argc >= 3 && !strcmp(argv[1], "--gen")) {
		double mb = argc >= 5 && !strcmp(argv[3], "--mb") ? atof(argv[4]) : 1000;
		return gen(argv[2], mb);
	}
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i += 2) {
		if (i + 1 >= argc)
			break;
		if (!strcmp(argv[i], "--runs"))
			runs = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--threads"))
			threads = atoi(argv[i + 1]);
	}
	if (i >= argc) {
		fprintf(stderr, "usage: import_bench [--runs N] [--threads T] FILE... | --gen OUT --mb N\n");
		return 2;
	}
	if (runs < 1)
		runs = 1;
	for (; i < argc; i++) {
		fflush(stdout);
		pid_t p = fork();
		if (p == 0) {
			int brc = bench_one(argv[i], runs, threads);
			fflush(stdout);
			_exit(brc);
		}
		int st = 0;
		waitpid(p, &st, 0);
		rc |= !WIFEXITED(st) || WEXITSTATUS(st);
	}
	return rc;
}
