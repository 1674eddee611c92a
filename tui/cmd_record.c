/* cmd_record.c - 'gtrace record' (not built yet) */
#include "cmd.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cmd_error("'record' is not available in this build yet");
	return 1;
}
