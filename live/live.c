/*
 * live.c - the receiving end of a live capture (live/live.h): control
 * connection, ring mapping, records -> store with producer ids mapped to
 * store ids, state and loss reporting.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/ctl.h"
#include "gtrace/evcheck.h"
#include "live.h"
#include "../core/util/mapguard.h"

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static size_t map_slot(uint32_t id, size_t mask)
{
	return (size_t)((id * 0x9E3779B1u) >> 7) & mask;
}

/* 0, -ENOSPC past LIVE_MAP_MAX ids, -ENOMEM */
static int map_set(struct live_map *m, uint32_t id, uint32_t v)
{
	if ((m->n + 1) * 2 > m->cap) {
		if (m->n >= LIVE_MAP_MAX)
			return -ENOSPC;
		size_t nc = m->cap ? m->cap * 2 : 1024;
		uint32_t *nk = malloc(nc * sizeof(*nk)), *nv = calloc(nc, sizeof(*nv));
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->v[i])
				continue;
			size_t j = map_slot(m->key[i], nc - 1);
			while (nv[j])
				j = (j + 1) & (nc - 1);
			nk[j] = m->key[i];
			nv[j] = m->v[i];
		}
		free(m->key);
		free(m->v);
		m->key = nk;
		m->v = nv;
		m->cap = nc;
	}
	size_t j = map_slot(id, m->cap - 1);
	while (m->v[j] && m->key[j] != id)
		j = (j + 1) & (m->cap - 1);
	if (!m->v[j])
		m->n++;
	m->key[j] = id;
	m->v[j] = v + 1;
	return 0;
}

/* store id for producer id, or UINT32_MAX when never defined */
static uint32_t map_get(const struct live_map *m, uint32_t id)
{
	if (!m->cap)
		return UINT32_MAX;
	for (size_t j = map_slot(id, m->cap - 1); m->v[j]; j = (j + 1) & (m->cap - 1))
		if (m->key[j] == id)
			return m->v[j] - 1;
	return UINT32_MAX;
}

