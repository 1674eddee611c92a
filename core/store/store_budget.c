/*
 * store_budget.c - the store's memory budget: sizes as text, the default
 * budget, and the budget API of gtrace/store.h.  The cache file the budget
 * works through is store_arena.c; docs/store.md describes both.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "store_priv.h"
#include "gtrace/lsum.h"

int gt_parse_size(const char *text, size_t *out)
{
	if (!text || !*text)
		return -EINVAL;
	const char *p = text;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	uint64_t v = 0;
	while (*p >= '0' && *p <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p++ - '0');
	}
	unsigned shift = 0;
	switch (*p) {
	case 'k': case 'K': shift = 10; p++; break;
	case 'm': case 'M': shift = 20; p++; break;
	case 'g': case 'G': shift = 30; p++; break;
	case 't': case 'T': shift = 40; p++; break;
	default: break;
	}
	if (shift && (!strcasecmp(p, "iB") || !strcasecmp(p, "B")))
		p += strlen(p);
	else if (!shift && !strcasecmp(p, "B"))
		p++;
	if (*p)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	v <<= shift;
	if (v > SIZE_MAX)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

size_t gt_default_memory_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	size_t gib = (size_t)1 << 30;
	if (pages <= 0 || psz <= 0)
		return gib;
	size_t quarter = (size_t)pages / 4 * (size_t)psz;
	return quarter < gib ? quarter : gib;
}

/* ---- store_mem: heap blocks with a size header, or cache-file blocks ---- */

#define MEM_HDR 16u

static size_t heap_size(const void *p)
{
	size_t n;
	memcpy(&n, (const unsigned char *)p - MEM_HDR, sizeof(n));
	return n;
}

static void *heap_realloc(struct gt_store *s, void *p, size_t n)
{
	size_t old = p ? heap_size(p) : 0;
	if (n > SIZE_MAX - MEM_HDR)
		return NULL;
	unsigned char *b = realloc(p ? (unsigned char *)p - MEM_HDR : NULL, n + MEM_HDR);
	if (!b)
		return NULL;
	memcpy(b, &n, sizeof(n));
	s->heap_bytes += n;
	s->heap_bytes -= old;
	return b + MEM_HDR;
}

void *store_mem_realloc(struct gt_store *s, void *p, size_t n)
{
	if (!n)
		n = 1;
	if (p && store_arena_owns(s->arena, p))
		return store_arena_realloc(s->arena, p, n);
	if (!s->arena || n < STORE_ARENA_MIN)
		return heap_realloc(s, p, n);
	void *q = p ? store_arena_alloc_grown(s->arena, n) : store_arena_alloc(s->arena, n);
	if (!q)
		return NULL;
	if (p) {
		size_t old = heap_size(p);
		memcpy(q, p, old < n ? old : n);
		store_mem_free(s, p);
	}
	return q;
}

void store_mem_free(struct gt_store *s, void *p)
{
	if (!p)
		return;
	if (store_arena_owns(s->arena, p)) {
		store_arena_release(s->arena, p);
		return;
	}
	s->heap_bytes -= heap_size(p);
	free((unsigned char *)p - MEM_HDR);
}

/* a heap block of the arena's size moves into it: the new pointer (p when
 * it stays; on failure p, with *rc = -ENOMEM) */
static void *move(struct gt_store *s, void *p, int *rc)
{
	if (!p || store_arena_owns(s->arena, p) || heap_size(p) < STORE_ARENA_MIN)
		return p;
	size_t n = heap_size(p);
	void *q = store_arena_alloc_grown(s->arena, n);
	if (!q) {
		*rc = -ENOMEM;
		return p;
	}
	memcpy(q, p, n);
	store_mem_free(s, p);
	return q;
}

static int move_all(struct gt_store *s)
{
	int rc = 0;
	for (size_t i = 0; i < s->n_lanes; i++) {
		struct gt_lane *l = s->lanes[i];
		l->ev = move(s, l->ev, &rc);
		l->blk_start = move(s, l->blk_start, &rc);
		l->blk_maxend = move(s, l->blk_maxend, &rc);
		l->blk_busy = move(s, l->blk_busy, &rc);
		for (int k = 0; k < l->n_lvl; k++) {
			l->lvl_max[k] = move(s, l->lvl_max[k], &rc);
			l->lvl_dur[k] = move(s, l->lvl_dur[k], &rc);
		}
	}
	s->corr_launch = move(s, s->corr_launch, &rc);
	s->corr_gpu = move(s, s->corr_gpu, &rc);
	return rc;
}

/* what stays on the heap whatever the budget: strings, side tables, lane
 * structs, small arrays, the summary's resident levels and loaded pages */
static size_t heap_share(const struct gt_store *s)
{
	size_t b = gt_store_bytes(s), live = store_arena_live(s->arena);
	return (b > live ? b - live : 0) + gt_lsum_resident(s->summary);
}

/* the arena's share of the budget: what the heap leaves, at least a quarter */
static size_t arena_allow(const struct gt_store *s)
{
	size_t h = heap_share(s), q = s->budget / 4;
	size_t a = s->budget > h ? s->budget - h : 0;
	return a > q ? a : q;
}

/* start the cache file.  eager: every array moves into it now (a budget
 * set on a loaded store); else (a store growing past half its budget)
 * each array moves at its next realloc: no burst of copies on the
 * appending thread (a live receiver would stall on it for a second per
 * 100-500 MB) */
