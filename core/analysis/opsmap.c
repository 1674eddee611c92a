/*
 * opsmap.c - 64-bit key map of the operator table (opsmap.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis.h"
#include "opsmap.h"

static size_t slot(uint64_t k, size_t mask)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & mask;
}

int opsmap_init(struct opsmap *m, size_t hint)
{
	size_t cap = 16;
	while (cap < 2 * hint)
		cap *= 2;
	m->key = calloc(cap, sizeof(*m->key));
	m->val = calloc(cap, sizeof(*m->val));
	m->mask = cap - 1;
	m->n = 0;
	if (!m->key || !m->val) {
		opsmap_done(m);
		return -ENOMEM;
	}
	return 0;
}

static size_t used_bytes(const struct opsmap *m)
{
	return (m->span + 63) / 64 * sizeof(*m->used);
}

int opsmap_init_dense(struct opsmap *m, uint64_t lo, uint64_t hi, struct spill *sp)
{
	memset(m, 0, sizeof(*m));
	m->lo = lo;
	m->span = hi - lo + 1;
	if (sp) {
		/* zeroed scratch; a full disk leaves it to the heap */
		m->val = spill_alloc(sp, m->span * sizeof(*m->val));
		m->used = m->val ? spill_alloc(sp, used_bytes(m)) : NULL;
		if (m->used) {
			m->sp = sp;
			return 0;
		}
		if (m->val)
			spill_release(sp, m->val, m->span * sizeof(*m->val));
		m->val = NULL;
	}
	/* values are zeroed when first put: a reused block needs no clearing */
	m->val = analysis_mem_get(m->span * sizeof(*m->val), &m->val_bytes);
	m->used = calloc((m->span + 63) / 64, sizeof(*m->used));
	if (!m->val || !m->used) {
		opsmap_done(m);
		return -ENOMEM;
	}
	return 0;
}

struct opsmap_val *opsmap_put_spill(struct opsmap *m, uint64_t key)
{
	if (!m->spill) {
		m->spill = calloc(1, sizeof(*m->spill));
		if (!m->spill || opsmap_init(m->spill, 64)) {
			free(m->spill);
			m->spill = NULL;
			return NULL;
		}
	}
	return opsmap_put_hashed(m->spill, key);
}

void opsmap_done(struct opsmap *m)
{
	if (m->spill) {
		opsmap_done(m->spill);
		free(m->spill);
	}
	if (m->sp) {
		spill_release(m->sp, m->val, m->span * sizeof(*m->val));
		spill_release(m->sp, m->used, used_bytes(m));
		memset(m, 0, sizeof(*m));
		return;
	}
	if (m->used)
		analysis_mem_put(m->val, m->val_bytes);
	else
		free(m->val);
	free(m->used);
	free(m->key);
	memset(m, 0, sizeof(*m));
}

struct opsmap_val *opsmap_get_hashed(const struct opsmap *m, uint64_t key)
{
	if (!m->key)
		return NULL;
	for (size_t i = slot(key, m->mask);; i = (i + 1) & m->mask) {
		if (m->key[i] == key)
			return &m->val[i];
		if (!m->key[i])
			return NULL;
	}
}

static int grow(struct opsmap *m)
{
	struct opsmap o = *m;
	if (opsmap_init(m, o.mask + 1))
		return (*m = o, -ENOMEM);
	for (size_t i = 0; i <= o.mask; i++) {
		if (!o.key[i])
			continue;
		size_t j = slot(o.key[i], m->mask);
		while (m->key[j])
			j = (j + 1) & m->mask;
		m->key[j] = o.key[i];
		m->val[j] = o.val[i];
		m->n++;
	}
	opsmap_done(&o);
	return 0;
}

struct opsmap_val *opsmap_put_hashed(struct opsmap *m, uint64_t key)
{
	if (2 * (m->n + 1) > m->mask + 1 && grow(m))
		return NULL;
	size_t i = slot(key, m->mask);
	for (; m->key[i]; i = (i + 1) & m->mask)
		if (m->key[i] == key)
			return &m->val[i];
	m->key[i] = key;
	memset(&m->val[i], 0, sizeof(m->val[i]));
	m->n++;
	return &m->val[i];
}
