/*
 * opsmap.h - a map from a 64-bit key (rank << 32 | id, never 0) to three
 * int64 sums and a flag, for the operator table's correlation and external
 * id joins.  Hashed: open addressing, linear probing, grows at 1/2 load.
 * Dense (ids that mostly fall in a range known beforehand, as correlation
 * and external ids do): an array indexed by key - lo, no hashing; a key
 * outside the range goes to a hashed overflow map.  Under a memory budget
 * a dense map's array and bitmap may live in a spill (core/util/spill.h):
 * each get or put that moves to another page of the array announces it
 * (the callers walk ids mostly in order: one announcement a page).
 */
#ifndef GTRACE_ANALYSIS_OPSMAP_H
#define GTRACE_ANALYSIS_OPSMAP_H

#include <stddef.h>
#include <stdint.h>
#include "../util/spill.h"

struct opsmap_val {
	int64_t a, b, c;
	int taken;
};

struct opsmap {
	uint64_t *key;            /* hashed: 0 = empty slot; dense: NULL */
	struct opsmap_val *val;
	size_t mask, n;
	uint64_t lo, span;        /* dense: keys lo .. lo + span - 1 */
	uint64_t *used;           /* dense: bit per slot, set = put (val is zeroed then) */
	size_t val_bytes;         /* dense: size of the val block (a reused scratch block) */
	struct opsmap *spill;     /* dense: keys outside the range (NULL = none yet) */
	struct spill *sp;         /* dense: the spill holding val and used (NULL: the heap) */
	uint64_t pg;              /* ... the page of val touched last, + 1 (0: none yet) */
};

static inline uint64_t opsmap_key(int32_t rank, uint32_t id)
{
	return ((uint64_t)(uint32_t)rank << 32 | id) + 1;
}

/* an empty map with room for about `hint` keys; 0 or -ENOMEM */
int opsmap_init(struct opsmap *m, size_t hint);
/* a dense map for keys lo .. hi, its arrays in sp when sp is not NULL and
 * has the room (else on the heap); 0 or -ENOMEM */
int opsmap_init_dense(struct opsmap *m, uint64_t lo, uint64_t hi, struct spill *sp);
void opsmap_done(struct opsmap *m);
struct opsmap_val *opsmap_get_hashed(const struct opsmap *m, uint64_t key);
struct opsmap_val *opsmap_put_hashed(struct opsmap *m, uint64_t key);

/* the value of key, or NULL */
static inline struct opsmap_val *opsmap_get(struct opsmap *m, uint64_t key)
{
	if (m->key || !m->val)
		return opsmap_get_hashed(m, key);
	uint64_t i = key - m->lo;
	if (key >= m->lo && i < m->span) {
		if (m->sp)
			spill_touch_walk(m->sp, &m->pg, i * sizeof(*m->val));
		return (m->used[i >> 6] >> (i & 63)) & 1 ? &m->val[i] : NULL;
	}
	return m->spill ? opsmap_get_hashed(m->spill, key) : NULL;
}

struct opsmap_val *opsmap_put_spill(struct opsmap *m, uint64_t key);

/* the value of key, added zeroed when new; NULL on ENOMEM */
static inline struct opsmap_val *opsmap_put(struct opsmap *m, uint64_t key)
{
	if (m->key || !m->val)
		return opsmap_put_hashed(m, key);
	uint64_t i = key - m->lo;
	if (key < m->lo || i >= m->span)
		return opsmap_put_spill(m, key);
	if (m->sp)
		spill_touch_walk(m->sp, &m->pg, i * sizeof(*m->val));
	if (!((m->used[i >> 6] >> (i & 63)) & 1)) {
		m->used[i >> 6] |= 1ull << (i & 63);
		m->val[i] = (struct opsmap_val){ 0 };
	}
	return &m->val[i];
}

#endif
