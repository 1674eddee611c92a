/*
 * test_cli_livefile.c - live captures stream to a file (issue 16): the
 * live commands (record, run, attach, demo) write every event once, to
 * --record FILE or to a temporary file that is gone at exit; a gtrace
 * killed with SIGKILL at any moment leaves a file that opens up to its
 * last complete chunk; --ring DURATION keeps the last DURATION and counts
 * what it discarded.  Truth: the simulated trainer's own count of the
 * events it generated and published (`gtrace demo --trainer`, which says
 * "N events generated, M published" on stderr).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "clirun.h"

static char dir[256];
static const char *bld;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gtrace-clilive-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	bld = getenv("GTRACE_BUILD");
	cr_assert_not_null(bld, "GTRACE_BUILD not set");
}

static void teardown(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(cli_livefile, .init = setup, .fini = teardown);

/* the trainer's "M published" in text (and generated == published) */
static unsigned long long published(const char *text)
{
	const char *p = strstr(text, "events generated, ");
	cr_assert(p, "no trainer count in:\n%s", text);
	while (p > text && p[-1] != ';')
		p--;
	unsigned long long g = 0, pub = 0;
	cr_assert_eq(sscanf(p + 1, " %llu events generated, %llu published", &g, &pub), 2, "%s", text);
	cr_assert(g > 0 && g == pub, "generated %llu, published %llu", g, pub);
	return pub;
}

/* one figure of `gtrace stats FILE --report summary` as JSON (table,
 * column); a metadata value with table summary_metadata and key col */
static char *summary(const char *file, const char *table, const char *col)
{
	char args[1024], *out = NULL;
	snprintf(args, sizeof(args), "stats '%s' --report summary --format json --table %s", file, table);
	cr_assert_eq(clirun_gtrace(args, "2>/dev/null", &out), 0, "stats %s", file);
	cJSON *t = cJSON_Parse(out);
	cr_assert(t, "%s", out);
	cJSON *rows = cJSON_GetObjectItem(t, "rows"), *r;
	char *v = NULL;
	cJSON_ArrayForEach(r, rows) {
		cJSON *k = cJSON_GetObjectItem(r, "Key");
		cJSON *x = k ? (strcmp(k->valuestring, col) ? NULL : cJSON_GetObjectItem(r, "Value"))
			     : cJSON_GetObjectItem(r, col);
		if (!x)
			continue;
		if (cJSON_IsNumber(x))
			cr_assert(asprintf(&v, "%.0f", x->valuedouble) > 0);
		else
			v = strdup(x->valuestring);
		break;
	}
	cJSON_Delete(t);
	free(out);
	return v;
}

static unsigned long long file_events(const char *file)
{
	char *v = summary(file, "summary", "Events");
	cr_assert_not_null(v, "no event count of %s", file);
	unsigned long long n = strtoull(v, NULL, 10);
	free(v);
	return n;
}

/* no gtrace-live-* directory left under dir */
static void no_temp_left(void)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	struct dirent *e;
	while ((e = readdir(d)))
		cr_assert(strncmp(e->d_name, "gtrace-live-", 12), "%s/%s left behind", dir, e->d_name);
	closedir(d);
}

#define TRAINER "'%s/tui/gtrace' demo --trainer --gpus 2 --linger 0"

