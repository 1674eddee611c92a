/*
 * summary_report.c - the "summary" report: what the trace holds.  Tables:
 * the summary record (span, counts), events by kind, devices, ranks, lanes (streams
 * and threads), drops (every struct gt_drops counter) and metadata.
 * Event counts follow the scope (events starting in the range, lanes
 * passing the GPU/rank filters); devices, ranks, drops and metadata do not.
 */
#include <errno.h>
#include <stdio.h>
#include "reports.h"
#include "gtrace/steps.h"
#include "tables.h"

static int lanes_and_kinds(const struct gt_store *s, const struct gt_scope *sc,
			   struct gt_report_out *out, uint64_t *nev, size_t *ngpu_lanes,
			   size_t *nhost_lanes)
{
	static const char *const kcols[] = { "Kind", "Events:i", "Total Time (ns):i", NULL };
	static const char *const lcols[] = {
		"Rank:i", "Type", "GPU:i", "PID:k", "ID:k", "Events:i", "Busy (ns):i", "Name", NULL
	};
	uint64_t cnt[GT_EV_KIND_COUNT] = { 0 };
	int64_t dur[GT_EV_KIND_COUNT] = { 0 };
	struct gt_table *kt = tables_new("summary_kinds", "Events by kind", kcols);
	struct gt_table *lt = tables_new("summary_lanes", "Lanes (GPU streams, host threads)", lcols);
	if (!kt || !lt)
		goto nomem;
	*nev = 0;
	*ngpu_lanes = *nhost_lanes = 0;
	for (uint32_t li = 0; li < gt_store_lane_count(s); li++) {
		const struct gt_lane *l = gt_store_lane_at(s, li);
		if (!gt_kernel_stats_lane_in_scope(l, sc))
			continue;
		size_t first, last;
		gt_kernel_stats_lane_starts(l, sc->t0_ns, sc->t1_ns, &first, &last);
		for (size_t i = first; i < last; i++) {
			gt_store_read_walk(s, l, first, i, last);
			unsigned k = l->ev[i].kind < GT_EV_KIND_COUNT ? l->ev[i].kind : 0;
			cnt[k]++;
			dur[k] += l->ev[i].dur_ns;
		}
		*nev += last - first;
		long r = gt_table_row(lt);
		if (r < 0)
			goto nomem;
		size_t w = (size_t)r;
		int gpu = l->key.type == GT_LANE_GPU;
		/* streams only: annotation and synchronization lanes (pid < 0)
		 * are no stream (as in gputime) */
		*ngpu_lanes += gpu && l->key.pid >= 0 && l->key.id >= 0;
		*nhost_lanes += l->key.type == GT_LANE_HOST;
		gt_table_set_int(lt, w, 0, l->key.rank);
		if (gt_table_set_str(lt, w, 1, gpu ? "stream" : l->key.type == GT_LANE_HOST ?
				     "thread" : "counter"))
			goto nomem;
		if (l->key.device >= 0)
			gt_table_set_int(lt, w, 2, l->key.device);
		if (l->key.pid)
			gt_table_set_int(lt, w, 3, l->key.pid);
		gt_table_set_int(lt, w, 4, l->key.id);
		gt_table_set_int(lt, w, 5, (int64_t)(last - first));
		if (sc->t0_ns == INT64_MIN && sc->t1_ns == INT64_MAX)
			gt_table_set_int(lt, w, 6, l->busy_total_ns);
		else
			gt_table_set_int(lt, w, 6, gt_store_lane_busy(l, sc->t0_ns, sc->t1_ns));
		if (l->name && gt_table_set_str(lt, w, 7, gt_store_str(s, l->name)))
			goto nomem;
	}
	for (int k = 1; k < GT_EV_KIND_COUNT; k++) {
		if (!cnt[k])
			continue;
		long r = gt_table_row(kt);
		if (r < 0 || gt_table_set_str(kt, (size_t)r, 0, gt_ev_kind_name(k)))
			goto nomem;
		gt_table_set_int(kt, (size_t)r, 1, (int64_t)cnt[k]);
		gt_table_set_int(kt, (size_t)r, 2, dur[k]);
	}
	if (gt_report_out_add(out, kt)) {
		gt_table_free(lt);
		return -ENOMEM;
	}
	return gt_report_out_add(out, lt);
nomem:
	gt_table_free(kt);
	gt_table_free(lt);
	return -ENOMEM;
}

static int devices_ranks(const struct gt_store *s, struct gt_report_out *out)
{
	static const char *const dcols[] = {
		"Rank:i", "GPU:i", "SMs:i", "Memory (bytes):i", "Compute Capability", "Name", NULL
	};
	static const char *const rcols[] = {
		"Rank:i", "PID:k", "World Size:i", "Clock Offset (ns):i", "Host", "Source", NULL
	};
	struct gt_table *dt = tables_new("summary_devices", "Devices", dcols);
	struct gt_table *rt = tables_new("summary_ranks", "Ranks", rcols);
	if (!dt || !rt)
		goto nomem;
	for (size_t i = 0; i < gt_store_device_count(s); i++) {
		const struct gt_device *d = gt_store_device_at(s, i);
		long r = gt_table_row(dt);
		if (r < 0)
			goto nomem;
		size_t w = (size_t)r;
		gt_table_set_int(dt, w, 0, d->rank);
		gt_table_set_int(dt, w, 1, d->id);
		if (d->sm_count)
			gt_table_set_int(dt, w, 2, d->sm_count);
		if (d->mem_bytes)
			gt_table_set_int(dt, w, 3, (int64_t)d->mem_bytes);
		char cc[32];
		snprintf(cc, sizeof(cc), "%u.%u", d->cc_major, d->cc_minor);
		if ((d->cc_major && gt_table_set_str(dt, w, 4, cc)) ||
		    (d->name && gt_table_set_str(dt, w, 5, gt_store_str(s, d->name))))
			goto nomem;
	}
	for (size_t i = 0; i < gt_store_rank_count(s); i++) {
		const struct gt_rank *k = gt_store_rank_at(s, i);
		long r = gt_table_row(rt);
		if (r < 0)
			goto nomem;
		size_t w = (size_t)r;
		gt_table_set_int(rt, w, 0, k->rank);
		if (k->pid > 0)
			gt_table_set_int(rt, w, 1, k->pid);
		if (k->world_size > 0)
			gt_table_set_int(rt, w, 2, k->world_size);
		gt_table_set_int(rt, w, 3, k->clock_offset_ns);
		if ((k->host && gt_table_set_str(rt, w, 4, gt_store_str(s, k->host))) ||
		    (k->source && gt_table_set_str(rt, w, 5, gt_store_str(s, k->source))))
			goto nomem;
	}
	if (gt_report_out_add(out, dt)) {
		gt_table_free(rt);
		return -ENOMEM;
	}
	return gt_report_out_add(out, rt);
nomem:
	gt_table_free(dt);
	gt_table_free(rt);
	return -ENOMEM;
}

