/*
 * report.c - the report registry: every report `gtrace stats --report NAME`
 * and the viewer's pages can run.  The array is NULL-terminated; to add a
 * report, declare it in reports.h and append one line here.
 */
#include <string.h>
#include "reports.h"

static const struct gt_report *const registry[] = {
	&gt_report_kernels,
	&gt_report_memory,
	&gt_report_api,
	&gt_report_nvtx,
	&gt_report_nccl,
	&gt_report_summary,
	&gt_report_steps,
	&gt_report_breakdown,
	&gt_report_pipeline,
	&gt_report_gputime,
	&gt_report_multigpu,
	&gt_report_overview,
	&gt_report_ops,
	&gt_report_memory_usage,
	NULL
};

/* the report called `name`, or NULL */
const struct gt_report *gt_report_find(const char *name)
{
	for (size_t i = 0; registry[i]; i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}

size_t gt_report_count(void)
{
	size_t n = 0;
	while (registry[n])
		n++;
	return n;
}

/* i-th report in registry order, NULL past the end */
const struct gt_report *gt_report_at(size_t i)
{
	return i < gt_report_count() ? registry[i] : NULL;
}
