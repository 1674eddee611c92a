/*
 * gputime.c - Holistic Trace Analysis' GPU time definitions (docs/analyses.md §5)
 * per rank and GPU over a scope: temporal breakdown (span, idle, compute,
 * non-compute), communication/compute overlap, kernel launch statistics,
 * and per stream the idle time by category and the queue length.
 * Launch calls are found through a corr -> launch map per rank.  GPU
 * annotation lanes (pid < 0: Kineto's gpu_user_annotation, XPlane's derived
 * lines such as "TensorFlow Ops", whose ids may be negative) are no
 * streams: they get no row and none of their events count.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/analysis.h"
#include "analysis.h"
#include "interval.h"

enum { K_COMPUTE = 0, K_COMM, K_MEM, K_N };

/* 1 when a GPU lane is a CUDA stream, 0 for an annotation lane */
static int is_stream(const struct gt_lane *l)
{
	return l->key.pid >= 0 && l->key.id >= 0;
}


void gt_gputime_result_done(struct gt_gputime_result *r)
{
	free(r->gpus);
	free(r->streams);
	memset(r, 0, sizeof(*r));
}

/* a vector sized once for the most values it can get (no growth); on
 * the heap, or in the GPU's spill under a memory budget */
struct i64v {
	int64_t *v;
	size_t n, bytes;
};

static int vinit(struct i64v *a, size_t cap)
{
	a->n = 0;
	a->v = analysis_mem_get((cap ? cap : 1) * sizeof(*a->v), &a->bytes);
	return a->v ? 0 : -ENOMEM;
}

static void vdone(struct i64v *a)
{
	analysis_mem_put(a->v, a->bytes);
	a->v = NULL;
}

/* the launch vectors of one GPU (sized for all its events in the scope):
 * 24 bytes a kernel, 24 GB for a GPU of a billion; under a memory budget,
 * once they would take a sixteenth of it, they live in a spill whose
 * mapped share stays within an eighth of it (as the kernel table's
 * durations do, kernel_stats_par.c) */
struct launch_vec {
	struct i64v cpu, gpu, dly;
	struct spill *sp;
};

static int lv_init(struct launch_vec *lv, const struct gt_store *s, size_t cap)
{
	size_t budget = gt_store_budget(s), bytes = (cap ? cap : 1) * sizeof(int64_t);
	struct i64v *v[3] = { &lv->cpu, &lv->gpu, &lv->dly };
	memset(lv, 0, sizeof(*lv));
	if (budget && 3 * bytes >= budget / 16 && spill_new(budget / 8, &lv->sp) == 0) {
		for (int k = 0; k < 3; k++)
			if ((v[k]->v = spill_alloc(lv->sp, bytes)))
				v[k]->bytes = bytes;
		if (lv->cpu.v && lv->gpu.v && lv->dly.v)
			return 0;
		for (int k = 0; k < 3; k++)   /* the spill's disk is full: the heap */
			if (v[k]->v)
				spill_release(lv->sp, v[k]->v, bytes);
		spill_free(lv->sp);
		memset(lv, 0, sizeof(*lv));
	}
	return vinit(&lv->cpu, cap) || vinit(&lv->gpu, cap) || vinit(&lv->dly, cap) ? -ENOMEM : 0;
}

static void lv_done(struct launch_vec *lv)
{
	struct i64v *v[3] = { &lv->cpu, &lv->gpu, &lv->dly };
	for (int k = 0; k < 3; k++) {
		if (lv->sp && v[k]->v)
			spill_release(lv->sp, v[k]->v, v[k]->bytes);
		else
			vdone(v[k]);
		v[k]->v = NULL;
	}
	spill_free(lv->sp);
	lv->sp = NULL;
}

/* append x; in a spill, each 64 KiB written is announced first */
static inline void lv_push(struct spill *sp, struct i64v *a, int64_t x)
{
	if (sp && !(a->n & 8191))
		spill_touch(sp, 8192 * sizeof(*a->v));
	a->v[a->n++] = x;
}

