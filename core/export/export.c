/*
 * export.c - a store as Chrome trace JSON (gtrace/export.h).
 *
 * Lanes are grouped into Chrome processes by (type, rank, device, pid);
 * a group's Chrome pid is its natural number (GPU: device ordinal, host:
 * OS pid) when no other group took it, else a synthetic one from 2^28 up.
 * A lane's Chrome tid is its key id (stream or OS thread id).  Each lane
 * gets thread_name / thread_sort_index and a "gtrace_lane" M event with
 * its exact key, so an import of the output restores lanes exactly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export_writer.h"
#include "gtrace/export.h"
#include "gtrace/mem_lane.h"

#define SYNTH_PID (1LL << 28)

struct group {
	struct gt_lane_key k;      /* type, rank, device, pid (id unused) */
	int64_t cpid;
};

static int same_group(const struct gt_lane_key *a, const struct gt_lane_key *b)
{
	return a->type == b->type && a->rank == b->rank && a->device == b->device && a->pid == b->pid;
}

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static uint64_t key_hash(const struct gt_lane_key *k)
{
	return mix64((uint64_t)k->pid * 31 + (uint64_t)(uint32_t)k->device * 0x9E3779B97F4A7C15ull +
		     ((uint64_t)(uint32_t)k->rank << 8) + k->type);
}

/* group index of every lane and a Chrome pid per group; linear in lanes
 * (hash tables: the pairwise scans took 6.5 s for 80k pids) */
static int make_groups(const struct gt_store *s, struct group **gout, size_t *ng, uint32_t *lane_g)
{
	size_t nl = gt_store_lane_count(s), n = 0, cap = 64;
	while (cap < 2 * nl)
		cap *= 2;
	struct group *g = calloc(nl ? nl : 1, sizeof(*g));
	uint32_t *slot = calloc(cap, sizeof(*slot));     /* group index + 1, 0 = free */
	int64_t *taken = malloc(cap * sizeof(*taken));    /* natural cpids given out */
	uint8_t *tused = calloc(cap, 1);
	if (!g || !slot || !taken || !tused) {
		free(g);
		free(slot);
		free(taken);
		free(tused);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nl; i++) {
		const struct gt_lane_key *k = &gt_store_lane_at(s, (uint32_t)i)->key;
		size_t j = (size_t)key_hash(k) & (cap - 1);
		while (slot[j] && !same_group(&g[slot[j] - 1].k, k))
			j = (j + 1) & (cap - 1);
		if (!slot[j]) {
			g[n].k = *k;
			slot[j] = (uint32_t)++n;
		}
		lane_g[i] = slot[j] - 1;
	}
	int64_t next = SYNTH_PID;
	for (size_t i = 0; i < n; i++) {
		int64_t want = g[i].k.type == GT_LANE_GPU ? g[i].k.device : g[i].k.pid;
		int used = want < 0 || want >= SYNTH_PID;
		size_t j = (size_t)mix64((uint64_t)want) & (cap - 1);
		while (!used && tused[j]) {
			used = taken[j] == want;
			j = (j + 1) & (cap - 1);
		}
		if (!used) {
			tused[j] = 1;
			taken[j] = want;
		}
		g[i].cpid = used ? next++ : want;
	}
	free(slot);
	free(taken);
	free(tused);
	*gout = g;
	*ng = n;
	return 0;
}

static const char *kind_cat(const struct gt_store *s, const struct gt_event *e)
{
	switch (e->kind) {
	case GT_EV_KERNEL: return "kernel";
	case GT_EV_MEMCPY: return "gpu_memcpy";
	case GT_EV_MEMSET: return "gpu_memset";
	case GT_EV_SYNC: return "cuda_sync";
	case GT_EV_RUNTIME: return "cuda_runtime";
	case GT_EV_DRIVER: return "cuda_driver";
	case GT_EV_NVTX: return "user_annotation";
	case GT_EV_GPU_ANNOT: return "gpu_user_annotation";
	case GT_EV_PYTHON: return "python_function";
	case GT_EV_OVERHEAD: return "overhead";
	case GT_EV_STEP:
		return strncmp(gt_store_str(s, e->name), "ProfilerStep#", 13) ? "gtrace_step" : "user_annotation";
	default: return "cpu_op";
	}
}