Test(cli_livefile, record_and_run_write_every_event, .timeout = 120)
{
	char cmd[2048], *out = NULL, f[320];
	/* record: the file is the recording */
	snprintf(f, sizeof(f), "%s/rec.gtrace", dir);
	snprintf(cmd, sizeof(cmd), "TMPDIR='%s' '%s/tui/gtrace' record -q -o '%s' --memory 128M -- "
		 TRAINER " --seconds 1.5 --rate 100000 2>&1", dir, bld, f, bld);
	cr_assert_eq(clirun_capture(cmd, &out), 0, "%s", out);
	cr_assert_eq(file_events(f), published(out), "%s", out);
	free(out);
	/* run without a terminal: records with --record, the same count */
	snprintf(f, sizeof(f), "%s/run.gtrace", dir);
	snprintf(cmd, sizeof(cmd), "TMPDIR='%s' '%s/tui/gtrace' run --record '%s' -- " TRAINER
		 " --seconds 1.5 --rate 100000 2>&1 </dev/null", dir, bld, f, bld);
	cr_assert_eq(clirun_capture(cmd, &out), 0, "%s", out);
	cr_assert_eq(file_events(f), published(out), "%s", out);
	cr_assert(strstr(out, "gtrace run: recorded "), "%s", out);
	free(out);
	/* run without --record: a temporary file, gone at exit; the status
	 * line says memory used / budget and the file's size */
	snprintf(cmd, sizeof(cmd), "TMPDIR='%s' '%s/tui/gtrace' run --memory 300M -- " TRAINER
		 " --seconds 1.5 --rate 50000 2>&1 </dev/null", dir, bld, bld);
	cr_assert_eq(clirun_capture(cmd, &out), 0, "%s", out);
	cr_assert(strstr(out, "/300.0M, file "), "%s", out);
	free(out);
	no_temp_left();
}

Test(cli_livefile, attach_and_demo_write_every_event, .timeout = 120)
{
	/* a trainer waiting for its viewer; attach records all of it */
	char cmd[2048], *out = NULL, f[320], errf[320];
	snprintf(errf, sizeof(errf), "%s/trainer.err", dir);
	snprintf(cmd, sizeof(cmd), TRAINER " --seconds 1.5 --rate 100000 --wait >/dev/null 2>'%s' & "
		 "echo $!", bld, errf);
	cr_assert_eq(clirun_capture(cmd, &out), 0);
	long pid = atol(out);
	free(out);
	cr_assert(pid > 0);
	snprintf(f, sizeof(f), "%s/att.gtrace", dir);
	for (int i = 0; i < 200; i++) {        /* its socket is up once it printed its pid */
		snprintf(cmd, sizeof(cmd), "grep -q '@gtrace-%ld' /proc/net/unix", pid);
		if (system(cmd) == 0)
			break;
		usleep(20000);
	}
	snprintf(cmd, sizeof(cmd), "TMPDIR='%s' '%s/tui/gtrace' attach %ld --record '%s' 2>&1 </dev/null",
		 dir, bld, pid, f);
	cr_assert_eq(clirun_capture(cmd, &out), 0, "%s", out);
	cr_assert(strstr(out, "gtrace attach: recorded "), "%s", out);
	free(out);
	for (int i = 0; i < 500 && kill((pid_t)pid, 0) == 0; i++)
		usleep(20000);
	snprintf(cmd, sizeof(cmd), "cat '%s'", errf);
	cr_assert_eq(clirun_capture(cmd, &out), 0);
	cr_assert_eq(file_events(f), published(out), "%s", out);
	free(out);
	/* demo: its own trainer, recorded; no temporary file left */
	snprintf(f, sizeof(f), "%s/demo.gtrace", dir);
	snprintf(cmd, sizeof(cmd), "TMPDIR='%s' '%s/tui/gtrace' demo --gpus 1 --seconds 1 --record '%s' "
		 "2>&1 </dev/null", dir, bld, f);
	cr_assert_eq(clirun_capture(cmd, &out), 0, "%s", out);
	const char *p = strstr(out, "gtrace demo: recorded ");
	cr_assert(p, "%s", out);
	cr_assert_eq(file_events(f), strtoull(p + strlen("gtrace demo: recorded "), NULL, 10), "%s", out);
	free(out);
	no_temp_left();
}

/* start `gtrace record ARGS -- trainer` in a process group of its own,
 * SIGKILL gtrace after ms, then end the trainer */