/* the exact median of a vector: the same number wherever it lives, by a
 * select that announces its passes to the spill there */
static int64_t lv_median(const struct launch_vec *lv, struct i64v *a)
{
	return lv->sp ? analysis_median_i64_spill(lv->sp, a->v, a->n) : analysis_median_i64(a->v, a->n);
}

/* launch statistics of one kernel (la = its launch call or NULL) */
static inline void kernel_stats(const struct gt_event *e, const struct analysis_launch *la,
				struct gt_gputime_gpu *g, struct launch_vec *lv)
{
	g->kernels++;
	g->under_10us += e->dur_ns < 10000;
	g->gpu_dur_sum_ns += e->dur_ns;
	lv_push(lv->sp, &lv->gpu, e->dur_ns);
	if (!la)
		return;
	int64_t c = la->t1 - la->t0, d = e->start_ns - la->t1;
	if (d < 0)
		d = 0;
	g->launches++;
	g->cpu_launch_sum_ns += c;
	g->delay_sum_ns += d;
	if (d > g->delay_max_ns)
		g->delay_max_ns = d;
	g->short_kernels += e->dur_ns < c;
	g->runtime_outliers += c > GT_GPUTIME_RUNTIME_OUTLIER_NS;   /* HTA: the CPU runtime event */
	g->delay_outliers += d > GT_GPUTIME_DELAY_OUTLIER_NS;
	lv_push(lv->sp, &lv->cpu, c);
	lv_push(lv->sp, &lv->dly, d);
}

/* The queue length of a stream: launched (a launch call began) minus
 * completed (the work ended), over time.  The launch starts and the ends,
 * each sorted, are merged: a launch first on a tie; the time-weighted
 * mean over [first launch, last instant], the maximum, the time at or
 * above GT_GPUTIME_QUEUE_MAX.  A step of that merge: */
struct queue {
	int64_t t, start;
	int64_t q;
	double area;
	int any;
};

static inline void queue_step(struct queue *k, struct gt_gputime_stream *st, int64_t nt, int up)
{
	if (!k->any) {
		k->any = 1;
		k->t = k->start = nt;
	}
	k->area += (double)k->q * (double)(nt - k->t);
	if (k->q >= GT_GPUTIME_QUEUE_MAX)
		st->at_max_ns += nt - k->t;
	k->t = nt;
	k->q += up ? 1 : -1;
	if (k->q > st->queue_max)
		st->queue_max = k->q;
}

/* The merge without storing either sequence, as the stream is walked: its
 * work comes in start order, and when the launch starts come in order too
 * and none after its work's start (a stream runs its work in launch
 * order: the rule), every end not yet seen lies at or after the launch in
 * hand.  So the ends below it are taken from the pending ends (as many as
 * the queue is long) and the launch is stepped.  The pending ends are a
 * queue while they come in order (a stream's work ends in order), a
 * min-heap from the first that does not (a sorted array is one).  A
 * launch out of order leaves `bad` set: the caller merges stored copies. */
struct qwalk {
	struct queue k;
	int64_t *h;            /* pending ends: h[head..n) sorted, or a heap h[0..n) */
	size_t head, n, cap;
	int heap;
	int64_t last_up;
	int bad;
};

