/*
 * test_steps_fixture.h - hand-built stores for the step analysis tests
 * (steps, breakdown, pipeline, gputime, multigpu, overview), and traces of
 * ../shared/testdata loaded quietly.
 */
#ifndef TEST_STEPS_FIXTURE_H
#define TEST_STEPS_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/load.h"
#include "gtrace/store.h"
#include "../testdata.h"

/* load a testdata file (path relative to $GTRACE_TESTDATA) into *out, or
 * skip the test when it is absent;
 * gt_load's return, with its message in err */
static inline int fx_testdata(const char *rel, struct gt_store **out, char *err, size_t errlen)
{
	td_need(rel);   /* skips the test when ../shared/testdata is absent */
	const char *paths[] = { td_path(rel) };
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	*out = NULL;
	return gt_load(paths, 1, &o, out, err, errlen);
}

static inline uint32_t fx_lane(struct gt_store *s, int type, int rank, int dev, int64_t id)
{
	struct gt_lane_key k = { .type = (uint8_t)type, .rank = rank, .device = dev,
				 .pid = 1, .id = id };
	uint32_t l = gt_store_lane(s, &k);
	cr_assert_neq(l, UINT32_MAX);
	return l;
}

static inline void fx_add(struct gt_store *s, uint32_t l, int kind, const char *name,
			  int64_t start, int64_t end, uint32_t corr, uint64_t arg)
{
	struct gt_event e = { .start_ns = start, .dur_ns = end - start, .arg = arg, .lane = l,
			      .corr = corr, .kind = (uint8_t)kind };
	e.name = gt_store_intern_cstr(s, name);
	if (kind == GT_EV_RUNTIME && corr)
		e.flags = GT_EVF_LAUNCH;
	cr_assert_eq(gt_store_add(s, &e), 0);
}

/*
 * Planted rank 0 (one host thread, GPU 0 stream 7), times in ns:
 *   steps (GT_EV_STEP): #1 [0,1000)  #2 [1000,2000)  #3 [2000,2100)
 *   DataLoader op [0,100), aten::conv [100,200)
 *   launches: corr1 [100,150) -> kernel [250,900)
 *             corr2 [300,350) -> kernel [900,1200)   (runs past host end)
 *             corr3 [1100,1150) -> kernel [1300,1800)
 *             corr4 [1200,1250) -> memcpy H2D [1800,1900)
 *             corr5 [2010,2020) -> kernel [2050,2060) (step 3: 1 activity < 80 % of 2)
 * Widened: step 1 = [0,1200), step 2 = [1200,2000); step 3 dropped.
 */
static inline struct gt_store *fx_basic(void)
{
	struct gt_store *s = gt_store_new();
	cr_assert(s);
	uint32_t h = fx_lane(s, GT_LANE_HOST, 0, -1, 1);
	uint32_t g = fx_lane(s, GT_LANE_GPU, 0, 0, 7);
	fx_add(s, h, GT_EV_STEP, "ProfilerStep#1", 0, 1000, 0, 1);
	fx_add(s, h, GT_EV_STEP, "ProfilerStep#2", 1000, 2000, 0, 2);
	fx_add(s, h, GT_EV_STEP, "ProfilerStep#3", 2000, 2100, 0, 3);
	fx_add(s, h, GT_EV_CPU_OP, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
	       0, 100, 0, 0);
	fx_add(s, h, GT_EV_CPU_OP, "aten::conv", 100, 200, 0, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 100, 150, 1, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 300, 350, 2, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 1100, 1150, 3, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaMemcpyAsync", 1200, 1250, 4, 0);
	fx_add(s, h, GT_EV_RUNTIME, "cudaLaunchKernel", 2010, 2020, 5, 0);
	fx_add(s, g, GT_EV_KERNEL, "k_a", 250, 900, 1, 0);
	fx_add(s, g, GT_EV_KERNEL, "k_b", 900, 1200, 2, 0);
	fx_add(s, g, GT_EV_KERNEL, "k_a", 1300, 1800, 3, 0);
	struct gt_event e = { .start_ns = 1800, .dur_ns = 100, .arg = 4096, .lane = g,
			      .corr = 4, .kind = GT_EV_MEMCPY, .sub = GT_COPY_H2D };
	e.name = gt_store_intern_cstr(s, "Memcpy HtoD");
	cr_assert_eq(gt_store_add(s, &e), 0);
	fx_add(s, g, GT_EV_KERNEL, "k_a", 2050, 2060, 5, 0);
	cr_assert_eq(gt_store_finish(s), 0);
	return s;
}

#endif
