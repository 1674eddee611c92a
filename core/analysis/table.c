/*
 * table.c - struct gt_table: a row-major grid of typed cells with a null
 * bit per cell ("n/a", never a fake 0), built column by column then row by
 * row, and a stable sort.  The writers are in table_write.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "gtrace/report.h"

void gt_scope_all(struct gt_scope *sc)
{
	sc->t0_ns = INT64_MIN;
	sc->t1_ns = INT64_MAX;
	sc->gpu = -1;
	sc->rank = -1;
	sc->step = -1;
	sc->flags = 0;
	sc->param_bytes = 0;
	sc->link_gbps = 0;
}

struct gt_table *gt_table_new(const char *name, const char *title)
{
	struct gt_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->name = strdup(name ? name : "");
	t->title = strdup(title ? title : "");
	if (!t->name || !t->title) {
		gt_table_free(t);
		return NULL;
	}
	t->sort_col = -1;
	return t;
}

/* free every string cell of the table */
static void table_free_cells(struct gt_table *t)
{
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++)
			if (t->cols[c].type == GT_COL_STR)
				free(t->cells[r * t->ncols + c].s);
}

void gt_table_free(struct gt_table *t)
{
	if (!t)
		return;
	if (t->cells)
		table_free_cells(t);
	for (size_t c = 0; c < t->ncols; c++)
		free(t->cols[c].name);
	for (size_t i = 0; i < t->nnotes; i++)
		free(t->notes[i]);
	free(t->notes);
	free(t->cols);
	free(t->cells);
	free(t->null);
	free(t->name);
	free(t->title);
	free(t);
}