static void map_free(struct live_map *m)
{
	free(m->key);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static uint32_t map_str(const struct live *l, uint32_t id)
{
	return id == 0 ? 0 : map_get(&l->str, id);
}

int live_open(struct live *l, pid_t pid, int rank, struct gt_store *s, uint32_t records,
	      char *err, size_t errlen)
{
	memset(l, 0, sizeof(*l));
	l->pid = pid;
	l->rank = rank;
	l->s = s;
	l->ctl_fd = gt_ctl_connect(pid, err, errlen);
	if (l->ctl_fd < 0)
		return l->ctl_fd;
	char cmd[64], reply[GT_CTL_LINE_MAX];
	snprintf(cmd, sizeof(cmd), "start %u", records);
	int rfd = -1;
	int rc = gt_ctl_request(l->ctl_fd, cmd, reply, sizeof(reply), &rfd, 10000);
	if (rc < 0 || rfd < 0) {
		if (rc == -EREMOTEIO || rc == 0)
			snprintf(err, errlen, "process %d: %s", (int)pid, reply);
		else
			snprintf(err, errlen, "process %d: start: %s", (int)pid, strerror(-rc));
		close(l->ctl_fd);
		l->ctl_fd = -1;
		return rc < 0 ? rc : -EPROTO;
	}
	rc = gt_ring_map(&l->ring, rfd, err, errlen);
	close(rfd);
	if (rc < 0) {
		close(l->ctl_fd);
		l->ctl_fd = -1;
		return rc;
	}
	/* the memfd's seals (checked by gt_ring_map) keep its size fixed; a
	 * SIGBUS in the mapping anyway (pages the kernel cannot supply) ends
	 * this connection instead of the process (mapguard.h) */
	l->guard = mapguard_begin(l->ring.hdr, l->ring.map_bytes) + 1;
	return 0;
}

/* notice the target's exit: its end of the control socket closes */
static void check_ctl(struct live *l)
{
	if (l->ctl_fd < 0)
		return;
	struct pollfd pf = { l->ctl_fd, POLLIN, 0 };
	if (poll(&pf, 1, 0) > 0) {
		char b[64];
		ssize_t n = recv(l->ctl_fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			close(l->ctl_fd);
			l->ctl_fd = -1;
			l->gone = 1;
			snprintf(l->reason, sizeof(l->reason), "process %d exited", (int)l->pid);
		}
	}
}

static int def_string(struct live *l, const struct gt_ring_rec *m)
{
	size_t need = (size_t)m->len + 1;
	if (need > l->text_cap) {
		char *t = realloc(l->text, need);
		if (!t)
			return -ENOMEM;
		l->text = t;
		l->text_cap = need;
	}
	size_t n = gt_ring_str_text(&l->ring, l->text, need);
	uint32_t id = gt_store_intern(l->s, l->text, n);
	return map_set(&l->str, m->u.str.id, id);
}

/* the store rank of one rank this connection's producer publishes (one
 * process may publish several: sim --live --ranks N), decided at its first
 * definition: the producer's (RANK) or, when it said -1, the one given at
 * open; when another process already holds it (an autotune child
 * inheriting RANK, a second node also counting from 0), a rank after every
 * one in the store and at or above every world size known (world, this
 * process's, -1 unknown), so that no rank a process of the world has yet
 * to claim is taken.  Registered with its pid. */
static int32_t conn_rank(struct live *l, int32_t want, int32_t world)
{
	for (int i = 0; i < l->rank_n; i++)
		if (l->rank_want[i] == want)
			return l->rank_final[i];
	if (l->rank_n == LIVE_RANKS_MAX)
		return l->rank_final[LIVE_RANKS_MAX - 1];
	int32_t asked = want;
	if (want < 0)
		want = l->rank;
	int32_t max = world - 1;
	int clash = 0, mine = 0;
	for (size_t i = 0; i < gt_store_rank_count(l->s); i++) {
		const struct gt_rank *r = gt_store_rank_at(l->s, i);
		max = r->rank > max ? r->rank : max;
		max = r->world_size - 1 > max ? r->world_size - 1 : max;
		if (r->rank == want && r->pid != l->pid && r->pid != 0)
			clash = 1;
		if (r->rank == want && r->pid == l->pid)
			mine = 1;
	}
	/* a rank this connection already gave another producer rank */
	for (int i = 0; i < l->rank_n; i++)
		if (l->rank_final[i] == want)
			clash = 1, mine = 0;
	if (clash)
		want = max + 1;
	l->rank_want[l->rank_n] = asked;
	l->rank_final[l->rank_n++] = want;
	if (!mine || clash) {
		struct gt_rank r;
		memset(&r, 0, sizeof(r));
		for (size_t i = 0; i < gt_store_rank_count(l->s); i++)
			if (gt_store_rank_at(l->s, i)->rank == want)
				r = *gt_store_rank_at(l->s, i);
		r.rank = want;
		r.pid = l->pid;
		if (!r.world_size && !r.host)
			r.world_size = -1;
		gt_store_rank(l->s, &r);
	}
	return want;
}

static int def_lane(struct live *l, const struct gt_ring_rec *m)
{
	const struct gt_ring_lane_def *d = &m->u.lane;
	struct gt_lane_key k;
	memset(&k, 0, sizeof(k));
	k.type = d->type;
	k.rank = conn_rank(l, d->rank, -1);
	k.device = d->device;
	k.pid = d->pid;
	k.id = d->tid;
	uint32_t id = gt_store_lane(l->s, &k);
	if (id == UINT32_MAX)
		return -ENOMEM;
	uint32_t nm = map_str(l, d->name);
	if (nm != UINT32_MAX && nm != 0)
		gt_store_lane_set_name(l->s, id, gt_store_str(l->s, nm));
	return map_set(&l->lane, d->id, id);
}

/* a RANK or CLOCK record for store rank rk */
static void def_rank(struct live *l, int32_t rk, const struct gt_ring_rec *m)
{
	struct gt_rank r;
	memset(&r, 0, sizeof(r));
	r.rank = rk;
	r.pid = l->pid;
	r.world_size = -1;
	for (size_t i = 0; i < gt_store_rank_count(l->s); i++)
		if (gt_store_rank_at(l->s, i)->rank == rk)
			r = *gt_store_rank_at(l->s, i);
	if (m->type == GT_RING_REC_RANK) {
		r.world_size = m->u.rank.world_size;
		r.local_rank1 = m->u.rank.local_rank1;
		uint32_t h = map_str(l, m->u.rank.host);
		r.host = h == UINT32_MAX ? 0 : h;
	} else {
		r.clock_offset_ns = m->u.clock.offset_ns;
	}
	if (gt_store_rank(l->s, &r) < 0)
		l->bad++;
}

static void def_other(struct live *l, const struct gt_ring_rec *m)
{
	if (m->type == GT_RING_REC_KCONF) {
		uint32_t k = gt_store_kconf(l->s, &m->u.kconf.k);
		if (k == UINT32_MAX || map_set(&l->kconf, m->u.kconf.id, k) < 0)
			l->bad++;            /* the events using it will not map either */
	} else if (m->type == GT_RING_REC_NCCL) {
		struct gt_nccl n = m->u.nccl.n;
		n.collective = map_str(l, n.collective);
		n.dtype = map_str(l, n.dtype);
		n.pg_name = map_str(l, n.pg_name);
		if (n.collective == UINT32_MAX || n.dtype == UINT32_MAX || n.pg_name == UINT32_MAX) {
			l->bad++;
			return;
		}
		uint32_t id = gt_store_nccl(l->s, &n);
		if (id == UINT32_MAX || map_set(&l->nccl, m->u.nccl.id, id) < 0)
			l->bad++;
	} else if (m->type == GT_RING_REC_DEVICE) {
		struct gt_device d;
		memset(&d, 0, sizeof(d));
		d.rank = conn_rank(l, m->u.dev.rank, -1);
		d.id = m->u.dev.id;
		d.name = map_str(l, m->u.dev.name);
		if (d.name == UINT32_MAX)
			d.name = 0;
		d.sm_count = m->u.dev.sm_count;
		d.mem_bytes = m->u.dev.mem_bytes;
		d.cc_major = m->u.dev.cc_major;
		d.cc_minor = m->u.dev.cc_minor;
		if (gt_store_device(l->s, &d) < 0)
			l->bad++;
	} else if (m->type == GT_RING_REC_RANK) {
		def_rank(l, conn_rank(l, m->u.rank.rank, m->u.rank.world_size), m);
	} else if (m->type == GT_RING_REC_CLOCK) {
		/* the process's clock: every rank it publishes */
		if (!l->rank_n)
			conn_rank(l, -1, -1);
		for (int i = 0; i < l->rank_n; i++)
			def_rank(l, l->rank_final[i], m);
	}
}

/* map an event's producer ids; 0 or -ENOENT */
static int map_event(struct live *l, const struct gt_event *in, struct gt_event *out)
{
	*out = *in;
	out->name = map_str(l, in->name);
	out->lane = map_get(&l->lane, in->lane);
	if (out->name == UINT32_MAX || out->lane == UINT32_MAX)
		return -ENOENT;
	if (in->kind == GT_EV_KERNEL && in->arg) {
		uint32_t k = gt_event_kconf(in), n = gt_event_nccl(in);
		uint32_t mk = k ? map_get(&l->kconf, k) : 0;
		uint32_t mn = n ? map_get(&l->nccl, n) : 0;
		if (mk == UINT32_MAX || mn == UINT32_MAX)
			return -ENOENT;
		out->arg = (uint64_t)mk | ((uint64_t)mn << 32);
	}
	return 0;
}

static int flush_batch(struct live *l, live_events_fn fn, void *ctx)
{
	int rc = 0;
	if (l->batch_n && fn)
		rc = fn(ctx, l->s, l->batch, l->batch_n);
	l->batch_n = 0;
	return rc;
}

long live_poll(struct live *l, size_t max_events, live_events_fn on_events, void *ctx)
{
	if (!l->ring.hdr)
		return 0;
	int hit = mapguard_hit(l->guard - 1);
	if (hit && !l->done) {
		l->done = 1;
		snprintf(l->reason, sizeof(l->reason), "the capture ring's memory failed (SIGBUS): ended");
	}
	if (hit)
		return 0;              /* the ring reads zeros from the fault on */
	check_ctl(l);
	if (!l->batch) {
		l->batch_cap = 4096;
		l->batch = malloc(l->batch_cap * sizeof(*l->batch));
		if (!l->batch)
			return -ENOMEM;
	}
	uint32_t st = atomic_load_explicit(&l->ring.hdr->state, memory_order_acquire);
	long added = 0;
	uint32_t n;
	const struct gt_ring_rec *m;
	/* bounded in records (one lap of the ring, whatever their type) and
	 * in time: a producer cannot keep the caller here */
	uint64_t budget = l->ring.mask + 1, seen = 0;
	int64_t t0 = mono_ns();
	while ((size_t)added < max_events && seen < budget && (m = gt_ring_peek(&l->ring, &n))) {
		seen += n;
		if ((seen & 1023) < n && mono_ns() - t0 > LIVE_POLL_MAX_NS)
			budget = 0;            /* this record is the last of this poll */
		if (m->type == GT_RING_REC_EVENT) {
			struct gt_event e;
			if (map_event(l, &m->u.ev, &e) == 0 && !gt_evcheck_event(&e) &&
			    gt_store_add(l->s, &e) == 0) {
				l->batch[l->batch_n++] = e;
				added++;
				if (l->batch_n == l->batch_cap) {
					int rc = flush_batch(l, on_events, ctx);
					if (rc < 0) {
						gt_ring_release(&l->ring, n);
						return rc;
					}
				}
			} else {
				l->bad++;
			}
		} else if (m->type == GT_RING_REC_STR) {
			if (def_string(l, m) < 0)
				l->bad++;
		} else if (m->type == GT_RING_REC_LANE) {
			if (def_lane(l, m) < 0)
				l->bad++;
		} else if (m->type == GT_RING_REC_NONE) {
			l->bad++;
		} else {
			def_other(l, m);
		}
		gt_ring_release(&l->ring, n);
	}
	l->events += (uint64_t)added;
	int rc = flush_batch(l, on_events, ctx);
	if (rc < 0)
		return rc;
	if (l->ring.corrupt && !l->done) {
		l->bad++;
		snprintf(l->reason, sizeof(l->reason), "capture ring corrupt: head %llu is not within "
			 "%llu records of tail %llu; capture of process %d ended",
			 (unsigned long long)l->ring.bad_head, (unsigned long long)(l->ring.mask + 1),
			 (unsigned long long)l->ring.c_tail, (int)l->pid);
		l->done = 1;
		return added;
	}
	/* finished once the producer stopped (state read before draining) or
	 * the target exited, and everything it wrote is in */
	if (st == GT_RING_ST_ENDED && !l->ended[0])
		snprintf(l->ended, sizeof(l->ended), "%s", l->ring.hdr->reason);
	if ((st == GT_RING_ST_STOPPED || st == GT_RING_ST_ENDED || l->gone) &&
	    gt_ring_readable(&l->ring) == 0) {
		if (!l->done && !l->reason[0])
			snprintf(l->reason, sizeof(l->reason), "%s", l->ring.hdr->reason);
		l->done = 1;
	}
	return added;
}

void live_drops(const struct live *l, struct gt_drops *d)
{
	memset(d, 0, sizeof(*d));
	if (!l->ring.hdr)
		return;
	struct gt_ring_hdr *h = l->ring.hdr;
	d->cupti_dropped = atomic_load(&h->cupti_dropped);
	d->buffers_declined = atomic_load(&h->buffers_declined);
	d->zero_timestamps = atomic_load(&h->zero_timestamps);
	d->ring_overflow = atomic_load(&h->ring_overflow);
	d->import_skipped = l->bad;
	d->read_errors = atomic_load(&h->read_errors);
	d->client_buffers = atomic_load(&h->client_buffers);
}

const char *live_state(const struct live *l)
{
	if (l->gone)
		return "target-exited";
	if (!l->ring.hdr)
		return "detached";
	switch (atomic_load(&l->ring.hdr->state)) {
	case GT_RING_ST_ENDED: return "ended";
	case GT_RING_ST_STOPPED: return "stopped";
	default: return "capturing";
	}
}

void live_stop_capture(struct live *l)
{
	if (l->ctl_fd >= 0) {
		char reply[GT_CTL_LINE_MAX];
		gt_ctl_request(l->ctl_fd, "stop", reply, sizeof(reply), NULL, 3000);
	}
}

void live_detach(struct live *l)
{
	if (l->ctl_fd >= 0) {
		char reply[GT_CTL_LINE_MAX];
		gt_ctl_request(l->ctl_fd, "detach", reply, sizeof(reply), NULL, 2000);
		close(l->ctl_fd);
		l->ctl_fd = -1;
	}
}

void live_close(struct live *l)
{
	if (l->ctl_fd >= 0) {
		char reply[GT_CTL_LINE_MAX];
		gt_ctl_request(l->ctl_fd, "detach", reply, sizeof(reply), NULL, 2000);
		close(l->ctl_fd);
		l->ctl_fd = -1;
	}
	mapguard_end(l->guard - 1);
	l->guard = 0;
	if (l->ring.hdr)
		gt_ring_unmap(&l->ring);
	map_free(&l->str);
	map_free(&l->lane);
	map_free(&l->kconf);
	map_free(&l->nccl);
	free(l->text);
	free(l->batch);
	l->text = NULL;
	l->batch = NULL;
}
