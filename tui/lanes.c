/*
 * lanes.c - group the store's lanes into the trace view's row tree:
 * rank (only when there are several) -> GPU -> streams, then
 * rank -> host process -> threads (and counter tracks).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lanes.h"

static const struct gt_store *sort_store;

/* display order: rank, GPUs before hosts, device or pid, sort hint, id */
static int key_cmp(const void *pa, const void *pb)
{
	const struct gt_lane *a = gt_store_lane_at(sort_store, *(const uint32_t *)pa);
	const struct gt_lane *b = gt_store_lane_at(sort_store, *(const uint32_t *)pb);
	int32_t ra = a->key.rank, rb = b->key.rank;
	if (ra != rb)
		return ra < rb ? -1 : 1;
	int ga = a->key.type == GT_LANE_GPU ? 0 : 1, gb = b->key.type == GT_LANE_GPU ? 0 : 1;
	if (ga != gb)
		return ga - gb;
	if (ga == 0 && a->key.device != b->key.device)
		return a->key.device < b->key.device ? -1 : 1;
	if (ga == 1 && a->key.pid != b->key.pid)
		return a->key.pid < b->key.pid ? -1 : 1;
	if (a->key.type != b->key.type)
		return a->key.type - b->key.type;
	if (a->sort_index != b->sort_index) {
		if (!a->sort_index || !b->sort_index)
			return a->sort_index ? -1 : 1;
		return a->sort_index < b->sort_index ? -1 : 1;
	}
	if (a->key.id != b->key.id)
		return a->key.id < b->key.id ? -1 : 1;
	return a->id < b->id ? -1 : 1;
}

enum lanes_role lanes_role_of(const struct gt_lane *l)
{
	size_t nk = 0, nn = 0, nc = 0;
	size_t step = l->n > 512 ? l->n / 512 : 1;
	for (size_t i = 0; i < l->n; i += step) {
		const struct gt_event *e = &l->ev[i];
		if (e->kind == GT_EV_KERNEL) {
			if (e->flags & GT_EVF_NCCL)
				nn++;
			else
				nk++;
		} else if (e->kind == GT_EV_MEMCPY || e->kind == GT_EV_MEMSET) {
			nc++;
		}
	}
	size_t tot = nk + nn + nc;
	if (!tot)
		return LROLE_NONE;
	if (nn * 10 >= tot * 9)
		return LROLE_NCCL;
	if (nc * 10 >= tot * 9)
		return LROLE_COPY;
	if (nk * 10 >= tot * 9)
		return LROLE_COMPUTE;
	return LROLE_MIXED;
}

const char *lanes_role_name(enum lanes_role r)
{
	static const char *n[] = { "", "compute", "copy", "NCCL", "mixed" };
	return (unsigned)r < 5 ? n[r] : "";
}

/* a named lane that is no CUDA stream (an XPlane annotation line such as
 * "TensorFlow Name Scope", its id made up, was "s-5590"): its name's
 * last words within LANES_SHORT_NAME columns ("Scope", "Ops": the
 * narrow label column is 7 wide at 40 columns), else its head */
#define LANES_SHORT_NAME 6
static void short_name(const char *nm, char *buf, size_t len)
{
	size_t n = strlen(nm);
	const char *best = NULL;
	for (const char *p = nm + n; p > nm; p--)
		if (p[-1] == ' ' && (size_t)(nm + n - p) <= LANES_SHORT_NAME && *p)
			best = p;
	if (n <= LANES_SHORT_NAME)
		best = nm;
	if (best)
		snprintf(buf, len, "%s", best);
	else
		snprintf(buf, len, "%.*s", LANES_SHORT_NAME, nm);
}

/* "GPU 0 H100 80GB HBM3": the ordinal and the device name without "NVIDIA " */
static void gpu_label(const struct gt_store *s, int32_t rank, int32_t dev, char *buf, size_t len)
{
	const char *nm = "";
	for (size_t i = 0; i < gt_store_device_count(s); i++) {
		const struct gt_device *d = gt_store_device_at(s, i);
		if (d->id == dev && d->rank == rank && d->name)
			nm = gt_store_str(s, d->name);
	}
	if (!strncmp(nm, "NVIDIA ", 7))
		nm += 7;
	snprintf(buf, len, "GPU %d%s%s", dev, *nm ? " " : "", nm);
}

/* append a zeroed row; NULL on no memory */
static struct lanes_row *push(struct lanes_row **v, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct lanes_row *p = realloc(*v, nc * sizeof(*p));
		if (!p)
			return NULL;
		*v = p;
		*cap = nc;
	}
	struct lanes_row *r = &(*v)[(*n)++];
	memset(r, 0, sizeof(*r));
	return r;
}

/* depth rows shown below `lane` in the old tree */
static int old_ndepth(const struct lanes *L, uint32_t lane)
{
	for (size_t i = 0; i < L->nall; i++)
		if (L->all[i].kind == LROW_LANE && L->all[i].lane == lane)
			return L->all[i].ndepth;
	return 0;
}

