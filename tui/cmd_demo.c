/* cmd_demo.c - 'gtrace demo' (not built yet) */
#include "cmd.h"

int cmd_demo(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cmd_error("'demo' is not available in this build yet");
	return 1;
}
