/*
 * steps_cache.c - a small cache in front of gt_steps_find: the analyses and the
 * viewer ask for the same rank's steps over and over (every report, every
 * zoom), and finding them is a pass over the whole rank.  Entries are keyed
 * by store pointer, rank and pattern and checked against the store's change
 * id (gt_store_change_id) and its event and lane counts, so a grown live
 * store or a new store at the same address misses.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "steps_priv.h"

#define CACHE_N 256     /* a rank each: the overview asks for every rank in scope */

struct centry {
	const struct gt_store *s;
	uint64_t fp;
	int32_t rank;
	char pattern[128];
	struct gt_steps_list l;
	int used;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct centry cache[CACHE_N];
static unsigned next_slot;

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t fingerprint(const struct gt_store *s)
{
	/* no event is read: under a memory budget each read of a lane's
	 * first, middle and last event was a page fault, 3 a lane a call */
	uint64_t h = mix(gt_store_change_id(s), gt_store_event_count(s));
	return mix(h, gt_store_lane_count(s));
}

/* deep copy of a list; 0 or -ENOMEM */
static int copy_list(struct gt_steps_list *dst, const struct gt_steps_list *src)
{
	*dst = *src;
	dst->v = NULL;
	dst->gpus = NULL;
	dst->gpu_mem = NULL;
	size_t ng = src->ngpus, n = src->n, ngm = n * ng;
	dst->v = malloc((n ? n : 1) * sizeof(*dst->v));
	dst->gpus = malloc((ng ? ng : 1) * sizeof(*dst->gpus));
	dst->gpu_mem = malloc((ngm ? ngm : 1) * sizeof(*dst->gpu_mem));
	if (!dst->v || !dst->gpus || !dst->gpu_mem) {
		gt_steps_list_done(dst);
		return -ENOMEM;
	}
	if (n)
		memcpy(dst->v, src->v, n * sizeof(*dst->v));
	if (ng)
		memcpy(dst->gpus, src->gpus, ng * sizeof(*dst->gpus));
	if (ngm)
		memcpy(dst->gpu_mem, src->gpu_mem, ngm * sizeof(*dst->gpu_mem));
	for (size_t i = 0; i < n; i++)
		dst->v[i].gpu = &dst->gpu_mem[i * ng];
	return 0;
}

void gt_steps_cache_clear(void)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < CACHE_N; i++) {
		if (cache[i].used)
			gt_steps_list_done(&cache[i].l);
		memset(&cache[i], 0, sizeof(cache[i]));
	}
	pthread_mutex_unlock(&mu);
}

int gt_steps_find(const struct gt_store *s, int32_t rank, const struct gt_steps_opts *o,
	       struct gt_steps_list *out, char *err, size_t errlen)
{
	const char *pat = o && o->pattern ? o->pattern : GT_STEPS_DEFAULT_PATTERN;
	int32_t rk = rank < 0 ? 0 : rank;
	if (strlen(pat) >= sizeof(cache[0].pattern))
		return steps_find_uncached(s, rank, o, out, err, errlen);
	uint64_t fp = fingerprint(s);
	pthread_mutex_lock(&mu);
	for (int i = 0; i < CACHE_N; i++) {
		struct centry *c = &cache[i];
		if (c->used && c->s == s && c->fp == fp && c->rank == rk && !strcmp(c->pattern, pat)) {
			int rc = copy_list(out, &c->l);
			pthread_mutex_unlock(&mu);
			if (rc)
				memset(out, 0, sizeof(*out));
			return rc;
		}
	}
	pthread_mutex_unlock(&mu);
	int rc = steps_find_uncached(s, rank, o, out, err, errlen);
	if (rc)
		return rc;
	struct gt_steps_list keep;
	if (copy_list(&keep, out))
		return 0;                /* no room to cache: the answer still stands */
	pthread_mutex_lock(&mu);
	/* a grown live store misses on its fingerprint: replace its old entry
	   for this rank rather than keep one stale copy per growth */
	struct centry *c = NULL;
	for (int i = 0; i < CACHE_N && !c; i++)
		if (cache[i].used && cache[i].s == s && cache[i].rank == rk && !strcmp(cache[i].pattern, pat))
			c = &cache[i];
	if (!c)
		c = &cache[next_slot++ % CACHE_N];
	if (c->used)
		gt_steps_list_done(&c->l);
	c->s = s;
	c->fp = fp;
	c->rank = rk;
	strcpy(c->pattern, pat);
	c->l = keep;
	c->used = 1;
	pthread_mutex_unlock(&mu);
	return 0;
}
