/*
 * gtrace/analysis.h - the step analyses of docs/analyses.md §3-§7 as plain C:
 * step-time breakdown (PyTorch TensorBoard plugin), input pipeline
 * (TensorFlow Profiler), GPU time (Holistic Trace Analysis), multi-GPU
 * health (TensorFlow GPU performance guide) and the overview with
 * recommendations.  Each works per rank over a scope (time range, GPU,
 * step) and takes the rank's steps from gt_steps_find().  No terminal code.
 * All times are ns; *_pct are percent (0..100).
 */
#ifndef GTRACE_ANALYSIS_H
#define GTRACE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/report.h"
#include "gtrace/steps.h"

/* ---- breakdown (TensorBoard plugin "Overview" step-time breakdown) ---- */

enum gt_breakdown_cat {
	GT_BD_KERNEL = 0, GT_BD_MEMCPY, GT_BD_MEMSET, GT_BD_COMM, GT_BD_RUNTIME,
	GT_BD_DATALOADER, GT_BD_CPU, GT_BD_OTHER, GT_BD_NCAT
};

struct gt_breakdown_row {
	int64_t step;             /* step number, -1 = whole scope (no steps) */
	int64_t t0_ns, t1_ns;     /* window (clipped to the scope) */
	int64_t cat_ns[GT_BD_NCAT];  /* sums to total_ns */
	int64_t total_ns;
	int64_t kernel_any_ns;    /* covered by any kernel (GPU utilization) */
};

struct gt_breakdown_result {
	int32_t rank;
	enum gt_steps_source source;
	struct gt_breakdown_row *rows;
	size_t n;
	double avg_ns[GT_BD_NCAT];   /* averages over rows */
	double avg_total_ns;
	double gpu_util_pct;      /* sum kernel_any / sum total */
};

const char *gt_breakdown_cat_name(enum gt_breakdown_cat c);
/* breakdown of one rank over the scope (sc->gpu restricts the GPU lanes);
 * steps may be NULL (found here); 0 or negative errno */
int gt_breakdown_compute(const struct gt_store *s, int32_t rank, const struct gt_steps_list *steps,
	       const struct gt_scope *sc, struct gt_breakdown_result *out, char *err, size_t errlen);
void gt_breakdown_result_done(struct gt_breakdown_result *r);

/* ---- input pipeline (TensorFlow Profiler Input Pipeline Analyzer) ---- */

enum gt_pipeline_cat {
	GT_PL_COMPUTE = 0,     /* device compute: non-NCCL kernels, memsets */
	GT_PL_H2D,             /* input: host-to-device copies not hidden under compute */
	GT_PL_D2D_COMM,        /* device-to-device copies and collectives */
	GT_PL_OUTPUT,          /* device-to-host copies */
	GT_PL_HOST_WAIT,       /* input: host waiting for input (DataLoader ranges) */
	GT_PL_LAUNCH,          /* kernel launch: CUDA runtime/driver calls */
	GT_PL_HOST_COMPUTE,    /* device waiting for host: CPU ops, Python */
	GT_PL_OTHER,           /* all others */
	GT_PL_NCAT
};

enum gt_pipeline_verdict { GT_PL_NOT = 0, GT_PL_POTENTIALLY, GT_PL_MODERATELY, GT_PL_HIGHLY };

struct gt_pipeline_row {
	int64_t step;
	int64_t t0_ns, t1_ns, total_ns;
	int64_t cat_ns[GT_PL_NCAT];
	double input_pct;   /* (H2D + host wait) / total */
};

struct gt_pipeline_result {
	int32_t rank;
	struct gt_pipeline_row *rows;
	size_t n;
	double avg_pct[GT_PL_NCAT];
	double input_pct, launch_pct, others_pct;
	enum gt_pipeline_verdict verdict;
	int launch_level, others_level;   /* 0 none, 1 moderate (>= 3 %), 2 high (>= 15 %) */
	size_t worst[3];                  /* row indices by input %, nworst valid */
	size_t nworst;
};

const char *gt_pipeline_cat_name(enum gt_pipeline_cat c);
const char *gt_pipeline_verdict_name(enum gt_pipeline_verdict v);
int gt_pipeline_compute(const struct gt_store *s, int32_t rank, const struct gt_steps_list *steps,
	       const struct gt_scope *sc, struct gt_pipeline_result *out, char *err, size_t errlen);
