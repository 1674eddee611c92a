/* cmd_run.c - 'gtrace run' (not built yet) */
#include "cmd.h"

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cmd_error("'run' is not available in this build yet");
	return 1;
}