static int pend_push(struct qwalk *w, int64_t x)
{
	if (!w->heap && w->n > w->head && x < w->h[w->n - 1]) {
		memmove(w->h, w->h + w->head, (w->n - w->head) * sizeof(*w->h));
		w->n -= w->head;
		w->head = 0;
		w->heap = 1;           /* sorted: already a min-heap */
	}
	if (!w->heap && w->head && w->head * 2 >= w->n) {
		memmove(w->h, w->h + w->head, (w->n - w->head) * sizeof(*w->h));
		w->n -= w->head;
		w->head = 0;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		int64_t *p = realloc(w->h, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		w->h = p;
		w->cap = cap;
	}
	size_t i = w->n++;
	while (w->heap && i && w->h[(i - 1) / 2] > x) {
		w->h[i] = w->h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	w->h[i] = x;
	return 0;
}

static inline int pend_any(const struct qwalk *w)
{
	return w->n > w->head;
}

static inline int64_t pend_min(const struct qwalk *w)
{
	return w->h[w->head];
}

static int64_t pend_pop(struct qwalk *w)
{
	if (!w->heap) {
		int64_t top = w->h[w->head++];
		if (w->head == w->n)
			w->head = w->n = 0;
		return top;
	}
	int64_t top = w->h[0], x = w->h[--w->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= w->n)
			break;
		if (c + 1 < w->n && w->h[c + 1] < w->h[c])
			c++;
		if (w->h[c] >= x)
			break;
		w->h[i] = w->h[c];
		i = c;
	}
	if (w->n)
		w->h[i] = x;
	return top;
}

/* a piece of work launched at up, started at start, ended at down */
static int qwalk_add(struct qwalk *w, struct gt_gputime_stream *st, int64_t up, int64_t start,
		     int64_t down)
{
	if (w->bad)
		return 0;
	if ((w->k.any && up < w->last_up) || up > start) {
		w->bad = 1;
		return 0;
	}
	w->last_up = up;
	while (pend_any(w) && pend_min(w) < up)
		queue_step(&w->k, st, pend_pop(w), 0);
	queue_step(&w->k, st, up, 1);
	return pend_push(w, down);
}

static void qwalk_end(struct qwalk *w, struct gt_gputime_stream *st)
{
	while (pend_any(w))
		queue_step(&w->k, st, pend_pop(w), 0);
	st->queue_mean = w->k.any && w->k.t > w->k.start ? w->k.area / (double)(w->k.t - w->k.start) : 0;
}

/* the merge of stored, sorted copies: a stream whose launches came out of
 * order (16 bytes a piece of work on the heap) */
static int queue_stored(const struct gt_store *s, const struct gt_lane *l, int64_t t0, int64_t t1,
			struct analysis_corrmap *cm, struct gt_gputime_stream *st)
{
	struct i64v up = {0}, down = {0};
	struct queue k = {0};
	size_t first, last;
	int rc = 0;
	gt_store_lane_range(l, t0, t1, &first, &last);
	if (vinit(&up, last - first) || vinit(&down, last - first)) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = first; i < last; i++) {
		gt_store_read_walk(s, l, first, i, last);
		const struct gt_event *e = &l->ev[i];
		if (!gt_event_is_gpu(e) || e->start_ns >= t1 || gt_event_end(e) <= t0)
			continue;
		const struct analysis_launch *la = analysis_corrmap_get(cm, e->corr);
		if (la) {
			up.v[up.n++] = la->t0;
			down.v[down.n++] = gt_event_end(e);
		}
	}
	st->queue_max = 0;
	st->at_max_ns = 0;
	if (up.n) {
		analysis_sort_i64(up.v, up.n);
		analysis_sort_i64(down.v, down.n);
		k.any = 1;
		k.t = k.start = up.v[0];
		for (size_t i = 0, j = 0; i < up.n || j < down.n;) {
			int u = j >= down.n || (i < up.n && up.v[i] <= down.v[j]);
			queue_step(&k, st, u ? up.v[i++] : down.v[j++], u);
		}
	}
	st->queue_mean = k.any && k.t > k.start ? k.area / (double)(k.t - k.start) : 0;
out:
	vdone(&up);
	vdone(&down);
	return rc;
}

/* idle gaps and queue length of one stream in [t0, t1), and the launch
 * statistics of its kernels into g / lv (one walk, one launch lookup) */
