/*
 * test_tables.c - the table writers: text alignment and separators, CSV
 * quoting (RFC 4180), JSON validity (parsed back with cJSON), n/a cells,
 * stable sort, the report output list.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/report.h"

/* run a writer into a heap string */
static char *write_str(const struct gt_table *t, enum gt_format_out fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert(f);
	cr_assert_eq(gt_table_write(f, t, fmt), 0);
	fclose(f);
	return buf;
}

/* a table with a nasty name, a null cell, ints with separators */
static struct gt_table *sample(void)
{
	struct gt_table *t = gt_table_new("demo", "Demo table");
	cr_assert(t);
	cr_assert_eq(gt_table_col(t, "Time (%)", GT_COL_PCT, 1), 0);
	cr_assert_eq(gt_table_col(t, "Total Time (ns)", GT_COL_INT, 0), 1);
	cr_assert_eq(gt_table_col(t, "Avg (ns)", GT_COL_FLOAT, 1), 2);
	cr_assert_eq(gt_table_col(t, "Name", GT_COL_STR, 0), 3);
	cr_assert_eq(gt_table_col(t, "GPU(s)", GT_COL_STR, 0), 4);
	long r = gt_table_row(t);
	cr_assert_eq(r, 0);
	gt_table_set_float(t, 0, 0, 62.5);
	gt_table_set_int(t, 0, 1, 1234567);
	gt_table_set_float(t, 0, 2, 1234.25);
	gt_table_set_str(t, 0, 3, "void f<a, \"b\">(int)\n\x01");
	gt_table_set_str(t, 0, 4, "0");
	r = gt_table_row(t);
	cr_assert_eq(r, 1);
	gt_table_set_float(t, 1, 0, 37.5);
	gt_table_set_int(t, 1, 1, 740740);
	/* Avg left null: unknown */
	gt_table_set_str(t, 1, 3, "plain");
	gt_table_note(t, "note %d", 1);
	return t;
}

Test(tables, null_cells_are_na)
{
	struct gt_table *t = sample();
	cr_assert(gt_table_is_null(t, 1, 2));
	cr_assert(!gt_table_is_null(t, 1, 1));
	cr_assert(gt_table_is_null(t, 1, 4));
	char *csv = write_str(t, GT_OUT_CSV);
	cr_assert(strstr(csv, "37.5,740740,n/a,plain,n/a\n"), "%s", csv);
	free(csv);
	char *txt = write_str(t, GT_OUT_TABLE);
	cr_assert(strstr(txt, "n/a"), "%s", txt);
	free(txt);
	gt_table_free(t);
}

Test(tables, csv_quoting_rfc4180)
{
	struct gt_table *t = sample();
	char *csv = write_str(t, GT_OUT_CSV);
	/* header: no quoting needed, even with parentheses and percent */
	cr_assert(!strncmp(csv, "Time (%),Total Time (ns),Avg (ns),Name,GPU(s)\n", 46), "%s", csv);
	/* quotes doubled, field quoted because of comma/quote/newline; numbers plain */
	cr_assert(strstr(csv, "62.5,1234567,1234.2,\"void f<a, \"\"b\"\">(int)\n\x01\",0\n") ||
		  strstr(csv, "62.5,1234567,1234.3,\"void f<a, \"\"b\"\">(int)\n\x01\",0\n"), "%s", csv);
	free(csv);
	gt_table_free(t);
}

Test(tables, json_parses_back)
{
	struct gt_table *t = sample();
	char *js = write_str(t, GT_OUT_JSON);
	cJSON *root = cJSON_Parse(js);
	cr_assert(root, "invalid JSON: %s", js);
	cJSON *rows = cJSON_GetObjectItem(root, "rows");
	cr_assert_eq(cJSON_GetArraySize(rows), 2);
	cJSON *r0 = cJSON_GetArrayItem(rows, 0);
	cr_assert_str_eq(cJSON_GetObjectItem(r0, "Name")->valuestring, "void f<a, \"b\">(int)\n\x01");
	cr_assert_eq(cJSON_GetObjectItem(r0, "Total Time (ns)")->valuedouble, 1234567.0);
	cJSON *r1 = cJSON_GetArrayItem(rows, 1);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(r1, "Avg (ns)")));
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(r1, "GPU(s)")));
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "columns")), 5);
	cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "notes"), 0)->valuestring,
			 "note 1");
	/* control characters must be escaped, never raw */
	for (const char *p = js; *p; p++)
		cr_assert(*p == '\n' || (unsigned char)*p >= 0x20);
	cJSON_Delete(root);
	free(js);
	gt_table_free(t);
}

