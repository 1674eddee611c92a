/*
 * xplane_bench.c - XPlane import speed and memory.
 *
 *   xplane_bench --gen OUT.xplane.pb --mb N [--gpus G]   write a TensorFlow-like profile of ~N MB
 *   xplane_bench [--runs N] PATH...                      time gt_load of each file (one core)
 *   xplane_bench --floor [--runs N] PATH                 time protobuf-c's unpacking alone
 *
 * The generated profile looks like TensorFlow's: a /host:CPU plane with
 * nested TraceMe events (an op around a launch carrying correlation_id and
 * a few other stats) and G /device:GPU:N planes with a compute stream
 * (kernels: correlation_id, kernel_details as a ref stat, context_id), a
 * copy stream (memcpy_details) and a TensorFlow Ops line.  It is packed
 * with protobuf-c a line at a time (XPlanePacked / XSpaceBytes carry the
 * packed lines and planes: the same wire format).
 *
 * Prints per file: "xplane FILE file_mb=... runs=... median_s=... mb_per_s=...
 * median_cpu_s=... mb_per_cpu_s=... events=... store_mb=... peak_rss_mb=... base_rss_mb=... peak_over_store=..."
 * where peak_over_store = (peak RSS - RSS before the load) / store bytes,
 * measured in a child process of its own (first run).
 *
 * --floor does only the unpacking that gt_load cannot do without (space ->
 * packed lines -> each event with its stats left packed, as xplane_map.c
 * does, the space into a bump arena too, the line's and the event's reset
 * per line and per event), nothing else: the protobuf-c floor of the
 * import on that file.  Prints "floor FILE
 * file_mb=... median_cpu_s=... mb_per_cpu_s=... events=...".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/load.h"
#include "bench.h"
#include "xplane.pb-c.h"
#include "rss.h"

typedef Tensorflow__Profiler__XEvent XEvent;
typedef Tensorflow__Profiler__XStat XStat;

static double rss_mb(void)
{
	return (double)rss_bytes() / 1e6;
}

/* ---- generator ---- */

enum { SM_CORR = 1, SM_KDET, SM_CTX, SM_MCPY, SM_GROUP, SM_ID, SM_KD0 };

static void stat_u(XStat *s, int64_t mid, uint64_t v)
{
	tensorflow__profiler__xstat__init(s);
	s->metadata_id = mid;
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
	s->uint64_value = v;
}

static void stat_ref(XStat *s, int64_t mid, uint64_t ref)
{
	tensorflow__profiler__xstat__init(s);
	s->metadata_id = mid;
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE;
	s->ref_value = ref;
}

static void stat_s(XStat *s, int64_t mid, char *v)
{
	tensorflow__profiler__xstat__init(s);
	s->metadata_id = mid;
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
	s->str_value = v;
}

/* n events of one line packed; kind 0 host, 1 kernels, 2 copies, 3 ops */
static ProtobufCBinaryData pack_line(int64_t id, const char *name, int kind, size_t n,
				     uint64_t *corr)
{
	Tensorflow__Profiler__XLine l = TENSORFLOW__PROFILER__XLINE__INIT;
	XEvent *ev = calloc(n, sizeof(*ev));
	XEvent **evp = calloc(n, sizeof(*evp));
	XStat *st = calloc(n * 4, sizeof(*st));
	XStat **stp = calloc(n * 4, sizeof(*stp));
	static char ctx[] = "$$1", mcpy[] = "size:1048576 dest:0 async:1";
	l.id = id;
	l.name = (char *)name;
	l.timestamp_ns = 1700000000000000000LL;
	l.n_events = n;
	l.events = evp;
	for (size_t i = 0; i < n; i++) {
		XEvent *e = &ev[i];
		tensorflow__profiler__xevent__init(e);
		evp[i] = e;
		XStat **s = &stp[i * 4];
		for (int k = 0; k < 4; k++)
			s[k] = &st[i * 4 + k];
		e->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
		e->stats = s;
		if (kind == 0) {            /* op [t, t+20us] around a launch [t+5us, t+9us] */
			int inner = i & 1;
			e->metadata_id = inner ? 2 : 1 + (int64_t)(i / 2 % 50) * 2 + 2;
			e->offset_ps = (int64_t)(i / 2) * 25000000 + (inner ? 5000123 : 0);
			e->duration_ps = inner ? 4000000 : 20000000;
			if (inner) {
				stat_u(s[0], SM_CORR, ++*corr);
				stat_ref(s[1], SM_KDET, SM_KD0 + *corr % 8);
				stat_u(s[2], SM_GROUP, i / 4000);
				e->n_stats = 3;
			} else {
				stat_u(s[0], SM_ID, i * 7919);
				e->n_stats = 1;
			}
		} else if (kind == 1 || kind == 3) {
			e->metadata_id = 3 + (int64_t)(i % 40);
			e->offset_ps = (int64_t)i * 25000000 + 12000000;
			e->duration_ps = 10000000 + (int64_t)(i % 97) * 1000;
			if (kind == 1) {
				stat_u(s[0], SM_CORR, *corr - n + i + 1);
				stat_ref(s[1], SM_KDET, SM_KD0 + i % 8);
				stat_s(s[2], SM_CTX, ctx);
				stat_u(s[3], SM_GROUP, i / 4000);
				e->n_stats = 4;
			} else {
				stat_u(s[0], SM_GROUP, i / 4000);
				e->n_stats = 1;
			}
		} else {
			e->metadata_id = 2;
			e->offset_ps = (int64_t)i * 250000000 + 3000000;
			e->duration_ps = 90000000;
			stat_u(s[0], SM_CORR, i);
			stat_s(s[1], SM_MCPY, mcpy);
			stat_s(s[2], SM_CTX, ctx);
			e->n_stats = 3;
		}
	}
	ProtobufCBinaryData b;
	b.len = tensorflow__profiler__xline__get_packed_size(&l);
	b.data = malloc(b.len);
	tensorflow__profiler__xline__pack(&l, b.data);
	free(ev);
	free(evp);
	free(st);
	free(stp);
	return b;
}

