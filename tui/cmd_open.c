/*
 * cmd_open.c - 'gtrace open PATH...': load any input (progress on stderr
 * while loading) and run the viewer on it.  Inputs whose importer draws no
 * progress bar of its own (.gtrace, nsys SQLite, directories) load on a
 * thread while this one shows the elapsed time and size on stderr.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "gtrace/load.h"
#include "cmd.h"
#include "openbg.h"
#include "netsess.h"
#include "runalign.h"
#include "ui.h"

/* the --help text */
static void usage(FILE *f)
{
	fprintf(f, "usage: gtrace open [--param-bytes B --link-gbps X] [--run NAME] [--memory SIZE] PATH...\n\n"
		   "Open a .gtrace capture, a Kineto/Chrome trace JSON (.json or .json.gz), an nsys\n"
		   "SQLite export, a directory of per-rank trace files, a TensorFlow/JAX XPlane\n"
		   "profile (.xplane.pb[.gz]) or a TensorBoard log directory in the terminal viewer.\n"
		   "Press ? in the viewer for its keys; docs/viewer.md describes them.\n\n"
		   "  --param-bytes B  gradient bytes all-reduced per step (97.5M, 1G: 1024-based)\n"
		   "  --link-gbps X    link bandwidth, GB/s: with --param-bytes the overview\n"
		   "                   compares collective time with the expected B / X\n"
		   "  --run NAME       the run of a TensorBoard log directory to open (default:\n"
		   "                   the newest, said on stderr)\n"
		   "  --memory SIZE    decoded events kept in memory (256M, 1G; default: 1 GiB or\n"
		   "                   a quarter of RAM, whichever is smaller); the rest waits in\n"
		   "                   a cache file in $TMPDIR (/var/tmp) and is read back on demand;\n"
		   "                   0: no budget\n"
		   "  -                read a .gtrace stream from stdin as it arrives (from gtrace record)\n"
		   "  --live CMD...    the rest of the line: commands whose stdout is a .gtrace stream\n"
		   "                   (gtrace record writing to stdout, run over ssh), one node each;\n"
		   "                   options go before --live (a command starting with '-' is\n"
		   "                   refused); - and --live need a terminal (gtrace record records\n"
		   "                   nodes headless)\n"
		   "  --align-clocks   apply the residual clock offsets between nodes estimated from\n"
		   "                   NCCL collectives (otherwise only shown)\n"
		   "Several .gtrace files (run-*.gtrace, one per node) open as one job.\n");
}

