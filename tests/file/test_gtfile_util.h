/*
 * test_gtfile_util.h - helpers shared by the .gtrace tests: a hand-built
 * store holding every event kind and every table, a field-by-field store
 * comparison, file slurping and a raw chunk builder for crafted files.
 */
#ifndef TEST_GTFILE_UTIL_H
#define TEST_GTFILE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "gtrace/gtfile.h"

/* a store with every kind, kconf, nccl, devices, ranks, drops, metadata;
 * `scale` multiplies the events per lane; finished when finish != 0 */
struct gt_store *tgf_build(int scale, int finish);
/* events of the built store in insertion order (for writer_add) */
const struct gt_event *tgf_events(size_t *n);
/* assert every table, lane and event of a and b identical */
void tgf_assert_same(const struct gt_store *a, const struct gt_store *b);
/* each lane of cut holds a prefix of the same lane of full, tables too */
void tgf_assert_prefix(const struct gt_store *full, const struct gt_store *cut);
/* file contents (malloc'd) */
unsigned char *tgf_slurp(const char *path, size_t *len);
/* a temp path unique to the test process */
const char *tgf_tmp(const char *tag);
/* append a chunk with CRCs to buf (raw payload, not compressed) */
size_t tgf_chunk(unsigned char *buf, size_t at, uint32_t type, const void *pay, size_t n);
/* the 64-byte file header with a correct CRC */
size_t tgf_header(unsigned char *buf, unsigned major, unsigned minor, const char *ver);
/* recompute the CRCs of the chunk header at `at` (after patching) */
void tgf_fix_chunk(unsigned char *buf, size_t at);

#endif
