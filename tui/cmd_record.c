/*
 * cmd_record.c - 'gtrace record': headless capture to a .gtrace file,
 * streamed as events arrive (a file cut short by a crash of gtrace still
 * opens up to its last chunk).  Ctrl-C stops and keeps everything; a
 * target that dies mid-capture ends the recording normally.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cmd.h"
#include "live_sess.h"
#include "live_opts.h"
#include "live_rec.h"
#include "netsess.h"

static int usage(FILE *f)
{
	fprintf(f, "usage: gtrace record -o FILE [--force] [--duration S] [--ring-size RECORDS]\n"
		   "                     [--memory SIZE] [--ring DURATION]\n"
		   "                     (--pid PID [--force-inject] | --all | -- CMD [ARGS]\n"
		   "                      | --from CMD [--from CMD ...] [--align-clocks])\n\n"
		   "Capture without a terminal into a .gtrace file.  With --pid, attach to a process\n"
		   "(the capture library is loaded into it with ptrace when it was not started under\n"
		   "gtrace); --all attaches to every process of yours that uses CUDA, as ranks; with -- CMD,\n"
		   "start CMD with the library injected and record it and every child that uses CUDA.\n"
		   "Ctrl-C stops the recording and keeps everything captured so far.\n\n"
		   "  -o, --output FILE   the .gtrace file to write; - is stdout (a stream another\n"
		   "                      gtrace reads: open -, open --live, --from); %%h is the host name\n"
		   "  --from CMD          a command whose stdout is a .gtrace stream (e.g. 'ssh node7\n"
		   "                      gtrace record --all -o -'): one node; several are merged\n"
		   "  --align-clocks      with --from, apply the residual clock offsets estimated from\n"
		   "                      NCCL collectives (otherwise only reported)\n"
		   "  --force             replace FILE if it exists\n"
		   "  --duration S        stop after S seconds\n"
		   "  --ring-size RECORDS shared-memory ring per process in 64-byte records (default 1M)\n"
		   LIVE_OPTS_HELP
		   "  -q, --quiet         no status line every second\n"
		   "  --force-inject      with --pid, load the library into a process that maps no\n"
		   "                      CUDA driver too (refused otherwise: nothing to record)\n");
	return f == stdout ? 0 : 2;
}

/* -o's value: "-" is stdout, %h the host name, %% a %; 0 or -ENAMETOOLONG */
static int record_out_path(const char *v, char *out, size_t len)
{
	char host[256];
	gt_job_hostname(host, sizeof(host));
	size_t o = 0;
	for (const char *p = v; *p; p++) {
		const char *add = p;
		size_t n = 1;
		if (p[0] == '%' && p[1] == 'h') {
			add = host;
			n = strlen(host);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			p++;
		}
		if (o + n >= len)
			return -ENAMETOOLONG;
		memcpy(out + o, add, n);
		o += n;
	}
	out[o] = 0;
	return 0;
}

/* leave cmd_record's option parsing: from (the --from list) freed */
#define RECORD_RETURN(x) do { int rr_ = (x); free(from); return rr_; } while (0)