static int stream_stats(const struct gt_store *s, const struct gt_lane *l, int64_t t0, int64_t t1,
			struct analysis_corrmap *cm, struct gt_gputime_stream *st,
			struct gt_gputime_gpu *g, struct launch_vec *lv)
{
	struct qwalk qw;
	size_t first, last;
	int rc = 0;
	memset(&qw, 0, sizeof(qw));
	gt_store_lane_range(l, t0, t1, &first, &last);
	int64_t prev_end = INT64_MIN;
	for (size_t i = first; i < last && !rc; i++) {
		gt_store_read_walk(s, l, first, i, last);
		const struct gt_event *e = &l->ev[i];
		if (!gt_event_is_gpu(e) || e->start_ns >= t1 || gt_event_end(e) <= t0)
			continue;
		const struct analysis_launch *la = analysis_corrmap_get(cm, e->corr);
		if (e->kind == GT_EV_KERNEL)
			kernel_stats(e, la, g, lv);
		if (prev_end != INT64_MIN && e->start_ns > prev_end) {
			int64_t gap = e->start_ns - prev_end;
			st->gaps++;
			if (la && la->t0 > prev_end)
				st->host_wait_ns += gap;
			else if (gap < GT_GPUTIME_KERNEL_WAIT_NS)
				st->kernel_wait_ns += gap;
			else
				st->other_ns += gap;
		}
		if (gt_event_end(e) > prev_end)
			prev_end = gt_event_end(e);
		if (la)
			rc = qwalk_add(&qw, st, la->t0, e->start_ns, gt_event_end(e));
	}
	if (!rc) {
		if (qw.bad)
			rc = queue_stored(s, l, t0, t1, cm, st);
		else
			qwalk_end(&qw, st);
	}
	free(qw.h);
	return rc;
}

/* the fine classes (analysis.h) of compute, communication and memory */
static const unsigned class_mask[K_N] = {
	ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMP), ANALYSIS_FC_BIT(ANALYSIS_FC_KCOMM),
	ANALYSIS_FC_MEMCPY | ANALYSIS_FC_BIT(ANALYSIS_FC_MEMSET)
};

/* a GPU's busy time over the scope, added up over the slabs of its rank */
struct dev_sums {
	int64_t first, last;          /* the first start, the last end of any work */
	int64_t all, compute, comm, overlap;
};

/* add the pass's share (one slab) of device index di to *d */
static int dev_add(const struct analysis_pass *pass, long di, struct dev_sums *d)
{
	struct interval_list all = {0}, cl[K_N], ov = {0}, tmp = {0};
	const struct interval_list *cp[K_N] = { &cl[0], &cl[1], &cl[2] };
	int rc = 0;
	memset(cl, 0, sizeof(cl));
	for (int k = 0; k < K_N && !rc; k++)
		if (!(cp[k] = analysis_pass_get(pass, class_mask[k], 0, di, &cl[k])))
			rc = -ENOMEM;
	if (rc || interval_union(cp[K_COMPUTE], cp[K_COMM], &tmp) ||
	    interval_union(&tmp, cp[K_MEM], &all) || interval_intersect(cp[K_COMPUTE], cp[K_COMM], &ov)) {
		rc = -ENOMEM;
		goto out;
	}
	if (all.n) {
		d->first = all.v[0].a < d->first ? all.v[0].a : d->first;
		d->last = all.v[all.n - 1].b > d->last ? all.v[all.n - 1].b : d->last;
	}
	d->all += interval_len(&all);
	d->compute += interval_len(cp[K_COMPUTE]);
	d->comm += interval_len(cp[K_COMM]);
	d->overlap += interval_len(&ov);
out:
	interval_done(&all);
	interval_done(&tmp);
	for (int k = 0; k < K_N; k++)
		interval_done(&cl[k]);
	interval_done(&ov);
	return rc;
}

