/* approver.h — `action: ask`: an outside program decides (issue 13).
 *
 * txguard stays headless: with --approver CMD it holds the trapped call,
 * runs `sh -c CMD` with the pending decision as ONE JSON object on stdin
 * (rule, reason, op, syscall, pid, path, path2, argv, address, workspace)
 * and reads ONE line of JSON from its stdout:
 *     {"decision": "allow" | "deny", "remember": true, "reason": "..."}
 * "remember" applies the answer to the rest of the run for the same rule.
 * No approver, a timeout (the approver is killed), a crash, an exit status
 * other than 0, or an answer that is not such an object: deny, with the
 * reason in the decision and decided_by "txguard".
 */
#pragma once

#include <stdint.h>

#include "base/op.h"
#include "policy/policy.h"

struct tg_approver;

/* cmd may be NULL (no approver: ask is deny). 0 or -ENOMEM. */
int tg_approver_new(const char *cmd, uint64_t timeout_ms, const char *workspace,
                    struct tg_approver **out);
void tg_approver_free(struct tg_approver *a);

/* Resolve an `ask` verdict in place: v->action becomes TG_ACT_ALLOW or
 * TG_ACT_DENY (v->err kept, EPERM when 0), v->decided_by and, when the
 * approver gave one or it failed, v->reason are set (strings owned by a). */
void tg_approver_resolve(struct tg_approver *a, const struct tg_op *op, struct tg_verdict *v);