static ProtobufCBinaryData pack_plane(const char *name, int gpu, size_t n, uint64_t *corr)
{
	static char *kn[] = { "volta_h884gemm_256x128_ldg8_nn", "void tensorflow::BiasNHWCKernel<Eigen::half>(int, Eigen::half const*, Eigen::half const*, Eigen::half*, int)",
			      "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<Eigen::half, 1, 1, long>, 16>>, Eigen::GpuDevice>, long>",
			      "ncclKernel_AllReduce_RING_LL_Sum_half" };
	Tensorflow__Profiler__XPlanePacked p = TENSORFLOW__PROFILER__XPLANE_PACKED__INIT;
	Tensorflow__Profiler__XPlanePacked__EventMetadataEntry em[110], *emp[110];
	Tensorflow__Profiler__XEventMetadata emv[110];
	Tensorflow__Profiler__XPlanePacked__StatMetadataEntry sm[20], *smp[20];
	Tensorflow__Profiler__XStatMetadata smv[20];
	char names[110][160];
	static const char *sn[] = { "", "correlation_id", "kernel_details", "context_id", "memcpy_details",
				    "group_id", "id" };
	static const char *kd[8] = { "regs:128 shm:49152 grid:128,2,1 block:256,1,1",
		"regs:32 shm:0 grid:160,1,1 block:1024,1,1", "regs:64 shm:16384 grid:80,1,1 block:128,1,1",
		"regs:38 shm:0 grid:1,1,1 block:1024,1,1", "regs:90 shm:32768 grid:256,4,1 block:256,1,1",
		"regs:16 shm:0 grid:40,1,1 block:512,1,1", "regs:72 shm:8192 grid:64,8,1 block:128,1,1",
		"regs:24 shm:0 grid:320,1,1 block:256,1,1" };
	size_t ne = 0, ns = 0;
	for (int i = 1; i <= 104; i++) {
		if (gpu)
			snprintf(names[ne], sizeof(names[ne]), "%s", i == 2 ? "MemcpyH2D" : kn[i % 4]);
		else
			snprintf(names[ne], sizeof(names[ne]), i == 2 ? "cudaLaunchKernel" :
				 "model/layer_%d/dense/MatMul:MatMul", i);
		tensorflow__profiler__xevent_metadata__init(&emv[ne]);
		emv[ne].id = i;
		emv[ne].name = names[ne];
		tensorflow__profiler__xplane_packed__event_metadata_entry__init(&em[ne]);
		em[ne].key = i;
		em[ne].value = &emv[ne];
		emp[ne] = &em[ne];
		ne++;
	}
	for (int i = 1; i < SM_KD0 + 8; i++) {
		tensorflow__profiler__xstat_metadata__init(&smv[ns]);
		smv[ns].id = i;
		smv[ns].name = (char *)(i < SM_KD0 ? sn[i] : kd[i - SM_KD0]);
		tensorflow__profiler__xplane_packed__stat_metadata_entry__init(&sm[ns]);
		sm[ns].key = i;
		sm[ns].value = &smv[ns];
		smp[ns] = &sm[ns];
		ns++;
	}
	p.name = (char *)name;
	p.n_event_metadata = ne;
	p.event_metadata = emp;
	p.n_stat_metadata = ns;
	p.stat_metadata = smp;
	ProtobufCBinaryData lines[8];
	size_t nl = 0;
	if (!gpu) {
		for (int t = 0; t < 4; t++)
			lines[nl++] = pack_line(1000 + t, "tf_Compute", 0, n / 4 * 2, corr);
	} else {
		lines[nl++] = pack_line(7, "Stream #7(Compute)", 1, n, corr);
		lines[nl++] = pack_line(8, "Stream #8(MemcpyH2D)", 2, n / 10, corr);
		lines[nl++] = pack_line(-559038734, "TensorFlow Ops", 3, n, corr);
	}
	p.n_lines = nl;
	p.lines = lines;
	ProtobufCBinaryData b;
	b.len = tensorflow__profiler__xplane_packed__get_packed_size(&p);
	b.data = malloc(b.len);
	tensorflow__profiler__xplane_packed__pack(&p, b.data);
	for (size_t i = 0; i < nl; i++)
		free(lines[i].data);
	return b;
}

