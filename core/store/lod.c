/*
 * lod.c - per-lane index and the range, zoom and lookup queries.
 *
 * Events of a lane are sorted by (start asc, duration desc) so that a parent
 * range precedes the ranges nested in it.  Per block of GT_LOD_BLOCK events:
 *   blk_maxend[b]  running maximum of event end up to the block's last event
 *                  (monotone, so "which events can still be running at t" is
 *                  a binary search);
 *   blk_busy[b]    union busy time of all events before the block.
 * Event i contributes [max(s_i, M_{i-1}), M_i) to the lane's union, where M
 * is the running max end; those pieces are disjoint and sorted, which gives
 * union busy time up to any t, U(t), in O(log n + GT_LOD_BLOCK).
 * A pyramid lvl_max[l] holds, per block of 16^(l+1) events, the index of the
 * longest event: the range argmax that picks a column's dominant event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "store_priv.h"

#define B GT_LOD_BLOCK

static int ev_before(const struct gt_event *a, const struct gt_event *b)
{
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns;
	return a->dur_ns > b->dur_ns;
}

/* natural bottom-up merge sort: O(n) on sorted input, stable */
static int sort_events(struct gt_store *s, const struct gt_lane *l, struct gt_event *ev, size_t n)
{
	size_t i = 1;
	while (i < n) {
		gt_store_read_walk(s, l, 0, i, n);
		if (ev_before(&ev[i], &ev[i - 1]))
			break;
		i++;
	}
	if (i >= n)
		return 0;
	struct gt_event *tmp = store_mem_realloc(s, NULL, n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	struct gt_event *src = ev, *dst = tmp;
	for (;;) {
		size_t runs = 0, pos = 0;
		while (pos < n) {
			size_t a = pos, am = pos + 1;
			while (am < n && !ev_before(&src[am], &src[am - 1]))
				am++;
			size_t b = am, bm = am < n ? am + 1 : am;
			while (bm < n && !ev_before(&src[bm], &src[bm - 1]))
				bm++;
			size_t o = a;
			while (a < am && b < bm) {
				if (ev_before(&src[b], &src[a]))
					dst[o++] = src[b++];
				else
					dst[o++] = src[a++];
			}
			while (a < am)
				dst[o++] = src[a++];
			while (b < bm)
				dst[o++] = src[b++];
			pos = bm;
			runs++;
		}
		struct gt_event *t = src;
		src = dst;
		dst = t;
		if (runs <= 1)
			break;
	}
	if (src != ev)
		memcpy(ev, src, n * sizeof(*ev));
	store_mem_free(s, tmp);
	return 0;
}

void lod_free(struct gt_store *s, struct gt_lane *l)
{
	store_mem_free(s, l->blk_start);
	store_mem_free(s, l->blk_maxend);
	store_mem_free(s, l->blk_busy);
	for (int k = 0; k < l->n_lvl; k++) {
		store_mem_free(s, l->lvl_max[k]);
		store_mem_free(s, l->lvl_dur[k]);
	}
	free(l->lvl_max);
	free(l->lvl_dur);
	free(l->lvl_n);
	free(l->top_start);
	free(l->top_maxend);
	free(l->top_open);
	l->top_start = l->top_maxend = NULL;
	l->top_open = NULL;
	l->n_top = l->cap_top = 0;
	l->n_open = l->cap_open = 0;
	l->blk_start = l->blk_maxend = l->blk_busy = NULL;
	l->lvl_max = NULL;
	l->lvl_dur = NULL;
	l->lvl_n = NULL;
	l->n_lvl = 0;
	l->n_indexed = 0;
	l->busy_total_ns = 0;
}

void lod_reset(struct gt_lane *l)
{
	for (int k = 0; k < l->n_lvl; k++)
		l->lvl_n[k] = 0;
	l->n_top = 0;
	l->n_open = 0;
	l->n_indexed = 0;
	l->busy_total_ns = 0;
}

static size_t lvl_elem(const struct gt_lane *l, int lvl, size_t k)
{
	return lvl < 0 ? k : l->lvl_max[lvl][k];
}

static int64_t lvl_dur(const struct gt_lane *l, int lvl, size_t k)
{
	return lvl < 0 ? l->ev[k].dur_ns : l->lvl_dur[lvl][k];
}

static void consider(const struct gt_lane *l, size_t e, size_t *best)
{
	if (*best == SIZE_MAX || l->ev[e].dur_ns > l->ev[*best].dur_ns)
		*best = e;
}

/* keep the longest of level entries; *best_dur caches the best's duration */
static void consider_lvl(const struct gt_lane *l, int lvl, size_t k, size_t *best, int64_t *best_dur)
{
	int64_t d = lvl_dur(l, lvl, k);
	if (*best == SIZE_MAX || d > *best_dur) {
		*best = lvl_elem(l, lvl, k);
		*best_dur = d;
	}
}

/* index of the longest event in [lo, hi), SIZE_MAX if empty */
static size_t range_argmax(const struct gt_lane *l, size_t lo, size_t hi)
{
	size_t best = SIZE_MAX;
	int64_t bd = 0;
	int lvl = -1;
	while (lo < hi) {
		if (lvl + 1 >= l->n_lvl) {
			for (size_t k = lo; k < hi; k++)
				consider_lvl(l, lvl, k, &best, &bd);
			break;
		}
		while (lo < hi && lo % B)
			consider_lvl(l, lvl, lo++, &best, &bd);
		while (lo < hi && hi % B)
			consider_lvl(l, lvl, --hi, &best, &bd);
		lo /= B;
		hi /= B;
		lvl++;
	}
	return best;
}

/* the coarse index from block b0 on (the blocks before are unchanged) */
static int top_build(struct gt_lane *l, size_t nb, size_t b0)
{
	size_t nt = (nb + GT_LOD_TOP - 1) / GT_LOD_TOP;
	if (nt > l->cap_top) {
		size_t cap = nt + nt / 2 + 4;
		int64_t *a = realloc(l->top_start, cap * sizeof(*a));
		if (!a)
			return -1;
		l->top_start = a;
		a = realloc(l->top_maxend, cap * sizeof(*a));
		if (!a)
			return -1;
		l->top_maxend = a;
		l->cap_top = cap;
	}
	for (size_t j = b0 / GT_LOD_TOP; j < nt; j++) {
		size_t e = (j + 1) * GT_LOD_TOP < nb ? (j + 1) * GT_LOD_TOP : nb;
		l->top_start[j] = l->blk_start[j * GT_LOD_TOP];
		l->top_maxend[j] = l->blk_maxend[e - 1];
	}
	l->n_top = nt;
	return lod_open_build(l);
}

/* first event index a search for "start >= t" may begin at: the first of
 * the last superblock whose first start is < t (every event before it
 * starts before t), 0 without a coarse index */
size_t lod_top_from_start(const struct gt_lane *l, int64_t t)
{
	size_t lo = 0, hi = l->n_top;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->top_start[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (lo - 1) * GT_LOD_TOP * B : 0;
}

/* first block a search for "running max end >= t" may begin at: the first
 * of the first superblock whose running max end is >= t (n_top x GT_LOD_TOP
 * when none) */
size_t lod_top_from_maxend(const struct gt_lane *l, int64_t t)
{
	size_t lo = 0, hi = l->n_top;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->top_maxend[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo * GT_LOD_TOP;
}

int lod_build(struct gt_store *s, struct gt_lane *l)
{
	size_t n = l->n;
	if (l->n_indexed == n && (n == 0 || l->blk_maxend))
		return 0;
	size_t from = l->n_indexed;
	if (from && (ev_before(&l->ev[from], &l->ev[from - 1])))
		from = 0;
	for (size_t i = from + 1; from && i < n; i++) {
		gt_store_read_walk(s, l, from + 1, i, n);
		if (ev_before(&l->ev[i], &l->ev[i - 1])) {
			from = 0;
			break;
		}
	}
	/* under a budget the passes below read the lane a run at a time
	 * (gt_store_read_walk), as readers do: RSS stays in the budget */
	if (from == 0) {
		int rc = sort_events(s, l, l->ev, n);
		if (rc)
			return rc;
		lod_reset(l);
	}
	size_t nb = (n + B - 1) / B;
	size_t b0 = from / B;
	int64_t *me = store_mem_realloc(s, l->blk_maxend, (nb ? nb : 1) * sizeof(*me));
	if (!me)
		return -ENOMEM;
	l->blk_maxend = me;
	int64_t *bb = store_mem_realloc(s, l->blk_busy, (nb ? nb : 1) * sizeof(*bb));
	if (!bb)
		return -ENOMEM;
	l->blk_busy = bb;
	int64_t *bs = store_mem_realloc(s, l->blk_start, (nb ? nb : 1) * sizeof(*bs));
	if (!bs)
		return -ENOMEM;
	l->blk_start = bs;
	for (size_t b = b0; b < nb; b++) {
		gt_store_read_walk(s, l, b0 * B, b * B, n);
		bs[b] = l->ev[b * B].start_ns;
	}

	int64_t M = b0 ? me[b0 - 1] : INT64_MIN;
	int64_t P = b0 == 0 ? 0 : (b0 * B < l->n_indexed ? bb[b0] : l->busy_total_ns);
	for (size_t b = b0; b < nb; b++) {
		gt_store_read_walk(s, l, b0 * B, b * B, n);
		bb[b] = P;
		size_t end = (b + 1) * B < n ? (b + 1) * B : n;
		for (size_t i = b * B; i < end; i++) {
			int64_t st = l->ev[i].start_ns, e = st + l->ev[i].dur_ns;
			if (e > M) {
				P += e - (st > M ? st : M);
				M = e;
			}
		}
		me[b] = M;
	}
	l->busy_total_ns = P;
	if (top_build(l, nb, b0))
		return -ENOMEM;

	/* pyramid of block argmax */
	size_t prev_n = n;
	int lvl = 0;
	size_t from_k = b0 * B;
	while (prev_n > 1) {
		size_t cn = (prev_n + B - 1) / B;
		if (lvl >= l->n_lvl) {
			uint32_t **nl = realloc(l->lvl_max, (size_t)(lvl + 1) * sizeof(*nl));
			if (!nl)
				return -ENOMEM;
			l->lvl_max = nl;
			int64_t **nd = realloc(l->lvl_dur, (size_t)(lvl + 1) * sizeof(*nd));
			if (!nd)
				return -ENOMEM;
			l->lvl_dur = nd;
			l->lvl_dur[lvl] = NULL;
			size_t *nn = realloc(l->lvl_n, (size_t)(lvl + 1) * sizeof(*nn));
			if (!nn)
				return -ENOMEM;
			l->lvl_n = nn;
			l->lvl_max[lvl] = NULL;
			l->lvl_n[lvl] = 0;
			l->n_lvl = lvl + 1;
		}
		uint32_t *a = store_mem_realloc(s, l->lvl_max[lvl], cn * sizeof(*a));
		if (!a)
			return -ENOMEM;
		l->lvl_max[lvl] = a;
		int64_t *ad = store_mem_realloc(s, l->lvl_dur[lvl], cn * sizeof(*ad));
		if (!ad)
			return -ENOMEM;
		l->lvl_dur[lvl] = ad;
		l->lvl_n[lvl] = cn;
		from_k /= B;
		for (size_t k = from_k; k < cn; k++) {
			size_t best = SIZE_MAX;
			int64_t bd = 0;
			size_t hi = (k + 1) * B < prev_n ? (k + 1) * B : prev_n;
			if (lvl == 0)   /* the events themselves */
				gt_store_read_walk(s, l, from_k * B, k * B, n);
			for (size_t j = k * B; j < hi; j++)
				consider_lvl(l, lvl - 1, j, &best, &bd);
			a[k] = (uint32_t)best;
			ad[k] = bd;
		}
		prev_n = cn;
		lvl++;
	}
	/* levels a lane needed before it was cut (lod_reset) */
	for (int k = lvl; k < l->n_lvl; k++) {
		store_mem_free(s, l->lvl_max[k]);
		store_mem_free(s, l->lvl_dur[k]);
		l->lvl_max[k] = NULL;
		l->lvl_dur[k] = NULL;
		l->lvl_n[k] = 0;
	}
	if (lvl < l->n_lvl)
		l->n_lvl = lvl;
	l->n_indexed = n;
	return 0;
}

/* first i >= from with start >= t: the block is found in the compact
 * blk_start array (galloping from from's block: consecutive screen columns
 * ask for increasing t), then at most one block of events is scanned */
static size_t lower_start_from(const struct gt_lane *l, int64_t t, size_t from)
{
	size_t nb = (l->n + B - 1) / B;
	if (from >= l->n)
		return l->n;
	/* largest block b >= from / B with blk_start[b] < t, or none */
	size_t lo = from / B, hi = lo, step = 1;
	if (l->blk_start[lo] >= t)
		return from;
	while (hi < nb && l->blk_start[hi] < t) {
		lo = hi;
		hi += step;
		step *= 2;
	}
	if (hi > nb)
		hi = nb;
	while (hi - lo > 1) {   /* invariant: blk_start[lo] < t, hi == nb or blk_start[hi] >= t */
		size_t mid = lo + (hi - lo) / 2;
		if (l->blk_start[mid] < t)
			lo = mid;
		else
			hi = mid;
	}
	size_t i = lo * B > from ? lo * B : from;
	size_t end = (lo + 1) * B < l->n ? (lo + 1) * B : l->n;
	while (i < end && l->ev[i].start_ns < t)
		i++;
	return i;
}

/* first i with start >= t */
static size_t lower_start(const struct gt_lane *l, int64_t t)
{
	return lower_start_from(l, t, lod_top_from_start(l, t));
}

size_t gt_store_lane_lower_start(const struct gt_lane *l, int64_t t)
{
	if (l->blk_start && l->n_indexed == l->n)
		return lower_start(l, t);
	/* not indexed yet (events added since the last finish): plain search */
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->ev[mid].start_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* first i with running max end M_i >= t, searching blocks from block b_from */
static size_t first_maxend_from(const struct gt_lane *l, int64_t t, size_t b_from)
{
	size_t nb = (l->n + B - 1) / B, lo = b_from, hi = b_from, step = 1;
	while (hi < nb && l->blk_maxend[hi] < t) {
		lo = hi + 1;
		hi += step;
		step *= 2;
	}
	if (hi > nb)
		hi = nb;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->blk_maxend[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= nb)
		return l->n;
	int64_t M = lo ? l->blk_maxend[lo - 1] : INT64_MIN;
	size_t end = (lo + 1) * B < l->n ? (lo + 1) * B : l->n;
	for (size_t i = lo * B; i < end; i++) {
		int64_t e = gt_event_end(&l->ev[i]);
		if (e > M)
			M = e;
		if (M >= t)
			return i;
	}
	return end;
}

static size_t first_maxend(const struct gt_lane *l, int64_t t)
{
	return first_maxend_from(l, t, lod_top_from_maxend(l, t));
}

/* union busy time of the lane within (-inf, t), given k = lower_start(t) */
static int64_t busy_upto_k(const struct gt_lane *l, int64_t t, size_t k)
{
	if (k == 0)
		return 0;
	size_t j = k - 1, b = j / B;
	int64_t P = l->blk_busy[b];
	int64_t M = b ? l->blk_maxend[b - 1] : INT64_MIN;
	for (size_t i = b * B; i <= j; i++) {
		int64_t s = l->ev[i].start_ns, e = s + l->ev[i].dur_ns;
		if (e > M) {
			P += e - (s > M ? s : M);
			M = e;
		}
	}
	return M > t ? P - (M - t) : P;
}

static int64_t busy_upto(const struct gt_lane *l, int64_t t)
{
	return busy_upto_k(l, t, lower_start(l, t));
}

void gt_store_lane_range(const struct gt_lane *l, int64_t t0, int64_t t1,
		      size_t *first, size_t *last)
{
	if (!l->n || !l->blk_maxend) {
		*first = *last = 0;
		return;
	}
	*first = first_maxend(l, t0);
	*last = lower_start(l, t1);
	if (*last < *first)
		*last = *first;
}

int64_t gt_store_lane_busy(const struct gt_lane *l, int64_t t0, int64_t t1)
{
	if (!l->n || !l->blk_maxend || t1 <= t0)
		return 0;
	return busy_upto(l, t1) - busy_upto(l, t0);
}

static int overlaps(const struct gt_event *e, int64_t t0, int64_t t1)
{
	int64_t end = gt_event_end(e);
	if (e->dur_ns == 0)
		return e->start_ns >= t0 && e->start_ns < t1;
	return e->start_ns < t1 && end > t0;
}

/* longest event overlapping [t0, t1) among indices [first, last) */
static size_t dominant_in(const struct gt_lane *l, int64_t t0, int64_t t1, size_t first, size_t last)
{
	if (first >= last)
		return SIZE_MAX;
	size_t best = range_argmax(l, first, last);
	if (best != SIZE_MAX && overlaps(&l->ev[best], t0, t1))
		return best;
	/* nested lanes: the longest candidate ended before the column */
	best = SIZE_MAX;
	size_t lim = last - first > 256 ? first + 256 : last;
	for (size_t i = first; i < lim; i++)
		if (overlaps(&l->ev[i], t0, t1))
			consider(l, i, &best);
	return best;
}

void gt_store_lane_bucket(const struct gt_lane *l, int64_t t0, int64_t t1,
		       struct gt_bucket *out)
{
	memset(out, 0, sizeof(*out));
	out->dominant = SIZE_MAX;
	if (!l->n || !l->blk_maxend || t1 <= t0)
		return;
	/* each search once: starts at t0 and t1, running max end at t0 */
	size_t s0 = lower_start(l, t0), s1 = lower_start_from(l, t1, s0);
	size_t first = first_maxend(l, t0);
	out->busy_ns = busy_upto_k(l, t1, s1) - busy_upto_k(l, t0, s0);
	out->dominant = dominant_in(l, t0, t1, first, s1 > first ? s1 : first);
	size_t c = s1 - s0;
	out->count = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

void gt_store_lane_buckets(const struct gt_lane *l, int64_t t0, int64_t dt,
			int ncols, struct gt_bucket *out)
{
	if (ncols <= 0)
		return;
	if (!l->n || !l->blk_maxend || dt <= 0) {
		for (int c = 0; c < ncols; c++) {
			memset(&out[c], 0, sizeof(out[c]));
			out[c].dominant = SIZE_MAX;
		}
		return;
	}
	size_t s0 = lower_start(l, t0);
	int64_t u0 = busy_upto_k(l, t0, s0);
	size_t fb = lod_top_from_maxend(l, t0); /* block hint for the running-max-end search */
	for (int c = 0; c < ncols; c++) {
		int64_t a = t0 + (int64_t)c * dt, b = a + dt;
		size_t s1 = lower_start_from(l, b, s0);
		int64_t u1 = busy_upto_k(l, b, s1);
		out[c].busy_ns = u1 - u0;
		size_t cnt = s1 - s0;
		out[c].count = cnt > UINT32_MAX ? UINT32_MAX : (uint32_t)cnt;
		out[c].dominant = SIZE_MAX;
		if (out[c].busy_ns > 0 || cnt) {
			size_t first = first_maxend_from(l, a, fb);
			fb = first / B;
			out[c].dominant = dominant_in(l, a, b, first, s1 > first ? s1 : first);
		}
		u0 = u1;
		s0 = s1;
	}
}

/* the last event of [lo, hi) covering t, walking back from hi - 1;
 * *stop set when the walk ended because nothing at or before it can */
static size_t walk_back(const struct gt_lane *l, int64_t t, size_t lo, size_t hi, int *stop)
{
	size_t nb = (l->n + B - 1) / B;
	*stop = 0;
	for (size_t i = hi; i-- > lo;) {
		if ((i == hi - 1 || i % B == B - 1) && l->blk_maxend[i / B] <= t) {
			*stop = 1;
			break;
		}
		/* walking back over a whole block (or B of them): skip it when
		 * none of its events can reach t (each starts at or before the
		 * next block's first start and lasts at most the block's longest,
		 * lvl_dur): a host lane's column between nested calls walks back
		 * to the enclosing range reading the compact keys, not the events */
		size_t b = i / B;
		if (i % B == B - 1 && b + 1 < nb && l->n_lvl > 0) {
			if (l->n_lvl > 1 && (b + 1) % B == 0 &&
			    l->blk_start[b + 1] + l->lvl_dur[1][b / B] < t) {
				if (l->blk_maxend[b + 1 - B] <= t) {
					*stop = 1;
					break;   /* the walk would stop inside the group */
				}
				i = (b + 1 - B) * B;
				continue;
			}
			if (l->blk_start[b + 1] + l->lvl_dur[0][b] < t) {
				i = b * B;
				continue;
			}
		}
		const struct gt_event *e = &l->ev[i];
		if (e->start_ns <= t && (gt_event_end(e) > t || (e->dur_ns == 0 && e->start_ns == t)))
			return i;
	}
	return SIZE_MAX;
}

size_t gt_store_lane_event_at(const struct gt_lane *l, int64_t t)
{
	if (!l->n || !l->blk_maxend)
		return SIZE_MAX;
	size_t k = t == INT64_MAX ? l->n : lower_start(l, t + 1);
	int stop;
	/* within k - 1's superblock by the block keys, before it from the
	 * events open at its start (lod_open.c) */
	size_t S = l->n_indexed == l->n ? lod_open_floor(l, t, k) : 0;
	size_t i = walk_back(l, t, S, k, &stop);
	if (i != SIZE_MAX || stop || S == 0)
		return i;
	size_t below;
	i = lod_open_find(l, t, S, &below);
	if (i != SIZE_MAX || below == 0)
		return i;
	return walk_back(l, t, 0, below, &stop);
}

size_t gt_store_lane_next_name(const struct gt_lane *l, size_t i, uint32_t name)
{
	for (size_t k = i == SIZE_MAX ? 0 : i + 1; k < l->n; k++)
		if (l->ev[k].name == name)
			return k;
	return SIZE_MAX;
}

size_t gt_store_lane_prev_name(const struct gt_lane *l, size_t i, uint32_t name)
{
	size_t k = i == SIZE_MAX || i > l->n ? l->n : i;
	while (k-- > 0)
		if (l->ev[k].name == name)
			return k;
	return SIZE_MAX;
}
