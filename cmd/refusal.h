/* refusal.h — refusals made by the kernel, not by the tracer, reported as
 * decisions (issue 13: every refusal reaches the caller).
 *
 * Landlock refuses without a stop: the supervisor learns nothing unless it
 * looks. For the calls that trap anyway (write opens, namespace changes),
 * txguard knows from the ruleset (tg_landlock_view) whether Landlock may
 * refuse the call; only then does the tracer stop again at the call's return
 * and, on EACCES/EPERM, the refusal becomes a decision naming the rule
 * Landlock enforced. Calls that never trap (read-only opens, exec of a
 * denied file) cannot be seen this way. As root, the secrets fanotify can
 * mark are enforced by its marks instead (cmd/run.c, landlock.h's
 * tg_fanguard) and each refusal is a decision; the rest stay Landlock's and
 * are reported as enforced without being observable
 * (tg_refusals_unobserved).
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "audit/audit.h"
#include "landlock/landlock.h"
#include "base/op.h"
#include "policy/policy.h"

struct tg_refusals;

/* spec: the Landlock spec the child enforces (copied what is needed);
 * writable: the policy's writable places (expanded) for the wording. */
int tg_refusals_new(const struct tg_landlock_spec *spec, struct tg_landlock_view *view,
                    struct tg_refusals **out);
void tg_refusals_free(struct tg_refusals *rf);

/* An allowed call: true when its result must be watched (then a copy of op
 * is kept for tg_refusals_result). */
bool tg_refusals_watch(struct tg_refusals *rf, const struct tg_op *op);

/* The result of a watched call of thread pid. Returns the op (valid until
 * the next call) and fills *v when the kernel refused it, else NULL. */
const struct tg_op *tg_refusals_result(struct tg_refusals *rf, pid_t pid, long rval,
                                       struct tg_verdict *v);

/* Would Landlock refuse op (given as a write, unlink, read-only open or
 * exec at path) although the tracer allowed it? Fills *v naming the rule,
 * as tg_refusals_result would, and returns true; for `policy explain`. */
bool tg_refusals_predict(const struct tg_refusals *rf, const struct tg_op *op, struct tg_verdict *v);

/* Rules enforced by the kernel where no refusal can be seen (see above). */
const struct tg_unobserved *tg_refusals_unobserved(const struct tg_refusals *rf, size_t *n);

/* No needless refusals: create the missing places of `paths` (from
 * tg_policy_create_paths: "DIR/" or "FILE") whose parent directory exists,
 * before the ruleset is built. A directory gets mode 0700, a file is empty
 * with mode 0600; nothing existing is touched, no symlink is followed.
 * Returns how many were created; failures are skipped (the run then sees
 * the refusal, reported as rule landlock-new-place). */
int tg_refusals_precreate(char *const *paths);
