/*
 * netsess_open.c - the commands over node streams: `gtrace open -` (stdin),
 * `open --live CMD...` (each command a node), `open a.gtrace b.gtrace ...`
 * (several .gtrace files: the nodes of one job, merged with ranks, hosts
 * and clocks kept), `attach --hosts` and `record --from`.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtrace/gtfile.h"
#include "gtrace/load.h"
#include "netsess.h"
#include "cmd.h"
#include "ui.h"

static int record_nodes(const char *out, char **cmds, char **hosts, int n, int force,
			double duration, int quiet, int apply_clock, size_t memory, const char *prog);
static struct gt_file_writer *open_out(const char *out, int force, const struct gt_store *s,
				       char *err, size_t errlen);

/* a viewer can run: stdout a terminal, TERM set, and keys from a terminal
 * (stdin, or /dev/tty when stdin is a stream) */
static int have_terminal(int stdin_stream)
{
	if (!isatty(STDOUT_FILENO) || !getenv("TERM"))
		return 0;
	if (!stdin_stream)
		return isatty(STDIN_FILENO);
	int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

int netsess_open_live(const char *const *paths, int np, char **cmds, char **hosts, int ncmd,
		      int align, size_t memory, const char *record, int force)
{
	if (!have_terminal(np > 0)) {
		/* without a terminal nothing would be kept: as demo, record with
		 * --record FILE (attach --hosts) or say how */
		if (record && !np)
			return record_nodes(record, cmds, hosts, ncmd, force, 0, 0, align, memory,
					    "gtrace attach");
		if (hosts)
			fprintf(stderr, "gtrace attach: the viewer needs a terminal (or --record FILE to "
				"record the nodes headless)\n");
		else if (ncmd)
			fprintf(stderr, "gtrace: the viewer needs a terminal (to record the nodes headless: "
				"gtrace record -o FILE --from CMD ...)\n");
		else
			fprintf(stderr, "gtrace: the viewer needs a terminal (the stream on stdin is a "
				"recording already: send it to a file, PRODUCER > FILE.gtrace)\n");
		return 1;
	}
	struct gt_store *s = gt_store_new();
	struct netsess ns;
	char err[512];
	if (!s || netsess_init(&ns, s, align, memory)) {
		fprintf(stderr, "gtrace: %s\n", s ? "memory budget: no cache file in $TMPDIR "
			"(or out of memory)" : "out of memory");
		gt_store_free(s);
		return 1;
	}
	if (record && !(ns.w = open_out(record, force, s, err, sizeof(err)))) {
		fprintf(stderr, "gtrace: %s\n", err);
		netsess_free(&ns);
		gt_store_free(s);
		return 1;
	}
	ns.out = record;
	gt_store_meta_set(s, "source", "gtrace open --live");
	int rc = 0;
	for (int i = 0; i < np && !rc; i++) {
		if (strcmp(paths[i], "-")) {
			fprintf(stderr, "gtrace: %s: only '-' (stdin) goes with --live\n", paths[i]);
			rc = 1;
			continue;
		}
		int fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
		if (fd < 0 || netsess_add_fd(&ns, fd, "stdin", err, sizeof(err)) < 0) {
			fprintf(stderr, "gtrace: stdin: %s\n", fd < 0 ? strerror(errno) : err);
			rc = 1;
			continue;
		}
		/* the keys come from the terminal, not from the stream */
		int tty = open("/dev/tty", O_RDWR | O_CLOEXEC);
		if (tty >= 0) {
			dup2(tty, 0);
			close(tty);
		} else {
			int nul = open("/dev/null", O_RDONLY);
			if (nul >= 0) {
				dup2(nul, 0);
				close(nul);
			}
		}
	}
	for (int i = 0; i < ncmd && !rc; i++)
		if (netsess_add_cmd(&ns, cmds[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "gtrace: %s\n", err);
			rc = 1;
		} else if (hosts) {
			gt_job_set_host(ns.j, ns.n - 1, hosts[i]);
		}
	if (!rc) {
		char name[256];
		snprintf(name, sizeof(name), "%d node%s", ns.n, ns.n == 1 ? "" : "s");
		rc = netsess_view(&ns, name);
	} else {
		netsess_stop(&ns, 0);
	}
	if (ns.w) {
		int wrc = rc ? (gt_file_writer_abort(ns.w), 0) :
			       gt_file_writer_close(ns.w, s, err, sizeof(err));
		if (rc)
			unlink(record);
		else if (wrc < 0)
			fprintf(stderr, "gtrace: %s: %s\n", record, err), rc = 1;
		else
			fprintf(stderr, "gtrace attach: recorded %llu events to %s\n",
				(unsigned long long)gt_store_event_count(s), record);
		ns.w = NULL;
	}
	netsess_free(&ns);
	gt_store_free(s);
	return rc;
}

/* C on the files of one job: they are merged once, as loaded; the offsets
 * are applied by loading them with --align-clocks */
static int files_align(void *ctx, char *msg, size_t len)
{
	(void)ctx;
	snprintf(msg, len, "these files are merged as loaded: open them with --align-clocks to "
		 "apply the clock offsets");
	return -ENOTSUP;
}

int netsess_open_files(const char *const *paths, int np, int align)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "gtrace: the viewer needs a terminal (try 'gtrace stats')\n");
		return 1;
	}
	struct gt_store *s = gt_store_new();
	char err[512], warn[512];
	if (!s) {
		fprintf(stderr, "gtrace: out of memory\n");
		return 1;
	}
	int rc = gt_job_load_files(paths, (size_t)np, s, align, warn, sizeof(warn), err, sizeof(err));
	if (rc) {
		fprintf(stderr, "gtrace: %s\n", err);
		gt_store_free(s);
		return 1;
	}
	if (warn[0])
		fprintf(stderr, "gtrace: warning: %s\n", warn);
	const char *clock = gt_store_meta_get(s, "clock.residual");
	char name[512];
	snprintf(name, sizeof(name), "%s (+%d more nodes)%s%s", paths[0], np - 1,
		 clock && !strncmp(clock, "clock:", 6) ? ", " : "",
		 clock && !strncmp(clock, "clock:", 6) ? clock : "");
	struct ui_source src = { .name = name, .store = s, .align_clocks = files_align };
	rc = ui_run(&src);
	gt_store_free(s);
	return rc;
}

