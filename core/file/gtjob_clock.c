/*
 * gtjob_clock.c - clocks of a multi-node job (include/gtrace/gtjob.h):
 * what a recording says of its host's clock (gt_job_stamp), the residual
 * offset between nodes estimated from NCCL collectives (gt_job_align), its
 * application on request (gt_job_apply) and its report (status line,
 * metadata).
 *
 * The estimate: a collective ends within its own duration on every rank
 * that takes part.  For the lowest rank of each node, the newest NCCL
 * kernels (at most 4096 per GPU lane, among its last 262,144 events) are
 * listed by end.  Up to GTJOB_ALIGN_SAMPLES of a node's collectives are
 * paired with every collective of the same name on the reference node
 * (the first node that has any) whose end lies within GTJOB_ALIGN_MAX_NS;
 * each pair votes for its end difference.  A window of width "median
 * collective duration" is scored by the node's samples voting in it over
 * those that could have met a partner at that offset (their end, moved
 * back by it, within the reference's first and last collective): a
 * periodic job also votes for the offset plus or minus its period, and
 * when the nodes' captures began apart (a node started later, its first
 * collectives missed) one of those wrong offsets pairs more collectives
 * than the true one, though not a larger share of those that overlap
 * (cli_multinode read a planted 3 ms as -117 ms so; test
 * gtjob/periodic_collectives_of_captures_begun_apart).  Among the windows
 * with at least a quarter of the most samples voting (and
 * GTJOB_ALIGN_MIN_MATCHES) and within 90 % of the best share, the one
 * nearest 0 is taken (with half, a node begun 1.4 s late, 11 collectives
 * overlapping, lost to the shift by 12 periods that paired 23), its offset the median of its votes.
 * So the residual must be smaller than half the time between two
 * collectives of one name, and at most GTJOB_ALIGN_MAX_NS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <unistd.h>
#include "gtjob_priv.h"

#define GTJOB_ALIGN_SAMPLES 256
#define GTJOB_ALIGN_MAX_NS 250000000LL
#define GTJOB_ALIGN_MIN_MATCHES 3
/* collectives taken from the end of each GPU lane, events looked at */
#define GTJOB_ALIGN_PER_LANE 4096
#define GTJOB_ALIGN_WALK 262144

struct coll {
	int64_t end_ns, dur_ns;
	uint32_t name;
};

static int by_end(const void *a, const void *b)
{
	const struct coll *x = a, *y = b;
	return x->end_ns < y->end_ns ? -1 : x->end_ns > y->end_ns;
}

static int by_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* the NCCL kernels of the node's lowest rank, sorted by end (malloc'ed,
 * count in *n; NULL with *n = 0 when none or out of memory) */
static struct coll *collectives(const struct gt_store *s, const struct gt_job_node *nd, size_t *n)
{
	*n = 0;
	if (!nd->n_ranks)
		return NULL;
	int32_t rk = nd->rk_to[0];
	for (int i = 1; i < nd->n_ranks; i++)
		rk = nd->rk_to[i] < rk ? nd->rk_to[i] : rk;
	/* the newest events of each lane only: a live view re-estimates every
	 * second, so the cost is bounded whatever the capture's length */
	size_t cap = 0;
	for (size_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)li);
		if (l->key.type == GT_LANE_GPU && l->key.rank == rk)
			cap += GTJOB_ALIGN_PER_LANE;
	}
	struct coll *c = cap ? malloc(cap * sizeof(*c)) : NULL;
	if (!c)
		return NULL;
	for (size_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)li);
		if (l->key.type != GT_LANE_GPU || l->key.rank != rk)
			continue;
		size_t took = 0;
		for (size_t k = l->n, walked = 0; k-- > 0 && took < GTJOB_ALIGN_PER_LANE &&
		     walked < GTJOB_ALIGN_WALK; walked++) {
			const struct gt_event *e = &l->ev[k];
			if (e->kind == GT_EV_KERNEL && (e->flags & GT_EVF_NCCL)) {
				c[(*n)++] = (struct coll){ gt_event_end(e), e->dur_ns, e->name };
				took++;
			}
		}
	}
	if (!*n) {
		free(c);
		return NULL;
	}
	qsort(c, *n, sizeof(*c), by_end);
	return c;
}

