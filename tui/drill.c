/*
 * drill.c - the table pages' drill-down (drill.h): the report's instances
 * hook, sorting, a row's identity and title from its typed key cells.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "demangle.h"
#include "drill.h"

static const struct gt_store *sort_store;
static int sort_by_time;

/* longest first, or earliest first; then by lane and index */
static int ref_cmp(const void *pa, const void *pb)
{
	const struct gt_ref *a = pa, *b = pb;
	const struct gt_event *x = gt_store_ev(sort_store, *a), *y = gt_store_ev(sort_store, *b);
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

void drill_sort(const struct gt_store *s, struct gt_ref *v, size_t n, int by_time)
{
	sort_store = s;
	sort_by_time = by_time;
	if (n > 1)
		qsort(v, n, sizeof(*v), ref_cmp);
}

int drill_push(struct gt_ref **v, size_t *n, size_t *cap, struct gt_ref r)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct gt_ref *nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = r;
	return 0;
}

int drill_load(const struct gt_store *s, const struct gt_report *rep, const struct gt_scope *sc,
	       const struct gt_table *t, size_t row, int by_time, struct gt_ref **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!rep || !rep->instances || !t || row >= t->nrows)
		return -ENOENT;
	int rc = rep->instances(s, sc, t, row, out, n);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
		return rc;
	}
	drill_sort(s, *out, *n, by_time);
	return 0;
}

/* one cell as the key spells it: raw values, "\x01" for null */
static int cell_key(const struct gt_table *t, size_t row, size_t c, char *buf, size_t len)
{
	if (gt_table_is_null(t, row, c))
		return snprintf(buf, len, "\x01");
	const union gt_cell *v = gt_table_cell(t, row, c);
	switch (t->cols[c].type) {
	case GT_COL_STR: return snprintf(buf, len, "%s", v->s ? v->s : "");
	case GT_COL_INT: return snprintf(buf, len, "%lld", (long long)v->i);
	default: return snprintf(buf, len, "%.17g", v->f);
	}
}

void drill_key(const struct gt_table *t, size_t row, char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = 0;
	for (size_t c = 0; c < t->ncols && row < t->nrows && k + 1 < len; c++) {
		if (!(t->cols[c].flags & GT_COLF_KEY))
			continue;
		int w = cell_key(t, row, c, buf + k, len - k);
		k += w > 0 ? (size_t)w : 0;
		if (k + 1 < len) {
			buf[k++] = '\x1f';   /* unit separator: in no name */
			buf[k] = 0;
		}
	}
	if (k >= len)
		buf[len - 1] = 0;
}

long drill_row(const struct gt_table *t, const char *key)
{
	char k[1024];
	for (size_t r = 0; r < t->nrows; r++) {
		drill_key(t, r, k, sizeof(k));
		if (!strcmp(k, key))
			return (long)r;
	}
	return -1;
}

void drill_title(const struct gt_table *t, size_t row, char *buf, size_t len)
{
	buf[0] = 0;
	int nc = gt_table_col_with(t, GT_COLF_NAME);
	if (nc >= 0 && row < t->nrows && !gt_table_is_null(t, row, (size_t)nc)) {
		const char *nm = gt_table_cell(t, row, (size_t)nc)->s;
		demangle_name(nm ? nm : "", buf, len);
	}
	size_t k = strlen(buf);
	for (size_t c = 0; c < t->ncols && row < t->nrows && k + 1 < len; c++) {
		if (!(t->cols[c].flags & GT_COLF_KEY) || (int)c == nc || gt_table_is_null(t, row, c))
			continue;
		const struct gt_col *col = &t->cols[c];
		const union gt_cell *v = gt_table_cell(t, row, c);
		const char *unit = gt_col_unit(col);
		int w;
		if (col->type == GT_COL_STR) {
			w = snprintf(buf + k, len - k, "%s%s", k ? ", " : "", v->s ? v->s : "");
		} else if (unit) {
			char num[32];
			cell_key(t, row, c, num, sizeof(num));
			w = snprintf(buf + k, len - k, "%s%s %s", k ? ", " : "", num, unit);
		} else {
			/* a count: named by its heading, lower case */
			char head[64], num[32];
			size_t i = 0;
			for (; col->name[i] && i + 1 < sizeof(head); i++)
				head[i] = (char)tolower((unsigned char)col->name[i]);
			head[i] = 0;
			cell_key(t, row, c, num, sizeof(num));
			w = snprintf(buf + k, len - k, "%s%s %s", k ? ", " : "", head, num);
		}
		k += w > 0 ? (size_t)w : 0;
	}
}

size_t drill_same(const struct gt_store *s, const struct gt_ref *v, size_t n,
		  const struct gt_lane_key *k, int64_t t_ns, size_t keep)
{
	for (size_t i = 0; i < n; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, v[i].lane);
		if (v[i].idx < l->n && l->ev[v[i].idx].start_ns == t_ns &&
		    !memcmp(&l->key, k, sizeof(*k)))
			return i;
	}
	return keep < n ? keep : (n ? n - 1 : 0);
}