static int engage(struct gt_store *s, int eager)
{
	if (s->arena)
		return 0;
	if (s->arena_err)
		return s->arena_err;
	struct store_arena *a = NULL;
	int rc = store_arena_new(arena_allow(s), &a);
	if (rc) {
		s->arena_err = rc;
		return rc;
	}
	/* readers on other threads look at it (gt_store_read_tick) */
	__atomic_store_n(&s->arena, a, __ATOMIC_RELEASE);
	rc = eager ? move_all(s) : 0;
	store_arena_set_allow(s->arena, arena_allow(s));
	store_arena_check(s->arena);
	return rc;
}

void store_budget_poll(struct gt_store *s, size_t more)
{
	if (s->budget && !s->arena && !s->arena_err &&
	    (s->heap_bytes > s->budget / 2 || more > s->budget / 2 - s->heap_bytes))
		engage(s, 0);
}

void store_budget_finished(struct gt_store *s)
{
	if (!s->arena)
		return;
	store_arena_set_allow(s->arena, arena_allow(s));
	store_arena_check(s->arena);
}

void store_budget_ahead(struct gt_store *s, struct gt_lane *l)
{
	if (!store_arena_owns(s->arena, l->ev))
		return;
	size_t from = l->n + STORE_AHEAD_EVENTS, to = from + STORE_AHEAD_EVENTS;
	to = to < l->cap ? to : l->cap;
	if (from < to)
		store_arena_ahead(s->arena, l->ev + from, (to - from) * sizeof(*l->ev));
}

/* what this thread has read of one budgeted store's cache file since it
 * last checked the budget (gt_store_read_tick): the arena, bytes, and the
 * ranges (a run that continues the last range extends it) */
static _Thread_local struct {
	const struct store_arena *arena;
	size_t bytes;
	int n;
	struct store_range r[STORE_READ_RANGES];
} rd;

void gt_store_read_tick(const struct gt_store *s, const struct gt_lane *l, size_t first,
			size_t last)
{
	struct store_arena *a = s ? __atomic_load_n(&s->arena, __ATOMIC_ACQUIRE) : NULL;
	if (!a || !l || !l->ev || last <= first || !store_arena_owns(a, l->ev))
		return;   /* no budget, or a small lane on the heap */
	if (rd.arena != a) {
		/* another store's ranges: its own ticks (or its thread) drop them */
		rd.arena = a;
		rd.bytes = 0;
		rd.n = 0;
	}
	size_t step = store_arena_allow(a) / 8;
	if (step < STORE_READ_CHECK_MIN)
		step = STORE_READ_CHECK_MIN;
	/* the check comes before this range is read: what it drops is what
	 * the thread read before (a range about to be read is not mapped yet) */
	if (rd.bytes >= step || rd.n == STORE_READ_RANGES) {
		store_arena_check_read(a, rd.r, rd.n);
		rd.bytes = 0;
		rd.n = 0;
	}
	uintptr_t from = (uintptr_t)(l->ev + first), to = (uintptr_t)(l->ev + last);
	if (rd.n && rd.r[rd.n - 1].to == from)
		rd.r[rd.n - 1].to = to;
	else
		rd.r[rd.n++] = (struct store_range){ from, to };
	rd.bytes += to - from;
}

void gt_store_read_tick_span(const struct gt_store *s, const struct gt_lane *l, int64_t t0,
			     int64_t t1)
{
	if (!s || !__atomic_load_n(&s->arena, __ATOMIC_RELAXED) || !l->n)
		return;
	size_t a, b;
	gt_store_lane_range(l, t0, t1, &a, &b);
	gt_store_read_tick(s, l, a, b);
}

int gt_store_set_budget(struct gt_store *s, size_t bytes)
{
	s->budget = bytes;
	if (s->arena) {
		store_arena_set_allow(s->arena, bytes ? arena_allow(s) : SIZE_MAX);
		if (bytes)
			store_arena_check(s->arena);
		return 0;
	}
	if (bytes && s->heap_bytes > bytes / 2)
		return engage(s, 1);
	if (bytes && !s->arena_err)
		s->arena_err = store_arena_probe();   /* say now when it cannot work */
	return s->arena_err;
}

size_t gt_store_budget(const struct gt_store *s)
{
	return s->budget;
}

int gt_store_cache_disk_error(const struct gt_store *s)
{
	return store_arena_disk_err(s->arena);
}

int gt_store_copy_in(struct gt_store *s, void *dst, const void *src, size_t n)
{
	if (n && store_arena_owns(s->arena, dst))
		return store_arena_write(s->arena, dst, src, n);
	memcpy(dst, src, n);
	return 0;
}

size_t gt_store_resident_bytes(const struct gt_store *s)
{
	if (!s->arena)
		return heap_share(s);
	return heap_share(s) + store_arena_resident(s->arena);
}

uint64_t gt_store_cache_offloaded(const struct gt_store *s)
{
	return s->arena ? store_arena_deferred(s->arena) + store_arena_populated_calls(s->arena) : 0;
}

void gt_store_lane_fit(struct gt_store *s, uint32_t lane)
{
	struct gt_lane *l = gt_store_lane_at(s, lane);
	if (!l || !l->n || l->cap <= l->n)
		return;
	struct gt_event *e = store_mem_realloc(s, l->ev, l->n * sizeof(*e));
	if (e) {
		l->ev = e;
		l->cap = l->n;
	}
}

uint64_t gt_store_cache_disk_bytes(const struct gt_store *s)
{
	struct stat st;
	if (!s->arena || fstat(store_arena_fd(s->arena), &st))
		return 0;
	return (uint64_t)st.st_blocks * 512;
}