static void meta_str(struct export_writer *w, const char *what, int64_t pid, int64_t tid, const char *key,
		     const char *val)
{
	export_writer_lit(w, "{\"ph\": \"M\", \"name\": \"");
	export_writer_put(w, what, strlen(what));
	export_writer_lit(w, "\", \"pid\": ");
	export_writer_i64(w, pid);
	export_writer_lit(w, ", \"tid\": ");
	export_writer_i64(w, tid);
	export_writer_lit(w, ", \"args\": {\"");
	export_writer_put(w, key, strlen(key));
	export_writer_lit(w, "\": ");
	export_writer_str(w, val);
	export_writer_lit(w, "}},\n");
}

static void meta_num(struct export_writer *w, const char *what, int64_t pid, int64_t tid, int64_t v)
{
	export_writer_lit(w, "{\"ph\": \"M\", \"name\": \"");
	export_writer_put(w, what, strlen(what));
	export_writer_lit(w, "\", \"pid\": ");
	export_writer_i64(w, pid);
	export_writer_lit(w, ", \"tid\": ");
	export_writer_i64(w, tid);
	export_writer_lit(w, ", \"args\": {\"sort_index\": ");
	export_writer_i64(w, v);
	export_writer_lit(w, "}},\n");
}

static void metadata(const struct gt_store *s, struct export_writer *w, const struct group *g, size_t ng,
		     const uint32_t *lane_g)
{
	char nm[160];
	for (size_t i = 0; i < ng; i++) {
		const struct gt_lane_key *k = &g[i].k;
		if (k->type == GT_LANE_GPU)
			snprintf(nm, sizeof(nm), "rank %d GPU %d%s", (int)k->rank, (int)k->device,
				 k->pid == -1 ? " annotations" : "");
		else if (k->type == GT_LANE_HOST)
			snprintf(nm, sizeof(nm), "rank %d process %lld", (int)k->rank, (long long)k->pid);
		else
			snprintf(nm, sizeof(nm), "rank %d counters", (int)k->rank);
		meta_str(w, "process_name", g[i].cpid, 0, "name", nm);
		meta_str(w, "process_labels", g[i].cpid, 0, "labels",
			 k->type == GT_LANE_GPU ? "GPU" : k->type == GT_LANE_HOST ? "CPU" : "counters");
		meta_num(w, "process_sort_index", g[i].cpid, 0,
			 (int64_t)k->rank * 1000000 + (k->type == GT_LANE_GPU ? 1000 + k->device : 0) +
			 (int64_t)i);
	}
	for (size_t i = 0; i < gt_store_lane_count(s); i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		int64_t cpid = g[lane_g[i]].cpid, tid = l->key.id;
		const char *ln = gt_store_str(s, l->name);
		if (!*ln) {
			snprintf(nm, sizeof(nm), "%s %lld", l->key.type == GT_LANE_GPU ? "stream" : "thread",
				 (long long)l->key.id);
			ln = nm;
		}
		meta_str(w, "thread_name", cpid, tid, "name", ln);
		if (l->sort_index)
			meta_num(w, "thread_sort_index", cpid, tid, l->sort_index);
		export_writer_lit(w, "{\"ph\": \"M\", \"name\": \"gtrace_lane\", \"pid\": ");
		export_writer_i64(w, cpid);
		export_writer_lit(w, ", \"tid\": ");
		export_writer_i64(w, tid);
		export_writer_lit(w, ", \"args\": {\"gt_type\": ");
		export_writer_i64(w, l->key.type);
		export_writer_lit(w, ", \"gt_rank\": ");
		export_writer_i64(w, l->key.rank);
		export_writer_lit(w, ", \"gt_device\": ");
		export_writer_i64(w, l->key.device);
		export_writer_lit(w, ", \"gt_pid\": ");
		export_writer_i64(w, l->key.pid);
		export_writer_lit(w, ", \"gt_id\": ");
		export_writer_i64(w, l->key.id);
		export_writer_lit(w, "}},\n");
	}
}

static void arg_num(struct export_writer *w, int *first, const char *key, int64_t v)
{
	export_writer_put(w, *first ? "\"" : ", \"", *first ? 1 : 3);
	*first = 0;
	export_writer_put(w, key, strlen(key));
	export_writer_lit(w, "\": ");
	export_writer_i64(w, v);
}

