#include "cli.h"
int tg_cli_main(int argc, char **argv) { (void)argc; (void)argv; return 125; }
