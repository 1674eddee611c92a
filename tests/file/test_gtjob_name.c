/* test_gtjob_name.c - a node's name before its stream says its host
 * (trial 2: one node showed its whole command line, the other its host) */
#include <criterion/criterion.h>
#include <string.h>
#include "gtrace/gtjob.h"

static void is(const char *cmd, const char *want)
{
	char out[128];
	gt_job_short_name(cmd, out, sizeof(out));
	cr_expect_str_eq(out, want, "'%s' -> '%s', want '%s'", cmd, out, want);
}

Test(gtjob_name, host_from_the_command)
{
	is("GTRACE_HOSTNAME=nodeA /work/x/build/tui/gtrace record -q -o - -- gtrace sim --live", "nodeA");
	is("A=1 GTRACE_HOSTNAME=n7 gtrace record -o -", "n7");
	is("ssh node7 gtrace record --all -o -", "node7");
	is("ssh -p 2222 -i /k/id bob@node8 gtrace record -o -", "node8");
	is("/usr/bin/ssh -o BatchMode=yes gpu3 gtrace", "gpu3");
	is("srun -N1 -w gpu12 gtrace record -o -", "gpu12");
	is("srun --nodelist=gpu13 gtrace record -o -", "gpu13");
}

Test(gtjob_name, first_word_otherwise)
{
	is("echo hello world", "echo");
	is("  /bin/cat /tmp/a.gtrace", "cat");
	is("X=1 kubectl exec pod -- gtrace", "kubectl");
	is("", "");
}

Test(gtjob_name, node_named_short)
{
	struct gt_store *s = gt_store_new();
	cr_assert(s && gt_store_finish(s) == 0);
	struct gt_job *j = gt_job_new(s);
	cr_assert(j);
	int k = gt_job_add_node(j, "GTRACE_HOSTNAME=nodeA /long/path/gtrace record -q -o -");
	cr_assert(k >= 0);
	struct gt_job_node_info in;
	gt_job_node(j, k, &in);
	cr_expect_str_eq(in.host, "nodeA");
	gt_job_free(j);
	gt_store_free(s);
}
