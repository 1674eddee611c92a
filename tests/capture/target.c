/*
 * target.c - a planted traced process for the capture tests: serves the
 * control socket through the capture agent and, once a viewer attaches,
 * publishes N kernel events named k0..k9 (event i: name k(i % 10), GPU
 * stream i % 3, start 1000 * i ns) through the ring, then ends.
 * usage: capture_target N [forever|busy|held]   (forever: keep publishing
 * until killed, staying attachable by later viewers; busy: starts are
 * refused; held: the last 500 events are held back, like records in
 * CUPTI's buffers, until the viewer stops the capture: the source's
 * disable then has them published, as gcupti's flush does)
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/agent.h"

static char names[10][8];

static const char *d_str(void *ctx, uint32_t id, size_t *len)
{
	if (id < 1 || id > 10)
		return NULL;
	*len = strlen(names[id - 1]);
	return names[id - 1];
}

static int d_lane(void *ctx, uint32_t id, struct gt_ring_lane_def *o)
{
	if (id > 2)
		return -1;
	o->type = 1;       /* GT_LANE_GPU */
	o->rank = -1;
	o->device = 0;
	o->tid = 7 + id;
	return 0;
}

/* mode "busy": the source cannot start, like CUPTI held by another profiler */
static int busy_enable(void *ctx, char *err, size_t errlen)
{
	snprintf(err, errlen, "CUPTI is in use by another profiler in this process (test holder)");
	return -16;
}

#define HELD 500
static _Atomic int flush_req, flushed;

/* mode "held": stop asks the producer for the held-back events and waits
 * (at most 2 s) until they are in the ring, before the agent retires it */
static int held_enable(void *ctx, char *err, size_t errlen)
{
	return 0;
}

static void held_disable(void *ctx)
{
	atomic_store(&flush_req, 1);
	struct timespec ms = { 0, 1000000 };
	for (int t = 0; t < 2000 && !atomic_load(&flushed); t++)
		nanosleep(&ms, NULL);
}

static void status(void *ctx, char *buf, size_t len)
{
	snprintf(buf, len, " gpus=1");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int forever = argc > 2 && !strcmp(argv[2], "forever");
	for (int i = 0; i < 10; i++)
		snprintf(names[i], sizeof(names[i]), "k%d", i);
	struct gt_publisher_dict d = { NULL, d_str, d_lane, NULL, NULL };
	struct gt_agent_source src = { .name = "test", .status = status };
	if (argc > 2 && !strcmp(argv[2], "busy")) {
		src.enable = busy_enable;
		forever = 1;
	}
	int held = argc > 2 && !strcmp(argv[2], "held");
	if (held) {
		src.enable = held_enable;
		src.disable = held_disable;
	}
	char err[256];
	if (gt_agent_init(&src, err, sizeof(err)) < 0) {
		fprintf(stderr, "target: %s\n", err);
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	struct timespec ms = { 0, 1000000 };
	long i = 0;
	time_t t_end = time(NULL) + 120;    /* never outlive a broken test */
	for (;;) {
		if (time(NULL) > t_end)
			return 3;
		struct gt_publisher *p = gt_agent_pub();
		if (!p) {
			nanosleep(&ms, NULL);
			continue;
		}
		if (!forever && i >= n)
			break;
		if (held && i == n - HELD && !atomic_load(&flush_req)) {
			nanosleep(&ms, NULL);
			continue;
		}
		struct gt_event e;
		memset(&e, 0, sizeof(e));
		e.kind = GT_EV_KERNEL;
		e.start_ns = 1000 * i;
		e.dur_ns = 500;
		e.name = (uint32_t)(i % 10) + 1;
		e.lane = (uint32_t)(i % 3);
		e.corr = (uint32_t)i + 1;
		if (gt_publisher_event(p, &e, &d) == 0 || forever)
			i++;
		else
			nanosleep(&ms, NULL);      /* ring full: let the viewer catch up */
		if (forever && i % 1000 == 0)
			nanosleep(&ms, NULL);
	}
	if (held) {
		/* the rest reached the ring inside the viewer's stop */
		atomic_store(&flushed, 1);
		for (int t = 0; t < 10000 && gt_agent_capturing(); t++) {
			nanosleep(&ms, NULL);
			gt_agent_pub();
		}
		gt_agent_shutdown();
		return 0;
	}
	gt_agent_end("test target done");
	/* stay until the viewer detaches (at most 10 s) */
	for (int t = 0; t < 10000 && gt_agent_capturing(); t++) {
		nanosleep(&ms, NULL);
		gt_agent_pub();
	}
	gt_agent_shutdown();
	return 0;
}