/* first index of c[0..n) whose end is >= t */
static size_t lower(const struct coll *c, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c[mid].end_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* first index of the sorted e[0..n) above t (or at it when `at` is 1) */
static size_t past(const int64_t *e, size_t n, int64_t t, int at)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e[mid] < t || (!at && e[mid] == t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* how many of the sorted ends e[0..n) could meet a partner of a[0..na)
 * at offset c: those within the reference's span moved by c (+- w) */
static size_t overlap(const int64_t *e, size_t n, const struct coll *a, size_t na, int64_t c,
		      int64_t w)
{
	size_t i = past(e, n, a[0].end_ns + c - w, 1), k = past(e, n, a[na - 1].end_ns + c + w, 0);
	return k > i ? k - i : 0;
}

struct vote {
	int64_t d;      /* b's end - a's end */
	uint32_t bi;    /* which sample of b */
};

static int by_d(const void *x, const void *y)
{
	const struct vote *p = x, *q = y;
	return p->d < q->d ? -1 : p->d > q->d;
}

/* slide a window of width w over the sorted votes: [*i, *hi) after moving
 * *i to i and *hi as far as it goes; seen[] counts each sample's votes
 * inside, *distinct the samples with any */
static void slide(const struct vote *v, size_t nd, size_t i, int64_t w, size_t *lo, size_t *hi,
		  uint32_t *seen, size_t *distinct)
{
	for (; *lo < i; (*lo)++)
		*distinct -= --seen[v[*lo].bi] == 0;
	for (; *hi < nd && v[*hi].d <= v[i].d + w; (*hi)++)
		*distinct += seen[v[*hi].bi]++ == 0;
}

/* estimate node b against the reference a; 0 or -ENOMEM (no estimate
 * leaves have_residual 0) */
static int estimate(struct gt_job_node *nb, const struct coll *a, size_t na, const struct coll *b,
		    size_t nbc)
{
	size_t step = nbc > GTJOB_ALIGN_SAMPLES ? nbc / GTJOB_ALIGN_SAMPLES : 1;
	size_t cap = 1024, nd = 0, ndur = 0;
	struct vote *d = malloc(cap * sizeof(*d));
	int64_t durs[GTJOB_ALIGN_SAMPLES + 1], ends[GTJOB_ALIGN_SAMPLES + 1];
	uint32_t seen[GTJOB_ALIGN_SAMPLES + 1];
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < nbc && ndur <= GTJOB_ALIGN_SAMPLES - 1; i += step) {
		ends[ndur] = b[i].end_ns;   /* sorted: b is */
		durs[ndur] = b[i].dur_ns;
		for (size_t k = lower(a, na, b[i].end_ns - GTJOB_ALIGN_MAX_NS);
		     k < na && a[k].end_ns <= b[i].end_ns + GTJOB_ALIGN_MAX_NS; k++) {
			if (a[k].name != b[i].name)
				continue;
			if (nd == cap) {
				struct vote *p = realloc(d, 2 * cap * sizeof(*d));
				if (!p) {
					free(d);
					return -ENOMEM;
				}
				d = p;
				cap *= 2;
			}
			d[nd++] = (struct vote){ b[i].end_ns - a[k].end_ns, (uint32_t)ndur };
		}
		ndur++;
	}
	size_t nends = ndur;
	qsort(durs, ndur, sizeof(*durs), by_i64);
	int64_t w = ndur ? durs[ndur / 2] : 0;
	w = w < 1000 ? 1000 : w;
	qsort(d, nd, sizeof(*d), by_d);
	/* windows [d[i], d[i] + w]: the most samples voting in one (pass 0),
	 * the best share of those that could among windows with at least a quarter
	 * that many (pass 1), the pick (pass 2) */
	size_t best = 0, pick = SIZE_MAX, pick_n = 0;
	double best_share = 0;
	int64_t pick_c = 0;
	for (int pass = 0; pass < 3; pass++) {
		size_t lo = 0, hi = 0, distinct = 0;
		memset(seen, 0, sizeof(seen));
		for (size_t i = 0; i < nd; i++) {
			slide(d, nd, i, w, &lo, &hi, seen, &distinct);
			if (pass == 0) {
				best = distinct > best ? distinct : best;
				continue;
			}
			if (distinct * 4 < best || distinct < GTJOB_ALIGN_MIN_MATCHES)
				continue;
			int64_t c = d[i].d + (d[hi - 1].d - d[i].d) / 2;
			size_t could = overlap(ends, nends, a, na, c, w);
			double share = (double)distinct / (double)(could > distinct ? could : distinct);
			if (pass == 1) {
				best_share = share > best_share ? share : best_share;
			} else if (share >= 0.9 * best_share &&
				   (pick == SIZE_MAX || llabs(c) < llabs(pick_c))) {
				pick = i;
				pick_n = hi - i;
				pick_c = c;
			}
		}
	}
	nb->have_residual = 0;
	if (pick != SIZE_MAX && pick_n >= GTJOB_ALIGN_MIN_MATCHES) {
		int64_t med = d[pick + pick_n / 2].d, *dev = malloc(pick_n * sizeof(*dev));
		if (!dev) {
			free(d);
			return -ENOMEM;
		}
		for (size_t i = 0; i < pick_n; i++)
			dev[i] = llabs(d[pick + i].d - med);
		qsort(dev, pick_n, sizeof(*dev), by_i64);
		nb->residual_ns = med;
		nb->spread_ns = dev[pick_n / 2];
		nb->coll_dur_ns = w;
		nb->matches = (uint32_t)pick_n;
		nb->have_residual = 1;
		free(dev);
	}
	free(d);
	return 0;
}

int gt_job_align(struct gt_job *j)
{
	size_t na = 0;
	struct coll *a = NULL;
	struct gt_job_node *ref = NULL;
	int got = 0;
	for (size_t i = 0; i < j->n; i++) {
		struct gt_job_node *nd = j->node[i];
		nd->reference = 0;
		if (!ref) {
			a = collectives(j->s, nd, &na);
			if (a) {
				ref = nd;
				nd->reference = 1;
			}
			continue;
		}
		size_t nbc;
		struct coll *b = collectives(j->s, nd, &nbc);
		if (b && estimate(nd, a, na, b, nbc) == 0 && nd->have_residual) {
			/* estimated on events already shifted by applied_ns */
			nd->residual_ns -= nd->applied_ns;
			got++;
		}
		free(b);
	}
	free(a);
	return got;
}

int gt_job_apply(struct gt_job *j)
{
	int moved = 0;
	j->applied = 1;
	for (size_t i = 0; i < j->n; i++) {
		struct gt_job_node *nd = j->node[i];
		if (!nd->have_residual || nd->applied_ns == -nd->residual_ns)
			continue;
		int64_t delta = -nd->residual_ns - nd->applied_ns;
		nd->applied_ns = -nd->residual_ns;
		for (int r = 0; r < nd->n_ranks; r++)
			if (gt_store_shift_rank(j->s, nd->rk_to[r], delta))
				return -ENOMEM;
		moved++;
	}
	return moved;
}

void gt_job_clock_line(const struct gt_job *j, char *buf, size_t len)
{
	buf[0] = 0;
	const char *ref = NULL;
	for (size_t i = 0; i < j->n; i++)
		if (j->node[i]->reference)
			ref = j->node[i]->host;
	size_t off = 0;
	for (size_t i = 0; i < j->n && off < len; i++) {
		const struct gt_job_node *nd = j->node[i];
		if (!nd->have_residual)
			continue;
		int w = snprintf(buf + off, len - off, "%s%s %+.3f ms vs %s (%u collectives, "
				 "+-%.3f ms; %s)", off ? ", " : "clock: ", nd->host,
				 (double)nd->residual_ns / 1e6, ref ? ref : "?", nd->matches,
				 (double)nd->spread_ns / 1e6, nd->applied_ns ? "applied" : "not applied");
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

static void meta_i64(struct gt_store *s, const char *key, int64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%lld", (long long)v);
	gt_store_meta_set(s, key, b);
}

void gt_job_meta(struct gt_job *j)
{
	static const char *const st[] = { "receiving", "complete", "cut off", "bad stream" };
	char key[64], v[512];
	meta_i64(j->s, "job.nodes", (int64_t)j->n);
	for (size_t i = 0; i < j->n; i++) {
		struct gt_job_node_info in;
		gt_job_node(j, (int)i, &in);
		snprintf(key, sizeof(key), "node.%zu.host", i);
		gt_store_meta_set(j->s, key, in.host);
		snprintf(key, sizeof(key), "node.%zu.source", i);
		gt_store_meta_set(j->s, key, in.label);
		snprintf(key, sizeof(key), "node.%zu.state", i);
		snprintf(v, sizeof(v), "%s%s%s", st[in.state], in.msg[0] ? ": " : "", in.msg);
		gt_store_meta_set(j->s, key, v);
		snprintf(key, sizeof(key), "node.%zu.events", i);
		meta_i64(j->s, key, (int64_t)in.events);
		snprintf(key, sizeof(key), "node.%zu.clock", i);
		if (in.clock_synced < 0)
			snprintf(v, sizeof(v), "not reported");
		else
			snprintf(v, sizeof(v), "%s, maxerror %lld us, esterror %lld us",
				 in.clock_synced ? "synchronized" : "not synchronized",
				 (long long)in.clock_maxerror_us, (long long)in.clock_esterror_us);
		gt_store_meta_set(j->s, key, v);
		if (in.have_residual) {
			snprintf(key, sizeof(key), "node.%zu.clock_residual_ns", i);
			meta_i64(j->s, key, in.residual_ns);
			snprintf(key, sizeof(key), "node.%zu.clock_applied_ns", i);
			meta_i64(j->s, key, in.applied_ns);
		}
	}
	gt_job_clock_line(j, v, sizeof(v));
	gt_store_meta_set(j->s, "clock.residual", v[0] ? v : "no estimate (no NCCL collectives "
		       "matched between nodes)");
	gt_store_meta_set(j->s, "clock.applied", j->applied ? "yes" : "no");
}

void gt_job_hostname(char *buf, size_t len)
{
	const char *h = getenv("GTRACE_HOSTNAME");
	if (h && *h) {
		snprintf(buf, len, "%s", h);
		return;
	}
	if (gethostname(buf, len) != 0 || !buf[0])
		snprintf(buf, len, "localhost");
	buf[len - 1] = 0;
}

int gt_job_stamp(struct gt_store *s)
{
	char host[256], v[64];
	gt_job_hostname(host, sizeof(host));
	int rc = gt_store_meta_set(s, "node.host", host);
	struct timex tx;
	memset(&tx, 0, sizeof(tx));
	int state = adjtimex(&tx);   /* modes 0: read only */
	if (state < 0)
		return rc;
	int synced = state != TIME_ERROR && !(tx.status & STA_UNSYNC);
	snprintf(v, sizeof(v), "%d", synced);
	rc |= gt_store_meta_set(s, "node.clock.synced", v);
	snprintf(v, sizeof(v), "%ld", (long)tx.maxerror);
	rc |= gt_store_meta_set(s, "node.clock.maxerror_us", v);
	snprintf(v, sizeof(v), "%ld", (long)tx.esterror);
	rc |= gt_store_meta_set(s, "node.clock.esterror_us", v);
	return rc ? -ENOMEM : 0;
}
