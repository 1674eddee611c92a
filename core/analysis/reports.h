/*
 * reports.h - the report objects of the registry (core/analysis/report.c).
 * One declaration per line; each area appends its own.
 */
#ifndef GTRACE_ANALYSIS_REPORTS_H
#define GTRACE_ANALYSIS_REPORTS_H

#include "gtrace/report.h"

extern const struct gt_report gt_report_kernels;
extern const struct gt_report gt_report_memory;
extern const struct gt_report gt_report_api;
extern const struct gt_report gt_report_nvtx;
extern const struct gt_report gt_report_nccl;
extern const struct gt_report gt_report_summary;
extern const struct gt_report gt_report_steps;
extern const struct gt_report gt_report_breakdown;
extern const struct gt_report gt_report_pipeline;
extern const struct gt_report gt_report_gputime;
extern const struct gt_report gt_report_multigpu;
extern const struct gt_report gt_report_overview;
extern const struct gt_report gt_report_ops;
extern const struct gt_report gt_report_memory_usage;

#endif
