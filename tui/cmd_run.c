/*
 * cmd_run.c - 'gtrace run': start a command with the capture library
 * injected; its processes that use CUDA join as ranks of one live view
 * (or of one recording with --record and no terminal).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cmd.h"
#include "live_sess.h"
#include "live_opts.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: gtrace run [--record FILE [--force]] [--memory SIZE] [--ring DURATION]\n"
		   "                  -- CMD [ARGS]\n\n"
		   "Start CMD with the capture library injected (CUDA_INJECTION64_PATH) and open the\n"
		   "live viewer on it; every child that initializes CUDA (torchrun, DDP) is a rank.\n"
		   "The capture streams to a temporary file (removed at exit; W in the viewer keeps it).\n"
		   "  --record FILE   stream the capture to FILE instead; without a terminal, only record\n"
		   "  --force         replace FILE if it exists\n"
		   LIVE_OPTS_HELP);
	return f == stdout ? 0 : 2;
}

int cmd_run(int argc, char **argv)
{
	struct live_opts lo = { 0 };
	char **cmd = NULL;
	for (int i = 1; i < argc; i++) {
		if (cmd_is_help(argv[i]))
			return usage(stdout);
		int k = live_opts_arg(&lo, "run", argc, argv, &i);
		if (k < 0)
			return 2;
		if (k)
			continue;
		if (!strcmp(argv[i], "--")) {
			cmd = argv + i + 1;
			break;
		}
		if (!strcmp(argv[i], "--record")) {
			if (i + 1 >= argc || !strcmp(argv[i + 1], "--"))
				return cmd_usage_error("run", "--record needs a file name");
			lo.record = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--force")) {
			lo.force = 1;
			continue;
		}
		return cmd_usage_error("run", "unknown option '%s'", argv[i]);
	}
	if (!cmd || !cmd[0])
		return cmd_usage_error("run", "give the command after --");
	char err[512];
	struct gt_store *s = gt_store_new();
	if (!s) {
		cmd_error("out of memory");
		return 1;
	}
	struct live_sess ss;
	live_sess_init(&ss, s, 0);
	if (live_opts_start(&ss, &lo, err, sizeof(err)) < 0) {
		cmd_error("%s", err);
		gt_store_free(s);
		return 1;
	}
	/* with the viewer on the terminal, the command's output goes to a log
	 * (it would write over the viewer) */
	char log[PATH_MAX] = "";
	int log_fd = -1;
	if (isatty(0) && isatty(1) && getenv("TERM")) {
		const char *tmp = getenv("TMPDIR");
		/* a fresh name no other user can predict or plant a link at:
		 * created with O_EXCL, mode 0600 */
		snprintf(log, sizeof(log), "%s/gtrace-run-XXXXXX.log", tmp && *tmp ? tmp : "/tmp");
		log_fd = mkostemps(log, 4, O_CLOEXEC);
		if (log_fd < 0) {
			cmd_error("%s: %s", log, strerror(errno));
			live_opts_abort(&ss);
			gt_store_free(s);
			return 1;
		}
	}
	pid_t child;
	int sprc = live_spawn_out(cmd, log_fd, &child, err, sizeof(err));
	if (log_fd >= 0)
		close(log_fd);
	if (sprc < 0) {
		if (log[0])
			unlink(log);
		cmd_error("%s", err);
		live_opts_abort(&ss);
		gt_store_free(s);
		return 1;
	}
	ss.root = child;
	gt_store_meta_set(s, "command", cmd[0]);
	int rc = live_view(&ss, cmd[0]);
	struct stat lst;
	if (log[0] && stat(log, &lst) == 0 && lst.st_size == 0)
		unlink(log);                    /* nothing to point at */
	else if (log[0])
		fprintf(stderr, "gtrace run: the output of %s is in %s\n", cmd[0], log);
	if (live_opts_finish(&ss, "run"))
		rc = 1;
	if (!ss.root_exited) {
		/* the viewer is closed, the command is not: it keeps the terminal */
		fprintf(stderr, "gtrace run: viewer closed; %s (pid %d) runs on, waiting for it "
				"(Ctrl-C stops it)\n", cmd[0], (int)child);
		int st = 0;
		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
		ss.root_status = st;
		ss.root_exited = 1;
	}
	if (rc == 0 && !(WIFEXITED(ss.root_status) && !WEXITSTATUS(ss.root_status)))
		rc = 1;             /* the command failed or was killed by a signal */
	gt_store_free(s);
	return rc;
}
