/*
 * main.c - gtrace's entry point: dispatches to the subcommands of cmd.h.
 * The command line is the user's contract (shared/DESIGN.md): keep names.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "gtrace_config.h"
#include "cmd.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis;
};

static const struct command commands[] = {
	{ "demo", cmd_demo, "demo [--gpus N] [--scenario NAME] [--rate EVENTS_PER_S] [--seconds S]\n"
	  "             [--record FILE [--force]] [--memory SIZE] [--ring DURATION]\n"
	  "      live viewer on the built-in simulated multi-GPU trainer" },
	{ "open", cmd_open, "open [--param-bytes B --link-gbps X] [--run NAME] [--memory SIZE] PATH...\n"
	  "      view a .gtrace capture, a Kineto/Chrome JSON(.gz), an nsys .sqlite, a directory of\n"
	  "      per-rank files, a TensorFlow/JAX .xplane.pb[.gz] or a TensorBoard log directory;\n"
	  "      several .gtrace files (one per node) as one job\n"
	  "  gtrace open [-] [--align-clocks] [--live CMD...]\n"
	  "      live view of .gtrace streams: stdin (-) and commands such as\n"
	  "      'ssh node7 gtrace record --all -o -', one node each" },
	{ "run", cmd_run, "run [--record FILE [--force]] [--memory SIZE] [--ring DURATION] -- CMD [ARGS]\n"
	  "      start CMD with capture injected; open the live viewer on it (the capture streams\n"
	  "      to a temporary file, W keeps it; --ring DURATION keeps only the last DURATION)" },
	{ "attach", cmd_attach, "attach PID [--force-inject] | --all | --list\n"
	  "             [--record FILE [--force]] [--memory SIZE] [--ring DURATION]\n"
	  "      attach the viewer to running processes (loads the capture library with ptrace\n"
	  "      into a process that uses CUDA and was started without gtrace)\n"
	  "  gtrace attach --hosts H1,H2,... [--ssh CMD] [--gtrace PATH] [--align-clocks]\n"
	  "      one live view of several nodes over ssh (or srun, kubectl exec: --ssh)" },
	{ "record", cmd_record, "record -o FILE [--force] [--duration S] [--ring-size RECORDS] [-q]\n"
	  "             [--memory SIZE] [--ring DURATION]\n"
	  "             (--pid PID [--force-inject] | --all | -- CMD [ARGS]\n"
	  "              | --from CMD [--from CMD ...] [--align-clocks])\n"
	  "      headless capture to a .gtrace file (- is stdout: a stream; %h the host name),\n"
	  "      no terminal needed; --from merges node streams into one file" },
	{ "stats", cmd_stats, "stats PATH... [--report NAME[,NAME...]] [--format table|csv|json]\n"
	  "             [--table NAME|list] [-o DIR [--force]] [--step N] [--range T0:T1] [--gpu G] [--rank R]\n"
	  "             [--param-bytes B --link-gbps X] [--run NAME] [--memory SIZE]\n"
	  "             [--group-by name|shape|stack]\n"
	  "      analyses as text, CSV or JSON" },
	{ "export", cmd_export, "export PATH... -o OUT.json[.gz] [--no-flows] [--gzip-level N] [--run NAME] [--force]\n"
	  "      Chrome trace JSON (opens in Perfetto) from any input" },
	{ "sim", cmd_sim, "sim -o FILE [--gpus N] [--ranks R] [--steps N] [--scenario NAME]\n"
	  "             [--scenario-rank R] [--events N] [--seed S] [--memory steady|leak] [--force]\n"
	  "      write a synthetic capture with a planted bottleneck\n"
	  "  gtrace sim --live [--gpus N] [--ranks N] [--scenario NAME] [--rate EVENTS_PER_S]\n"
	  "             [--seconds S] [--steps N] [--seed N] [--wait] [--linger S] [--lossless]\n"
	  "      a simulated trainer to attach to" },
	{ "diff", cmd_diff, "diff A B [--report breakdown|kernels|ops|overview] [--format table|csv|json]\n"
	  "             [--align first|start|step=N] [--rank R] [--table NAME|list] [-o DIR]\n"
	  "             [--force]\n"
	  "      compare two runs" },
};

void cmd_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gtrace: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "gtrace %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (try 'gtrace %s --help')\n", cmd);
	va_end(ap);
	return 2;
}

int cmd_is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

/* "97.5M", "4096", "2G" -> bytes (k/K, M, G, T: powers of 1024); -1 when
 * malformed, zero or absurd */
