/*
 * opsmap.h - a map from a 64-bit key (rank << 32 | id, never 0) to three
 * int64 sums and a flag, for the operator table's correlation and external
 * id joins.  Open addressing, linear probing, grows at 1/2 load.
 */
#ifndef GTRACE_ANALYSIS_OPSMAP_H
#define GTRACE_ANALYSIS_OPSMAP_H

#include <stddef.h>
#include <stdint.h>

struct opsmap_val {
	int64_t a, b, c;
	int taken;
};

struct opsmap {
	uint64_t *key;            /* 0 = empty slot */
	struct opsmap_val *val;
	size_t mask, n;
};

static inline uint64_t opsmap_key(int32_t rank, uint32_t id)
{
	return ((uint64_t)(uint32_t)rank << 32 | id) + 1;
}

/* an empty map with room for about `hint` keys; 0 or -ENOMEM */
int opsmap_init(struct opsmap *m, size_t hint);
void opsmap_done(struct opsmap *m);
/* the value of key, or NULL */
struct opsmap_val *opsmap_get(const struct opsmap *m, uint64_t key);
/* the value of key, added zeroed when new; NULL on ENOMEM */
struct opsmap_val *opsmap_put(struct opsmap *m, uint64_t key);

#endif
