/*
 * kineto_json.c - streaming scanner of a trace JSON text: the top-level object
 * (or bare array), each traceEvents element parsed field by field into a
 * struct kev, no DOM.  The text sits in one window that slides over the
 * stream; a unit (one top-level key and value, one event) that runs past
 * the window's end is parsed again once the window has been refilled.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/load.h"
#include "json_tok.h"
#include "kineto.h"
#include "kineto_read.h"

#define WIN_START (4u << 20)
#define WIN_MAX ((size_t)1 << 30)

#define KEYIS(k, kl, lit) ((kl) == sizeof(lit) - 1 && !memcmp((k), (lit), sizeof(lit) - 1))

static int str_val(const char **pp, const char *e, struct kstr *out)
{
	const char *s;
	size_t n;
	int esc;
	if (**pp != '"')
		return json_tok_skip(pp, e);
	int rc = json_tok_str(pp, e, &s, &n, &esc);
	if (rc == JT_OK && n < UINT32_MAX) {
		out->s = s;
		out->len = (uint32_t)n;
		out->esc = (uint32_t)esc;
	}
	return rc;
}

/* number (or a numeric string) with `scale` decimals kept; *ok = 0 when not a number */
static int num_val(const char **pp, const char *e, int scale, int64_t *out, int *ok)
{
	const char *p = *pp;
	*ok = 0;
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		int rc = json_tok_fixed(pp, e, scale, out);
		if (rc == JT_BAD) {
			*pp = p;
			rc = json_tok_skip(pp, e);
			return rc;
		}
		*ok = rc == JT_OK;
		return rc;
	}
	if (*p == '"') {
		struct kstr s = { 0 };
		int rc = str_val(pp, e, &s);
		if (rc)
			return rc;
		const char *q = s.s;
		int64_t v;
		if (s.len && json_tok_fixed(&q, s.s + s.len + 1, scale, &v) == JT_OK && q == s.s + s.len) {
			*out = v;
			*ok = 1;
		}
		return JT_OK;
	}
	return json_tok_skip(pp, e);
}

static int kval_val(const char **pp, const char *e, struct kval *v)
{
	if (**pp == '"') {
		struct kstr s = { 0 };
		int rc = str_val(pp, e, &s);
		if (rc)
			return rc;
		v->s = s.s;
		v->len = s.len;
		v->t = 2;
		return JT_OK;
	}
	int ok;
	int rc = num_val(pp, e, 0, &v->num, &ok);
	if (rc == JT_OK && ok)
		v->t = 1;
	return rc;
}

static int arr3(const char **pp, const char *e, uint32_t out[3], int *ok)
{
	const char *p = *pp;
	*ok = 0;
	if (*p != '[')
		return json_tok_skip(pp, e);
	p = json_tok_ws(p + 1, e);
	for (int i = 0; p < e && *p != ']'; i++) {
		int64_t v = 0;
		int nok;
		int rc = num_val(&p, e, 0, &v, &nok);
		if (rc)
			return rc;
		if (i < 3)
			out[i] = v < 0 ? 0 : v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		p = json_tok_ws(p, e);
		if (p < e && *p == ',')
			p = json_tok_ws(p + 1, e);
		else if (p < e && *p != ']')
			return JT_BAD;
	}
	if (p >= e)
		return JT_MORE;
	*pp = p + 1;
	*ok = 1;
	return JT_OK;
}

