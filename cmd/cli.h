/* cli.h — txguard's command line: the dispatch (tg_cli_main; main() only
 * calls it), the help and the subcommands' entry points. The options are
 * args.h's and what the subcommands share is common.h's: both below this,
 * neither calls a subcommand. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "args.h"
#include "base/util.h"
#include "common.h"
#include "txn/txn.h"

/* Usage text of the tool or one subcommand (NULL = main). -ENOENT, after
 * one line on err naming the topics, when topic is not one. */
int tg_print_help(const char *topic, FILE *out, FILE *err);
/* Whether word names a help topic (a subcommand). */
bool tg_help_has_topic(const char *word);

int tg_cli_main(int argc, char **argv);

/* Subcommands (subcmds.c / run.c). Each returns the process exit code. */
int tg_cmd_run(struct tg_opts *o);
int tg_cmd_policy_check(struct tg_opts *o);
int tg_cmd_policy_explain(struct tg_opts *o);
/* The question policy explain was asked (cmd/explain.c): 0 allow, 1 deny
 * or kill, 2 a bad question; -1 when none was asked (dump the rules). */
struct tg_policy;
int tg_explain_question(const struct tg_opts *o, const struct tg_policy *p, const char *ws);
int tg_cmd_doctor(struct tg_opts *o);
int tg_cmd_recover(struct tg_opts *o);
/* undo --dry-run (preview.c): workspace absolute, state_dir as given. */
int tg_cmd_undo_preview(struct tg_opts *o, const char *workspace, const char *state_dir);
/* redo --dry-run (preview.c). */
int tg_cmd_redo_preview(struct tg_opts *o, const char *workspace, const char *state_dir);
int tg_cmd_history(struct tg_opts *o);
int tg_cmd_status(struct tg_opts *o);
