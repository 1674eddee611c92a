/* cmd_attach.c - 'gtrace attach' (not built yet) */
#include "cmd.h"

int cmd_attach(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cmd_error("'attach' is not available in this build yet");
	return 1;
}
