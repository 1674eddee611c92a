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
#include <unistd.h>
#include "store_priv.h"

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

int store_set_budget(struct gt_store *s, size_t bytes)
{
	s->budget = bytes;
	return 0;
}

size_t store_budget(const struct gt_store *s)
{
	return s->budget;
}

size_t store_resident_bytes(const struct gt_store *s)
{
	return store_bytes(s);
}

void store_lane_fit(struct gt_store *s, uint32_t lane)
{
	struct gt_lane *l = store_lane_at(s, lane);
	if (!l || !l->n || l->cap <= l->n)
		return;
	struct gt_event *e = realloc(l->ev, l->n * sizeof(*e));
	if (e) {
		l->ev = e;
		l->cap = l->n;
	}
}
