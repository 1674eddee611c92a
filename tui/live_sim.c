/*
 * live_sim.c - `gtrace sim --live`: a stand-in trainer.  The core simulator
 * generates steps; this process publishes them through the capture agent
 * (control socket @gtrace-PID, memfd ring) exactly as the injection library
 * does for CUPTI, in real time: a step is published when the wall clock
 * reaches the simulated end of the one before, so a 5 s recording spans 5 s
 * of trace.  --rate N paces to N events/s instead and says how fast the
 * simulated clock then runs against the wall.  Steps advance whether or not a
 * viewer is attached (events are published only while one is); with --wait
 * the first step waits for the first viewer.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gtrace/agent.h"
#include "gtrace/sim.h"
#include "cmd.h"
#include "live_sess.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
	if (ns <= 0)
		return;
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };
	nanosleep(&ts, NULL);
}

struct lsim {
	struct gt_store *s;
	struct gt_publisher_dict dict;
	uint64_t published, generated;
	uint64_t last_reset;
	int gpus;
	int rank_base;        /* $RANK (torchrun-style launchers), added to sim ranks */
	uint32_t host;        /* string id of $GTRACE_HOSTNAME for every rank, 0 = the sim's */
	double rate;          /* events/s, 0 = real time */
	int lossless;         /* --lossless: wait for room in the ring, never overflow it */
	int64_t sim_t0_ns;    /* simulated time of the first event */
	int64_t sim_end_ns;   /* latest simulated end emitted so far */
	int64_t wall_t0_ns;   /* monotonic time of the first step, 0 = not started */
};

static const char *d_str(void *ctx, uint32_t id, size_t *len)
{
	struct lsim *ls = ctx;
	if (id >= gt_store_str_count(ls->s))
		return NULL;
	const char *t = gt_store_str(ls->s, id);
	*len = strlen(t);
	return t;
}

static int d_lane(void *ctx, uint32_t id, struct gt_ring_lane_def *o)
{
	struct lsim *ls = ctx;
	if (id >= gt_store_lane_count(ls->s))
		return -1;
	const struct gt_lane *l = gt_store_lane_at(ls->s, id);
	o->type = l->key.type;
	o->rank = l->key.rank + ls->rank_base;
	o->device = l->key.device;
	o->pid = l->key.pid;
	o->tid = l->key.id;
	o->name = l->name;
	return 0;
}

static int d_kconf(void *ctx, uint32_t id, struct gt_kconf *k)
{
	const struct gt_kconf *p = gt_store_kconf_at(((struct lsim *)ctx)->s, id);
	if (!p)
		return -1;
	*k = *p;
	return 0;
}

static int d_nccl(void *ctx, uint32_t id, struct gt_nccl *n)
{
	const struct gt_nccl *p = gt_store_nccl_at(((struct lsim *)ctx)->s, id);
	if (!p)
		return -1;
	*n = *p;
	return 0;
}

/* a new ring (new viewer): devices and ranks first */
static void publish_meta(struct lsim *ls, struct gt_publisher *p)
{
	for (size_t i = 0; i < gt_store_device_count(ls->s); i++) {
		const struct gt_device *d = gt_store_device_at(ls->s, i);
		struct gt_ring_device_def dd = { d->rank + ls->rank_base, d->id, d->name, d->sm_count,
					      d->mem_bytes, d->cc_major, d->cc_minor };
		gt_publisher_device(p, &dd, &ls->dict);
	}
	for (size_t i = 0; i < gt_store_rank_count(ls->s); i++) {
		const struct gt_rank *r = gt_store_rank_at(ls->s, i);
		struct gt_ring_rank_def rd = { r->pid, r->rank + ls->rank_base, r->world_size,
					    ls->host ? ls->host : r->host, 0 };
		gt_publisher_rank(p, &rd, &ls->dict);
	}
}

static int emit(void *ctx, const struct gt_event *ev, size_t n)
{
	struct lsim *ls = ctx;
	ls->generated += n;
	for (size_t i = 0; i < n; i++)
		if (ev[i].start_ns + ev[i].dur_ns > ls->sim_end_ns)
			ls->sim_end_ns = ev[i].start_ns + ev[i].dur_ns;
	struct gt_publisher *p = gt_agent_pub();
	if (!p)
		return 0;
	if (p->resets != ls->last_reset) {
		ls->last_reset = p->resets;
		publish_meta(ls, p);
	}
	/* --lossless: a viewer that falls behind slows the trainer down
	 * rather than losing events (room for each event's definitions too) */
	if (ls->lossless) {
		uint64_t need = (uint64_t)n * 4 + 64;
		while (!stop_flag && p && p->ring) {
			uint64_t cap = p->ring->mask + 1;
			if (gt_ring_reserve(p->ring, (uint32_t)(need < cap ? need : cap)) == 0)
				break;
			sleep_ns(200000);
			p = gt_agent_pub();
		}
		if (!p)
			return 0;
	}
	ls->published += gt_publisher_events(p, ev, n, &ls->dict);
	return 0;
}

