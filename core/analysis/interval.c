/*
 * interval.c - sorted disjoint interval lists: push, union, intersection,
 * difference and collection from store lanes (see interval.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis.h"
#include "interval.h"

void interval_done(struct interval_list *l)
{
	analysis_mem_put(l->v, l->cap * sizeof(*l->v));
	l->v = NULL;
	l->n = l->cap = 0;
}

void interval_move(struct interval_list *dst, struct interval_list *src)
{
	interval_done(dst);
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

static int grow(struct interval_list *l)
{
	return interval_reserve(l, l->cap ? l->cap * 2 : 64);
}

int interval_reserve(struct interval_list *l, size_t n)
{
	if (n <= l->cap)
		return 0;
	if (n * sizeof(struct interval) < ANALYSIS_MEM_MIN) {
		struct interval *nv = realloc(l->v, n * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = n;
		return 0;
	}
	size_t got;     /* a large list: a cached block (no page faults) */
	struct interval *nv = analysis_mem_get(n * sizeof(*nv), &got);
	if (!nv)
		return -ENOMEM;
	if (l->n)
		memcpy(nv, l->v, l->n * sizeof(*nv));
	analysis_mem_put(l->v, l->cap * sizeof(*l->v));
	l->v = nv;
	l->cap = got / sizeof(*nv);
	return 0;
}

int interval_push(struct interval_list *l, int64_t a, int64_t b)
{
	if (b <= a)
		return 0;
	if (l->n && a <= l->v[l->n - 1].b) {
		if (b > l->v[l->n - 1].b)
			l->v[l->n - 1].b = b;
		return 0;
	}
	if (l->n == l->cap && grow(l))
		return -ENOMEM;
	l->v[l->n].a = a;
	l->v[l->n].b = b;
	l->n++;
	return 0;
}

int interval_union(const struct interval_list *x, const struct interval_list *y, struct interval_list *out)
{
	size_t i = 0, j = 0;
	if (interval_reserve(out, out->n + x->n + y->n))
		return -ENOMEM;
	while (i < x->n || j < y->n) {
		const struct interval *p;
		if (j >= y->n || (i < x->n && x->v[i].a <= y->v[j].a))
			p = &x->v[i++];
		else
			p = &y->v[j++];
		if (interval_push(out, p->a, p->b))
			return -ENOMEM;
	}
	return 0;
}

int interval_intersect(const struct interval_list *x, const struct interval_list *y, struct interval_list *out)
{
	size_t i = 0, j = 0;
	if (x->n && y->n && interval_reserve(out, out->n + x->n + y->n))
		return -ENOMEM;
	while (i < x->n && j < y->n) {
		int64_t a = x->v[i].a > y->v[j].a ? x->v[i].a : y->v[j].a;
		int64_t b = x->v[i].b < y->v[j].b ? x->v[i].b : y->v[j].b;
		if (a < b && interval_push(out, a, b))
			return -ENOMEM;
		if (x->v[i].b < y->v[j].b)
			i++;
		else
			j++;
	}
	return 0;
}

int interval_subtract(const struct interval_list *x, const struct interval_list *y, struct interval_list *out)
{
	size_t j = 0;
	if (x->n && interval_reserve(out, out->n + x->n + y->n))
		return -ENOMEM;
	for (size_t i = 0; i < x->n; i++) {
		int64_t cur = x->v[i].a, end = x->v[i].b;
		while (j < y->n && y->v[j].b <= cur)
			j++;
		size_t k = j;
		while (k < y->n && y->v[k].a < end) {
			if (y->v[k].a > cur && interval_push(out, cur, y->v[k].a))
				return -ENOMEM;
			if (y->v[k].b > cur)
				cur = y->v[k].b;
			if (cur >= end)
				break;
			k++;
		}
		if (cur < end && interval_push(out, cur, end))
			return -ENOMEM;
	}
	return 0;
}

int interval_split(const struct interval_list *x, const struct interval_list *y, struct interval_list *in,
	      struct interval_list *out)
{
	size_t j = 0;
	if (x->n && (interval_reserve(in, in->n + x->n + y->n) || interval_reserve(out, out->n + x->n + y->n)))
		return -ENOMEM;
	for (size_t i = 0; i < x->n; i++) {
		int64_t cur = x->v[i].a, end = x->v[i].b;
		while (j < y->n && y->v[j].b <= cur)
			j++;
		for (size_t k = j; k < y->n && y->v[k].a < end; k++) {
			int64_t a = y->v[k].a > cur ? y->v[k].a : cur;
			int64_t b = y->v[k].b < end ? y->v[k].b : end;
			if ((a > cur && interval_push(out, cur, a)) || interval_push(in, a, b))
				return -ENOMEM;
			cur = b;
			if (cur >= end)
				break;
		}
		if (cur < end && interval_push(out, cur, end))
			return -ENOMEM;
	}
	return 0;
}

int64_t interval_len(const struct interval_list *l)
{
	int64_t s = 0;
	for (size_t i = 0; i < l->n; i++)
		s += l->v[i].b - l->v[i].a;
	return s;
}

