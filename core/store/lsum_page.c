/*
 * lsum_page.c - paged levels of the per-lane summary (gtrace/lsum.h): the
 * big levels of a billion-event capture's summary stay in the file, and a
 * row of the trace view loads the pages (one slab of time x a run of lanes)
 * it needs, under a byte cap, least recently used out first.
 *
 * Pages are kept sorted by (level, b0, lane0): the pages of one level are a
 * run of slabs (equal b0), each slab a run of disjoint lane ranges.  A row
 * of lane l over buckets [a, b] finds the first slab ending after a by
 * binary search, then in each slab up to b the page holding l.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "lsum_page.h"

#define DEFAULT_CAP ((size_t)256 << 20)

struct gt_lsum_pager {
	pthread_mutex_t mu;
	struct gt_lsum_page *pg;
	size_t n;
	size_t lev_at[GT_LSUM_MAXLEV + 1];   /* pages of level k: [lev_at[k], lev_at[k + 1]) */
	gt_lsum_load_fn load;
	void (*done)(void *);
	void *ctx;
	size_t cap, loaded_bytes, nloaded, loads;
	uint64_t clock;
	int err;
	struct gt_lsum_ent *scratch;
	size_t scratch_cap;
};

static int page_cmp(const void *a, const void *b)
{
	const struct gt_lsum_page *x = a, *y = b;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	if (x->b0 != y->b0)
		return x->b0 < y->b0 ? -1 : 1;
	return x->lane0 < y->lane0 ? -1 : x->lane0 > y->lane0;
}

static size_t page_bytes(const struct gt_lsum_page *p)
{
	return p->e ? (size_t)p->at[p->nlanes] * sizeof(*p->e) + (p->nlanes + 1) * sizeof(*p->at) : 0;
}

/* the pages' layout as the header says; 0 or -EINVAL */
static int check_pages(const struct gt_lsum *m, const struct gt_lsum_page *pg, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct gt_lsum_page *p = &pg[i];
		if ((int)p->level >= m->nlev || !p->nlanes || p->lane0 >= m->nlanes ||
		    p->nlanes > m->nlanes - p->lane0 || !p->nb || p->b0 > UINT32_MAX - p->nb)
			return -EINVAL;
		for (size_t l = p->lane0; l < p->lane0 + p->nlanes; l++)
			if (m->lane[l].n[p->level])
				return -EINVAL;   /* a level is resident or paged, not both */
		if (!i || pg[i - 1].level != p->level)
			continue;
		const struct gt_lsum_page *q = &pg[i - 1];
		if (q->b0 == p->b0) {
			if (q->nb != p->nb || q->lane0 + q->nlanes > p->lane0)
				return -EINVAL;
		} else if (q->b0 + q->nb > p->b0) {
			return -EINVAL;
		}
	}
	return 0;
}

int gt_lsum_set_pages(struct gt_lsum *m, const struct gt_lsum_page *pages, size_t n,
		      gt_lsum_load_fn load, void (*done)(void *ctx), void *ctx)
{
	if (m->pager || !load)
		return -EINVAL;
	struct gt_lsum_pager *g = calloc(1, sizeof(*g));
	struct gt_lsum_page *pg = malloc((n ? n : 1) * sizeof(*pg));
	if (!g || !pg) {
		free(g);
		free(pg);
		return -ENOMEM;
	}
	memcpy(pg, pages, n * sizeof(*pg));
	for (size_t i = 0; i < n; i++) {
		pg[i].e = NULL;
		pg[i].at = NULL;
		pg[i].used = 0;
	}
	qsort(pg, n, sizeof(*pg), page_cmp);
	if (check_pages(m, pg, n)) {
		free(g);
		free(pg);
		return -EINVAL;
	}
	pthread_mutex_init(&g->mu, NULL);
	g->pg = pg;
	g->n = n;
	for (int k = 0, i = 0; k <= GT_LSUM_MAXLEV; k++) {
		while ((size_t)i < n && (int)pg[i].level < k)
			i++;
		g->lev_at[k] = (size_t)i;
	}
	g->load = load;
	g->done = done;
	g->ctx = ctx;
	g->cap = DEFAULT_CAP;
	m->pager = g;
	return 0;
}

void gt_lsum_set_cap(struct gt_lsum *m, size_t bytes)
{
	if (m && m->pager)
		m->pager->cap = bytes;
}

size_t gt_lsum_resident(const struct gt_lsum *m)
{
	if (!m)
		return 0;
	size_t b = sizeof(*m) + m->nlanes * sizeof(*m->lane);
	for (size_t i = 0; i < m->nlanes; i++)
		for (int k = 0; k < m->nlev; k++)
			b += m->lane[i].n[k] * sizeof(struct gt_lsum_ent);
	struct gt_lsum_pager *g = m->pager;
	if (g) {
		pthread_mutex_lock(&g->mu);
		b += sizeof(*g) + g->n * sizeof(*g->pg) + g->loaded_bytes +
		     g->scratch_cap * sizeof(*g->scratch);
		pthread_mutex_unlock(&g->mu);
	}
	return b;
}