Test(tables, text_alignment_and_separators)
{
	struct gt_table *t = gt_table_new("x", "");
	gt_table_col(t, "Name", GT_COL_STR, 0);
	gt_table_col(t, "Total Time (ns)", GT_COL_INT, 0);
	gt_table_col(t, "Med (ns)", GT_COL_FLOAT, 1);
	gt_table_row(t);
	gt_table_set_str(t, 0, 0, "k");
	gt_table_set_int(t, 0, 1, 591532000);
	gt_table_set_float(t, 0, 2, -1234567.5);
	gt_table_row(t);
	gt_table_set_str(t, 1, 0, "a_very_long_kernel_name_that_is_never_cut");
	gt_table_set_int(t, 1, 1, 5);
	gt_table_set_float(t, 1, 2, 0.0);
	char *txt = write_str(t, GT_OUT_TABLE);
	/* Name moves last; numbers right-aligned to the header width */
	cr_assert(strstr(txt, "Total Time (ns)      Med (ns)  Name\n"), "%s", txt);
	cr_assert(strstr(txt, "    591,532,000  -1,234,567.5  k\n"), "%s", txt);
	cr_assert(strstr(txt, "              5           0.0  a_very_long_kernel_name_that_is_never_cut\n"),
		  "%s", txt);
	free(txt);
	gt_table_free(t);
}

Test(tables, stable_sort_nulls_last)
{
	struct gt_table *t = gt_table_new("s", "S");
	gt_table_col(t, "v", GT_COL_INT, 0);
	gt_table_col(t, "tag", GT_COL_STR, 0);
	int64_t v[] = { 3, 1, 3, -1, 2, 1 };
	const char *tag[] = { "a", "b", "c", "null", "d", "e" };
	for (int i = 0; i < 6; i++) {
		gt_table_row(t);
		if (v[i] >= 0)
			gt_table_set_int(t, (size_t)i, 0, v[i]);
		gt_table_set_str(t, (size_t)i, 1, tag[i]);
	}
	gt_table_sort(t, 0, 1);
	const char *want[] = { "a", "c", "d", "b", "e", "null" };
	for (int i = 0; i < 6; i++)
		cr_assert_str_eq(gt_table_cell(t, (size_t)i, 1)->s, want[i]);
	gt_table_sort(t, 0, 0);
	const char *want2[] = { "b", "e", "d", "a", "c", "null" };
	for (int i = 0; i < 6; i++)
		cr_assert_str_eq(gt_table_cell(t, (size_t)i, 1)->s, want2[i]);
	gt_table_sort(t, 1, 0);
	cr_assert_str_eq(gt_table_cell(t, 0, 1)->s, "a");
	gt_table_free(t);
}

Test(tables, report_out_json_and_scope)
{
	struct gt_report_out o = { 0 };
	cr_assert_eq(gt_report_out_add(&o, sample()), 0);
	/* one name, one table: a second "demo" is refused (and freed) */
	cr_assert_eq(gt_report_out_add(&o, sample()), -EEXIST);
	struct gt_table *t2 = sample();
	free(t2->name);
	t2->name = strdup("demo_2");
	cr_assert_eq(gt_report_out_add(&o, t2), 0);
	cr_assert_eq(gt_report_out_find(&o, "demo_2"), 1);
	cr_assert_eq(gt_report_out_find(&o, "nope"), -1);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(gt_report_out_write(f, "demo", &o, GT_OUT_JSON), 0);
	fclose(f);
	cJSON *root = cJSON_Parse(buf);
	cr_assert(root, "%s", buf);
	cr_assert_str_eq(cJSON_GetObjectItem(root, "report")->valuestring, "demo");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "tables")), 2);
	cJSON_Delete(root);
	free(buf);
	gt_report_out_done(&o);
	cr_assert_eq(o.n, 0);

	struct gt_scope sc;
	gt_scope_all(&sc);
	cr_assert_eq(sc.t0_ns, INT64_MIN);
	cr_assert_eq(sc.t1_ns, INT64_MAX);
	cr_assert_eq(sc.gpu, -1);
	cr_assert_eq(sc.rank, -1);
	cr_assert_eq(sc.step, -1);
}

/* JSON stays valid UTF-8: valid sequences kept, invalid bytes become U+FFFD */
Test(tables, json_utf8)
{
	struct gt_table *t = gt_table_new("u", "U");
	gt_table_col(t, "Name", GT_COL_STR, 0);
	gt_table_row(t);
	gt_table_set_str(t, 0, 0, "caf\xc3\xa9 \xff \xc0\xaf \xe2\x82\xac \xed\xa0\x80 x\xf0\x9f\x98\x80");
	char *js = write_str(t, GT_OUT_JSON);
	cr_assert(strstr(js, "caf\xc3\xa9 \\ufffd \\ufffd\\ufffd \xe2\x82\xac "), "%s", js);
	cr_assert(strstr(js, "x\xf0\x9f\x98\x80"), "%s", js);
	cJSON *root = cJSON_Parse(js);
	cr_assert(root, "%s", js);
	cJSON_Delete(root);
	free(js);
	gt_table_free(t);
}

