/*
 * gtfile_sumpage.h - the pages of the summary's big levels (pages chunk,
 * type 14): the directory read at open, pages read from the file when a
 * row of the trace view needs them.  Private to core/file/.
 */
#ifndef GTRACE_GTFILE_SUMPAGE_H
#define GTRACE_GTFILE_SUMPAGE_H

#include "gtfile_priv.h"
#include "gtrace/lsum.h"

struct gtfile_sumdir {
	int64_t origin_ns, base_ns;
	int nlev;
	struct gt_lsum_page *pg;   /* by rising file offset (key) */
	size_t n;
};

/* parse a pages chunk's payload into d (d->pg malloc'd); 0, -ENOMEM, or
 * -EINVAL with the reason in why */
int gtfile_sumdir_parse(const unsigned char *p, size_t len, struct gtfile_sumdir *d, char *why,
			size_t whylen);
void gtfile_sumdir_free(struct gtfile_sumdir *d);
/* 1 when a page of d starts at file offset off */
int gtfile_sumdir_has(const struct gtfile_sumdir *d, uint64_t off);

/* hand d's pages to m (geometry checked), read on demand from a dup of fd
 * (a file of len bytes named name, nstr strings); d's pages stay d's.
 * 0, -ENOMEM, or -EINVAL with the reason in why */
int gtfile_sumpage_attach(struct gt_lsum *m, const struct gtfile_sumdir *d, int fd, uint64_t len,
			  const char *name, size_t nstr, char *why, size_t whylen);

#endif
