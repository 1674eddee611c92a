/*
 * gtjob.c - several nodes' .gtrace streams merged into one store
 * (include/gtrace/gtjob.h): per node a gtstream decoding into a store of
 * its own, and dense maps from that store's ids (strings, lanes, kconf,
 * nccl: the writer's ids, 0..n-1) to the job store's.  After each feed the
 * tables that grew are copied, ranks and devices (whole tables) re-applied
 * with the node's rank map, and the events taken out of the node store's
 * lanes (which are then emptied: a node holds no events of its own).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gtjob_priv.h"
#include "gtrace/mem_lane.h"

struct gt_job *gt_job_new(struct gt_store *s)
{
	struct gt_job *j = calloc(1, sizeof(*j));
	if (j)
		j->s = s;
	return j;
}

static void node_free(struct gt_job_node *n)
{
	gt_stream_free(n->st);
	gt_store_free(n->ns);
	free(n->str);
	free(n->lane);
	free(n->lane_name);
	free(n->kconf);
	free(n->nccl);
	free(n->batch);
	free(n);
}

void gt_job_free(struct gt_job *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++)
		node_free(j->node[i]);
	free(j);
}

/* word i (0-based) of s into w; 0 or -1 past the last */
static int word(const char *s, int i, char *w, size_t len)
{
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return -1;
		size_t n = strcspn(s, " \t");
		if (i-- == 0) {
			snprintf(w, len, "%.*s", (int)(n < len ? n : len - 1), s);
			return 0;
		}
		s += n;
	}
}

void gt_job_short_name(const char *cmd, char *out, size_t len)
{
	char w[128], b[128];
	int i = 0;
	snprintf(out, len, "%s", cmd);
	/* VAR=value words before the command; GTRACE_HOSTNAME names the host */
	while (word(cmd, i, w, sizeof(w)) == 0 && strchr(w, '=') && w[0] != '-' && w[0] != '=') {
		if (!strncmp(w, "GTRACE_HOSTNAME=", 16) && w[16]) {
			snprintf(out, len, "%s", w + 16);
			return;
		}
		i++;
	}
	if (word(cmd, i, w, sizeof(w)) < 0)
		return;
	const char *base = strrchr(w, '/') ? strrchr(w, '/') + 1 : w;
	snprintf(out, len, "%s", base);
	int ssh = !strcmp(base, "ssh"), srun = !strcmp(base, "srun");
	if (!ssh && !srun)
		return;
	/* ssh [-opts] [user@]HOST ...; srun ... -w HOST | --nodelist=HOST */
	for (i++; word(cmd, i, b, sizeof(b)) == 0; i++) {
		if (srun && !strncmp(b, "--nodelist=", 11)) {
			snprintf(out, len, "%s", b + 11);
			return;
		}
		if (srun && (!strcmp(b, "-w") || !strcmp(b, "--nodelist"))) {
			if (word(cmd, i + 1, b, sizeof(b)) == 0)
				snprintf(out, len, "%s", b);
			return;
		}
		if (ssh && b[0] == '-') {
			/* the options that take a value */
			if (b[1] && !b[2] && strchr("BbcDEeFIiJLlmOoPpQRSWw", b[1]))
				i++;
			continue;
		}
		if (ssh) {
			const char *at = strrchr(b, '@');
			snprintf(out, len, "%s", at ? at + 1 : b);
			return;
		}
	}
}

int gt_job_add_node(struct gt_job *j, const char *label)
{
	if (j->n == GT_JOB_MAX_NODES)
		return -ENOSPC;
	struct gt_job_node *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	snprintf(n->label, sizeof(n->label), "%s", label);
	gt_job_short_name(label, n->host, sizeof(n->host));
	n->ns = gt_store_new();
	/* messages name the node by its label, a long command cut short */
	snprintf(n->name, sizeof(n->name), "%.56s%s", label, strlen(label) > 56 ? "..." : "");
	n->st = n->ns ? gt_stream_new(n->name, n->ns) : NULL;
	n->batch = malloc(GTJOB_BATCH * sizeof(*n->batch));
	n->clock_synced = -1;
	n->clock_maxerror_us = n->clock_esterror_us = -1;
	if (!n->st || !n->batch) {
		node_free(n);
		return -ENOMEM;
	}
	j->node[j->n] = n;
	return (int)j->n++;
}

