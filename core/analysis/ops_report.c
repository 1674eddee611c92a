/*
 * ops_report.c - the "ops" report: the PyTorch TensorBoard plugin's operator
 * table (grouped by name), gtrace/ops.h has the rules.  Times in us.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/ops.h"
#include "gtrace/steps.h"
#include "reports.h"
#include "tables.h"

static const char *const cols_name[] = {
	"Name", "Calls:i", "Device Self Duration (us):f:1", "Device Total Duration (us):f:1",
	"Host Self Duration (us):f:1", "Host Total Duration (us):f:1", "Tensor Cores Eligible",
	"Tensor Cores Self (%):p:2", "Tensor Cores Total (%):p:2", "Has Call Stack", NULL
};

/* grouped by name + input shapes / call stack: the key is the second column */
#define COLS_KEYED(key) { \
	"Name", key, "Calls:i", "Device Self Duration (us):f:1", \
	"Device Total Duration (us):f:1", "Host Self Duration (us):f:1", \
	"Host Total Duration (us):f:1", "Tensor Cores Eligible", "Tensor Cores Self (%):p:2", \
	"Tensor Cores Total (%):p:2", NULL }
static const char *const cols_shape[] = COLS_KEYED("Input Shape");
static const char *const cols_stack[] = COLS_KEYED("Call Stack");

/* fill one table row from an operator row; 0 or -ENOMEM */
static int put_row(struct gt_table *t, const struct gt_store *s, const struct gt_ops_row *o,
		   int group)
{
	long r = gt_table_row(t);
	if (r < 0 || gt_table_set_str(t, (size_t)r, 0, gt_store_str(s, o->name)))
		return -ENOMEM;
	size_t row = (size_t)r, c = 1;
	if (group != GT_OPS_BY_NAME) {
		/* the plugin's str(None) for a call without the arg */
		if (gt_table_set_str(t, row, c++, o->key ? gt_store_str(s, o->key) : "None"))
			return -ENOMEM;
	}
	gt_table_set_int(t, row, c, (int64_t)o->calls);
	gt_table_set_float(t, row, c + 1, (double)o->dev_self_ns / 1e3);
	gt_table_set_float(t, row, c + 2, (double)o->dev_total_ns / 1e3);
	gt_table_set_float(t, row, c + 3, (double)o->host_self_ns / 1e3);
	gt_table_set_float(t, row, c + 4, (double)o->host_total_ns / 1e3);
	if (gt_table_set_str(t, row, c + 5, o->tc_eligible ? "Yes" : "No"))
		return -ENOMEM;
	if (o->dev_self_ns > 0)
		gt_table_set_float(t, row, c + 6, 100.0 * (double)o->tc_self_ns / (double)o->dev_self_ns);
	if (o->dev_total_ns > 0)
		gt_table_set_float(t, row, c + 7, 100.0 * (double)o->tc_total_ns / (double)o->dev_total_ns);
	if (group == GT_OPS_BY_NAME && gt_table_set_str(t, row, c + 8, o->has_stack ? "Yes" : "No"))
		return -ENOMEM;
	return 0;
}

static int ops_run(const struct gt_store *s, const struct gt_scope *sc_in,
		   struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_scope sc;
	if (gt_steps_scope(s, sc_in, &sc, err, errlen))
		return -ENOENT;
	struct gt_ops_result r;
	int group = GT_OPS_SCOPE_GROUP(sc_in ? sc_in->flags : 0);
	int rc = gt_ops_compute_by(s, &sc, group, &r, err, errlen);
	if (rc)
		return rc;
	struct gt_table *t =
		group == GT_OPS_BY_SHAPE ?
		tables_new("ops_shape", "Operators by input shape (PyTorch TensorBoard plugin "
			   "operator view, group by operator + input shape)", cols_shape) :
		group == GT_OPS_BY_STACK ?
		tables_new("ops_stack", "Operators by call stack (PyTorch TensorBoard plugin "
			   "operator view, call stacks of an operator)", cols_stack) :
		tables_new("ops", "Operators (PyTorch TensorBoard plugin operator view)", cols_name);
	rc = t ? 0 : -ENOMEM;
	if (t && group != GT_OPS_BY_NAME)
		gt_table_col_flags(t, 1, GT_COLF_KEY);   /* a row is (name, shape / stack) */
	if (t)   /* Device Self Duration, as the plugin sorts */
		t->sort_col = group == GT_OPS_BY_NAME ? 2 : 3;
	for (size_t i = 0; i < r.n && !rc; i++)
		rc = put_row(t, s, &r.rows[i], group);
	if (!rc && !r.n)
		rc = gt_table_note(t, "No framework operators (CPU ops) in the scope");
	if (!rc && r.dropped)
		rc = gt_table_note(t, "%llu operators left out: they partly overlap an enclosing "
				   "one on their thread", (unsigned long long)r.dropped);
	if (!rc)
		rc = tables_scope_note(t, s, &sc);
	gt_ops_result_done(&r);
	if (!rc)
		return gt_report_out_add(out, t);
	gt_table_free(t);
	snprintf(err, errlen, "ops: out of memory");
	return rc;
}

