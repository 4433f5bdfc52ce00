/* common.h — what txguard's subcommands share: the error family, the policy
 * paths, the workspace (workspace.c) and the nested-run check (nested.c).
 * Below the dispatcher (cli.c): nothing here calls a subcommand. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

struct tg_opts;

/* One error family; messages go to stderr prefixed "txguard: ". tg_warn
 * keeps errno. */
void tg_warn(const char *fmt, ...) TG_PRINTF(1, 2);

struct tg_recovery;
/* The one line of an automatic recovery (a run's start, undo, redo):
 * "txguard: restored N interrupted transaction(s) WHERE", and what it
 * copied to STATE_DIR/aside. */
void tg_say_recovered(const struct tg_recovery *r, const char *state_dir, const char *where);
/* Print and return 125 (the contract's "txguard failed"). */
int tg_fail(const char *fmt, ...) TG_PRINTF(1, 2);
/* End a JSON document on stdout (newline, free): 0, or tg_fail naming
 * what could not be written ("the log"). */
struct tg_json;
int tg_json_done(struct tg_json *j, const char *what);

/* Policy paths in load order: installed policy.d (unless --no-default-policy),
 * $TXGUARD_POLICY entries, the workspace's own policy file, then -p.
 * workspace: the caller's resolved workspace (tg_workspace_resolve's), or
 * NULL to resolve it here. Returns a NULL-terminated vector. */
int tg_policy_paths(const struct tg_opts *o, const char *workspace, char ***out);
/* The per-workspace policy file, relative to the workspace root: loaded
 * after $TXGUARD_POLICY and before -p, and never writable by the command. */
#define TG_WORKSPACE_POLICY ".txguard.yaml"

/* workspace.c: how the workspace was chosen (the report's workspace_source). */
enum tg_ws_source { TG_WS_OPTION = 0, TG_WS_GIT, TG_WS_POLICY_FILE, TG_WS_CWD };
const char *tg_ws_source_name(enum tg_ws_source src);
/* Absolute, normalised workspace: -w, else the nearest ancestor of the
 * current directory holding .txguard.yaml or .git (unless too wide), else
 * the current directory. -ENOTDIR when it is not a directory. */
int tg_workspace_resolve(const struct tg_opts *o, char **out, enum tg_ws_source *src);
int tg_workspace_path(const struct tg_opts *o, char **out);
/* Why ws is too wide to be a workspace ("your home directory"), or NULL. */
const char *tg_workspace_too_wide(const char *ws);
/* tg_workspace_resolve() plus the too-wide refusal (unless
 * --force-workspace), for commands that write. On failure -errno, and why
 * holds the one-line error (what is wrong, what to do). */
int tg_workspace_for_writing(const struct tg_opts *o, char **out, enum tg_ws_source *src,
                             char *why, size_t len);

/* nested.c: -EBUSY, with the one-line reason in why, when this process is
 * traced by a txguard (txguard under txguard); else 0. */
int tg_nested_check(char *why, size_t len);
