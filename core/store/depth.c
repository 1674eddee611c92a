/*
 * depth.c - nesting depth index of one lane (host threads nest Python
 * functions, operators and runtime calls): built on demand when the viewer
 * expands a lane into depth rows.
 *
 * Depth by the stack rule over the events in start order (ties: longer
 * first, so a parent precedes the child that starts with it): entries whose
 * end <= start are popped, the depth is the stack height.  Events of one
 * depth are then disjoint and sorted by start, so per depth a prefix sum of
 * durations gives the busy time of any range from two binary searches, and a
 * max-duration pyramid over row positions the longest event of a range.
 * Depths from GT_DEPTH_ROWS - 1 on share the last row; when its events
 * overlap, the row keeps their union as clipped intervals.
 *
 * Memory: 4 (index) + 8 (prefix sum) + ~4 (pyramid) + 1 (depth) + 1 (block
 * keys) bytes per event, plus 16 per event of an overlapping last row.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/store.h"

/* start / end of row position k (clipped on an overlapping row) */
static inline int64_t rs(const struct gt_depth_row *r, const struct gt_lane *l, size_t k)
{
	return r->cs ? r->cs[k] : l->ev[r->idx[k]].start_ns;
}

static inline int64_t re_(const struct gt_depth_row *r, const struct gt_lane *l, size_t k)
{
	return r->ce ? r->ce[k] : gt_event_end(&l->ev[r->idx[k]]);
}

/* event order for the stack rule: start ascending, then duration descending */
static int ord_cmp(const void *pa, const void *pb, void *arg)
{
	const struct gt_event *ev = arg;
	const struct gt_event *a = &ev[*(const uint32_t *)pa], *b = &ev[*(const uint32_t *)pb];
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->dur_ns != b->dur_ns)
		return a->dur_ns > b->dur_ns ? -1 : 1;
	return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

/* the lane's events in stack-rule order; NULL on no memory */
static uint32_t *event_order(const struct gt_lane *l)
{
	size_t n = l->n;
	uint32_t *ord = malloc((n ? n : 1) * sizeof(*ord));
	if (!ord)
		return NULL;
	int sorted = 1;
	for (size_t i = 0; i < n; i++) {
		ord[i] = (uint32_t)i;
		if (i && l->ev[i].start_ns < l->ev[i - 1].start_ns)
			sorted = 0;
	}
	if (!sorted) {
		qsort_r(ord, n, sizeof(*ord), ord_cmp, l->ev);
		return ord;
	}
	/* sorted by start already: order each run of equal starts */
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && l->ev[j].start_ns == l->ev[i].start_ns)
			j++;
		if (j - i > 1)
			qsort_r(ord + i, j - i, sizeof(*ord), ord_cmp, l->ev);
		i = j;
	}
	return ord;
}

/* grow row r to hold need positions (exactly when empty, else doubling);
 * 0 or -ENOMEM (arrays already grown stay valid) */
static int row_reserve(struct gt_depth_row *r, size_t need, int last)
{
	if (need <= r->cap)
		return 0;
	size_t cap = r->cap ? (r->cap * 2 > need ? r->cap * 2 : need) : need;
	void *p;
#define GROW(f, cnt) do { p = realloc(r->f, (cnt) * sizeof(*r->f)); if (!p) return -ENOMEM; \
		r->f = p; } while (0)
	GROW(idx, cap);
	GROW(cum_ns, cap + 1);
	GROW(blk_s, cap / GT_DEPTH_BLK + 1);
	GROW(blk_e, cap / GT_DEPTH_BLK + 1);
	if (r->cs) {
		GROW(cs, cap);
		GROW(ce, cap);
	}
	if (last)
		GROW(tdep, cap);
	for (int j = 0; j < r->n_lvl; j++)
		GROW(pyr[j], (cap >> (j + 1)) + 1);
#undef GROW
	r->cap = cap;
	return 0;
}

/* prefix sums, clipped intervals (when overlapping) and the pyramid of a
 * row from position n0 on (positions before n0 are indexed); 0 or -ENOMEM */
