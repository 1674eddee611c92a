/* cmd_sim.c - 'gtrace sim' (not built yet) */
#include "cmd.h"

int cmd_sim(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cmd_error("'sim' is not available in this build yet");
	return 1;
}
