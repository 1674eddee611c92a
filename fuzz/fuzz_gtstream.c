/*
 * fuzz_gtstream.c - libFuzzer target for .gtrace streams (gtstream) and
 * their merge (gtjob): the input is fed as two nodes' streams, each in
 * pieces of a size the first byte chooses, then both are closed.  Crashes,
 * hangs, leaks and huge allocations are bugs; a bad stream is an expected
 * outcome.  One invariant is checked against the file reader: when
 * gt_file_read_mem accepts the bytes, the stream takes them too, with the
 * same number of events.
 *
 * As in fuzz_gtfile.c, inputs whose last byte is odd get their CRCs
 * repaired first so that mutations reach the decoders (gtcrc.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace/gtfile.h"
#include "gtrace/gtjob.h"
#include "gtcrc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t step = 1 + (size_t)data[0] * 37;   /* 1 .. 9436 bytes a piece */
	data++;
	size--;
	uint8_t *copy;
	data = gtcrc_input(data, size, &copy);
	if (!data)
		return 0;
	char err[512];
	struct gt_file_info info;
	struct gt_store *ref = gt_store_new(), *s = gt_store_new();
	struct gt_job *j = s && !gt_store_finish(s) ? gt_job_new(s) : NULL;
	if (!ref || !j)
		goto out;
	int fok = gt_file_read_mem(data, size, "f", ref, &info, err, sizeof(err)) == 0;
	gt_job_add_node(j, "a");
	gt_job_add_node(j, "b");
	long got[2] = { 0, 0 };
	for (size_t off = 0; off < size; off += step) {
		size_t k = size - off < step ? size - off : step;
		for (int i = 0; i < 2; i++) {
			/* node b takes the pieces in halves: another split */
			size_t h = i ? k / 2 : k;
			long r = gt_job_feed(j, i, data + off, h, NULL, NULL);
			if (i && r >= 0 && k - h) {
				long r2 = gt_job_feed(j, i, data + off + h, k - h, NULL, NULL);
				r = r2 < 0 ? r2 : r + r2;
			}
			if (r > 0)
				got[i] += r;
		}
	}
	gt_job_close(j, 0);
	gt_job_close(j, 1);
	gt_store_finish(s);
	gt_job_align(j);
	gt_job_apply(j);
	gt_job_meta(j);
	if (fok) {
		struct gt_job_node_info in;
		gt_job_node(j, 0, &in);
		if (in.state == GT_STREAM_ERROR || (uint64_t)got[0] != info.events ||
		    (uint64_t)got[1] != info.events) {
			fprintf(stderr, "file reader: %llu events; stream: %ld and %ld (%s)\n",
				(unsigned long long)info.events, got[0], got[1], in.msg);
			abort();
		}
	}
out:
	gt_job_free(j);
	gt_store_free(s);
	gt_store_free(ref);
	free(copy);
	return 0;
}
