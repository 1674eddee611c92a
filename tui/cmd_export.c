/*
 * cmd_export.c - 'gtrace export PATH... -o OUT.json[.gz]': any input that
 * gt_load opens (capture, Kineto JSON, nsys SQLite, directory) written as
 * Chrome trace JSON for Perfetto / chrome://tracing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "gtrace/export.h"
#include "gtrace/load.h"

static void help(void)
{
	printf("usage: gtrace export PATH... -o OUT.json[.gz] [--no-flows] [--gzip-level N] [--run NAME] [--force]\n\n"
	       "Writes the trace as Chrome trace JSON (opens in ui.perfetto.dev and\n"
	       "chrome://tracing): one process per rank and GPU or host process, one\n"
	       "thread per stream or host thread, Kineto categories (kernel, gpu_memcpy,\n"
	       "cuda_runtime, cpu_op, ...), kernel and copy args, and ac2g flow arrows\n"
	       "from launch calls to their GPU work.  Times are exact to the nanosecond.\n"
	       "PATH is a .gtrace capture, a Kineto/Chrome JSON(.gz), an nsys .sqlite or\n"
	       "a directory of per-rank trace files, a TensorFlow/JAX .xplane.pb[.gz] or a\n"
	       "TensorBoard log directory (its newest run, or --run NAME); several JSON or\n"
	       "XPlane PATHs are merged as ranks.\n"
	       "An OUT ending in .gz is gzip-compressed.  An existing OUT is replaced only\n"
	       "with --force; a failed export leaves no file.\n");
}

int cmd_export(int argc, char **argv)
{
	const char *out = NULL;
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	size_t n = 0;
	struct gt_export_opts eo = { .flags = GT_EXPORT_KEEP };
	const char *run = NULL;
	int rc = 0;
	if (!paths) {
		cmd_error("out of memory");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		if (cmd_is_help(argv[i])) {
			help();
			goto done;
		} else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
			if (++i >= argc) {
				rc = cmd_usage_error("export", "-o needs a file name");
				goto done;
			}
			out = argv[i];
		} else if (!strcmp(argv[i], "--force")) {
			eo.flags &= ~GT_EXPORT_KEEP;
		} else if (!strcmp(argv[i], "--run")) {
			if (++i >= argc) {
				rc = cmd_usage_error("export", "--run needs the name of a run");
				goto done;
			}
			run = argv[i];
		} else if (!strcmp(argv[i], "--no-flows")) {
			eo.flags |= GT_EXPORT_NO_FLOWS;
		} else if (!strcmp(argv[i], "--gzip-level")) {
			if (++i >= argc || atoi(argv[i]) < 1 || atoi(argv[i]) > 9) {
				rc = cmd_usage_error("export", "--gzip-level needs a number from 1 to 9");
				goto done;
			}
			eo.gzip_level = atoi(argv[i]);
		} else if (argv[i][0] == '-' && argv[i][1]) {
			rc = cmd_usage_error("export", "unknown option '%s'", argv[i]);
			goto done;
		} else {
			paths[n++] = argv[i];
		}
	}
	if (!n) {
		rc = cmd_usage_error("export", "no input given");
		goto done;
	}
	if (!out) {
		rc = cmd_usage_error("export", "no output given (-o OUT.json)");
		goto done;
	}
	struct gt_load_opts lo = { .flags = GT_LOAD_PROGRESS, .run = run };
	struct gt_store *s = NULL;
	char err[1024] = "";
	if (gt_load(paths, n, &lo, &s, err, sizeof(err))) {
		cmd_error("%s", err);
		rc = 1;
		goto done;
	}
	if (gt_export_chrome(s, out, &eo, err, sizeof(err))) {
		cmd_error("%s", err);
		rc = 1;
	}
	gt_store_free(s);
done:
	free(paths);
	return rc;
}
