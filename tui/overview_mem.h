/*
 * overview_mem.h - the overview page's memory rows: allocated bytes over the whole
 * capture per device with allocator records (gtrace/mem_usage.h), one sparkline
 * row each, scaled to the device's peak, the peak's column marked.
 * Cached until the width changes or the overview page's recompute throttle
 * (ui_due: a changed store at most every UI_RECOMPUTE_MS, not while
 * paused) says the page computes again.
 */
#ifndef GTRACE_TUI_OVMEM_H
#define GTRACE_TUI_OVMEM_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/mem_usage.h"
#include "view.h"

struct overview_mem {
	int ok;                    /* res holds a result */
	struct gt_mem_usage_result res;
	int64_t *series;           /* res.n rows of ncols samples */
	int ncols;                 /* columns of series (0: none) */
	int updated;               /* an update ran (its result may be empty) */
	int width;                 /* the ncols asked at the last update */
	int64_t t0_ns, dt_ns;
};

/* bring the rows up to date for ncols sparkline columns: recomputed when
 * due (the page's ui_due fired this frame), on the first call and when
 * ncols changed; else kept */
void overview_mem_update(struct overview_mem *m, const struct app *a, int ncols, int due);
/* the number of devices with records (0: no memory rows) */
size_t overview_mem_rows(const struct overview_mem *m);
/* draw device i's row at y: the label in 19 columns at x, the sparkline at x + 19 */
void overview_mem_draw(const struct overview_mem *m, size_t i, int y, int x);
void overview_mem_done(struct overview_mem *m);

#endif
