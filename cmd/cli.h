/* cli.h — the command line: parsing (testable), dispatch, subcommands. */
#pragma once
int tg_cli_main(int argc, char **argv);
