/*
 * trace_detail.c - the trace view's detail pane: the selected event (name
 * demangled, times, place, launch configuration, bytes and bandwidth,
 * NCCL arguments, correlation, depth and parent on an expanded lane) or the
 * aggregate of a marked range (busy time per lane, top kernels from the
 * "kernels" report over the range).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "term.h"
#include "trace_view.h"
#include "demangle.h"

const char *trace_detail_name(const struct gt_store *s, const struct gt_event *e, char *buf,
			  size_t len)
{
	return demangle_name(gt_store_str(s, e->name), buf, len);
}

/* "rank 0 GPU 1 stream 7 (compute)" / "rank 0 pid 12 thread 34 (python)" */
static void lane_desc(const struct gt_store *s, uint32_t lane, char *buf, size_t len)
{
	const struct gt_lane *l = gt_store_lane_at(s, lane);
	const char *nm = l->name ? gt_store_str(s, l->name) : "";
	char id[64];
	char pre[24];
	int k = snprintf(pre, sizeof(pre), "GPU %d ", l->key.device);
	/* a lane named "GPU 0 stream 7": the GPU is said once */
	if (l->key.type == GT_LANE_GPU && k > 0 && !strncmp(nm, pre, (size_t)k) && nm[k])
		nm += k;
	if (*nm)
		snprintf(id, sizeof(id), "%s", nm);
	else
		snprintf(id, sizeof(id), "%s %lld", l->key.type == GT_LANE_GPU ? "stream" : "tid",
			 (long long)l->key.id);
	if (l->key.type == GT_LANE_GPU)
		snprintf(buf, len, "rank %d GPU %d %s", l->key.rank,
			 l->key.device, id);
	else
		snprintf(buf, len, "rank %d pid %lld %s", l->key.rank,
			 (long long)l->key.pid, id);
}

/* a byte count in B, KiB, MiB or GiB */
static void fmt_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= (1ull << 30))
		snprintf(buf, len, "%.2f GiB", (double)b / (double)(1ull << 30));
	else if (b >= (1ull << 20))
		snprintf(buf, len, "%.2f MiB", (double)b / (double)(1ull << 20));
	else if (b >= 1024)
		snprintf(buf, len, "%.1f KiB", (double)b / 1024.0);
	else
		snprintf(buf, len, "%llu B", (unsigned long long)b);
}

