/*
 * test_mem_lane.c - the allocated-bytes counter lanes (gtrace/mem_lane.h)
 * on planted allocator records delivered in shuffled batches, as CUPTI
 * hands MEMORY2 records over in buffer order: after every sync each lane
 * must equal the running sum of the records delivered so far, recomputed
 * here from the planted list by a plain sort (an independent count), its
 * highest sample the memory-usage report's peak; a .gtrace round trip
 * builds the same lanes from the records (and never twice).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "gtrace/mem_lane.h"
#include "gtrace/mem_usage.h"
#include "gtrace/store.h"

#define NREC 3000

struct rec {
	int64_t t, b;
	int rank, thread;
	uint32_t dev;
	int order;        /* delivery order */
};

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* planted: 2 ranks x 2 threads, GPU 0, GPU 1 and host; allocations of
 * 1-64 KiB, each later freed with probability 1/2; times in 10 ns steps
 * with repeats (equal times happen) */
static size_t plant(struct rec *r)
{
	size_t n = 0;
	while (n < NREC) {
		struct rec a = { .t = (int64_t)(next() % 20000) * 10 + 1000, .b = (int64_t)(1 + next() % 64) * 1024,
				 .rank = (int)(next() % 2), .thread = (int)(next() % 2) };
		uint64_t d = next() % 3;
		a.dev = d == 2 ? GT_MEM_HOST : (uint32_t)d;
		r[n++] = a;
		if (n < NREC && next() % 2) {
			struct rec f = a;
			f.t = a.t + (int64_t)(1 + next() % 5000) * 10;
			f.b = -a.b;
			r[n++] = f;
		}
	}
	return n;
}

/* the delivery of r[0..n) into d, as CUPTI hands buffers over: shuffled
 * in blocks of 64 (buffers), each block reversed with probability 1/2,
 * blocks in random order; each record's order set; returns n */
static size_t deliver(const struct rec *r, size_t n, struct rec *d)
{
	size_t nb = (n + 63) / 64, *perm = malloc(nb * sizeof(*perm)), nd = 0;
	cr_assert_not_null(perm);
	for (size_t i = 0; i < nb; i++)
		perm[i] = i;
	for (size_t i = nb; i > 1; i--) {
		size_t j = next() % i, t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	for (size_t b = 0; b < nb; b++) {
		size_t a = perm[b] * 64, e = a + 64 < n ? a + 64 : n;
		int rev = next() % 2;
		for (size_t i = a; i < e; i++)
			d[nd++] = r[rev ? e - 1 - (i - a) : i];
	}
	free(perm);
	for (size_t i = 0; i < nd; i++)
		d[i].order = (int)i;
	return nd;
}

static uint32_t host_lane(struct gt_store *s, int rank, int thread)
{
	struct gt_lane_key k = { .type = GT_LANE_HOST, .rank = rank, .device = -1, .pid = 100 + rank,
				 .id = thread ? 200 + rank : 100 + rank };
	return gt_store_lane(s, &k);
}

static void add_rec(struct gt_store *s, const struct rec *r, uint32_t name, struct gt_event *out)
{
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.kind = GT_EV_INSTANT;
	e.flags = GT_EVF_MEMORY;
	e.start_ns = r->t;
	e.aux = r->dev;
	e.name = name;
	memcpy(&e.arg, &r->b, sizeof(r->b));
	e.lane = host_lane(s, r->rank, r->thread);
	cr_assert_eq(gt_store_add(s, &e), 0);
	*out = e;
}

/* the next batch of 1-200 delivered records from d[i]: added, noted,
 * the store finished and synced; returns the records delivered by then */
static size_t sync_batch(struct gt_store *s, struct gt_mem_lane *m, const struct rec *d, size_t i,
			 size_t nd, uint32_t name)
{
	struct gt_event batch[200];
	size_t k = 1 + next() % 200;
	if (k > nd - i)
		k = nd - i;
	for (size_t j = 0; j < k; j++)
		add_rec(s, &d[i + j], name, &batch[j]);
	cr_assert_eq(gt_mem_lane_note(m, batch, k), 0);
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(gt_mem_lane_sync(m, s), 0);
	return i + k;
}

/* truth order: time, then delivery order (the store's stable sort keeps
 * a lane's equal-time events in arrival order; the lane's samples the
 * order they were noted) */
static int by_t_order(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->order - b->order;
}

static const struct gt_lane *lane_of(const struct gt_store *s, int rank, uint32_t dev)
{
	char nm[64];
	if (dev == GT_MEM_HOST)
		snprintf(nm, sizeof(nm), "Driver allocated (CPU)");
	else
		snprintf(nm, sizeof(nm), "Driver allocated (GPU %u)", dev);
	const struct gt_lane *found = NULL;
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		if (l->key.type != GT_LANE_COUNTER || l->key.rank != rank || !l->name ||
		    strcmp(gt_store_str(s, l->name), nm))
			continue;
		cr_assert_null(found, "two lanes %s of rank %d", nm, rank);
		found = l;
	}
	return found;
}

