/* policy.h — the YAML policy: load, merge, judge one operation.
 *
 * The policy knows nothing of ptrace: it judges a decoded struct tg_op.
 * Loading reports every problem as "file:line:col: message" and fails closed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/op.h"

struct tg_policy;

enum tg_action {
	/* Ordered by strictness: the strictest matching verdict wins. */
	TG_ACT_ALLOW = 0,
	TG_ACT_AUDIT = 1,
	TG_ACT_ASK = 2,          /* the approver decides (--approver); without one: deny */
	TG_ACT_DENY = 3,
	TG_ACT_KILL = 4,
};

struct tg_verdict {
	enum tg_action action;
	int err;                 /* errno for TG_ACT_DENY (default EPERM) */
	const char *rule_id;     /* owned by the policy; NULL for the default allow */
	const char *reason;      /* owned by the policy */
	const char *source;      /* "file:line" the rule came from */
	/* Who decided when the policy said `ask`: "approver", or "txguard"
	 * when the approver is missing, timed out, crashed or answered
	 * garbage (then a deny). NULL: the policy itself. */
	const char *decided_by;
};

/* Where the run happens: the policy resolves `~`, $HOME and "workspace". */
struct tg_policy_ctx {
	const char *workspace;   /* absolute, normalised */
	const char *home;        /* absolute, normalised; may be NULL */
	const char *state_dir;   /* txguard's own journal dir: always denied to the tracee */
	const char *cache_dir;   /* the policy cache (tg_policy_cache): denied alike */
};

/* One load error / warning. */
struct tg_policy_diag {
	char *file;
	unsigned line, col;      /* 1-based; 0 when unknown */
	char *message;
};

struct tg_policy_diags {
	struct tg_policy_diag *v;
	size_t n;
};
void tg_policy_diags_clear(struct tg_policy_diags *d);
/* Print every diagnostic as "file:line:col: message\n". */
void tg_policy_diags_print(const struct tg_policy_diags *d, FILE *out);

/* Load files and directories (a directory contributes its *.yaml / *.yml
 * files in lexical order) in the given order; later rules override earlier
 * ones with the same id. Returns 0, or -EINVAL with *diags filled (every
 * problem, not just the first), or another -errno. */
int tg_policy_load(struct tg_policy **out, const char *const *paths, size_t npaths,
                   struct tg_policy_diags *diags);
/* The parsed trees of policy texts, kept in dir by content (policy/ytree.h):
 * a file whose text is there is not parsed again. And the model the whole
 * set of files loads to (policy/model.c), under a key of this binary and
 * of every file's name and stat: when it is there, no file is read at all.
 * dir must be one the command cannot write (txguard's state home). The
 * counts are filled. */
struct tg_policy_cache {
	const char *dir;
	/* The length of dir's leading part that may hold symlinks (the
	 * user's HOME or XDG_STATE_HOME); below it none is followed, made
	 * 0700 where missing. 0: none anywhere. */
	size_t trusted;
	/* The trees only, not the whole model (policy/model.c): for tests
	 * of the tree layer. */
	bool no_model;
	/* Filled: per file, its tree read, missed, stored; whether the whole
	 * model was read (then no file's tree was needed) or stored. */
	unsigned hits, misses, stored;
	bool model_hit, model_stored;
};
/* tg_policy_load with a cache (NULL: none). A cache that cannot be read
 * or written only costs the parse: it never fails a load. */
int tg_policy_load_cached(struct tg_policy **out, const char *const *paths, size_t npaths,
                          struct tg_policy_diags *diags, struct tg_policy_cache *cache);
/* Same, from a YAML document in memory (tests, fuzzing); `name` is used in
 * diagnostics. */
int tg_policy_load_string(struct tg_policy **out, const char *name, const char *yaml,
                          size_t len, struct tg_policy_diags *diags);
void tg_policy_free(struct tg_policy *p);

void tg_policy_set_ctx(struct tg_policy *p, const struct tg_policy_ctx *ctx);