int gt_table_col(struct gt_table *t, const char *name, enum gt_col_type type, int decimals)
{
	if (t->nrows > 0 || t->caprows > 0)
		return -EINVAL;         /* columns first, then rows */
	struct gt_col *nc = realloc(t->cols, (t->ncols + 1) * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	t->cols = nc;
	struct gt_col *c = &t->cols[t->ncols];
	c->name = strdup(name);
	if (!c->name)
		return -ENOMEM;
	c->type = type;
	c->decimals = decimals < 0 ? 0 : decimals > 12 ? 12 : decimals;
	c->align_left = type == GT_COL_STR;
	size_t n = strlen(name);
	c->flags = 0;
	if (type != GT_COL_STR && n >= 4 && !strcmp(name + n - 4, "(ns)"))
		c->flags |= GT_COLF_DUR;
	if (type == GT_COL_STR && !strcasecmp(name, "name"))
		c->flags |= GT_COLF_NAME | GT_COLF_KEY;
	return (int)t->ncols++;
}

void gt_table_col_flags(struct gt_table *t, size_t col, unsigned flags)
{
	if (col < t->ncols)
		t->cols[col].flags |= flags;
}

int gt_table_col_with(const struct gt_table *t, unsigned flags)
{
	for (size_t c = 0; c < t->ncols; c++)
		if ((t->cols[c].flags & flags) == flags)
			return (int)c;
	return -1;
}

const char *gt_col_unit(const struct gt_col *c)
{
	static const char *const units[] = { "ns", "us", "ms", "s", "%", "bytes", "MB", "GB/s",
					     "x", NULL };
	if (c->type == GT_COL_STR)
		return NULL;
	if (c->type == GT_COL_PCT)
		return "%";
	size_t n = strlen(c->name);
	if (n >= 2 && !strcmp(c->name + n - 2, " %"))
		return "%";
	const char *open = strrchr(c->name, '(');
	if (!open || n < 3 || c->name[n - 1] != ')')
		return NULL;
	size_t ul = (size_t)(c->name + n - 1 - (open + 1));
	for (size_t i = 0; units[i]; i++)
		if (strlen(units[i]) == ul && !strncmp(open + 1, units[i], ul))
			return units[i];
	return NULL;
}

long gt_table_row(struct gt_table *t)
{
	if (t->ncols == 0)
		return -EINVAL;
	if (t->nrows == t->caprows) {
		size_t cap = t->caprows ? t->caprows * 2 : 16;
		union gt_cell *cells = realloc(t->cells, cap * t->ncols * sizeof(*cells));
		if (!cells)
			return -ENOMEM;
		t->cells = cells;
		unsigned char *nul = realloc(t->null, cap * t->ncols);
		if (!nul)
			return -ENOMEM;
		t->null = nul;
		t->caprows = cap;
	}
	size_t r = t->nrows++;
	memset(&t->cells[r * t->ncols], 0, t->ncols * sizeof(*t->cells));
	memset(&t->null[r * t->ncols], 1, t->ncols);
	return (long)r;
}

void gt_table_set_int(struct gt_table *t, size_t row, size_t col, int64_t v)
{
	size_t i = row * t->ncols + col;
	if (t->cols[col].type == GT_COL_STR)
		return;
	if (t->cols[col].type == GT_COL_INT)
		t->cells[i].i = v;
	else
		t->cells[i].f = (double)v;
	t->null[i] = 0;
}

void gt_table_set_float(struct gt_table *t, size_t row, size_t col, double v)
{
	size_t i = row * t->ncols + col;
	if (t->cols[col].type == GT_COL_STR)
		return;
	if (isnan(v) || isinf(v)) {
		t->null[i] = 1;         /* unknown: printed n/a */
		return;
	}
	if (t->cols[col].type == GT_COL_INT)
		t->cells[i].i = (int64_t)llround(v);
	else
		t->cells[i].f = v;
	t->null[i] = 0;
}

int gt_table_set_str(struct gt_table *t, size_t row, size_t col, const char *s)
{
	size_t i = row * t->ncols + col;
	if (t->cols[col].type != GT_COL_STR)
		return -EINVAL;
	char *d = s ? strdup(s) : NULL;
	if (s && !d)
		return -ENOMEM;
	free(t->cells[i].s);
	t->cells[i].s = d;
	t->null[i] = d == NULL;
	return 0;
}

int gt_table_note(struct gt_table *t, const char *fmt, ...)
{
	char **nn = realloc(t->notes, (t->nnotes + 1) * sizeof(*nn));
	if (!nn)
		return -ENOMEM;
	t->notes = nn;
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	t->notes[t->nnotes++] = s;
	return 0;
}

const union gt_cell *gt_table_cell(const struct gt_table *t, size_t row, size_t col)
{
	return &t->cells[row * t->ncols + col];
}

int gt_table_is_null(const struct gt_table *t, size_t row, size_t col)
{
	return t->null[row * t->ncols + col];
}

/* sort context: merge sort over row indices (stable) */
struct sort_ctx {
	const struct gt_table *t;
	size_t col;
	int desc;
};

/* compare rows a and b by the sort column; nulls always sort last */
static int row_cmp(const struct sort_ctx *c, size_t a, size_t b)
{
	const struct gt_table *t = c->t;
	int na = gt_table_is_null(t, a, c->col), nb = gt_table_is_null(t, b, c->col);
	if (na || nb)
		return na - nb;
	const union gt_cell *x = gt_table_cell(t, a, c->col), *y = gt_table_cell(t, b, c->col);
	int r;
	switch (t->cols[c->col].type) {
	case GT_COL_STR:
		r = strcmp(x->s, y->s);
		r = (r > 0) - (r < 0);
		break;
	case GT_COL_INT:
		r = (x->i > y->i) - (x->i < y->i);
		break;
	default:
		r = (x->f > y->f) - (x->f < y->f);
		break;
	}
	return c->desc ? -r : r;
}

static void merge_sort(const struct sort_ctx *c, size_t *v, size_t *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	merge_sort(c, v, tmp, h);
	merge_sort(c, v + h, tmp, n - h);
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = row_cmp(c, v[j], v[i]) < 0 ? v[j++] : v[i++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

void gt_table_sort(struct gt_table *t, size_t col, int descending)
{
	if (t->nrows < 2 || col >= t->ncols)
		return;
	size_t n = t->nrows, nc = t->ncols;
	size_t *idx = malloc(n * sizeof(*idx)), *tmp = malloc(n * sizeof(*tmp));
	union gt_cell *cells = malloc(n * nc * sizeof(*cells));
	unsigned char *nul = malloc(n * nc);
	if (!idx || !tmp || !cells || !nul)
		goto out;               /* out of memory: leave the order as it is */
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	struct sort_ctx c = { t, col, descending };
	merge_sort(&c, idx, tmp, n);
	for (size_t i = 0; i < n; i++) {
		memcpy(&cells[i * nc], &t->cells[idx[i] * nc], nc * sizeof(*cells));
		memcpy(&nul[i * nc], &t->null[idx[i] * nc], nc);
	}
	memcpy(t->cells, cells, n * nc * sizeof(*cells));
	memcpy(t->null, nul, n * nc);
out:
	free(idx);
	free(tmp);
	free(cells);
	free(nul);
}

