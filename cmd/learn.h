/* learn.h — `txguard learn [-o FILE] -- CMD`: draft a policy drop-in from a
 * real run (issue 13; Sandlock's learn, firejail --build).
 *
 * The run is an ordinary transaction with every rule in audit mode
 * (--audit-only: nothing denied, no Landlock, the journal still restores a
 * failed run). Each would-be refusal is noted; at the end a YAML drop-in is
 * written that would have allowed what the run needed: writable places,
 * addresses it connected to, and (as comments) programs it ran. It never
 * drafts an allow for secrets (deny-read), txguard's own state, the fixed
 * syscall set or exec rules (rm -rf / and its kind): those are listed as
 * refused. A run that failed still gets its draft, marked as such.
 */
#pragma once

#include <stdio.h>

#include "base/op.h"
#include "policy/policy.h"

struct tg_learn;

struct tg_learn *tg_learn_new(const char *workspace);
void tg_learn_free(struct tg_learn *l);

/* A decision of the audit-only run (allows are ignored). */
void tg_learn_note(struct tg_learn *l, const struct tg_op *op, const struct tg_verdict *v);
/* A program the run executed. */
void tg_learn_exec(struct tg_learn *l, const char *exe);

/* Write the draft; exit_status is the command's (non-zero: marked failed).
 * 0 or -errno. */
int tg_learn_write(const struct tg_learn *l, const char *path, char *const *argv, int exit_status);
