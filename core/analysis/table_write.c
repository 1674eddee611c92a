/*
 * table_write.c - the three writers of `gtrace stats` for struct gt_table:
 * an aligned text table (nsys stats style: numbers right-aligned with
 * thousands separators, the Name column last), CSV (RFC 4180 quoting) and
 * JSON (control characters escaped, null for n/a); and the report output
 * list (gt_report_out).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/report.h"
#include "../util/utf8.h"

/* format a number: plain (CSV/JSON) or with thousands separators */
static void fmt_num(char *buf, size_t len, const struct gt_col *c, const union gt_cell *v,
		    int sep)
{
	char raw[64];
	if (c->type == GT_COL_INT)
		snprintf(raw, sizeof(raw), "%lld", (long long)v->i);
	else
		snprintf(raw, sizeof(raw), "%.*f", c->decimals, v->f);
	if (!strcmp(raw, "-0") || (raw[0] == '-' && strspn(raw + 1, "0.") == strlen(raw + 1)))
		memmove(raw, raw + 1, strlen(raw));       /* no "-0.0" */
	if (!sep || (c->flags & GT_COLF_ID)) {
		snprintf(buf, len, "%s", raw);
		return;
	}
	const char *p = raw;
	size_t o = 0;
	if (*p == '-')
		buf[o++] = *p++;
	size_t ndig = strspn(p, "0123456789");
	for (size_t i = 0; i < ndig && o + 2 < len; i++) {
		buf[o++] = p[i];
		size_t left = ndig - i - 1;
		if (left > 0 && left % 3 == 0)
			buf[o++] = ',';
	}
	snprintf(buf + o, len - o, "%s", p + ndig);
}

/* cell as text for the text table; returns a pointer to buf or the string */
static const char *cell_text(const struct gt_table *t, size_t r, size_t c, char *buf, size_t len)
{
	if (gt_table_is_null(t, r, c))
		return "n/a";
	const union gt_cell *v = gt_table_cell(t, r, c);
	if (t->cols[c].type == GT_COL_STR)
		return v->s ? v->s : "";
	fmt_num(buf, len, &t->cols[c], v, 1);
	return buf;
}

/* display width of s as text_put prints it: one column per code point,
 * per control character and per invalid byte */
static size_t text_width(const char *s)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++, w++) {
		int n = *p >= 0x80 ? utf8_seq_len(p) : 0;
		if (n)
			p += n - 1;
	}
	return w;
}

/* a cell on the terminal: control characters (escape sequences, newlines
 * from a trace's names) and invalid UTF-8 bytes print as '?' */
static void text_put(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int n = *p >= 0x80 ? utf8_seq_len(p) : 0;
		if (n) {
			fwrite(p, 1, (size_t)n, f);
			p += n - 1;
		} else if (*p < 0x20 || *p >= 0x7f) {
			fputc('?', f);
		} else {
			fputc(*p, f);
		}
	}
}

/* text mode prints the wide name column last */
static int is_name_col(const struct gt_col *c)
{
	return c->type == GT_COL_STR &&
	       (!strcmp(c->name, "Name") || !strcmp(c->name, "Operation") ||
		!strcmp(c->name, "Range"));
}

/* a record (GT_TABLE_RECORD, one row) as "Column  Value" lines */
static int write_record(FILE *f, const struct gt_table *t)
{
	char buf[96];
	size_t w = 0;
	for (size_t c = 0; c < t->ncols; c++)
		if (text_width(t->cols[c].name) > w)
			w = text_width(t->cols[c].name);
	if (t->title && t->title[0])
		fprintf(f, "%s:\n\n", t->title);
	for (size_t c = 0; c < t->ncols && t->nrows; c++) {
		text_put(f, t->cols[c].name);
		for (size_t i = text_width(t->cols[c].name); i < w + 2; i++)
			fputc(' ', f);
		text_put(f, cell_text(t, 0, c, buf, sizeof(buf)));
		fputc('\n', f);
	}
	if (t->nrows == 0)
		fputs("(no rows)\n", f);
	for (size_t i = 0; i < t->nnotes; i++)
		fprintf(f, "%s%s\n", i ? "" : "\n", t->notes[i]);
	return ferror(f) ? -EIO : 0;
}

