/* cmd_export.c - 'gtrace export' (not built yet) */
#include "cmd.h"

int cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cmd_error("'export' is not available in this build yet");
	return 1;
}