/* every lane against the running sums of d[0..n) (delivered so far) */
static void check(const struct gt_store *s, const struct rec *d, size_t n, const char *when)
{
	struct rec *v = malloc((n ? n : 1) * sizeof(*v));
	for (int rank = 0; rank < 2; rank++)
		for (int k = 0; k < 3; k++) {
			uint32_t dev = k == 2 ? GT_MEM_HOST : (uint32_t)k;
			size_t m = 0;
			for (size_t i = 0; i < n; i++)
				if (d[i].rank == rank && d[i].dev == dev)
					v[m++] = d[i];
			qsort(v, m, sizeof(*v), by_t_order);
			const struct gt_lane *l = lane_of(s, rank, dev);
			if (!m) {
				cr_assert(!l || !l->n);
				continue;
			}
			cr_assert_not_null(l, "%s: no lane of rank %d device %u", when, rank, dev);
			cr_assert_eq(l->n, m, "%s: rank %d device %u: %zu samples, %zu records", when,
				     rank, dev, l->n, m);
			int64_t sum = 0;
			for (size_t i = 0; i < m; i++) {
				sum += v[i].b;
				double x;
				memcpy(&x, &l->ev[i].arg, sizeof(x));
				cr_assert_eq(l->ev[i].start_ns, v[i].t, "%s: sample %zu time", when, i);
				cr_assert_eq((int64_t)x, sum, "%s: rank %d device %u sample %zu: %lld, truth %lld",
					     when, rank, dev, i, (long long)x, (long long)sum);
				cr_assert_eq(l->ev[i].sub, GT_MEM_LANE_SUB);
				cr_assert(l->ev[i].flags & GT_EVF_MEMORY);
			}
		}
	free(v);
}

