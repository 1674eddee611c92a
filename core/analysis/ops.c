/*
 * ops.c - the operator table (gtrace/ops.h has the rules).
 *
 * Three passes.  1: GPU work summed per (rank, correlation id) into a map.
 * 2: runtime calls summed per (rank, external id): their durations and the
 * GPU work of their correlation ids.  3: per host lane, the operators and
 * step spans walked in nesting order with a stack of open frames; a frame
 * closes when the next event starts at or after its end and hands its
 * finished figures to its parent.  A parent holds its first child back
 * (`pending`) until it knows whether that child is its only one of the same
 * name (then merged, not counted) or not (then counted).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/ops.h"
#include "analysis.h"
#include "ops_priv.h"
#include "opsmap.h"

/* name class bits, cached per string id (bit 7: known) */
#define NC_TC_OP   0x01u
#define NC_TC_KERN 0x02u
#define NC_EXCL    0x04u
#define NC_KNOWN   0x80u

struct ctx {
	const struct gt_store *s;
	uint8_t *cls;               /* per string id */
	uint32_t *row_of;           /* per string id: row + 1, 0 = none (by name) */
	struct opsmap rows;         /* (name, key) -> row + 1 in .a (by shape / stack) */
	int group;                  /* enum gt_ops_group */
	uint32_t nstr;
	struct gt_ops_result *r;
	size_t cap;
	struct opsmap corr;         /* (rank, corr) -> device ns, tc ns */
	struct opsmap ext;          /* (rank, ext) -> runtime ns, device ns, tc ns, taken */
	int32_t rank;               /* the rank whose maps these are */
	size_t budget;              /* the store's memory budget (0: none) */
	struct spill *sp;           /* under it, the dense maps of a big rank (NULL: none yet) */
	int sp_tried;
	int64_t t0, t1;
	int mem;                    /* attribute allocator records of mem_dev */
	uint32_t mem_dev;
};

static unsigned name_class(struct ctx *c, uint32_t name)
{
	if (!(c->cls[name] & NC_KNOWN)) {
		const char *n = gt_store_str(c->s, name);
		c->cls[name] = (uint8_t)(NC_KNOWN | (gt_ops_tc_op_name(n) ? NC_TC_OP : 0) |
					 (gt_ops_tc_kernel_name(n) ? NC_TC_KERN : 0) |
					 (ops_excluded_name(n) ? NC_EXCL : 0));
	}
	return c->cls[name];
}

/* a node's finished figures */
struct fin {
	uint32_t name;
	uint32_t key;               /* the row key beside the name (shapes / stack id) */
	uint8_t has_stack;
	uint8_t is_op, counted;
	int tc_elig;
	int64_t dur, host_self, dev_total, dev_self, tc_self, tc_total;
	/* what a same-name parent inherits when it merges this node */
	int64_t kid_dur, kid_dev, kid_tc, rt_dur, rt_dev, rt_tc;
	int kid_tc_any;
	uint8_t op_node;            /* an operator of the plugin's table (records stick) */
	int64_t mem_self[3], mem_kid[3], mem_total[3];  /* increase, alloc count, alloc bytes */
};

struct frame {
	int64_t end;
	struct fin f;               /* name, is_op, counted, dur; the rest on close */
	uint32_t nkids;
	int64_t kid_dur, kid_dev, kid_tc, rt_dur, rt_dev, rt_tc;
	int kid_tc_any, has_pending;
	int64_t mem_self[3], mem_kid[3];
	struct fin pending;
};

