/*
 * cmd_attach.c - 'gtrace attach': list the processes with a gtrace control
 * socket or a CUDA driver mapped (injectable), or open the live viewer on
 * one of them (loading the capture library with ptrace when it was not
 * started under gtrace) or on all of them.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/ctl.h"
#include "cmd.h"
#include "live_sess.h"
#include "live_opts.h"
#include "netsess.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: gtrace attach PID [--force-inject] | --all | --list\n"
		   "                     [--record FILE [--force]] [--memory SIZE] [--ring DURATION]\n"
		   "       gtrace attach --hosts H1,H2,... [--ssh CMD] [--gtrace PATH] [--align-clocks]\n"
		   "                     [--record FILE [--force]] [--memory SIZE]\n\n"
		   "  --list   processes with the capture library loaded or that use CUDA (injectable):\n"
		   "           pid, GPUs, state, RANK (RANK/LOCAL_RANK when both are set),\n"
		   "           command; under an ended or passive process, a line with the reason\n"
		   "  PID      open the live viewer on that process (q quits; the process runs on); a\n"
		   "           process started without gtrace gets the capture library with ptrace\n"
		   "  --force-inject  load the library into a process that maps no CUDA driver too\n"
		   "           (refused otherwise: it would have nothing to record)\n"
		   "  --all    every process of yours that uses CUDA, as ranks of one view\n"
		   "  --hosts  one live view of every node: runs 'SSH HOST GTRACE record --all -q -o -'\n"
		   "           per host (SSH: --ssh, default 'ssh -T -o BatchMode=yes', e.g. 'srun\n"
		   "           --overlap -w'; GTRACE: --gtrace, default 'gtrace'); --align-clocks\n"
		   "           applies the residual clock offsets estimated from NCCL collectives;\n"
		   "           without a terminal it needs --record FILE (the nodes recorded headless)\n"
		   "The capture streams to a temporary file (removed at exit; W in the viewer keeps it).\n"
		   "  --record FILE   stream the capture to FILE instead\n"
		   "  --force         replace FILE if it exists\n"
		   LIVE_OPTS_HELP);
	return f == stdout ? 0 : 2;
}

static void cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	for (size_t i = 0; i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	if (!n)
		snprintf(buf, len, "?");
}

static int list(void)
{
	pid_t pids[1024];
	size_t n = live_cuda_pids(pids, 1024, 0);
	if (n > 1024)
		n = 1024;
	printf("%-8s %-5s %-10s %-5s %s\n", "PID", "GPUS", "STATE", "RANK", "COMMAND");
	for (size_t i = 0; i < n; i++) {
		char err[256], reply[GT_CTL_LINE_MAX], gpus[16] = "?", state[32] = "?", cmd[256];
		char rank[16] = "-", why[GT_CTL_LINE_MAX] = "";
		if (kill(pids[i], 0) < 0 && errno == ESRCH)
			continue;             /* gone since the scan */
		live_proc_env(pids[i], "RANK", rank, sizeof(rank));
		/* RANK/LOCAL_RANK when the process sets LOCAL_RANK (torchrun) */
		char lrank[8] = "";
		live_proc_env(pids[i], "LOCAL_RANK", lrank, sizeof(lrank));
		if (lrank[0] && strcmp(lrank, "-")) {
			char both[16];
			snprintf(both, sizeof(both), "%.7s/%.7s", rank, lrank);
			snprintf(rank, sizeof(rank), "%s", both);
		}
		if (!live_listening(pids[i])) {
			/* uses CUDA, no library yet: gtrace attach loads it */
			live_proc_gpus(pids[i], gpus, sizeof(gpus));
			cmdline(pids[i], cmd, sizeof(cmd));
			printf("%-8d %-5s %-10s %-5s %s\n", (int)pids[i], gpus, "injectable", rank, cmd);
			continue;
		}
		int fd = gt_ctl_connect(pids[i], err, sizeof(err));
		if (fd >= 0) {
			if (gt_ctl_request(fd, "status", reply, sizeof(reply), NULL, 1000) == 0) {
				gt_ctl_status_get(reply, "gpus", gpus, sizeof(gpus));
				gt_ctl_status_get(reply, "state", state, sizeof(state));
				/* why a capture ended or never could start (reason is
				 * the reply's last field and may hold spaces) */
				const char *r = strstr(reply, " reason=");
				if (r && r[8] && (!strcmp(state, "ended") || !strcmp(state, "passive")))
					snprintf(why, sizeof(why), "%s", r + 8);
				/* pool buffers another CUPTI client took with it */
				char cb[24] = "";
				gt_ctl_status_get(reply, "client_buffers_lost", cb, sizeof(cb));
				if (why[0] && atoll(cb) > 0) {
					size_t wl = strlen(why);
					snprintf(why + wl, sizeof(why) - wl, " (%s activity buffer%s lost "
						 "to it)", cb, strcmp(cb, "1") ? "s" : "");
				}
			} else if (strstr(reply, "permission")) {
				snprintf(state, sizeof(state), "not-yours");
			} else {
				snprintf(state, sizeof(state), "busy");   /* another viewer has it */
			}
			close(fd);
		} else if (fd == -EPERM) {
			/* a name another process or user binds: not a capture */
			snprintf(state, sizeof(state), "impostor");
			fprintf(stderr, "gtrace attach: %s\n", err);
		}
		cmdline(pids[i], cmd, sizeof(cmd));
		printf("%-8d %-5s %-10s %-5s %s\n", (int)pids[i], gpus, state, rank, cmd);
		if (why[0])
			printf("%-8s %s: %s\n", "", state, why);
	}
	if (!n)
		fprintf(stderr, "gtrace attach: no process uses CUDA or has the capture library "
				"loaded (start one with 'gtrace run -- CMD')\n");
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	if (argc < 2)
		return cmd_usage_error("attach", "give a PID or --list");
	if (cmd_is_help(argv[1]))
		return usage(stdout);
	if (!strcmp(argv[1], "--list"))
		return argc > 2 ? cmd_usage_error("attach", "--list takes no other option: '%s'",
						  argv[2]) : list();
	if (!strcmp(argv[1], "--hosts"))
		return netsess_attach_hosts(argc, argv);
	int force = 0, all = 0;
	long pid = 0;
	struct live_opts lo = { 0 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int k = live_opts_arg(&lo, "attach", argc, argv, &i);
		if (k < 0)
			return 2;
		if (k)
			continue;
		if (!strcmp(a, "--force-inject")) {
			force = 1;
		} else if (!strcmp(a, "--all")) {
			all = 1;
		} else if (!strcmp(a, "--force")) {
			lo.force = 1;
		} else if (!strcmp(a, "--record")) {
			if (i + 1 >= argc)
				return cmd_usage_error("attach", "--record needs a file name");
			lo.record = argv[++i];
		} else if (!strcmp(a, "--hosts") || !strcmp(a, "--ssh") || !strcmp(a, "--gtrace") ||
			   !strcmp(a, "--align-clocks")) {
			return cmd_usage_error("attach", "%s goes with 'gtrace attach --hosts H1,H2,...' "
					       "(--hosts first)", a);
		} else if (a[0] == '-') {
			return cmd_usage_error("attach", "unknown option '%s'", a);
		} else if (pid || all) {
			return cmd_usage_error("attach", "unexpected argument '%s'", a);
		} else {
			char *end;
			pid = strtol(a, &end, 10);
			if (*end || pid <= 0)
				return cmd_usage_error("attach", "'%s' is not a process id", a);
		}
	}
	if (!pid && !all)
		return cmd_usage_error("attach", "give a PID, --all or --list");
	if (pid && all)
		return cmd_usage_error("attach", "a PID and --all exclude each other");
	struct gt_store *s = gt_store_new();
	if (!s) {
		cmd_error("out of memory");
		return 1;
	}
	struct live_sess ss;
	live_sess_init(&ss, s, 0);
	char err[512], name[32];
	int rc = all ? live_attach_all(&ss, 0, err, sizeof(err))
		     : live_attach_add(&ss, (pid_t)pid, force ? LIVE_ATTACH_FORCE : 0, err, sizeof(err));
	if (rc < 0) {
		cmd_error("%s", err);
		gt_store_free(s);
		return 1;
	}
	if (live_opts_start(&ss, &lo, err, sizeof(err)) < 0) {
		cmd_error("%s", err);
		live_sess_close(&ss);
		gt_store_free(s);
		return 1;
	}
	if (all)
		snprintf(name, sizeof(name), "%d processes", ss.n);
	else
		snprintf(name, sizeof(name), "pid %ld", pid);
	rc = live_view(&ss, name);
	if (live_opts_finish(&ss, "attach"))
		rc = 1;
	live_graphs_note(s, "attach");     /* after the viewer left the terminal */
	gt_store_free(s);
	return rc;
}
