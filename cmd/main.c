/* main.c — txguard's entry point: parse, dispatch, exit. Nothing else. */
#include "cli.h"

int main(int argc, char **argv)
{
	return tg_cli_main(argc, argv);
}
