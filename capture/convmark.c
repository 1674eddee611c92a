/*
 * convmark.c - open NVTX ranges by marker id (capture/convmark.h).
 * Linear probing over a power-of-two table kept at most half full;
 * removal shifts the following run back, so no tombstones pile up.
 */
#include <errno.h>
#include <stdlib.h>
#include "convmark.h"

static size_t slot_of(uint32_t id, size_t cap)
{
	return (size_t)(id * 2654435761u) & (cap - 1);
}

void convmark_done(struct convmark *m)
{
	free(m->t);
	m->t = NULL;
	m->cap = m->n = 0;
}

static int grow(struct convmark *m)
{
	size_t cap = m->cap ? m->cap * 2 : 256;
	struct convmark_ent *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->t[i].id)
			continue;
		size_t j = slot_of(m->t[i].id, cap);
		while (t[j].id)
			j = (j + 1) & (cap - 1);
		t[j] = m->t[i];
	}
	free(m->t);
	m->t = t;
	m->cap = cap;
	return 0;
}

int convmark_put(struct convmark *m, const struct convmark_ent *e)
{
	if (m->cap) {
		for (size_t j = slot_of(e->id, m->cap); m->t[j].id; j = (j + 1) & (m->cap - 1)) {
			if (m->t[j].id == e->id) {
				m->t[j] = *e;
				return 1;
			}
		}
	}
	if (m->n >= CONVMARK_MAX)
		return -ENOSPC;
	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -ENOMEM;
	size_t j = slot_of(e->id, m->cap);
	while (m->t[j].id)
		j = (j + 1) & (m->cap - 1);
	m->t[j] = *e;
	m->n++;
	return 0;
}

int convmark_take(struct convmark *m, uint32_t id, struct convmark_ent *out)
{
	if (!m->cap || !id)
		return 0;
	size_t mask = m->cap - 1, j = slot_of(id, m->cap);
	while (m->t[j].id && m->t[j].id != id)
		j = (j + 1) & mask;
	if (!m->t[j].id)
		return 0;
	*out = m->t[j];
	m->t[j].id = 0;
	m->n--;
	/* shift back the entries after the hole that may sit past their home */
	for (size_t k = (j + 1) & mask; m->t[k].id; k = (k + 1) & mask) {
		size_t home = slot_of(m->t[k].id, m->cap);
		/* k's entry may move to j when its home is not in (j, k] */
		int movable = j <= k ? (home <= j || home > k) : (home <= j && home > k);
		if (movable) {
			m->t[j] = m->t[k];
			m->t[k].id = 0;
			j = k;
		}
	}
	return 1;
}