static void arg_str(struct export_writer *w, int *first, const char *key, const char *v)
{
	export_writer_put(w, *first ? "\"" : ", \"", *first ? 1 : 3);
	*first = 0;
	export_writer_put(w, key, strlen(key));
	export_writer_lit(w, "\": ");
	export_writer_str(w, v);
}

static void arr3(struct export_writer *w, int *first, const char *key, const uint32_t v[3])
{
	export_writer_put(w, *first ? "\"" : ", \"", *first ? 1 : 3);
	*first = 0;
	export_writer_put(w, key, strlen(key));
	export_writer_lit(w, "\": [");
	export_writer_u64(w, v[0]);
	export_writer_lit(w, ", ");
	export_writer_u64(w, v[1]);
	export_writer_lit(w, ", ");
	export_writer_u64(w, v[2]);
	export_writer_lit(w, "]");
}

static void args(const struct gt_store *s, struct export_writer *w, const struct gt_lane *l,
		 const struct gt_event *e)
{
	int first = 1;
	export_writer_lit(w, ", \"args\": {");
	int gpu = gt_event_is_gpu(e);
	if (gpu) {
		arg_num(w, &first, "device", l->key.device);
		arg_num(w, &first, "stream", l->key.id);
	}
	if (e->corr)
		arg_num(w, &first, "correlation", e->corr);
	if (e->ext)
		arg_num(w, &first, "External id", e->ext);
	if (e->kind == GT_EV_KERNEL) {
		const struct gt_kconf *k = gt_event_kconf(e) ? gt_store_kconf_at(s, gt_event_kconf(e)) : NULL;
		if (k) {
			arr3(w, &first, "grid", k->grid);
			arr3(w, &first, "block", k->block);
			arg_num(w, &first, "registers per thread", k->regs_per_thread);
			arg_num(w, &first, "shared memory",
				(int64_t)k->smem_static_bytes + k->smem_dynamic_bytes);
			if (k->occupancy_pct >= 0) {
				export_writer_lit(w, ", \"est. achieved occupancy %\": ");
				export_writer_dbl(w, (double)k->occupancy_pct);
			}
		}
		const struct gt_nccl *n = gt_event_nccl(e) ? gt_store_nccl_at(s, gt_event_nccl(e)) : NULL;
		if (n) {
			arg_str(w, &first, "Collective name", gt_store_str(s, n->collective));
			arg_num(w, &first, "In msg nelems", (int64_t)n->in_nelems);
			arg_num(w, &first, "Out msg nelems", (int64_t)n->out_nelems);
			arg_num(w, &first, "Group size", n->group_size);
			if (n->dtype)
				arg_str(w, &first, "dtype", gt_store_str(s, n->dtype));
			if (n->pg_name)
				arg_str(w, &first, "Process Group Name", gt_store_str(s, n->pg_name));
		}
	} else if (e->kind == GT_EV_MEMCPY || e->kind == GT_EV_MEMSET) {
		arg_num(w, &first, "bytes", (int64_t)e->arg);
		if (e->kind == GT_EV_MEMCPY && e->sub == GT_COPY_P2P && e->aux) {
			arg_num(w, &first, "fromDevice", e->aux & 0xffff);
			arg_num(w, &first, "toDevice", e->aux >> 16);
		}
	} else if (e->kind == GT_EV_CPU_OP) {
		/* input shapes: the text is JSON when it holds numbers and lists only */
		const char *sh = gt_store_str(s, (uint32_t)(e->arg & 0xffffffffu));
		if ((e->arg & 0xffffffffu) && sh[0] == '[' && !sh[strspn(sh, "[], -0123456789")]) {
			export_writer_put(w, first ? "\"" : ", \"", first ? 1 : 3);
			first = 0;
			export_writer_lit(w, "Input Dims\": ");
			export_writer_put(w, sh, strlen(sh));
		}
		if (e->aux)
			arg_str(w, &first, "Call stack", gt_store_str(s, e->aux));
	} else if (e->kind == GT_EV_STEP && strncmp(gt_store_str(s, e->name), "ProfilerStep#", 13)) {
		arg_num(w, &first, "step", (int64_t)e->arg);
	}
	export_writer_lit(w, "}");
}

/* an allocator record's args, as Kineto writes them */
static void mem_args(struct export_writer *w, const struct gt_event *e)
{
	int first = 1;
	int64_t b;
	memcpy(&b, &e->arg, sizeof(b));
	export_writer_lit(w, ", \"args\": {");
	arg_num(w, &first, "Device Type", e->aux == GT_MEM_HOST ? 0 : 1);
	arg_num(w, &first, "Device Id", e->aux == GT_MEM_HOST ? -1 : (int64_t)e->aux);
	arg_num(w, &first, "Bytes", b);
	export_writer_lit(w, "}");
}

