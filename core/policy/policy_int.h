/* policy_int.h — the policy's internal model, shared by policy.c (lifecycle,
 * reports), policy/load.c (YAML → model) and policy/match.c (judging).
 * Not for other modules: they use policy.h.
 */
#pragma once

#include <netinet/in.h>
#include <stdint.h>

#include "policy.h"

struct tg_strlist {
	char **v;
	size_t n;
};

/* One required flag: any of its spellings ("-r|-R|--recursive"). */
struct tg_flagalt {
	struct tg_strlist alts;
};

enum tg_rule_kind {
	TG_RULE_EXEC,
	TG_RULE_PATH,
	TG_RULE_SYSCALL,
	TG_RULE_CONNECT,
	TG_RULE_PROCESS,
	TG_RULE_DISABLE,   /* only ever transient while loading */
};

struct tg_exec_match {
	struct tg_strlist program;      /* basename globs, or path globs (with '/') */
	struct tg_strlist value_flags;  /* options that consume the next word */
	struct tg_strlist subcommand;   /* first positional, string glob */
	struct tg_flagalt *flags;       /* all required */
	size_t nflags;
	struct tg_strlist any_flags;    /* at least one required (when set) */
	struct tg_strlist not_flags;    /* none may be present */
	struct tg_strlist args;         /* some positional matches one */
	struct tg_strlist script;       /* `sh -c SCRIPT` text, string glob */
	struct tg_strlist words;        /* some raw word of argv[1..] matches one */
	bool outside_workspace;         /* some positional lies outside the writable set */
};

/* Bits of the write operations a path rule applies to. */
#define TG_PATH_OPS_WRITE  0x0000ffffu
#define TG_PATH_OPS_EXEC   0x00010000u
#define TG_PATH_OPS_OPEN   0x00020000u  /* any trapped open, read-only ones too */

struct tg_path_match {
	struct tg_strlist match;        /* path globs */
	unsigned ops;                   /* 1u << enum tg_op_kind, plus the bits above */
};

struct tg_cidr {
	int family;                     /* AF_INET / AF_INET6 */
	uint8_t addr[16];
	unsigned prefix;
};

struct tg_portrange {
	uint16_t lo, hi;
};

struct tg_connect_match {
	struct tg_strlist unix_paths;   /* AF_UNIX globs; abstract names as "@name" */
	struct tg_cidr *cidr;
	size_t ncidr;
	struct tg_portrange *ports;
	size_t nports;
	bool loopback;
	bool any_inet;                  /* only ports given */
};

/* Processes outside the tree that calls of the tree may act on. */
struct tg_process_match {
	struct tg_strlist program;      /* globs on the program name (/proc/PID/comm) */
	long *uids;
	size_t nuids;
	struct tg_strlist cgroup;       /* path globs on the cgroup (tg_read_proc_cgroup) */
};

struct tg_example {
	char *text;
	unsigned line, col;
};

/* One entry of `network: hosts: allow/deny` (policy/hosts.c). */
struct tg_host_entry {
	char *pattern;                  /* lowercase, no trailing dot: "pypi.org", "*.x.org", "*" */
	struct tg_portrange ports;      /* 0-65535 when the entry names no port */
	bool deny;
	char *text;                     /* as written, for explain and reasons */
	char *source;                   /* "file:line" */
};

/* `network: hosts: examples:`: match = allowed, not_match = denied. */
struct tg_host_example {
	char *text;                     /* "host" or "host:port" */
	char *file;
	unsigned line, col;
	bool allowed;
};

struct tg_rule {
	char *id;
	char *reason;
	enum tg_action action;
	int err;
	enum tg_rule_kind kind;
	char *file;
	unsigned line, col;
	char *source;                   /* "file:line" */
	char *overrides;                /* source of the rule this one replaced */
	char *disabled_by;              /* source of the `disabled: true` entry */

	struct tg_exec_match exec;
	struct tg_path_match path;
	struct tg_strlist syscalls;
	struct tg_connect_match conn;
	struct tg_process_match proc;

	struct tg_example *match, *not_match;
	size_t nmatch, nnot_match;

	/* Its strings are not its own: they point into the policy's arena
	 * (a model read from the cache, policy/model.c). Its arrays are. */
	bool borrowed;
};

struct tg_policy {
	struct tg_rule **rules;
	size_t nrules;
	struct tg_strlist files;        /* every file loaded, in order */

	struct tg_strlist writable;     /* raw entries ("~/.cache") */
	struct tg_strlist deny_read;
	struct tg_strlist create;       /* raw: "~/.cargo/registry/" (a dir), "~/.lesshst" (a file) */
	unsigned long max_procs;
	bool network_deny;              /* network default */

