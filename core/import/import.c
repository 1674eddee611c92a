/*
 * import.c - the Kineto / Chrome trace JSON importer's entry points (see
 * core/import/import_api.h and gtrace/import.h): files, directories of
 * per-rank files and memory buffers.  Each file is scanned by kineto_json.c into
 * a struct kineto_file, gets its rank and is flushed into the one store, so all
 * ranks share one time axis (Kineto times are epoch based).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "import_api.h"
#include "gtrace/import.h"
#include "kineto.h"
#include "kineto_read.h"

static const char *const skip_why[KSKIP_COUNT] = {
	[KSKIP_NOT_OBJECT] = "not an object",
	[KSKIP_NO_TS] = "no ts",
	[KSKIP_NO_DUR] = "X without dur",
	[KSKIP_BAD_NUMBER] = "bad or out-of-range number",
	[KSKIP_PHASE] = "unsupported ph",
	[KSKIP_E_WITHOUT_B] = "E without B",
	[KSKIP_OUT_OF_RANGE] = "time or kind out of range",
};

int gt_import_rank_from_name(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	for (const char *p = b; (p = strstr(p, "rank")) != NULL; p += 4) {
		const char *q = p + 4;
		if (*q == '-' || *q == '_')
			q++;
		if (!isdigit((unsigned char)*q))
			continue;
		long v = 0;
		while (isdigit((unsigned char)*q) && v < 10000000)
			v = v * 10 + (*q++ - '0');
		return (int)v;
	}
	return -1;
}

static int rank_used(const struct gt_store *s, int32_t r)
{
	for (size_t i = 0; i < gt_store_rank_count(s); i++)
		if (gt_store_rank_at(s, i)->rank == r)
			return 1;
	return 0;
}

/* warnings of one file on stderr and the store's skip counter */
static void report(struct kineto_file *kf, int truncated, const struct gt_load_opts *o)
{
	uint64_t total = 0;
	char why[256] = "";
	size_t w = 0;
	for (int i = 0; i < KSKIP_COUNT; i++) {
		if (!kf->skipped[i])
			continue;
		total += kf->skipped[i];
		if (w < sizeof(why))
			w += (size_t)snprintf(why + w, sizeof(why) - w, "%s%" PRIu64 " %s", w ? ", " : "",
					      kf->skipped[i], skip_why[i]);
	}
	gt_store_drops(kf->s)->import_skipped += total;
	if (o->flags & GT_LOAD_QUIET)
		return;
	if (total)
		fprintf(stderr, "gtrace: warning: %s: skipped %" PRIu64 " events (%s)\n", kf->path,
			total, why);
	if (kf->neg_dur)
		fprintf(stderr, "gtrace: warning: %s: %" PRIu64 " events with negative dur kept as 0\n",
			kf->path, kf->neg_dur);
	if (truncated)
		fprintf(stderr, "gtrace: warning: %s: %s; kept the %" PRIu64 " events before it\n",
			kf->path, truncated == 2 && kf->damage[0] ? kf->damage :
			truncated == 2 ? "damaged compressed data" : "file is truncated", kf->n_events);
}

/* give a parsed file its rank, report it and move it into the store */
static int settle(struct gt_store *s, struct kineto_file *kf, int truncated, int order,
		  const struct gt_load_opts *o, char *err, size_t errlen)
{
	const char *path = kf->path;
	int32_t rank = kf->have_dist ? kf->dist_rank : gt_import_rank_from_name(path);
	if (rank < 0)
		rank = order;
	if (rank_used(s, rank)) {
		int32_t nr = 0;
		while (rank_used(s, nr))
			nr++;
		if (!(o->flags & GT_LOAD_QUIET))
			fprintf(stderr, "gtrace: warning: %s: rank %" PRId32 " already loaded, using %" PRId32 "\n",
				path, rank, nr);
		rank = nr;
	}
	kf->rank = rank;
	kf->world = kf->have_dist ? kf->dist_world : -1;
	int rc = kineto_file_flush(kf);
	report(kf, truncated, o);      /* after the flush: it skips events out of range */
	if (!rc && kf->flows_unmatched) {
		char v[32];
		const char *old = gt_store_meta_get(s, "import.flow_ends_unmatched");
		uint64_t prev = old ? strtoull(old, NULL, 10) : 0;
		snprintf(v, sizeof(v), "%" PRIu64, prev + kf->flows_unmatched);
		rc = gt_store_meta_set(s, "import.flow_ends_unmatched", v);
	}
	if (rc)
		snprintf(err, errlen, "%s: out of memory", path);
	return rc;
}

