/*
 * diff_verdicts.c - two runs' overviews side by side (diff_verdicts, the
 * last table of `gtrace diff --report overview`, and the viewer's compare
 * page of the verdicts): one row per figure of the overview record, both
 * values as text (numbers plain, with the column's decimals, so the table
 * stays one type per column) and the delta of numbers; then the
 * recommendations of both runs, paired by kind (the i-th of a kind in one
 * run with the i-th of it in the other).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "gtrace/diff.h"
#include "tables.h"

static const char *const cols[] = { "Figure", "Baseline", "Experiment", "Delta:f:2", NULL };

/* cell (r, c) of t as plain text into buf; 0 when null */
static int cell_plain(const struct gt_table *t, size_t r, size_t c, char *buf, size_t len)
{
	if (r >= t->nrows || gt_table_is_null(t, r, c))
		return 0;
	const union gt_cell *v = gt_table_cell(t, r, c);
	if (t->cols[c].type == GT_COL_STR)
		snprintf(buf, len, "%s", v->s ? v->s : "");
	else if (t->cols[c].type == GT_COL_INT)
		snprintf(buf, len, "%lld", (long long)v->i);
	else
		snprintf(buf, len, "%.*f", t->cols[c].decimals, v->f);
	return 1;
}

static double num(const struct gt_table *t, size_t c)
{
	const union gt_cell *v = gt_table_cell(t, 0, c);
	return t->cols[c].type == GT_COL_INT ? (double)v->i : v->f;
}

/* the column of t called name, -1 when none */
static long col_named(const struct gt_table *t, const char *name)
{
	for (size_t c = 0; t && c < t->ncols; c++)
		if (!strcmp(t->cols[c].name, name))
			return (long)c;
	return -1;
}

/* one row: figure, both texts (NULL: n/a), delta when has_d; 0 or -ENOMEM */
static int put(struct gt_table *t, const char *fig, const char *a, const char *b, int has_d,
	       double d)
{
	long r = gt_table_row(t);
	if (r < 0 || gt_table_set_str(t, (size_t)r, 0, fig) ||
	    (a && gt_table_set_str(t, (size_t)r, 1, a)) || (b && gt_table_set_str(t, (size_t)r, 2, b)))
		return -ENOMEM;
	if (has_d)
		gt_table_set_float(t, (size_t)r, 3, d);
	return 0;
}

/* the figures of the two records; 0 or -ENOMEM */
static int figures(struct gt_table *t, const struct gt_table *a, const struct gt_table *b)
{
	int rc = 0;
	for (size_t c = 0; c < a->ncols && !rc; c++) {
		long cb = col_named(b, a->cols[c].name);
		char va[256], vb[256];
		int ha = cell_plain(a, 0, c, va, sizeof(va));
		int hb = cb >= 0 && cell_plain(b, 0, (size_t)cb, vb, sizeof(vb));
		size_t nl = strlen(a->cols[c].name);
		int is_rank = nl >= 5 && !strcmp(a->cols[c].name + nl - 5, " rank");   /* an id */
		int numeric = a->cols[c].type != GT_COL_STR && cb >= 0 && !is_rank &&
			      b->cols[cb].type != GT_COL_STR && !(a->cols[c].flags & GT_COLF_ID);
		rc = put(t, a->cols[c].name, ha ? va : NULL, hb ? vb : NULL, numeric && ha && hb,
			 numeric && ha && hb ? num(b, (size_t)cb) - num(a, c) : 0);
	}
	/* figures only the experiment has */
	for (size_t c = 0; c < b->ncols && !rc; c++) {
		char vb[256];
		if (col_named(a, b->cols[c].name) < 0)
			rc = put(t, b->cols[c].name, NULL,
				 cell_plain(b, 0, c, vb, sizeof(vb)) ? vb : NULL, 0, 0);
	}
	return rc;
}

/* "severity: text" of recommendation row r of t */
static void rec_text(const struct gt_table *t, size_t r, char *buf, size_t len)
{
	char sev[32] = "", txt[768] = "";
	cell_plain(t, r, 0, sev, sizeof(sev));
	cell_plain(t, r, 2, txt, sizeof(txt));
	snprintf(buf, len, "%s: %s", sev, txt);
}

/* the i-th row (from 0) of kind k in t, -1 when none */
static long nth_of_kind(const struct gt_table *t, const char *k, size_t i)
{
	for (size_t r = 0; t && r < t->nrows; r++) {
		const union gt_cell *v = gt_table_cell(t, r, 1);
		if (!gt_table_is_null(t, r, 1) && v->s && !strcmp(v->s, k) && i-- == 0)
			return (long)r;
	}
	return -1;
}

/* which occurrence of its kind row r of t is */
static size_t occurrence(const struct gt_table *t, size_t r)
{
	const char *k = gt_table_cell(t, r, 1)->s;
	size_t i = 0;
	for (size_t q = 0; q < r; q++)
		i += !strcmp(gt_table_cell(t, q, 1)->s, k);
	return i;
}

/* rows of x (the baseline when first) paired with y; with only_unpaired the
 * rows of x that y lacks; 0 or -ENOMEM */
static int recs(struct gt_table *t, const struct gt_table *x, const struct gt_table *y, int x_is_a,
		int only_unpaired)
{
	int rc = 0;
	for (size_t r = 0; x && r < x->nrows && !rc; r++) {
		if (gt_table_is_null(x, r, 1))
			continue;
		const char *k = gt_table_cell(x, r, 1)->s;
		long p = nth_of_kind(y, k, occurrence(x, r));
		if (only_unpaired && p >= 0)
			continue;
		char fig[128], tx[1024], ty[1024];
		snprintf(fig, sizeof(fig), "Recommendation: %s", k);
		rec_text(x, r, tx, sizeof(tx));
		if (p >= 0)
			rec_text(y, (size_t)p, ty, sizeof(ty));
		const char *none = "none";
		const char *ya = p >= 0 ? ty : none;
		rc = put(t, fig, x_is_a ? tx : ya, x_is_a ? ya : tx, 0, 0);
	}
	return rc;
}

struct gt_table *gt_diff_verdicts_table(const struct gt_table *ov_a, const struct gt_table *ov_b,
				     const struct gt_table *rec_a, const struct gt_table *rec_b)
{
	struct gt_table *t = tables_new("diff_verdicts", "Overviews side by side: figures and "
					"verdicts of both runs", cols);
	if (!t)
		return NULL;
	gt_table_col_flags(t, 0, GT_COLF_NAME | GT_COLF_KEY);
	int rc = figures(t, ov_a, ov_b);
	if (!rc)
		rc = recs(t, rec_a, rec_b, 1, 0);
	if (!rc)
		rc = recs(t, rec_b, rec_a, 0, 1);
	if (!rc && !(rec_a && rec_a->nrows) && !(rec_b && rec_b->nrows))
		rc = gt_table_note(t, "No recommendation in either run");
	if (!rc)
		rc = gt_table_note(t, "Delta = experiment - baseline, for numbers; text as "
				   "the overview prints it");
	if (rc) {
		gt_table_free(t);
		return NULL;
	}
	return t;
}