size_t gt_job_count(const struct gt_job *j)
{
	return j->n;
}

/* grow a dense id map to hold n entries; 0 or -ENOMEM */
static int map_grow(uint32_t **m, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 256;
	while (nc < n)
		nc *= 2;
	uint32_t *p = realloc(*m, nc * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*m = p;
	*cap = nc;
	return 0;
}

/* the job's rank for the node's rank r (decided once per node rank) */
static int32_t rank_of(struct gt_job *j, struct gt_job_node *n, int32_t r)
{
	for (int i = 0; i < n->n_ranks; i++)
		if (n->rk_from[i] == r)
			return n->rk_to[i];
	int32_t to = r, max = -1;
	const struct gt_job_node *owner = NULL;
	for (size_t k = 0; k < j->n; k++) {
		const struct gt_job_node *o = j->node[k];
		for (int i = 0; i < o->n_ranks; i++) {
			max = o->rk_to[i] > max ? o->rk_to[i] : max;
			if (o->rk_to[i] == r && o != n)
				owner = o;
		}
	}
	for (size_t i = 0; i < gt_store_rank_count(j->s); i++) {
		const struct gt_rank *x = gt_store_rank_at(j->s, i);
		max = x->rank > max ? x->rank : max;
		max = x->world_size - 1 > max ? x->world_size - 1 : max;
	}
	if (owner) {
		to = max + 1;
		if (!n->msg[0])   /* a stream's error, said first, stays */
			snprintf(n->msg, sizeof(n->msg), "rank %d is also on %s: shown as rank %d",
				 (int)r, owner->host, (int)to);
	}
	if (n->n_ranks < GTJOB_MAX_RANKS) {
		n->rk_from[n->n_ranks] = r;
		n->rk_to[n->n_ranks++] = to;
	}
	return to;
}

static uint32_t mstr(const struct gt_job_node *n, uint32_t id)
{
	return id < n->n_str ? n->str[id] : 0;
}

/* the node's metadata that describes it (gt_job_stamp's keys) */
static void node_meta(struct gt_job_node *n)
{
	const char *v = gt_store_meta_get(n->ns, "node.host");
	if (v && *v)
		snprintf(n->host, sizeof(n->host), "%s", v);
	if ((v = gt_store_meta_get(n->ns, "node.clock.synced")))
		n->clock_synced = atoi(v);
	if ((v = gt_store_meta_get(n->ns, "node.clock.maxerror_us")))
		n->clock_maxerror_us = atoll(v);
	if ((v = gt_store_meta_get(n->ns, "node.clock.esterror_us")))
		n->clock_esterror_us = atoll(v);
}

/* tables of the node's store that grew or changed, into the job's */
static int sync_tables(struct gt_job *j, struct gt_job_node *n)
{
	struct gt_store *ns = n->ns, *s = j->s;
	size_t c = gt_store_str_count(ns);
	if (map_grow(&n->str, &n->cap_str, c))
		return -ENOMEM;
	for (; n->n_str < c; n->n_str++) {
		const char *t = gt_store_str(ns, (uint32_t)n->n_str);
		uint32_t id = gt_store_intern(s, t, strlen(t));
		if (id == UINT32_MAX)
			return -ENOMEM;
		n->str[n->n_str] = id;
	}
	if (gt_store_meta_count(ns) != n->n_meta) {
		n->n_meta = gt_store_meta_count(ns);
		node_meta(n);
	}
	uint32_t host = gt_store_intern_cstr(s, n->host);
	c = gt_store_kconf_count(ns);
	if (map_grow(&n->kconf, &n->cap_kconf, c + 1))
		return -ENOMEM;
	for (; n->n_kconf < c; n->n_kconf++) {
		uint32_t id = (uint32_t)n->n_kconf + 1;   /* kconf ids start at 1 */
		n->kconf[id] = gt_store_kconf(s, gt_store_kconf_at(ns, id));
	}
	c = gt_store_nccl_count(ns);
	if (map_grow(&n->nccl, &n->cap_nccl, c + 1))
		return -ENOMEM;
	for (; n->n_nccl < c; n->n_nccl++) {
		uint32_t id = (uint32_t)n->n_nccl + 1;
		struct gt_nccl x = *gt_store_nccl_at(ns, id);
		x.collective = mstr(n, x.collective);
		x.dtype = mstr(n, x.dtype);
		x.pg_name = mstr(n, x.pg_name);
		n->nccl[id] = gt_store_nccl(s, &x);
	}
	for (size_t i = 0; i < gt_store_rank_count(ns); i++) {
		struct gt_rank r = *gt_store_rank_at(ns, i);
		r.rank = rank_of(j, n, r.rank);
		r.host = r.host ? mstr(n, r.host) : host;
		r.source = mstr(n, r.source);
		if (gt_store_rank(s, &r))
			return -ENOMEM;
	}
	for (size_t i = 0; i < gt_store_device_count(ns); i++) {
		struct gt_device d = *gt_store_device_at(ns, i);
		d.rank = rank_of(j, n, d.rank);
		d.name = mstr(n, d.name);
		if (gt_store_device(s, &d))
			return -ENOMEM;
	}
	c = gt_store_lane_count(ns);
	if (map_grow(&n->lane, &n->cap_lane, c) || map_grow(&n->lane_name, &n->cap_lane_name, c))
		return -ENOMEM;
	for (size_t i = 0; i < c; i++) {
		const struct gt_lane *l = gt_store_lane_at(ns, (uint32_t)i);
		if (i >= n->n_lane) {
			struct gt_lane_key k = l->key;
			k.rank = rank_of(j, n, k.rank);
			uint32_t id = gt_store_lane(s, &k);
			if (id == UINT32_MAX)
				return -ENOMEM;
			n->lane[i] = id;
			n->lane_name[i] = 0;
			/* a rank that only has lanes still gets its host */
			int known = 0;
			for (size_t r = 0; r < gt_store_rank_count(s); r++)
				known |= gt_store_rank_at(s, r)->rank == k.rank;
			if (!known) {
				struct gt_rank r = { .rank = k.rank, .pid = k.pid, .host = host,
						     .world_size = -1 };
				if (gt_store_rank(s, &r))
					return -ENOMEM;
			}
		}
		if (l->name != n->lane_name[i]) {
			n->lane_name[i] = l->name;
			gt_store_lane_set_name(s, n->lane[i], gt_store_str(ns, l->name));
			gt_store_lane_at(s, n->lane[i])->sort_index = l->sort_index;
		}
	}
	n->n_lane = c;
	return 0;
}

static int flush(struct gt_job_node *n, struct gt_store *s, gt_job_events_fn fn, void *ctx)
{
	int rc = n->nb && fn ? fn(ctx, s, n->batch, n->nb) : 0;
	n->nb = 0;
	return rc;
}

/* the node store's events into the job's; events added or negative errno */
static long sync_events(struct gt_job *j, struct gt_job_node *n, gt_job_events_fn fn, void *ctx)
{
	long added = 0;
	for (size_t li = 0; li < n->n_lane; li++) {
		struct gt_lane *l = gt_store_lane_at(n->ns, (uint32_t)li);
		for (size_t k = 0; k < l->n; k++) {
			struct gt_event e = l->ev[k];
			e.lane = n->lane[li];
			e.name = mstr(n, e.name);
			e.start_ns += n->applied_ns;
			if (e.kind == GT_EV_KERNEL && e.arg) {
				uint32_t kc = gt_event_kconf(&e), nc = gt_event_nccl(&e);
				/* id 0 is "none" (never in the maps) */
				kc = kc && kc <= n->n_kconf ? n->kconf[kc] : 0;
				nc = nc && nc <= n->n_nccl ? n->nccl[nc] : 0;
				e.arg = (uint64_t)kc | (uint64_t)nc << 32;
			}
			if (gt_store_add(j->s, &e))
				return -ENOMEM;
			n->batch[n->nb++] = e;
			added++;
			if (n->nb == GTJOB_BATCH) {
				int rc = flush(n, j->s, fn, ctx);
				if (rc < 0)
					return rc;
			}
		}
		l->n = 0;   /* taken: the node keeps no events */
	}
	int rc = flush(n, j->s, fn, ctx);
	n->events += (uint64_t)added;
	return rc < 0 ? rc : added;
}

long gt_job_feed(struct gt_job *j, int i, const void *buf, size_t len, gt_job_events_fn fn, void *ctx)
{
	struct gt_job_node *n = j->node[i];
	if (n->ended)
		return 0;
	n->bytes += len;
	long r = gt_stream_feed(n->st, buf, len, n->msg, sizeof(n->msg));
	/* what decoded before a bad chunk is kept */
	int rc = sync_tables(j, n);
	if (rc < 0)
		return rc;
	long added = sync_events(j, n, fn, ctx);
	if (added < 0)
		return added;
	if (r < 0) {
		n->ended = 1;
		return -EINVAL;
	}
	return added;
}

void gt_job_close(struct gt_job *j, int i)
{
	struct gt_job_node *n = j->node[i];
	if (n->ended)
		return;
	n->ended = 1;
	char m[256];
	if (gt_stream_close(n->st, m, sizeof(m)) != 0)
		snprintf(n->msg, sizeof(n->msg), "%s", m);
}

void gt_job_set_host(struct gt_job *j, int i, const char *host)
{
	if (i >= 0 && (size_t)i < j->n && host && host[0])
		snprintf(j->node[i]->host, sizeof(j->node[i]->host), "%s", host);
}

void gt_job_node(const struct gt_job *j, int i, struct gt_job_node_info *o)
{
	const struct gt_job_node *n = j->node[i];
	struct gt_stream_info si;
	gt_stream_info(n->st, &si);
	memset(o, 0, sizeof(*o));
	o->label = n->label;
	o->name = n->name;
	o->host = n->host;
	o->state = si.state;
	o->bytes = n->bytes;
	o->events = n->events;
	o->msg = n->msg;
	o->clock_synced = n->clock_synced;
	o->clock_maxerror_us = n->clock_maxerror_us;
	o->clock_esterror_us = n->clock_esterror_us;
	o->have_residual = n->have_residual;
	o->residual_ns = n->residual_ns;
	o->spread_ns = n->spread_ns;
	o->coll_dur_ns = n->coll_dur_ns;
	o->matches = n->matches;
	o->applied_ns = n->applied_ns;
	o->reference = n->reference;
	o->mem_lane = gt_store_meta_get(n->ns, GT_MEM_LANE_META);
}

void gt_job_drops(struct gt_job *j)
{
	struct gt_drops sum;
	memset(&sum, 0, sizeof(sum));
	for (size_t i = 0; i < j->n; i++) {
		const struct gt_drops *d = gt_store_drops(j->node[i]->ns);
		sum.cupti_dropped += d->cupti_dropped;
		sum.buffers_declined += d->buffers_declined;
		sum.zero_timestamps += d->zero_timestamps;
		sum.ring_overflow += d->ring_overflow;
		sum.import_skipped += d->import_skipped;
	}
	*gt_store_drops(j->s) = sum;
}

/* one file's bytes as node i */
static int feed_file(struct gt_job *j, int i, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	void *p = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (p == MAP_FAILED) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	long r = st.st_size ? gt_job_feed(j, i, p, (size_t)st.st_size, NULL, NULL) : 0;
	if (p)
		munmap(p, (size_t)st.st_size);
	if (r == -ENOMEM) {
		snprintf(err, errlen, "%s: out of memory", path);
		return (int)r;
	}
	gt_job_close(j, i);
	struct gt_job_node_info in;
	gt_job_node(j, i, &in);
	if (in.state == GT_STREAM_ERROR) {
		snprintf(err, errlen, "%s", in.msg);
		return -EINVAL;
	}
	return 0;
}

/* the gap (ns) between the latest rank start and the earliest rank end
 * when some ranks never ran together (captures taken at different times:
 * separate runs, not nodes of one job); 0 when all overlap, -1 out of memory */
static int64_t ranks_apart_ns(const struct gt_store *s)
{
	size_t nr = gt_store_rank_count(s);
	if (nr < 2)
		return 0;
	int64_t *lo = malloc(nr * sizeof(*lo)), *hi = malloc(nr * sizeof(*hi));
	if (!lo || !hi) {
		free(lo);
		free(hi);
		return -1;
	}
	for (size_t i = 0; i < nr; i++) {
		lo[i] = INT64_MAX;
		hi[i] = INT64_MIN;
	}
	for (size_t l = 0; l < gt_store_lane_count(s); l++) {
		const struct gt_lane *ln = gt_store_lane_at(s, (uint32_t)l);
		for (size_t i = 0; i < nr && ln->n; i++)
			if (gt_store_rank_at(s, i)->rank == ln->key.rank) {
				int64_t a = ln->ev[0].start_ns, b = gt_event_end(&ln->ev[ln->n - 1]);
				lo[i] = a < lo[i] ? a : lo[i];
				hi[i] = b > hi[i] ? b : hi[i];
			}
	}
	int64_t max_lo = INT64_MIN, min_hi = INT64_MAX;
	for (size_t i = 0; i < nr; i++)
		if (lo[i] <= hi[i]) {
			max_lo = lo[i] > max_lo ? lo[i] : max_lo;
			min_hi = hi[i] < min_hi ? hi[i] : min_hi;
		}
	free(lo);
	free(hi);
	return max_lo != INT64_MIN && max_lo > min_hi ? max_lo - min_hi : 0;
}

int gt_job_load_files(const char *const *paths, size_t n, struct gt_store *s, int apply_clock,
		     char *warn, size_t warnlen, char *err, size_t errlen)
{
	warn[0] = 0;
	struct gt_job *j = gt_job_new(s);
	if (!j) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		int k = gt_job_add_node(j, paths[i]);
		rc = k < 0 ? k : feed_file(j, k, paths[i], err, errlen);
		if (k < 0)
			snprintf(err, errlen, "%s: %s", paths[i], strerror(-k));
		struct gt_job_node_info in;
		if (!rc && (gt_job_node(j, k, &in), in.state == GT_STREAM_CUT) && !warn[0])
			snprintf(warn, warnlen, "%s", in.msg);
	}
	if (!rc && gt_store_finish(s))
		rc = -ENOMEM;
	if (!rc) {
		gt_job_drops(j);
		gt_job_align(j);
		if (apply_clock && gt_job_apply(j) < 0)
			rc = -ENOMEM;
		gt_job_meta(j);
		/* captures that never ran together are separate runs (as for
		   trace JSON files, import.mixed_runs): aligned, compared, no
		   straggler across them */
		int64_t gap = ranks_apart_ns(s);
		if (gap < 0 || (gap > 0 && gt_store_meta_set(s, "import.mixed_runs", "no overlap")))
			rc = -ENOMEM;
		else if (gap > 0 && !warn[0])
			snprintf(warn, warnlen, "%s: the captures do not overlap in time (%.1f s apart): "
				 "treated as separate runs, not nodes of one job", paths[0], (double)gap / 1e9);
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	gt_job_free(j);
	return rc;
}
