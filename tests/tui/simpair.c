/*
 * simpair.c - write the simulator pair with a planted per-step change
 * (tests/analysis/simplant.h) as two .gtrace files for the viewer's tmux
 * test: A balanced, B the same run with the step_k-th step's DataLoader
 * EXTRA_US longer, 600 s later (separate runs: `gtrace open A B` aligns
 * them at their first step).  Prints the planted step's number.
 *
 *   simpair A.gtrace B.gtrace STEPS STEP_K EXTRA_US
 */
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/gtfile.h"
#include "gtrace/store.h"
#include "../analysis/simplant.h"

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: simpair A.gtrace B.gtrace STEPS STEP_K EXTRA_US\n");
		return 2;
	}
	char err[512] = "";
	struct gt_store *a = gt_store_new(), *b = gt_store_new();
	int steps = atoi(argv[3]), k = atoi(argv[4]);
	int64_t extra = atoll(argv[5]) * 1000;
	int64_t st = -2;
	int rc = !a || !b || simplant_run(a, steps, 0, 0, 0, err, sizeof(err)) != -1 ||
		 (st = simplant_run(b, steps, k, extra, 600000000000LL, err, sizeof(err))) < 0;
	if (!rc && (gt_file_write_store(a, argv[1], err, sizeof(err)) ||
		    gt_file_write_store(b, argv[2], err, sizeof(err))))
		rc = 1;
	if (rc)
		fprintf(stderr, "simpair: %s\n", err[0] ? err : "cannot build the pair");
	else
		printf("%lld\n", (long long)st);
	gt_store_free(a);
	gt_store_free(b);
	return rc;
}