static int gen(const char *out, double mb, int gpus)
{
	/* about 75 bytes of file per kernel with its launch, op and annotation */
	size_t n = (size_t)(mb * 1e6 / 75.0 / gpus);
	Tensorflow__Profiler__XSpaceBytes sp = TENSORFLOW__PROFILER__XSPACE_BYTES__INIT;
	ProtobufCBinaryData planes[17];
	char *host = "bench-host";
	uint64_t corr = 0;
	size_t np = 0;
	for (int g = 0; g < gpus && g < 16; g++) {
		char nm[32];
		uint64_t c0 = corr;
		planes[np++] = pack_plane("/host:CPU", 0, n, &corr);   /* launches for GPU g */
		corr = c0 + n;
		snprintf(nm, sizeof(nm), "/device:GPU:%d", g);
		planes[np++] = pack_plane(nm, 1, n, &corr);
		if (np >= 16)
			break;
	}
	sp.n_planes = np;
	sp.planes = planes;
	sp.n_hostnames = 1;
	sp.hostnames = &host;
	size_t len = tensorflow__profiler__xspace_bytes__get_packed_size(&sp);
	uint8_t *b = malloc(len);
	tensorflow__profiler__xspace_bytes__pack(&sp, b);
	FILE *f = fopen(out, "wb");
	int rc = !f || fwrite(b, 1, len, f) != len;
	if (f && fclose(f))
		rc = 1;
	for (size_t i = 0; i < np; i++)
		free(planes[i].data);
	free(b);
	printf("wrote %s: %.1f MB, %zu planes\n", out, (double)len / 1e6, np);
	return rc;
}

/* ---- protobuf-c floor ---- */

struct bump {
	ProtobufCAllocator pa;
	char *p;
	size_t used, cap;
	char *old[64];             /* outgrown chunks, freed at the end (growth is geometric) */
	int nold;
};

static void *bump_alloc(void *ad, size_t n)
{
	struct bump *b = ad;
	n = (n + 15) & ~(size_t)15;
	if (b->cap - b->used < n) {
		size_t cap = b->cap * 2 > n ? b->cap * 2 : n + (1u << 20);
		char *np = b->nold < 64 ? malloc(cap) : NULL;
		if (!np)
			return NULL;
		if (b->p)
			b->old[b->nold++] = b->p;
		b->p = np;
		b->used = 0;
		b->cap = cap;
	}
	void *r = b->p + b->used;
	b->used += n;
	return r;
}

static void bump_free(void *ad, void *p)
{
	(void)ad;
	(void)p;
}