static void record_killed(const char *args, int ms)
{
	char exe[512], trainer[1024];
	snprintf(exe, sizeof(exe), "%s/tui/gtrace", bld);
	snprintf(trainer, sizeof(trainer), "%s", exe);
	pid_t p = fork();
	cr_assert(p >= 0);
	if (p == 0) {
		setpgid(0, 0);
		char line[2048];
		snprintf(line, sizeof(line), "exec '%s' record -q %s -- '%s' demo --trainer --gpus 2 "
			 "--seconds 30 --rate 200000 --linger 0 >/dev/null 2>&1", exe, args, trainer);
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
		_exit(127);
	}
	setpgid(p, p);
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
	cr_assert_eq(kill(p, SIGKILL), 0);
	int st;
	cr_assert_eq(waitpid(p, &st, 0), p);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	kill(-p, SIGKILL);                      /* the trainer, in the same group */
	usleep(100000);
}

Test(cli_livefile, kill9_leaves_a_file_that_opens, .timeout = 120)
{
	unsigned long long prev = 0;
	const int at[] = { 400, 1300, 2600 };
	for (int k = 0; k < 3; k++) {
		char f[320], args[512], *out = NULL, sargs[512];
		snprintf(f, sizeof(f), "%s/k%d.gtrace", dir, k);
		snprintf(args, sizeof(args), "-o '%s'", f);
		record_killed(args, at[k]);
		snprintf(sargs, sizeof(sargs), "stats '%s' --report summary --format csv", f);
		cr_assert_eq(clirun_gtrace(sargs, "2>&1", &out), 0, "killed at %d ms: %s", at[k], out);
		/* the file had no end written: opened up to its last complete chunk */
		cr_assert(strstr(out, "cut off after"), "%s", out);
		free(out);
		unsigned long long n = file_events(f);
		cr_assert(n > 0 || at[k] < 1000, "killed at %d ms: %llu events", at[k], n);
		cr_assert(n >= prev, "killed at %d ms: %llu events, %llu when killed earlier", at[k], n, prev);
		prev = n;
	}
	cr_assert(prev > 100000, "%llu events after 2.6 s at 200k/s", prev);
	/* a flight recorder killed: every segment left opens */
	char f[320], args[512];
	snprintf(f, sizeof(f), "%s/ring.gtrace", dir);
	snprintf(args, sizeof(args), "--ring 1s -o '%s'", f);
	record_killed(args, 2500);
	cr_assert_neq(access(f, F_OK), 0, "the ring's file appears only at its end");
	DIR *d = opendir(dir);
	struct dirent *e;
	int segs = 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "ring.gtrace.ring-", 17))
			continue;
		char sub[600], cmd[1400], *out = NULL;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		snprintf(cmd, sizeof(cmd), "for s in '%s'/seg-*.gtrace; do '%s/tui/gtrace' stats \"$s\" "
			 "--report summary --format csv >/dev/null 2>&1 || echo BAD $s; echo SEG; done",
			 sub, bld);
		cr_assert_eq(clirun_capture(cmd, &out), 0);
		cr_assert(!strstr(out, "BAD"), "%s", out);
		for (char *q = out; (q = strstr(q, "SEG")); q += 3)
			segs++;
		free(out);
	}
	closedir(d);
	cr_assert(segs >= 2, "%d segments of a 1 s ring after 2.5 s", segs);
}