/* parse one source into the store under a fresh rank (order = fallback) */
static int import_one(struct gt_store *s, const char *path, struct kineto_read *r, int order,
		      const struct gt_load_opts *o, char *err, size_t errlen)
{
	struct kineto_file kf;
	int truncated = 0;
	kineto_file_init(&kf, s, path);
	int rc = kineto_json_parse(&kf, r, o->flags, err, errlen, &truncated);
	if (!rc)
		rc = settle(s, &kf, truncated, order, o, err, errlen);
	kineto_file_done(&kf);
	return rc;
}

/* several files: parsed by parallel threads into private string tables,
 * then settled into the store one by one in their order */
struct pjob {
	struct kineto_file kf;
	int rc, truncated;
	char err[512];
};

struct pctx {
	struct pjob *jobs;
	size_t n, next;
	unsigned flags;
};

static void *pworker(void *arg)
{
	struct pctx *c = arg;
	for (;;) {
		size_t i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED);
		if (i >= c->n)
			return NULL;
		struct pjob *j = &c->jobs[i];
		struct kineto_read r;
		j->rc = kineto_read_open(&r, j->kf.path, 1, j->err, sizeof(j->err));
		if (j->rc)
			continue;
		j->rc = kineto_json_parse(&j->kf, &r, c->flags & ~GT_LOAD_PROGRESS, j->err, sizeof(j->err),
				    &j->truncated);
		kineto_read_close(&r);
	}
}

/* skip_bad (a directory scan): a file that cannot be read or parsed is left
 * out with a warning instead of failing the whole load; out of memory is never
 * skipped.  Returns 1 when it skipped (err cleared), else rc unchanged. */
static int skip_file(int rc, int skip_bad, const struct gt_load_opts *o, size_t *nskipped,
		     char *first, size_t firstlen, char *err)
{
	if (!rc || !skip_bad || rc == -ENOMEM)
		return 0;
	if (!(o->flags & GT_LOAD_QUIET))
		fprintf(stderr, "gtrace: warning: skipped %s\n", err);
	if (!*nskipped)
		snprintf(first, firstlen, "%s", err);
	(*nskipped)++;
	err[0] = '\0';
	return 1;
}

/* after a scan: the skipped files are counted in the metadata; when every
 * file was skipped the load fails with the first file's error */
