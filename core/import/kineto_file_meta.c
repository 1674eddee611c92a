/*
 * kineto_file_meta.c - the parts of a trace file that are not timed events: M
 * metadata (process and thread names, sort indexes, labels, gtrace_lane
 * keys), ac2g flow ends, and the top-level keys deviceProperties,
 * distributedInfo, baseTimeNanoseconds and host_name.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <string.h>
#include "json_tok.h"
#include "kineto.h"

#define T_LIMIT_NS 2000000000000000000LL
#define CATIS(c, lit) ((c).s && (c).len == sizeof(lit) - 1 && !memcmp((c).s, lit, sizeof(lit) - 1))

int kineto_file_meta(struct kineto_file *kf, const struct kev *ev)
{
	struct kmeta m = { .cpid = kineto_file_norm(kf, &ev->pid), .ctid = kineto_file_norm(kf, &ev->tid) };
	struct kstr n = ev->name;
	if (CATIS(n, "process_name") || CATIS(n, "thread_name") || CATIS(n, "process_labels")) {
		struct kstr v = CATIS(n, "process_labels") ? ev->labels : ev->aname;
		if (!v.s)
			return 0;
		m.what = CATIS(n, "process_name") ? KM_PROC_NAME :
			 CATIS(n, "thread_name") ? KM_THREAD_NAME : KM_PROC_LABELS;
		m.str = gt_store_intern(kf->ls, v.s, v.len);
	} else if (CATIS(n, "process_sort_index") || CATIS(n, "thread_sort_index")) {
		if (!(ev->have & KA_SORT))
			return 0;
		m.what = n.s[0] == 'p' ? KM_PROC_SORT : KM_THREAD_SORT;
		m.num = ev->sort_index;
	} else if (CATIS(n, "gtrace_lane")) {
		if (!(ev->have & KA_GLANE))
			return 0;
		if (kineto_file_grow((void **)&kf->gl, &kf->cap_gl, kf->n_gl, sizeof(*kf->gl)))
			return -ENOMEM;
		struct kglane *g = &kf->gl[kf->n_gl++];
		g->cpid = m.cpid;
		g->ctid = m.ctid;
		memset(&g->key, 0, sizeof(g->key));
		g->key.type = (uint8_t)ev->gl_type;
		g->key.rank = (int32_t)ev->gl_rank;
		g->key.device = (int32_t)ev->gl_device;
		g->key.pid = ev->gl_pid;
		g->key.id = ev->gl_id;
		return 0;
	} else {
		return 0;
	}
	if (kineto_file_grow((void **)&kf->meta, &kf->cap_meta, kf->n_meta, sizeof(*kf->meta)))
		return -ENOMEM;
	kf->meta[kf->n_meta++] = m;
	return 0;
}

int kineto_file_flow(struct kineto_file *kf, const struct kev *ev)
{
	if (!(CATIS(ev->cat, "ac2g") || (CATIS(ev->cat, "async") && CATIS(ev->name, "launch"))))
		return 0;
	if (!ev->has_ts || !ev->id.t)
		return 0;
	if (kineto_file_grow((void **)&kf->flows, &kf->cap_flows, kf->n_flows, sizeof(*kf->flows)))
		return -ENOMEM;
	struct kflow *f = &kf->flows[kf->n_flows++];
	f->id = (uint64_t)kineto_file_norm(kf, &ev->id);
	f->ts = ev->ts_ns;
	f->cpid = kineto_file_norm(kf, &ev->pid);
	f->ctid = kineto_file_norm(kf, &ev->tid);
	f->ph = ev->ph;
	return 0;
}

/* top-level keys of the trace object */
int kineto_file_toplevel(struct kineto_file *kf, const char *key, size_t klen, const char *val, size_t vlen)
{
#define TKEY(lit) (klen == sizeof(lit) - 1 && !memcmp(key, lit, sizeof(lit) - 1))
	if (TKEY("baseTimeNanoseconds")) {
		const char *p = val;
		int64_t v;
		if (json_tok_fixed(&p, val + vlen + 1, 0, &v) == JT_OK && v > -T_LIMIT_NS && v < T_LIMIT_NS)
			kf->base_ns = v;
		return 0;
	}
	if (!TKEY("deviceProperties") && !TKEY("distributedInfo") && !TKEY("host_name") &&
	    !TKEY("hostname"))
		return 0;
	cJSON *j = cJSON_ParseWithLength(val, vlen);
	if (!j)
		return 0;
	if (TKEY("deviceProperties") && cJSON_IsArray(j)) {
		cJSON *d;
		cJSON_ArrayForEach(d, j) {
			if (kf->n_devs >= KINETO_FILE_MAX_DEVS || !cJSON_IsObject(d))
				break;
			struct gt_device *g = &kf->devs[kf->n_devs];
			memset(g, 0, sizeof(*g));
			cJSON *x = cJSON_GetObjectItemCaseSensitive(d, "id");
			if (!cJSON_IsNumber(x))
				continue;
			g->id = (int32_t)x->valuedouble;
			x = cJSON_GetObjectItemCaseSensitive(d, "name");
			if (cJSON_IsString(x))
				g->name = gt_store_intern_cstr(kf->ls, x->valuestring);
			x = cJSON_GetObjectItemCaseSensitive(d, "numSms");
			if (cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < 1e9)
				g->sm_count = (uint32_t)x->valuedouble;
			x = cJSON_GetObjectItemCaseSensitive(d, "totalGlobalMem");
			if (cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < 1e18)
				g->mem_bytes = (uint64_t)x->valuedouble;
			x = cJSON_GetObjectItemCaseSensitive(d, "computeMajor");
			if (cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < 1000)
				g->cc_major = (uint32_t)x->valuedouble;
			x = cJSON_GetObjectItemCaseSensitive(d, "computeMinor");
			if (cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < 1000)
				g->cc_minor = (uint32_t)x->valuedouble;
			kf->n_devs++;
		}
	} else if (TKEY("distributedInfo") && cJSON_IsObject(j)) {
		cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "rank");
		cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "world_size");
		if (cJSON_IsNumber(r) && r->valuedouble >= 0 && r->valuedouble < 1e7) {
			kf->have_dist = 1;
			kf->dist_rank = (int32_t)r->valuedouble;
			kf->dist_world = cJSON_IsNumber(w) && w->valuedouble > 0 && w->valuedouble < 1e7 ?
					 (int32_t)w->valuedouble : -1;
		}
	} else if (cJSON_IsString(j)) {
		kf->host = gt_store_intern_cstr(kf->ls, j->valuestring);
	}
	cJSON_Delete(j);
	return 0;
#undef TKEY
}
