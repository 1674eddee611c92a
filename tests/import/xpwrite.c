/*
 * xpwrite.c - the tests' XPlane writer (see xpwrite.h): messages filled in
 * with protobuf-c's initializers, arrays grown one item at a time, every
 * block remembered for xpw_reset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "xpwrite.h"

static void **blocks;
static size_t nblocks, capblocks;

static void *keep(void *p)
{
	if (nblocks == capblocks) {
		capblocks = capblocks ? capblocks * 2 : 256;
		blocks = realloc(blocks, capblocks * sizeof(*blocks));
	}
	blocks[nblocks++] = p;
	return p;
}

static void *zalloc(size_t n)
{
	return keep(calloc(1, n));
}

static char *sdup(const char *s)
{
	return keep(strdup(s ? s : ""));
}

/* append item to a pointer array of n items (arrays made only here: their
 * room is the power of two at or above n, doubled when n reaches it) */
static void push(void ***arr, size_t *n, void *item)
{
	if ((*n & (*n - 1)) == 0) {
		void **na = zalloc((*n ? *n * 2 : 1) * sizeof(*na));
		if (*n)
			memcpy(na, *arr, *n * sizeof(*na));
		*arr = na;
	}
	(*arr)[(*n)++] = item;
}

void xpw_reset(void)
{
	for (size_t i = 0; i < nblocks; i++)
		free(blocks[i]);
	free(blocks);
	blocks = NULL;
	nblocks = capblocks = 0;
}

XSpace *xpw_space(const char *hostname)
{
	XSpace *sp = zalloc(sizeof(*sp));
	tensorflow__profiler__xspace__init(sp);
	if (hostname)
		push((void ***)&sp->hostnames, &sp->n_hostnames, sdup(hostname));
	return sp;
}

XPlane *xpw_plane(XSpace *sp, const char *name)
{
	XPlane *p = zalloc(sizeof(*p));
	tensorflow__profiler__xplane__init(p);
	p->id = (int64_t)sp->n_planes;
	p->name = sdup(name);
	push((void ***)&sp->planes, &sp->n_planes, p);
	return p;
}

int64_t xpw_evmeta(XPlane *p, const char *name, const char *display)
{
	Tensorflow__Profiler__XPlane__EventMetadataEntry *e = zalloc(sizeof(*e));
	Tensorflow__Profiler__XEventMetadata *m = zalloc(sizeof(*m));
	tensorflow__profiler__xplane__event_metadata_entry__init(e);
	tensorflow__profiler__xevent_metadata__init(m);
	m->id = (int64_t)p->n_event_metadata + 1;
	m->name = sdup(name);
	m->display_name = sdup(display);
	e->key = m->id;
	e->value = m;
	push((void ***)&p->event_metadata, &p->n_event_metadata, e);
	return m->id;
}

int64_t xpw_statmeta(XPlane *p, const char *name)
{
	for (size_t i = 0; i < p->n_stat_metadata; i++)
		if (!strcmp(p->stat_metadata[i]->value->name, name))
			return p->stat_metadata[i]->key;
	Tensorflow__Profiler__XPlane__StatMetadataEntry *e = zalloc(sizeof(*e));
	Tensorflow__Profiler__XStatMetadata *m = zalloc(sizeof(*m));
	tensorflow__profiler__xplane__stat_metadata_entry__init(e);
	tensorflow__profiler__xstat_metadata__init(m);
	m->id = (int64_t)p->n_stat_metadata + 1000;
	m->name = sdup(name);
	e->key = m->id;
	e->value = m;
	push((void ***)&p->stat_metadata, &p->n_stat_metadata, e);
	return m->id;
}

XLine *xpw_line(XPlane *p, int64_t id, const char *name, int64_t ts_ns)
{
	XLine *l = zalloc(sizeof(*l));
	tensorflow__profiler__xline__init(l);
	l->id = id;
	l->name = sdup(name);
	l->timestamp_ns = ts_ns;
	push((void ***)&p->lines, &p->n_lines, l);
	return l;
}

XEvent *xpw_event(XLine *l, int64_t metadata_id, int64_t offset_ps, int64_t duration_ps)
{
	XEvent *e = zalloc(sizeof(*e));
	tensorflow__profiler__xevent__init(e);
	e->metadata_id = metadata_id;
	e->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
	e->offset_ps = offset_ps;
	e->duration_ps = duration_ps;
	push((void ***)&l->events, &l->n_events, e);
	return e;
}

static Tensorflow__Profiler__XStat *stat(XPlane *p, XEvent *e, const char *name)
{
	Tensorflow__Profiler__XStat *s = zalloc(sizeof(*s));
	tensorflow__profiler__xstat__init(s);
	s->metadata_id = xpw_statmeta(p, name);
	if (e)
		push((void ***)&e->stats, &e->n_stats, s);
	else
		push((void ***)&p->stats, &p->n_stats, s);
	return s;
}

void xpw_stat_int(XPlane *p, XEvent *e, const char *name, int64_t v)
{
	Tensorflow__Profiler__XStat *s = stat(p, e, name);
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	s->int64_value = v;
}

void xpw_stat_str(XPlane *p, XEvent *e, const char *name, const char *v)
{
	Tensorflow__Profiler__XStat *s = stat(p, e, name);
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
	s->str_value = sdup(v);
}

uint8_t *xpw_pack(const XSpace *sp, size_t *len)
{
	*len = tensorflow__profiler__xspace__get_packed_size(sp);
	uint8_t *b = zalloc(*len + 1);
	tensorflow__profiler__xspace__pack(sp, b);
	return b;
}

int xpw_write(const XSpace *sp, const char *path)
{
	size_t len;
	uint8_t *b = xpw_pack(sp, &len);
	size_t pl = strlen(path);
	if (pl > 3 && !strcmp(path + pl - 3, ".gz")) {
		gzFile g = gzopen(path, "wb");
		if (!g)
			return -1;
		int ok = gzwrite(g, b, (unsigned)len) == (int)len;
		return gzclose(g) == Z_OK && ok ? 0 : -1;
	}
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int ok = fwrite(b, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}
