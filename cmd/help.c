/* help.c — `txguard --help` and `txguard SUBCOMMAND --help`. Keep these in
 * step with docs/txguard.1: tests/audit/manpage_test.sh compares them. */
#include <string.h>

#include "cli.h"

static const char main_help[] =
	"Usage: txguard [RUN OPTIONS] -- CMD [ARGS...]\n"
	"       txguard [OPTIONS] SUBCOMMAND [ARGS...]\n"
	"\n"
	"Run CMD as a transaction on the workspace: a seccomp/ptrace supervisor\n"
	"vets every exec and write against the YAML policy, journals what CMD is\n"
	"about to change, commits when CMD exits 0 and restores the workspace when\n"
	"it fails, is killed, or times out.\n"
	"\n"
	"Subcommands:\n"
	"  run              the same as the form with '--'\n"
	"  learn            run CMD with every rule in audit mode, draft a policy drop-in\n"
	"  policy check     validate policy files and run their examples\n"
	"  policy explain   show the verdict for a command line, or the merged rules\n"
	"  doctor           report the kernel features txguard relies on\n"
	"  recover          restore an interrupted transaction of the workspace\n"
	"  status           open multi-command transactions, interrupted runs\n"
	"  log              list the workspace's runs, newest first\n"
	"  show ID          what a run changed, path by path (ID: a unique prefix,\n"
	"                   the random suffix, or 'last')\n"
	"  diff ID [PATH]   diff a transaction's pre-images with the current files\n"
	"  undo [ID]        restore the workspace to before transaction ID\n"
	"  redo             undo the last undo (refused once a newer run exists)\n"
	"  begin            start a multi-command transaction (prints its ID)\n"
	"  commit ID        commit a multi-command transaction\n"
	"  rollback ID      roll a multi-command transaction back\n"
	"  help [SUBCOMMAND]\n"
	"\n"
	"Run options:\n"
	"  -w, --workspace DIR      the workspace (default: the top of the enclosing\n"
	"                           git work tree, or the nearest directory with a\n"
	"                           .txguard.yaml, else the current directory; CMD\n"
	"                           runs in the current directory)\n"
	"      --force-workspace    accept a too-wide workspace (/, $HOME, /usr...)\n"
	"  -p, --policy PATH        extra policy file or directory (repeatable)\n"
	"      --no-default-policy  do not load the installed policy.d\n"
	"      --state-dir DIR      where journals and history live\n"
	"      --rollback-on WHEN   failure (default), signal, never, always, or a\n"
	"                           comma list of exit codes that count as failure\n"
	"      --audit-only         deny nothing; log what would have been denied\n"
	"      --approver CMD       answers rules with action: ask (JSON on stdin, one\n"
	"                           line {\"decision\":\"allow\"|\"deny\"} out); none: deny\n"
	"      --approver-timeout DURATION  deny when it has not answered (default 30s)\n"
	"      --timeout DURATION   SIGTERM the tree after DURATION (e.g. 30s, 5m)\n"
	"      --kill-after DURATION  then SIGKILL after this grace (default 2s)\n"
	"      --grace DURATION     how long descendants may outlive CMD (default 1s)\n"
	"      --max-procs N        limit on live tasks in the tree; over it the tree\n"
	"                           is killed (default: the policy's limits.max_procs,\n"
	"                           2048 in the installed policy; 4096 without one)\n"
	"      --memory-limit SIZE  address-space limit per process (e.g. 2G)\n"
	"      --max-file-size SIZE largest file a process may write (e.g. 100M)\n"
	"      --env-allow PATTERN  keep only matching environment variables\n"
	"      --env-deny PATTERN   remove matching environment variables\n"
	"      --strip-secrets      remove variables that look like secrets\n"
	"      --report FILE        write the run's JSON report to FILE\n"
	"      --report-fd N        ... or to file descriptor N\n"
	"      --log FILE           write JSON Lines events to FILE\n"
	"      --log-fd N           ... or to file descriptor N\n"
	"      --log-level LEVEL    decisions (default), exec, or all\n"
	"      --lock MODE          wait (default) or fail when the workspace is busy\n"
	"      --tx ID              join a multi-command transaction\n"
	"      --tx-failure MODE    self (default) or all: what a failing command\n"
	"                           in a multi-command transaction rolls back\n"
	"      --journal-sync MODE  auto (default), full (every record fdatasync'd\n"
	"                           before its call runs) or batch (at most every\n"
	"                           20 ms: safe if txguard is killed, not on a\n"
	"                           power cut); auto batches on the workspace's\n"
	"                           own ext4 or tmpfs (batch's guarantee), else\n"
	"                           full\n"
	"  -q, --quiet              no summary line (denials are still printed)\n"
	"  -v, --verbose            the summary line even when nothing changed\n"
	"      --color WHEN         auto (default), always, never\n"
	"  -h, --help               this text (also after a subcommand)\n"
	"  -V, --version            print the version\n"
	"\n"
	"Exit status: CMD's own; 128+N when signal N killed it; 125 when txguard\n"
	"itself failed; 126 when CMD cannot be executed; 127 when it is not found;\n"
	"2 when txguard's command line is wrong (nothing ran).\n"
	"Whether the workspace was restored is in the report (--report).\n"
	"\n"
	"Environment (read at start; an option beats its variable, a variable the\n"
	"default; a bad value exits 2):\n"
	"  TXGUARD_POLICY             extra policy paths, colon-separated, read\n"
	"                             after the defaults and before -p\n"
	"  TXGUARD_DEFAULT_POLICY_DIR the default policy instead of the installed\n"
	"                             one (--no-default-policy reads none)\n"
	"  TXGUARD_STATE_DIR          the state dir itself (absolute); --state-dir\n"
	"                             beats it\n"
	"  TXGUARD_JOURNAL_SYNC       auto, full or batch; --journal-sync beats it\n"
	"  TXGUARD_POLICY_CACHE       1 (default) or 0: keep parsed policy files\n"
	"                             and the compiled seccomp filter in the\n"
	"                             state home\n"
	"  TXGUARD_HISTORY_MAX_RUNS   committed runs kept (default 50)\n"
	"  TXGUARD_HISTORY_MAX_BYTES  history size kept (default 1G)\n"
	"  TXGUARD_PROXY_RESOLVE      name:address[,...] for the egress proxy\n"
	"  TXGUARD_PROXY_TIMEOUT      the egress proxy's timeouts (default 10s)\n"
	"  TG_JOURNAL_DEBUG           0 (default), 1 or 2: trace rollback steps\n"
	"  NO_COLOR                   set: --color auto never colours\n"
	"See txguard(1) and txguard-policy(5).\n";