struct load_job {
	const char *const *paths;
	size_t n;
	struct gt_load_opts lo;
	struct gt_store *s;
	char err[512];
	int rc;
	volatile int done;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* the loader thread: gt_load, then signal */
static void *load_main(void *arg)
{
	struct load_job *j = arg;
	j->rc = gt_load(j->paths, j->n, &j->lo, &j->s, j->err, sizeof(j->err));
	pthread_mutex_lock(&j->mu);
	j->done = 1;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* seconds since t0 */
static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* the "loading" line: name, size, share read (pct < 0: not known), elapsed
 * seconds and a spinner */
static void progress_line(const char *path, double mb, int pct, double secs, char *buf, size_t len)
{
	static const char spin[] = "|/-\\";
	const char *base = strrchr(path, '/');
	base = base && base[1] ? base + 1 : path;
	if (mb > 0 && pct >= 0)
		snprintf(buf, len, "gtrace: loading %s (%.1f MB) %3d %% %c %.1f s", base, mb, pct,
			 spin[(int)(secs * 5) % 4], secs);
	else if (mb > 0)
		snprintf(buf, len, "gtrace: loading %s (%.1f MB) %c %.1f s", base, mb,
			 spin[(int)(secs * 5) % 4], secs);
	else
		snprintf(buf, len, "gtrace: loading %s %c %.1f s", base, spin[(int)(secs * 5) % 4], secs);
}

/* gt_load, with a live "loading" line on a terminal when the importer has none */
static int load_with_progress(const char *const *paths, size_t n, const char *run,
			      size_t memory, struct gt_store **out, char *err, size_t errlen)
{
	static _Atomic uint64_t done_bytes;
	atomic_store(&done_bytes, 0);
	struct load_job j = { .paths = paths, .n = n,
			      .lo = { .flags = GT_LOAD_PROGRESS, .progress_bytes = &done_bytes,
				      .run = run, .memory_bytes = memory != SIZE_MAX ? memory :
							     gt_default_memory_budget() } };
	if (memory == SIZE_MAX)
		j.lo.flags |= GT_LOAD_MEMORY_SOFT;
	char why[256];
	enum gt_format f = n == 1 ? gt_load_detect(paths[0], why, sizeof(why)) : GT_FMT_DIRECTORY;
	pthread_t th;
	if (!isatty(2) || f == GT_FMT_KINETO_JSON || f == GT_FMT_UNKNOWN ||
	    pthread_mutex_init(&j.mu, NULL)) {
		int rc = gt_load(paths, n, &j.lo, out, err, errlen);
		return rc;
	}
	/* a .gtrace's warning (a cut-off file) comes back in err: printed below,
	   after the loading line is cleared, not into the middle of it */
	if (f == GT_FMT_GTRACE)
		j.lo.flags |= GT_LOAD_QUIET;
	pthread_cond_init(&j.cv, NULL);
	if (pthread_create(&th, NULL, load_main, &j)) {
		pthread_cond_destroy(&j.cv);
		pthread_mutex_destroy(&j.mu);
		j.lo.flags &= ~GT_LOAD_QUIET;
		return gt_load(paths, n, &j.lo, out, err, errlen);
	}
	struct stat st;
	double mb = n == 1 && !stat(paths[0], &st) && S_ISREG(st.st_mode) ? (double)st.st_size / 1e6 : 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* after 0.3 s (tests set GTRACE_PROGRESS_DELAY_MS=0 to see it at once) */
	const char *dv = getenv("GTRACE_PROGRESS_DELAY_MS");
	double delay = dv && *dv ? atof(dv) / 1000.0 : 0.3;
	int shown = 0;
	pthread_mutex_lock(&j.mu);
	for (int first = 1; !j.done; first = 0) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += 200 * 1000 * 1000;
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
		if (!first || delay > 0)
			pthread_cond_timedwait(&j.cv, &j.mu, &dl);
		double secs = since(&t0);
		if (!j.done && secs >= delay) {
			char line[512];
			/* a .gtrace reports the bytes walked; the other inputs do not */
			int pct = -1;
			if (f == GT_FMT_GTRACE && mb > 0) {
				double done = (double)atomic_load(&done_bytes) / 1e6;
				pct = (int)(100.0 * done / mb);
				pct = pct > 100 ? 100 : pct;
			}
			progress_line(paths[0], mb, pct, secs, line, sizeof(line));
			fprintf(stderr, "\r%s%s\033[K", line, n > 1 ? " (+ more)" : "");
			fflush(stderr);
			shown = 1;
		}
	}
	pthread_mutex_unlock(&j.mu);
	pthread_join(th, NULL);
	pthread_cond_destroy(&j.cv);
	pthread_mutex_destroy(&j.mu);
	if (shown) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
	*out = j.s;
	snprintf(err, errlen, "%s", j.err);
	if (j.rc == 0 && (j.lo.flags & GT_LOAD_QUIET) && j.err[0])
		fprintf(stderr, "gtrace: warning: %s\n", j.err);
	return j.rc;
}

/* load the paths and run the viewer on them; the exit status */
static int open_paths(const char *const *paths, int np, const char *run, uint64_t param_bytes,
		      double link_gbps, size_t memory)
{
	/* no terminal: say so before a long load, not after it (a path that cannot
	 * be opened is still reported first, as "FILE: problem") */
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		char why[512];
		for (int i = 0; i < np; i++) {
			why[0] = 0;
			if (gt_load_detect(paths[i], why, sizeof(why)) == GT_FMT_UNKNOWN && why[0]) {
				fprintf(stderr, "gtrace: %s\n", why);
				return 1;
			}
		}
		fprintf(stderr, "gtrace: the viewer needs a terminal (try 'gtrace stats')\n");
		return 1;
	}
	/* a big .gtrace with a summary: first frame at once, events behind it */
	struct openbg *bg = NULL;
	struct ui_source bsrc = { .name = paths[0], .param_bytes = param_bytes,
				  .link_gbps = link_gbps };
	if (np == 1 && openbg_try(paths[0], memory, &bsrc, &bg)) {
		int brc = ui_run(&bsrc);
		openbg_done(bg);
		gt_store_free(bsrc.store);
		return brc;
	}
	struct gt_store *s = NULL;
	char err[512];
	int rc = load_with_progress(paths, (size_t)np, run, memory, &s, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "gtrace: %s\n", err);
		return 1;
	}
	/* separate runs opened together start together */
	char note[96];
	if (runalign_starts(s, note, sizeof(note))) {
		fprintf(stderr, "gtrace: out of memory\n");
		gt_store_free(s);
		return 1;
	}
	char name[256];
	/* a cut-off file says so where the user looks (its warning went to
	 * stderr, behind the screen) */
	if (gt_store_meta_get(s, GT_META_CUT_OFF))
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%scut off", note[0] ? ", " : "");
	if (np == 1)
		snprintf(name, sizeof(name), "%s%s%s", paths[0], note[0] ? ", " : "", note);
	else
		snprintf(name, sizeof(name), "%s (+%d more)%s%s", paths[0], np - 1, note[0] ? ", " : "",
			 note);
	struct ui_source src = { .name = name, .store = s, .param_bytes = param_bytes,
				 .link_gbps = link_gbps };
	rc = ui_run(&src);
	gt_store_free(s);
	return rc;
}