static int emit(struct ctx *c, const struct fin *f)
{
	if (!f->counted)
		return 0;
	struct gt_ops_result *r = c->r;
	struct opsmap_val *slot = NULL;
	uint32_t k;
	if (c->group == GT_OPS_BY_NAME) {
		k = c->row_of[f->name];
	} else {
		slot = opsmap_put(&c->rows, opsmap_key((int32_t)f->name, f->key));
		if (!slot)
			return -ENOMEM;
		k = (uint32_t)slot->a;
	}
	if (!k) {
		if (r->n == c->cap) {
			size_t nc = c->cap ? 2 * c->cap : 64;
			struct gt_ops_row *v = realloc(r->rows, nc * sizeof(*v));
			if (!v)
				return -ENOMEM;
			r->rows = v;
			c->cap = nc;
		}
		memset(&r->rows[r->n], 0, sizeof(r->rows[0]));
		r->rows[r->n].name = f->name;
		r->rows[r->n].key = f->key;
		k = (uint32_t)++r->n;
		if (slot)
			slot->a = k;
		else
			c->row_of[f->name] = k;
	}
	struct gt_ops_row *o = &r->rows[k - 1];
	o->calls++;
	o->has_stack |= f->has_stack;
	o->host_total_ns += f->dur;
	o->host_self_ns += f->host_self;
	o->dev_total_ns += f->dev_total;
	o->dev_self_ns += f->dev_self;
	o->tc_self_ns += f->tc_self;
	o->tc_total_ns += f->tc_total;
	o->tc_eligible |= f->tc_elig;
	o->mem_self_inc += f->mem_self[0];
	o->mem_self_alloc_n += f->mem_self[1];
	o->mem_self_alloc_bytes += f->mem_self[2];
	o->mem_inc += f->mem_total[0];
	o->mem_alloc_n += f->mem_total[1];
	o->mem_alloc_bytes += f->mem_total[2];
	r->ops_seen++;
	return 0;
}

/* hand a closed child's figures to its parent */
static int give(struct ctx *c, struct frame *p, const struct fin *f)
{
	p->nkids++;
	p->kid_dur += f->dur;
	p->kid_dev += f->dev_total;
	p->kid_tc += f->tc_total;
	p->kid_tc_any |= f->tc_elig;
	for (int k = 0; k < 3; k++)
		p->mem_kid[k] += f->mem_total[k];
	if (p->nkids == 1) {
		p->pending = *f;
		p->has_pending = 1;
		return 0;
	}
	int rc = 0;
	if (p->has_pending)
		rc = emit(c, &p->pending);
	p->has_pending = 0;
	return rc ? rc : emit(c, f);
}

/* close frame p: merge a lone same-name child (or count it), finish p's
 * figures; 0 or -ENOMEM */
static int close_frame(struct ctx *c, struct frame *p)
{
	struct fin *f = &p->f;
	int rc = 0;
	if (p->nkids == 1 && p->has_pending && p->pending.name == f->name && f->is_op &&
	    p->pending.is_op) {
		const struct fin *k = &p->pending;
		p->kid_dur = k->kid_dur;
		p->kid_dev = k->kid_dev;
		p->kid_tc = k->kid_tc;
		p->kid_tc_any = k->kid_tc_any;
		p->rt_dur = k->rt_dur;
		p->rt_dev = k->rt_dev;
		p->rt_tc = k->rt_tc;
		for (int m = 0; m < 3; m++) {
			p->mem_self[m] += k->mem_self[m];  /* its records are now the parent's */
			p->mem_kid[m] = k->mem_kid[m];
		}
		p->has_pending = 0;       /* merged: not counted */
	} else if (p->has_pending) {
		rc = emit(c, &p->pending);
		p->has_pending = 0;
	}
	f->host_self = f->dur - p->kid_dur - p->rt_dur;
	f->dev_self = p->rt_dev;
	f->dev_total = p->kid_dev + p->rt_dev;
	f->tc_self = p->rt_tc;
	f->tc_total = p->kid_tc + p->rt_tc;
	f->tc_elig = (name_class(c, f->name) & NC_TC_OP) ||
		     (f->is_op && (p->kid_tc_any || p->rt_tc > 0));
	f->kid_dur = p->kid_dur;
	f->kid_dev = p->kid_dev;
	f->kid_tc = p->kid_tc;
	f->kid_tc_any = p->kid_tc_any;
	f->rt_dur = p->rt_dur;
	f->rt_dev = p->rt_dev;
	f->rt_tc = p->rt_tc;
	for (int m = 0; m < 3; m++) {
		f->mem_self[m] = p->mem_self[m];
		f->mem_kid[m] = p->mem_kid[m];
		f->mem_total[m] = p->mem_self[m] + p->mem_kid[m];
	}
	return rc;
}