void gt_pipeline_result_done(struct gt_pipeline_result *r);
/* the largest non-GPU cost of a step (the headline beside the verdict, so
 * that a POTENTIALLY verdict does not send users after a DataLoader that
 * takes 0.8 %): input (H2D + host wait), kernel launch, host compute (CPU
 * ops, Python, other runtime calls) or unaccounted host time */
enum gt_pipeline_host_cost { GT_PL_COST_INPUT = 0, GT_PL_COST_LAUNCH, GT_PL_COST_HOST, GT_PL_COST_UNACCOUNTED };
/* which of the four is largest in r's average step; *pct = its share (%) */
enum gt_pipeline_host_cost gt_pipeline_host_cost(const struct gt_pipeline_result *r, double *pct);
/* "input", "kernel launch", "host compute (Python, CPU ops)", "unaccounted host time" */
const char *gt_pipeline_host_cost_name(enum gt_pipeline_host_cost c);
/* why the verdict fired, for the line beside it: "input 0.7 %", and for
 * POTENTIALLY (fired by all others, not by input) "input 0.7 %; all others
 * (host compute + unaccounted) 94.8 % >= 3 %"; returns snprintf's count */
int gt_pipeline_verdict_why(const struct gt_pipeline_result *r, char *buf, size_t len);
/* what-to-try lines for the result (with its numbers); returns the count */
#define GT_PIPELINE_ADVICE_LEN 200
size_t gt_pipeline_advice(const struct gt_pipeline_result *r, char lines[][GT_PIPELINE_ADVICE_LEN],
		       size_t max);

/* ---- GPU time (Holistic Trace Analysis) ---- */

#define GT_GPUTIME_KERNEL_WAIT_NS 30000      /* idle gap < 30 us: kernel wait */
#define GT_GPUTIME_RUNTIME_OUTLIER_NS 50000  /* launch call (CUDA runtime event) outlier */
#define GT_GPUTIME_DELAY_OUTLIER_NS 100000   /* launch delay outlier */
#define GT_GPUTIME_QUEUE_MAX 1024

struct gt_gputime_gpu {
	int32_t rank, device;
	int64_t span_ns, idle_ns, compute_ns, noncompute_ns;
	int64_t comm_ns, comm_overlap_ns;   /* |comm|, |comm & compute| */
	/* kernel launch statistics */
	uint64_t kernels, launches;         /* kernels, kernels with a launch call */
	int64_t cpu_launch_sum_ns, gpu_dur_sum_ns, delay_sum_ns;
	int64_t cpu_launch_med_ns, gpu_dur_med_ns, delay_med_ns, delay_max_ns;
	uint64_t short_kernels;             /* GPU duration < launch call duration */
	uint64_t under_10us;                /* kernels under 10 us */
	uint64_t runtime_outliers;          /* launch calls longer than 50 us (HTA) */
	uint64_t delay_outliers;            /* launch delays over 100 us */
};

struct gt_gputime_stream {
	int32_t rank, device;
	int64_t stream;
	int64_t host_wait_ns, kernel_wait_ns, other_ns;  /* idle by category */
	uint64_t gaps;
	int64_t queue_max;
	double queue_mean;                  /* time-weighted over the stream's span */
	int64_t at_max_ns;                  /* time with queue length >= 1024 */
};

struct gt_gputime_result {
	struct gt_gputime_gpu *gpus;
	size_t ngpus;
	struct gt_gputime_stream *streams;
	size_t nstreams;
};

/* every (rank, GPU) in the scope; 0 or negative errno */
int gt_gputime_compute(const struct gt_store *s, const struct gt_scope *sc,
		    struct gt_gputime_result *out, char *err, size_t errlen);
void gt_gputime_result_done(struct gt_gputime_result *r);

/* ---- multi-GPU health (TensorFlow GPU performance guide) ---- */

struct gt_multigpu_cell {                    /* one GPU in one step */
	int valid;                      /* the GPU's rank has this step */
	int64_t t0_ns, t1_ns;           /* the rank's window of the step */
	int64_t compute_ns;             /* non-NCCL kernel union in the window */
	int64_t comm_ns, comm_overlap_ns;
	int64_t first_kernel_ns;        /* INT64_MAX = no kernel */
	int64_t finish_ns;              /* last activity end - window start, -1 = none */
	int64_t copy_ns;                /* copies in the window */
	int64_t busy_ns;                /* any GPU activity in the window */
};

