/*
 * kview_inst.c - the instances of one kernel (or copy, or collective):
 * a duration histogram (log-spaced bins, computed once on open) and the
 * list sorted by duration or by time; Enter shows one in the trace view.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/kstats.h"
#include "term.h"
#include "kview.h"

/* the memory table's operation names (core/analysis/tables_memory.c): row ->
 * event kind and copy kind; 0 when op is one of them */
static int mem_class(const char *op, int *kind, int *sub)
{
	static const char *const ops[GT_COPY_KIND_COUNT] = {
		[GT_COPY_UNKNOWN] = "[CUDA memcpy Unknown]",
		[GT_COPY_H2D] = "[CUDA memcpy Host-to-Device]",
		[GT_COPY_D2H] = "[CUDA memcpy Device-to-Host]",
		[GT_COPY_D2D] = "[CUDA memcpy Device-to-Device]",
		[GT_COPY_P2P] = "[CUDA memcpy Peer-to-Peer]",
		[GT_COPY_H2H] = "[CUDA memcpy Host-to-Host]",
	};
	if (!strcmp(op, "[CUDA memset]")) {
		*kind = GT_EV_MEMSET;
		*sub = -1;
		return 0;
	}
	for (int i = 0; i < GT_COPY_KIND_COUNT; i++) {
		if (ops[i] && !strcmp(op, ops[i])) {
			*kind = GT_EV_MEMCPY;
			*sub = i;
			return 0;
		}
	}
	return -1;
}

static const struct gt_store *sort_store;
static int sort_by_time;

/* longest first, or earliest first; then by lane and index */
static int ref_cmp(const void *pa, const void *pb)
{
	const struct gt_ref *a = pa, *b = pb;
	const struct gt_event *x = store_ev(sort_store, *a), *y = store_ev(sort_store, *b);
	if (sort_by_time) {
		if (x->start_ns != y->start_ns)
			return x->start_ns < y->start_ns ? -1 : 1;
	} else if (x->dur_ns != y->dur_ns) {
		return x->dur_ns > y->dur_ns ? -1 : 1;
	}
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return a->idx < b->idx ? -1 : (a->idx > b->idx);
}

