/*
 * cmd_demo.c - 'gtrace demo': start a simulated multi-GPU trainer
 * (`gtrace sim --live`, through this same binary) and open the live viewer
 * on it.  Without a terminal it prints the live statistics instead.
 * `gtrace demo --trainer [sim --live options]` is the trainer itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/sim.h"
#include "cmd.h"
#include "live_sess.h"
#include "live_opts.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: gtrace demo [--gpus N] [--scenario NAME] [--rate EVENTS_PER_S] [--seconds S]\n"
		   "                   [--record FILE [--force]] [--memory SIZE] [--ring DURATION]\n\n"
		   "Start a simulated multi-GPU trainer and open the live viewer on it (q quits).\n"
		   "  --gpus N          simulated GPUs (default 4)\n"
		   "  --scenario NAME   balanced, input-bound, launch-bound, straggler, comm-bound,\n"
		   "                    copy-heavy, staggered (default balanced)\n"
		   "  --rate N          events per second (default: real time, the simulated\n"
		   "                    clock runs with the wall clock)\n"
		   "  --seconds S       stop the trainer after S seconds (default: when quitting)\n"
		   "The capture streams to a temporary file (removed at exit; W in the viewer keeps it).\n"
		   "  --record FILE     stream the capture to FILE instead\n"
		   "  --force           replace FILE if it exists\n"
		   LIVE_OPTS_HELP);
	return f == stdout ? 0 : 2;
}

int cmd_demo(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--trainer"))
		return live_sim_main(argc - 1, argv + 1);
	const char *gpus = "4", *scen = "balanced", *rate = NULL, *secs = "3600";
	struct live_opts lo = { 0 };
	for (int i = 1; i < argc; i++) { /* options all take a value but --force */
		if (cmd_is_help(argv[i]))
			return usage(stdout);
		int k = live_opts_arg(&lo, "demo", argc, argv, &i);
		if (k < 0)
			return 2;
		if (k)
			continue;
		if (!strcmp(argv[i], "--force")) {
			lo.force = 1;
			continue;
		}
		const char *v = i + 1 < argc ? argv[++i] : NULL;
		if (!v)
			return cmd_usage_error("demo", "unknown option or missing value '%s'", argv[i]);
		if (!strcmp(argv[i - 1], "--gpus"))
			gpus = v;
		else if (!strcmp(argv[i - 1], "--scenario"))
			scen = v;
		else if (!strcmp(argv[i - 1], "--rate"))
			rate = v;
		else if (!strcmp(argv[i - 1], "--seconds"))
			secs = v;
		else if (!strcmp(argv[i - 1], "--record"))
			lo.record = v;
		else
			return cmd_usage_error("demo", "unknown option '%s'", argv[i - 1]);
	}
	if (gt_sim_scenario_parse(scen) < 0)
		return cmd_usage_error("demo", "unknown scenario '%s'", scen);
	char *end;
	long g = strtol(gpus, &end, 10);
	if (*end || g < 1 || g > 64)
		return cmd_usage_error("demo", "--gpus: '%s' is not 1..64", gpus);

	/* like open: without a terminal and without --record the demo would
	 * only print status lines until killed and keep nothing; with
	 * --record it records headless, as run does */
	if (!lo.record && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		fprintf(stderr, "gtrace: the viewer needs a terminal (or --record FILE to record the demo headless)\n");
		return 1;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		cmd_error("cannot find the gtrace binary: %s", strerror(errno));
		return 1;
	}
	self[n] = 0;
	/* without --rate the trainer runs in real time */
	char *targv[] = { self, "demo", "--trainer", "--gpus", (char *)gpus, "--scenario",
			  (char *)scen, "--seconds", (char *)secs, "--linger", "2",
			  rate ? "--rate" : NULL, (char *)rate, NULL };
	int out[2];
	if (pipe(out) < 0) {
		cmd_error("pipe: %s", strerror(errno));
		return 1;
	}
	pid_t parent = getpid();
	pid_t child = fork();
	if (child < 0) {
		cmd_error("fork: %s", strerror(errno));
		return 1;
	}
	if (child == 0) {
		/* the trainer is the demo's own: it ends with gtrace, even a
		   gtrace killed by SIGKILL (else it idled on for --seconds) */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(0);
		/* the trainer's chatter must not land on the viewer's screen */
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		int dn = open("/dev/null", O_WRONLY);
		if (dn >= 0)
			dup2(dn, 2);
		setenv("GTRACE_AUTOSTART", "1", 1);
		execv(self, targv);
		_exit(127);
	}
	close(out[1]);
	char line[128] = "";
	FILE *f = fdopen(out[0], "r");
	if (!f || !fgets(line, sizeof(line), f)) {
		cmd_error("the simulated trainer did not start");
		waitpid(child, NULL, 0);
		return 1;
	}
	fclose(f);
	struct gt_store *s = gt_store_new();
	struct live_sess ss;
	live_sess_init(&ss, s, 0);
	char err[512];
	int rc = 1;
	if (live_sess_add(&ss, child, err, sizeof(err)) < 0 ||
	    live_opts_start(&ss, &lo, err, sizeof(err)) < 0) {
		cmd_error("%s", err);
		live_sess_close(&ss);
	} else {
		rc = live_view(&ss, "demo");
		if (live_opts_finish(&ss, "demo"))
			rc = 1;
	}
	kill(child, SIGTERM);
	waitpid(child, NULL, 0);
	gt_store_free(s);
	return rc;
}