static int all_skipped(struct gt_store *s, size_t nloaded, size_t nskipped, const char *first,
		       char *err, size_t errlen)
{
	if (!nskipped)
		return 0;
	if (!nloaded) {
		snprintf(err, errlen, "%s", first);
		return -EINVAL;
	}
	char v[32];
	snprintf(v, sizeof(v), "%zu", nskipped);
	if (gt_store_meta_set(s, "import.files_skipped", v)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int import_parallel(const char *const *paths, size_t n, int nt, const struct gt_load_opts *o,
			   int skip_bad, struct gt_store *s, char *err, size_t errlen)
{
	struct pjob *jobs = calloc(n, sizeof(*jobs));
	pthread_t th[8];
	int started = 0, rc = 0;
	if (!jobs) {
		snprintf(err, errlen, "%s: out of memory", paths[0]);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		kineto_file_init(&jobs[i].kf, s, paths[i]);
		if (kineto_file_private(&jobs[i].kf))
			rc = -ENOMEM;
	}
	struct pctx c = { .jobs = jobs, .n = rc ? 0 : n, .flags = o->flags };
	for (int t = 1; t < nt && t < 8; t++)
		if (pthread_create(&th[started], NULL, pworker, &c) == 0)
			started++;
	pworker(&c);
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	if (rc)
		snprintf(err, errlen, "%s: out of memory", paths[0]);
	size_t nloaded = 0, nskipped = 0;
	char first[512] = "";
	for (size_t i = 0; i < n && !rc; i++) {
		if ((rc = jobs[i].rc)) {
			snprintf(err, errlen, "%s", jobs[i].err);
			if (skip_file(rc, skip_bad, o, &nskipped, first, sizeof(first), err))
				rc = 0;
		} else {
			rc = settle(s, &jobs[i].kf, jobs[i].truncated, (int)i, o, err, errlen);
			nloaded++;
		}
		kineto_file_done(&jobs[i].kf);
	}
	if (!rc)
		rc = all_skipped(s, nloaded, nskipped, first, err, errlen);
	for (size_t i = 0; i < n; i++)
		if (jobs[i].kf.s)
			kineto_file_done(&jobs[i].kf);
	free(jobs);
	return rc;
}

/* several files merged as ranks of one job: say so when they cannot be one
 * run (different world sizes in distributedInfo, or ranks whose time spans do
 * not overlap at all); they stay on one axis, the analyses then compare
 * unrelated runs.  The count goes to the metadata (import.mixed_runs). */
static int mixed_runs(struct gt_store *s, const struct gt_load_opts *o, const char *src)
{
	size_t nr = gt_store_rank_count(s);
	if (nr < 2)
		return 0;
	int32_t w0 = -1, w1 = -1;
	int64_t *lo = calloc(nr, sizeof(*lo)), *hi = calloc(nr, sizeof(*hi));
	if (!lo || !hi) {
		free(lo);
		free(hi);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++) {
		int32_t w = gt_store_rank_at(s, i)->world_size;
		if (w > 0 && w0 < 0)
			w0 = w;
		else if (w > 0 && w != w0 && w1 < 0)
			w1 = w;
		lo[i] = INT64_MAX;
		hi[i] = INT64_MIN;
	}
	for (size_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, (uint32_t)l);
		int32_t rk = ln->key.rank;
		for (size_t i = 0; i < nr && ln->n; i++)
			if (gt_store_rank_at(s, i)->rank == rk) {
				int64_t a = ln->ev[0].start_ns, b = gt_event_end(&ln->ev[ln->n - 1]);
				lo[i] = a < lo[i] ? a : lo[i];
				hi[i] = b > hi[i] ? b : hi[i];
			}
	}
	/* the latest start after the earliest end: two ranks never ran together */
	int64_t max_lo = INT64_MIN, min_hi = INT64_MAX;
	for (size_t i = 0; i < nr; i++)
		if (lo[i] <= hi[i]) {
			max_lo = lo[i] > max_lo ? lo[i] : max_lo;
			min_hi = hi[i] < min_hi ? hi[i] : min_hi;
		}
	free(lo);
	free(hi);
	int apart = max_lo != INT64_MIN && max_lo > min_hi;
	if (w1 < 0 && !apart)
		return 0;
	if (!(o->flags & GT_LOAD_QUIET)) {
		if (w1 > 0)
			fprintf(stderr, "gtrace: warning: %s: the files come from different runs (world "
				"sizes %d and %d): treated as separate runs (one rank each, aligned at their first "
				"step, no straggler across them)\n", src,
				(int)w0, (int)w1);
		else
			fprintf(stderr, "gtrace: warning: %s: some ranks do not overlap in time (%.1f s "
				"apart): treated as separate runs (one rank each, aligned at their first step, no "
				"straggler across them)\n", src,
				(double)(max_lo - min_hi) / 1e9);
	}
	return gt_store_meta_set(s, "import.mixed_runs", w1 > 0 ? "world sizes differ" : "no overlap");
}

static int finish(struct gt_store *s, const char *src, const struct gt_load_opts *o, char *err,
		  size_t errlen)
{
	if (gt_store_meta_set(s, "format", "chrome-json") || gt_store_meta_set(s, "source", src) ||
	    gt_store_finish(s) || mixed_runs(s, o, src)) {
		snprintf(err, errlen, "%s: out of memory", src);
		return -ENOMEM;
	}
	return 0;
}

static int import_files_opt(const char *const *paths, size_t n, const struct gt_load_opts *o,
			    int skip_bad, struct gt_store *s, char *err, size_t errlen)
{
	struct gt_load_opts def = { 0 };
	if (!o)
		o = &def;
	err[0] = '\0';
	/* automatic: up to 4 parser threads, as many cores as the load leaves free */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double load = 0;
	if (getloadavg(&load, 1) != 1)
		load = 0;
	long free_cpu = ncpu - (long)(load + 0.5);
	int nt = o->threads > 0 ? o->threads : free_cpu > 1 ? (int)(free_cpu < 4 ? free_cpu : 4) : 1;
	if (n > 1 && nt > 1) {
		int rc = import_parallel(paths, n, nt < (int)n ? nt : (int)n, o, skip_bad, s, err, errlen);
		return rc ? rc : finish(s, paths[0], o, err, errlen);
	}
	size_t nloaded = 0, nskipped = 0;
	char first[512] = "";
	for (size_t i = 0; i < n; i++) {
		struct kineto_read r;
		int rc = kineto_read_open(&r, paths[i], o->threads, err, errlen);
		if (!rc) {
			rc = import_one(s, paths[i], &r, (int)i, o, err, errlen);
			kineto_read_close(&r);
		}
		if (skip_file(rc, skip_bad, o, &nskipped, first, sizeof(first), err))
			continue;
		if (rc)
			return rc;
		nloaded++;
	}
	int rc = all_skipped(s, nloaded, nskipped, first, err, errlen);
	return rc ? rc : finish(s, n ? paths[0] : "", o, err, errlen);
}

int import_files(const char *const *paths, size_t n, const struct gt_load_opts *o,
		 struct gt_store *s, char *err, size_t errlen)
{
	return import_files_opt(paths, n, o, 0, s, err, errlen);
}

static int is_trace_name(const char *n)
{
	size_t l = strlen(n);
	return (l > 5 && !strcmp(n + l - 5, ".json")) || (l > 8 && !strcmp(n + l - 8, ".json.gz"));
}

static int name_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

int import_dir(const char *dir, const struct gt_load_opts *o, struct gt_store *s,
	       char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !is_trace_name(de->d_name))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nn = realloc(names, nc * sizeof(*nn));
			if (!nn) {
				rc = -ENOMEM;
				break;
			}
			names = nn;
			cap = nc;
		}
		size_t len = strlen(dir) + strlen(de->d_name) + 2;
		if (!(names[n] = malloc(len))) {
			rc = -ENOMEM;
			break;
		}
		snprintf(names[n++], len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", de->d_name);
	}
	closedir(d);
	if (rc)
		snprintf(err, errlen, "%s: out of memory", dir);
	else if (n == 0) {
		snprintf(err, errlen, "%s: no trace files in this directory (a directory takes "
			 "*.json, *.json.gz, *.xplane.pb, *.xplane.pb.gz, or a TensorBoard profile "
			 "LOGDIR; open a .gtrace or nsys .sqlite file by its name)", dir);
		rc = -ENOENT;
	} else {
		qsort(names, n, sizeof(*names), name_cmp);
		/* a directory may hold other JSON files: read what can be read */
		rc = import_files_opt((const char *const *)names, n, o, 1, s, err, errlen);
		if (!rc)
			rc = gt_store_meta_set(s, "source", dir);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int gt_import_json_mem(const char *name, const void *buf, size_t len,
		    const struct gt_load_opts *o, struct gt_store *s, char *err, size_t errlen)
{
	struct gt_load_opts def = { 0 };
	struct kineto_read r;
	if (!o)
		o = &def;
	err[0] = '\0';
	if (kineto_read_open_mem(&r, buf, len)) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	int rc = import_one(s, name, &r, 0, o, err, errlen);
	kineto_read_close(&r);
	return rc ? rc : finish(s, name, o, err, errlen);
}
