/*
 * kineto_open.c - per-thread stacks of open B events (kineto_open.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kineto_open.h"

static size_t slot_of(int64_t pid, int64_t tid, size_t mask)
{
	uint64_t h = (uint64_t)pid * 0x9E3779B97F4A7C15ull ^ (uint64_t)tid * 0xC2B2AE3D27D4EB4Full;
	return (size_t)(h ^ (h >> 29)) & mask;
}

/* the slot of (pid, tid), or the free slot where it goes */
static struct kineto_open_top *find(struct kineto_open_top *tab, size_t cap, int64_t pid, int64_t tid)
{
	size_t j = slot_of(pid, tid, cap - 1);
	while (tab[j].used && (tab[j].pid != pid || tab[j].tid != tid))
		j = (j + 1) & (cap - 1);
	return &tab[j];
}

static int grow_tab(struct kineto_opens *o)
{
	size_t nc = o->tcap ? o->tcap * 2 : 64;
	struct kineto_open_top *nt = calloc(nc, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < o->tcap; i++)
		if (o->tab[i].used)
			*find(nt, nc, o->tab[i].pid, o->tab[i].tid) = o->tab[i];
	free(o->tab);
	o->tab = nt;
	o->tcap = nc;
	return 0;
}

int kineto_open_push(struct kineto_opens *o, int64_t pid, int64_t tid, uint32_t lane, uint32_t idx)
{
	if (o->n == o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 256;
		struct kineto_open *np = realloc(o->pool, nc * sizeof(*np));
		if (!np)
			return -ENOMEM;
		o->pool = np;
		o->cap = nc;
	}
	if ((o->tn + 1) * 2 > o->tcap && grow_tab(o))
		return -ENOMEM;
	struct kineto_open_top *t = find(o->tab, o->tcap, pid, tid);
	if (!t->used) {
		*t = (struct kineto_open_top){ pid, tid, 0, 1 };
		o->tn++;
	}
	o->pool[o->n] = (struct kineto_open){ lane, idx, t->top };
	t->top = ++o->n;
	return 0;
}

int kineto_open_pop(struct kineto_opens *o, int64_t pid, int64_t tid, struct kineto_open *out)
{
	if (!o->tcap)
		return 0;
	struct kineto_open_top *t = find(o->tab, o->tcap, pid, tid);
	if (!t->used || !t->top)
		return 0;
	*out = o->pool[t->top - 1];
	t->top = out->prev;
	return 1;
}

void kineto_open_done(struct kineto_opens *o)
{
	free(o->pool);
	free(o->tab);
	memset(o, 0, sizeof(*o));
}