static int one_gpu(const struct gt_store *s, int32_t rank, int32_t dev, const struct gt_scope *sc,
		   struct analysis_corrmap *cm, const struct dev_sums *d,
		   struct gt_gputime_result *out)
{
	uint32_t *gl = NULL;
	struct launch_vec lv;
	int rc = 0;
	memset(&lv, 0, sizeof(lv));
	if (d->first >= d->last)
		return 0;     /* a GPU with no work in the scope: no row */
	long ng = analysis_lanes(s, rank, GT_LANE_GPU, dev, &gl);
	int64_t t0 = sc ? sc->t0_ns : INT64_MIN, t1 = sc ? sc->t1_ns : INT64_MAX;
	if (ng < 0)
		return -ENOMEM;
	struct gt_gputime_gpu *g = &out->gpus[out->ngpus++];
	memset(g, 0, sizeof(*g));
	g->rank = rank;
	g->device = dev;
	g->span_ns = d->last - d->first;
	g->idle_ns = g->span_ns - d->all;
	g->compute_ns = d->compute;
	g->noncompute_ns = g->span_ns - g->compute_ns - g->idle_ns;
	g->comm_ns = d->comm;
	g->comm_overlap_ns = d->overlap;
	size_t cap = 0;
	for (long k = 0; k < ng; k++) {
		size_t first, last;
		if (!is_stream(gt_store_lane_at(s, gl[k])))
			continue;
		gt_store_lane_range(gt_store_lane_at(s, gl[k]), t0, t1, &first, &last);
		cap += last - first;
	}
	if (lv_init(&lv, s, cap)) {
		rc = -ENOMEM;
		goto out;
	}
	for (long k = 0; k < ng; k++) {
		const struct gt_lane *l = gt_store_lane_at(s, gl[k]);
		if (!is_stream(l))
			continue;
		struct gt_gputime_stream *st = &out->streams[out->nstreams];
		memset(st, 0, sizeof(*st));
		st->rank = rank;
		st->device = dev;
		st->stream = l->key.id;
		if ((rc = stream_stats(s, l, t0, t1, cm, st, g, &lv)))
			goto out;
		out->nstreams++;
	}
	g->gpu_dur_med_ns = lv_median(&lv, &lv.gpu);
	g->cpu_launch_med_ns = lv_median(&lv, &lv.cpu);
	g->delay_med_ns = lv_median(&lv, &lv.dly);
out:
	lv_done(&lv);
	free(gl);
	return rc;
}

/* the per-device sums of a rank over the scope and the correlation ids of
 * its GPU work: from the caller's pass when it is the scope's, else from
 * own passes (one per slab under a budget); *devs, *sums malloc'ed */
