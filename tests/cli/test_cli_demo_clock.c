/*
 * test_cli_demo_clock.c - the demo's stand-in trainer runs in real time: a
 * recording of S seconds of `gtrace demo --trainer` spans S seconds of
 * trace (before, a fixed 20,000-50,000 events/s made the simulated clock
 * run at a fraction of the wall: 20 s simulated after 91 s).  With --rate
 * the trainer says how fast its clock then runs.  Truth: the wall clock
 * (--seconds) of the recording.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cjson/cJSON.h>

#include "clirun.h"

static char tmpdir[256];

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gtrace-clock-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

/* record `demo --trainer --seconds S EXTRA`; the span of the trace (s);
 * the trainer's messages in *msg */
static double record_span(double seconds, const char *extra, char **msg)
{
	const char *b = getenv("GTRACE_BUILD");
	cr_assert_not_null(b, "GTRACE_BUILD not set");
	char cmd[1024];
	/* --wait: the trainer publishes only while a recorder is attached, and
	 * under load the attach can take longer than the run (a recording of
	 * no events, seen under ASan beside the rest of the suite); its
	 * seconds count from the attach */
	snprintf(cmd, sizeof(cmd), "'%s/tui/gtrace' record -q -o '%s/r.gtrace' -- '%s/tui/gtrace' demo "
		 "--trainer --gpus 2 --seconds %.1f --linger 0 --wait %s 2>&1", b, tmpdir, b, seconds,
		 extra);
	cr_assert_eq(clirun_capture(cmd, msg), 0, "%s", *msg);
	char *out = NULL;
	snprintf(cmd, sizeof(cmd), "'%s/tui/gtrace' stats '%s/r.gtrace' --report summary --format json "
		 "--table summary 2>&1", b, tmpdir);
	cr_assert_eq(clirun_capture(cmd, &out), 0, "%s", out);
	cJSON *t = cJSON_Parse(out);
	cr_assert(t, "%s", out);
	cJSON *rows = cJSON_GetObjectItem(t, "rows");
	cJSON *span = cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "Span (s)");
	cr_assert(cJSON_IsNumber(span), "%s\n%s", out, *msg);
	double v = span->valuedouble;
	cJSON_Delete(t);
	free(out);
	return v;
}

TestSuite(cli_demo_clock, .init = setup, .fini = teardown);

Test(cli_demo_clock, real_time_by_default, .timeout = 60)
{
	char *msg = NULL;
	double span = record_span(2.0, "", &msg);
	/* two wall seconds of stepping: two seconds of trace (a step of slack) */
	cr_assert(span > 1.6 && span < 2.3, "span %.3f s of a 2 s recording\n%s", span, msg);
	cr_assert(strstr(msg, "real time"), "%s", msg);
	free(msg);
}

Test(cli_demo_clock, rate_says_the_clock, .timeout = 60)
{
	char *msg = NULL;
	/* 4,000 events/s is far below the simulated trainer's real-time rate:
	   its clock runs slow, and the trainer says so */
	double span = record_span(2.0, "--rate 4000", &msg);
	const char *p = strstr(msg, "the simulated clock runs at ");
	cr_assert(p, "%s", msg);
	double x = atof(p + strlen("the simulated clock runs at "));
	cr_assert(x > 0 && x < 1, "%s", msg);
	/* the span says the same: about x of the wall time */
	cr_assert(span < 2.0 * x * 1.5 + 0.1, "span %.3f s at %.2fx\n%s", span, x, msg);
	free(msg);
}
