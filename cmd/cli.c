/* cli.c — dispatch to the subcommands. */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "config.h"

int tg_cli_main(int argc, char **argv)
{
	struct tg_opts o;
	int prc = tg_parse_args(argc, argv, &o, stderr);
	if (prc == 0)
		prc = tg_opts_resolve_env(&o, stderr);
	if (prc < 0) {
		tg_opts_free(&o);
		/* Out of memory is txguard failing, not the caller's mistake. */
		if (prc == -ENOMEM) {
			fputs("txguard: out of memory while reading the command line\n", stderr);
			return 125; /* the contract's "txguard failed" */
		}
		return TG_EXIT_USAGE;
	}
	int rc;
	switch (o.cmd) {
	case TG_CMD_HELP:
		rc = tg_print_help(o.help_topic, stdout, stderr) < 0 ? TG_EXIT_USAGE : 0;
		break;
	case TG_CMD_VERSION: printf("txguard %s\n", TG_VERSION); rc = 0; break;
	case TG_CMD_RUN: rc = tg_cmd_run(&o); break;
	case TG_CMD_POLICY_CHECK: rc = tg_cmd_policy_check(&o); break;
	case TG_CMD_POLICY_EXPLAIN: rc = tg_cmd_policy_explain(&o); break;
	case TG_CMD_DOCTOR: rc = tg_cmd_doctor(&o); break;
	case TG_CMD_RECOVER: rc = tg_cmd_recover(&o); break;
	case TG_CMD_STATUS: rc = tg_cmd_status(&o); break;
	default: rc = tg_cmd_history(&o); break;
	}
	tg_opts_free(&o);
	return rc;
}