/* one args key's value into ev */
static int arg_val(const char **pp, const char *e, const char *k, size_t kl, struct kev *ev)
{
	int ok = 0, rc;
	int64_t v = 0;
	uint32_t bit = 0;
	int64_t *dst = NULL;
	int scale = 0;
	switch (kl) {
	case 4:
		if (KEYIS(k, kl, "grid")) {
			rc = arr3(pp, e, ev->grid, &ok);
			if (ok)
				ev->have |= KA_GRID;
			return rc;
		}
		if (KEYIS(k, kl, "name"))
			return str_val(pp, e, &ev->aname);
		if (KEYIS(k, kl, "step"))
			dst = &ev->step, bit = KA_STEP;
		break;
	case 5:
		if (KEYIS(k, kl, "block")) {
			rc = arr3(pp, e, ev->block, &ok);
			if (ok)
				ev->have |= KA_BLOCK;
			return rc;
		}
		if (KEYIS(k, kl, "bytes"))
			dst = &ev->bytes, bit = KA_BYTES;
		else if (KEYIS(k, kl, "dtype"))
			return str_val(pp, e, &ev->dtype);
		else if (KEYIS(k, kl, "gt_id"))
			dst = &ev->gl_id, bit = KA_GLANE;
		break;
	case 6:
		if (KEYIS(k, kl, "device"))
			dst = &ev->device, bit = KA_DEVICE;
		else if (KEYIS(k, kl, "stream"))
			dst = &ev->stream, bit = KA_STREAM;
		else if (KEYIS(k, kl, "labels"))
			return str_val(pp, e, &ev->labels);
		else if (KEYIS(k, kl, "gt_pid"))
			dst = &ev->gl_pid;
		break;
	case 7:
		if (KEYIS(k, kl, "gt_type"))
			dst = &ev->gl_type;
		else if (KEYIS(k, kl, "gt_rank"))
			dst = &ev->gl_rank;
		break;
	case 8:
		if (KEYIS(k, kl, "toDevice"))
			dst = &ev->to_dev, bit = KA_TODEV;
		break;
	case 9:
		if (KEYIS(k, kl, "gt_device"))
			dst = &ev->gl_device;
		break;
	case 10:
		if (KEYIS(k, kl, "Input Dims") && *(*pp) == '[') {
			const char *p0 = *pp;
			rc = json_tok_skip(pp, e);
			if (rc == JT_OK)
				ev->dims = (struct kstr){ p0, (uint32_t)(*pp - p0), 0 };
			return rc;
		}
		if (KEYIS(k, kl, "Call stack"))
			return str_val(pp, e, &ev->stack);
		if (KEYIS(k, kl, "Group size"))
			dst = &ev->group_size;
		else if (KEYIS(k, kl, "sort_index"))
			dst = &ev->sort_index, bit = KA_SORT;
		else if (KEYIS(k, kl, "fromDevice"))
			dst = &ev->from_dev, bit = KA_FROMDEV;
		break;
	case 11:
		if (KEYIS(k, kl, "correlation"))
			dst = &ev->corr, bit = KA_CORR;
		else if (KEYIS(k, kl, "External id") || KEYIS(k, kl, "external id"))
			dst = &ev->ext, bit = KA_EXT;
		break;
	case 13:
		if (KEYIS(k, kl, "shared memory"))
			dst = &ev->smem, bit = KA_SMEM;
		else if (KEYIS(k, kl, "In msg nelems"))
			dst = &ev->in_nelems;
		break;
	case 14:
		if (KEYIS(k, kl, "Out msg nelems"))
			dst = &ev->out_nelems;
		break;
	case 15:
		if (KEYIS(k, kl, "Collective name")) {
			rc = str_val(pp, e, &ev->coll);
			if (rc == JT_OK && ev->coll.s)
				ev->have |= KA_COLL;
			return rc;
		}
		break;
	case 18:
		if (KEYIS(k, kl, "Process Group Name"))
			return str_val(pp, e, &ev->pg);
		break;
	case 20:
		if (KEYIS(k, kl, "registers per thread"))
			dst = &ev->regs, bit = KA_REGS;
		break;
	case 25:
		if (KEYIS(k, kl, "est. achieved occupancy %"))
			dst = &ev->occ_milli, bit = KA_OCC, scale = 3;
		break;
	}
	if (dst) {
		rc = num_val(pp, e, scale, &v, &ok);
		if (rc == JT_OK && ok) {
			*dst = v;
			ev->have |= bit;
		}
		return rc;
	}
	/* any other numeric arg: keep its raw text for counters */
	const char *p0 = *pp;
	rc = json_tok_skip(pp, e);
	if (rc == JT_OK && ev->n_num < KEV_MAX_NUM && (*p0 == '-' || (*p0 >= '0' && *p0 <= '9'))) {
		ev->num_key[ev->n_num] = (struct kstr){ k, (uint32_t)kl, 0 };
		ev->num_val[ev->n_num++] = (struct kstr){ p0, (uint32_t)(*pp - p0), 0 };
	}
	return rc;
}

