/* cmd_open.c - 'gtrace open' (not built yet) */
#include "cmd.h"

int cmd_open(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cmd_error("'open' is not available in this build yet");
	return 1;
}
