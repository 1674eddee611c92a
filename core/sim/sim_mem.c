/*
 * sim_mem.c - planted allocator records (GT_SIM_F_MEMORY, GT_SIM_F_MEMLEAK): per
 * step and rank, on device 0, derived from the step's CPU ops in host order
 * (no random draws, so the rest of the capture is unchanged):
 *   ops 0 .. h-1 (the first half of the step's CPU ops, DataLoader aside)
 *   allocate SIM_MEM_ACT each in their middle, ops h .. 2h-1 free one each;
 *   op h-1 also allocates SIM_MEM_PEAK at a quarter of its span and frees
 *   it at three quarters: the peak is in op h-1, at its middle;
 *   with GT_SIM_F_MEMLEAK op 0 allocates SIM_MEM_LEAK at a third of its span,
 *   never freed: allocated memory grows by that much every step.
 * Records are GT_EVF_MEMORY instants on the rank's host thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sim_priv.h"

/* records one rank adds per step when the plan has n_ops CPU ops */
uint64_t sim_mem_events(const struct gt_sim_opts *o, uint64_t n_ops)
{
	if (!(o->flags & (GT_SIM_F_MEMORY | GT_SIM_F_MEMLEAK)))
		return 0;
	return 2 * (n_ops / 2) + 2 + (o->flags & GT_SIM_F_MEMLEAK ? 1 : 0);
}

static int put(struct sim_buf *b, uint32_t lane, uint32_t name, int64_t t, int64_t bytes)
{
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 1024;
		struct gt_event *ne = realloc(b->ev, nc * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		b->ev = ne;
		b->cap = nc;
	}
	struct gt_event *e = &b->ev[b->n++];
	memset(e, 0, sizeof(*e));
	e->start_ns = t;
	e->lane = lane;
	e->name = name;
	e->kind = GT_EV_INSTANT;
	e->flags = GT_EVF_MEMORY;
	e->aux = 0;
	memcpy(&e->arg, &bytes, sizeof(bytes));
	return 0;
}

int sim_mem_step(struct gt_sim *sim)
{
	uint32_t name = gt_store_intern_cstr(sim->st, "[memory]");
	for (int r = 0; r < sim->o.ranks; r++) {
		struct sim_rank *rk = &sim->rk[r];
		struct sim_buf *b = &rk->host;
		size_t n0 = b->n, nops = 0;
		for (size_t i = 0; i < n0; i++)
			nops += b->ev[i].kind == GT_EV_CPU_OP && !(b->ev[i].flags & GT_EVF_DATALOADER);
		size_t h = nops / 2, k = 0;
		int rc = 0;
		for (size_t i = 0; i < n0 && !rc && k < 2 * h; i++) {
			const struct gt_event op = b->ev[i];   /* copy: put() may move the buffer */
			if (op.kind != GT_EV_CPU_OP || (op.flags & GT_EVF_DATALOADER))
				continue;
			int64_t mid = op.start_ns + op.dur_ns / 2;
			if (k == 0 && (sim->o.flags & GT_SIM_F_MEMLEAK))
				rc = put(b, rk->host_lane, name, op.start_ns + op.dur_ns / 3, SIM_MEM_LEAK);
			if (!rc && k == h - 1)
				rc = put(b, rk->host_lane, name, op.start_ns + op.dur_ns / 4, SIM_MEM_PEAK);
			if (!rc)
				rc = put(b, rk->host_lane, name, mid, k < h ? SIM_MEM_ACT : -SIM_MEM_ACT);
			if (!rc && k == h - 1)
				rc = put(b, rk->host_lane, name, op.start_ns + 3 * op.dur_ns / 4,
					 -SIM_MEM_PEAK);
			k++;
		}
		if (rc)
			return rc;
	}
	return 0;
}