/* push the n depth rows of lane row `lr` (index); -1 on no memory */
static int push_depth(struct lanes_row **v, size_t *nr, size_t *cap, size_t lr, int n)
{
	(*v)[lr].ndepth = (uint8_t)n;
	for (int k = 0; k < n; k++) {
		struct lanes_row *r = push(v, nr, cap);
		if (!r)
			return -1;
		const struct lanes_row *p = &(*v)[lr];
		r->kind = LROW_DEPTH;
		r->depth = (uint8_t)(p->depth + 1);
		r->rank = p->rank;
		r->device = p->device;
		r->pid = p->pid;
		r->lane = p->lane;
		r->level = (uint8_t)k;
		snprintf(r->label, sizeof(r->label), "depth %d", k);
		snprintf(r->short_label, sizeof(r->short_label), "d%d", k);
	}
	return 0;
}

/* subtree ends: a group ends where a row of its level or above starts */
static void set_ends(struct lanes_row *rows, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		if (rows[i].kind >= LROW_LANE)
			continue;
		size_t j = i + 1;
		while (j < nr && (rows[j].kind >= LROW_LANE ||
				  (rows[i].kind == LROW_RANK && rows[j].kind != LROW_RANK)))
			j++;
		rows[i].end = (uint32_t)j;
	}
}

/* fold state of a group row in the old tree, -1 when absent */
static int old_fold(const struct lanes *L, const struct lanes_row *r)
{
	for (size_t i = 0; i < L->nall; i++) {
		const struct lanes_row *o = &L->all[i];
		if (o->kind == r->kind && o->kind != LROW_LANE && o->rank == r->rank &&
		    o->device == r->device && o->pid == r->pid)
			return o->folded;
	}
	return -1;
}

int lanes_build(struct lanes *L, const struct gt_store *s)
{
	size_t n = gt_store_lane_count(s);
	uint32_t *ord = malloc((n ? n : 1) * sizeof(*ord));
	if (!ord)
		return -ENOMEM;
	int multi_rank = 0;
	for (size_t i = 0; i < n; i++) {
		ord[i] = (uint32_t)i;
		int32_t r = gt_store_lane_at(s, (uint32_t)i)->key.rank;
		if (r > 0)
			multi_rank = 1;
	}
	sort_store = s;
	qsort(ord, n, sizeof(*ord), key_cmp);
	struct lanes_row *rows = NULL;
	size_t nr = 0, cap = 0;
	long g_rank = -1, g_sub = -1;
	for (size_t i = 0; i < n; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, ord[i]);
		int32_t rank = l->key.rank;
		int gpu = l->key.type == GT_LANE_GPU;
		/* tracks without a real process (pid <= 0) share one "other tracks" group */
		int64_t hpid = l->key.pid > 0 ? l->key.pid : 0;
		const struct lanes_row *pr = g_sub >= 0 ? &rows[g_sub] : NULL;
		int new_rank = multi_rank && (g_rank < 0 || rows[g_rank].rank != rank);
		int new_sub = new_rank || !pr || pr->rank != rank ||
			      pr->kind != (gpu ? LROW_GPU : LROW_HOST) ||
			      (gpu ? pr->device != l->key.device : pr->pid != hpid);
		struct lanes_row *r;
		if (new_rank) {
			if (!(r = push(&rows, &nr, &cap)))
				goto err;
			r->kind = LROW_RANK;
			r->rank = rank;
			r->device = -1;
			snprintf(r->label, sizeof(r->label), "rank %d", rank);
			snprintf(r->short_label, sizeof(r->short_label), "r%d", rank);
			g_rank = (long)nr - 1;
		}
		if (new_sub) {
			if (!(r = push(&rows, &nr, &cap)))
				goto err;
			r->kind = gpu ? LROW_GPU : LROW_HOST;
			r->depth = multi_rank;
			r->rank = rank;
			r->device = gpu ? l->key.device : -1;
			r->pid = gpu ? 0 : hpid;
			if (gpu)
				gpu_label(s, rank, l->key.device, r->label, sizeof(r->label));
			else if (l->key.pid > 0)
				snprintf(r->label, sizeof(r->label), "host pid %lld", (long long)l->key.pid);
			else
				snprintf(r->label, sizeof(r->label), "other tracks");
			if (gpu)
				snprintf(r->short_label, sizeof(r->short_label), "GPU %d", l->key.device);
			else
				snprintf(r->short_label, sizeof(r->short_label), "host");
			g_sub = (long)nr - 1;
		}
		if (!(r = push(&rows, &nr, &cap)))
			goto err;
		r->kind = LROW_LANE;
		r->depth = (uint8_t)(multi_rank + 1);
		r->rank = rank;
		r->device = gpu ? l->key.device : -1;
		r->pid = l->key.pid;
		r->lane = l->id;
		const char *nm = l->name ? gt_store_str(s, l->name) : NULL;
		if (nm && !nm[strspn(nm, " ")])
			nm = NULL;   /* blank */
		if (nm && gpu) {
			/* the group row already says "GPU n" */
			char pre[24];
			int k = snprintf(pre, sizeof(pre), "GPU %d ", l->key.device);
			if (k > 0 && !strncmp(nm, pre, (size_t)k) && nm[k])
				nm += k;
		}
		if (gpu && l->key.id < 0 && nm && *nm)
			short_name(nm, r->short_label, sizeof(r->short_label));
		else if (gpu)
			snprintf(r->short_label, sizeof(r->short_label), "s%lld %s", (long long)l->key.id,
				 lanes_role_name((enum lanes_role)lanes_role_of(l)));
		else
			snprintf(r->short_label, sizeof(r->short_label), "%s%lld",
				 l->key.type == GT_LANE_COUNTER ? "c" : "t", (long long)l->key.id);
		if (gpu) {
			r->role = (uint8_t)lanes_role_of(l);
			if (nm && *nm && strcasestr(nm, lanes_role_name(r->role)))
				snprintf(r->label, sizeof(r->label), "%s", nm);
			else if (nm && *nm)
				snprintf(r->label, sizeof(r->label), "%s %s", nm, lanes_role_name(r->role));
			else
				snprintf(r->label, sizeof(r->label), "stream %lld %s", (long long)l->key.id,
					 lanes_role_name(r->role));
		} else if (nm && *nm) {
			snprintf(r->label, sizeof(r->label), "%s", nm);
		} else if (l->key.type == GT_LANE_COUNTER) {
			snprintf(r->label, sizeof(r->label), "counter %lld", (long long)l->key.id);
		} else {
			snprintf(r->label, sizeof(r->label), "thread %lld", (long long)l->key.id);
		}
		int nd = old_ndepth(L, l->id);
		if (nd && push_depth(&rows, &nr, &cap, nr - 1, nd))
			goto err;
	}
	set_ends(rows, nr);
	for (size_t i = 0; i < nr; i++) {
		if (rows[i].kind >= LROW_LANE)
			continue;
		int f = old_fold(L, &rows[i]);
		rows[i].folded = f > 0;
	}
	uint32_t *vis = malloc((nr ? nr : 1) * sizeof(*vis));
	if (!vis)
		goto err;
	free(ord);
	free(L->all);
	free(L->vis);
	L->all = rows;
	L->nall = nr;
	L->vis = vis;
	L->nlanes_seen = n;
	lanes_update_vis(L);
	return 0;