static int write_text(FILE *f, const struct gt_table *t)
{
	if ((t->flags & GT_TABLE_RECORD) && t->nrows == 1)
		return write_record(f, t);
	size_t nc = t->ncols;
	size_t *order = malloc((nc + 1) * sizeof(*order));
	size_t *w = calloc(nc + 1, sizeof(*w));
	if (!order || !w) {
		free(order);
		free(w);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t c = 0; c < nc; c++)
		if (!is_name_col(&t->cols[c]))
			order[k++] = c;
	for (size_t c = 0; c < nc; c++)
		if (is_name_col(&t->cols[c]))
			order[k++] = c;
	char buf[96];
	for (size_t c = 0; c < nc; c++) {
		w[c] = text_width(t->cols[c].name);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t x = text_width(cell_text(t, r, c, buf, sizeof(buf)));
			if (x > w[c])
				w[c] = x;
		}
	}
	if (t->title && t->title[0])
		fprintf(f, "%s:\n\n", t->title);
	for (int pass = 0; pass < 2 + (int)t->nrows; pass++) {
		for (size_t k2 = 0; k2 < nc; k2++) {
			size_t c = order[k2];
			int last = k2 + 1 == nc;
			const char *s;
			if (pass == 0)
				s = t->cols[c].name;
			else if (pass == 1)
				s = NULL;
			else
				s = cell_text(t, (size_t)pass - 2, c, buf, sizeof(buf));
			if (k2)
				fputs("  ", f);
			if (!s) {
				for (size_t i = 0; i < w[c]; i++)
					fputc('-', f);
				continue;
			}
			size_t pad = w[c] - text_width(s);
			if (t->cols[c].align_left) {
				text_put(f, s);
				if (!last)
					for (size_t i = 0; i < pad; i++)
						fputc(' ', f);
			} else {
				for (size_t i = 0; i < pad; i++)
					fputc(' ', f);
				text_put(f, s);
			}
		}
		fputc('\n', f);
	}
	if (t->nrows == 0)
		fputs("(no rows)\n", f);
	for (size_t i = 0; i < t->nnotes; i++)
		fprintf(f, "%s%s\n", i ? "" : "\n", t->notes[i]);
	free(order);
	free(w);
	return ferror(f) ? -EIO : 0;
}

/* RFC 4180: quote when the field holds a comma, quote, CR or LF */
static void csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && (!s[0] || s[strlen(s) - 1] != ' ')) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int write_csv(FILE *f, const struct gt_table *t)
{
	char buf[96];
	for (size_t c = 0; c < t->ncols; c++) {
		if (c)
			fputc(',', f);
		csv_str(f, t->cols[c].name);
	}
	fputc('\n', f);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			if (c)
				fputc(',', f);
			if (gt_table_is_null(t, r, c)) {
				fputs("n/a", f);
				continue;
			}
			const union gt_cell *v = gt_table_cell(t, r, c);
			if (t->cols[c].type == GT_COL_STR) {
				csv_str(f, v->s ? v->s : "");
			} else {
				fmt_num(buf, sizeof(buf), &t->cols[c], v, 0);
				fputs(buf, f);
			}
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

/* JSON string: control characters escaped, invalid UTF-8 bytes as U+FFFD */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x80) {
			int n = utf8_seq_len(p);
			if (n) {
				fwrite(p, 1, (size_t)n, f);
				p += n - 1;
			} else {
				fputs("\\ufffd", f);
			}
			continue;
		}
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static const char *col_type_name(enum gt_col_type t)
{
	switch (t) {
	case GT_COL_INT: return "int";
	case GT_COL_FLOAT: return "float";
	case GT_COL_PCT: return "percent";
	default: return "string";
	}
}

