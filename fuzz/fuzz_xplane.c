/*
 * fuzz_xplane.c - libFuzzer target for the XPlane importer: any bytes
 * (plain or gzip) are imported as a serialized XSpace into a fresh store
 * through the in-memory entry point; when that succeeds the store is also
 * exported to Chrome JSON.  Crashes, hangs, leaks and huge allocations are
 * bugs; "not an XPlane profile" is the expected outcome.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "gtrace/export.h"
#include "gtrace/import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gt_store *s = gt_store_new();
	if (!s)
		return 0;
	struct gt_load_opts o = { .flags = GT_LOAD_QUIET };
	char err[256];
	if (gt_xplane_import_mem("fuzz.xplane.pb", data, size, &o, s, err, sizeof(err)) == 0) {
		char *txt;
		size_t len;
		if (gt_export_chrome_mem(s, NULL, &txt, &len) == 0)
			free(txt);
	}
	gt_store_free(s);
	return 0;
}