static int row_index(struct gt_depth_row *r, const struct gt_lane *l, size_t n0)
{
	size_t n = r->n;
	if (n0 >= n)
		return 0;
	if (!r->cs) {
		int overlap = 0;
		for (size_t k = n0 ? n0 : 1; k < n && !overlap; k++)
			if (l->ev[r->idx[k]].start_ns < gt_event_end(&l->ev[r->idx[k - 1]]))
				overlap = 1;
		if (overlap) {
			r->cs = malloc(r->cap * sizeof(*r->cs));
			r->ce = malloc(r->cap * sizeof(*r->ce));
			if (!r->cs || !r->ce)
				return -ENOMEM;
			n0 = 0;   /* clipped from the first position on */
		}
	}
	if (r->cs) {
		int64_t maxend = n0 ? r->ce[n0 - 1] : INT64_MIN;
		for (size_t k = n0; k < n; k++) {
			const struct gt_event *e = &l->ev[r->idx[k]];
			int64_t s = e->start_ns > maxend ? e->start_ns : maxend;
			int64_t en = gt_event_end(e) > s ? gt_event_end(e) : s;
			r->cs[k] = s;
			r->ce[k] = en;
			maxend = en;
		}
	}
	r->nb = (n + GT_DEPTH_BLK - 1) / GT_DEPTH_BLK;
	for (size_t b = n0 / GT_DEPTH_BLK; b < r->nb; b++) {
		size_t last = (b + 1) * GT_DEPTH_BLK < n ? (b + 1) * GT_DEPTH_BLK - 1 : n - 1;
		r->blk_s[b] = rs(r, l, b * GT_DEPTH_BLK);
		r->blk_e[b] = re_(r, l, last);
	}
	r->cum_ns[0] = 0;
	for (size_t k = n0; k < n; k++)
		r->cum_ns[k + 1] = r->cum_ns[k] + (re_(r, l, k) - rs(r, l, k));
	/* pyramid: level j node k = longest of its two children; nodes over
	 * positions from n0 on change */
	size_t prev = n;
	for (int j = 0; prev > 1 && j < GT_DEPTH_LVL_MAX; j++) {
		size_t m = (prev + 1) / 2, k0 = n0 >> (j + 1);
		if (j >= r->n_lvl) {
			r->pyr[j] = malloc(((r->cap >> (j + 1)) + 1) * sizeof(*r->pyr[j]));
			if (!r->pyr[j])
				return -ENOMEM;
			r->n_lvl = j + 1;
			k0 = 0;
		}
		uint32_t *p = r->pyr[j];
		r->pyr_n[j] = m;
		for (size_t k = k0; k < m; k++) {
			size_t a = 2 * k, b = 2 * k + 1;
			uint32_t pa = j ? r->pyr[j - 1][a] : (uint32_t)a;
			if (b >= prev) {
				p[k] = pa;
				continue;
			}
			uint32_t pb = j ? r->pyr[j - 1][b] : (uint32_t)b;
			p[k] = l->ev[r->idx[pb]].dur_ns > l->ev[r->idx[pa]].dur_ns ? pb : pa;
		}
		prev = m;
	}
	return 0;
}

/* run the stack rule over lane events ord[0..cnt) (already in the rule's
 * order, all after the indexed ones) and index them; 0 or -ENOMEM */