	/* network: hosts: (the proxy's rules; policy/hosts.c). Lists add up
	 * across files. */
	struct tg_host_entry *hosts;
	size_t nhosts;
	struct tg_host_example *host_ex;
	size_t nhost_ex;

	/* From tg_policy_set_ctx. */
	char *workspace, *home, *state_dir, *cache_dir;
	struct tg_strlist writable_exp;
	struct tg_strlist deny_read_exp;

	/* Built after loading, for tg_policy_filter_info. */
	const char **denied_syscalls;
	int *deny_errno;
	size_t ndenied;

	/* A model read from the cache (policy/model.c): the strings of its
	 * rules, lists and hosts point into arena, freed with it. The context
	 * above (workspace... *_exp) is the policy's own all the same. */
	bool borrowed;
	char *arena;
};

/* The context a rule is judged in (the real one, or the synthetic one the
 * examples use so `check` gives the same answer on every machine). */
struct tg_match_env {
	const struct tg_policy *p;
	const char *workspace;
	const char *home;
	const char *cwd;
	const char *state_dir;
	const char *cache_dir;
	/* The argv judge_one counted once for every rule: argc of an exec of
	 * 100,000 arguments is not counted again by each of 100 rules. */
	char *const *argv;
	size_t argc;
};

int tg_strlist_push(struct tg_strlist *l, const char *s);
void tg_strlist_clear(struct tg_strlist *l);
void tg_rule_free(struct tg_rule *r);

/* policy/match.c */
bool tg_rule_matches(const struct tg_rule *r, const struct tg_match_env *env, const struct tg_op *op);
void tg_policy_decide_env(const struct tg_match_env *env, const struct tg_op *op, struct tg_verdict *out);

/* The dynamic loader as a wrapper: true for an exec of ld.so (ld-linux*.so*,
 * ld.so, ld64.so*, ld-musl-*.so*). tg_loader_op fills *in with the exec of
 * the program it will run: path resolved (in the tracee's view when op->pid
 * is set), argv borrowed from op (so free it with tg_loader_op_clear, never
 * tg_op_clear). `alt` reads unknown loader options as taking a value.
 * 0, -ENOENT (not a loader, or no program named), -ENOMEM. */
bool tg_is_loader_exec(const struct tg_op *op);
int tg_loader_op(const struct tg_match_env *env, const struct tg_op *op, bool alt, struct tg_op *in);
void tg_loader_op_clear(struct tg_op *in);
/* Build the exec op for argv as if the kernel ran it (PATH lookup). */
int tg_policy_exec_op(char *const *argv, struct tg_op *op);
/* Check one rule's examples; print failures, return their count. */
int tg_rule_check_examples(const struct tg_policy *p, const struct tg_rule *r, FILE *out);
/* policy/match.c: the op of a process rule's example ("node uid=1000"). */
int tg_example_process_op(const char *text, struct tg_op *op);
/* Builtin writable places that exist whatever the policy says. */
extern const char *const tg_policy_builtin_writable[];
/* policy.c: after a successful load, build the derived tables. 0 or -ENOMEM. */
int tg_policy_finish(struct tg_policy *p);

/* policy/model.c: a loaded model, before tg_policy_set_ctx and without
 * what tg_policy_finish builds, stored whole in the policy cache under
 * `key` (tg_policy_load_cached computes it from the binary and the files'
 * names and stats). Encode: 0, -EINVAL (a model with a context), -ENOMEM.
 * Decode and load: 1 with *out, 0 for a miss (nothing there, another key,
 * anything damaged), -ENOMEM. A decoded model's strings stay in buf: on 1
 * it is the model's (freed with it), else still the caller's. Store: 0 or
 * an ignorable -errno. */
int tg_policy_model_encode(const struct tg_policy *p, uint64_t key, char **buf, size_t *len);
int tg_policy_model_decode(char *buf, size_t len, uint64_t key, struct tg_policy **out);
int tg_policy_model_load(const char *dir, size_t trusted, uint64_t key, struct tg_policy **out);
int tg_policy_model_store(const char *dir, size_t trusted, uint64_t key, const struct tg_policy *p);
/* policy/match.c: glob helpers that fail closed on TOO_COMPLEX. */
bool tg_policy_path_writable(const struct tg_match_env *env, const struct tg_op *op,
                             const char *path);

/* policy/hosts.c */
/* Parse "name", "*.name", "*" with an optional ":port" or ":lo-hi" into *e
 * (text and source left to the caller). NULL, or a static message saying
 * what is wrong. */
const char *tg_host_entry_parse(const char *text, bool deny, struct tg_host_entry *e);
void tg_policy_hosts_free(struct tg_policy *p);
int tg_host_check_examples(const struct tg_policy *p, FILE *out);
