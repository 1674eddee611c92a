/*
 * nccl_report.c - the "nccl" report: NCCL kernels per collective and message
 * size.  The size is max(In msg nelems, Out msg nelems) x dtype bytes (what
 * nccl-tests calls the size: the buffer for allreduce, the gathered output
 * for allgather, the scattered input for reducescatter).  Bandwidths follow
 * nccl-tests: algbw = size / average time; busbw = algbw x factor with
 * factor 2(n-1)/n for allreduce, (n-1)/n for allgather, reducescatter and
 * alltoall, 1 for broadcast, reduce, send and recv (n = group size).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reports.h"
#include "gtrace/steps.h"
#include "tables.h"

struct nc_ev {
	uint32_t coll;          /* string id: collective name, or kernel name when unknown */
	uint32_t dtype;         /* string id, 0 = unknown */
	uint32_t group;         /* group size, 0 = unknown */
	int known;              /* collective arguments recorded */
	uint64_t size_bytes;    /* 0 with known == 0 or dtype bytes unknown */
	int64_t dur_ns;
};

static int nc_cmp(const void *pa, const void *pb)
{
	const struct nc_ev *a = pa, *b = pb;
	if (a->coll != b->coll)
		return a->coll < b->coll ? -1 : 1;
	if (a->size_bytes != b->size_bytes)
		return a->size_bytes < b->size_bytes ? -1 : 1;
	if (a->dtype != b->dtype)
		return a->dtype < b->dtype ? -1 : 1;
	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return (a->known > b->known) - (a->known < b->known);
}

/* nccl-tests bus bandwidth factor of a collective name; 0 = unknown */
static double busbw_factor(const char *name, uint32_t n)
{
	char low[64];
	size_t k = 0;
	for (const char *p = name; *p && k + 1 < sizeof(low); p++)
		if (*p != '_' && *p != ' ')
			low[k++] = (char)tolower((unsigned char)*p);
	low[k] = 0;
	int has_n = n > 0;
	double m = has_n ? (double)(n - 1) / (double)n : 0;
	if (strstr(low, "allreduce"))
		return has_n ? 2 * m : 0;
	if (strstr(low, "allgather") || strstr(low, "reducescatter") || strstr(low, "alltoall"))
		return has_n ? m : 0;
	if (strstr(low, "broadcast") || strstr(low, "reduce") || strstr(low, "send") ||
	    strstr(low, "recv"))
		return 1;
	return 0;
}

/* e's row key into *x (dur_ns too); 0 when e is no NCCL kernel */
static int nc_of(const struct gt_store *s, const struct gt_event *e, struct nc_ev *x)
{
	uint32_t nid = e->kind == GT_EV_KERNEL ? gt_event_nccl(e) : 0;
	if (e->kind != GT_EV_KERNEL || (!(e->flags & GT_EVF_NCCL) && !nid))
		return 0;
	*x = (struct nc_ev){ .coll = e->name, .dur_ns = e->dur_ns };
	const struct gt_nccl *a = nid ? gt_store_nccl_at(s, nid) : NULL;
	if (a) {
		x->known = 1;
		if (a->collective)
			x->coll = a->collective;
		x->dtype = a->dtype;
		x->group = a->group_size;
		uint64_t ne = a->in_nelems > a->out_nelems ? a->in_nelems : a->out_nelems;
		x->size_bytes = ne * a->dtype_bytes;
	}
	return 1;
}

/* gather the NCCL kernels in scope; 0 or -ENOMEM */
static int collect(const struct gt_store *s, const struct gt_scope *sc, struct nc_ev **out,
		   size_t *nout)
{
	struct nc_ev *v = NULL;
	size_t n = 0, cap = 0;
	for (uint32_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, li);
		if (!(l->kinds_mask & (1u << GT_EV_KERNEL)) || !gt_kernel_stats_lane_in_scope(l, sc))
			continue;
		size_t first, last;
		gt_kernel_stats_lane_starts(l, sc->t0_ns, sc->t1_ns, &first, &last);
		gt_store_read_tick(s, l, first, last);
		for (size_t i = first; i < last; i++) {
			struct nc_ev x;
			if (!nc_of(s, &l->ev[i], &x))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				struct nc_ev *nv = realloc(v, cap * sizeof(*nv));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[n++] = x;
		}
	}
	*out = v;
	*nout = n;
	return 0;
}