static void head(struct export_writer *w, const char *ph, const char *cat, const struct gt_store *s,
		 const struct gt_event *e, int64_t cpid, int64_t tid)
{
	export_writer_lit(w, "{\"ph\": \"");
	export_writer_put(w, ph, strlen(ph));
	export_writer_lit(w, "\", \"cat\": \"");
	export_writer_put(w, cat, strlen(cat));
	export_writer_lit(w, "\", \"name\": ");
	export_writer_str(w, gt_store_str(s, e->name));
	export_writer_lit(w, ", \"pid\": ");
	export_writer_i64(w, cpid);
	export_writer_lit(w, ", \"tid\": ");
	export_writer_i64(w, tid);
	export_writer_lit(w, ", \"ts\": ");
	export_writer_us(w, e->start_ns);
}

static void flow(struct export_writer *w, char ph, int32_t rank, const struct gt_event *e, int64_t cpid,
		 int64_t tid)
{
	export_writer_lit(w, "{\"ph\": \"");
	export_writer_put(w, &ph, 1);
	export_writer_lit(w, "\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": ");
	export_writer_u64(w, (uint64_t)(uint32_t)rank << 32 | e->corr);
	export_writer_lit(w, ", \"pid\": ");
	export_writer_i64(w, cpid);
	export_writer_lit(w, ", \"tid\": ");
	export_writer_i64(w, tid);
	export_writer_lit(w, ", \"ts\": ");
	export_writer_us(w, e->start_ns);
	if (ph == 'f')
		export_writer_lit(w, ", \"bp\": \"e\"");
	export_writer_lit(w, "},\n");
}

/* an s (launch) or f (first GPU work) flow end when both ends exist */
static void maybe_flow(const struct gt_store *s, struct export_writer *w, const struct gt_lane *l,
		       uint32_t lane, uint32_t idx, int64_t cpid)
{
	const struct gt_event *e = &l->ev[idx];
	int gpu = gt_event_is_gpu(e);
	if (!gpu && e->kind != GT_EV_RUNTIME && e->kind != GT_EV_DRIVER)
		return;
	struct gt_ref x;
	if (gt_store_corr_find(s, l->key.rank, e->corr, gpu, &x) || x.lane != lane || x.idx != idx)
		return;
	if (gt_store_corr_find(s, l->key.rank, e->corr, !gpu, &x))
		return;
	flow(w, gpu ? 'f' : 's', l->key.rank, e, cpid, l->key.id);
}

static void events(const struct gt_store *s, struct export_writer *w, const struct group *g,
		   const uint32_t *lane_g, unsigned flags)
{
	for (size_t i = 0; i < gt_store_lane_count(s) && !w->err; i++) {
		const struct gt_lane *l = gt_store_lane_at(s, (uint32_t)i);
		int64_t cpid = g[lane_g[i]].cpid, tid = l->key.id;
		for (size_t j = 0; j < l->n; j++) {
			gt_store_read_walk(s, l, 0, j, l->n);
			const struct gt_event *e = &l->ev[j];
			if (e->kind == GT_EV_INSTANT) {
				head(w, "i", "instant", s, e, cpid, tid);
				if (e->flags & GT_EVF_MEMORY)
					mem_args(w, e);
				export_writer_lit(w, ", \"s\": \"t\"},\n");
				continue;
			}
			if (e->kind == GT_EV_COUNTER && (e->flags & GT_EVF_MEMORY) &&
			    e->sub == GT_MEM_LANE_SUB)
				continue;   /* made from the records, which are exported */
			if (e->kind == GT_EV_COUNTER) {
				double v;
				memcpy(&v, &e->arg, sizeof(v));
				/* the allocator's totals: a category the importer knows */
				head(w, "C", e->flags & GT_EVF_MEMORY ? "gtrace_memory_total" : "counter",
				     s, e, cpid, tid);
				export_writer_lit(w, ", \"args\": {\"value\": ");
				export_writer_dbl(w, v);
				export_writer_lit(w, "}},\n");
				continue;
			}
			head(w, "X", kind_cat(s, e), s, e, cpid, tid);
			export_writer_lit(w, ", \"dur\": ");
			export_writer_us(w, e->dur_ns);
			args(s, w, l, e);
			export_writer_lit(w, "},\n");
			if (e->corr && !(flags & GT_EXPORT_NO_FLOWS))
				maybe_flow(s, w, l, (uint32_t)i, (uint32_t)j, cpid);
		}
	}
}

static int write_all(const struct gt_store *s, struct export_writer *w, const struct gt_export_opts *o)
{
	size_t nl = gt_store_lane_count(s), ng = 0;
	uint32_t *lane_g = malloc((nl ? nl : 1) * sizeof(*lane_g));
	struct group *g = NULL;
	if (!lane_g || make_groups(s, &g, &ng, lane_g)) {
		free(lane_g);
		return -ENOMEM;
	}
	export_writer_lit(w, "{\n\"schemaVersion\": 1,\n\"displayTimeUnit\": \"ns\",\n");
	if (gt_store_rank_count(s) == 1) {
		const struct gt_rank *r = gt_store_rank_at(s, 0);
		export_writer_lit(w, "\"distributedInfo\": {\"rank\": ");
		export_writer_i64(w, r->rank);
		export_writer_lit(w, ", \"world_size\": ");
		export_writer_i64(w, r->world_size);
		export_writer_lit(w, "},\n");
	}
	export_writer_lit(w, "\"deviceProperties\": [");
	for (size_t i = 0, first = 1; i < gt_store_device_count(s); i++) {
		const struct gt_device *d = gt_store_device_at(s, i);
		if (gt_store_rank_count(s) > 1 && d->rank != gt_store_rank_at(s, 0)->rank)
			continue;
		if (first)
			export_writer_lit(w, "\n{\"id\": ");
		else
			export_writer_lit(w, ",\n{\"id\": ");
		first = 0;
		export_writer_i64(w, d->id);
		export_writer_lit(w, ", \"name\": ");
		export_writer_str(w, gt_store_str(s, d->name));
		export_writer_lit(w, ", \"totalGlobalMem\": ");
		export_writer_u64(w, d->mem_bytes);
		export_writer_lit(w, ", \"computeMajor\": ");
		export_writer_u64(w, d->cc_major);
		export_writer_lit(w, ", \"computeMinor\": ");
		export_writer_u64(w, d->cc_minor);
		export_writer_lit(w, ", \"numSms\": ");
		export_writer_u64(w, d->sm_count);
		export_writer_lit(w, "}");
	}
	export_writer_lit(w, "],\n\"traceEvents\": [\n");
	metadata(s, w, g, ng, lane_g);
	events(s, w, g, lane_g, o->flags);
	/* a final instant-free terminator keeps the array valid JSON after the last comma */
	export_writer_lit(w, "{\"ph\": \"M\", \"name\": \"gtrace_end\", \"pid\": 0, \"tid\": 0, \"args\": {}}\n],\n"
		    "\"traceName\": \"gtrace export\"\n}\n");
	free(lane_g);
	free(g);
	return w->err;
}

int gt_export_chrome(const struct gt_store *s, const char *path, const struct gt_export_opts *o,
		  char *err, size_t errlen)
{
	struct gt_export_opts def = { 0 };
	struct export_writer *w = malloc(sizeof(*w));
	if (!o)
		o = &def;
	if (!w) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	int rc = export_writer_open(w, path, o->gzip_level, o->flags & GT_EXPORT_KEEP ? SAFEW_KEEP : 0,
			   err, errlen);
	if (rc) {
		free(w);
		return rc;
	}
	rc = write_all(s, w, o);
	int crc = export_writer_close(w);
	if (!rc)
		rc = crc;
	free(w);
	if (rc)
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	return rc;
}

int gt_export_chrome_mem(const struct gt_store *s, const struct gt_export_opts *o, char **out,
		      size_t *len)
{
	struct gt_export_opts def = { 0 };
	struct export_writer *w = malloc(sizeof(*w));
	*out = NULL;
	*len = 0;
	if (!w)
		return -ENOMEM;
	export_writer_open_mem(w);
	int rc = write_all(s, w, o ? o : &def);
	int crc = export_writer_close(w);
	if (!rc)
		rc = crc;
	if (rc)
		free(w->mem);
	else {
		*out = w->mem;
		*len = w->mem_len;
	}
	free(w);
	return rc;
}
