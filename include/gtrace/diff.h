/*
 * gtrace/diff.h - two runs compared: a baseline (A) and an experiment (B),
 * after the PyTorch TensorBoard plugin's Diff view and Holistic Trace
 * Analysis' trace_diff (docs/analyses.md "Comparing two runs").
 *
 * Reports (each a list of tables, printed like `gtrace stats` reports):
 *   breakdown  the step-time breakdown side by side, one row per category
 *              then Total: Baseline (us), Experiment (us), Delta (us),
 *              Delta (%); first the average aligned step (Row "average"),
 *              then every aligned step (Row "step", Step = the baseline's
 *              step number, Experiment Step = its partner)
 *   kernels    per kernel name: time, count and mean of both runs and the
 *              deltas, sorted by absolute time delta; Change says
 *              "appeared" / "disappeared" for names in one run only
 *   ops        the same per operator name with device self and host self time
 *   overview   both runs' overview tables, baseline first, then their
 *              figures and verdicts side by side (diff_verdicts)
 *
 * Alignment of steps: GT_DIFF_ALIGN_FIRST pairs each run's complete steps in
 * order from its first one (the steps analysis already dropped steps cut
 * off by the capture); GT_DIFF_ALIGN_STEP pairs from step number `step` in both
 * runs on; GT_DIFF_ALIGN_START takes each whole run from its start as one
 * window.  Only the aligned pairs (as many as the shorter run has) enter
 * the average step.
 */
#ifndef GTRACE_DIFF_H
#define GTRACE_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/analysis.h"
#include "gtrace/report.h"
#include "gtrace/store.h"

enum gt_diff_align { GT_DIFF_ALIGN_FIRST = 0, GT_DIFF_ALIGN_STEP, GT_DIFF_ALIGN_START };

/* diff_opts.flags: rank_b is the experiment's rank, rank the baseline's (two
 * runs of one store, e.g. `gtrace open A B` merging them as ranks 0 and 1:
 * pass that store as both a and b) */
#define GT_DIFF_F_RANK_B 1u

struct gt_diff_opts {
	enum gt_diff_align align;
	int64_t step;             /* GT_DIFF_ALIGN_STEP: the first step number paired */
	int32_t rank;             /* rank compared in both runs, -1 = rank 0 / all */
	unsigned flags;           /* DIFF_F_* */
	int32_t rank_b;           /* GT_DIFF_F_RANK_B: the experiment's rank */
};

/* one named figure set of a run, for the per-name tables */
#define GT_DIFF_MAX_FIG 2
struct gt_diff_item {
	const char *name;         /* borrowed from the run's store */
	uint64_t count;
	int64_t fig_ns[GT_DIFF_MAX_FIG];
};

/* the report `name` (breakdown, kernels, ops, overview) of runs a and b;
 * 0, -EINVAL for an unknown name or a step that is not in both runs,
 * other negative errno; message in err */
int gt_diff_run(const struct gt_store *a, const struct gt_store *b, const char *name,
	     const struct gt_diff_opts *o, struct gt_report_out *out, char *err, size_t errlen);

/* the per-name table: rows of a and b joined by name; fig_names[nfig]
 * name the figures ("Time", "Device Self"), the mean is of the first;
 * sorted by absolute delta of the first figure, then of the second, then
 * name.  NULL on ENOMEM. */
struct gt_table *gt_diff_names_table(const char *tname, const char *title,
				  const struct gt_diff_item *a, size_t na,
				  const struct gt_diff_item *b, size_t nb,
				  const char *const *fig_names, int nfig);

/* the aligned steps of two runs, the one alignment rule above: both runs'
 * breakdowns and the pairs a.rows[ia + k] with b.rows[ib + k], k < n (n >= 1);
 * rows' windows are in each store's time */
struct gt_diff_steps {
	struct gt_breakdown_result a, b;
	size_t ia, ib, n;
};
/* both breakdowns (on two threads) and their alignment; 0, -EINVAL when
 * o's step is not in both runs or a run has no step, other negative errno;
 * message in err.  d is cleared first and owns its results on 0 */
int gt_diff_steps_compute(const struct gt_store *a, const struct gt_store *b,
			  const struct gt_diff_opts *o, struct gt_diff_steps *d, char *err,
			  size_t errlen);
void gt_diff_steps_done(struct gt_diff_steps *d);
/* the pair whose baseline step is `step` (-1: the whole-run pair of
 * GT_DIFF_ALIGN_START), -1 when none */
long gt_diff_steps_find(const struct gt_diff_steps *d, int64_t step);
/* the breakdown report's table (diff_breakdown) from d into out; 0 or -ENOMEM */
int gt_diff_steps_table(const struct gt_diff_steps *d, struct gt_report_out *out);
/* the figures and verdicts of two overview records (the overview report's
 * main table, one row) side by side: one row per figure, Baseline and
 * Experiment as the text table prints them, Delta for numbers; then both
 * runs' recommendations (rec_a, rec_b: the overview's recommendations
 * tables, either NULL) paired by kind.  NULL on ENOMEM */
struct gt_table *gt_diff_verdicts_table(const struct gt_table *ov_a, const struct gt_table *ov_b,
				     const struct gt_table *rec_a, const struct gt_table *rec_b);

/* names of the reports, NULL-terminated */
extern const char *const diff_report_names[];

#endif