struct gt_multigpu_gpu {
	int32_t rank, device;
	uint32_t slowest;               /* steps in which it had the most compute */
	double skew_pct;                /* mean compute excess over the others' mean in those steps */
	double mean_compute_ns, mean_comm_ns, comm_share_pct, comm_overlap_pct;
	double stagger_mean_ns, stagger_max_ns;  /* first kernel after the rank's earliest GPU */
	double stagger_pct;             /* stagger_mean / mean step time */
	double comm_vs_expected;        /* mean_comm / expected_comm_ns; 0 = not known */
	double parallel_pct;            /* rank's GPUs busy at the same time: 100 = fully
					   parallel, 0 = one after the other (sequential
					   execution); -1 = one GPU */
};

struct gt_multigpu_copy {                    /* a copy recurring at the same place every step */
	int32_t rank, device;
	int kind;                       /* enum gt_copy_kind */
	uint64_t bytes;
	uint32_t ordinal;               /* n-th copy of its kind in the step */
	uint32_t steps;                 /* steps it occurs in */
	double mean_ns, mean_offset_ns;
	uint32_t last_step;             /* internal: last window counted */
};

struct gt_multigpu_result {
	size_t nsteps;                  /* steps compared (matched by number across ranks) */
	size_t ncompared;               /* of those, steps with >= 2 GPUs doing compute */
	double mean_step_ns;
	struct gt_multigpu_gpu *gpus;
	size_t ngpus;
	int straggler;                  /* index into gpus, -1 = none */
	double straggler_pct;           /* its skew */
	int separate_runs;              /* the ranks are separate runs (import.mixed_runs):
					   no straggler is named across them */
	struct gt_multigpu_copy *copies;
	size_t ncopies;
	double copy_share_pct;          /* recurring copy time / step time */
	double expected_comm_ns;        /* param bytes / link bandwidth, per step; 0 = not given */
	uint64_t param_bytes;           /* as given in the scope */
	double link_gbps;
	int64_t *step_nums;             /* nsteps */
	struct gt_multigpu_cell *cells;          /* nsteps * ngpus, row-major by step */
};

int gt_multigpu_compute(const struct gt_store *s, const struct gt_scope *sc,
	       struct gt_multigpu_result *out, char *err, size_t errlen);
void gt_multigpu_result_done(struct gt_multigpu_result *r);

/* ---- overview and recommendations ---- */

enum gt_overview_severity { GT_OVERVIEW_INFO = 0, GT_OVERVIEW_WARN, GT_OVERVIEW_HIGH };

enum gt_overview_evidence {
	GT_OVERVIEW_EV_NONE = 0,
	GT_OVERVIEW_EV_STEPS,        /* step0..step1 */
	GT_OVERVIEW_EV_GPU,          /* rank/gpu */
	GT_OVERVIEW_EV_TIME          /* t0..t1 */
};

/* what a recommendation is about; gt_overview_kind_name() gives its rec->kind */
enum gt_overview_kind {
	GT_OVERVIEW_K_OTHER = 0,
	GT_OVERVIEW_K_INPUT_BOUND,
	GT_OVERVIEW_K_LAUNCH_BOUND,
	GT_OVERVIEW_K_STRAGGLER,
	GT_OVERVIEW_K_COMM_BOUND,
	GT_OVERVIEW_K_COPY_HEAVY,
	GT_OVERVIEW_K_STAGGERED,
	GT_OVERVIEW_K_HOST_BOUND,
	GT_OVERVIEW_K_LOW_UTILIZATION,
	GT_OVERVIEW_K_SLOW_COLLECTIVES,
	GT_OVERVIEW_K_COUNT
};

/* "input-bound" for GT_OVERVIEW_K_INPUT_BOUND, ...; "" for OTHER and out of range */
const char *gt_overview_kind_name(enum gt_overview_kind k);