/* a plain decimal number: digits, '.', an exponent; no sign, space, hex,
 * inf or nan (which strtod would take) */
static int plain_number(const char *s)
{
	return (isdigit((unsigned char)s[0]) || (s[0] == '.' && isdigit((unsigned char)s[1]))) &&
	       !strpbrk(s, "xXpP");
}

int cmd_parse_bytes(const char *s, uint64_t *out)
{
	char *end;
	if (!plain_number(s))
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !(v > 0))
		return -1;
	double mul = 1;
	if (*end == 'B' && !end[1]) {
		end++;
	} else if (*end) {
		const char *u = "kMGT";
		if (*end == 'K')
			mul = 1024;
		else if (strchr(u, *end))
			for (const char *c = u; c <= strchr(u, *end); c++)
				mul *= 1024;
		else
			return -1;
		end++;
		if (*end == 'B' || *end == 'b')
			end++;
		if (*end)
			return -1;
	}
	if (mul == 1 && v != floor(v))
		return -1;               /* a fraction of a byte */
	v *= mul;
	if (v < 1 || v > 1e18)
		return -1;
	*out = (uint64_t)(v + 0.5);
	return 0;
}

/* "450", "12.5" -> GB/s; -1 unless a number from 0.001 (1 MB/s) to 1e6 */
int cmd_parse_gbps(const char *s, double *out)
{
	char *end;
	if (!plain_number(s))
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !(v >= 1e-3) || v > 1e6)
		return -1;
	*out = v;
	return 0;
}

/* --max-lanes N and --max-events-per-byte N, accepted by every command
 * that loads input (before a "--" that starts a command line): they set
 * the environment the loader reads (core/import/loadlim.h) and are taken out
 * of argv; 0, or 2 after a usage error */
static int limit_options(int *argc, char **argv)
{
	static const char *const opt[2] = { "--max-lanes", "--max-events-per-byte" };
	static const char *const env[2] = { "GTRACE_MAX_LANES", "GTRACE_MAX_EVENTS_PER_BYTE" };
	for (int i = 2; i < *argc && strcmp(argv[i], "--");) {
		int k = 0, take = 2;
		const char *val = NULL;
		for (; k < 2; k++) {
			size_t ol = strlen(opt[k]);
			if (!strncmp(argv[i], opt[k], ol) && (argv[i][ol] == '=' || !argv[i][ol])) {
				val = argv[i][ol] == '=' ? argv[i] + ol + 1 : i + 1 < *argc ? argv[i + 1] : NULL;
				take = argv[i][ol] == '=' ? 1 : 2;
				break;
			}
		}
		if (k == 2) {
			i++;
			continue;
		}
		char *end;
		errno = 0;
		long long n = val ? strtoll(val, &end, 10) : 0;
		if (!val || !*val || *end || errno || n < 1 || n > (1LL << 62))
			return cmd_usage_error(argv[1], "%s needs a number from 1 to 2^62%s%s%s", opt[k],
					       val ? ", not '" : "", val ? val : "", val ? "'" : "");
		setenv(env[k], val, 1);
		memmove(argv + i, argv + i + take, (size_t)(*argc - i - take + 1) * sizeof(*argv));
		*argc -= take;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gtrace COMMAND [ARGS]\n\n"
		   "gtrace is a terminal GPU trace explorer: live CUPTI capture of a running\n"
		   "trainer, PyTorch profiler traces, kernel statistics and step analyses.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  gtrace %s\n", commands[i].synopsis);
	fprintf(f, "\nevery command that reads input also takes --max-lanes N (lanes per input file,\n"
		   "default 100000) and --max-events-per-byte N (default 32): limits no real trace\n"
		   "reaches, against hostile files (also GTRACE_MAX_LANES, GTRACE_MAX_EVENTS_PER_BYTE)\n");
	fprintf(f, "\n'gtrace COMMAND --help' describes a command; 'gtrace --version' prints the version.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (cmd_is_help(argv[1])) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("gtrace %s\n", GTRACE_VERSION);
		return 0;
	}
	if (limit_options(&argc, argv))
		return 2;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "gtrace: unknown command '%s' (try 'gtrace --help')\n", argv[1]);
	return 2;
}