static void s_status(void *ctx, char *buf, size_t len)
{
	struct lsim *ls = ctx;
	/* how fast simulated time runs against the wall: 1.00x in real time */
	int64_t wall = ls->wall_t0_ns ? now_ns() - ls->wall_t0_ns : 0;
	double clock = wall > 0 ? (double)(ls->sim_end_ns - ls->sim_t0_ns) / (double)wall : 0;
	if (ls->rate > 0)
		snprintf(buf, len, " gpus=%d rate=%.0f clock=%.2fx generated=%llu", ls->gpus, ls->rate,
			 clock, (unsigned long long)ls->generated);
	else
		snprintf(buf, len, " gpus=%d realtime clock=%.2fx generated=%llu", ls->gpus, clock,
			 (unsigned long long)ls->generated);
}

static int usage(FILE *f)
{
	fprintf(f, "usage: gtrace sim --live [--gpus N] [--ranks N] [--scenario NAME] [--rate EVENTS_PER_S]\n"
		   "                  [--seconds S] [--steps N] [--seed N] [--wait] [--linger S] [--lossless]\n"
		   "A simulated trainer that publishes its events through the capture channel\n"
		   "(@gtrace-PID); attach with 'gtrace attach PID' or 'gtrace record --pid PID'.\n"
		   "  --rate      events per second; the simulated clock then runs faster or slower\n"
		   "              than the wall (default: real time, a step per simulated step time)\n"
		   "  --seconds   stop after S seconds (default: run until the steps are done, or forever)\n"
		   "  --steps     training steps to simulate (default: unlimited when --seconds is given)\n"
		   "  --wait      start stepping when the first viewer attaches\n"
		   "  --linger    after the last step, wait up to S seconds for the viewer to detach (default 30)\n"
		   "  --lossless  when the viewer falls behind, wait for room in the ring instead of losing\n"
		   "              events (a real trainer never waits; for tests and benchmarks)\n");
	return f == stdout ? 0 : 2;
}