Test(mem_lane, shuffled_batches_stay_exact)
{
	static struct rec r[NREC];
	size_t n = plant(r);
	static struct rec d[NREC];
	size_t nd = deliver(r, n, d);
	struct gt_store *s = gt_store_new();
	uint32_t name = gt_store_intern_cstr(s, "[memory]");
	cr_assert_eq(gt_store_meta_set(s, GT_MEM_LANE_META, "records"), 0);
	struct gt_mem_lane *m = gt_mem_lane_new();
	size_t i = 0, syncs = 0;
	while (i < nd) {
		i = sync_batch(s, m, d, i, nd, name);
		char when[64];
		snprintf(when, sizeof(when), "after sync %zu (%zu records)", ++syncs, i);
		check(s, d, i, when);
	}
	struct gt_mem_lane_stats st;
	gt_mem_lane_stats(m, &st);
	cr_assert_eq(st.records, nd);
	cr_assert_gt(st.late, nd / 10, "only %llu late records: the delivery was not shuffled",
		     (unsigned long long)st.late);
	cr_assert_gt(st.rewritten, 0);

	/* the lane's highest sample (first) is the report's Peak Allocated */
	struct gt_scope sc;
	gt_scope_all(&sc);
	struct gt_mem_usage_result mu;
	char err[256];
	cr_assert_eq(gt_mem_usage_compute(s, &sc, &mu, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(mu.n, 6);
	for (size_t k = 0; k < mu.n; k++) {
		const struct gt_lane *l = lane_of(s, mu.dev[k].rank, mu.dev[k].device);
		double hi = 0;
		int64_t at = 0;
		for (size_t j = 0; j < l->n; j++) {
			double x;
			memcpy(&x, &l->ev[j].arg, sizeof(x));
			if (!j || x > hi) {
				hi = x;
				at = l->ev[j].start_ns;
			}
		}
		cr_expect_eq((int64_t)hi, mu.dev[k].peak_bytes, "rank %d device %u", mu.dev[k].rank,
			     mu.dev[k].device);
		cr_expect_eq(at, mu.dev[k].peak_ns);
		/* not the allocator's totals: the report's Total columns stay n/a */
		cr_expect_eq(mu.dev[k].total_samples[0], 0);
	}
	gt_mem_usage_result_done(&mu);

	/* the records alone in a .gtrace (as the live capture file holds them):
	   reading it back builds the lanes; a file that has them (written from
	   this store) keeps them once */
	struct gt_store *ro = gt_store_new();
	uint32_t rname = gt_store_intern_cstr(ro, "[memory]");
	struct gt_event added;
	for (size_t j = 0; j < nd; j++)
		add_rec(ro, &d[j], rname, &added);
	cr_assert_eq(gt_store_meta_set(ro, GT_MEM_LANE_META, "records"), 0);
	cr_assert_eq(gt_store_finish(ro), 0);
	for (int pass = 0; pass < 2; pass++) {
		char path[64];
		snprintf(path, sizeof(path), "mem_lane_%d_%d.gtrace", (int)getpid(), pass);
		cr_assert_eq(gt_file_write_store(pass ? s : ro, path, err, sizeof(err)), 0, "%s", err);
		struct gt_store *b = gt_store_new();
		struct gt_file_info info;
		cr_assert_eq(gt_file_read(path, b, &info, err, sizeof(err)), 0, "%s", err);
		unlink(path);
		/* equal times of one device on two threads: the file's order is
		   lane then place, the live one delivery order; the values agree
		   after the last sample of each time */
		for (int rank = 0; rank < 2; rank++)
			for (int k = 0; k < 3; k++) {
				uint32_t dev = k == 2 ? GT_MEM_HOST : (uint32_t)k;
				const struct gt_lane *x = lane_of(s, rank, dev), *y = lane_of(b, rank, dev);
				cr_assert_not_null(y);
				cr_assert_eq(y->n, x->n, "file %d: rank %d device %u: %zu samples, live %zu",
					     pass, rank, dev, y->n, x->n);
				for (size_t j = 0; j < x->n; j++) {
					cr_assert_eq(y->ev[j].start_ns, x->ev[j].start_ns);
					if (j + 1 < x->n && x->ev[j + 1].start_ns == x->ev[j].start_ns)
						continue;
					cr_assert_eq(y->ev[j].arg, x->ev[j].arg,
						     "file %d: rank %d device %u sample %zu", pass, rank, dev, j);
				}
			}
		gt_store_free(b);
	}
	gt_store_free(ro);
	gt_mem_lane_free(m);
	gt_store_free(s);
}

/* a live store with --ring cuts the counter lanes too (gt_store_drop_before):
 * each keeps its last sample before the cut, moved to the cut, its value
 * from there on; records older than the cut that come after it add their
 * bytes to every sample kept but get none of their own.  The truth: the
 * running sums of every record delivered (an independent sort), at the
 * samples a cut keeps */
Test(mem_lane, ring_cut_keeps_the_value_at_the_cut)
{
	static struct rec r[NREC], d[NREC];
	size_t n = plant(r);
	size_t nd = deliver(r, n, d);
	const int64_t T = 100005;   /* no record falls on it (times end in 0) */
	struct gt_store *s = gt_store_new();
	uint32_t name = gt_store_intern_cstr(s, "[memory]");
	struct gt_mem_lane *m = gt_mem_lane_new();
	size_t i = 0, cut_at = 0;
	while (i < nd) {
		i = sync_batch(s, m, d, i, nd, name);
		if (!cut_at && i >= nd / 2) {
			cut_at = i;
			cr_assert_eq(gt_store_drop_before(s, T, 0, NULL), 0);
		}
	}
	int cut_lanes = 0, gone_late = 0;
	struct rec *v = malloc(nd * sizeof(*v));
	for (int rank = 0; rank < 2; rank++)
		for (int kd = 0; kd < 3; kd++) {
			uint32_t dev = kd == 2 ? GT_MEM_HOST : (uint32_t)kd;
			size_t mv = 0;
			for (size_t j = 0; j < nd; j++)
				if (d[j].rank == rank && d[j].dev == dev)
					v[mv++] = d[j];
			qsort(v, mv, sizeof(*v), by_t_order);
			/* the lane was cut when it had two samples before T (the
			   last one is kept, moved to T) */
			size_t before = 0;
			for (size_t j = 0; j < mv; j++)
				before += v[j].order < (int)cut_at && v[j].t < T;
			int cut = before >= 2;
			cut_lanes += cut;
			const struct gt_lane *l = lane_of(s, rank, dev);
			cr_assert_not_null(l);
			cr_assert_eq(l->dropped ? 1 : 0, cut, "rank %d device %u", rank, dev);
			int64_t sum = 0;
			size_t at = 0;
			for (size_t j = 0; j < mv; j++) {
				sum += v[j].b;
				gone_late += cut && v[j].order >= (int)cut_at && v[j].t < T;
				/* a cut lane: one sample at T, the sum of every record
				   before T (after the last of them), then those from T */
				int at_cut = cut && v[j].t < T;
				if (at_cut && j + 1 < mv && v[j + 1].t < T)
					continue;
				cr_assert_lt(at, l->n, "rank %d device %u: %zu samples", rank, dev, l->n);
				double x;
				memcpy(&x, &l->ev[at].arg, sizeof(x));
				cr_assert_eq(l->ev[at].start_ns, at_cut ? T : v[j].t,
					     "rank %d device %u sample %zu time", rank, dev, at);
				cr_assert_eq((int64_t)x, sum, "rank %d device %u sample %zu: %lld, truth %lld",
					     rank, dev, at, (long long)x, (long long)sum);
				at++;
			}
			cr_assert_eq(at, l->n, "rank %d device %u: %zu samples, %zu kept by the truth",
				     rank, dev, l->n, at);
		}
	/* the scenario reached both cases it is about */
	cr_assert_eq(cut_lanes, 6);
	cr_assert_gt(gone_late, 0, "no late record after the cut older than it");
	free(v);
	gt_mem_lane_free(m);
	gt_store_free(s);
}

Test(mem_lane, build_without_records_or_marker_adds_nothing)
{
	struct gt_store *s = gt_store_new();
	struct gt_lane_key k = { .type = GT_LANE_HOST, .rank = 0, .device = -1, .pid = 1, .id = 1 };
	uint32_t lane = gt_store_lane(s, &k);
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.kind = GT_EV_INSTANT;
	e.start_ns = 10;
	e.lane = lane;
	e.name = gt_store_intern_cstr(s, "mark");
	cr_assert_eq(gt_store_add(s, &e), 0);
	cr_assert_eq(gt_store_finish(s), 0);
	cr_assert_eq(gt_mem_lane_build(s), 0);
	cr_assert_eq(gt_store_lane_count(s), 1);
	gt_store_free(s);
}