static int floor_one(const char *path, int runs)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 1;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = len > 0 ? malloc((size_t)len) : NULL;
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	double c[64];
	size_t events = 0;
	if (runs > 64)
		runs = 64;
	for (int r = 0; r < runs; r++) {
		struct bump lb = { .pa = { bump_alloc, bump_free, NULL } };
		struct bump eb = { .pa = { bump_alloc, bump_free, NULL } };
		struct bump sb = { .pa = { bump_alloc, bump_free, NULL } };
		lb.pa.allocator_data = &lb;
		eb.pa.allocator_data = &eb;
		sb.pa.allocator_data = &sb;
		double c0 = bench_cpu_s();
		events = 0;
		Tensorflow__Profiler__XSpacePacked *sp =
			tensorflow__profiler__xspace_packed__unpack(&sb.pa, (size_t)len, buf);
		if (!sp) {
			free(buf);
			return 1;
		}
		for (size_t p = 0; p < sp->n_planes; p++)
			for (size_t l = 0; l < sp->planes[p]->n_lines; l++) {
				lb.used = 0;
				Tensorflow__Profiler__XLinePacked *ln = tensorflow__profiler__xline_packed__unpack(
					&lb.pa, sp->planes[p]->lines[l].len, sp->planes[p]->lines[l].data);
				for (size_t e = 0; ln && e < ln->n_events; e++) {
					eb.used = 0;
					events += tensorflow__profiler__xevent_bare__unpack(&eb.pa, ln->events[e].len,
							ln->events[e].data) != NULL;
				}
			}
		c[r] = bench_cpu_s() - c0;
		for (struct bump *b = &lb; b; b = b == &lb ? &eb : b == &eb ? &sb : NULL) {
			for (int k = 0; k < b->nold; k++)
				free(b->old[k]);
			free(b->p);
		}
	}
	free(buf);
	bench_sort(c, runs);
	double mb = (double)len / 1e6;
	printf("floor %s file_mb=%.1f runs=%d median_cpu_s=%.3f mb_per_cpu_s=%.0f events=%zu\n", path, mb,
	       runs, c[runs / 2], mb / c[runs / 2], events);
	return 0;
}

/* ---- measurement ---- */

static int bench_one(const char *path, int runs)
{
	double t[64], c[64], base = rss_mb(), peak_rss = 0, file_mb = 0;
	size_t events = 0, bytes = 0;
	FILE *f = fopen(path, "rb");
	if (f) {
		fseek(f, 0, SEEK_END);
		file_mb = (double)ftell(f) / 1e6;
		fclose(f);
	}
	if (runs > 64)
		runs = 64;
	for (int r = 0; r < runs; r++) {
		struct gt_load_opts o = { .flags = GT_LOAD_QUIET, .threads = 1 };
		struct gt_store *s = NULL;
		char err[512];
		double t0 = bench_ms(CLOCK_MONOTONIC) / 1e3, c0 = bench_cpu_s();
		if (gt_load(&path, 1, &o, &s, err, sizeof(err))) {
			fprintf(stderr, "xplane_bench: %s\n", err);
			return 1;
		}
		t[r] = bench_ms(CLOCK_MONOTONIC) / 1e3 - t0;
		c[r] = bench_cpu_s() - c0;
		if (r == 0) {
			struct rusage ru;
			getrusage(RUSAGE_SELF, &ru);
			peak_rss = (double)ru.ru_maxrss / 1024.0 * 1.048576;
		}
		events = gt_store_event_count(s);
		bytes = gt_store_bytes(s);
		gt_store_free(s);
	}
	bench_sort(t, runs);
	bench_sort(c, runs);
	double med = t[runs / 2], cmed = c[runs / 2];
	printf("xplane %s file_mb=%.1f runs=%d median_s=%.3f min_s=%.3f mb_per_s=%.0f median_cpu_s=%.3f "
	       "mb_per_cpu_s=%.0f events=%zu "
	       "store_mb=%.1f peak_rss_mb=%.1f base_rss_mb=%.1f peak_over_store=%.2f\n",
	       path, file_mb, runs, med, t[0], file_mb / med, cmed, file_mb / cmed, events, (double)bytes / 1e6, peak_rss,
	       base, (peak_rss - base) / ((double)bytes / 1e6));
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 5, rc = 0;
	if (argc >= 3 && !strcmp(argv[1], "--gen")) {
		double mb = argc >= 5 && !strcmp(argv[3], "--mb") ? atof(argv[4]) : 100;
		int gpus = argc >= 7 && !strcmp(argv[5], "--gpus") ? atoi(argv[6]) : 2;
		return gen(argv[2], mb, gpus < 1 ? 1 : gpus);
	}
	int i = 1, floor = 0;
	if (i < argc && !strcmp(argv[i], "--floor")) {
		floor = 1;
		i++;
	}
	if (i + 1 < argc && !strcmp(argv[i], "--runs")) {
		runs = atoi(argv[i + 1]);
		i += 2;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: xplane_bench [--floor] [--runs N] FILE... | --gen OUT --mb N [--gpus G]\n");
		return 2;
	}
	if (runs < 1)
		runs = 1;
	for (; i < argc; i++) {
		fflush(stdout);
		pid_t p = fork();
		if (p == 0) {
			int brc = floor ? floor_one(argv[i], runs) : bench_one(argv[i], runs);
			fflush(stdout);
			_exit(brc);
		}
		int st = 0;
		waitpid(p, &st, 0);
		rc |= !WIFEXITED(st) || WEXITSTATUS(st);
	}
	return rc;
}