static int take_events(struct gt_depth *d, const struct gt_lane *l, const uint32_t *ord, size_t cnt)
{
	size_t n1 = d->n + cnt;
	if (n1 > d->ncap) {
		size_t cap = d->ncap ? (d->ncap * 2 > n1 ? d->ncap * 2 : n1) : n1;
		uint8_t *p = realloc(d->depth, cap ? cap : 1);
		if (!p)
			return -ENOMEM;
		d->depth = p;
		d->ncap = cap;
	}
	/* pass 1: true depths (saturated) and the count per row */
	size_t per[GT_DEPTH_ROWS] = { 0 }, old[GT_DEPTH_ROWS];
	for (size_t k = 0; k < cnt; k++) {
		uint32_t i = ord ? ord[k] : (uint32_t)(d->n + k);
		const struct gt_event *e = &l->ev[i];
		while (d->sh && gt_event_end(&l->ev[d->stack[d->sh - 1]]) <= e->start_ns)
			d->sh--;
		d->depth[i] = (uint8_t)(d->sh < 255 ? d->sh : 255);
		per[d->sh < GT_DEPTH_ROWS - 1 ? d->sh : GT_DEPTH_ROWS - 1]++;
		if (d->sh == d->scap) {
			size_t c = d->scap ? d->scap * 2 : 8;
			uint32_t *p = realloc(d->stack, c * sizeof(*p));
			if (!p)
				return -ENOMEM;
			d->stack = p;
			d->scap = c;
		}
		d->stack[d->sh++] = i;
		d->last_ord = i;
	}
	for (int j = 0; j < GT_DEPTH_ROWS; j++) {
		old[j] = d->row[j].n;
		if (per[j] && row_reserve(&d->row[j], old[j] + per[j], j == GT_DEPTH_ROWS - 1))
			return -ENOMEM;
		if (per[j] && j + 1 > d->nrows)
			d->nrows = j + 1;
	}
	/* pass 2: fill the rows in the rule's order (= start order per row) */
	for (size_t k = 0; k < cnt; k++) {
		uint32_t i = ord ? ord[k] : (uint32_t)(d->n + k);
		int td = d->depth[i], j = td < GT_DEPTH_ROWS - 1 ? td : GT_DEPTH_ROWS - 1;
		struct gt_depth_row *r = &d->row[j];
		if (r->tdep)
			r->tdep[r->n] = (uint8_t)td;
		r->idx[r->n++] = i;
		d->depth[i] = (uint8_t)j;
	}
	d->n = n1;
	if (n1)
		d->last_ev = l->ev[n1 - 1];
	for (int j = 0; j < d->nrows; j++)
		if (row_index(&d->row[j], l, old[j]))
			return -ENOMEM;
	return 0;
}

int gt_store_depth_build(const struct gt_lane *l, struct gt_depth **out)
{
	*out = NULL;
	if (l->n >= UINT32_MAX)
		return -EOVERFLOW;
	struct gt_depth *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->lane = l->id;
	d->lane_dropped = l->dropped;
	uint32_t *ord = event_order(l);
	if (!ord || take_events(d, l, ord, l->n)) {
		free(ord);
		gt_store_depth_free(d);
		return -ENOMEM;
	}
	free(ord);
	/* keep only the open ranges (a live lane grows it again) */
	uint32_t *st = realloc(d->stack, (d->sh ? d->sh : 1) * sizeof(*st));
	if (st) {
		d->stack = st;
		d->scap = d->sh ? d->sh : 1;
	}
	*out = d;
	return 0;
}

int gt_store_depth_extend(struct gt_depth *d, const struct gt_lane *l)
{
	size_t n0 = d->n, n = l->n;
	if (l->dropped != d->lane_dropped)
		return -EAGAIN;   /* cut (gt_store_drop_before): every index moved */
	if (n == n0)
		return 0;
	if (n < n0 || !n0 || n >= UINT32_MAX ||
	    memcmp(&l->ev[n0 - 1], &d->last_ev, sizeof(d->last_ev)))
		return -EAGAIN;
	/* the new events must follow the last one taken and each other */
	uint32_t prev = d->last_ord;
	for (size_t i = n0; i < n; i++) {
		uint32_t cur = (uint32_t)i;
		if (ord_cmp(&prev, &cur, l->ev) > 0)
			return -EAGAIN;
		prev = cur;
	}
	return take_events(d, l, NULL, n - n0);
}

int gt_store_depth_of(const struct gt_depth *d, const struct gt_lane *l, size_t i)
{
	if (!d || i >= d->n || i >= l->n)
		return -1;
	int j = d->depth[i];
	if (j < GT_DEPTH_ROWS - 1)
		return j;
	size_t p = gt_store_depth_pos(d, l, i);
	return p == SIZE_MAX || !d->row[j].tdep ? j : d->row[j].tdep[p];
}

/* a before b in the rule's order */
static int before(const struct gt_lane *l, uint32_t a, uint32_t b)
{
	return ord_cmp(&a, &b, l->ev) < 0;
}