/* text mode goes to a terminal: a trace's names must not carry escape
 * sequences, newlines (which break the rows) or invalid UTF-8 there; each
 * such byte prints as '?' and the column width counts it as one */
Test(tables, text_sanitizes_control_bytes)
{
	struct gt_table *t = gt_table_new("u", "U");
	gt_table_col(t, "Name", GT_COL_STR, 0);
	gt_table_col(t, "Kind", GT_COL_STR, 0);
	gt_table_row(t);
	gt_table_set_str(t, 0, 0, "a\x1b[2Jb\nc\xff caf\xc3\xa9");
	gt_table_set_str(t, 0, 1, "k\r");
	gt_table_row(t);
	gt_table_set_str(t, 1, 0, "x");
	gt_table_set_str(t, 1, 1, "kind");
	char *txt = write_str(t, GT_OUT_TABLE);
	for (const char *p = txt; *p; p++)
		cr_assert((unsigned char)*p >= 0x20 || *p == '\n', "control byte 0x%02x in %s", *p, txt);
	cr_assert(strstr(txt, "k?    a?[2Jb?c? caf\xc3\xa9\n"), "%s", txt);
	/* 4 lines: header, rule, two rows (title and blank line before) */
	int lines = 0;
	for (const char *p = txt; *p; p++)
		lines += *p == '\n';
	cr_assert_eq(lines, 2 + 4, "%s", txt);
	free(txt);
	gt_table_free(t);
}

/* units come from the column names (and percent columns); a record prints
 * as "Column  Value" lines in text mode and as a one-row table in CSV and
 * JSON, its figures JSON numbers */
Test(tables, units_and_records)
{
	struct gt_table *t = gt_table_new("demo", "Demo record");
	cr_assert(t);
	t->flags |= GT_TABLE_RECORD;
	cr_assert_eq(gt_table_col(t, "Average step (us)", GT_COL_FLOAT, 1), 0);
	cr_assert_eq(gt_table_col(t, "Kernel %", GT_COL_PCT, 2), 1);
	cr_assert_eq(gt_table_col(t, "Events", GT_COL_INT, 0), 2);
	cr_assert_eq(gt_table_col(t, "Bandwidth (GB/s)", GT_COL_FLOAT, 3), 3);
	cr_assert_eq(gt_table_col(t, "Verdict (x)", GT_COL_STR, 0), 4);
	cr_assert_eq(gt_table_col(t, "Size (cats)", GT_COL_INT, 0), 5);
	cr_assert_str_eq(gt_col_unit(&t->cols[0]), "us");
	cr_assert_str_eq(gt_col_unit(&t->cols[1]), "%");
	cr_assert_null(gt_col_unit(&t->cols[2]));
	cr_assert_str_eq(gt_col_unit(&t->cols[3]), "GB/s");
	cr_assert_null(gt_col_unit(&t->cols[4]), "strings have no unit");
	cr_assert_null(gt_col_unit(&t->cols[5]), "not a unit");
	long r = gt_table_row(t);
	cr_assert_eq(r, 0);
	gt_table_set_float(t, 0, 0, 177592.2);
	gt_table_set_float(t, 0, 1, 55.51);
	gt_table_set_int(t, 0, 2, 57505);
	cr_assert_eq(gt_table_set_str(t, 0, 4, "HIGHLY"), 0);
	char *txt = write_str(t, GT_OUT_TABLE);
	cr_assert(strstr(txt, "Demo record:\n\nAverage step (us)  177,592.2\nKernel %           55.51\n"
			 "Events             57,505\nBandwidth (GB/s)   n/a\n"), "%s", txt);
	free(txt);
	char *csv = write_str(t, GT_OUT_CSV);
	cr_assert_str_eq(csv, "Average step (us),Kernel %,Events,Bandwidth (GB/s),Verdict (x),Size (cats)\n"
			      "177592.2,55.51,57505,n/a,HIGHLY,n/a\n");
	free(csv);
	char *js = write_str(t, GT_OUT_JSON);
	cJSON *root = cJSON_Parse(js);
	cr_assert(root, "%s", js);
	cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "rows"), 0);
	cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(row, "Average step (us)")));
	cr_assert_float_eq(cJSON_GetObjectItem(row, "Average step (us)")->valuedouble, 177592.2, 1e-9);
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(row, "Bandwidth (GB/s)")));
	cJSON *col = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "columns"), 1);
	cr_assert_str_eq(cJSON_GetObjectItem(col, "unit")->valuestring, "%");
	cr_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "columns"), 2),
						   "unit")));
	cJSON_Delete(root);
	free(js);
	gt_table_free(t);
}
