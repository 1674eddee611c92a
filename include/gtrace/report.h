/*
 * gtrace/report.h - analyses as tables: what `gtrace stats` prints and what
 * the viewer's pages show.  A report computes one or more struct gt_table
 * from a finished store over a scope (time range, GPU, rank, step); the
 * table writer prints any table as an aligned text table, CSV or JSON.
 * Column names are a contract (they follow the peer tools' spelling).
 */
#ifndef GTRACE_REPORT_H
#define GTRACE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "gtrace/store.h"

/* scope of an analysis */
struct gt_scope {
	int64_t t0_ns, t1_ns;   /* [t0, t1); INT64_MIN / INT64_MAX = whole trace */
	int32_t gpu;            /* device ordinal, -1 = all */
	int32_t rank;           /* -1 = all */
	int64_t step;           /* step number, -1 = all */
	unsigned flags;
	/* what the user says of the model and the interconnect, for the expected
	   all-reduce time (docs/analyses.md §6); 0 = not given */
	uint64_t param_bytes;   /* gradient bytes all-reduced per step */
	double link_gbps;       /* link bandwidth, GB/s (1e9 bytes/s) */
};

void gt_scope_all(struct gt_scope *sc);

enum gt_col_type {
	GT_COL_STR = 0,
	GT_COL_INT,             /* int64 */
	GT_COL_FLOAT,           /* double, printed with `decimals` */
	GT_COL_PCT              /* double percent, printed with `decimals` */
};

/* what a column is to a viewer (struct gt_col.flags), so it formats,
 * filters and drills down without reading a column back by its name */
#define GT_COLF_NAME 1u         /* the row's name: shown last, filtered by, named in titles */
#define GT_COLF_KEY  2u         /* part of the row's identity: the table groups by these */
#define GT_COLF_DUR  4u         /* a number of nanoseconds: shown as a duration */
#define GT_COLF_ID   8u         /* an int identifier (PID, step): no thousands separators */

struct gt_col {
	char *name;
	enum gt_col_type type;
	int decimals;
	int align_left;
	unsigned flags;         /* GT_COLF_*: gt_table_col sets DUR for "... (ns)" numbers
				   and NAME | KEY for "Name"; gt_table_col_flags adds */
};

union gt_cell {
	int64_t i;
	double f;
	char *s;                /* owned by the table */
};

struct gt_table {
	char *name;             /* machine name, e.g. "kernels" */
	char *title;            /* human title */
	struct gt_col *cols;
	size_t ncols;
	union gt_cell *cells;   /* row-major, nrows * ncols */
	unsigned char *null;    /* 1 = value unknown ("n/a", never a fake 0) */
	size_t nrows, caprows;
	char **notes;           /* lines printed under the table (verdicts, help) */
	size_t nnotes;
	unsigned flags;         /* GT_TABLE_* */
	int sort_col;           /* the column a viewer sorts by first (largest first), -1 none */
};

/* a record: one row of named, typed figures (the overview, the trace
 * summary); text mode prints it transposed, one "Column  Value" line each,
 * CSV and JSON as the one-row table it is */
#define GT_TABLE_RECORD 1u

struct gt_table *gt_table_new(const char *name, const char *title);
void gt_table_free(struct gt_table *t);
/* add a column; returns its index or -ENOMEM */
int gt_table_col(struct gt_table *t, const char *name, enum gt_col_type type, int decimals);
/* add GT_COLF_* flags to column col */
void gt_table_col_flags(struct gt_table *t, size_t col, unsigned flags);
/* the first column with all of `flags`, or -1 */
int gt_table_col_with(const struct gt_table *t, unsigned flags);
/* append an empty row (all cells null); returns its index or -ENOMEM */
long gt_table_row(struct gt_table *t);
void gt_table_set_int(struct gt_table *t, size_t row, size_t col, int64_t v);
void gt_table_set_float(struct gt_table *t, size_t row, size_t col, double v);
int gt_table_set_str(struct gt_table *t, size_t row, size_t col, const char *s);
int gt_table_note(struct gt_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const union gt_cell *gt_table_cell(const struct gt_table *t, size_t row, size_t col);
int gt_table_is_null(const struct gt_table *t, size_t row, size_t col);
/* the unit of a column, from its name: "ns" for "Total Time (ns)", "%" for
 * "Time (%)", "Kernel %" or a GT_COL_PCT column, "us", "ms", "s", "bytes",
 * "MB", "GB/s", "x"; NULL for a count, a key or a string */
const char *gt_col_unit(const struct gt_col *c);
/* stable sort of rows by a column (numbers numerically, strings bytewise) */
void gt_table_sort(struct gt_table *t, size_t col, int descending);

enum gt_format_out { GT_OUT_TABLE = 0, GT_OUT_CSV, GT_OUT_JSON };

/* print one table; 0 or negative errno.  CSV is one RFC 4180 table (a
 * header line, then one line per row); JSON one object {"name", "title",
 * "columns": [{"name", "type", "unit"}], "rows": [{COLUMN: VALUE}],
 * "notes"}, numbers as JSON numbers, null for n/a */
int gt_table_write(FILE *f, const struct gt_table *t, enum gt_format_out fmt);

/* a report's output: its tables in order, the main table first; table
 * names are unique within a report, and prefixed by the report's name */
struct gt_report_out {
	struct gt_table **tables;
	size_t n;
};
/* append t (owned from now on, freed on failure); 0, -ENOMEM, or -EEXIST
 * when a table of that name is already there */
int gt_report_out_add(struct gt_report_out *o, struct gt_table *t);
void gt_report_out_done(struct gt_report_out *o);
/* index of the table called name, or -1 */
long gt_report_out_find(const struct gt_report_out *o, const char *name);
/* print the report: text prints every table, JSON one object
 * {"report": NAME, "tables": [...]} with every table, CSV the main table
 * only (one CSV holds one table: pick others with gt_report_out_find) */
int gt_report_out_write(FILE *f, const char *report, const struct gt_report_out *o,
			enum gt_format_out fmt);

struct gt_report {
	const char *name;       /* the contract: kernels, memory, api, nvtx, nccl, summary,
				   steps, breakdown, pipeline, gputime, multigpu, overview */
	const char *help;       /* one line, names the peer definition it follows */
	int (*run)(const struct gt_store *s, const struct gt_scope *sc,
		   struct gt_report_out *out, char *err, size_t errlen);
	/* optional drill-down: the events (instances) behind row `row` of t, a
	 * table this report's run made over sc (the same sc), in no order;
	 * *out malloc'ed (free it), *n may be 0.  0, -ENOENT when t's rows have
	 * no instances, -ENOMEM.  The ops and kernels hooks also take the
	 * per-name tables of gtrace diff (diff_ops, diff_kernels, gtrace/diff.h)
	 * over a scope whose rank is one of the two runs */
	int (*instances)(const struct gt_store *s, const struct gt_scope *sc,
			 const struct gt_table *t, size_t row, struct gt_ref **out, size_t *n);
};

/* the registry (core/analysis/report.c) */
const struct gt_report *gt_report_find(const char *name);
size_t gt_report_count(void);
const struct gt_report *gt_report_at(size_t i);

#endif
