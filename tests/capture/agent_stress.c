/*
 * agent_stress.c - the agent's ring handover under ThreadSanitizer: the
 * main thread publishes as a source would while a viewer thread (in the
 * same process, through the real socket) starts, drains and detaches
 * again and again.  Exit 0 = every round received events in order and TSan
 * saw no race.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/agent.h"
#include "gtrace/ctl.h"

static atomic_int stop;
static int failed;

static const char *d_str(void *ctx, uint32_t id, size_t *len)
{
	*len = 6;
	return id == 1 ? "kernel" : NULL;
}

static int d_lane(void *ctx, uint32_t id, struct gt_ring_lane_def *o)
{
	o->type = 1;
	o->tid = id;
	return 0;
}

static void *viewer(void *arg)
{
	(void)arg;
	for (int round = 0; round < 20 && !failed; round++) {
		char err[256], reply[GT_CTL_LINE_MAX];
		int fd = gt_ctl_connect(getpid(), err, sizeof(err)), rfd = -1;
		if (fd < 0 || gt_ctl_request(fd, "start 4096", reply, sizeof(reply), &rfd, 5000) < 0) {
			fprintf(stderr, "round %d: %s %s\n", round, err, reply);
			failed = 1;
			break;
		}
		struct gt_ring r;
		if (gt_ring_map(&r, rfd, err, sizeof(err)) < 0) {
			failed = 1;
			break;
		}
		close(rfd);
		uint64_t got = 0;
		int64_t last = -1;
		for (int t = 0; t < 2000 && got < 2000; t++) {
			uint32_t n;
			const struct gt_ring_rec *m;
			while ((m = gt_ring_peek(&r, &n))) {
				if (m->type == GT_RING_REC_EVENT) {
					if (m->u.ev.start_ns <= last)
						failed = 1;
					last = m->u.ev.start_ns;
					got++;
				}
				gt_ring_release(&r, n);
			}
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
		if (round % 2)
			gt_ctl_request(fd, "status", reply, sizeof(reply), NULL, 2000);
		if (round % 3 == 0)
			gt_ctl_request(fd, "detach", reply, sizeof(reply), NULL, 2000);
		close(fd);          /* otherwise the close is the detach */
		gt_ring_unmap(&r);
		if (got < 2000) {
			fprintf(stderr, "round %d: only %llu events\n", round, (unsigned long long)got);
			failed = 1;
		}
	}
	atomic_store(&stop, 1);
	return NULL;
}

int main(void)
{
	struct gt_agent_source src = { .name = "stress" };
	char err[256];
	if (gt_agent_init(&src, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	pthread_t t;
	pthread_create(&t, NULL, viewer, NULL);
	struct gt_publisher_dict d = { NULL, d_str, d_lane, NULL, NULL };
	struct gt_event e;
	memset(&e, 0, sizeof(e));
	e.kind = GT_EV_KERNEL;
	e.name = 1;
	for (int64_t i = 0; !atomic_load(&stop); i++) {
		struct gt_publisher *p = gt_agent_pub();
		e.start_ns = i;
		e.lane = (uint32_t)(i % 4);
		if (p)
			gt_publisher_event(p, &e, &d);
		if (i % 64 == 0) {
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
	}
	pthread_join(t, NULL);
	gt_agent_shutdown();
	printf("%s\n", failed ? "FAIL" : "ok");
	return failed;
}