static int is_node(const struct gt_event *e)
{
	return e->kind == GT_EV_CPU_OP || e->kind == GT_EV_STEP;
}

/* an allocator record of the device (mem_dev; ~0u = none wanted) */
static int is_rec(const struct gt_event *e, uint32_t mem_dev)
{
	return e->kind == GT_EV_INSTANT && (e->flags & GT_EVF_MEMORY) && e->aux == mem_dev;
}

static int by_nest(const void *a, const void *b, void *ctx)
{
	const struct gt_event *ev = ctx;
	const struct gt_event *x = &ev[*(const uint32_t *)a], *y = &ev[*(const uint32_t *)b];
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	int rx = x->kind == GT_EV_INSTANT, ry = y->kind == GT_EV_INSTANT;
	if (rx != ry)
		return rx - ry;        /* an operator starting with a record holds it */
	int64_t ex = gt_event_end(x), ey = gt_event_end(y);
	if (ex != ey)
		return ex > ey ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* events are read a block at a time, each announced to the store before
 * (under a budget what the thread read before may leave memory then) */
#define TICK_EVENTS 65536u

static void tick(const struct ctx *c, const struct gt_lane *l, size_t i)
{
	if (i % TICK_EVENTS == 0)
		gt_store_read_tick(c->s, l, i, i + TICK_EVENTS < l->n ? i + TICK_EVENTS : l->n);
}

/* the lane's nodes and records in nesting order: *out NULL when that is the
 * lane's own order (the walk filters the events itself: no index a lane
 * long on the heap), else their indices sorted; their count or -ENOMEM */
static long lane_nodes(const struct ctx *c, const struct gt_lane *l, uint32_t mem_dev,
		       uint32_t **out)
{
	size_t n = 0;
	int sorted = 1;
	const struct gt_event *prev = NULL;
	*out = NULL;
	for (size_t i = 0; i < l->n && sorted; i++) {
		tick(c, l, i);
		const struct gt_event *e = &l->ev[i];
		if (!is_node(e) && !is_rec(e, mem_dev))
			continue;
		if (prev && prev->start_ns == e->start_ns &&
		    (gt_event_end(prev) < gt_event_end(e) || prev->kind == GT_EV_INSTANT))
			sorted = 0;
		prev = e;
	}
	if (sorted)
		return (long)l->n;
	uint32_t *v = malloc((l->n ? l->n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		gt_store_read_walk(c->s, l, 0, i, l->n);
		const struct gt_event *e = &l->ev[i];
		if (is_node(e) || is_rec(e, mem_dev))
			v[n++] = (uint32_t)i;
	}
	qsort_r(v, n, sizeof(*v), by_nest, l->ev);
	*out = v;
	return (long)n;
}

/* an allocator record: to the innermost open frame when it is an operator */
static void record(struct ctx *c, struct frame *f, int open, const struct gt_event *e)
{
	int64_t b;
	memcpy(&b, &e->arg, sizeof(b));
	c->r->mem_records++;
	if (!open || !f->f.op_node) {
		c->r->mem_unattributed++;
		return;
	}
	f->mem_self[0] += b;
	if (b > 0) {
		f->mem_self[1]++;
		f->mem_self[2] += b;
	}
}

static int walk_lane(struct ctx *c, const struct gt_lane *l, struct frame **stk, size_t *cap)
{
	uint32_t *idx = NULL;
	uint32_t mem_dev = c->mem ? c->mem_dev : ~0u;
	long n = lane_nodes(c, l, mem_dev, &idx);
	if (n < 0)
		return (int)n;
	int32_t rank = l->key.rank;
	struct frame *st = *stk;
	size_t h = 1;
	int rc = 0;
	memset(&st[0], 0, sizeof(st[0]));
	st[0].end = INT64_MAX;
	for (long i = 0; i < n && !rc; i++) {
		if (!idx)
			tick(c, l, (size_t)i);
		const struct gt_event *e = &l->ev[idx ? idx[i] : (size_t)i];
		if (!idx && !is_node(e) && !is_rec(e, mem_dev))
			continue;
		int64_t end = gt_event_end(e);
		while (!rc && h > 1 && e->start_ns >= st[h - 1].end) {
			rc = close_frame(c, &st[h - 1]);
			if (!rc)
				rc = give(c, &st[h - 2], &st[h - 1].f);
			h--;
		}
		if (e->kind == GT_EV_INSTANT) {
			record(c, &st[h - 1], h > 1, e);
			continue;
		}
		struct opsmap_val *rt = e->ext ? opsmap_get(&c->ext, opsmap_key(rank, e->ext)) : NULL;
		if (rt && rt->taken)
			rt = NULL;
		if (rt)
			rt->taken = 1;
		if (rc || end > st[h - 1].end) {
			c->r->dropped += !rc && e->kind == GT_EV_CPU_OP;
			continue;
		}
		if (h == *cap) {
			size_t nc = *cap * 2;
			struct frame *v = realloc(st, nc * sizeof(*v));
			if (!v) {
				rc = -ENOMEM;
				break;
			}
			*stk = st = v;
			*cap = nc;
		}
		struct frame *f = &st[h++];
		memset(f, 0, sizeof(*f));
		f->end = end;
		f->f.name = e->name;
		f->f.has_stack = gt_ops_event_stack(e) != 0;
		f->f.key = c->group == GT_OPS_BY_SHAPE ? gt_ops_event_shape(e) :
			   c->group == GT_OPS_BY_STACK ? gt_ops_event_stack(e) : 0;
		if (f->f.key >= c->nstr)
			f->f.key = 0;
		f->f.dur = e->dur_ns;
		f->f.is_op = e->kind == GT_EV_CPU_OP;
		f->f.op_node = f->f.is_op && !(name_class(c, e->name) & NC_EXCL);
		f->f.counted = f->f.op_node && e->start_ns >= c->t0 && e->start_ns < c->t1;
		if (rt) {
			f->rt_dur = rt->a;
			f->rt_dev = rt->b;
			f->rt_tc = rt->c;
		}
	}
	while (!rc && h > 1) {
		rc = close_frame(c, &st[h - 1]);
		if (!rc)
			rc = give(c, &st[h - 2], &st[h - 1].f);
		h--;
	}
	if (!rc && st[0].has_pending)
		rc = emit(c, &st[0].pending);
	free(idx);
	return rc;
}

/* does event e of a lane count in pass 0 (GPU work by correlation) or 1
 * (runtime calls by external id)? */
static int in_pass(int pass, const struct gt_event *e)
{
	return e->corr && (pass ? e->kind == GT_EV_RUNTIME && e->ext : gt_event_is_gpu(e));
}

static int lane_in_pass(const struct ctx *c, int pass, const struct gt_lane *l,
			const struct gt_scope *sc)
{
	int32_t rank = l->key.rank;
	return l->key.type == (pass ? GT_LANE_HOST : GT_LANE_GPU) && rank == c->rank &&
	       (sc->rank < 0 || rank == sc->rank) &&
	       (pass || sc->gpu < 0 || l->key.device == sc->gpu);
}

/* the map of a pass: dense over the range the ids at both ends of each
 * lane span (ids grow with time on a stream or thread; keys outside go to
 * the spill map), hashed when that range is much larger than the events */
#define ENDS 64
static int init_map(struct ctx *c, int pass, const struct gt_scope *sc, struct opsmap *m)
{
	uint64_t lo = UINT64_MAX, hi = 0, n = 0;
	for (size_t i = 0; i < gt_store_lane_count(c->s); i++) {
		const struct gt_lane *l = gt_store_lane_at(c->s, (uint32_t)i);
		if (!lane_in_pass(c, pass, l, sc))
			continue;
		int32_t rank = l->key.rank;
		n += l->n;
		for (size_t j = 0; j < l->n; j++) {
			if (j == ENDS && l->n > 2 * ENDS)
				j = l->n - ENDS;
			const struct gt_event *e = &l->ev[j];
			if (!in_pass(pass, e))
				continue;
			uint64_t k = opsmap_key(rank, pass ? e->ext : e->corr);
			lo = k < lo ? k : lo;
			hi = k > hi ? k : hi;
		}
	}
	if (lo <= hi && hi - lo < 2 * n + 4096) {
		uint64_t slack = (hi - lo) / 16 + 1024;
		lo = lo > slack ? lo - slack : 1;
		hi += slack;
		/* under a budget a rank whose maps would take a sixteenth of it
		 * has them in a spill (a scratch file, an eighth of the budget
		 * mapped at most); the heap serves when it cannot be had */
		int big = c->budget && (hi - lo + 1) * sizeof(struct opsmap_val) >= c->budget / 16;
		if (big && !c->sp_tried) {
			c->sp_tried = 1;
			if (spill_new(c->budget / 8, &c->sp))
				c->sp = NULL;
		}
		return opsmap_init_dense(m, lo, hi, big ? c->sp : NULL);
	}
	return opsmap_init(m, n ? n / 4 : 16);
}

/* passes 1 and 2: GPU work per correlation, runtime calls per external id */
static int build_maps(struct ctx *c, const struct gt_scope *sc)
{
	size_t nl = gt_store_lane_count(c->s);
	for (int pass = 0; pass < 2; pass++) {
		if (init_map(c, pass, sc, pass ? &c->ext : &c->corr))
			return -ENOMEM;
		for (size_t i = 0; i < nl; i++) {
			const struct gt_lane *l = gt_store_lane_at(c->s, (uint32_t)i);
			if (!lane_in_pass(c, pass, l, sc))
				continue;
			int32_t rank = l->key.rank;
			for (size_t j = 0; j < l->n; j++) {
				tick(c, l, j);
				const struct gt_event *e = &l->ev[j];
				if (!in_pass(pass, e))
					continue;
				if (!pass) {
					struct opsmap_val *v = opsmap_put(&c->corr, opsmap_key(rank, e->corr));
					if (!v)
						return -ENOMEM;
					v->a += e->dur_ns;
					if (e->kind == GT_EV_KERNEL &&
					    (name_class(c, e->name) & NC_TC_KERN))
						v->b += e->dur_ns;
					continue;
				}
				struct opsmap_val *d = opsmap_get(&c->corr, opsmap_key(rank, e->corr));
				struct opsmap_val *v = opsmap_put(&c->ext, opsmap_key(rank, e->ext));
				if (!v)
					return -ENOMEM;
				v->a += e->dur_ns;
				v->b += d ? d->a : 0;
				v->c += d ? d->b : 0;
			}
		}
	}
	return 0;
}

static int by_dev_self(const void *a, const void *b)
{
	const struct gt_ops_row *x = a, *y = b;
	if (x->dev_self_ns != y->dev_self_ns)
		return x->dev_self_ns > y->dev_self_ns ? -1 : 1;
	if (x->host_self_ns != y->host_self_ns)
		return x->host_self_ns > y->host_self_ns ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int compute(const struct gt_store *s, const struct gt_scope *sc_in, int mem,
		   uint32_t mem_dev, int group, struct gt_ops_result *out, char *err, size_t errlen)
{
	struct gt_scope sc;
	analysis_scope_or_all(&sc, sc_in);
	memset(out, 0, sizeof(*out));
	struct ctx c = { .s = s, .r = out, .t0 = sc.t0_ns, .t1 = sc.t1_ns, .mem = mem,
			 .mem_dev = mem_dev, .group = group, .budget = gt_store_budget(s) };
	size_t ns = gt_store_str_count(s);
	c.nstr = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	size_t cap = 64;
	struct frame *stk = malloc(cap * sizeof(*stk));
	c.cls = calloc(ns ? ns : 1, 1);
	c.row_of = calloc(ns ? ns : 1, sizeof(*c.row_of));
	memset(&c.corr, 0, sizeof(c.corr));
	memset(&c.ext, 0, sizeof(c.ext));
	memset(&c.rows, 0, sizeof(c.rows));
	int rc = (stk && c.cls && c.row_of) ? 0 : -ENOMEM;
	if (!rc && group != GT_OPS_BY_NAME)
		rc = opsmap_init(&c.rows, 1024) ? -ENOMEM : 0;
	/* one rank at a time: a rank's operators look up only its own
	 * correlation and external ids, so the maps (~32 bytes an id) hold one
	 * rank's ids at once, not every rank's (a 64-rank capture of 20 M events
	 * took 1.6 GB of maps; hashed, the keys of all ranks not being dense) */
	size_t nl = gt_store_lane_count(s);
	int32_t done_below = INT32_MIN;   /* ranks < this are walked */
	while (!rc) {
		int32_t r = INT32_MAX;
		int any = 0;
		for (size_t i = 0; i < nl; i++) {
			const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
			int32_t rank = l->key.rank;
			if (l->key.type == GT_LANE_HOST && (sc.rank < 0 || rank == sc.rank) &&
			    (l->kinds_mask & (1u << GT_EV_CPU_OP)) && rank >= done_below && rank <= r) {
				r = rank;
				any = 1;
			}
		}
		if (!any)
			break;
		c.rank = r;
		if (!mem)
			rc = build_maps(&c, &sc);   /* memory statistics need no device times */
		for (size_t i = 0; i < nl && !rc; i++) {
			const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
			if (l->key.type != GT_LANE_HOST || l->key.rank != r ||
			    !(l->kinds_mask & ((1u << GT_EV_CPU_OP))))
				continue;
			rc = walk_lane(&c, l, &stk, &cap);
		}
		opsmap_done(&c.corr);
		opsmap_done(&c.ext);
		if (r == INT32_MAX)
			break;
		done_below = r + 1;
	}
	free(stk);
	free(c.cls);
	free(c.row_of);
	opsmap_done(&c.corr);
	opsmap_done(&c.ext);
	spill_free(c.sp);
	opsmap_done(&c.rows);
	if (rc) {
		gt_ops_result_done(out);
		snprintf(err, errlen, "ops: out of memory");
		return rc;
	}
	if (out->n)
		qsort(out->rows, out->n, sizeof(*out->rows), by_dev_self);
	return 0;
}

int gt_ops_compute(const struct gt_store *s, const struct gt_scope *sc, struct gt_ops_result *out,
		char *err, size_t errlen)
{
	return compute(s, sc, 0, 0, GT_OPS_BY_NAME, out, err, errlen);
}

int gt_ops_compute_by(const struct gt_store *s, const struct gt_scope *sc, int group,
		   struct gt_ops_result *out, char *err, size_t errlen)
{
	if (group < 0 || group >= GT_OPS_GROUP_COUNT) {
		memset(out, 0, sizeof(*out));
		snprintf(err, errlen, "ops: unknown grouping %d", group);
		return -EINVAL;
	}
	return compute(s, sc, 0, 0, group, out, err, errlen);
}

int gt_ops_compute_mem(const struct gt_store *s, const struct gt_scope *sc, uint32_t mem_device,
		    struct gt_ops_result *out, char *err, size_t errlen)
{
	return compute(s, sc, 1, mem_device, GT_OPS_BY_NAME, out, err, errlen);
}

void gt_ops_result_done(struct gt_ops_result *r)
{
	free(r->rows);
	memset(r, 0, sizeof(*r));
}
