/*
 * tui_bench.c - frame time of every viewer page on a big store.
 *
 *   tui_bench [EVENTS [FRAMES [VIEWS]]]   defaults: 10000000 events, 40 frames,
 *                                         VIEWS "trace,kernels,pipeline,overview,nesting,
 *                                         operators"; "memory" (asked for by name) also
 *                                         plants the simulator's leak allocations in the store
 *
 * Builds a simulated 8-GPU capture of about EVENTS events, opens the viewer
 * on a curses screen that writes to /dev/null (newterm, xterm-256color,
 * UTF-8), and times whole frames (ui_frame: layout, store queries, drawing,
 * doupdate) for each view, terminal size and zoom level; for the trace
 * view separately for frames after a cursor move, a pan by a quarter
 * screen and a zoom step (the last queries every column: the worst case).  One
 * untimed frame precedes each case (after a jump or a page switch curses
 * repaints the whole screen once).  Prints
 * one line per case:
 *   tui_frame view=trace size=120x40 zoom=1/100 kind=zoom p50_ms=0.41 p99_ms=0.62 cpu_p50_ms=0.40 cpu_p99_ms=0.55
 * (wall clock, and the thread's CPU time, which leaves out time the
 * scheduler gave to other processes on a busy machine)
 * and, for the analysis pages, the first frame (which runs the analysis):
 *   tui_first view=kernels size=120x40 ms=812.3
 * and for the trace view its first frame and the second, which finds the
 * steps of every rank for the step row (deferred past the first):
 *   tui_first view=trace size=120x40 ms=90.1
 *   tui_first view=trace+steps size=120x40 ms=1870.6
 * "nesting": the trace view with the biggest host thread expanded into its
 * depth rows (e), cursor on depth 1, its rows at the top of the screen:
 *   tui_depth lane_events=1234567 rows=4 build_ms=210.0 bytes=21000000
 *   tui_frame view=nesting size=... (as above)
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gtrace/sim.h"
#include "term.h"
#include "view.h"
#include "trace_view.h"
#include "bench.h"

static double now_ms(void)
{
	return bench_ms(CLOCK_MONOTONIC);
}

static double cpu_ms(void)
{
	return bench_ms(CLOCK_THREAD_CPUTIME_ID);
}

/* wall-clock frame times t and the thread's CPU time c, n frames each */
static void report(const char *view, int w, int h, const char *zoom, double *t, double *c, int n)
{
	bench_sort(t, n);
	bench_sort(c, n);
	int i99 = (int)(0.99 * (n - 1) + 0.5);
	printf("tui_frame view=%s size=%dx%d zoom=%s p50_ms=%.3f p99_ms=%.3f cpu_p50_ms=%.3f cpu_p99_ms=%.3f\n",
	       view, w, h, zoom, t[n / 2], t[i99], c[n / 2], c[i99]);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	int frames = argc > 2 ? atoi(argv[2]) : 40;
	const char *views = argc > 3 ? argv[3] : "trace,kernels,pipeline,overview,nesting,operators";
	if (frames < 2)
		frames = 2;
	struct gt_store *s = gt_store_new();
	struct gt_sim_opts o = { .gpus = 8, .events = events, .scenario = GT_SIM_BALANCED };
	if (strstr(views, "memory"))
		o.flags |= GT_SIM_F_MEMLEAK;
	char err[256];
	double t0 = now_ms();
	if (!s || gt_sim_generate(&o, s, err, sizeof(err))) {
		fprintf(stderr, "tui_bench: %s\n", err);
		return 1;
	}
	printf("tui_store events=%zu lanes=%zu build_ms=%.0f\n", gt_store_event_count(s),
	       gt_store_lane_count(s), now_ms() - t0);
	setlocale(LC_ALL, "C.UTF-8");
	term_caps.utf8 = 1;
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *sc = newterm("xterm-256color", out, in);
	if (!sc) {
		fprintf(stderr, "tui_bench: no terminfo for xterm-256color\n");
		return 1;
	}
	set_term(sc);
	theme_init();
	struct ui_source src = { .name = "bench", .store = s };
	struct app *a = ui_app_new(&src);
	if (!a)
		return 1;
	double *t = malloc((size_t)frames * sizeof(*t)), *c = malloc((size_t)frames * sizeof(*c));
	if (!t || !c)
		return 1;
	static const int sizes[][2] = { { 120, 40 }, { 300, 80 } };
	int64_t lo = gt_store_t_min(s), hi = gt_store_t_max(s), span = hi - lo;
	static const struct { const char *name; int64_t div; } zooms[] = {
		{ "fit", 1 }, { "1/100", 100 }, { "1/10^4", 10000 }, { "1/10^6", 1000000 },
		{ "1ns/col", 0 },
	};
	for (size_t si = 0; si < 2; si++) {
		int w = sizes[si][0], h = sizes[si][1];
		resizeterm(h, w);
		ui_show(a, "Trace");
		double b0 = now_ms();
		ui_frame(a);
		double b1 = now_ms();
		ui_frame(a);   /* the trace view's deferred work: the steps of every rank */
		if (si == 0)
			printf("tui_first view=trace size=%dx%d ms=%.1f\n"
			       "tui_first view=trace+steps size=%dx%d ms=%.1f\n", w, h, b1 - b0, w, h,
			       now_ms() - b1);
		for (size_t z = 0; strstr(views, "trace") && z < sizeof(zooms) / sizeof(zooms[0]); z++) {
			int64_t len = zooms[z].div ? span / zooms[z].div : w;
			int64_t mid = lo + span / 2;
			/* three kinds of frame: the cursor moves (nothing to query), the
			 * view pans a quarter screen (a quarter of the columns to query),
			 * the zoom changes (every column queried) */
			static const struct { const char *kind; int k1, k2; } kinds[] = {
				{ "cursor", 'l', 'h' }, { "pan", 'd', 'a' }, { "zoom", 's', 'w' },
			};
			for (size_t kd = 0; kd < 3; kd++) {
				struct view *tv = ui_page(a, "Trace");
				trace_view_zoom_range(tv, mid - len / 2, mid + len / 2);
				ui_frame(a);   /* warm-up: the first frame after a jump repaints everything */
				for (int f = 0; f < frames; f++) {
					tv->ops->key(tv, f % 2 ? kinds[kd].k2 : kinds[kd].k1);
					double b = now_ms(), bc = cpu_ms();
					ui_frame(a);
					t[f] = now_ms() - b;
					c[f] = cpu_ms() - bc;
				}
				char zk[64];
				snprintf(zk, sizeof(zk), "%s kind=%s", zooms[z].name, kinds[kd].kind);
				report("trace", w, h, zk, t, c, frames);
			}
		}
		/* the biggest host thread expanded into its depth rows */
		for (size_t z = 0; strstr(views, "nesting") && z < 4; z++) {
			struct trace_view *tl = (struct trace_view *)ui_page(a, "Trace");
			uint32_t big = UINT32_MAX;
			for (size_t li = 0; li < gt_store_lane_count(s); li++) {
				const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)li);
				if (l->key.type == GT_LANE_HOST &&
				    (big == UINT32_MAX || l->n > gt_store_lane_at(s, big)->n))
					big = (uint32_t)li;
			}
			if (big == UINT32_MAX)
				break;
			if (!trace_view_depth(tl, big)) {
				size_t row = lanes_find(&tl->L, big);
				if (row == SIZE_MAX)
					break;
				tl->row = row;
				double b = now_ms();
				trace_nav_expand(tl);
				const struct gt_depth *d = trace_view_depth(tl, big);
				if (!d)
					break;
				printf("tui_depth lane_events=%zu rows=%d build_ms=%.1f bytes=%zu\n",
				       gt_store_lane_at(s, big)->n, d->nrows, now_ms() - b, gt_store_depth_bytes(d));
			}
			size_t row = lanes_find(&tl->L, big);
			tl->top = row;
			tl->row = row + (trace_view_level_of(tl, row + 2) == 1 ? 2 : 1);
			int64_t len = zooms[z].div ? span / zooms[z].div : w;
			int64_t mid = lo + span / 2;
			static const struct { const char *kind; int k1, k2; } kinds[] = {
				{ "cursor", 'l', 'h' }, { "pan", 'd', 'a' }, { "zoom", 's', 'w' },
			};
			for (size_t kd = 0; kd < 3; kd++) {
				struct view *tv = ui_page(a, "Trace");
				trace_view_zoom_range(tv, mid - len / 2, mid + len / 2);
				ui_frame(a);
				/* untimed: the first selected runtime call builds the
				 * store's correlation index once (lazy, corr.c) */
				tv->ops->key(tv, 'l');
				ui_frame(a);
				for (int f = 0; f < frames; f++) {
					tv->ops->key(tv, f % 2 ? kinds[kd].k2 : kinds[kd].k1);
					double b = now_ms(), bc = cpu_ms();
					ui_frame(a);
					t[f] = now_ms() - b;
					c[f] = cpu_ms() - bc;
				}
				char zk[64];
				snprintf(zk, sizeof(zk), "%s kind=%s", zooms[z].name, kinds[kd].kind);
				report("nesting", w, h, zk, t, c, frames);
			}
		}
		static const struct { const char *page, *name; } pages[] = {
			{ "Kernels", "kernels" }, { "Pipeline", "pipeline" }, { "Overview", "overview" },
			{ "Operators", "operators" }, { "Memory", "memory" },
		};
		for (size_t p = 0; p < sizeof(pages) / sizeof(pages[0]); p++) {
			if (!strstr(views, pages[p].name))
				continue;
			struct view *v = ui_show(a, pages[p].page);
			if (!v)
				continue;
			if (si == 0) {
				double b = now_ms();
				ui_frame(a);
				printf("tui_first view=%s size=%dx%d ms=%.1f\n", pages[p].name, w, h, now_ms() - b);
			}
			ui_frame(a);
			for (int f = 0; f < frames; f++) {
				v->ops->key(v, f % 2 ? 'k' : 'j');
				double b = now_ms(), bc = cpu_ms();
				ui_frame(a);
				t[f] = now_ms() - b;
				c[f] = cpu_ms() - bc;
			}
			report(pages[p].name, w, h, "-", t, c, frames);
		}
	}
	ui_app_free(a);
	endwin();
	delscreen(sc);
	fclose(out);
	fclose(in);
	free(t);
	free(c);
	gt_store_free(s);
	return 0;
}