static long rank_sums(const struct gt_store *s, int32_t rank, const struct gt_scope *sc,
		      const struct analysis_pass *pass, struct analysis_names *nm, int32_t **devs,
		      struct dev_sums **sums, uint32_t *corr_lo, uint32_t *corr_hi, size_t *corr_n)
{
	struct analysis_pass own = {0};
	int64_t *cuts = NULL;
	long ns = 1, nd = 0;
	int shared = pass && pass->rank == rank && pass->gpu == sc->gpu && pass->t0 == sc->t0_ns &&
		     pass->t1 == sc->t1_ns;      /* the span needs the scope's clip exactly */
	uint32_t *gl = NULL;
	*devs = NULL;
	*sums = NULL;
	*corr_lo = UINT32_MAX;
	*corr_hi = 0;
	*corr_n = 0;
	if (!shared && (ns = analysis_slabs(s, rank, sc->gpu, 0, sc->t0_ns, sc->t1_ns, &cuts)) < 0)
		return -ENOMEM;
	/* the rank's devices, as a pass lists them (one over the whole scope
	 * is not built, so list them here) */
	long ng = analysis_lanes(s, rank, GT_LANE_GPU, sc->gpu, &gl);
	if (ng < 0 || (nd = analysis_lane_devices(s, gl, (size_t)ng, devs)) < 0 ||
	    !(*sums = calloc((size_t)nd + 1, sizeof(**sums))))
		goto nomem;
	for (long j = 0; j < nd; j++) {
		(*sums)[j].first = INT64_MAX;
		(*sums)[j].last = INT64_MIN;
	}
	for (long k = 0; k < ns; k++) {
		const struct analysis_pass *p = pass;
		if (!shared) {
			if (analysis_pass_build(s, rank, sc->gpu, cuts[k], cuts[k + 1], 0, nm, &own))
				goto nomem;
			p = &own;
		}
		if (p->corr_n) {
			*corr_lo = p->corr_lo < *corr_lo ? p->corr_lo : *corr_lo;
			*corr_hi = p->corr_hi > *corr_hi ? p->corr_hi : *corr_hi;
			*corr_n += p->corr_n;
		}
		for (long j = 0; j < nd; j++) {
			long di = analysis_pass_dev_index(p, (*devs)[j]);
			if (di >= 0 && dev_add(p, di, &(*sums)[j]))
				goto nomem;
		}
		analysis_pass_done(&own);
	}
	free(cuts);
	free(gl);
	return nd;
nomem:
	analysis_pass_done(&own);
	free(cuts);
	free(gl);
	free(*devs);
	free(*sums);
	*devs = NULL;
	*sums = NULL;
	return -ENOMEM;
}

int gt_gputime_compute(const struct gt_store *s, const struct gt_scope *sc,
		    struct gt_gputime_result *out, char *err, size_t errlen)
{
	return gputime_compute_pass(s, sc, out, NULL, err, errlen);
}

int gputime_compute_pass(const struct gt_store *s, const struct gt_scope *sc,
			 struct gt_gputime_result *out, const struct analysis_pass *pass,
			 char *err, size_t errlen)
{
	struct gt_scope all;
	int32_t *ranks = NULL;
	struct analysis_names nm = {0};
	int rc = 0;
	memset(out, 0, sizeof(*out));
	if (!sc) {
		gt_scope_all(&all);
		sc = &all;
	}
	size_t nl = gt_store_lane_count(s);
	long nr = analysis_scope_ranks(s, sc, &ranks);
	out->gpus = calloc(nl ? nl : 1, sizeof(*out->gpus));
	out->streams = calloc(nl ? nl : 1, sizeof(*out->streams));
	if (nr < 0 || !out->gpus || !out->streams || analysis_names_init(&nm, s))
		goto nomem;
	for (long r = 0; r < nr; r++) {
		uint32_t *hl = NULL, lo, hi;
		int32_t *devs = NULL;
		struct dev_sums *sums = NULL;
		struct analysis_corrmap cm;
		size_t hint;
		long nd = rank_sums(s, ranks[r], sc, pass, &nm, &devs, &sums, &lo, &hi, &hint);
		long nh = analysis_lanes(s, ranks[r], GT_LANE_HOST, -1, &hl);
		/* correlation ids of the GPU work in scope, read by the passes */
		if (nd < 0 || nh < 0 || analysis_corrmap_build_scope(s, hl, (size_t)nh, lo, hi, hint,
								      sc->t1_ns, &cm)) {
			free(devs);
			free(sums);
			free(hl);
			goto nomem;
		}
		for (long k = 0; k < nd && !rc; k++)
			rc = one_gpu(s, ranks[r], devs[k], sc, &cm, &sums[k], out);
		free(devs);
		free(sums);
		free(hl);
		analysis_corrmap_done(&cm);
		if (rc)
			goto nomem;
	}
	goto done;
nomem:
	rc = -ENOMEM;
	if (err && errlen)
		snprintf(err, errlen, "gputime: out of memory");
	gt_gputime_result_done(out);
done:
	free(ranks);
	analysis_names_done(&nm);
	return rc;
}
