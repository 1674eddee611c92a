/*
 * gtfile_events.c - the event chunk codec.
 *
 * Payload: u32 n_events, u32 n_groups, u32 n_cols, u32 reserved; n_groups
 * times {u32 lane, u32 count} (runs of one lane, in order); then n_cols
 * columns, each {u8 id, u8 mode, u8 width, u8 0, u32 0, u64 base,
 * [mode DELTA: n_groups x u64 first value], n_events x width bytes, zero
 * padding to 8}.  Width is 0, 1, 2, 4 or 8 bytes.  FOR: value = base + x;
 * DELTA: the group's first value is given, each next one is previous +
 * base + x (the first's x is ignored).  Arithmetic is modulo 2^64.
 * The decoder writes straight into the lanes' event arrays, in sub-blocks
 * of SUB events so that the columns it touches stay in L1.
 */
#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "gtrace/evcheck.h"
#include "gtfile_priv.h"

#define SUB 512

static uint64_t col_get(const struct gt_event *e, int id)
{
	switch (id) {
	case GTFILE_COL_START: return (uint64_t)e->start_ns;
	case GTFILE_COL_DUR: return (uint64_t)e->dur_ns;
	case GTFILE_COL_ARG_LO: return e->arg & 0xffffffffu;
	case GTFILE_COL_ARG_HI: return e->arg >> 32;
	case GTFILE_COL_NAME: return e->name;
	case GTFILE_COL_CORR: return e->corr;
	case GTFILE_COL_EXT: return e->ext;
	case GTFILE_COL_KFS: return e->kind | (uint32_t)e->sub << 8 | (uint32_t)e->flags << 16;
	default: return e->aux;
	}
}

static unsigned width_of(uint64_t range)
{
	if (range == 0)
		return 0;
	if (range < 0x100)
		return 1;
	if (range < 0x10000)
		return 2;
	if (range <= 0xffffffffu)
		return 4;
	return 8;
}

static void put_w(unsigned char *p, uint64_t x, unsigned w)
{
	for (unsigned i = 0; i < w; i++)
		p[i] = (unsigned char)(x >> (8 * i));
}

/* encode one column of all groups; vals is scratch of n entries */
static int encode_col(int id, const struct gtfile_group *g, size_t ng, size_t n,
		      uint64_t *vals, struct gtfile_buf *out)
{
	size_t k = 0;
	for (size_t j = 0; j < ng; j++)
		for (size_t i = 0; i < g[j].n; i++)
			vals[k++] = col_get(&g[j].ev[i], id);
	/* frame of reference and delta ranges, as signed 64-bit values */
	int64_t fmin = INT64_MAX, fmax = INT64_MIN, dmin = INT64_MAX, dmax = INT64_MIN;
	k = 0;
	for (size_t j = 0; j < ng; j++)
		for (size_t i = 0; i < g[j].n; i++, k++) {
			int64_t v = (int64_t)vals[k];
			fmin = v < fmin ? v : fmin;
			fmax = v > fmax ? v : fmax;
			if (i) {
				int64_t d = (int64_t)(vals[k] - vals[k - 1]);
				dmin = d < dmin ? d : dmin;
				dmax = d > dmax ? d : dmax;
			}
		}
	if (n == 0)
		fmin = fmax = 0;
	if (dmin > dmax)
		dmin = dmax = 0;
	unsigned wf = width_of((uint64_t)fmax - (uint64_t)fmin);
	unsigned wd = width_of((uint64_t)dmax - (uint64_t)dmin);
	unsigned mode = wd < wf ? GTFILE_COL_DELTA : GTFILE_COL_FOR;
	unsigned w = mode == GTFILE_COL_DELTA ? wd : wf;
	uint64_t base = (uint64_t)(mode == GTFILE_COL_DELTA ? dmin : fmin);
	size_t pad = (8 - (n * w) % 8) % 8;
	size_t bytes = 16 + (mode == GTFILE_COL_DELTA ? ng * 8 : 0) + n * w + pad;
	if (gtfile_buf_reserve(out, bytes))
		return -ENOMEM;
	unsigned char *p = gtfile_buf_add(out, NULL, bytes);
	p[0] = (unsigned char)id;
	p[1] = (unsigned char)mode;
	p[2] = (unsigned char)w;
	gtfile_put64(p + 8, base);
	p += 16;
	if (mode == GTFILE_COL_DELTA) {
		k = 0;
		for (size_t j = 0; j < ng; j++) {
			gtfile_put64(p, g[j].n ? vals[k] : 0);
			p += 8;
			k += g[j].n;
		}
	}
	if (w == 0)
		return 0;
	k = 0;
	for (size_t j = 0; j < ng; j++)
		for (size_t i = 0; i < g[j].n; i++, k++) {
			uint64_t x = mode == GTFILE_COL_DELTA ?
				(i ? vals[k] - vals[k - 1] - base : 0) : vals[k] - base;
			put_w(p, x, w);
			p += w;
		}
	return 0;
}

