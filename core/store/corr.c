/*
 * corr.c - correlation index: (rank, correlation id) -> launch call and
 * GPU work.  Two arrays of struct corr_ent sorted by key (rank << 32 | corr);
 * for GPU work, ties keep the earliest start first.  Built lazily on the
 * first lookup after gt_store_finish() (a live store finishes often and rarely
 * follows a correlation).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "store_priv.h"

static int is_launch(const struct gt_event *e)
{
	return e->kind == GT_EV_RUNTIME || e->kind == GT_EV_DRIVER;
}

static int is_gpu_work(const struct gt_event *e)
{
	return e->kind == GT_EV_KERNEL || e->kind == GT_EV_MEMCPY || e->kind == GT_EV_MEMSET;
}

/* LSD radix sort on key, 16-bit digits, skipping digits that are all equal */
static int radix_sort(struct gt_store *s, struct corr_ent *a, size_t n)
{
	if (n < 2)
		return 0;
	struct corr_ent *tmp = store_mem_realloc(s, NULL, n * sizeof(*tmp));
	size_t *cnt = malloc(65536 * sizeof(*cnt));
	if (!tmp || !cnt) {
		store_mem_free(s, tmp);
		free(cnt);
		return -ENOMEM;
	}
	struct corr_ent *src = a, *dst = tmp;
	for (int shift = 0; shift < 64; shift += 16) {
		memset(cnt, 0, 65536 * sizeof(*cnt));
		for (size_t i = 0; i < n; i++)
			cnt[(src[i].key >> shift) & 0xffff]++;
		if (cnt[(src[0].key >> shift) & 0xffff] == n)
			continue;
		size_t sum = 0;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[cnt[(src[i].key >> shift) & 0xffff]++] = src[i];
		struct corr_ent *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	store_mem_free(s, tmp);
	free(cnt);
	return 0;
}

int corr_build(struct gt_store *s)
{
	/* invalidate; rebuilt on demand */
	store_mem_free(s, s->corr_launch);
	store_mem_free(s, s->corr_gpu);
	s->corr_launch = s->corr_gpu = NULL;
	s->n_corr_launch = s->n_corr_gpu = 0;
	return 0;
}

static int corr_build_now(struct gt_store *s)
{
	size_t nl = 0, ng = 0;
	for (size_t i = 0; i < s->n_lanes; i++) {
		const struct gt_lane *l = s->lanes[i];
		for (size_t k = 0; k < l->n; k++) {
			gt_store_read_walk(s, l, 0, k, l->n);
			if (!l->ev[k].corr)
				continue;
			nl += is_launch(&l->ev[k]);
			ng += is_gpu_work(&l->ev[k]);
		}
	}
	struct corr_ent *L = store_mem_realloc(s, NULL, (nl ? nl : 1) * sizeof(*L));
	struct corr_ent *G = store_mem_realloc(s, NULL, (ng ? ng : 1) * sizeof(*G));
	if (!L || !G) {
		store_mem_free(s, L);
		store_mem_free(s, G);
		return -ENOMEM;
	}
	size_t a = 0, b = 0;
	for (size_t i = 0; i < s->n_lanes; i++) {
		const struct gt_lane *l = s->lanes[i];
		uint64_t rk = (uint64_t)(uint32_t)l->key.rank << 32;
		/* lanes are sorted by start, so a stable sort keeps the earliest first */
		for (size_t k = 0; k < l->n; k++) {
			gt_store_read_walk(s, l, 0, k, l->n);
			const struct gt_event *e = &l->ev[k];
			if (!e->corr)
				continue;
			struct corr_ent c = { rk | e->corr, { (uint32_t)i, (uint32_t)k } };
			if (is_launch(e))
				L[a++] = c;
			else if (is_gpu_work(e))
				G[b++] = c;
		}
	}
	if (radix_sort(s, L, nl) || radix_sort(s, G, ng)) {
		store_mem_free(s, L);
		store_mem_free(s, G);
		return -ENOMEM;
	}
	s->corr_launch = L;
	s->corr_gpu = G;
	s->n_corr_launch = nl;
	s->n_corr_gpu = ng;
	return 0;
}

static int lookup(const struct corr_ent *a, size_t n, uint64_t key, struct gt_ref *out)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || a[lo].key != key)
		return -ENOENT;
	*out = a[lo].ref;
	return 0;
}

int gt_store_corr_find(const struct gt_store *cs, int32_t rank, uint32_t corr,
		    int want_gpu, struct gt_ref *out)
{
	struct gt_store *s = (struct gt_store *)cs; /* lazily built cache */
	if (!s->corr_launch && corr_build_now(s))
		return -ENOMEM;
	uint64_t key = (uint64_t)(uint32_t)store_rank_norm(rank) << 32 | corr;
	if (want_gpu)
		return lookup(s->corr_gpu, s->n_corr_gpu, key, out);
	return lookup(s->corr_launch, s->n_corr_launch, key, out);
}

int gt_store_corr_peer(const struct gt_store *s, struct gt_ref r, struct gt_ref *out)
{
	const struct gt_lane *l = gt_store_lane_at(s, r.lane);
	if (!l || r.idx >= l->n || !l->ev[r.idx].corr)
		return -ENOENT;
	const struct gt_event *e = &l->ev[r.idx];
	if (is_launch(e))
		return gt_store_corr_find(s, l->key.rank, e->corr, 1, out);
	if (is_gpu_work(e))
		return gt_store_corr_find(s, l->key.rank, e->corr, 0, out);
	return -ENOENT;
}