err:
	free(rows);
	free(ord);
	return -ENOMEM;
}

int lanes_set_depth(struct lanes *L, uint32_t lane, int n)
{
	if (n < 0)
		n = 0;
	if (n > 255)
		n = 255;
	struct lanes_row *rows = NULL;
	size_t nr = 0, cap = 0;
	for (size_t i = 0; i < L->nall; i++) {
		const struct lanes_row *o = &L->all[i];
		if (o->kind == LROW_DEPTH && o->lane == lane)
			continue;
		struct lanes_row *r = push(&rows, &nr, &cap);
		if (!r)
			goto err;
		*r = *o;
		if (o->kind == LROW_LANE && o->lane == lane && push_depth(&rows, &nr, &cap, nr - 1, n))
			goto err;
	}
	uint32_t *vis = malloc((nr ? nr : 1) * sizeof(*vis));
	if (!vis)
		goto err;
	set_ends(rows, nr);
	free(L->all);
	free(L->vis);
	L->all = rows;
	L->nall = nr;
	L->vis = vis;
	lanes_update_vis(L);
	return 0;
err:
	free(rows);
	return -ENOMEM;
}

void lanes_done(struct lanes *L)
{
	free(L->all);
	free(L->vis);
	memset(L, 0, sizeof(*L));
}

void lanes_update_vis(struct lanes *L)
{
	size_t nv = 0;
	for (size_t i = 0; i < L->nall;) {
		L->vis[nv++] = (uint32_t)i;
		if (L->all[i].kind < LROW_LANE && L->all[i].folded)
			i = L->all[i].end;
		else
			i++;
	}
	L->nvis = nv;
}

void lanes_toggle(struct lanes *L, size_t v)
{
	if (v >= L->nvis)
		return;
	struct lanes_row *r = &L->all[L->vis[v]];
	if (r->kind >= LROW_LANE)
		return;
	r->folded = !r->folded;
	lanes_update_vis(L);
}

void lanes_fold_all(struct lanes *L, int folded)
{
	for (size_t i = 0; i < L->nall; i++)
		if (L->all[i].kind == LROW_GPU || L->all[i].kind == LROW_HOST ||
		    (!folded && L->all[i].kind == LROW_RANK))
			L->all[i].folded = (uint8_t)(folded != 0);
	lanes_update_vis(L);
}

size_t lanes_find(struct lanes *L, uint32_t lane)
{
	size_t at = SIZE_MAX;
	for (size_t i = 0; i < L->nall; i++)
		if (L->all[i].kind == LROW_LANE && L->all[i].lane == lane)
			at = i;
	if (at == SIZE_MAX)
		return SIZE_MAX;
	for (size_t i = 0; i < at; i++)
		if (L->all[i].kind < LROW_LANE && L->all[i].end > at)
			L->all[i].folded = 0;
	lanes_update_vis(L);
	for (size_t v = 0; v < L->nvis; v++)
		if (L->vis[v] == at)
			return v;
	return SIZE_MAX;
}