struct gt_overview_rec {
	enum gt_overview_severity severity;
	const char *kind;   /* static: "input-bound", "launch-bound", "straggler",
			       "comm-bound", "copy-heavy", "staggered", "host-bound",
			       "low-utilization", "slow-collectives" */
	enum gt_overview_kind kid;   /* the same as an enum (compare this, not the text) */
	char text[512];
	enum gt_overview_evidence evidence;
	int32_t rank, gpu;  /* -1 = n/a */
	int64_t step0, step1;   /* steps concerned (all evidence kinds), -1 = none */
	int64_t t0_ns, t1_ns;   /* their time span (all evidence kinds when steps exist) */
	double value;       /* the headline number (percent) */
};

struct gt_overview_kernel {
	uint32_t name;
	uint64_t count;
	int64_t total_ns;
	double pct;
};

/* one rank's step breakdown and input verdict (every rank in scope) */
struct gt_overview_rank {
	int32_t rank;
	size_t nsteps;            /* breakdown rows: steps in scope (1 when no steps) */
	int64_t step0, step1;     /* first and last step, -1 = no steps */
	int64_t t0_ns, t1_ns;     /* their span */
	double avg_step_ns;       /* breakdown avg_total_ns */
	double avg_ns[GT_BD_NCAT];   /* breakdown averages */
	double gpu_util_pct;
	enum gt_pipeline_verdict verdict;
	double input_pct;         /* pipeline: H2D + host wait, % of step */
	double host_wait_pct, h2d_pct, others_pct;
	double launch_pct;        /* pipeline: kernel launch, % of step */
	int launch_level;         /* pipeline launch_level */
	enum gt_pipeline_host_cost host_cost;  /* gt_pipeline_host_cost: the largest non-GPU cost */
	double host_cost_pct;     /* its share, % of step */
	int no_steps;             /* no steps in scope while other ranks have some: left
				     out of the averages, verdicts and recommendations */
};

struct gt_overview_result {
	size_t ranks, gpus, streams, host_threads;   /* host_threads: real OS threads only */
	size_t host_other;        /* host lanes that are no thread (a trace's pseudo-lanes:
				     Kineto's "Traces" / negative tids, XPlane's Steps) */
	uint64_t events;
	int64_t t0_ns, t1_ns;
	uint64_t dropped;
	enum gt_steps_source source;
	size_t nsteps;            /* the first rank's steps */
	size_t step_rows;         /* steps averaged in bd (every rank's; rank 0's alone = bd.n) */
	int64_t step_lo, step_hi; /* lowest and highest step number over the ranks, -1 = none */
	int steps_vary;           /* ranks have different step numbers */
	size_t ranks_with_steps;  /* ranks in scope with steps (the others are no_steps) */
	int64_t steps_t0_ns, steps_t1_ns;  /* span of every rank's steps */
	/* bd: rows = the first rank's steps (step numbers and spans for the
	 * evidence); avg_ns, avg_total_ns and gpu_util_pct = over every step of
	 * every rank in scope (all ranks' rows weigh alike) */
	struct gt_breakdown_result bd;
	struct gt_pipeline_result pl;             /* the worst rank's (verdict, then input %) */
	struct gt_overview_rank *rk;              /* every rank in scope, ascending */
	size_t nrk;
	struct gt_gputime_result gt;
	struct gt_multigpu_result mg;
	struct gt_overview_kernel top[10];
	size_t ntop;
	struct gt_overview_rec *recs;
	size_t nrecs;
};

int gt_overview_compute(const struct gt_store *s, const struct gt_scope *sc,
	       struct gt_overview_result *out, char *err, size_t errlen);
void gt_overview_result_done(struct gt_overview_result *r);

/* ---- reports (registered in core/analysis/report.c) ---- */

int gt_steps_report(const struct gt_store *s, const struct gt_scope *sc,
		 struct gt_report_out *out, char *err, size_t errlen);
int gt_breakdown_report(const struct gt_store *s, const struct gt_scope *sc,
	      struct gt_report_out *out, char *err, size_t errlen);
int gt_pipeline_report(const struct gt_store *s, const struct gt_scope *sc,
	      struct gt_report_out *out, char *err, size_t errlen);
int gt_gputime_report(const struct gt_store *s, const struct gt_scope *sc,
		   struct gt_report_out *out, char *err, size_t errlen);
int gt_multigpu_report(const struct gt_store *s, const struct gt_scope *sc,
	      struct gt_report_out *out, char *err, size_t errlen);
int gt_overview_report(const struct gt_store *s, const struct gt_scope *sc,
	      struct gt_report_out *out, char *err, size_t errlen);

#endif