/* Judge one operation. Never fails: on internal trouble it returns a deny. */
void tg_policy_decide(const struct tg_policy *p, const struct tg_op *op, struct tg_verdict *out);

/* What the seccomp filter must know from the policy. */
struct tg_policy_filter_info {
	const char *const *denied_syscalls;  /* names denied in BPF with deny_errno[i] */
	const int *deny_errno;
	size_t ndenied;
	bool trap_network;                   /* connect/sendto/sendmsg must stop */
	unsigned long max_procs;             /* 0 = unlimited */
};
void tg_policy_filter_info(const struct tg_policy *p, struct tg_policy_filter_info *out);

/* The `paths.create` entries, expanded: writable places txguard creates
 * before the run when missing (Landlock can only grant what exists). A
 * trailing "/" marks a directory, else an empty file. 0 or -ENOMEM. */
int tg_policy_create_paths(const struct tg_policy *p, char ***out);

/* Extra writable places (absolute, expanded) for Landlock and reports. */
const char *const *tg_policy_writable_paths(const struct tg_policy *p, size_t *n);
/* Secret paths that must not be read (absolute, expanded). */
const char *const *tg_policy_deny_read_paths(const struct tg_policy *p, size_t *n);

/* The policy files loaded, in load order, directories expanded into their
 * files; spelled as given to tg_policy_load (a directory's files as
 * "DIR/NAME"), or the name given to tg_policy_load_string. Owned by the
 * policy; *n = 0 and NULL for a NULL policy. For the run report. */
const char *const *tg_policy_files(const struct tg_policy *p, size_t *n);

/* `txguard policy check`: run every rule's examples; print failures as
 * "file:line:col: message". Returns the number of failures. */
int tg_policy_check_examples(const struct tg_policy *p, FILE *out);

/* `txguard policy explain`: human text, or JSON when json is true. Explains
 * the verdict for an exec of argv, and which rules matched. */
enum tg_action tg_policy_explain_exec(const struct tg_policy *p, char *const *argv, bool json, FILE *out);
/* `txguard policy explain` for a signal: the verdict a command under txguard
 * would get for kill(pid, sig) of that process (outside the tree, since it
 * runs already), which rule, and why. Returns the verdict's action. */
enum tg_action tg_policy_explain_signal(const struct tg_policy *p, pid_t pid, int sig, bool json, FILE *out);
/* `txguard policy explain` with no argv: the merged rule list and where each
 * rule came from (which file overrode which). */
void tg_policy_dump(const struct tg_policy *p, bool json, FILE *out);

const char *tg_action_name(enum tg_action a);

/* ---- network: hosts: (the egress proxy's rules, core/proxy/proxy.h) ---- */

/* True when the policy has `network: hosts:` entries: then the run starts the
 * proxy, and direct connections outside loopback are refused (the tracer). */
bool tg_policy_has_hosts(const struct tg_policy *p);
/* The verdict for a connection to host:port made through the proxy. host is
 * a DNS name or an IP literal (no brackets), any case, an optional trailing
 * dot. Deny entries win over allow entries; a host no entry allows is
 * denied. rule_id is "network-hosts-allow", "network-hosts-deny" or
 * "network-hosts-default-deny"; source is the entry's "file:line" (NULL for
 * the default); *entry (when not NULL) the entry as written, or NULL.
 * Never fails: a malformed host is denied. */
void tg_policy_host_verdict(const struct tg_policy *p, const char *host, unsigned port,
                            struct tg_verdict *out, const char **entry);
/* Split "host:port", "[v6]:port" or "host" (port 443) for the verdict above.
 * 0, or -EINVAL. host is copied into buf (brackets removed). */
int tg_policy_host_split(const char *text, char *buf, size_t bufsz, unsigned *port);
/* `txguard policy explain --connect HOST:PORT` for the host rules. */
void tg_policy_explain_host(const struct tg_policy *p, const char *host, unsigned port, bool json,
                            FILE *out);

/* Reading command lines and paths as the policy does (argv.c): also for
 * the CLI's `policy explain`. */
#include "argv.h"