/* the event of disjoint row j open at the start of lane event i (taken
 * before it, ending after that start), SIZE_MAX if none */
static size_t open_at(const struct gt_depth *d, const struct gt_lane *l, int j, uint32_t i)
{
	const struct gt_depth_row *r = &d->row[j];
	int64_t t = l->ev[i].start_ns;
	size_t a = 0, b = r->n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (l->ev[r->idx[m]].start_ns <= t)
			a = m + 1;
		else
			b = m;
	}
	for (size_t k = a, lim = 8; k-- > 0 && lim--;) {
		const struct gt_event *f = &l->ev[r->idx[k]];
		if (gt_event_end(f) > t && before(l, r->idx[k], i))
			return r->idx[k];
		if (f->start_ns < t)
			break;
	}
	return SIZE_MAX;
}

size_t gt_store_depth_parent(const struct gt_depth *d, const struct gt_lane *l, size_t i, int *inside)
{
	*inside = 0;
	if (!d || i >= d->n || i >= l->n)
		return SIZE_MAX;
	const struct gt_event *e = &l->ev[i];
	int64_t s = e->start_ns, en = gt_event_end(e);
	int j = d->depth[i];
	size_t over = SIZE_MAX;
	if (j == GT_DEPTH_ROWS - 1) {
		/* the merged row: the open ranges taken before i, latest first */
		const struct gt_depth_row *r = &d->row[j];
		size_t p = gt_store_depth_pos(d, l, i);
		for (size_t k = p == SIZE_MAX ? 0 : p, lim = 4096; k-- > 0 && lim--;) {
			const struct gt_event *f = &l->ev[r->idx[k]];
			if (gt_event_end(f) <= s)
				continue;
			if (gt_event_end(f) >= en) {
				*inside = 1;
				return r->idx[k];
			}
			if (over == SIZE_MAX)
				over = r->idx[k];
		}
	}
	for (int k = j - 1; k >= 0; k--) {
		size_t c = open_at(d, l, k, (uint32_t)i);
		if (c == SIZE_MAX)
			continue;
		if (gt_event_end(&l->ev[c]) >= en) {
			*inside = 1;
			return c;
		}
		if (over == SIZE_MAX)
			over = c;
	}
	return over;
}

void gt_store_depth_free(struct gt_depth *d)
{
	if (!d)
		return;
	for (int j = 0; j < GT_DEPTH_ROWS; j++) {
		struct gt_depth_row *r = &d->row[j];
		free(r->idx);
		free(r->cum_ns);
		free(r->blk_s);
		free(r->blk_e);
		free(r->cs);
		free(r->ce);
		free(r->tdep);
		for (int k = 0; k < r->n_lvl; k++)
			free(r->pyr[k]);
	}
	free(d->depth);
	free(d->stack);
	free(d);
}

size_t gt_store_depth_bytes(const struct gt_depth *d)
{
	if (!d)
		return 0;
	size_t b = sizeof(*d) + d->ncap + d->scap * sizeof(uint32_t);
	for (int j = 0; j < d->nrows; j++) {
		const struct gt_depth_row *r = &d->row[j];
		if (!r->cap)
			continue;
		b += r->cap * (sizeof(uint32_t) + sizeof(int64_t)) + sizeof(int64_t) +
		     (r->cap / GT_DEPTH_BLK + 1) * 2 * sizeof(int64_t);
		if (r->cs)
			b += r->cap * 2 * sizeof(int64_t);
		if (r->tdep)
			b += r->cap;
		for (int k = 0; k < r->n_lvl; k++)
			b += ((r->cap >> (k + 1)) + 1) * sizeof(uint32_t);
	}
	return b;
}

/* first index >= lo of the ascending keys k[0..n) with k >= t (ge) or
 * k > t (!ge), galloping from lo: near the last answer in a few steps */
