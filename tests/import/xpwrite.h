/*
 * xpwrite.h - XPlane files for the tests, built as protobuf-c messages from
 * core/import/xplane.proto and packed by protobuf-c (no hand encoding).
 * Everything allocated lives until xpw_reset().
 */
#ifndef GTRACE_TEST_XPWRITE_H
#define GTRACE_TEST_XPWRITE_H

#include <stddef.h>
#include <stdint.h>
#include "xplane.pb-c.h"

typedef Tensorflow__Profiler__XSpace XSpace;
typedef Tensorflow__Profiler__XPlane XPlane;
typedef Tensorflow__Profiler__XLine XLine;
typedef Tensorflow__Profiler__XEvent XEvent;

XSpace *xpw_space(const char *hostname);
XPlane *xpw_plane(XSpace *sp, const char *name);
/* event metadata named name (display may be NULL); its id */
int64_t xpw_evmeta(XPlane *p, const char *name, const char *display);
/* stat metadata named name; its id (same name, same id) */
int64_t xpw_statmeta(XPlane *p, const char *name);
XLine *xpw_line(XPlane *p, int64_t id, const char *name, int64_t ts_ns);
XEvent *xpw_event(XLine *l, int64_t metadata_id, int64_t offset_ps, int64_t duration_ps);
/* stats on an event (p gives the stat metadata) or on the plane (e NULL) */
void xpw_stat_int(XPlane *p, XEvent *e, const char *name, int64_t v);
void xpw_stat_str(XPlane *p, XEvent *e, const char *name, const char *v);
/* the packed bytes (valid until xpw_reset) */
uint8_t *xpw_pack(const XSpace *sp, size_t *len);
/* write to a file (gzip when the name ends in .gz); 0 on success */
int xpw_write(const XSpace *sp, const char *path);
void xpw_reset(void);

#endif