int cmd_open(int argc, char **argv)
{
	/* options anywhere before "--", paths in between (as `gtrace stats`) */
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	int np = 0, only_paths = 0;
	uint64_t param_bytes = 0;
	double link_gbps = 0;
	const char *run = NULL;
	char **live = NULL;
	int nlive = 0, align = 0;
	size_t memory = SIZE_MAX;   /* SIZE_MAX: the default budget; 0: none */
	if (!paths) {
		cmd_error("out of memory");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		if (only_paths || a[0] != '-' || !a[1]) {
			paths[np++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_paths = 1;
			continue;
		}
		if (!strcmp(a, "--align-clocks")) {
			align = 1;
			continue;
		}
		if (!strcmp(a, "--live")) {
			live = argv + i + 1;
			nlive = argc - i - 1;
			if (!nlive) {
				free(paths);
				return cmd_usage_error("open", "--live needs at least one command");
			}
			/* the rest of the line is commands: an option there was meant
			 * for open (`--live 'cmd' --memory 1K` ran `--memory` as a node) */
			for (int k = 0; k < nlive; k++)
				if (live[k][0] == '-') {
					free(paths);
					return cmd_usage_error("open", "--live takes the rest of the line as "
							       "commands: '%s' is an option; give options "
							       "before --live", live[k]);
				}
			break;
		}
		if (cmd_is_help(a)) {
			usage(stdout);
			free(paths);
			return 0;
		}
		int which = !strncmp(a, "--param-bytes", 13) && (a[13] == 0 || a[13] == '=') ? 1 :
			    !strncmp(a, "--link-gbps", 11) && (a[11] == 0 || a[11] == '=') ? 2 :
			    !strncmp(a, "--run", 5) && (a[5] == 0 || a[5] == '=') ? 3 :
			    !strncmp(a, "--memory", 8) && (a[8] == 0 || a[8] == '=') ? 4 : 0;
		int bad = 0;
		if (!which) {
			bad = cmd_usage_error("open", "unknown option '%s'", a);
		} else {
			const char *eq = strchr(a, '=');
			if (eq)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				bad = cmd_usage_error("open", "%s needs a value", a);
		}
		if (!bad && which == 1 && cmd_parse_bytes(val, &param_bytes))
			bad = cmd_usage_error("open", "--param-bytes needs a byte count like 4096, 97.5M "
					      "or 2G, not '%s'", val);
		if (!bad && which == 2 && cmd_parse_gbps(val, &link_gbps))
			bad = cmd_usage_error("open", "--link-gbps needs a bandwidth in GB/s like 25 or "
					      "450, not '%s'", val);
		if (!bad && which == 3)
			run = val;
		if (!bad && which == 4 && gt_parse_size(val, &memory))
			bad = cmd_usage_error("open", "--memory: '%s' is not 0 (no bound) or a size (e.g. 256M, 2G)",
					      val);
		if (bad) {
			free(paths);
			return bad;
		}
	}
	int stdin_stream = 0;
	for (int i = 0; i < np; i++)
		stdin_stream |= !strcmp(paths[i], "-");
	int rc = !param_bytes != !(link_gbps > 0) ?
		 cmd_usage_error("open", "--param-bytes and --link-gbps go together") :
		 np == 0 && !nlive ? cmd_usage_error("open", "no PATH given") : -1;
	if (rc < 0 && (nlive || stdin_stream))
		rc = netsess_open_live(paths, np, live, NULL, nlive, align, memory, NULL, 0);
	else if (rc < 0 && netsess_all_gtrace(paths, np))
		rc = netsess_open_files(paths, np, align);
	if (rc < 0)
		rc = open_paths(paths, np, run, param_bytes, link_gbps, memory);
	free(paths);
	return rc;
}