static int drops_meta(const struct gt_store *s, struct gt_report_out *out)
{
	static const char *const dcols[] = { "Counter", "Count:i", NULL };
	static const char *const mcols[] = { "Key", "Value", NULL };
	struct gt_table *dt = tables_new("summary_drops", "Losses reported by the capture", dcols);
	struct gt_table *mt = tables_new("summary_metadata", "Metadata", mcols);
	if (!dt || !mt)
		goto nomem;
	/* gt_store_drops takes a mutable store; only read here */
	const struct gt_drops *d = gt_store_drops((struct gt_store *)s);
	const struct { const char *name; uint64_t v; } rows[] = {
		{ "cupti_dropped", d->cupti_dropped },
		{ "buffers_declined", d->buffers_declined },
		{ "zero_timestamps", d->zero_timestamps },
		{ "ring_overflow", d->ring_overflow },
		{ "import_skipped", d->import_skipped },
		{ "read_errors", d->read_errors },
		{ "client_buffers", d->client_buffers },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		long r = gt_table_row(dt);
		if (r < 0 || gt_table_set_str(dt, (size_t)r, 0, rows[i].name))
			goto nomem;
		gt_table_set_int(dt, (size_t)r, 1, (int64_t)rows[i].v);
	}
	for (size_t i = 0; i < gt_store_meta_count(s); i++) {
		const char *k, *v;
		if (gt_store_meta_at(s, i, &k, &v))
			continue;
		long r = gt_table_row(mt);
		if (r < 0 || gt_table_set_str(mt, (size_t)r, 0, k) || gt_table_set_str(mt, (size_t)r, 1, v))
			goto nomem;
	}
	if (gt_report_out_add(out, dt)) {
		gt_table_free(mt);
		return -ENOMEM;
	}
	return gt_report_out_add(out, mt);
nomem:
	gt_table_free(dt);
	gt_table_free(mt);
	return -ENOMEM;
}

static int summary_run(const struct gt_store *s, const struct gt_scope *sc_in,
		       struct gt_report_out *out, char *err, size_t errlen)
{
	struct gt_scope scope;
	if (gt_steps_scope(s, sc_in, &scope, err, errlen))
		return -ENOENT;
	const struct gt_scope *sc = &scope;
	/* one record of figures, numbers as numbers (text mode prints it as
	   "Column  Value" lines) */
	static const char *const cols[] = {
		"Events:i", "Events in the trace:i", "First start (ns):i", "Last end (ns):i",
		"Span (s):f:6", "Ranks:i", "Devices:i", "GPU streams:i", "Host threads:i",
		"Strings:i", NULL
	};
	struct gt_table *t = tables_new("summary", "Trace summary", cols);
	if (!t || gt_report_out_add(out, t))
		goto nomem;
	t->flags |= GT_TABLE_RECORD;
	uint64_t nev;
	size_t ngl, nhl;
	long row = gt_table_row(t);
	if (row < 0 || lanes_and_kinds(s, sc, out, &nev, &ngl, &nhl) || devices_ranks(s, out) ||
	    drops_meta(s, out))
		goto nomem;
	int64_t a = gt_store_t_min(s), b = gt_store_t_max(s);
	size_t w = (size_t)row;
	gt_table_set_int(t, w, 0, (int64_t)nev);
	gt_table_set_int(t, w, 1, (int64_t)gt_store_event_count(s));
	if (gt_store_event_count(s)) {     /* an empty trace has no start: n/a */
		gt_table_set_int(t, w, 2, a);
		gt_table_set_int(t, w, 3, b);
		gt_table_set_float(t, w, 4, (double)(b - a) / 1e9);
	}
	gt_table_set_int(t, w, 5, (int64_t)gt_store_rank_count(s));
	gt_table_set_int(t, w, 6, (int64_t)gt_store_device_count(s));
	gt_table_set_int(t, w, 7, (int64_t)ngl);
	gt_table_set_int(t, w, 8, (int64_t)nhl);
	gt_table_set_int(t, w, 9, (int64_t)gt_store_str_count(s));
	if (tables_scope_note(t, s, sc))
		goto nomem;
	return 0;
nomem:
	snprintf(err, errlen, "summary: out of memory");
	return -ENOMEM;
}

const struct gt_report gt_report_summary = {
	.name = "summary",
	.help = "what the trace holds: span, events by kind, devices, ranks, streams and "
		"threads, capture losses, metadata",
	.run = summary_run,
};
