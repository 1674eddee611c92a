/*
 * ops_priv.h - what ops.c takes from ops_names.c.
 */
#ifndef GTRACE_ANALYSIS_OPS_PRIV_H
#define GTRACE_ANALYSIS_OPS_PRIV_H

/* 1 for an operator the plugin keeps out of its table: ProfilerStep#,
 * Optimizer.*, enumerate(DataLoader)#...__next__, enumerate(DataPipe)#...,
 * (Distributed)DataParallel.forward */
int ops_excluded_name(const char *name);

#endif
