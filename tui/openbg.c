/*
 * openbg.c - `gtrace open` of a .gtrace file with a summary (format 1.1):
 * the first frame comes from the file's tables, index and per-lane summary
 * (gt_file_read_head, a fraction of a second whatever the size) while a
 * loader thread decodes the events into a second store; the viewer's poll
 * swaps that store in when it is done (gt_store_swap on the UI thread: the
 * loader never touches the viewer's store, the viewer never touches the
 * loader's before it is done).  Until then the status line says "loading
 * N %" and that drill-down and reports wait for the events.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "gtrace/load.h"
#include "gtrace/lsum.h"
#include "openbg.h"
#include "runalign.h"

/* files below this many MB load whole first (about 0.3 s here) */
#define OPENBG_MIN_MB 32.0

struct openbg {
	const char *path;
	struct gt_load_opts lo;
	struct gt_store *s;          /* the loader's store (its own until done) */
	char err[512];
	int rc;
	_Atomic int done;            /* the loader finished (release: s, rc, err are set) */
	_Atomic uint64_t bytes;      /* bytes of the file walked */
	double size;                 /* file bytes */
	uint64_t events;             /* in the file (its index) */
	pthread_t th;
	int state;                   /* 0 loading, 1 swapped in, 2 failed */
};

static void *loader(void *arg)
{
	struct openbg *b = arg;
	const char *dv = getenv("GTRACE_LOAD_DELAY_MS");   /* tests: a slow disk */
	if (dv && atoi(dv) > 0)
		usleep((useconds_t)atoi(dv) * 1000u);
	b->rc = gt_load(&b->path, 1, &b->lo, &b->s, b->err, sizeof(b->err));
	if (!b->rc) {
		char note[96];
		if (runalign_starts(b->s, note, sizeof(note))) {
			b->rc = -ENOMEM;
			snprintf(b->err, sizeof(b->err), "out of memory");
		}
	}
	atomic_store_explicit(&b->done, 1, memory_order_release);
	return NULL;
}

/* the viewer's poll: swap the loaded store in once it is done */
static int bg_poll(void *ctx, struct gt_store *s)
{
	struct openbg *b = ctx;
	if (b->state || !atomic_load_explicit(&b->done, memory_order_acquire))
		return 0;
	pthread_join(b->th, NULL);
	if (b->rc) {
		b->state = 2;
		gt_store_free(b->s);
		b->s = NULL;
		return 0;
	}
	gt_store_swap(s, b->s);
	gt_store_free(b->s);   /* what was the head */
	b->s = NULL;
	b->state = 1;
	return 1;
}

static void bg_status(void *ctx, char *buf, size_t len)
{
	struct openbg *b = ctx;
	if (b->state == 1) {
		buf[0] = '\0';
	} else if (b->state == 2) {
		snprintf(buf, len, "loading failed: %s", b->err);
	} else {
		double done = (double)atomic_load_explicit(&b->bytes, memory_order_relaxed);
		int pct = b->size > 0 ? (int)(100.0 * done / b->size) : 0;
		/* parts cut at ", " when the line is short: the first stays */
		snprintf(buf, len, "loading %d%%, %llu events, drawn from the summary, drill-down "
			 "and reports wait", pct > 99 ? 99 : pct, (unsigned long long)b->events);
	}
}

int openbg_try(const char *path, size_t memory, struct ui_source *src, struct openbg **out)
{
	*out = NULL;
	const char *off = getenv("GTRACE_OPEN_WHOLE");
	if (off && *off && strcmp(off, "0"))
		return 0;
	/* a small file loads whole faster than a frame could tell the difference */
	const char *mv = getenv("GTRACE_OPEN_BG_MIN_MB");
	double min_mb = mv && *mv ? atof(mv) : OPENBG_MIN_MB;
	struct stat st;
	if (stat(path, &st) || (double)st.st_size < min_mb * 1e6)
		return 0;
	struct gt_store *h = gt_store_new();
	struct openbg *b = calloc(1, sizeof(*b));
	if (!h || !b)
		goto no;
	struct gt_file_info info;
	char err[512];
	/* the summary's pages the first frames load count in the budget
	 * (the head store holds tables only: it never engages a cache file) */
	gt_store_set_budget(h, memory != SIZE_MAX ? memory : gt_default_memory_budget());
	if (gt_file_read_head(path, h, &info, err, sizeof(err)))
		goto no;   /* no summary, cut off, or bad: the whole load says why */
	b->path = path;
	b->size = (double)st.st_size;
	b->events = info.events;
	b->lo = (struct gt_load_opts){ .flags = GT_LOAD_QUIET, .progress_bytes = &b->bytes,
				       .memory_bytes = memory != SIZE_MAX ? memory :
						       gt_default_memory_budget() };
	if (memory == SIZE_MAX)
		b->lo.flags |= GT_LOAD_MEMORY_SOFT;
	if (pthread_create(&b->th, NULL, loader, b))
		goto no;
	src->store = h;
	src->ctx = b;
	src->poll = bg_poll;
	src->status = bg_status;
	src->poll_ms = 100;
	*out = b;
	return 1;
no:
	gt_store_free(h);
	free(b);
	return 0;
}

void openbg_done(struct openbg *b)
{
	if (!b)
		return;
	if (!b->state) {
		/* the viewer quit before the events arrived: the loader cannot
		 * be stopped mid-file; it is left to the process exit */
		pthread_detach(b->th);
		return;
	}
	free(b);
}