Test(cli_livefile, ring_keeps_the_window_and_counts_the_rest, .timeout = 120)
{
	char cmd[2048], *out = NULL, f[320];
	snprintf(f, sizeof(f), "%s/ring.gtrace", dir);
	/* 3 s at 100k events/s of a trainer whose clock runs about 2.2x the
	 * wall: ~6.6 s of trace, a 1 s ring */
	snprintf(cmd, sizeof(cmd), "TMPDIR='%s' '%s/tui/gtrace' record -o '%s' --ring 1s -- " TRAINER
		 " --seconds 3 --rate 100000 2>&1", dir, bld, f, bld);
	cr_assert_eq(clirun_capture(cmd, &out), 0, "%s", out);
	unsigned long long pub = published(out);
	/* the status line (each second, and the closing one) says it */
	cr_assert(strstr(out, ", ring 1.0s: ") && strstr(out, " ev discarded ("), "%s", out);
	cr_assert(strstr(out, "older ones discarded by --ring") || strstr(out, "gtrace record: "), "%s", out);
	/* the closing line counts what the file holds, its ring part what
	   was discarded from it */
	char *cl = strstr(out, "gtrace record: ");
	cr_assert_not_null(cl, "%s", out);
	cl = strstr(cl, ".gtrace: ");
	unsigned long long said = cl ? strtoull(cl + 9, NULL, 10) : 0;
	unsigned long long kept = file_events(f);
	cr_assert_eq(said, kept, "the closing line says %llu events, the file holds %llu", said, kept);
	free(out);
	char *disc = summary(f, "summary_metadata", "ring_discarded_events");
	char *win = summary(f, "summary_metadata", "ring_window_ns");
	char *d0 = summary(f, "summary_metadata", "ring_discarded_from_ns");
	char *d1 = summary(f, "summary_metadata", "ring_discarded_to_ns");
	char *first = summary(f, "summary", "First start (ns)");
	char *last = summary(f, "summary", "Last end (ns)");
	cr_assert(disc && win && d0 && d1 && first && last, "metadata missing");
	unsigned long long nd = strtoull(disc, NULL, 10);
	/* never silent: what is kept and what is discarded make the whole */
	cr_assert(nd > 0, "nothing discarded");
	cr_assert_eq(kept + nd, pub, "kept %llu + discarded %llu != published %llu", kept, nd, pub);
	cr_assert_str_eq(win, "1000000000");
	/* what is kept is the last second: every event starting in it (a
	 * counter's value moved to its start), the capture dense enough to
	 * fill it; what was discarded started before it */
	double span = (strtod(last, NULL) - strtod(first, NULL)) / 1e9;
	cr_assert(span > 0.9 && span <= 1.0, "kept span %.3f s of a 1 s ring", span);
	cr_assert(strtod(d0, NULL) < strtod(first, NULL), "discarded range starts after the kept one");
	cr_assert(strtod(d1, NULL) < strtod(last, NULL) - 1e9, "discarded the last second");
	free(disc), free(win), free(d0), free(d1), free(first), free(last);
	/* no segment directory left */
	DIR *d = opendir(dir);
	struct dirent *e;
	while ((e = readdir(d)))
		cr_assert(!strstr(e->d_name, ".ring-"), "%s left behind", e->d_name);
	closedir(d);
}

Test(cli_livefile, option_errors)
{
	static const struct { const char *args, *want; } cases[] = {
		{ "record -o x.gtrace --ring 100 --pid 1", "--ring-size" },
		{ "run --ring 4096 -- true", "--ring-size" },
		{ "demo --ring 5x", "--ring: '5x' is not a duration" },
		{ "attach 1 --memory lots", "--memory: 'lots' is not 0 (no bound) or a size" },
		{ "run --memory 100 -- true", "--memory: '100' is not 0 (no bound) or a size of at least 1M" },
		{ "record -o x.gtrace --ring-size 10 --pid 1", "--ring-size: '10' is not a record count" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = NULL;
		int rc = clirun_gtrace(cases[i].args, "2>&1 </dev/null", &out);
		cr_assert_eq(rc, 2, "gtrace %s: exit %d\n%s", cases[i].args, rc, out);
		cr_assert(strstr(out, cases[i].want), "gtrace %s:\n%s", cases[i].args, out);
		/* one line */
		cr_assert(strchr(out, '\n') == out + strlen(out) - 1, "gtrace %s:\n%s", cases[i].args, out);
		free(out);
	}
}