int netsess_all_gtrace(const char *const *paths, int np)
{
	if (np < 2)
		return 0;
	for (int i = 0; i < np; i++) {
		char why[256];
		if (gt_load_detect(paths[i], why, sizeof(why)) != GT_FMT_GTRACE)
			return 0;
	}
	return 1;
}

int netsess_attach_hosts(int argc, char **argv)
{
	const char *hosts = NULL, *ssh = "ssh -T -o BatchMode=yes", *gt = "gtrace", *record = NULL;
	int align = 0, force = 0;
	size_t memory = SIZE_MAX;   /* the default budget */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--align-clocks") || !strcmp(a, "--force")) {
			a[2] == 'a' ? (align = 1) : (force = 1);
			continue;
		}
		/* an unknown word is named as such even when it is the last one (it was
		 * "a value is needed after '--ring'") */
		if (strcmp(a, "--hosts") && strcmp(a, "--ssh") && strcmp(a, "--gtrace") &&
		    strcmp(a, "--memory") && strcmp(a, "--record"))
			return cmd_usage_error("attach", a[0] == '-' ? "%s: unknown option '%s'" :
					       "%s: unexpected argument '%s'", "--hosts", a);
		if (i + 1 >= argc)
			return cmd_usage_error("attach", "a value is needed after '%s'", a);
		const char *v = argv[++i];
		if (!strcmp(a, "--hosts")) {
			hosts = v;
		} else if (!strcmp(a, "--ssh")) {
			ssh = v;
		} else if (!strcmp(a, "--record")) {
			record = v;
		} else if (!strcmp(a, "--memory")) {
			if (gt_parse_size(v, &memory) < 0 || (memory && memory < (1u << 20))) {
				fprintf(stderr, "gtrace attach: --memory: '%s' is not 0 (no bound) or a size "
					"of at least 1M (e.g. 256M, 2G)\n", v);
				return 2;
			}
		} else {
			gt = v;
		}
	}
	char *list = strdup(hosts ? hosts : "");
	char **cmds = calloc(GT_JOB_MAX_NODES, sizeof(*cmds));
	char **names = calloc(GT_JOB_MAX_NODES, sizeof(*names));
	int n = 0, rc = 0;
	if (!list || !cmds || !names) {
		fprintf(stderr, "gtrace: out of memory\n");
		rc = 1;
	}
	for (char *sp = NULL, *h = rc ? NULL : strtok_r(list, ",", &sp); h && !rc;
	     h = strtok_r(NULL, ",", &sp)) {
		/* a host name goes into a shell command line: plain names only */
		if (strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_@:[]")
		    != strlen(h) || h[0] == '-') {
			fprintf(stderr, "gtrace attach: --hosts: '%s' is not a host name\n", h);
			rc = 2;
		} else if (n == GT_JOB_MAX_NODES) {
			fprintf(stderr, "gtrace attach: --hosts: more than %d hosts\n", GT_JOB_MAX_NODES);
			rc = 2;
		} else if (asprintf(&cmds[n], "%s %s %s record --all -q -o -", ssh, h, gt) < 0) {
			cmds[n] = NULL;
			rc = 1;
		} else {
			names[n++] = h;   /* the node's name until its stream says its host */
		}
	}
	if (!rc && !n) {
		fprintf(stderr, "gtrace attach: --hosts needs a list of hosts: --hosts node1,node2\n");
		rc = 2;
	}
	if (!rc)
		rc = netsess_open_live(NULL, 0, cmds, names, n, align, memory, record, force);
	for (int i = 0; i < n; i++)
		free(cmds[i]);
	free(cmds);
	free(names);
	free(list);
	return rc;
}

