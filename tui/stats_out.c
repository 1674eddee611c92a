/*
 * stats_out.c - the output side of `gtrace stats`: a CSV holds exactly one
 * table (pandas.read_csv reads it with no options), so several tables go
 * to several files (-o DIR: DIR/NAME.csv, .json or .txt per table) or are
 * picked one at a time (--table NAME; --table list names them).  Table
 * names are unique over the reports asked for (each is prefixed by its
 * report's name), so a name says which report and which table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../core/util/safew.h"
#include "cmd.h"
#include "stats_out.h"

int stats_out_check(const struct stats_out *so)
{
	if (so->table && so->dir)
		return cmd_usage_error("stats", "-o DIR writes every table; --table picks one for stdout: "
				       "give one of them");
	if (so->fmt == GT_OUT_CSV && so->n > 1 && !so->table && !so->dir)
		return cmd_usage_error("stats", "a CSV holds one table: with several reports give -o DIR "
				       "(one file per table) or --table NAME (--table list names them)");
	return 0;
}

/* the table called name in any report; NULL when none */
static const struct gt_table *find_table(const struct stats_out *so, const char *name)
{
	for (size_t i = 0; i < so->n; i++) {
		long k = gt_report_out_find(&so->outs[i], name);
		if (k >= 0)
			return so->outs[i].tables[k];
	}
	return NULL;
}

/* "overview, overview_gpus, ..." into buf */
static void table_names(const struct stats_out *so, char *buf, size_t len)
{
	size_t w = 0;
	buf[0] = 0;
	for (size_t i = 0; i < so->n; i++)
		for (size_t k = 0; k < so->outs[i].n && w < len; k++)
			w += (size_t)snprintf(buf + w, len - w, "%s%s", w ? ", " : "",
					      so->outs[i].tables[k]->name);
}

/* --table list: "NAME<TAB>REPORT<TAB>ROWS<TAB>TITLE" per table */
static int list_tables(const struct stats_out *so)
{
	for (size_t i = 0; i < so->n; i++)
		for (size_t k = 0; k < so->outs[i].n; k++) {
			const struct gt_table *t = so->outs[i].tables[k];
			printf("%-24s %-10s %6zu rows  %s%s\n", t->name, so->reps[i]->name, t->nrows,
			       t->title, k == 0 ? " (main)" : "");
		}
	return 0;
}

static const char *format_ext(enum gt_format_out fmt)
{
	return fmt == GT_OUT_CSV ? "csv" : fmt == GT_OUT_JSON ? "json" : "txt";
}

/* one table to path through the safe writer (no symlink followed, no
 * file of another user written into, nothing partial left; an existing
 * file replaced only with --force); 0 or 1 after printing the error */
static int write_table(const struct stats_out *so, const struct gt_table *t, const char *path)
{
	struct safew w;
	char err[512];
	if (safew_open(&w, path, so->force ? 0 : SAFEW_KEEP, err, sizeof(err)) < 0) {
		cmd_error("%s", err);
		return 1;
	}
	FILE *f = fdopen(w.fd, "w");
	int rc = f ? gt_table_write(f, t, so->fmt) : -errno;
	if (f && fclose(f) && !rc)
		rc = -errno;
	if (!f)
		close(w.fd);
	if (rc) {
		safew_abort(&w);
		cmd_error("%s: cannot write: %s", path, strerror(-rc));
		return 1;
	}
	if (safew_commit(&w, err, sizeof(err)) < 0) {
		cmd_error("%s", err);
		return 1;
	}
	return 0;
}

/* -o DIR: every table of every report to DIR/NAME.EXT */
static int write_dir(const struct stats_out *so)
{
	struct stat st;
	if (lstat(so->dir, &st)) {
		if (errno != ENOENT || mkdir(so->dir, 0777)) {
			cmd_error("%s: cannot create the output directory: %s", so->dir, strerror(errno));
			return 1;
		}
	} else if (S_ISLNK(st.st_mode) && st.st_uid != geteuid() && !so->force) {
		/* a link another user planted in a shared directory */
		cmd_error("%s: a symbolic link of another user; not followed without --force", so->dir);
		return 1;
	} else if (stat(so->dir, &st) || !S_ISDIR(st.st_mode)) {
		cmd_error("%s: not a directory (-o names a directory, one file per table)", so->dir);
		return 1;
	}
	for (size_t i = 0; i < so->n; i++)
		for (size_t k = 0; k < so->outs[i].n; k++) {
			const struct gt_table *t = so->outs[i].tables[k];
			char *path = NULL;
			if (asprintf(&path, "%s/%s.%s", so->dir, t->name, format_ext(so->fmt)) < 0) {
				cmd_error("out of memory");
				return 1;
			}
			int rc = write_table(so, t, path);
			free(path);
			if (rc)
				return rc;
		}
	return 0;
}

int stats_out_emit(const struct stats_out *so)
{
	if (so->dir)
		return write_dir(so);
	if (so->table && !strcmp(so->table, "list"))
		return list_tables(so);
	if (so->table) {
		const struct gt_table *t = find_table(so, so->table);
		if (!t) {
			char names[1024];
			table_names(so, names, sizeof(names));
			cmd_error("%s: no table '%s' in %s (tables: %s)", so->input, so->table,
				  so->n > 1 ? "these reports" : so->reps[0]->name, names);
			return 1;
		}
		return gt_table_write(stdout, t, so->fmt) ? 1 : 0;
	}
	int rc = 0;
	if (so->fmt == GT_OUT_JSON && so->n > 1)
		fputs("[\n", stdout);
	for (size_t i = 0; i < so->n && !rc; i++) {
		if (i)
			fputs(so->fmt == GT_OUT_JSON ? ",\n" : "\n", stdout);
		rc = gt_report_out_write(stdout, so->reps[i]->name, &so->outs[i], so->fmt) ? 1 : 0;
	}
	if (so->fmt == GT_OUT_JSON && so->n > 1 && !rc)
		fputs("]\n", stdout);
	return rc;
}