int cmd_record(int argc, char **argv)
{
	const char *out = NULL;
	double duration = 0;
	long pid = 0;
	unsigned long ring = 0;
	struct live_opts lo = { 0 };
	int quiet = 0, force = 0, inject = 0, all = 0, align = 0, nfrom = 0, i;
	char **cmd = NULL, **from = calloc((size_t)argc + 1, sizeof(*from));
	if (!from) {
		cmd_error("out of memory");
		return 1;
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (cmd_is_help(a))
			RECORD_RETURN(usage(stdout));
		int k = live_opts_arg(&lo, "record", argc, argv, &i);
		if (k < 0) {
			free(from);
			return 2;
		}
		if (k)
			continue;
		if (!strcmp(a, "--")) {
			cmd = argv + i + 1;
			break;
		}
		if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			quiet = 1;
			continue;
		}
		if (!strcmp(a, "--force")) {
			force = 1;
			continue;
		}
		if (!strcmp(a, "--all")) {
			all = 1;
			continue;
		}
		if (!strcmp(a, "--force-inject")) {
			inject = 1;
			continue;
		}
		if (!strcmp(a, "--align-clocks")) {
			align = 1;
			continue;
		}
		if (!strcmp(a, "--from") && i + 1 < argc) {
			from[nfrom++] = argv[++i];
			continue;
		}
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			RECORD_RETURN(cmd_usage_error("record", "%s needs a value", a));
		char *end;
		if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			out = v;
		} else if (!strcmp(a, "--duration")) {
			duration = strtod(v, &end);
			if (*end || end == v || !(duration > 0 && duration <= 1e7))
				RECORD_RETURN(cmd_usage_error("record", "--duration: '%s' is not a number of "
						       "seconds in (0, 1e7]", v));
		} else if (!strcmp(a, "--pid")) {
			pid = strtol(v, &end, 10);
			if (*end || end == v || pid <= 0)
				RECORD_RETURN(cmd_usage_error("record", "--pid: '%s' is not a process id", v));
		} else if (!strcmp(a, "--ring-size")) {
			ring = strtoul(v, &end, 10);
			if (*end || end == v || ring < 64 || ring > (1ul << 26) || v[0] == '-')
				RECORD_RETURN(cmd_usage_error("record", "--ring-size: '%s' is not a record count "
						       "64..67108864", v));
		} else {
			RECORD_RETURN(cmd_usage_error("record", "unknown option '%s'", a));
		}
		i++;
	}
	char outx[4096];
	if (out && record_out_path(out, outx, sizeof(outx)) < 0)
		RECORD_RETURN(cmd_usage_error("record", "-o: '%s' is too long once %%h is expanded", out));
	out = out ? outx : NULL;
	if (out && !strcmp(out, "-") && isatty(1)) {
		free(from);
		cmd_error("-o -: stdout is a terminal; pipe the stream to a reader "
			  "(| gtrace open -) or give -o FILE");
		return 1;
	}
	if (out && nfrom && !pid && !all && !cmd) {
		int frc = netsess_record(out, from, nfrom, force, duration, quiet, align);
		free(from);
		return frc;
	}
	free(from);
	if (nfrom)
		return cmd_usage_error("record", "--from excludes --pid, --all and -- CMD");
	if (!out)
		return cmd_usage_error("record", "-o FILE is required");
	if (!pid && !all && (!cmd || !cmd[0]))
		return cmd_usage_error("record", "give --pid PID, --all or -- CMD [ARGS]");
	if ((pid != 0) + all + (cmd != NULL) > 1)
		return cmd_usage_error("record", "--pid, --all and -- CMD exclude each other");

	char err[512];
	struct gt_store *s = gt_store_new();
	if (!s) {
		cmd_error("out of memory");
		return 1;
	}
	struct live_sess ss;
	live_sess_init(&ss, s, (uint32_t)ring);
	gt_store_meta_set(s, "source", "gtrace record");
	gt_job_stamp(s);   /* the host and its clock, for a job merged from several nodes */
	if (pid || all) {
		if ((all ? live_attach_all(&ss, 0, err, sizeof(err))
			 : live_attach_add(&ss, (pid_t)pid, inject ? LIVE_ATTACH_FORCE : 0, err,
					   sizeof(err))) < 0) {
			cmd_error("%s", err);
			gt_store_free(s);
			return 1;
		}
	}
	/* with --pid the file is created once connected (a wrong pid leaves no
	 * empty file); with a command, before it starts (a bad path must not
	 * leave the command running untraced) */
	int to_stdout = !strcmp(out, "-");   /* a stream: nothing created or removed */
	if (to_stdout)
		signal(SIGPIPE, SIG_IGN);    /* a reader that goes away ends the recording */
	lo.record = out;
	lo.force = force;
	if (live_opts_start(&ss, &lo, err, sizeof(err)) < 0) {
		cmd_error("%s", err);
		live_sess_close(&ss);
		gt_store_free(s);
		return 1;
	}
	if (!pid && !all) {
		pid_t child;
		/* on a stream the command's output must not mix with it */
		if ((to_stdout ? live_spawn_out(cmd, 2, &child, err, sizeof(err)) :
				 live_spawn(cmd, &child, err, sizeof(err))) < 0) {
			cmd_error("%s", err);
			live_opts_abort(&ss);
			gt_store_free(s);
			return 1;
		}
		ss.root = child;
		gt_store_meta_set(s, "command", cmd[0]);
	}
	int rc = live_headless(&ss, duration, quiet ? 0 : 1.0);
	/* the ring's last cut before the closing line, so that it counts
	   what the file holds */
	if (live_rec_ring_cut(ss.rec, s) < 0 && rc >= 0)
		rc = -ENOMEM;
	char line[512];
	/* with, for a source that ended its capture, why */
	live_sess_status(&ss, line, sizeof(line));
	live_sess_close(&ss);
	char rerr[768];
	int wrc = live_rec_close(ss.rec, s, rerr, sizeof(rerr));
	uint64_t disc = gt_store_dropped(s, NULL);   /* the ring's cut, the last at close */
	free(ss.rec);
	ss.rec = NULL;
	if (rc < 0 || wrc < 0) {
		if (wrc < 0)
			cmd_error("%s", rerr);
		else
			cmd_error("%s: %s", out, strerror(-rc));
		gt_store_free(s);
		return 1;
	}
	const struct gt_drops *d = gt_store_drops(s);
	uint64_t lost = gt_store_drops_lost(d);
	fprintf(stderr, "gtrace record: %s: %llu events, %llu lost (%s)\n", out,
		(unsigned long long)(ss.events - disc), (unsigned long long)lost, line);
	char why[512];
	if (ss.root && !ss.joined && live_spawn_report(why, sizeof(why))) {
		/* the library could not listen: "PID REASON" (capture/ireport.h) */
		char *sp = strchr(why, ' ');
		fprintf(stderr, "gtrace record: nothing traced: %s: process %.*s could not be traced: %s\n",
			cmd[0], sp ? (int)(sp - why) : 0, why, sp ? sp + 1 : why);
	}
	live_graphs_note(s, "record");
	int status = 0;
	if (ss.root && !ss.root_exited && waitpid(ss.root, &ss.root_status, WNOHANG) == ss.root)
		ss.root_exited = 1;
	if (ss.root && !ss.root_exited && !live_headless_interrupted()) {
		/* --duration is over, the command is not: its status is ours */
		fprintf(stderr, "gtrace record: capture done; %s (pid %d) runs on, waiting for it "
				"(Ctrl-C stops it)\n", cmd[0], (int)ss.root);
		while (waitpid(ss.root, &ss.root_status, 0) < 0 && errno == EINTR)
			;
		ss.root_exited = 1;
	}
	/* a command that failed or was killed by a signal: 1 */
	if (ss.root && ss.root_exited)
		status = WIFEXITED(ss.root_status) && !WEXITSTATUS(ss.root_status) ? 0 : 1;
	gt_store_free(s);
	return status;
}