/* nodes whose stream brought events */
static int nodes_delivered(const struct netsess *ns)
{
	int k, got = 0;
	for (k = 0; k < ns->n; k++) {
		struct gt_job_node_info in;
		gt_job_node(ns->j, k, &in);
		got += in.events > 0;
	}
	return got;
}

/* the capture file OUT ("-": stdout), kept unless force, flushed once: it
 * appears holding complete chunks (it opens, with no events, from the
 * start) */
static struct gt_file_writer *open_out(const char *out, int force, const struct gt_store *s,
				       char *err, size_t errlen)
{
	struct gt_file_writer_opts wo = { .open_flags = force ? 0 : GT_FILE_W_KEEP };
	struct gt_file_writer *w;
	if (strcmp(out, "-")) {
		w = gt_file_writer_open(out, &wo, err, errlen);
	} else {
		signal(SIGPIPE, SIG_IGN);
		w = gt_file_writer_open_fd(1, "stdout", &wo, err, errlen);
	}
	int rc = w ? gt_file_writer_flush(w, s) : 0;
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", strcmp(out, "-") ? out : "stdout",
			 gt_file_writer_strerror(rc));
		gt_file_writer_abort(w);
		return NULL;
	}
	return w;
}

int netsess_record(const char *out, char **cmds, int n, int force, double duration, int quiet,
		   int apply_clock)
{
	return record_nodes(out, cmds, NULL, n, force, duration, quiet, apply_clock, SIZE_MAX,
			    "gtrace record");
}

/* the nodes' streams merged into OUT headless (hosts[i], when given,
 * names node i); the exit status: 1 when no node delivered */
static int record_nodes(const char *out, char **cmds, char **hosts, int n, int force,
			double duration, int quiet, int apply_clock, size_t memory, const char *prog)
{
	struct gt_store *s = gt_store_new();
	struct netsess ns;
	char err[512];
	if (!s || netsess_init(&ns, s, apply_clock, memory)) {
		fprintf(stderr, "gtrace: %s\n", s ? "memory budget: no cache file in $TMPDIR "
			"(or out of memory)" : "out of memory");
		gt_store_free(s);
		return 1;
	}
	gt_store_meta_set(s, "source", hosts ? "gtrace attach --hosts" : "gtrace record --from");
	int to_stdout = !strcmp(out, "-");
	ns.w = open_out(out, force, s, err, sizeof(err));
	ns.out = to_stdout ? NULL : out;
	int rc = ns.w ? 0 : -1;
	if (!ns.w)
		fprintf(stderr, "gtrace: %s\n", err);
	for (int i = 0; i < n && !rc; i++)
		if (netsess_add_cmd(&ns, cmds[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "gtrace: %s\n", err);
			rc = -1;
		} else if (hosts) {
			gt_job_set_host(ns.j, ns.n - 1, hosts[i]);
		}
	if (rc) {
		netsess_stop(&ns, 0);
		if (ns.w)
			gt_file_writer_abort(ns.w);
		if (ns.w && !to_stdout)
			unlink(out);
		netsess_free(&ns);
		gt_store_free(s);
		return 1;
	}
	int hr = netsess_headless(&ns, duration, quiet ? 0 : 1.0);
	char line[1024];
	netsess_status(&ns, line, sizeof(line));
	int wrc = gt_file_writer_close(ns.w, s, err, sizeof(err));
	ns.w = NULL;
	int status = 0;
	if (hr < 0 || wrc < 0) {
		fprintf(stderr, "gtrace: %s: %s\n", out, wrc < 0 ? err : strerror(-hr));
		status = 1;
	} else if (!nodes_delivered(&ns)) {
		/* nothing came: a 0-event file is no recording */
		fprintf(stderr, "%s: %s: no node delivered data (%s)\n", prog, out, line);
		if (!to_stdout)
			unlink(out);
		status = 1;
	} else {
		fprintf(stderr, "%s: %s: %llu events from %d node%s (%s)\n", prog, out,
			(unsigned long long)gt_store_event_count(s), ns.n, ns.n == 1 ? "" : "s", line);
		netsess_name_failed(&ns, prog);
	}
	netsess_free(&ns);
	gt_store_free(s);
	return status;
}
