/*
 * agent.c - the capture agent of gtrace/agent.h: control-channel operations
 * and the handover of rings from the control thread to the producer.
 *
 * The control thread creates each ring (memfd + its own mapping for status)
 * and leaves a second mapping in `pending` with a new generation number.
 * The producer, in gt_agent_pub(), notices the generation change, takes the
 * pending mapping with a trylock (never waits), unmaps its old one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/agent.h"
#include "gtrace/ctl.h"

static struct {
	struct gt_agent_source src;
	pthread_mutex_t lock;        /* guards pending, view, passive text */
	_Atomic uint64_t gen;        /* bumped on every start/stop */
	struct gt_ring pending;         /* producer mapping waiting to be taken */
	int pending_valid;
	struct gt_ring view;            /* control thread's mapping, for status */
	_Atomic int capturing;        /* read without the lock by gt_agent_capturing */
	_Atomic int ended;
	char passive[160];
	char ended_reason[96];
	int early_fd;                /* GTRACE_AUTOSTART ring for the first viewer */
	/* producer side */
	uint64_t prod_gen;
	struct gt_ring cur;
	struct gt_publisher pub;
	int inited;
} ag = { .lock = PTHREAD_MUTEX_INITIALIZER, .early_fd = -1 };

static int ag_start(void *ctx, int records, char *err, size_t errlen)
{
	(void)ctx;
	pthread_mutex_lock(&ag.lock);
	int rc;
	if (ag.early_fd >= 0) {
		/* capture has been running since the process started: the
		 * first viewer gets that ring, with everything in it */
		rc = ag.early_fd;
		ag.early_fd = -1;
		goto out;
	}
	if (ag.passive[0]) {
		snprintf(err, errlen, "%s", ag.passive);
		rc = -ENODEV;
		goto out;
	}
	struct gt_ring pr, vr;
	int fd = gt_ring_create(&pr, (uint64_t)records, getpid());
	if (fd < 0) {
		snprintf(err, errlen, "cannot create capture ring: %s", strerror(-fd));
		rc = fd;
		goto out;
	}
	if (gt_ring_map(&vr, fd, err, errlen) < 0) {
		gt_ring_unmap(&pr);
		close(fd);
		rc = -ENOMEM;
		goto out;
	}
	if (ag.ended)
		gt_ring_set_state(&pr, GT_RING_ST_ENDED, ag.ended_reason);
	else
		atomic_store(&pr.hdr->state, GT_RING_ST_INIT);
	if (ag.pending_valid)
		gt_ring_unmap(&ag.pending);
	ag.pending = pr;
	ag.pending_valid = 1;
	if (ag.view.hdr)
		gt_ring_unmap(&ag.view);
	ag.view = vr;
	atomic_fetch_add(&ag.gen, 1);
	if (!ag.capturing && ag.src.enable && !ag.ended) {
		rc = ag.src.enable(ag.src.ctx, err, errlen);
		if (rc < 0) {
			/* nothing will be published: give the ring back */
			close(fd);
			if (ag.pending_valid)
				gt_ring_unmap(&ag.pending);
			ag.pending_valid = 0;
			gt_ring_unmap(&ag.view);
			atomic_fetch_add(&ag.gen, 1);
			goto out;
		}
	}
	ag.capturing = 1;
	rc = fd;
out:
	pthread_mutex_unlock(&ag.lock);
	return rc;
}

static void ag_stop(void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&ag.lock);
	if (ag.capturing && ag.src.disable)
		ag.src.disable(ag.src.ctx);
	ag.capturing = 0;
	if (ag.pending_valid)
		gt_ring_unmap(&ag.pending);
	ag.pending_valid = 0;
	if (ag.view.hdr) {
		uint32_t st = atomic_load(&ag.view.hdr->state);
		if (st != GT_RING_ST_ENDED)
			gt_ring_set_state(&ag.view, GT_RING_ST_STOPPED, "capture stopped by the viewer");
		gt_ring_unmap(&ag.view);
	}
	atomic_fetch_add(&ag.gen, 1);
	pthread_mutex_unlock(&ag.lock);
}

static void ag_flush(void *ctx)
{
	(void)ctx;
	if (ag.src.flush)
		ag.src.flush(ag.src.ctx);
}

static void ag_status(void *ctx, char *buf, size_t len)
{
	(void)ctx;
	pthread_mutex_lock(&ag.lock);
	char comm[64] = "?";
	FILE *f = fopen("/proc/self/comm", "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n ")] = 0;
		fclose(f);
	}
	const char *state = ag.passive[0] ? "passive" : ag.ended ? "ended" :
			    ag.capturing ? "capturing" : "dormant";
	int n = snprintf(buf, len, " state=%s source=%s cmd=%s", state, ag.src.name, comm);
	if (n > 0 && (size_t)n < len && ag.src.status)
		ag.src.status(ag.src.ctx, buf + n, len - (size_t)n);
	n = (int)strlen(buf);
	if (ag.view.hdr && (size_t)n < len) {
		struct gt_ring_hdr *h = ag.view.hdr;
		n += snprintf(buf + n, len - (size_t)n,
			      " events=%llu ring_overflow=%llu cupti_dropped=%llu"
			      " buffers_declined=%llu zero_timestamps=%llu"
			      " client_buffers=%llu read_errors=%llu",
			      (unsigned long long)atomic_load(&h->events_published),
			      (unsigned long long)atomic_load(&h->ring_overflow),
			      (unsigned long long)atomic_load(&h->cupti_dropped),
			      (unsigned long long)atomic_load(&h->buffers_declined),
			      (unsigned long long)atomic_load(&h->zero_timestamps),
			      (unsigned long long)atomic_load(&h->client_buffers),
			      (unsigned long long)atomic_load(&h->read_errors));
	}
	if ((size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " reason=%s",
			 ag.passive[0] ? ag.passive : ag.ended ? ag.ended_reason : "");
	pthread_mutex_unlock(&ag.lock);
}