/* one table as a JSON object {"name","title","columns","rows","notes"} */
static int write_json(FILE *f, const struct gt_table *t)
{
	char buf[96];
	fputs("{\"name\": ", f);
	json_str(f, t->name);
	fputs(", \"title\": ", f);
	json_str(f, t->title);
	fputs(", \"columns\": [", f);
	for (size_t c = 0; c < t->ncols; c++) {
		fputs(c ? ", {\"name\": " : "{\"name\": ", f);
		json_str(f, t->cols[c].name);
		fprintf(f, ", \"type\": \"%s\", \"unit\": ", col_type_name(t->cols[c].type));
		const char *u = gt_col_unit(&t->cols[c]);
		if (u)
			json_str(f, u);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputs("],\n \"rows\": [", f);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs(r ? ",\n  {" : "\n  {", f);
		for (size_t c = 0; c < t->ncols; c++) {
			if (c)
				fputs(", ", f);
			json_str(f, t->cols[c].name);
			fputs(": ", f);
			const union gt_cell *v = gt_table_cell(t, r, c);
			if (gt_table_is_null(t, r, c)) {
				fputs("null", f);
			} else if (t->cols[c].type == GT_COL_STR) {
				json_str(f, v->s ? v->s : "");
			} else {
				fmt_num(buf, sizeof(buf), &t->cols[c], v, 0);
				fputs(buf, f);
			}
		}
		fputc('}', f);
	}
	fputs("],\n \"notes\": [", f);
	for (size_t i = 0; i < t->nnotes; i++) {
		if (i)
			fputs(", ", f);
		json_str(f, t->notes[i]);
	}
	fputs("]}", f);
	return ferror(f) ? -EIO : 0;
}

int gt_table_write(FILE *f, const struct gt_table *t, enum gt_format_out fmt)
{
	switch (fmt) {
	case GT_OUT_CSV:
		return write_csv(f, t);
	case GT_OUT_JSON: {
		int rc = write_json(f, t);
		fputc('\n', f);
		return rc;
	}
	default:
		return write_text(f, t);
	}
}

int gt_report_out_add(struct gt_report_out *o, struct gt_table *t)
{
	if (!t)
		return -ENOMEM;
	if (gt_report_out_find(o, t->name) >= 0) {
		gt_table_free(t);       /* one name, one table: a program picks it by name */
		return -EEXIST;
	}
	struct gt_table **nt = realloc(o->tables, (o->n + 1) * sizeof(*nt));
	if (!nt) {
		gt_table_free(t);
		return -ENOMEM;
	}
	o->tables = nt;
	o->tables[o->n++] = t;
	return 0;
}

void gt_report_out_done(struct gt_report_out *o)
{
	for (size_t i = 0; i < o->n; i++)
		gt_table_free(o->tables[i]);
	free(o->tables);
	o->tables = NULL;
	o->n = 0;
}

long gt_report_out_find(const struct gt_report_out *o, const char *name)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->tables[i]->name, name))
			return (long)i;
	return -1;
}

int gt_report_out_write(FILE *f, const char *report, const struct gt_report_out *o,
			enum gt_format_out fmt)
{
	int rc = 0;
	if (fmt == GT_OUT_JSON) {
		fputs("{\"report\": ", f);
		json_str(f, report ? report : "");
		fputs(", \"tables\": [\n", f);
		for (size_t i = 0; i < o->n && !rc; i++) {
			if (i)
				fputs(",\n", f);
			rc = write_json(f, o->tables[i]);
		}
		fputs("\n]}\n", f);
		return rc ? rc : ferror(f) ? -EIO : 0;
	}
	if (fmt == GT_OUT_CSV)          /* one CSV, one table: the main one */
		return o->n ? gt_table_write(f, o->tables[0], fmt) : 0;
	for (size_t i = 0; i < o->n && !rc; i++) {
		if (i)
			fputc('\n', f);
		rc = gt_table_write(f, o->tables[i], fmt);
	}
	return rc;
}