int live_sim_main(int argc, char **argv)
{
	struct gt_sim_opts o;
	memset(&o, 0, sizeof(o));
	o.seed = 1;
	double rate = 0, seconds = 0, linger = 30;
	int wait = 0, steps_given = 0, lossless = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cmd_is_help(a))
			return usage(stdout);
		if (!strcmp(a, "--live"))
			continue;
		if (!strcmp(a, "--wait")) {
			wait = 1;
			continue;
		}
		if (!strcmp(a, "--lossless")) {
			lossless = 1;
			continue;
		}
		if (!v)
			return cmd_usage_error("sim", "%s needs a value", a);
		char *end;
		double x = strtod(v, &end);
		int num_ok = *end == 0 && end != v && x >= 0;
		if (!strcmp(a, "--scenario")) {
			int sc = gt_sim_scenario_parse(v);
			if (sc < 0)
				return cmd_usage_error("sim", "unknown scenario '%s'", v);
			o.scenario = (enum gt_sim_scenario)sc;
		} else if (!num_ok) {
			return cmd_usage_error("sim", "%s: '%s' is not a number", a, v);
		} else if (!strcmp(a, "--gpus") || !strcmp(a, "--ranks")) {
			if (x < 1 || x > 64 || x != (int)x)
				return cmd_usage_error("sim", "%s: '%s' is not 1..64", a, v);
			*(a[2] == 'g' ? &o.gpus : &o.ranks) = (int)x;
		} else if (!strcmp(a, "--steps")) {
			if (x < 1 || x > 100000000 || x != (int)x)
				return cmd_usage_error("sim", "--steps: '%s' is not 1..100000000", v);
			o.steps = (int)x;
			steps_given = 1;
		} else if (!strcmp(a, "--seed")) {
			if (x > 9007199254740992.0 || x != (double)(uint64_t)x)
				return cmd_usage_error("sim", "--seed: '%s' is not an integer 0..2^53", v);
			o.seed = (uint64_t)x;
		} else if (!strcmp(a, "--rate")) {
			/* below 1 event/s the pacing would not pace (1e-300 ran unthrottled) */
			if (x < 1 || x > 1e9)
				return cmd_usage_error("sim", "--rate: '%s' is not 1..1e9 events per second", v);
			rate = x;
		} else if (!strcmp(a, "--seconds")) {
			/* (int64_t)(1e308 * 1e9) is undefined: it ended at once */
			if (x <= 0 || x > 1e7)
				return cmd_usage_error("sim", "--seconds: '%s' is not in (0, 1e7]", v);
			seconds = x;
		} else if (!strcmp(a, "--linger")) {
			if (x > 1e7)
				return cmd_usage_error("sim", "--linger: '%s' is more than 1e7 seconds", v);
			linger = x;
		} else {
			return cmd_usage_error("sim", "unknown option '%s'", a);
		}
		i++;
	}
	if (!steps_given)
		o.steps = seconds > 0 ? 1000000 : 20;
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	o.t0_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
	/* stand-in "nodes" of a multi-node job on one machine (tests, docs/
	 * capture.md): GTRACE_SIM_T0_NS pins the simulated start (nodes of
	 * one job step together), GTRACE_TEST_CLOCK_OFFSET_NS plants a wrong
	 * host clock (every time published is off by it) */
	const char *t0v = getenv("GTRACE_SIM_T0_NS"), *offv = getenv("GTRACE_TEST_CLOCK_OFFSET_NS");
	if (t0v && *t0v)
		o.t0_ns = strtoll(t0v, NULL, 10);
	if (offv && *offv)
		o.t0_ns += strtoll(offv, NULL, 10);

	char err[256];
	struct lsim ls;
	memset(&ls, 0, sizeof(ls));
	ls.rate = rate;
	ls.lossless = lossless;
	ls.rank_base = getenv("RANK") ? atoi(getenv("RANK")) : 0;
	ls.s = gt_store_new();
	if (!ls.s) {
		cmd_error("out of memory");
		return 1;
	}
	struct gt_sim *sim = gt_sim_new(&o, ls.s, err, sizeof(err));
	if (!sim) {
		cmd_error("sim: %s", err);
		gt_store_free(ls.s);
		return 1;
	}
	/* $GTRACE_HOSTNAME: the host every rank says it runs on (a stand-in node) */
	const char *hv = getenv("GTRACE_HOSTNAME");
	ls.host = hv && *hv ? gt_store_intern_cstr(ls.s, hv) : 0;
	/* sim.h's defaults: 4 GPUs for one rank, 1 per rank otherwise */
	ls.gpus = (o.gpus ? o.gpus : o.ranks > 1 ? 1 : 4) * (o.ranks > 1 ? o.ranks : 1);
	ls.dict = (struct gt_publisher_dict){ &ls, d_str, d_lane, d_kconf, d_nccl };
	struct gt_agent_source src = { .name = "synth", .ctx = &ls, .status = s_status };
	if (gt_agent_init(&src, err, sizeof(err)) < 0) {
		cmd_error("sim --live: %s", err);
		gt_sim_free(sim);
		gt_store_free(ls.s);
		return 1;
	}
	if (getenv("GTRACE_AUTOSTART"))
		gt_agent_autostart((uint32_t)strtoul(getenv("GTRACE_AUTOSTART"), NULL, 10), err, sizeof(err));
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("gtrace sim --live: pid %d, socket @gtrace-%d\n", (int)getpid(), (int)getpid());
	fflush(stdout);
	/* say whether simulated time is wall time */
	struct gt_sim_truth tr;
	gt_sim_truth_get(sim, &tr);
	double native = tr.step_ns > 0 ? (double)tr.events_per_step * 1e9 / (double)tr.step_ns : 0;
	if (rate > 0 && native > 0)
		fprintf(stderr, "gtrace sim --live: --rate %.0f events/s: the simulated clock runs at %.2fx "
			"wall time (real time is %.0f events/s: %llu events per %.1f ms step)\n", rate,
			rate / native, native, (unsigned long long)tr.events_per_step, (double)tr.step_ns / 1e6);
	else if (native > 0)
		fprintf(stderr, "gtrace sim --live: real time, %llu events per %.1f ms step (%.0f events/s)\n",
			(unsigned long long)tr.events_per_step, (double)tr.step_ns / 1e6, native);
	ls.sim_t0_ns = ls.sim_end_ns = o.t0_ns;

	while (wait && !stop_flag && !gt_agent_pub())
		sleep_ns(2000000);
	int64_t t_start = now_ns();
	ls.wall_t0_ns = t_start;
	const char *why = "simulation finished";
	for (;;) {
		if (stop_flag) {
			why = "simulator stopped by a signal";
			break;
		}
		if (seconds > 0 && now_ns() - t_start >= (int64_t)(seconds * 1e9)) {
			why = "simulation time is up";
			break;
		}
		long r = gt_sim_next_step(sim, emit, &ls);
		if (r <= 0) {
			if (r < 0)
				why = "simulator error";
			break;
		}
		/* pace: the next step starts when the wall clock reaches this one's
		   simulated end (real time), or when rate * elapsed events are out */
		int64_t due = rate > 0 ? t_start + (int64_t)((double)ls.generated / rate * 1e9)
				       : t_start + (ls.sim_end_ns - ls.sim_t0_ns);
		while (!stop_flag && now_ns() < due) {
			sleep_ns(due - now_ns() < 20000000 ? due - now_ns() : 20000000);
			gt_agent_pub();
		}
	}
	gt_agent_end(why);
	int64_t t_end = now_ns();
	while (!stop_flag && gt_agent_capturing() && now_ns() - t_end < (int64_t)(linger * 1e9)) {
		sleep_ns(10000000);
		gt_agent_pub();
	}
	fprintf(stderr, "gtrace sim --live: %s; %llu events generated, %llu published\n", why,
		(unsigned long long)ls.generated, (unsigned long long)ls.published);
	gt_agent_shutdown();
	gt_sim_free(sim);
	gt_store_free(ls.s);
	return 0;
}
