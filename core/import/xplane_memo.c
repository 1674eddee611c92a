/*
 * xplane_memo.c - an event's stats read from their packed bytes, each stat
 * unpacked by protobuf-c once per distinct byte string of the plane.
 *
 * Most stats of a profile repeat byte for byte (a kernel_details ref, a
 * context_id, a group_id shared by thousands of events); only a few are
 * unique (correlation_id, ids).  An XStat unpack costs protobuf-c some 600
 * instructions, a look-up here a few dozen, so the memo keeps what a short
 * stat says (its role's contribution to struct xpstats) keyed by its
 * packed bytes in a direct-mapped table.  Decoding stays protobuf-c's:
 * equal bytes are an equal message.  The table belongs to the current
 * plane (stat ids are per plane) and is emptied with it.  Stats of a role
 * that is always unique (correlation_id), or of a metadata id whose values
 * seldom repeat, are not stored, so they do not push the useful ones out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "xplane_priv.h"

#define XPM_SLOTS 512u             /* power of two */

struct xpmemo_ent {
	uint8_t len;               /* key bytes, 0 = empty slot */
	uint8_t key[XPM_KEY];
	struct xpstat1 v;
};

/* a hash of a short key, eight bytes at a time (FNV-1a byte by byte was
 * 7 % of the import's instructions) */
static uint32_t hash(const uint8_t *p, size_t n)
{
	uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15u;
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdu;
		h ^= h >> 32;
	}
	/* the last 1..7 bytes by two overlapping loads (no byte loop) */
	uint64_t t = 0;
	if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, p, 4);
		memcpy(&b, p + n - 4, 4);
		t = a | (uint64_t)b << 32;
	} else if (n) {
		t = p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16;
	}
	h = (h ^ t) * 0xc4ceb9fe1a85ec53u;
	h ^= h >> 29;
	return (uint32_t)(h ^ (h >> 32));
}

void xplane_memo_clear(struct xpmap *m)
{
	if (m->memo)
		memset(m->memo, 0, XPM_SLOTS * sizeof(*m->memo));
}

void xplane_memo_free(struct xpmap *m)
{
	free(m->memo);
	m->memo = NULL;
}

/* what the stat of bytes (p, n) says: from the memo, else unpacked into
 * the event arena and remembered; 0, -EINVAL (not an XStat) or -ENOMEM */
static int stat1(struct xpmap *m, const uint8_t *p, size_t n, struct xpstat1 *r)
{
	struct xpmemo_ent *e = NULL;
	if (n && n <= XPM_KEY) {
		if (!m->memo && !(m->memo = calloc(XPM_SLOTS, sizeof(*m->memo))))
			return -ENOMEM;
		e = &m->memo[hash(p, n) & (XPM_SLOTS - 1)];
		if (e->len == n && !memcmp(e->key, p, n)) {
			*r = e->v;
			if (r->stm != UINT32_MAX)
				m->stm[r->stm].hits++;
			return 0;
		}
	}
	Tensorflow__Profiler__XStat *x = tensorflow__profiler__xstat__unpack(&m->earena.pa, n, p);
	if (!x)
		return -EINVAL;
	int rc = xplane_meta_stat1(m, x, r);
	if (rc || !e || r->stm == UINT32_MAX || r->role == XS_CORR)
		return rc;
	struct xpst *sm = &m->stm[r->stm];
	/* a metadata id whose values seldom repeat: stop storing them */
	if (sm->stored >= 64 && sm->hits < sm->stored / 4)
		return 0;
	sm->stored++;
	e->len = (uint8_t)n;
	memcpy(e->key, p, n);
	e->v = *r;
	return 0;
}

int xplane_memo_stats(struct xpmap *m, size_t n, const ProtobufCBinaryData *stats,
		      struct xpstats *o)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < n; i++) {
		struct xpstat1 r;
		int rc = stat1(m, stats[i].data, stats[i].len, &r);
		if (rc)
			return rc;
		switch (r.role) {
		case XS_CORR:
			o->corr = r.ival > 0 && r.ival <= UINT32_MAX ? (uint32_t)r.ival : 0;
			o->have_corr = o->corr != 0;
			break;
		case XS_KDET:
			o->have_kernel = 1;
			o->kconf_id = r.kconf_id;
			break;
		case XS_MCPY:
		case XS_MSET:
			*(r.role == XS_MCPY ? &o->have_memcpy : &o->have_memset) = 1;
			o->bytes = r.bytes;
			o->copy_flags |= r.copy_flags;
			break;
		case XS_GROUP:
			o->have_group = 1;
			o->group = r.ival;
			break;
		case XS_STEPNUM:
			o->have_stepnum = 1;
			o->stepnum = r.ival;
			break;
		case XS_CTX:
			o->ctx = r.sval;
			break;
		}
	}
	return 0;
}