/* iterate the members of an object at *pp ('{'), calling fn for each */
static int members(const char **pp, const char *e, struct kev *ev, int is_args)
{
	const char *p = json_tok_ws(*pp + 1, e);
	if (p < e && *p == '}') {
		*pp = p + 1;
		return JT_OK;
	}
	for (;;) {
		if (p >= e)
			return JT_MORE;
		if (*p != '"')
			return JT_BAD;
		const char *k;
		size_t kl;
		int esc, rc;
		if ((rc = json_tok_str(&p, e, &k, &kl, &esc)))
			return rc;
		p = json_tok_ws(p, e);
		if (p >= e)
			return JT_MORE;
		if (*p != ':')
			return JT_BAD;
		p = json_tok_ws(p + 1, e);
		if (p >= e)
			return JT_MORE;
		if (is_args) {
			rc = arg_val(&p, e, k, kl, ev);
		} else if (kl == 2 && k[0] == 'p' && k[1] == 'h') {
			struct kstr s = { 0 };
			rc = str_val(&p, e, &s);
			ev->ph = s.len ? s.s[0] : 0;
		} else if (KEYIS(k, kl, "ts") || KEYIS(k, kl, "dur")) {
			int ok;
			int64_t v = 0;
			rc = num_val(&p, e, 3, &v, &ok);
			if (rc == JT_OK) {
				if (k[0] == 't') {
					ev->ts_ns = v;
					ev->has_ts = (uint8_t)ok;
				} else {
					ev->dur_ns = v;
					ev->has_dur = (uint8_t)ok;
				}
				if (!ok && *(p - 1) != 'l')  /* not null */
					ev->bad_num = 1;
			}
		} else if (KEYIS(k, kl, "pid")) {
			rc = kval_val(&p, e, &ev->pid);
		} else if (KEYIS(k, kl, "tid")) {
			rc = kval_val(&p, e, &ev->tid);
		} else if (KEYIS(k, kl, "id")) {
			rc = kval_val(&p, e, &ev->id);
		} else if (KEYIS(k, kl, "cat")) {
			rc = str_val(&p, e, &ev->cat);
		} else if (KEYIS(k, kl, "name")) {
			rc = str_val(&p, e, &ev->name);
		} else if (KEYIS(k, kl, "args") && *p == '{') {
			rc = members(&p, e, ev, 1);
		} else {
			rc = json_tok_skip(&p, e);
		}
		if (rc)
			return rc;
		p = json_tok_ws(p, e);
		if (p >= e)
			return JT_MORE;
		if (*p == ',') {
			p = json_tok_ws(p + 1, e);
			continue;
		}
		if (*p == '}') {
			*pp = p + 1;
			return JT_OK;
		}
		return JT_BAD;
	}
}

static void unesc(struct kstr *s)
{
	if (s->esc) {
		s->len = (uint32_t)json_tok_unescape(s->s, s->len, (char *)s->s);
		s->esc = 0;
	}
}

static void unesc_all(struct kev *ev)
{
	unesc(&ev->cat);
	unesc(&ev->name);
	unesc(&ev->coll);
	unesc(&ev->dtype);
	unesc(&ev->pg);
	unesc(&ev->aname);
	unesc(&ev->labels);
	unesc(&ev->stack);
}

enum { S_START, S_KEY_FIRST, S_KEY, S_OBJ_COMMA, S_ARR_FIRST, S_ARR_VAL, S_ARR_COMMA, S_DONE };

struct progress {
	int on;
	struct timespec t0;
	int shown;
	int last_pct;
};

static void progress_tick(struct progress *pg, const struct kineto_read *r, const char *path)
{
	if (!pg->on || !r->in_total)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double el = (double)(now.tv_sec - pg->t0.tv_sec) + (double)(now.tv_nsec - pg->t0.tv_nsec) * 1e-9;
	if (el < 1.0)
		return;
	uint64_t pos = __atomic_load_n(&r->in_pos, __ATOMIC_RELAXED);
	int pct = (int)(pos * 100 / r->in_total);
	if (pct > 100)
		pct = 100;
	if (pg->shown && pct == pg->last_pct)
		return;
	char bar[31];
	int full = pct * 30 / 100;
	for (int i = 0; i < 30; i++)
		bar[i] = i < full ? '#' : '.';
	bar[30] = 0;
	fprintf(stderr, "\rgtrace: importing %s [%s] %3d%%", path, bar, pct);
	fflush(stderr);
	pg->shown = 1;
	pg->last_pct = pct;
}