static int nccl_run(const struct gt_store *s, const struct gt_scope *sc_in,
		    struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_scope scope;
	if (gt_steps_scope(s, sc_in, &scope, err, errlen))
		return -ENOENT;
	const struct gt_scope *sc = &scope;
	static const char *const cols[] = {
		"Time (%):p:1", "Total Time (ns):i", "Count:i", "Avg (ns):f:1", "Min (ns):i",
		"Max (ns):i", "Size (bytes):i", "Data Type", "Group Size:i", "Algo BW (GB/s):f:3",
		"Bus BW (GB/s):f:3", "Collective", NULL
	};
	struct nc_ev *v = NULL;
	size_t n = 0;
	struct gt_table *t = NULL;
	if (collect(s, sc, &v, &n))
		goto nomem;
	if (n > 1)
		qsort(v, n, sizeof(*v), nc_cmp);
	int64_t grand = 0;
	for (size_t i = 0; i < n; i++)
		grand += v[i].dur_ns;
	t = tables_new("nccl", "NCCL Collectives by Name and Size", cols);
	if (!t)
		goto nomem;
	/* a row is (collective, size, type, group): nccl_instances matches them */
	gt_table_col_flags(t, 11, GT_COLF_NAME | GT_COLF_KEY);
	gt_table_col_flags(t, 6, GT_COLF_KEY);
	gt_table_col_flags(t, 7, GT_COLF_KEY);
	gt_table_col_flags(t, 8, GT_COLF_KEY);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		int64_t tot = 0, mn = INT64_MAX, mx = INT64_MIN;
		while (j < n && !nc_cmp(&v[i], &v[j])) {
			tot += v[j].dur_ns;
			mn = v[j].dur_ns < mn ? v[j].dur_ns : mn;
			mx = v[j].dur_ns > mx ? v[j].dur_ns : mx;
			j++;
		}
		long row = gt_table_row(t);
		if (row < 0)
			goto nomem;
		size_t w = (size_t)row;
		double avg = (double)tot / (double)(j - i);
		gt_table_set_float(t, w, 0, grand > 0 ? 100.0 * (double)tot / (double)grand : 0);
		gt_table_set_int(t, w, 1, tot);
		gt_table_set_int(t, w, 2, (int64_t)(j - i));
		gt_table_set_float(t, w, 3, avg);
		gt_table_set_int(t, w, 4, mn);
		gt_table_set_int(t, w, 5, mx);
		const char *coll = gt_store_str(s, v[i].coll);
		if (v[i].size_bytes > 0) {
			gt_table_set_int(t, w, 6, (int64_t)v[i].size_bytes);
			if (avg > 0) {
				double algbw = (double)v[i].size_bytes / avg;  /* bytes/ns = GB/s */
				double f = busbw_factor(coll, v[i].group);
				gt_table_set_float(t, w, 9, algbw);
				if (f > 0)
					gt_table_set_float(t, w, 10, algbw * f);
			}
		}
		if (v[i].dtype && gt_table_set_str(t, w, 7, gt_store_str(s, v[i].dtype)))
			goto nomem;
		if (v[i].group)
			gt_table_set_int(t, w, 8, v[i].group);
		if (gt_table_set_str(t, w, 11, coll))
			goto nomem;
		i = j;
	}
	gt_table_sort(t, 1, 1);
	if (gt_table_note(t, "Size = max(In, Out msg nelems) x dtype bytes; Algo BW = size / Avg; "
			     "Bus BW = Algo BW x 2(n-1)/n (allreduce), (n-1)/n (allgather, "
			     "reducescatter, alltoall), 1 (broadcast, reduce, send/recv) as in nccl-tests") ||
	    (n > 0 && t->nrows > 0 && gt_table_is_null(t, 0, 6) &&
	     gt_table_note(t, "Collective = kernel name where the trace has no collective arguments")) ||
	    tables_scope_note(t, s, sc))
		goto nomem;
	free(v);
	return gt_report_out_add(out, t);
nomem:
	free(v);
	gt_table_free(t);
	snprintf(err, errlen, "nccl: out of memory");
	return -ENOMEM;
}

/* drill-down: the NCCL kernels in scope with the row's key (collective,
 * size, data type, group size; a null cell is an unknown value) */
static int nccl_instances(const struct gt_store *s, const struct gt_scope *sc_in,
			  const struct gt_table *t, size_t row, struct gt_ref **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	struct gt_scope sc;
	char err[64];
	if (strcmp(t->name, "nccl") || t->ncols < 12 || row >= t->nrows ||
	    gt_table_is_null(t, row, 11) || gt_steps_scope(s, sc_in, &sc, err, sizeof(err)))
		return -ENOENT;
	const char *coll = gt_table_cell(t, row, 11)->s;
	const char *dtype = gt_table_is_null(t, row, 7) ? NULL : gt_table_cell(t, row, 7)->s;
	uint64_t size = gt_table_is_null(t, row, 6) ? 0 : (uint64_t)gt_table_cell(t, row, 6)->i;
	uint32_t group = gt_table_is_null(t, row, 8) ? 0 : (uint32_t)gt_table_cell(t, row, 8)->i;
	size_t cap = 0;
	for (uint32_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, li);
		if (!(l->kinds_mask & (1u << GT_EV_KERNEL)) || !gt_kernel_stats_lane_in_scope(l, &sc))
			continue;
		size_t first, last;
		gt_kernel_stats_lane_starts(l, sc.t0_ns, sc.t1_ns, &first, &last);
		gt_store_read_tick(s, l, first, last);
		for (size_t i = first; i < last; i++) {
			struct nc_ev x;
			if (!nc_of(s, &l->ev[i], &x) || x.size_bytes != size || x.group != group ||
			    strcmp(gt_store_str(s, x.coll), coll) || !x.dtype != !dtype ||
			    (dtype && strcmp(gt_store_str(s, x.dtype), dtype)))
				continue;
			if (tables_ref_push(out, n, &cap, (struct gt_ref){ li, (uint32_t)i })) {
				free(*out);
				*out = NULL;
				*n = 0;
				return -ENOMEM;
			}
		}
	}
	return 0;
}

const struct gt_report gt_report_nccl = {
	.name = "nccl",
	.help = "NCCL kernels per collective and message size: count, time, algorithm and bus "
		"bandwidth (nccl-tests definitions)",
	.run = nccl_run,
	.instances = nccl_instances,
};