/* the row's shapes / stack key (its GT_COLF_KEY column beside the name) as
 * a string id into *key: 0 for the plugin's "None", UINT32_MAX when no call
 * has it; 0 when t has no such column (rows per name), -1 when it has one
 * but the cell is null */
static int row_key(const struct gt_store *s, const struct gt_table *t, size_t row, int *keyed,
		   uint32_t *key)
{
	*keyed = 0;
	*key = 0;
	for (size_t c = 0; c < t->ncols; c++) {
		if (!(t->cols[c].flags & GT_COLF_KEY) || (t->cols[c].flags & GT_COLF_NAME))
			continue;
		if (t->cols[c].type != GT_COL_STR || gt_table_is_null(t, row, c))
			return -1;
		const char *k = gt_table_cell(t, row, c)->s;
		*keyed = 1;
		*key = !k || !strcmp(k, "None") ? 0 : gt_store_str_find(s, k, strlen(k));
		return 0;
	}
	return 0;
}

/* drill-down: the calls of the row's operator (its framework operator events
 * on host threads in scope; a call nested in a call of the same name is
 * left out, as the table merges it).  Grouped tables (ops_shape, ops_stack)
 * keep the calls whose input shapes / call stack is the row's; gtrace
 * diff's per-operator table (diff_ops) is per name: the scope's rank picks
 * the run */
static int ops_instances(const struct gt_store *s, const struct gt_scope *sc_in,
			 const struct gt_table *t, size_t row, struct gt_ref **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	int group = !strcmp(t->name, "ops_shape") ? GT_OPS_BY_SHAPE :
		    !strcmp(t->name, "ops_stack") ? GT_OPS_BY_STACK :
		    !strcmp(t->name, "ops") || !strcmp(t->name, "diff_ops") ? GT_OPS_BY_NAME : -1;
	const char *nm = group < 0 ? NULL : tables_row_name(t, row);
	struct gt_scope sc;
	char err[64];
	int keyed;
	uint32_t key;
	if (!nm || row_key(s, t, row, &keyed, &key) || keyed != (group != GT_OPS_BY_NAME) ||
	    gt_steps_scope(s, sc_in, &sc, err, sizeof(err)))
		return -ENOENT;
	uint32_t id = gt_store_str_find(s, nm, strlen(nm));
	size_t cap = 0, nstr = gt_store_str_count(s);
	for (uint32_t li = 0; id != UINT32_MAX && li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, li);
		if (l->key.type != GT_LANE_HOST || !(l->kinds_mask & (1u << GT_EV_CPU_OP)) ||
		    !gt_kernel_stats_lane_in_scope(l, &sc))
			continue;
		int64_t cover_end = INT64_MIN;   /* end of the last call kept on this thread */
		size_t first, last;
		gt_kernel_stats_lane_starts(l, sc.t0_ns, sc.t1_ns, &first, &last);
		gt_store_read_tick(s, l, first, last);
		for (size_t j = first; j < last; j++) {
			const struct gt_event *e = &l->ev[j];
			if (e->kind != GT_EV_CPU_OP || e->name != id ||
			    (e->start_ns < cover_end && e->start_ns + e->dur_ns <= cover_end))
				continue;
			/* a call nested in this one belongs to its row, whatever its own key */
			cover_end = e->start_ns + e->dur_ns;
			if (keyed) {   /* the key as the table's rows are keyed (ops.c) */
				uint32_t k = group == GT_OPS_BY_SHAPE ? gt_ops_event_shape(e) :
					     gt_ops_event_stack(e);
				if ((k >= nstr ? 0 : k) != key)
					continue;
			}
			if (tables_ref_push(out, n, &cap, (struct gt_ref){ li, (uint32_t)j })) {
				free(*out);
				*out = NULL;
				*n = 0;
				return -ENOMEM;
			}
		}
	}
	return 0;
}

const struct gt_report gt_report_ops = {
	.name = "ops",
	.help = "framework operators per name: calls, host and device self/total time, Tensor "
		"Core eligibility (PyTorch TensorBoard plugin operator view); --group-by "
		"shape|stack: per name + input shapes / call stack",
	.run = ops_run,
	.instances = ops_instances,
};
