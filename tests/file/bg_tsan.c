/*
 * bg_tsan.c - the background open of issue 16 under ThreadSanitizer: the
 * head of a file (tables, index, summary) is read on this thread and drawn
 * from (summary rows, empty lanes) while a loader thread reads the whole
 * file into a second store (with a small memory budget: its trimmer thread
 * runs too); an atomic flag says done, this thread swaps the stores
 * (gt_store_swap, as tui/openbg.c does) and draws again.  Exit 0 when the
 * swapped-in store holds the written events and TSan is quiet.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "gtrace/lsum.h"

struct job {
	const char *path;
	struct gt_store *s;
	int rc;
	_Atomic uint64_t bytes;
	_Atomic int done;
};

static void *loader(void *arg)
{
	struct job *j = arg;
	char err[256];
	j->rc = gt_file_read_progress(j->path, j->s, NULL, &j->bytes, err, sizeof(err));
	if (j->rc)
		fprintf(stderr, "%s\n", err);
	atomic_store_explicit(&j->done, 1, memory_order_release);
	return NULL;
}

/* every lane's 100 columns over the whole span, as the viewer would */
static uint64_t draw(const struct gt_store *s)
{
	struct gt_bucket b[100];
	uint64_t sum = 0;
	int64_t t0 = gt_store_t_min(s), dt = (gt_store_t_max(s) - t0) / 100 + 1;
	for (uint32_t i = 0; i < gt_store_lane_count(s); i++) {
		if (!gt_lsum_buckets(gt_store_summary(s), i, t0, dt, 100, b, NULL, NULL))
			gt_store_lane_buckets(gt_store_lane_at(s, i), t0, dt, 100, b);
		for (int c = 0; c < 100; c++)
			sum += b[c].count;
	}
	return sum;
}

int main(void)
{
	setenv("GTRACE_STORE_TRIM_MS", "1", 1);
	char path[] = "/tmp/gtrace-bg-tsan-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	struct gt_store *w = gt_store_new();
	uint32_t name = gt_store_intern_cstr(w, "k");
	size_t n = 0;
	for (int l = 0; l < 8; l++) {
		struct gt_lane_key k = { .type = GT_LANE_GPU, .device = l, .id = 7 };
		uint32_t lane = gt_store_lane(w, &k);
		for (int i = 0; i < 20000; i++, n++)
			gt_store_add(w, &(struct gt_event){ .start_ns = 1000 + (int64_t)i * 500 + l,
							 .dur_ns = 300, .name = name, .lane = lane,
							 .kind = GT_EV_KERNEL });
	}
	char err[256];
	if (gt_store_finish(w) || gt_file_write_store(w, path, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct gt_store *h = gt_store_new();
	if (gt_file_read_head(path, h, NULL, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct job j = { .path = path, .s = gt_store_new() };
	gt_store_set_budget(j.s, 512 << 10);
	pthread_t th;
	if (pthread_create(&th, NULL, loader, &j))
		return 1;
	uint64_t frames = 0, first = draw(h);
	while (!atomic_load_explicit(&j.done, memory_order_acquire)) {
		if (draw(h) != first)
			return 2;
		frames++;
		(void)atomic_load_explicit(&j.bytes, memory_order_relaxed);
	}
	pthread_join(th, NULL);
	if (j.rc)
		return 1;
	gt_store_swap(h, j.s);
	gt_store_free(j.s);
	uint64_t after = draw(h);
	int ok = gt_store_event_count(h) == n && after == n && first == n;
	printf("%zu events, %llu frames while loading, counts %llu / %llu: %s\n", n,
	       (unsigned long long)frames, (unsigned long long)first, (unsigned long long)after,
	       ok ? "ok" : "WRONG");
	gt_store_free(h);
	gt_store_free(w);
	remove(path);
	return ok ? 0 : 1;
}
