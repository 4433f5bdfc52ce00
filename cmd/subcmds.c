/* subcmds.c — policy check/explain, doctor (recover: preview.c). */
#include <string.h>

#include "cli.h"
#include "common.h"
#include "landlock/landlock.h"
#include "policy/policy.h"
#include "trace/trace.h"
#include "txn/txn.h"

static int load_for_tools(const struct tg_opts *o, struct tg_policy **out, size_t *nfiles)
{
	_cleanup_strv_ char **paths = NULL;
	if (tg_policy_paths(o, NULL, &paths) < 0)
		return -ENOMEM;
	*nfiles = tg_strv_len(paths);
	struct tg_policy_diags diags = { 0 };
	int rc = tg_policy_load(out, (const char *const *)paths, *nfiles, &diags);
	tg_policy_diags_print(&diags, stderr);
	if (rc < 0 && diags.n == 0)
		tg_warn("cannot load the policy: %s", strerror(-rc));
	tg_policy_diags_clear(&diags);
	return rc;
}

static void set_ctx_for_tools(const struct tg_opts *o, struct tg_policy *p, char **ws)
{
	if (tg_workspace_path(o, ws) < 0)
		*ws = NULL;
	struct tg_policy_ctx ctx = { .workspace = *ws, .home = getenv("HOME"), .state_dir = NULL };
	tg_policy_set_ctx(p, &ctx);
}

int tg_cmd_policy_check(struct tg_opts *o)
{
	struct tg_policy *p = NULL;
	size_t nfiles = 0;
	if (load_for_tools(o, &p, &nfiles) < 0) {
		fprintf(stderr, "txguard: policy check failed\n");
		return 1;
	}
	_cleanup_free_ char *ws = NULL;
	set_ctx_for_tools(o, p, &ws);
	int failures = tg_policy_check_examples(p, stdout);
	tg_policy_free(p);
	if (failures > 0) {
		fprintf(stderr, "txguard: %d policy example(s) failed\n", failures);
		return 1;
	}
	printf("policy OK (%zu path(s) loaded)\n", nfiles);
	return 0;
}

int tg_cmd_policy_explain(struct tg_opts *o)
{
	struct tg_policy *p = NULL;
	size_t nfiles = 0;
	if (load_for_tools(o, &p, &nfiles) < 0)
		return 125;
	_cleanup_free_ char *ws = NULL;
	set_ctx_for_tools(o, p, &ws);
	int rc = tg_explain_question(o, p, ws);
	if (rc < 0) {
		tg_policy_dump(p, o->json, stdout);
		rc = 0;
	}
	tg_policy_free(p);
	return rc;
}

static const char *yesno(bool b)
{
	return b ? "yes" : "NO";
}

static const char *json_tri(int v)
{
	return v > 0 ? "true" : v == 0 ? "false" : "null";
}

/* The 32-bit entries: neither is needed, both are shut by the arch gate;
 * the line says what this kernel does, so a log shows why a test that
 * depends on it took the branch it took. */
static void print_entry(const char *what, int v, const char *off)
{
	printf("%-26s%s\n", what,
	       v > 0 ? "yes (killed by txguard's arch gate)" : v == 0 ? off : "unknown (probed under a seccomp filter)");
}

int tg_cmd_doctor(struct tg_opts *o)
{
	struct tg_kernel_features f;
	tg_probe_kernel(&f);
	bool ok = f.seccomp_filter && f.seccomp_ret_trace && f.ptrace && f.get_syscall_info && f.exitkill;
	bool fan = tg_fanguard_probe() > 0;
	if (o->json) {
		printf("{\"ok\":%s,\"seccomp_filter\":%s,\"seccomp_ret_trace\":%s,\"ptrace\":%s,"
		       "\"get_syscall_info\":%s,\"exitkill\":%s,\"ia32_emulation\":%s,\"x32\":%s,"
		       "\"landlock_abi\":%d,\"fanotify_perm\":%s,\"yama_ptrace_scope\":%d}\n",
		       ok ? "true" : "false", f.seccomp_filter ? "true" : "false",
		       f.seccomp_ret_trace ? "true" : "false", f.ptrace ? "true" : "false",
		       f.get_syscall_info ? "true" : "false", f.exitkill ? "true" : "false",
		       json_tri(f.ia32), json_tri(f.x32), f.landlock_abi, fan ? "true" : "false",
		       f.yama_ptrace_scope);
		return ok ? 0 : 1;
	}
	printf("seccomp filters:          %s\n", yesno(f.seccomp_filter));
	printf("SECCOMP_RET_TRACE:        %s\n", yesno(f.seccomp_ret_trace));
	printf("ptrace of own children:   %s%s%s\n", yesno(f.ptrace), f.ptrace ? "" : " — ",
	       f.ptrace ? "" : f.ptrace_error);
	printf("PTRACE_GET_SYSCALL_INFO:  %s\n", yesno(f.get_syscall_info));
	printf("PTRACE_O_EXITKILL:        %s\n", yesno(f.exitkill));
	print_entry("IA-32 emulation:", f.ia32, "no (the kernel refuses int 0x80 itself)");
	print_entry("x32 syscall ABI:", f.x32, "no (not built into this kernel)");
	if (f.landlock_abi > 0)
		printf("Landlock:                 ABI %d\n", f.landlock_abi);
	else
		printf("Landlock:                 none (writes outside the workspace are enforced by the "
		       "tracer alone; policies that deny reading secrets cannot run)\n");
	printf("fanotify permission:      %s\n",
	       fan ? "yes (reads of secrets are refused and reported one by one)"
	           : "no (needs CAP_SYS_ADMIN and CONFIG_FANOTIFY_ACCESS_PERMISSIONS: secrets are left to "
	             "Landlock, whose refusals are not seen)");
	if (f.yama_ptrace_scope >= 0)
		printf("Yama ptrace_scope:        %d%s\n", f.yama_ptrace_scope,
		       f.yama_ptrace_scope >= 3 ? " (ptrace disabled: set it to 1 or less)" : "");
	else
		printf("Yama ptrace_scope:        (no Yama)\n");
	printf("%s\n", ok ? "txguard can run here." : "txguard cannot run here: see the NO lines above.");
	return ok ? 0 : 1;
}