int64_t interval_len_in(const struct interval_list *l, int64_t t0, int64_t t1)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {           /* first interval ending after t0 */
		size_t mid = lo + (hi - lo) / 2;
		if (l->v[mid].b <= t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	int64_t s = 0;
	for (size_t i = lo; i < l->n && l->v[i].a < t1; i++) {
		int64_t a = l->v[i].a > t0 ? l->v[i].a : t0;
		int64_t b = l->v[i].b < t1 ? l->v[i].b : t1;
		if (b > a)
			s += b - a;
	}
	return s;
}

/* union of one lane's kept events clipped to [t0, t1) */
static int lane_union(const struct gt_store *s, const struct gt_lane *ln, int64_t t0, int64_t t1,
		      interval_filter_fn keep, void *ctx, struct interval_list *out)
{
	size_t first, last;
	gt_store_lane_range(ln, t0, t1, &first, &last);
	gt_store_read_tick(s, ln, first, last);
	for (size_t i = first; i < last; i++) {
		const struct gt_event *e = &ln->ev[i];
		if (keep && !keep(e, ctx))
			continue;
		int64_t a = e->start_ns, b = gt_event_end(e);
		if (a < t0)
			a = t0;
		if (b > t1)
			b = t1;
		if (b <= a)
			continue;
		/* events are sorted by start, so a push keeps the list sorted,
		 * except after clipping to t0: handled by the merge in push */
		if (out->n && a < out->v[out->n - 1].a)
			a = out->v[out->n - 1].a;
		if (interval_push(out, a, b))
			return -ENOMEM;
	}
	return 0;
}

int interval_merge_parts(struct interval_list *parts, size_t np, struct interval_list *out)
{
	while (np > 1) {
		size_t w = 0;
		for (size_t i = 0; i < np; i += 2) {
			if (i + 1 == np) {
				if (w != i)
					interval_move(&parts[w], &parts[i]);
				w++;
				break;
			}
			struct interval_list m = {0};
			if (interval_union(&parts[i], &parts[i + 1], &m)) {
				interval_done(&m);
				return -ENOMEM;
			}
			interval_done(&parts[i]);
			interval_done(&parts[i + 1]);
			interval_move(&parts[w++], &m);
		}
		np = w;
	}
	if (np)
		interval_move(out, &parts[0]);
	return 0;
}

int interval_collect_multi(const struct gt_store *s, const uint32_t *lanes, size_t nlanes,
		      int64_t t0, int64_t t1, interval_class_fn cls, void *ctx, int ncat,
		      struct interval_list *out)
{
	int rc = 0;
	for (int c = 0; c < ncat; c++)
		interval_done(&out[c]);
	if (!nlanes || ncat <= 0 || ncat > 16)
		return 0;
	struct interval_list *parts = calloc(nlanes * (size_t)ncat, sizeof(*parts));
	if (!parts)
		return -ENOMEM;
	for (size_t k = 0; k < nlanes; k++) {
		const struct gt_lane *ln = gt_store_lane_at(s, lanes[k]);
		struct interval_list *lp = &parts[k * (size_t)ncat];
		size_t first, last;
		gt_store_lane_range(ln, t0, t1, &first, &last);
		gt_store_read_tick(s, ln, first, last);
		for (size_t i = first; i < last; i++) {
			const struct gt_event *e = &ln->ev[i];
			int64_t a = e->start_ns, b = gt_event_end(e);
			if (b <= a || b <= t0 || a >= t1)
				continue;
			int c = cls(e, ctx);
			if (c < 0 || c >= ncat)
				continue;
			struct interval_list *o = &lp[c];
			if (!o->cap && interval_reserve(o, last - i)) {   /* at most the lane's rest */
				rc = -ENOMEM;
				goto out;
			}
			if (a < t0)
				a = t0;
			if (b > t1)
				b = t1;
			if (o->n && a < o->v[o->n - 1].a)
				a = o->v[o->n - 1].a;
			if (interval_push(o, a, b)) {
				rc = -ENOMEM;
				goto out;
			}
		}
	}
	struct interval_list *col = calloc(nlanes, sizeof(*col));
	if (!col) {
		rc = -ENOMEM;
		goto out;
	}
	for (int c = 0; c < ncat && !rc; c++) {
		size_t np = 0;
		for (size_t k = 0; k < nlanes; k++)
			if (parts[k * (size_t)ncat + c].n)
				interval_move(&col[np++], &parts[k * (size_t)ncat + c]);
		rc = interval_merge_parts(col, np, &out[c]);
		for (size_t k = 0; k < np; k++)
			interval_done(&col[k]);
	}
	free(col);
out:
	for (size_t i = 0; i < nlanes * (size_t)ncat; i++)
		interval_done(&parts[i]);
	free(parts);
	return rc;
}

int interval_collect(const struct gt_store *s, const uint32_t *lanes, size_t nlanes,
		int64_t t0, int64_t t1, interval_filter_fn keep, void *ctx,
		struct interval_list *out)
{
	int rc = 0;
	interval_done(out);
	if (!nlanes)
		return 0;
	struct interval_list *parts = calloc(nlanes, sizeof(*parts));
	if (!parts)
		return -ENOMEM;
	size_t np = 0;
	for (size_t i = 0; i < nlanes; i++) {
		if ((rc = lane_union(s, gt_store_lane_at(s, lanes[i]), t0, t1, keep, ctx, &parts[np])))
			goto out;
		if (parts[np].n)
			np++;
	}
	while (np > 1) {            /* pairwise merge rounds */
		size_t w = 0;
		for (size_t i = 0; i < np; i += 2) {
			if (i + 1 == np) {
				if (w != i)
					interval_move(&parts[w], &parts[i]);
				w++;
				break;
			}
			struct interval_list m = {0};
			if ((rc = interval_union(&parts[i], &parts[i + 1], &m))) {
				interval_done(&m);
				goto out;
			}
			interval_done(&parts[i]);
			interval_done(&parts[i + 1]);
			interval_move(&parts[w++], &m);
		}
		np = w;
	}
	if (np)
		interval_move(out, &parts[0]);
out:
	for (size_t i = 0; i < nlanes; i++)
		interval_done(&parts[i]);
	free(parts);
	return rc;
}