static const struct {
	const char *topic;
	const char *text;
} topics[] = {
	{ "learn", "Usage: txguard learn [-o FILE] [RUN OPTIONS] -- CMD [ARGS...]\n"
	           "Run CMD as a transaction with every rule in audit mode (nothing denied, no\n"
	           "Landlock; a failed run is still restored) and write a policy drop-in that\n"
	           "would have allowed what it did: writable places, addresses, with the\n"
	           "programs it ran as comments. Secrets, txguard's state, the fixed syscall\n"
	           "set and exec rules are never drafted as allowed: the draft lists them.\n"
	           "  -o, --output FILE        where to write the draft (default txguard-learned.yaml)\n" },
	{ "run", "Usage: txguard run [RUN OPTIONS] -- CMD [ARGS...]\n"
	         "The same as 'txguard [RUN OPTIONS] -- CMD'; see 'txguard --help' for the options.\n" },
	{ "policy", "Usage: txguard policy check [-p PATH]... [--no-default-policy] [FILES...]\n"
	            "       txguard policy explain [-p PATH]... [--no-default-policy] [--json] [-- ARGV...]\n"
	            "       txguard policy explain [OPTIONS] --path P [--op read|write|unlink|exec]\n"
	            "       txguard policy explain [OPTIONS] --connect ADDR:PORT [--udp]\n" },
	{ "policy check",
	  "Usage: txguard policy check [-p PATH]... [--no-default-policy] [FILES...]\n"
	  "Load and validate the policy (the defaults, $TXGUARD_POLICY, -p, then FILES),\n"
	  "print every error as file:line:col: message, run every rule's examples.\n"
	  "Exits 0 when all is well, 1 when a file has errors or an example fails.\n"
	  "  -p, --policy PATH        extra policy file or directory (repeatable)\n"
	  "      --no-default-policy  do not load the installed policy.d\n" },
	{ "policy explain",
	  "Usage: txguard policy explain [-p PATH]... [--no-default-policy] [--json] [-- ARGV...]\n"
	  "       txguard policy explain [OPTIONS] --path P [--op read|write|unlink|exec]\n"
	  "       txguard policy explain [OPTIONS] --connect ADDR:PORT [--udp]\n"
	  "       txguard policy explain [OPTIONS] --signal PID[:SIG]\n"
	  "With ARGV: print the verdict txguard would give an exec of ARGV, which rule\n"
	  "and why, without running anything (one word with blanks is split as a shell\n"
	  "would; shell syntax such as ; | && is refused). With --path or --connect: the\n"
	  "verdict for that operation, and which layer (tracer or Landlock) enforces it.\n"
	  "Without a question: the merged rules and the file each one came from.\n"
	  "Exits 0 allow, 1 deny or kill, 2 a question that cannot be asked.\n"
	  "      --path P             the path of the operation (~ and relative paths work)\n"
	  "      --op OP              read, write (the default), unlink or exec\n"
	  "      --connect ADDR:PORT  1.2.3.4:443, [::1]:80, unix:/path; HOST:PORT with hosts: rules\n"
	  "      --udp                a datagram sent to ADDR (sendto) instead of a connect\n"
	  "      --signal PID[:SIG]   a signal (default 9) from the tree to that running process\n"
	  "  -p, --policy PATH        extra policy file or directory (repeatable)\n"
	  "      --no-default-policy  do not load the installed policy.d\n"
	  "  -w, --workspace DIR      the workspace the verdict assumes (default: as for a run)\n"
	  "      --json               machine-readable output\n" },
	{ "doctor", "Usage: txguard doctor [--json]\n"
	            "Probe seccomp, ptrace, PTRACE_GET_SYSCALL_INFO, Landlock and Yama, and say\n"
	            "what is missing and how to fix it. Exits 0 when txguard can run here.\n"
	            "      --json               machine-readable output\n" },
	{ "recover", "Usage: txguard recover [--dry-run] [--force] [--json] [-w DIR] [--state-dir DIR]\n"
	             "Restore any transaction of the workspace that a crashed txguard left open.\n"
	             "Paths changed after the crash are named and the recovery refused (exit 1)\n"
	             "unless --force. What changed within seconds of the crash (the run's last\n"
	             "writes or a quick edit) and, with --force, every overwritten edit is first\n"
	             "copied to STATE_DIR/aside/ID/PATH and named.\n"
	             "  -w, --workspace DIR      the workspace (default: as for a run)\n"
	             "      --state-dir DIR      where journals live\n"
	             "      --dry-run            list what would be restored, change nothing\n"
	             "      --force              overwrite paths changed after the crash\n"
	             "      --json               machine-readable output (with --dry-run)\n" },
	{ "status", "Usage: txguard status [-w DIR] [--state-dir DIR] [--json]\n"
	            "The workspace, how it was chosen, its open multi-command transactions and\n"
	            "any run that is in progress or was interrupted (txguard recover restores it).\n"
	            "  -w, --workspace DIR      the workspace (default: as for a run)\n"
	            "      --state-dir DIR      where journals live\n"
	            "      --json               machine-readable output\n" },
	{ "log", "Usage: txguard log [-w DIR] [--state-dir DIR] [--json]\n"
	         "List the workspace's runs, newest first.\n"
	         "  -w, --workspace DIR      the workspace (default: as for a run)\n"
	         "      --state-dir DIR      where journals live\n"
	         "      --json               machine-readable output\n" },
	{ "show", "Usage: txguard show ID [-w DIR] [--state-dir DIR] [--json]\n"
	          "What run ID changed, path by path. ID: the full id, any unique prefix,\n"
	          "the random suffix after the last '-' (or a prefix of it), or 'last'.\n"
	          "  -w, --workspace DIR      the workspace (default: as for a run)\n"
	          "      --state-dir DIR      where journals live\n"
	          "      --json               machine-readable output\n" },
	{ "diff", "Usage: txguard diff ID [PATH] [-w DIR] [--state-dir DIR]\n"
	          "Unified diff between ID's pre-images and the current files (binary: sizes and hashes).\n"
	          "  -w, --workspace DIR      the workspace (default: as for a run)\n"
	          "      --state-dir DIR      where journals live\n" },
	{ "undo", "Usage: txguard undo [ID] [--force] [--dry-run] [--json] [-w DIR] [--state-dir DIR]\n"
	          "Restore the workspace to how it was before transaction ID (default: the\n"
	          "newest), undoing later ones first. A path changed outside txguard since is\n"
	          "refused, and named, unless --force.\n"
	          "  -w, --workspace DIR      the workspace (default: as for a run)\n"
	          "      --state-dir DIR      where journals live\n"
	          "      --force              overwrite paths changed outside txguard\n"
	          "      --dry-run            list the steps and the conflicts, change nothing\n"
	          "      --json               machine-readable output\n" },
	{ "redo", "Usage: txguard redo [--force] [--dry-run] [--json] [-w DIR] [--state-dir DIR]\n"
	          "Undo the last 'txguard undo': the runs it undid are back as they left the\n"
	          "workspace, and a later undo undoes them again. Refused (exit 1) when there is\n"
	          "no undo to redo, when a run came after the undo (the workspace moved on), and,\n"
	          "unless --force, when a path the undo restored was changed outside txguard since.\n"
	          "  -w, --workspace DIR      the workspace (default: as for a run)\n"
	          "      --state-dir DIR      where journals live\n"
	          "      --force              overwrite paths changed outside txguard\n"
	          "      --dry-run            list the steps and the conflicts, change nothing\n"
	          "      --json               machine-readable output\n" },
	{ "begin", "Usage: txguard begin [--tx NAME] [-w DIR] [--state-dir DIR]\n"
	           "Start a multi-command transaction and print its ID; join it with\n"
	           "'txguard --tx ID -- CMD', end it with commit or rollback.\n"
	           "      --tx NAME            choose the ID\n"
	           "  -w, --workspace DIR      the workspace (default: as for a run)\n"
	           "      --state-dir DIR      where journals live\n" },
	{ "commit", "Usage: txguard commit ID [-w DIR] [--state-dir DIR]\n"
	            "Commit a multi-command transaction.\n"
	            "  -w, --workspace DIR      the workspace (default: as for a run)\n"
	            "      --state-dir DIR      where journals live\n" },
	{ "rollback", "Usage: txguard rollback ID [-w DIR] [--state-dir DIR]\n"
	              "Restore the workspace to before a multi-command transaction began.\n"
	              "  -w, --workspace DIR      the workspace (default: as for a run)\n"
	              "      --state-dir DIR      where journals live\n" },
};

bool tg_help_has_topic(const char *word)
{
	for (size_t i = 0; i < TG_ARRAY_SIZE(topics); i++)
		if (strcmp(topics[i].topic, word) == 0)
			return true;
	return false;
}

int tg_print_help(const char *topic, FILE *out, FILE *err)
{
	if (!topic) {
		fputs(main_help, out);
		return 0;
	}
	for (size_t i = 0; i < TG_ARRAY_SIZE(topics); i++) {
		if (strcmp(topics[i].topic, topic) == 0) {
			fputs(topics[i].text, out);
			return 0;
		}
	}
	fprintf(err, "txguard: no help topic '%s'; the topics are the subcommands:", topic);
	for (size_t i = 0; i < TG_ARRAY_SIZE(topics); i++)
		fprintf(err, "%s %s", i ? "," : "", topics[i].topic);
	fputc('\n', err);
	return -ENOENT;
}