/* the copies (or memsets) of one kind on the GPUs in scope */
static int mem_instances(struct kview *k, struct gt_ref **out, size_t *n)
{
	const struct gt_store *s = k->v.app->store;
	size_t cap = 0, cnt = 0;
	struct gt_ref *v = NULL;
	for (size_t i = 0; i < store_lane_count(s); i++) {
		const struct gt_lane *l = store_lane_at(s, (uint32_t)i);
		if (l->key.type != GT_LANE_GPU || (k->gpu >= 0 && l->key.device != k->gpu))
			continue;
		for (size_t j = 0; j < l->n; j++) {
			const struct gt_event *e = &l->ev[j];
			if (e->kind != k->inst_mem_kind ||
			    (k->inst_mem_sub >= 0 && e->sub != k->inst_mem_sub))
				continue;
			if (cnt == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct gt_ref *nv = realloc(v, nc * sizeof(*v));
				if (!nv) {
					free(v);
					return -1;
				}
				v = nv;
				cap = nc;
			}
			v[cnt++] = (struct gt_ref){ (uint32_t)i, (uint32_t)j };
		}
	}
	sort_store = s;
	sort_by_time = k->inst_by_time;
	if (cnt)
		qsort(v, cnt, sizeof(*v), ref_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

/* 1 when the NCCL kernel e falls in the row whose key the kview holds
 * (core/analysis/tables_nccl.c groups by collective, size, type, group) */
static int nccl_match(const struct gt_store *s, const struct gt_event *e, const struct kview *k)
{
	uint32_t nid = e->kind == GT_EV_KERNEL ? gt_event_nccl(e) : 0;
	if (e->kind != GT_EV_KERNEL || (!(e->flags & GT_EVF_NCCL) && !nid))
		return 0;
	uint32_t coll = e->name, dtype = 0, group = 0;
	uint64_t size = 0;
	const struct gt_nccl *a = nid ? store_nccl_at(s, nid) : NULL;
	if (a) {
		if (a->collective)
			coll = a->collective;
		dtype = a->dtype;
		group = a->group_size;
		uint64_t ne = a->in_nelems > a->out_nelems ? a->in_nelems : a->out_nelems;
		size = ne * a->dtype_bytes;
	}
	if (strcmp(store_str(s, coll), k->inst_coll) || size != k->inst_size_bytes ||
	    group != k->inst_group)
		return 0;
	if (!k->inst_has_dtype)
		return !dtype;
	return dtype && !strcmp(store_str(s, dtype), k->inst_dtype);
}

/* copy the nccl-table row's key into the kview */
static void nccl_key(struct kview *k, size_t row)
{
	const struct gt_table *t = k->tb;
	int c;
	k->inst_coll[0] = k->inst_dtype[0] = 0;
	k->inst_has_dtype = 0;
	k->inst_size_bytes = 0;
	k->inst_group = 0;
	if ((c = tables_name_col(t)) >= 0 && !gt_table_is_null(t, row, (size_t)c) &&
	    gt_table_cell(t, row, (size_t)c)->s)
		snprintf(k->inst_coll, sizeof(k->inst_coll), "%s", gt_table_cell(t, row, (size_t)c)->s);
	if ((c = tables_find_col(t, "size (bytes)")) >= 0 && !gt_table_is_null(t, row, (size_t)c))
		k->inst_size_bytes = (uint64_t)gt_table_cell(t, row, (size_t)c)->i;
	if ((c = tables_find_col(t, "data type")) >= 0 && !gt_table_is_null(t, row, (size_t)c) &&
	    gt_table_cell(t, row, (size_t)c)->s) {
		k->inst_has_dtype = 1;
		snprintf(k->inst_dtype, sizeof(k->inst_dtype), "%s", gt_table_cell(t, row, (size_t)c)->s);
	}
	if ((c = tables_find_col(t, "group size")) >= 0 && !gt_table_is_null(t, row, (size_t)c))
		k->inst_group = (uint32_t)gt_table_cell(t, row, (size_t)c)->i;
}

/* the NCCL kernels of the kept nccl-table key on the GPUs in scope */
static int nccl_instances(struct kview *k, struct gt_ref **out, size_t *n)
{
	const struct gt_store *s = k->v.app->store;
	size_t cap = 0, cnt = 0;
	struct gt_ref *v = NULL;
	for (size_t i = 0; i < store_lane_count(s); i++) {
		const struct gt_lane *l = store_lane_at(s, (uint32_t)i);
		if (l->key.type != GT_LANE_GPU || (k->gpu >= 0 && l->key.device != k->gpu))
			continue;
		for (size_t j = 0; j < l->n; j++) {
			if (!nccl_match(s, &l->ev[j], k))
				continue;
			if (cnt == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct gt_ref *nv = realloc(v, nc * sizeof(*v));
				if (!nv) {
					free(v);
					return -1;
				}
				v = nv;
				cap = nc;
			}
			v[cnt++] = (struct gt_ref){ (uint32_t)i, (uint32_t)j };
		}
	}
	sort_store = s;
	sort_by_time = k->inst_by_time;
	if (cnt)
		qsort(v, cnt, sizeof(*v), ref_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

/* the instances of inst_name in the GPU scope, in the chosen order */
static void load(struct kview *k)
{
	free(k->inst);
	k->inst = NULL;
	k->ninst = 0;
	const struct gt_store *s = k->v.app->store;
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.gpu = k->gpu;
	uint32_t mask = k->tab == 1 ? (1u << GT_EV_MEMCPY) | (1u << GT_EV_MEMSET) : 0;
	if (k->inst_nccl) {
		if (nccl_instances(k, &k->inst, &k->ninst))
			k->ninst = 0;
	} else if (k->inst_mem_kind >= 0) {
		if (mem_instances(k, &k->inst, &k->ninst))
			k->ninst = 0;
	} else if (kstats_instances(s, &sc, k->inst_name, mask,
			     k->inst_by_time ? KSTATS_ORDER_TIME : KSTATS_ORDER_DUR_DESC,
			     &k->inst, &k->ninst))
		k->ninst = 0;
	k->inst_top = k->inst_sel = 0;
}

/* total, min, max and the log-spaced duration histogram of the instances */
static void histogram(struct kview *k)
{
	const struct gt_store *s = k->v.app->store;
	k->inst_total_ns = 0;
	k->inst_min_ns = INT64_MAX;
	k->inst_max_ns = 0;
	for (size_t i = 0; i < k->ninst; i++) {
		int64_t d = store_ev(s, k->inst[i])->dur_ns;
		k->inst_total_ns += d;
		if (d < k->inst_min_ns)
			k->inst_min_ns = d;
		if (d > k->inst_max_ns)
			k->inst_max_ns = d;
	}
	memset(k->hist, 0, sizeof(k->hist));
	k->nhist = 0;
	if (!k->ninst)
		return;
	double lo = log((double)(k->inst_min_ns > 0 ? k->inst_min_ns : 1));
	double hi = log((double)(k->inst_max_ns > 0 ? k->inst_max_ns : 1)) + 1e-9;
	int nb = 12;
	if (k->inst_max_ns - k->inst_min_ns < nb)
		nb = (int)(k->inst_max_ns - k->inst_min_ns) + 1;
	if (nb < 1)
		nb = 1;
	/* log-spaced edges; an edge that prints as the one before it (1.85ms,
	   1.85ms) is dropped, merging the bins, so no bin reads x..x */
	char prev[32], cur[32];
	int n = 0;
	k->hist_edge_ns[0] = k->inst_min_ns;
	layout_fmt_dur(k->inst_min_ns, prev, sizeof(prev));
	for (int e = 1; e <= nb; e++) {
		int64_t x = e == nb ? k->inst_max_ns : (int64_t)llround(exp(lo + (hi - lo) * e / nb));
		layout_fmt_dur(x, cur, sizeof(cur));
		if (!strcmp(cur, prev)) {
			if (e == nb && n > 0)
				k->hist_edge_ns[n] = x;   /* the last bin reaches the maximum */
			continue;
		}
		k->hist_edge_ns[++n] = x;
		memcpy(prev, cur, sizeof(prev));
	}
	if (n == 0)
		k->hist_edge_ns[++n] = k->inst_max_ns;   /* one bin: every instance alike */
	k->nhist = n;
	/* bin b holds [edge b, edge b+1); the last one also its upper edge */
	for (size_t i = 0; i < k->ninst; i++) {
		int64_t d = store_ev(s, k->inst[i])->dur_ns;
		int b = 0;
		while (b + 1 < n && d >= k->hist_edge_ns[b + 1])
			b++;
		k->hist[b]++;
	}
}

void kview_inst_open(struct kview *k)
{
	if (!k->tb || !k->nrows)
		return;
	int nc = tables_name_col(k->tb);
	if (nc < 0)
		return;
	const union gt_cell *c = gt_table_cell(k->tb, k->rows[k->st.sel], (size_t)nc);
	const char *nm = c && c->s ? c->s : "";
	/* the memory table's rows are copy kinds, not event names */
	int mk, ms;
	k->inst_mem_kind = k->inst_mem_sub = -1;
	k->inst_nccl = 0;
	if (k->tab == 2) {
		/* nccl rows are (collective, size, type, group): match kernels by them */
		k->inst_nccl = 1;
		k->inst_name = UINT32_MAX;
		nccl_key(k, k->rows[k->st.sel]);
		if (tables_find_col(k->tb, "size (bytes)") >= 0)
			snprintf(k->inst_title, sizeof(k->inst_title), "%s, %llu bytes", nm,
				 (unsigned long long)k->inst_size_bytes);
		else
			demangle_name(nm, k->inst_title, sizeof(k->inst_title));
		load(k);
		histogram(k);
		k->inst_open = 1;
		return;
	}
	if (k->tab == 1 && !mem_class(nm, &mk, &ms)) {
		k->inst_mem_kind = mk;
		k->inst_mem_sub = ms;
		k->inst_name = UINT32_MAX;
		snprintf(k->inst_title, sizeof(k->inst_title), "%s", nm);
		load(k);
		histogram(k);
		k->inst_open = 1;
		return;
	}
	uint32_t id = store_str_find(k->v.app->store, nm, strlen(nm));
	if (id == UINT32_MAX) {
		ui_msg(k->v.app, "no events are named '%s'", nm);
		return;
	}
	k->inst_name = id;
	demangle_name(nm, k->inst_title, sizeof(k->inst_title));
	load(k);
	histogram(k);
	k->inst_open = 1;
}

void kview_inst_refresh(struct kview *k)
{
	const struct gt_store *s = k->v.app->store;
	/* the selected event by what survives a re-sort of its lane: lane and start */
	struct gt_ref was = { UINT32_MAX, 0 };
	int64_t was_t = 0;
	size_t top = k->inst_top, sel = k->inst_sel;
	if (sel < k->ninst && ui_ref_ok(s, k->inst[sel])) {
		was = k->inst[sel];
		was_t = store_ev(s, was)->start_ns;
	}
	load(k);
	histogram(k);
	k->inst_top = top;
	k->inst_sel = sel < k->ninst ? sel : (k->ninst ? k->ninst - 1 : 0);
	if (was.lane == UINT32_MAX)
		return;
	for (size_t i = 0; i < k->ninst; i++)
		if (k->inst[i].lane == was.lane && store_ev(s, k->inst[i])->start_ns == was_t) {
			k->inst_sel = i;
			break;
		}
}

void kview_inst_draw(struct kview *k, struct lrect r)
{
	const struct gt_store *s = k->v.app->store;
	char a[32], b[32], c[32], d[32];
	term_printf(r.y, r.x + 1, r.w - 2, theme_attr(TH_TITLE), "instances of %s", k->inst_title);
	if (r.h < 3)
		return;
	double avg = k->ninst ? (double)k->inst_total_ns / (double)k->ninst : 0;
	term_printf(r.y + 1, r.x + 1, r.w - 2, 0,
		    "%zu instances  total %s  avg %s  min %s  max %s  |  sorted by %s (d/T)  Esc back",
		    k->ninst, layout_fmt_dur(k->inst_total_ns, a, sizeof(a)),
		    layout_fmt_dur((int64_t)avg, b, sizeof(b)),
		    layout_fmt_dur(k->ninst ? k->inst_min_ns : 0, c, sizeof(c)),
		    layout_fmt_dur(k->inst_max_ns, d, sizeof(d)), k->inst_by_time ? "time" : "duration");
	int y = r.y + 2;
	/* histogram: up to a third of the height */
	int hrows = k->nhist;
	if (hrows > (r.h - 4) / 3)
		hrows = (r.h - 4) / 3;
	if (hrows > 0) {
		int per = (k->nhist + hrows - 1) / hrows;
		uint64_t maxc = 1;
		for (int i = 0; i < k->nhist; i += per) {
			uint64_t sum = 0;
			for (int j = i; j < i + per && j < k->nhist; j++)
				sum += k->hist[j];
			if (sum > maxc)
				maxc = sum;
		}
		int barw = r.w - 33;
		for (int i = 0; i < k->nhist && y < r.y + r.h; i += per) {
			uint64_t sum = 0;
			for (int j = i; j < i + per && j < k->nhist; j++)
				sum += k->hist[j];
			int e = i + per < k->nhist ? i + per : k->nhist;
			layout_fmt_dur(k->hist_edge_ns[i], a, sizeof(a));
			layout_fmt_dur(k->hist_edge_ns[e], b, sizeof(b));
			if (!strcmp(a, b))   /* every instance alike: one value */
				term_printf(y, r.x + 1, 28, theme_attr(TH_DIM), "%9s  %-9s %7llu", a, "",
					    (unsigned long long)sum);
			else
				term_printf(y, r.x + 1, 28, theme_attr(TH_DIM), "%9s..%-9s %7llu", a, b,
					    (unsigned long long)sum);
			if (barw > 0)
				term_hbar(y, r.x + 31, barw, theme_attr(TH_COMPUTE),
					  (int64_t)((double)sum / (double)maxc * barw * 8));
			y++;
		}
	}
	if (y >= r.y + r.h)
		return;
	term_printf(y++, r.x + 1, r.w - 2, theme_attr(TH_HEADER), "%8s  %12s  %10s  %s", "#",
		    "start", "duration", "where (Enter: show in trace)");
	int body = r.y + r.h - y;
	if (body <= 0)
		return;
	if (k->inst_sel < k->inst_top)
		k->inst_top = k->inst_sel;
	if (k->inst_sel >= k->inst_top + (size_t)body)
		k->inst_top = k->inst_sel - (size_t)body + 1;
	int64_t lo = store_t_min(s);
	for (int i = 0; i < body; i++) {
		size_t n = k->inst_top + (size_t)i;
		if (n >= k->ninst)
			break;
		if (!ui_ref_ok(s, k->inst[n]))
			continue;
		const struct gt_event *e = store_ev(s, k->inst[n]);
		const struct gt_lane *l = store_lane_at(s, k->inst[n].lane);
		attr_t at = n == k->inst_sel ? theme_attr(TH_SELECT) : 0;
		if (at)
			term_fill((struct lrect){ r.x, y + i, r.w, 1 }, at);
		term_printf(y + i, r.x + 1, r.w - 2, at, "%8zu  %12s  %10s  rank %d GPU %d stream %lld",
			    n + 1, layout_fmt_ts(e->start_ns - lo, a, sizeof(a)),
			    layout_fmt_dur(e->dur_ns, b, sizeof(b)), l->key.rank,
			    l->key.device, (long long)l->key.id);
	}
}

int kview_inst_key(struct kview *k, int ch)
{
	size_t n = k->ninst;
	switch (ch) {
	case KEY_UP: case 'k': if (k->inst_sel) k->inst_sel--; break;
	case KEY_DOWN: case 'j': if (k->inst_sel + 1 < n) k->inst_sel++; break;
	case KEY_PPAGE: k->inst_sel = k->inst_sel > 10 ? k->inst_sel - 10 : 0; break;
	case KEY_NPAGE: k->inst_sel = k->inst_sel + 10 < n ? k->inst_sel + 10 : (n ? n - 1 : 0); break;
	case KEY_HOME: k->inst_sel = 0; break;
	case KEY_END: k->inst_sel = n ? n - 1 : 0; break;
	case 'd': k->inst_by_time = 0; load(k); break;
	case 'T': k->inst_by_time = 1; load(k); break;
	case '\n': case '\r': case KEY_ENTER:
		if (k->inst_sel < n) {
			tlview_goto(ui_page(k->v.app, "Trace"), k->inst[k->inst_sel]);
			ui_show(k->v.app, "Trace");
		}
		break;
	default:
		return UI_UNHANDLED;
	}
	return UI_HANDLED;
}
