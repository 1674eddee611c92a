/* cmd_stats.c - 'gtrace stats' (not built yet) */
#include "cmd.h"

int cmd_stats(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cmd_error("'stats' is not available in this build yet");
	return 1;
}