static size_t gallop(const int64_t *k, size_t n, int64_t t, size_t lo, int ge)
{
	size_t a = lo, b = lo, step = 1;
	while (b < n && (ge ? k[b] < t : k[b] <= t)) {
		a = b + 1;
		b = a + step;
		step <<= 1;
	}
	if (b > n)
		b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (ge ? k[m] < t : k[m] <= t)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* first position >= lo whose start >= t (all before lo are known < t):
 * the block of the answer from the compact block keys, then inside it */
static size_t lower_s(const struct gt_depth_row *r, const struct gt_lane *l, int64_t t, size_t lo)
{
	size_t n = r->n;
	if (lo >= n)
		return n;
	/* first block after lo's whose first start >= t: the answer is in the
	 * block before it (or is its first position) */
	size_t B = gallop(r->blk_s, r->nb, t, lo / GT_DEPTH_BLK + 1, 1);
	size_t a = (B - 1) * GT_DEPTH_BLK, b = B * GT_DEPTH_BLK;
	if (a < lo)
		a = lo;
	if (b > n)
		b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (rs(r, l, m) < t)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* first position >= lo whose real start >= t: on a merged (clipped) row
 * the positions are in real start order, the clipped keys are not it */
static size_t lower_rs(const struct gt_depth_row *r, const struct gt_lane *l, int64_t t, size_t lo)
{
	if (!r->cs)
		return lower_s(r, l, t, lo);
	size_t a = lo, b = lo, step = 1, n = r->n;
	while (b < n && l->ev[r->idx[b]].start_ns < t) {
		a = b + 1;
		b = a + step;
		step <<= 1;
	}
	if (b > n)
		b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (l->ev[r->idx[m]].start_ns < t)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* first position >= lo whose end > t (ends ascend: the row is disjoint) */
static size_t lower_e(const struct gt_depth_row *r, const struct gt_lane *l, int64_t t, size_t lo)
{
	size_t n = r->n;
	if (lo >= n)
		return n;
	/* first block whose last end > t holds the answer */
	size_t B = gallop(r->blk_e, r->nb, t, lo / GT_DEPTH_BLK, 0);
	if (B >= r->nb)
		return n;
	size_t a = B * GT_DEPTH_BLK, b = (B + 1) * GT_DEPTH_BLK;
	if (a < lo)
		a = lo;
	if (b > n)
		b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (re_(r, l, m) <= t)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* covered time of the row before t, given e = lower_e(t) */
static int64_t covered_before(const struct gt_depth_row *r, const struct gt_lane *l, int64_t t,
			      size_t e)
{
	int64_t u = r->cum_ns[e];
	if (e < r->n && rs(r, l, e) < t)
		u += t - rs(r, l, e);
	return u;
}

/* position of the longest event among positions [lo, hi), SIZE_MAX if empty */
static size_t longest(const struct gt_depth_row *r, const struct gt_lane *l, size_t lo, size_t hi)
{
	size_t best = SIZE_MAX;
	int64_t bd = -1;
#define TRY(p) do { size_t p_ = (p); int64_t dd = l->ev[r->idx[p_]].dur_ns; \
		if (dd > bd || (dd == bd && p_ < best)) { bd = dd; best = p_; } } while (0)
	if (hi - lo <= 16) {
		for (size_t p = lo; p < hi; p++)
			TRY(p);
		return best;
	}
	size_t a = lo, b = hi;
	if (a & 1)
		TRY(a++);
	if (b & 1)
		TRY(--b);
	a >>= 1;
	b >>= 1;
	for (int j = 0; a < b && j < r->n_lvl; j++) {
		if (a & 1)
			TRY(r->pyr[j][a++]);
		if (b & 1)
			TRY(r->pyr[j][--b]);
		a >>= 1;
		b >>= 1;
	}
#undef TRY
	return best;
}

void gt_store_depth_range(const struct gt_depth *d, const struct gt_lane *l, int depth, int64_t t0,
		       int64_t t1, size_t *first, size_t *last)
{
	*first = *last = 0;
	if (!d || depth < 0 || depth >= d->nrows || t1 <= t0)
		return;
	const struct gt_depth_row *r = &d->row[depth];
	/* before lower_e(t0) all end <= t0; from the first (real) start >= t0
	 * on they start in the range (zero-length ones at t0 count) */
	size_t e = lower_e(r, l, t0, 0), s0 = lower_rs(r, l, t0, 0);
	*first = e < s0 ? e : s0;
	*last = lower_rs(r, l, t1, *first);
}

int64_t gt_store_depth_busy(const struct gt_depth *d, const struct gt_lane *l, int depth, int64_t t0,
			 int64_t t1)
{
	if (!d || depth < 0 || depth >= d->nrows || t1 <= t0)
		return 0;
	const struct gt_depth_row *r = &d->row[depth];
	size_t e0 = lower_e(r, l, t0, 0), e1 = lower_e(r, l, t1, e0);
	return covered_before(r, l, t1, e1) - covered_before(r, l, t0, e0);
}

void gt_store_depth_buckets(const struct gt_depth *d, const struct gt_lane *l, int depth,
			 int64_t t0, int64_t dt, int ncols, struct gt_bucket *out)
{
	for (int c = 0; c < ncols; c++) {
		out[c].busy_ns = 0;
		out[c].count = 0;
		out[c].dominant = SIZE_MAX;
	}
	if (!d || depth < 0 || depth >= d->nrows || dt <= 0 || ncols <= 0 || !d->row[depth].n)
		return;
	const struct gt_depth_row *r = &d->row[depth];
	/* s: real starts (a merged row clips its starts: on it a position
	 * before lower_e(t0) ended by t0 for real, so [min(e0, s0), s1) holds
	 * the events overlapping the column, plus clipped ones whose container
	 * is there too and at least as long) */
	size_t e0 = lower_e(r, l, t0, 0), s0 = lower_rs(r, l, t0, 0);
	int64_t u0 = covered_before(r, l, t0, e0);
	for (int c = 0; c < ncols; c++) {
		int64_t b = t0 + (int64_t)(c + 1) * dt;
		size_t e1 = lower_e(r, l, b, e0), s1 = lower_rs(r, l, b, s0);
		int64_t u1 = covered_before(r, l, b, e1);
		out[c].busy_ns = u1 - u0;
		size_t cnt = s1 - s0;
		out[c].count = cnt > UINT32_MAX ? UINT32_MAX : (uint32_t)cnt;
		/* overlapping the column: end > its start, or zero-length at it */
		size_t lo = e0 < s0 ? e0 : s0;
		if (s1 > lo) {
			size_t p = longest(r, l, lo, s1);
			if (p != SIZE_MAX)
				out[c].dominant = r->idx[p];
		}
		e0 = e1;
		s0 = s1;
		u0 = u1;
	}
}

size_t gt_store_depth_event_at(const struct gt_depth *d, const struct gt_lane *l, int depth, int64_t t)
{
	if (!d || depth < 0 || depth >= d->nrows || !d->row[depth].n)
		return SIZE_MAX;
	const struct gt_depth_row *r = &d->row[depth];
	/* last position whose (real) start <= t */
	size_t a = 0, b = r->n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (l->ev[r->idx[m]].start_ns <= t)
			a = m + 1;
		else
			b = m;
	}
	/* disjoint rows: only that one can cover t; an overlapping row: the
	 * latest-starting of the events before it that covers t */
	size_t lim = r->cs ? 256 : 1;
	for (size_t k = a; k-- > 0 && lim--;) {
		const struct gt_event *e = &l->ev[r->idx[k]];
		if (gt_event_end(e) > t || (e->dur_ns == 0 && e->start_ns == t))
			return r->idx[k];
	}
	return SIZE_MAX;
}

size_t gt_store_depth_pos(const struct gt_depth *d, const struct gt_lane *l, size_t i)
{
	if (!d || i >= d->n || i >= l->n)
		return SIZE_MAX;
	const struct gt_depth_row *r = &d->row[d->depth[i]];
	int64_t t = l->ev[i].start_ns;
	size_t a = 0, b = r->n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (l->ev[r->idx[m]].start_ns < t)
			a = m + 1;
		else
			b = m;
	}
	for (; a < r->n && l->ev[r->idx[a]].start_ns == t; a++)
		if (r->idx[a] == i)
			return a;
	return SIZE_MAX;
}