int gt_agent_init(const struct gt_agent_source *src, char *err, size_t errlen)
{
	return gt_agent_init_autostart(src, 0, err, errlen);
}

int gt_agent_autostart(uint32_t records, char *err, size_t errlen)
{
	if (ag.early_fd >= 0 || ag.capturing)
		return 0;
	if (records < 64)       /* GTRACE_AUTOSTART=1: the default ring */
		records = GT_CTL_RING_DEFAULT_RECORDS;
	int fd = ag_start(NULL, (int)records, err, errlen);
	if (fd < 0)
		return fd;
	pthread_mutex_lock(&ag.lock);
	ag.early_fd = fd;
	pthread_mutex_unlock(&ag.lock);
	return 0;
}

int gt_agent_init_autostart(const struct gt_agent_source *src, uint32_t records, char *err,
			 size_t errlen)
{
	if (ag.inited) {
		snprintf(err, errlen, "capture agent already running");
		return -EBUSY;
	}
	ag.src = *src;
	gt_publisher_init(&ag.pub);
	/* the capture starts on this thread before the socket listens: a
	 * viewer's start would otherwise race it from the control thread
	 * (inside cuInit, a CUPTI call there waits for the driver, which
	 * waits for us) */
	if (records) {
		char e2[256];
		gt_agent_autostart(records, e2, sizeof(e2));   /* a viewer's start retries */
	}
	struct gt_ctl_ops ops = { NULL, ag_start, ag_stop, ag_flush, ag_status };
	int rc = gt_ctl_serve_start(&ops, err, errlen);
	if (rc == 0)
		ag.inited = 1;
	return rc;
}

void gt_agent_shutdown(void)
{
	if (!ag.inited)
		return;
	gt_ctl_serve_stop();
	ag_stop(NULL);
	if (ag.cur.hdr)
		gt_ring_unmap(&ag.cur);
	gt_publisher_done(&ag.pub);
	ag.inited = 0;
}

void gt_agent_exit_wait(int max_ms)
{
	for (int t = 0; t < max_ms / 5; t++) {
		pthread_mutex_lock(&ag.lock);
		int pending = ag.early_fd >= 0 && ag.inited;
		pthread_mutex_unlock(&ag.lock);
		if (!pending)
			return;
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
}

void gt_agent_set_passive(const char *reason)
{
	pthread_mutex_lock(&ag.lock);
	snprintf(ag.passive, sizeof(ag.passive), "%s", reason);
	pthread_mutex_unlock(&ag.lock);
}

int gt_agent_capturing(void)
{
	return ag.cur.hdr != NULL || ag.capturing;
}

struct gt_publisher *gt_agent_pub(void)
{
	uint64_t g = atomic_load_explicit(&ag.gen, memory_order_acquire);
	if (g != ag.prod_gen && pthread_mutex_trylock(&ag.lock) == 0) {
		if (ag.cur.hdr) {
			uint32_t st = atomic_load(&ag.cur.hdr->state);
			if (st == GT_RING_ST_RUNNING || st == GT_RING_ST_INIT)
				gt_ring_set_state(&ag.cur, GT_RING_ST_STOPPED, "capture stopped");
			gt_ring_unmap(&ag.cur);
		}
		if (ag.pending_valid) {
			ag.cur = ag.pending;
			ag.pending_valid = 0;
			if (atomic_load(&ag.cur.hdr->state) == GT_RING_ST_INIT)
				gt_ring_set_state(&ag.cur, GT_RING_ST_RUNNING, NULL);
			gt_publisher_reset(&ag.pub, &ag.cur);
		} else {
			gt_publisher_reset(&ag.pub, NULL);
		}
		ag.prod_gen = atomic_load(&ag.gen);
		pthread_mutex_unlock(&ag.lock);
	}
	return ag.cur.hdr ? &ag.pub : NULL;
}

void gt_agent_count_loss(uint64_t cupti_dropped, uint64_t buffers_declined, uint64_t zero_timestamps)
{
	if (!ag.cur.hdr)
		return;
	struct gt_ring_hdr *h = ag.cur.hdr;
	atomic_fetch_add_explicit(&h->cupti_dropped, cupti_dropped, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->buffers_declined, buffers_declined, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->zero_timestamps, zero_timestamps, memory_order_relaxed);
}

void gt_agent_count_read_errors(uint64_t n)
{
	if (ag.cur.hdr && n)
		atomic_fetch_add_explicit(&ag.cur.hdr->read_errors, n, memory_order_relaxed);
}

void gt_agent_set_client_buffers(uint64_t n)
{
	if (ag.cur.hdr)
		atomic_store_explicit(&ag.cur.hdr->client_buffers, n, memory_order_relaxed);
}

void gt_agent_forked_declined(void)
{
	struct gt_ring *r = ag.cur.hdr ? &ag.cur : ag.pending_valid ? &ag.pending : NULL;
	if (r)
		atomic_fetch_add_explicit(&r->hdr->buffers_declined, 1, memory_order_relaxed);
}

void gt_agent_end(const char *reason)
{
	pthread_mutex_lock(&ag.lock);
	snprintf(ag.ended_reason, sizeof(ag.ended_reason), "%s", reason ? reason : "source ended");
	ag.ended = 1;
	pthread_mutex_unlock(&ag.lock);
	gt_agent_pub();
	if (ag.cur.hdr)
		gt_ring_set_state(&ag.cur, GT_RING_ST_ENDED, ag.ended_reason);
}