static void progress_end(struct progress *pg)
{
	if (pg->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
}

/* one unit at *pp in state *st; JT_* */
static int step(struct kineto_file *kf, const char **pp, const char *e, int *st, int *top_arr, int *saw_events)
{
	const char *p = json_tok_ws(*pp, e);
	if (p >= e)
		return JT_MORE;
	int rc;
	switch (*st) {
	case S_START:
		if (*p == '[') {
			*top_arr = 1;
			*saw_events = 1;
			*st = S_ARR_FIRST;
		} else if (*p == '{') {
			*st = S_KEY_FIRST;
		} else {
			return JT_BAD;
		}
		*pp = p + 1;
		return JT_OK;
	case S_KEY_FIRST:
	case S_KEY: {
		if (*p == '}' && *st == S_KEY_FIRST) {
			*st = S_DONE;
			*pp = p + 1;
			return JT_OK;
		}
		if (*p != '"')
			return JT_BAD;
		const char *k;
		size_t kl;
		int esc;
		if ((rc = json_tok_str(&p, e, &k, &kl, &esc)))
			return rc;
		p = json_tok_ws(p, e);
		if (p >= e)
			return JT_MORE;
		if (*p != ':')
			return JT_BAD;
		p = json_tok_ws(p + 1, e);
		if (p >= e)
			return JT_MORE;
		if (KEYIS(k, kl, "traceEvents")) {
			if (*p != '[') {
				*saw_events = -1;   /* reported as a wrong shape, not bad JSON */
				return JT_BAD;
			}
			*saw_events = 1;
			*st = S_ARR_FIRST;
			*pp = p + 1;
			return JT_OK;
		}
		const char *v0 = p;
		if ((rc = json_tok_skip(&p, e)))
			return rc;
		if (kineto_file_toplevel(kf, k, kl, v0, (size_t)(p - v0)))
			return -ENOMEM;
		*st = S_OBJ_COMMA;
		*pp = p;
		return JT_OK;
	}
	case S_OBJ_COMMA:
		if (*p == ',')
			*st = S_KEY;
		else if (*p == '}')
			*st = S_DONE;
		else
			return JT_BAD;
		*pp = p + 1;
		return JT_OK;
	case S_ARR_FIRST:
	case S_ARR_VAL:
		if (*p == ']') {
			*st = *top_arr ? S_DONE : S_OBJ_COMMA;
			*pp = p + 1;
			return JT_OK;
		}
		if (*p == '{') {
			struct kev ev;
			memset(&ev, 0, sizeof(ev));
			if ((rc = members(&p, e, &ev, 0)))
				return rc;
			unesc_all(&ev);
			if (kineto_file_event(kf, &ev))
				return -ENOMEM;
		} else {
			if ((rc = json_tok_skip(&p, e)))
				return rc;
			kf->skipped[KSKIP_NOT_OBJECT]++;
		}
		*st = S_ARR_COMMA;
		*pp = p;
		return JT_OK;
	case S_ARR_COMMA:
		if (*p == ',')
			*st = S_ARR_VAL;
		else if (*p == ']')
			*st = *top_arr ? S_DONE : S_OBJ_COMMA;
		else
			return JT_BAD;
		*pp = p + 1;
		return JT_OK;
	default:
		return JT_BAD;
	}
}

int kineto_json_parse(struct kineto_file *kf, struct kineto_read *r, unsigned flags, char *err, size_t errlen,
		int *truncated)
{
	const char *path = kf->path;
	size_t cap = WIN_START, len = 0, pos = 0;
	uint64_t base_off = 0;     /* stream offset of buf[0] */
	if (r->mem && !r->gz && r->mem_len + 16 < cap)   /* small inputs, small window */
		cap = r->mem_len + 16 < 65536 ? 65536 : r->mem_len + 16;
	char *buf = malloc(cap);
	int st = S_START, top_arr = 0, saw_events = 0, eof = 0, rc = 0;
	struct progress pg = { 0 };
	*truncated = 0;
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	pg.on = (flags & GT_LOAD_PROGRESS) && isatty(2);
	clock_gettime(CLOCK_MONOTONIC, &pg.t0);
	for (;;) {
		/* a UTF-8 byte order mark (Windows editors) before the JSON */
		if (st == S_START && base_off == 0 && pos == 0 && len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
			pos = 3;
		const char *p = buf + pos;
		int jr = st == S_DONE ? JT_OK : step(kf, &p, buf + len, &st, &top_arr, &saw_events);
		if (jr < 0) {
			snprintf(err, errlen, "%s: out of memory", path);
			rc = -ENOMEM;
			break;
		}
		if (st == S_DONE && jr == JT_OK) {
			pos = (size_t)(p - buf);
			break;
		}
		if (jr == JT_OK) {
			pos = (size_t)(p - buf);
			continue;
		}
		if (jr == JT_BAD) {
			/* damaged gzip data may inflate to garbage before its check
			 * fails: then the damage explains the bad JSON (below) */
			if (r->gz && kineto_read_drain(r))
				break;
			const char *q = json_tok_ws(p, buf + len);
			uint64_t at = base_off + (uint64_t)(q - buf);
			if (saw_events < 0)
				snprintf(err, errlen, "%s: traceEvents is not an array (not a Chrome/Kineto trace)",
					 path);
			else if (st == S_START)
				snprintf(err, errlen, "%s: not JSON (starts with '%c')", path,
					 q < buf + len && *q >= 32 && *q < 127 ? *q : '?');
			else
				snprintf(err, errlen, "%s: invalid JSON near byte %llu", path,
					 (unsigned long long)at);
			rc = -EINVAL;
			break;
		}
		/* JT_MORE: slide the window and refill */
		if (eof) {
			if (!(top_arr && (st == S_ARR_VAL || st == S_ARR_COMMA || st == S_ARR_FIRST)) ||
			    json_tok_ws(buf + pos, buf + len) != buf + len)
				*truncated = 1;
			break;
		}
		memmove(buf, buf + pos, len - pos);
		base_off += pos;
		len -= pos;
		pos = 0;
		if (len > cap / 2) {
			if (cap >= WIN_MAX) {
				snprintf(err, errlen, "%s: one JSON value near byte %llu is larger than 1 GiB",
					 path, (unsigned long long)base_off);
				rc = -EFBIG;
				break;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				snprintf(err, errlen, "%s: out of memory", path);
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		while (len < cap) {
			ssize_t n = kineto_read_read(r, buf + len, cap - len);
			if (n < 0) {
				if (kf->n_events == 0) {
					snprintf(err, errlen, "%s: %s", path, r->msg);
					rc = -EIO;
				} else {
					*truncated = 2;
				}
				eof = 1;
				break;
			}
			if (n == 0) {
				eof = 1;
				break;
			}
			len += (size_t)n;
			if (r->threaded)   /* parse what the inflate thread has, do not wait for more */
				break;
		}
		if (rc)
			break;
		progress_tick(&pg, r, path);
	}
	progress_end(&pg);
	free(buf);
	if (rc)
		return rc;
	/* damaged gzip (kineto_read.h): the events before the damage are kept with a
	 * warning in kineto_read's words, none is an error in the same words */
	if (kineto_read_damage(r, kf->damage, sizeof(kf->damage))) {
		*truncated = 2;
		if (!kf->n_events) {
			snprintf(err, errlen, "%s: %s; no events before it", path, kf->damage);
			return -EINVAL;
		}
	}
	if (r->truncated && !*truncated)
		*truncated = 1;
	if (!saw_events) {
		if (*truncated && st == S_START)
			snprintf(err, errlen, "%s: empty or truncated before any JSON", path);
		else
			snprintf(err, errlen, "%s: no traceEvents array (not a Chrome/Kineto trace)", path);
		return -EINVAL;
	}
	return 0;
}