int gtfile_events_encode(const struct gtfile_group *g, size_t ng, size_t n,
			 struct gtfile_buf *out)
{
	if (gtfile_buf_reserve(out, 16 + ng * 8))
		return -ENOMEM;
	unsigned char *h = gtfile_buf_add(out, NULL, 16);
	gtfile_put32(h, (uint32_t)n);
	gtfile_put32(h + 4, (uint32_t)ng);
	gtfile_put32(h + 8, GTFILE_COL_COUNT - 1);
	for (size_t j = 0; j < ng; j++) {
		unsigned char *p = gtfile_buf_add(out, NULL, 8);
		gtfile_put32(p, g[j].lane);
		gtfile_put32(p + 4, g[j].n);
	}
	uint64_t *vals = malloc((n ? n : 1) * sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	int rc = 0;
	for (int id = 1; id < GTFILE_COL_COUNT && !rc; id++)
		rc = encode_col(id, g, ng, n, vals, out);
	free(vals);
	return rc;
}

/* ---- decoding ---- */

struct col {
	unsigned mode, width;
	uint64_t base;
	const unsigned char *first;   /* DELTA: n_groups x u64 */
	const unsigned char *data;
	uint64_t prev;                /* DELTA: last value decoded */
};

/* x values [off, off + k) of a column into t */
static void read_x(const struct col *c, size_t off, size_t k, uint64_t *t)
{
	const unsigned char *p = c->data + off * c->width;
	switch (c->width) {
	case 0:
		for (size_t i = 0; i < k; i++)
			t[i] = 0;
		break;
	case 1:
		for (size_t i = 0; i < k; i++)
			t[i] = p[i];
		break;
	case 2:
		for (size_t i = 0; i < k; i++) {
			uint16_t v;
			memcpy(&v, p + 2 * i, 2);
			t[i] = v;
		}
		break;
	case 4:
		for (size_t i = 0; i < k; i++) {
			uint32_t v;
			memcpy(&v, p + 4 * i, 4);
			t[i] = v;
		}
		break;
	default:
		memcpy(t, p, k * 8);
		break;
	}
}

/* values [off, off + k) of group gi; first = off is the group's start */
static void col_values(struct col *c, size_t gi, size_t off, size_t k, int first,
		       uint64_t *t)
{
	read_x(c, off, k, t);
	uint64_t b = c->base;
	if (c->mode == GTFILE_COL_FOR) {
		for (size_t i = 0; i < k; i++)
			t[i] += b;
		return;
	}
	uint64_t v = c->prev;
	size_t i = 0;
	if (first && k) {
		v = gtfile_get64(c->first + gi * 8);
		t[0] = v;
		i = 1;
	}
	for (; i < k; i++) {
		v += b + t[i];
		t[i] = v;
	}
	c->prev = v;
}

static int parse_cols(const unsigned char *p, size_t len, size_t pos, size_t n, size_t ng,
		      size_t ncols, struct col *cols, char *why, size_t whylen)
{
	unsigned seen = 0;
	for (size_t c = 0; c < ncols; c++) {
		if (len - pos < 16) {
			snprintf(why, whylen, "event column %zu cut short", c);
			return -EINVAL;
		}
		unsigned id = p[pos], mode = p[pos + 1], w = p[pos + 2];
		if (mode > GTFILE_COL_DELTA || (w != 0 && w != 1 && w != 2 && w != 4 && w != 8)) {
			snprintf(why, whylen, "event column %u has bad encoding %u/%u", id, mode, w);
			return -EINVAL;
		}
		uint64_t base = gtfile_get64(p + pos + 8);
		pos += 16;
		const unsigned char *first = p + pos;
		if (mode == GTFILE_COL_DELTA) {
			if ((len - pos) / 8 < ng) {
				snprintf(why, whylen, "event column %u cut short", id);
				return -EINVAL;
			}
			pos += ng * 8;
		}
		size_t bytes = n * w + (8 - (n * w) % 8) % 8;
		if (len - pos < bytes) {
			snprintf(why, whylen, "event column %u cut short", id);
			return -EINVAL;
		}
		if (id >= 1 && id < GTFILE_COL_COUNT) {
			if (seen & (1u << id)) {
				snprintf(why, whylen, "event column %u given twice", id);
				return -EINVAL;
			}
			seen |= 1u << id;
			cols[id] = (struct col){ mode, w, base, first, p + pos, 0 };
		}
		pos += bytes;
	}
	for (unsigned id = 1; id < GTFILE_COL_COUNT; id++)
		if (!(seen & (1u << id))) {
			snprintf(why, whylen, "event column %u missing", id);
			return -EINVAL;
		}
	return 0;
}

/* decode column c for events [off, off + k) of group gi into e, one
 * statement STORE per value v; frame-of-reference columns in one pass */
#define DEC_FN(fname, STORE) \
static void fname(struct col *c, size_t gi, size_t off, size_t k, int first, \
		  struct gt_event *e, uint64_t *t, uint64_t *bad) \
{ \
	(void)bad; \
	if (c->mode == GTFILE_COL_FOR) { \
		const unsigned char *p = c->data + off * c->width; \
		uint64_t b = c->base; \
		switch (c->width) { \
		case 0: \
			for (size_t i = 0; i < k; i++) { uint64_t v = b; STORE; } \
			break; \
		case 1: \
			for (size_t i = 0; i < k; i++) { uint64_t v = b + p[i]; STORE; } \
			break; \
		case 2: \
			for (size_t i = 0; i < k; i++) { \
				uint16_t x; \
				memcpy(&x, p + 2 * i, 2); \
				uint64_t v = b + x; \
				STORE; \
			} \
			break; \
		case 4: \
			for (size_t i = 0; i < k; i++) { \
				uint32_t x; \
				memcpy(&x, p + 4 * i, 4); \
				uint64_t v = b + x; \
				STORE; \
			} \
			break; \
		default: \
			for (size_t i = 0; i < k; i++) { \
				uint64_t x; \
				memcpy(&x, p + 8 * i, 8); \
				uint64_t v = b + x; \
				STORE; \
			} \
			break; \
		} \
		return; \
	} \
	col_values(c, gi, off, k, first, t); \
	for (size_t i = 0; i < k; i++) { uint64_t v = t[i]; STORE; } \
}

DEC_FN(dec_start, e[i].start_ns = (int64_t)v)
DEC_FN(dec_dur, e[i].dur_ns = (int64_t)v)
DEC_FN(dec_arg_lo, e[i].arg = v & 0xffffffffu)
DEC_FN(dec_arg_hi, e[i].arg |= v << 32)
DEC_FN(dec_name, e[i].name = (uint32_t)v; *bad |= v)
DEC_FN(dec_corr, e[i].corr = (uint32_t)v)
DEC_FN(dec_ext, e[i].ext = (uint32_t)v)
DEC_FN(dec_aux, e[i].aux = (uint32_t)v)
DEC_FN(dec_kfs, e[i].kind = (uint8_t)v; e[i].sub = (uint8_t)(v >> 8);
       e[i].flags = (uint16_t)(v >> 16); *bad |= v >> 32)

/* decode events [off, off + k) of group gi into e; 0 or -EINVAL */
static int decode_sub(struct col *cols, size_t gi, size_t off, size_t k, int first,
		      struct gt_event *e, uint32_t lane, const struct gt_store *s,
		      uint32_t *mask, char *why, size_t whylen)
{
	uint64_t t[SUB];
	uint64_t names = 0, bad = 0;
	uint32_t nstr = (uint32_t)gt_store_str_count(s);
	uint64_t nk = gt_store_kconf_count(s), nn = gt_store_nccl_count(s);
	dec_start(&cols[GTFILE_COL_START], gi, off, k, first, e, t, &bad);
	dec_dur(&cols[GTFILE_COL_DUR], gi, off, k, first, e, t, &bad);
	dec_arg_lo(&cols[GTFILE_COL_ARG_LO], gi, off, k, first, e, t, &bad);
	dec_arg_hi(&cols[GTFILE_COL_ARG_HI], gi, off, k, first, e, t, &bad);
	dec_corr(&cols[GTFILE_COL_CORR], gi, off, k, first, e, t, &bad);
	dec_ext(&cols[GTFILE_COL_EXT], gi, off, k, first, e, t, &bad);
	dec_aux(&cols[GTFILE_COL_AUX], gi, off, k, first, e, t, &bad);
	dec_kfs(&cols[GTFILE_COL_KFS], gi, off, k, first, e, t, &bad);
	dec_name(&cols[GTFILE_COL_NAME], gi, off, k, first, e, t, &names);
	uint32_t m = 0;
	for (size_t i = 0; i < k; i++) {
		e[i].lane = lane;
		bad |= e[i].name >= nstr;
		m |= e[i].kind < 32 ? 1u << e[i].kind : 0;
		if (e[i].kind == GT_EV_KERNEL)
			bad |= (e[i].arg & 0xffffffffu) > nk || (e[i].arg >> 32) > nn;
		if (e[i].kind == GT_EV_CPU_OP)   /* input shapes, call stack */
			bad |= (e[i].arg & 0xffffffffu) >= nstr || e[i].aux >= nstr;
	}
	bad |= names >> 32;
	*mask |= m;
	for (size_t i = 0; i < k; i++) {
		const char *no = gt_evcheck_event(&e[i]);
		if (no) {
			snprintf(why, whylen, "event (start %" PRId64 " ns, dur %" PRId64
				 " ns, kind %u): %s", e[i].start_ns, e[i].dur_ns, e[i].kind, no);
			return -EINVAL;
		}
	}
	if (bad) {
		for (size_t i = 0; i < k; i++) {
			if (e[i].name >= nstr) {
				snprintf(why, whylen, "event names string %u, file has %u strings",
					 e[i].name, nstr);
				return -EINVAL;
			}
			if (e[i].kind == GT_EV_KERNEL && (e[i].arg & 0xffffffffu) > nk) {
				snprintf(why, whylen, "kernel refers to launch configuration %u of %zu",
					 (unsigned)(e[i].arg & 0xffffffffu), (size_t)nk);
				return -EINVAL;
			}
			if (e[i].kind == GT_EV_KERNEL && (e[i].arg >> 32) > nn) {
				snprintf(why, whylen, "kernel refers to NCCL record %u of %zu",
					 (unsigned)(e[i].arg >> 32), (size_t)nn);
				return -EINVAL;
			}
			if (e[i].kind == GT_EV_CPU_OP &&
			    ((e[i].arg & 0xffffffffu) >= nstr || e[i].aux >= nstr)) {
				snprintf(why, whylen, "operator's input shapes or call stack names "
					 "string %u, file has %u strings",
					 (e[i].arg & 0xffffffffu) >= nstr ? (unsigned)(e[i].arg & 0xffffffffu)
					 : e[i].aux, nstr);
				return -EINVAL;
			}
		}
		snprintf(why, whylen, "event column out of range");
		return -EINVAL;
	}
	return 0;
}

int gtfile_events_decode(const unsigned char *p, size_t len, struct gt_store *s,
			 size_t max_events, size_t *n_out, char *why, size_t whylen)
{
	*n_out = 0;
	if (len < 16) {
		snprintf(why, whylen, "event chunk too short");
		return -EINVAL;
	}
	size_t n = gtfile_get32(p), ng = gtfile_get32(p + 4), ncols = gtfile_get32(p + 8);
	if (n > GTFILE_MAX_CHUNK_EVENTS || n > max_events) {
		snprintf(why, whylen, "event chunk claims %zu events, more than the file can hold", n);
		return -EINVAL;
	}
	if (ng > n || (len - 16) / 8 < ng || ncols > 64) {
		snprintf(why, whylen, "event chunk has a bad group or column count");
		return -EINVAL;
	}
	const unsigned char *gp = p + 16;
	size_t nlanes = gt_store_lane_count(s), sum = 0;
	for (size_t j = 0; j < ng; j++) {
		uint32_t lane = gtfile_get32(gp + 8 * j), cnt = gtfile_get32(gp + 8 * j + 4);
		if (lane >= nlanes) {
			snprintf(why, whylen, "events on lane %u, file has %zu lanes", lane, nlanes);
			return -EINVAL;
		}
		sum += cnt;
	}
	if (sum != n) {
		snprintf(why, whylen, "event groups hold %zu events, chunk says %zu", sum, n);
		return -EINVAL;
	}
	struct col cols[GTFILE_COL_COUNT];
	int rc = parse_cols(p, len, 16 + ng * 8, n, ng, ncols, cols, why, whylen);
	if (rc)
		return rc;
	struct gt_event stage_buf[SUB], *stage = NULL;   /* 24 KiB */
	if (gt_store_budget(s)) {
		memset(stage_buf, 0, sizeof(stage_buf));
		stage = stage_buf;
	}
	size_t off = 0;
	for (size_t j = 0; j < ng; j++) {
		uint32_t lane = gtfile_get32(gp + 8 * j), cnt = gtfile_get32(gp + 8 * j + 4);
		struct gt_lane *l = gt_store_lane_at(s, lane);
		if (l->cap - l->n < cnt) {
			/* no index (cut-off file): grow geometrically, trimmed at the end */
			size_t more = l->n / 2 > cnt ? l->n / 2 : cnt;
			if (gt_store_reserve(s, lane, more)) {
				snprintf(why, whylen, "out of memory");
				return -ENOMEM;
			}
		}
		uint32_t mask = 0;
		for (size_t i = 0; i < cnt; i += SUB) {
			size_t k = cnt - i < SUB ? cnt - i : SUB;
			/* under a budget, staged and written to the cache file
			 * (gt_store_copy_in) rather than through its mapping: no
			 * write fault per page, and nothing mapped to trim */
			struct gt_event *e = stage ? stage : l->ev + l->n + i;
			rc = decode_sub(cols, j, off + i, k, i == 0, e, lane, s, &mask, why, whylen);
			if (rc)
				return rc;
			if (stage && (rc = gt_store_copy_in(s, l->ev + l->n + i, stage,
							    k * sizeof(*stage)))) {
				snprintf(why, whylen, "writing the cache file: %s", strerror(-rc));
				return rc;
			}
		}
		l->n += cnt;
		l->kinds_mask |= mask;
		off += cnt;
	}
	*n_out = n;
	return 0;
}