void gt_lsum_page_stats(const struct gt_lsum *m, size_t *loads, size_t *loaded, size_t *pages,
			int *err)
{
	struct gt_lsum_pager *g = m ? m->pager : NULL;
	*loads = *loaded = *pages = 0;
	*err = 0;
	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	*loads = g->loads;
	*loaded = g->nloaded;
	*pages = g->n;
	*err = g->err;
	pthread_mutex_unlock(&g->mu);
}

int lsum_page_level(const struct gt_lsum *m, int k)
{
	return m->pager && m->pager->lev_at[k + 1] > m->pager->lev_at[k];
}

static void unload(struct gt_lsum_pager *g, struct gt_lsum_page *p)
{
	g->loaded_bytes -= page_bytes(p);
	g->nloaded--;
	free(p->e);
	free(p->at);
	p->e = NULL;
	p->at = NULL;
}

/* load p if it is not; then unload the least recently used others until
 * the loaded pages fit the cap (p itself stays) */
static int use(struct gt_lsum_pager *g, struct gt_lsum_page *p)
{
	p->used = ++g->clock;
	if (p->e)
		return 0;
	int rc = g->load(g->ctx, p);
	if (!rc && (!p->e || !p->at))
		rc = -EINVAL;
	if (rc) {
		free(p->e);
		free(p->at);
		p->e = NULL;
		p->at = NULL;
		if (!g->err)
			g->err = rc;
		return rc;
	}
	g->loads++;
	g->nloaded++;
	g->loaded_bytes += page_bytes(p);
	while (g->loaded_bytes > g->cap && g->nloaded > 1) {
		struct gt_lsum_page *old = NULL;
		for (size_t i = 0; i < g->n; i++)
			if (g->pg[i].e && &g->pg[i] != p && (!old || g->pg[i].used < old->used))
				old = &g->pg[i];
		if (!old)
			break;
		unload(g, old);
	}
	return 0;
}

static int scratch_add(struct gt_lsum_pager *g, size_t *n, const struct gt_lsum_ent *e, size_t c)
{
	if (*n + c > g->scratch_cap) {
		size_t nc = g->scratch_cap ? g->scratch_cap : 256;
		while (nc < *n + c)
			nc *= 2;
		struct gt_lsum_ent *ns = realloc(g->scratch, nc * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		g->scratch = ns;
		g->scratch_cap = nc;
	}
	memcpy(g->scratch + *n, e, c * sizeof(*e));
	*n += c;
	return 0;
}

int lsum_page_gather(struct gt_lsum *m, uint32_t lane, int k, int64_t ia0, int64_t ia1,
		     const struct gt_lsum_ent **e, size_t *n)
{
	struct gt_lsum_pager *g = m->pager;
	pthread_mutex_lock(&g->mu);
	*e = g->scratch;
	*n = 0;
	if (ia1 < 0 || ia0 > (int64_t)UINT32_MAX || ia1 < ia0)
		return 0;
	uint32_t a = ia0 < 0 ? 0 : (uint32_t)ia0;
	uint32_t b = ia1 > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)ia1;
	size_t lo = g->lev_at[k], hi = g->lev_at[k + 1];
	/* first page whose slab ends after a (slab ends rise with b0) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uint64_t)g->pg[mid].b0 + g->pg[mid].nb <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	int rc = 0;
	for (size_t i = lo, end = g->lev_at[k + 1]; i < end && g->pg[i].b0 <= b && !rc;) {
		/* the slab [i, j) */
		size_t j = i;
		while (j < end && g->pg[j].b0 == g->pg[i].b0)
			j++;
		size_t l = i, h = j;   /* last page of the slab with lane0 <= lane */
		while (l < h) {
			size_t mid = l + (h - l) / 2;
			if (g->pg[mid].lane0 <= lane)
				l = mid + 1;
			else
				h = mid;
		}
		if (l > i && lane < g->pg[l - 1].lane0 + g->pg[l - 1].nlanes) {
			struct gt_lsum_page *p = &g->pg[l - 1];
			rc = use(g, p);
			if (!rc) {
				const struct gt_lsum_ent *x = p->e + p->at[lane - p->lane0];
				size_t c = p->at[lane - p->lane0 + 1] - p->at[lane - p->lane0], s = 0;
				for (size_t r = c; s < r;) {   /* first entry at or after a */
					size_t mid = s + (r - s) / 2;
					if (x[mid].idx < a)
						s = mid + 1;
					else
						r = mid;
				}
				size_t t = s;
				while (t < c && x[t].idx <= b)
					t++;
				rc = scratch_add(g, n, x + s, t - s);
			}
		}
		i = j;
	}
	*e = g->scratch;
	return rc;
}

void lsum_page_unlock(struct gt_lsum *m)
{
	pthread_mutex_unlock(&m->pager->mu);
}

void lsum_page_free(struct gt_lsum *m)
{
	struct gt_lsum_pager *g = m->pager;
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++) {
		free(g->pg[i].e);
		free(g->pg[i].at);
	}
	free(g->pg);
	free(g->scratch);
	if (g->done)
		g->done(g->ctx);
	pthread_mutex_destroy(&g->mu);
	free(g);
	m->pager = NULL;
}
