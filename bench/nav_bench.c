/*
 * nav_bench.c - the trace view's jumps that walk the whole capture, on a
 * big store: a search (`/PATTERN`: the first match from the cursor and the
 * count of all matches), the next match (`n`, which counts too) and the
 * aggregate of an area selection over every lane (`m` ... `m` on two rows).
 *
 *   nav_bench [EVENTS [RUNS]]     defaults: 10000000 events, 5 runs
 *
 * Builds a simulated 8-GPU capture of about EVENTS events, opens the viewer
 * on a curses screen that writes to /dev/null (the jumps change state only;
 * no frame is timed here) and prints one line per case, the median of RUNS:
 *   nav search=gemm matches=123456 ms=85.2 cpu_ms=84.9
 *   nav next ms=...  /  nav area=all lanes=25 events=9999054 ms=... (and area=1/100)
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/sim.h"
#include "term.h"
#include "view.h"
#include "trace_view.h"
#include "bench.h"

/* median of v[0..n) (sorts v) */
static double median(double *v, int n)
{
	bench_sort(v, n);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	if (runs < 1 || runs > 64)
		runs = 5;
	struct gt_store *s = gt_store_new();
	struct gt_sim_opts o = { .gpus = 8, .events = events, .scenario = GT_SIM_BALANCED };
	char err[256];
	if (!s || gt_sim_generate(&o, s, err, sizeof(err))) {
		fprintf(stderr, "nav_bench: %s\n", err);
		return 1;
	}
	printf("nav_store events=%zu lanes=%zu\n", gt_store_event_count(s), gt_store_lane_count(s));
	setlocale(LC_ALL, "C.UTF-8");
	term_caps.utf8 = 1;
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *sc = newterm("xterm-256color", out, in);
	if (!sc) {
		fprintf(stderr, "nav_bench: no terminfo for xterm-256color\n");
		return 1;
	}
	set_term(sc);
	theme_init();
	resizeterm(40, 120);
	struct ui_source src = { .name = "bench", .store = s };
	struct app *a = ui_app_new(&src);
	if (!a)
		return 1;
	ui_frame(a);
	struct trace_view *t = (struct trace_view *)ui_page(a, "Trace");
	double w[64], c[64];
	/* search: from the start of the capture each time */
	for (int r = 0; r < runs; r++) {
		t->m.t0_ns = gt_store_t_min(s);
		t->col = 0;
		double b = bench_ms(CLOCK_MONOTONIC), bc = bench_ms(CLOCK_THREAD_CPUTIME_ID);
		trace_nav_search_done(&t->v, "gemm");
		w[r] = bench_ms(CLOCK_MONOTONIC) - b;
		c[r] = bench_ms(CLOCK_THREAD_CPUTIME_ID) - bc;
	}
	printf("nav search=gemm msg=\"%s\" ms=%.1f cpu_ms=%.1f\n", a->msg, median(w, runs),
	       median(c, runs));
	for (int r = 0; r < runs; r++) {
		double b = bench_ms(CLOCK_MONOTONIC), bc = bench_ms(CLOCK_THREAD_CPUTIME_ID);
		trace_nav_search(t, 1);
		w[r] = bench_ms(CLOCK_MONOTONIC) - b;
		c[r] = bench_ms(CLOCK_THREAD_CPUTIME_ID) - bc;
	}
	printf("nav next ms=%.1f cpu_ms=%.1f\n", median(w, runs), median(c, runs));
	/* area over every row: the whole capture, then 1/100 of it in the middle */
	int64_t lo = gt_store_t_min(s), hi = gt_store_t_max(s);
	for (int k = 0; k < 2; k++) {
		int64_t len = k ? (hi - lo) / 100 : hi - lo, mid = lo + (hi - lo) / 2;
		t->mark_t0 = k ? mid - len / 2 : lo;
		t->mark_t1 = t->mark_t0 + len;
		for (int r = 0; r < runs; r++) {
			double b = bench_ms(CLOCK_MONOTONIC), bc = bench_ms(CLOCK_THREAD_CPUTIME_ID);
			if (trace_area_compute(t, 0, t->L.nvis - 1))
				return 1;
			w[r] = bench_ms(CLOCK_MONOTONIC) - b;
			c[r] = bench_ms(CLOCK_THREAD_CPUTIME_ID) - bc;
		}
		printf("nav area=%s lanes=%zu events=%llu ms=%.1f cpu_ms=%.1f\n", k ? "1/100" : "all",
		       t->narea, (unsigned long long)t->area_events, median(w, runs), median(c, runs));
	}
	ui_app_free(a);
	endwin();
	delscreen(sc);
	gt_store_free(s);
	return 0;
}
