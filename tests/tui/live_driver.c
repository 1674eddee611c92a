/*
 * live_driver.c - a live source for the viewer, as the capture side uses
 * it: the simulator produces one training step per poll, the source moves
 * it into the store on the UI thread, reports its state, saves on W and
 * pauses on p.  Run by tui_tmux.py's "live" case inside tmux.
 *
 *   live_driver STEPS [SCENARIO]   (stops producing after STEPS steps;
 *                                   the simulator's scenario, default balanced)
 */
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/sim.h"
#include "ui.h"

struct live {
	struct gt_sim *sim;
	int steps, done, paused;
	size_t saves;
};

static int emit(void *ctx, const struct gt_event *ev, size_t n)
{
	struct gt_store *s = ctx;
	for (size_t i = 0; i < n; i++)
		if (gt_store_add(s, &ev[i]))
			return 1;
	return 0;
}

static int poll_fn(void *ctx, struct gt_store *s)
{
	struct live *lv = ctx;
	if (lv->done >= lv->steps)
		return 0;
	long r = gt_sim_next_step(lv->sim, emit, s);
	if (r <= 0)
		return 0;
	lv->done++;
	return gt_store_finish(s) ? -1 : 1;
}

static void status_fn(void *ctx, char *buf, size_t len)
{
	struct live *lv = ctx;
	snprintf(buf, len, "live: %s, step %d of %d", lv->paused ? "paused" : "recording",
		 lv->done, lv->steps);
}

static int save_fn(void *ctx, char *msg, size_t len)
{
	struct live *lv = ctx;
	lv->saves++;
	snprintf(msg, len, "saved live.gtrace (%d steps)", lv->done);
	return 0;
}

static int pause_fn(void *ctx, int paused)
{
	((struct live *)ctx)->paused = paused;
	return 0;
}

int main(int argc, char **argv)
{
	struct live lv = { .steps = argc > 1 ? atoi(argv[1]) : 20 };
	struct gt_store *s = gt_store_new();
	int sc = argc > 2 ? gt_sim_scenario_parse(argv[2]) : GT_SIM_BALANCED;
	if (sc < 0) {
		fprintf(stderr, "live_driver: unknown scenario '%s'\n", argv[2]);
		return 2;
	}
	struct gt_sim_opts o = { .gpus = 2, .steps = lv.steps, .scenario = (enum gt_sim_scenario)sc };
	char err[256];
	lv.sim = s ? gt_sim_new(&o, s, err, sizeof(err)) : NULL;
	if (!lv.sim || gt_store_finish(s)) {
		fprintf(stderr, "live_driver: %s\n", err);
		return 1;
	}
	struct ui_source src = { .name = "live-sim", .store = s, .ctx = &lv, .poll = poll_fn,
				 .status = status_fn, .save = save_fn, .pause = pause_fn,
				 .poll_ms = 100, .flags = UI_SRC_LIVE };
	int rc = ui_run(&src);
	gt_sim_free(lv.sim);
	gt_store_free(s);
	return rc;
}
