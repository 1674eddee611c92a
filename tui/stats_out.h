/*
 * stats_out.h - where `gtrace stats` puts the tables of the reports it ran:
 * stdout (text: every table; JSON: one object per report; CSV: one table,
 * the main one or the one --table names), a listing of the table names
 * (--table list), or one file per table in a directory (-o DIR).
 */
#ifndef GTRACE_STATS_OUT_H
#define GTRACE_STATS_OUT_H

#include "gtrace/report.h"

/* the reports' outputs, in the order the reports were asked for */
struct stats_out {
	const struct gt_report **reps;
	struct gt_report_out *outs;
	size_t n;
	enum gt_format_out fmt;
	const char *table;      /* --table NAME, "list", or NULL */
	const char *dir;        /* -o DIR or NULL */
	const char *input;      /* the first input path, for messages */
	int force;              /* --force: -o DIR replaces existing files */
};

/* 0 when the options go together, else the usage error printed and 2
 * (CSV on stdout with several reports and neither --table nor -o; --table
 * with -o) */
int stats_out_check(const struct stats_out *so);
/* print or write everything as the options say; 0, or 1 after printing
 * the error (an unknown table name lists the report's tables) */
int stats_out_emit(const struct stats_out *so);

#endif