/* the selected event's description in r */
static void event_lines(struct trace_view *t, const struct lrect *r)
{
	const struct gt_store *s = t->v.app->store;
	const struct gt_event *e = gt_store_ev(s, t->sel);
	int64_t lo = gt_store_t_origin(s);
	char nm[2048], a[32], b[32], c[32], place[160];
	int y = r->y + 1, w = r->w - 2, x = r->x + 1;
	trace_detail_name(s, e, nm, sizeof(nm));
	/* the whole name: what does not fit on the first line goes on to the
	   next ones (one in the 4 rows under the rule of a 5-row pane, two in
	   the 6 of a 7-row one) */
	char kind[48];
	int kl = snprintf(kind, sizeof(kind), "[%s%s] ", gt_ev_kind_name(e->kind),
			  (e->flags & GT_EVF_NCCL) ? ", NCCL" : "");
	int more = r->h >= 6 ? 2 : r->h >= 4 ? 1 : 0, first = w - kl;
	const char *np = nm;
	if (first > 0 && (int)strlen(nm) > first && more) {
		term_printf(r->y, x, w, theme_attr(TH_HEADER), "%s%.*s", kind, first, nm);
		np += first;
		for (int i = 0; i < more && *np && y < r->y + r->h; i++) {
			term_printf(y++, x + kl, w - kl, theme_attr(TH_HEADER), "%.*s", w - kl, np);
			np += strlen(np) < (size_t)(w - kl) ? strlen(np) : (size_t)(w - kl);
		}
	} else {
		term_printf(r->y, x, w, theme_attr(TH_HEADER), "%s%s", kind, nm);
	}
	lane_desc(s, t->sel.lane, place, sizeof(place));
	if (y < r->y + r->h)
		term_printf(y++, x, w, 0, "start +%s  dur %s  end +%s  on %s",
			    layout_fmt_ts(e->start_ns - lo, a, sizeof(a)),
			    layout_fmt_dur(e->dur_ns, b, sizeof(b)),
			    layout_fmt_ts(gt_event_end(e) - lo, c, sizeof(c)), place);
	char line[256] = "";
	if (e->kind == GT_EV_KERNEL) {
		const struct gt_kconf *k = gt_event_kconf(e) ? gt_store_kconf_at(s, gt_event_kconf(e)) : NULL;
		if (k) {
			int n = snprintf(line, sizeof(line),
					 "grid (%u,%u,%u)  block (%u,%u,%u)  registers %u  shared mem %u+%u B",
					 k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
					 k->block[2], k->regs_per_thread, k->smem_static_bytes,
					 k->smem_dynamic_bytes);
			if (k->occupancy_pct >= 0 && n > 0 && (size_t)n < sizeof(line))
				snprintf(line + n, sizeof(line) - (size_t)n, "  occupancy %.0f%%",
					 (double)k->occupancy_pct);
		} else {
			snprintf(line, sizeof(line), "grid/block/registers: n/a in this capture");
		}
		const struct gt_nccl *nc = gt_event_nccl(e) ? gt_store_nccl_at(s, gt_event_nccl(e)) : NULL;
		if (nc && y + 1 < r->y + r->h) {
			term_printf(y++, x, w, 0, "%s", line);
			snprintf(line, sizeof(line), "NCCL %s %s  in %llu elems  out %llu elems  group %u%s%s",
				 gt_store_str(s, nc->collective), gt_store_str(s, nc->dtype),
				 (unsigned long long)nc->in_nelems, (unsigned long long)nc->out_nelems,
				 nc->group_size, nc->pg_name ? "  pg " : "", nc->pg_name ? gt_store_str(s, nc->pg_name) : "");
		}
	} else if (e->kind == GT_EV_MEMCPY || e->kind == GT_EV_MEMSET) {
		fmt_bytes(e->arg, a, sizeof(a));
		double gbs = e->dur_ns > 0 ? (double)e->arg / (double)e->dur_ns : 0;
		snprintf(line, sizeof(line), "%s %s  bytes %s  bandwidth %.2f GB/s%s%s",
			 e->kind == GT_EV_MEMSET ? "memset" : "copy",
			 e->kind == GT_EV_MEMCPY ? gt_copy_kind_name(e->sub) : "", a, gbs,
			 (e->flags & GT_EVF_PINNED) ? "  pinned" : "",
			 (e->flags & GT_EVF_PAGEABLE) ? "  pageable" : "");
	} else if (e->kind == GT_EV_STEP) {
		snprintf(line, sizeof(line), "step %llu%s", (unsigned long long)e->arg,
			 (e->flags & GT_EVF_INFERRED) ? " (inferred)" : "");
	}
	if (line[0] && y < r->y + r->h)
		term_printf(y++, x, w, 0, "%s", line);
	if (y < r->y + r->h) {
		struct gt_ref peer;
		if (e->corr && !gt_store_corr_peer(s, t->sel, &peer)) {
			const struct gt_event *p = gt_store_ev(s, peer);
			char pn[2048];
			trace_detail_name(s, p, pn, sizeof(pn));
			lane_desc(s, peer.lane, place, sizeof(place));
			term_printf(y++, x, w, 0, "correlation %u: %s %s at +%s on %s   (c: jump)", e->corr,
				    gt_event_is_gpu(e) ? "launched by" : "launches", pn,
				    layout_fmt_ts(p->start_ns - lo, a, sizeof(a)), place);
		} else if (e->corr || e->ext) {
			term_printf(y++, x, w, 0, "correlation %u  external id %u", e->corr, e->ext);
		}
	}
	/* an expanded lane: the event's depth and the range it is nested in
	 * (the innermost one containing it; else the one it only overlaps) */
	const struct gt_depth *d = trace_view_depth(t, t->sel.lane);
	if (y < r->y + r->h && d && t->sel.idx < d->n) {
		const struct gt_lane *l = gt_store_lane_at(s, t->sel.lane);
		int row = d->depth[t->sel.idx], dep = gt_store_depth_of(d, l, t->sel.idx), inside;
		char dl[48];
		if (dep != row)
			snprintf(dl, sizeof(dl), "depth %d%s (row %d)", dep, dep >= 255 ? "+" : "", row);
		else
			snprintf(dl, sizeof(dl), "depth %d", dep);
		size_t pi = gt_store_depth_parent(d, l, t->sel.idx, &inside);
		if (pi != SIZE_MAX) {
			const struct gt_event *p = &l->ev[pi];
			char pn[2048];
			trace_detail_name(s, p, pn, sizeof(pn));
			term_printf(y++, x, w, 0, "%s, %s %s (+%s .. +%s)", dl, inside ? "inside" : "overlaps",
				    pn, layout_fmt_ts(p->start_ns - lo, a, sizeof(a)),
				    layout_fmt_ts(gt_event_end(p) - lo, c, sizeof(c)));
		} else {
			term_printf(y++, x, w, 0, "%s%s", dl, dep ? "" : " (outermost)");
		}
	}
	const char *raw = gt_store_str(s, e->name);
	if (y < r->y + r->h && !strncmp(raw, "_Z", 2))
		term_printf(y++, x, w, theme_attr(TH_DIM), "mangled: %s", raw);
}

void trace_detail_mark(struct trace_view *t)
{
	gt_table_free(t->mark_kernels);
	t->mark_kernels = NULL;
	const struct gt_report *rep = gt_report_find("kernels");
	if (!rep)
		return;
	struct gt_scope sc;
	gt_scope_all(&sc);
	sc.t0_ns = t->mark_t0;
	sc.t1_ns = t->mark_t1;
	struct gt_report_out out = { 0 };
	char err[128];
	if (rep->run(t->v.app->store, &sc, &out, err, sizeof(err)) == 0 && out.n) {
		t->mark_kernels = out.tables[0];
		out.tables[0] = NULL;
	}
	gt_report_out_done(&out);
}

