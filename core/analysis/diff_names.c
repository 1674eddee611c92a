/*
 * diff_names.c - the per-name comparison table of `gtrace diff` (kernels,
 * ops): both runs' items joined by name, Baseline / Experiment / Delta per
 * figure (us), per count and per mean of the first figure, and Change.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/diff.h"

struct joined {
	const struct gt_diff_item *a, *b;   /* either may be NULL */
	int64_t d[GT_DIFF_MAX_FIG];         /* deltas */
};

static int nfig_sort;

static int by_name(const void *x, const void *y)
{
	return strcmp(((const struct gt_diff_item *)x)->name, ((const struct gt_diff_item *)y)->name);
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

static int by_delta(const void *x, const void *y)
{
	const struct joined *p = x, *q = y;
	for (int f = 0; f < nfig_sort; f++) {
		int64_t u = abs64(p->d[f]), v = abs64(q->d[f]);
		if (u != v)
			return u > v ? -1 : 1;
	}
	const char *m = p->a ? p->a->name : p->b->name, *n = q->a ? q->a->name : q->b->name;
	return strcmp(m, n);
}

static struct gt_diff_item *sorted_copy(const struct gt_diff_item *v, size_t n)
{
	struct gt_diff_item *c = malloc((n ? n : 1) * sizeof(*c));
	if (c && n) {
		memcpy(c, v, n * sizeof(*c));
		qsort(c, n, sizeof(*c), by_name);
	}
	return c;
}

/* add the columns; 0 or -ENOMEM */
static int add_cols(struct gt_table *t, const char *const *fig, int nfig)
{
	static const char *const side[] = { "Baseline", "Experiment", "Delta" };
	char nm[96];
	if (gt_table_col(t, "Name", GT_COL_STR, 0) < 0)
		return -ENOMEM;
	for (int f = 0; f < nfig; f++)
		for (int k = 0; k < 3; k++) {
			snprintf(nm, sizeof(nm), "%s %s (us)", side[k], fig[f]);
			if (gt_table_col(t, nm, GT_COL_FLOAT, 1) < 0)
				return -ENOMEM;
		}
	for (int k = 0; k < 3; k++) {
		snprintf(nm, sizeof(nm), "%s Count", side[k]);
		if (gt_table_col(t, nm, GT_COL_INT, 0) < 0)
			return -ENOMEM;
	}
	for (int k = 0; k < 3; k++) {
		snprintf(nm, sizeof(nm), "%s Mean %s (us)", side[k], fig[0]);
		if (gt_table_col(t, nm, GT_COL_FLOAT, 3) < 0)
			return -ENOMEM;
	}
	return gt_table_col(t, "Change", GT_COL_STR, 0) < 0 ? -ENOMEM : 0;
}

static int put_row(struct gt_table *t, const struct joined *j, int nfig)
{
	long r = gt_table_row(t);
	if (r < 0 || gt_table_set_str(t, (size_t)r, 0, j->a ? j->a->name : j->b->name))
		return -ENOMEM;
	size_t row = (size_t)r, c = 1;
	for (int f = 0; f < nfig; f++, c += 3) {
		if (j->a)
			gt_table_set_float(t, row, c, (double)j->a->fig_ns[f] / 1e3);
		if (j->b)
			gt_table_set_float(t, row, c + 1, (double)j->b->fig_ns[f] / 1e3);
		gt_table_set_float(t, row, c + 2, (double)j->d[f] / 1e3);
	}
	uint64_t na = j->a ? j->a->count : 0, nb = j->b ? j->b->count : 0;
	gt_table_set_int(t, row, c, (int64_t)na);
	gt_table_set_int(t, row, c + 1, (int64_t)nb);
	gt_table_set_int(t, row, c + 2, (int64_t)nb - (int64_t)na);
	c += 3;
	double ma = na ? (double)j->a->fig_ns[0] / (double)na / 1e3 : 0;
	double mb = nb ? (double)j->b->fig_ns[0] / (double)nb / 1e3 : 0;
	if (na)
		gt_table_set_float(t, row, c, ma);
	if (nb)
		gt_table_set_float(t, row, c + 1, mb);
	if (na && nb)
		gt_table_set_float(t, row, c + 2, mb - ma);
	const char *ch = !na ? "appeared" : !nb ? "disappeared" : "";
	return gt_table_set_str(t, row, c + 3, ch) ? -ENOMEM : 0;
}

struct gt_table *gt_diff_names_table(const char *tname, const char *title,
				  const struct gt_diff_item *a, size_t na,
				  const struct gt_diff_item *b, size_t nb,
				  const char *const *fig, int nfig)
{
	struct gt_diff_item *sa = sorted_copy(a, na), *sb = sorted_copy(b, nb);
	struct joined *j = malloc((na + nb + 1) * sizeof(*j));
	struct gt_table *t = gt_table_new(tname, title);
	int rc = (sa && sb && j && t) ? add_cols(t, fig, nfig) : -ENOMEM;
	size_t n = 0, i = 0, k = 0;
	while (!rc && (i < na || k < nb)) {
		int c = i == na ? 1 : k == nb ? -1 : strcmp(sa[i].name, sb[k].name);
		struct joined *x = &j[n++];
		x->a = c <= 0 ? &sa[i++] : NULL;
		x->b = c >= 0 ? &sb[k++] : NULL;
		for (int f = 0; f < nfig; f++)
			x->d[f] = (x->b ? x->b->fig_ns[f] : 0) - (x->a ? x->a->fig_ns[f] : 0);
	}
	nfig_sort = nfig;
	if (!rc && n)
		qsort(j, n, sizeof(*j), by_delta);
	for (size_t r = 0; r < n && !rc; r++)
		rc = put_row(t, &j[r], nfig);
	free(sa);
	free(sb);
	free(j);
	if (rc) {
		gt_table_free(t);
		return NULL;
	}
	return t;
}
