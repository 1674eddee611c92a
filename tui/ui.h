/*
 * ui.h - the viewer as a library: `gtrace open` runs it on a loaded store,
 * the live commands (demo, run, attach) run it on a store they keep filling.
 * docs/viewer.md describes the contract and the keys.
 *
 * Threading: everything happens on the calling (UI) thread.  A live source
 * buffers its data elsewhere and moves it into the store only inside poll(),
 * which the UI calls between frames; the views read the store only while
 * poll is not running.
 */
#ifndef GTRACE_TUI_UI_H
#define GTRACE_TUI_UI_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/store.h"

#define UI_SRC_LIVE 0x1u    /* data keeps coming: trace view follows the end */

struct ui_source {
	const char *name;        /* shown in the status line: a path, "pid 1234", "demo" */
	struct gt_store *store;  /* finished at least once (may hold 0 events) */
	void *ctx;               /* passed to the callbacks */
	/* optional: move new data into the store (gt_store_add + gt_store_finish);
	 * return 1 when the store changed, 0 when not, negative errno on a
	 * failure (its text goes to status()) */
	int (*poll)(void *ctx, struct gt_store *s);
	/* optional: one line of capture state, e.g. "live: recording, 120k ev/s, 0 lost" */
	void (*status)(void *ctx, char *buf, size_t len);
	/* optional: the `W` key: save the capture; 0 or negative errno, and a
	 * one-line message ("saved run.gtrace, 1.2M events" or the error) */
	int (*save)(void *ctx, char *msg, size_t len);
	/* optional, preferred to save: W asks for a name (a default offered)
	 * and keeps the capture under it; 0 or negative errno and a message */
	int (*save_as)(void *ctx, const char *path, char *msg, size_t len);
	/* optional: the `p` key: pause (1) or resume (0) the capture */
	int (*pause)(void *ctx, int paused);
	int poll_ms;             /* poll period; 0 = 250 ms */
	/* optional: what the user said of the model and the link (--param-bytes,
	   --link-gbps): the overview compares collectives with the expected
	   all-reduce time; 0 = not given */
	uint64_t param_bytes;
	double link_gbps;
	unsigned flags;          /* UI_SRC_* */
	/* optional: the `C` key: apply the residual clock offsets between the
	 * nodes of a multi-node view (done at the next poll); 0 or negative
	 * errno, and a one-line message */
	int (*align_clocks)(void *ctx, char *msg, size_t len);
};

/* run the viewer until the user quits.  Returns 0, or 1 with a message on
 * stderr when the terminal cannot be used (not a tty, unknown TERM). */
int ui_run(struct ui_source *src);

#endif