/* the marked range: busiest GPU lanes and top kernels in r */
static void mark_lines(struct trace_view *t, const struct lrect *r)
{
	const struct gt_store *s = t->v.app->store;
	int64_t m0 = t->mark_t0, m1 = t->mark_t1;
	if (t->marking == 1) {
		m1 = layout_col2t(&t->m, t->col) + t->m.ns_per_col;
		if (m1 < m0) {
			int64_t x = m0;
			m0 = m1 - t->m.ns_per_col;
			m1 = x + t->m.ns_per_col;
		}
	}
	int64_t lo = gt_store_t_origin(s), span = m1 - m0 > 0 ? m1 - m0 : 1;
	char a[32], b[32], c[32];
	term_printf(r->y, r->x + 1, r->w - 2, theme_attr(TH_HEADER),
		    "range %s .. %s (%s)%s", layout_fmt_rel(m0 - lo, a, sizeof(a)),
		    layout_fmt_rel(m1 - lo, b, sizeof(b)), layout_fmt_dur(span, c, sizeof(c)),
		    t->marking == 1 ? "  [m fixes, Esc cancels]" : "  [M zooms, Esc clears]");
	int half = r->w / 2, rows = r->h - 1;
	/* busy per lane: the busiest `rows` lanes */
	uint32_t best[16];
	int64_t bb[16];
	int nb = 0;
	if (rows > 16)
		rows = 16;
	if (rows <= 0)
		return;
	for (size_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)li);
		if (l->key.type != GT_LANE_GPU || !l->n)
			continue;
		int64_t busy = gt_store_lane_busy(l, m0, m1);
		int k;
		if (nb < rows)
			k = nb++;
		else if (busy > bb[rows - 1])
			k = rows - 1;
		else
			continue;
		best[k] = (uint32_t)li;
		bb[k] = busy;
		for (; k > 0 && bb[k] > bb[k - 1]; k--) {
			uint32_t tl = best[k];
			int64_t tb = bb[k];
			best[k] = best[k - 1], bb[k] = bb[k - 1];
			best[k - 1] = tl, bb[k - 1] = tb;
		}
	}
	for (int i = 0; i < nb && i < rows; i++) {
		char place[160];
		lane_desc(s, best[i], place, sizeof(place));
		term_printf(r->y + 1 + i, r->x + 1, half - 2, 0, "%5.1f%% busy  %s",
			    100.0 * (double)bb[i] / (double)span, place);
	}
	const struct gt_table *tb = t->mark_kernels;
	if (!tb) {
		term_put(r->y + 1, r->x + half, r->w - half - 1, theme_attr(TH_DIM),
			 t->marking == 1 ? "top kernels when the range is fixed" :
			 "top kernels: n/a (kernels report not available)");
		return;
	}
	/* the typed columns: the name, the table's sort column (Total Time) */
	int cn = gt_table_col_with(tb, GT_COLF_NAME), ct = tb->sort_col;
	if (cn < 0)
		cn = 0;
	if (ct >= 0 && (size_t)ct < tb->ncols && !(tb->cols[ct].flags & GT_COLF_DUR))
		ct = -1;
	term_put(r->y + 1, r->x + half, r->w - half - 1, theme_attr(TH_DIM), "top kernels in range:");
	for (size_t i = 0; i < tb->nrows && (int)i + 2 < r->h; i++) {
		const union gt_cell *nmc = gt_table_cell(tb, i, (size_t)cn);
		char sh[128];
		demangle_short_of(s, nmc && nmc->s ? nmc->s : "?", sh, sizeof(sh));
		char tt[32] = "n/a";
		if (ct >= 0 && !gt_table_is_null(tb, i, (size_t)ct)) {
			const union gt_cell *v = gt_table_cell(tb, i, (size_t)ct);
			double ns = tb->cols[ct].type == GT_COL_INT ? (double)v->i : v->f;
			layout_fmt_dur((int64_t)ns, tt, sizeof(tt));
		}
		term_printf(r->y + 2 + (int)i, r->x + half, r->w - half - 1, 0, "%9s  %s", tt, sh);
	}
}

void trace_detail_draw(struct trace_view *t)
{
	const struct lrect *r = &t->lay.detail;
	if (r->h <= 0)
		return;
	attrset(theme_attr(TH_DIM));
	for (int i = 0; i < r->w; i++)
		term_glyph(r->y, r->x + i, term_caps.utf8 ? "\u2500" : "-");
	attrset(A_NORMAL);
	struct lrect in = { r->x, r->y + 1, r->w, r->h - 1 };
	if (in.h <= 0)
		return;
	if (t->marking == 2 && t->narea)
		trace_area_draw(t, &in);
	else if (t->marking)
		mark_lines(t, &in);
	else if (t->has_sel)
		event_lines(t, &in);
	else
		term_put(in.y, in.x + 1, in.w - 2, theme_attr(TH_DIM),
			 "no event under the cursor (h/l/j/k move, [ ] jump to events, ? keys)");
}
