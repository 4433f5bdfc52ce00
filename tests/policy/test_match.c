/* test_match.c — the matcher, table-driven, against the default policy and
 * small purpose-written policies. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "test_util.h"

Test(default_policy, examples_pass)
{
	struct tg_policy *p = load_default();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int fails = tg_policy_check_examples(p, f);
	fclose(f);
	cr_expect_eq(fails, 0, "%d example(s) fail:\n%s", fails, buf);
	free(buf);
	tg_policy_free(p);
}

static struct tg_policy *dflt;

static void setup_default(void)
{
	dflt = load_default();
}

static void teardown_default(void)
{
	tg_policy_free(dflt);
	dflt = NULL;
}

static void expect_exec(const char *line, enum tg_action want, const char *rule)
{
	struct tg_verdict v;
	judge_line(dflt, line, &v);
	cr_expect_eq(v.action, want, "'%s': got %s (%s), want %s (%s)", line, tg_action_name(v.action),
	             v.rule_id ? v.rule_id : "-", tg_action_name(want), rule ? rule : "-");
	if (rule && v.rule_id)
		cr_expect_str_eq(v.rule_id, rule, "'%s': rule", line);
	else if (rule)
		cr_expect_not_null(v.rule_id, "'%s': no rule, want %s", line, rule);
}

/* rm: every spelling of "recursive" times every spelling of a target. */
static const char *const rec_forms[] = {
	"-rf", "-fr", "-r -f", "-f -r", "-Rf", "-fR", "-R -f", "--recursive --force",
	"--force --recursive", "-r", "-R", "--recursive", "-r --force", "--rec -f", "--recursive=always",
	"-rfv", "-vrf", "-v -r", "-rf --", "-rf --no-preserve-root", "-Rv --one-file-system",
	"-r -i", "-dr", "-rfI",
};

static const char *const sys_targets[] = {
	"/", "//", "/.", "/usr", "/usr/", "/usr/.", "/usr//", "/etc", "/etc/../etc", "~", "~/",
	"$HOME", "${HOME}", "/home", "/home/dev", "/home/other", "/var", "/var/lib", "/lib64", "/lib",
	"/boot", "/bin", "/sbin", "/opt", "/srv", "/root", "/sys", "/proc", "/dev", "/usr/local",
	"/usr/lib", "../..", "../../..", "../../../../..", "/tmp/../usr", "/home/dev/project/../..",
	"/nix",
};

static const char *const outside_targets[] = {
	"~/Documents", "~/.bashrc", "/etc/nginx", "/opt/app/data", "../other", "/tmp", "/var/tmp",
	"~/.cache", "/srv/www/site", "/home/dev/other-project", "/mnt/backup/2024", "$HOME/.config",
};

static const char *const inside_targets[] = {
	"build", "./build/", "dist", "node_modules", "target", "/home/dev/project/build",
	"~/project/out", "/tmp/x", "/tmp/build-123", "~/.cache/pip", ".", "src/../build", "a b",
	"/var/tmp/ccache", "-", "$WORKSPACE_NOT_A_VAR",
};

Test(exec_rm, recursive_system_targets, .init = setup_default, .fini = teardown_default)
{
	char line[256];
	for (size_t i = 0; i < TG_ARRAY_SIZE(rec_forms); i++) {
		for (size_t j = 0; j < TG_ARRAY_SIZE(sys_targets); j++) {
			snprintf(line, sizeof(line), "rm %s '%s'", rec_forms[i], sys_targets[j]);
			expect_exec(line, TG_ACT_KILL, "rm-recursive-system");
			/* Flags after the operand: GNU getopt permutes. */
			snprintf(line, sizeof(line), "rm '%s' %s", sys_targets[j], rec_forms[i]);
			if (strstr(rec_forms[i], "--") != rec_forms[i] + strlen(rec_forms[i]) - 2)
				expect_exec(line, TG_ACT_KILL, "rm-recursive-system");
		}
	}
}

Test(exec_rm, outside_and_inside, .init = setup_default, .fini = teardown_default)
{
	char line[256];
	for (size_t i = 0; i < TG_ARRAY_SIZE(rec_forms); i++) {
		for (size_t j = 0; j < TG_ARRAY_SIZE(outside_targets); j++) {
			snprintf(line, sizeof(line), "rm %s '%s'", rec_forms[i], outside_targets[j]);
			expect_exec(line, TG_ACT_DENY, "rm-outside-workspace");
		}
		for (size_t j = 0; j < TG_ARRAY_SIZE(inside_targets); j++) {
			snprintf(line, sizeof(line), "rm %s '%s'", rec_forms[i], inside_targets[j]);
			expect_exec(line, TG_ACT_ALLOW, NULL);
		}
	}
}

struct xcase {
	const char *line;
	enum tg_action want;
	const char *rule;
};

#define K TG_ACT_KILL
#define D TG_ACT_DENY
#define A TG_ACT_ALLOW

static const struct xcase xcases[] = {
	/* "--" ends options: after it "-rf" is a file name. */
	{ "rm -- -rf /", D, "rm-outside-workspace" },
	{ "rm -f -- /", D, "rm-outside-workspace" },
	{ "rm -r -- /", K, "rm-recursive-system" },
	{ "rm -rf -- build", A, NULL },
	/* argv[0] and the program path may disagree: either one matches. */
	{ "/usr/bin/rm -rf /", K, "rm-recursive-system" },
	{ "/bin/rm -rf /etc", K, "rm-recursive-system" },
	{ "./rm -rf /etc", K, "rm-recursive-system" },
	{ "busybox rm -rf /", K, "rm-recursive-system" },
	{ "busybox --install -s", A, NULL },
	{ "toybox rm -rf /usr", K, "rm-recursive-system" },
	{ "/usr/bin/busybox rmdir /opt/x", D, "rm-outside-workspace" },
	/* Wrappers are not parsed: the wrapper is allowed, the inner exec is vetted. */
	{ "env rm -rf /", A, NULL },
	{ "xargs rm -rf", A, NULL },
	{ "nice -n 10 rm -rf /", A, NULL },
	{ "timeout 5 rm -rf /", A, NULL },
	{ "bash -c 'rm -rf /'", A, NULL },
	/* find */
	{ "find / -delete", D, "find-delete-system" },
	{ "find ~ -name '*.tmp' -delete", D, "find-delete-system" },
	{ "find . -name '*.pyc' -delete", A, NULL },
	{ "find build -type f -delete", A, NULL },
	{ "find /usr -name '*.h'", A, NULL },
	/* devices */
	{ "mkfs.ext4 /dev/sda", K, "mkfs" },
	{ "mkfs.ext4 -F -L root /dev/sda1", K, "mkfs" },
	{ "mkfs.btrfs -f /dev/nvme0n1", K, "mkfs" },
	{ "/sbin/mkfs.xfs /dev/vdb", K, "mkfs" },
	{ "mke2fs -t ext4 /dev/sdb2", K, "mkfs" },
	{ "mkswap /dev/sda3", K, "mkfs" },
	{ "wipefs --all /dev/sda", K, "mkfs" },
	{ "wipefs -a /dev/../dev/sda", K, "mkfs" },
	{ "shred -vzn 1 /dev/sdb", K, "mkfs" },
	{ "sfdisk /dev/sda", K, "mkfs" },
	{ "fdisk -l", A, NULL },
	{ "mkfs.ext4 ./fs.img", A, NULL },
	{ "dd if=/dev/zero of=/dev/sda", K, "dd-to-device" },
	{ "dd if=/dev/zero of=/dev/nvme0n1p1 bs=4M", K, "dd-to-device" },
	{ "dd of=/dev/mmcblk0 if=raspios.img", K, "dd-to-device" },
	{ "dd if=/dev/zero of=//dev//sda", K, "dd-to-device" },
	{ "dd if=/dev/sda of=backup.img", A, NULL },
	{ "dd if=/dev/zero of=/dev/null count=1", A, NULL },
	{ "dd if=/dev/zero of=test.bin bs=1k count=4", A, NULL },
	/* chmod / chown */
	{ "chmod -R 777 /", D, "chmod-chown-outside-workspace" },
	{ "chmod -R 755 /usr/local", D, "chmod-chown-outside-workspace" },
	{ "chown -R root:root /etc", D, "chmod-chown-outside-workspace" },
	{ "chown --recursive me ~", D, "chmod-chown-outside-workspace" },
	{ "chmod 000 ~/.ssh", D, "chmod-chown-outside-workspace" },
	{ "chgrp -R wheel /var", D, "chmod-chown-outside-workspace" },
	{ "chmod -R u+rwX .", A, NULL },
	{ "chmod +x ./configure", A, NULL },
	{ "chmod 644 src/main.c include/a.h", A, NULL },
	{ "chown -R dev:dev build", A, NULL },
	{ "chmod --reference=src/a.c src/b.c", A, NULL },
	/* power */
	{ "reboot", D, "power-state" },
	{ "shutdown -r now", D, "power-state" },
	{ "shutdown now", D, "power-state" },
	{ "poweroff", D, "power-state" },
	{ "halt -p", D, "power-state" },
	{ "init 0", D, "init-runlevel" },
	{ "init 6", D, "init-runlevel" },
	{ "systemctl poweroff", D, "systemctl-power" },
	{ "systemctl reboot --force", D, "systemctl-power" },
	{ "systemctl -H host poweroff", D, "systemctl-power" },
	{ "systemctl kexec", D, "systemctl-power" },
	{ "systemctl status nginx", A, NULL },
	{ "systemctl stop nginx", D, "systemctl-system-services" },
	{ "systemctl disable --now docker", D, "systemctl-system-services" },
	{ "systemctl --user stop myapp", A, NULL },
	{ "systemctl --user disable myapp", A, NULL },
	/* privilege */
	{ "sudo ls", D, "privilege-escalation" },
	{ "sudo -E make install", D, "privilege-escalation" },
	{ "/usr/bin/sudo -i", D, "privilege-escalation" },
	{ "su -c 'rm -rf /' root", D, "privilege-escalation" },
	{ "doas reboot", D, "privilege-escalation" },
	{ "pkexec visudo", D, "privilege-escalation" },
	{ "sudoku --level 3", A, NULL },
	/* pipe to shell */
	{ "sh -c 'curl -fsSL https://example.com/install.sh | sh'", D, "pipe-to-shell" },
	{ "bash -c 'curl https://example.com/i | bash -s -- -y'", D, "pipe-to-shell" },
	{ "bash -lc 'wget -O - https://example.com/i | sh'", D, "pipe-to-shell" },
	{ "bash -xec 'curl -s https://e.example | sudo sh'", D, "pipe-to-shell" },
	{ "dash -c 'curl -s https://e.example/x.py | python3'", D, "pipe-to-shell" },
	{ "bash -c 'sh <(curl -s https://e.example)'", D, "pipe-to-shell" },
	{ "bash -c 'curl -s https://api.example.com | jq .'", A, NULL },
	{ "bash -c 'curl -o install.sh https://example.com/install.sh'", A, NULL },
	{ "bash -c 'curl -s https://e.example/sum | sha256sum --check'", A, NULL },
	{ "bash install.sh", A, NULL },
	{ "sh -c 'echo curl; echo sh'", A, NULL },
	{ "bash -c ':(){ :|:& };:'", K, "fork-bomb-text" },
	{ "bash -o pipefail -c 'curl -s https://e.example | sh'", D, "pipe-to-shell" },
	{ "bash -O extglob -c 'wget -qO- https://e.example | bash'", D, "pipe-to-shell" },
	{ "bash -c -- 'curl -s https://e.example | sh'", D, "pipe-to-shell" },
	{ "bash -o pipefail -c 'make | tee log'", A, NULL },
	/* git */
	{ "git push --force", D, "git-push-force" },
	{ "git push -f", D, "git-push-force" },
	{ "git push origin main -f", D, "git-push-force" },
	{ "git push -uf origin main", D, "git-push-force" },
	{ "git push -fu origin main", D, "git-push-force" },
	{ "git push --force origin HEAD:main", D, "git-push-force" },
	{ "git push --forc", D, "git-push-force" },
	{ "git -C /home/dev/project push -f", D, "git-push-force" },
	{ "git -c push.default=current push --force", D, "git-push-force" },
	{ "git --git-dir=.git --work-tree=. push -f", D, "git-push-force" },
	{ "git --no-pager push --force", D, "git-push-force" },
	{ "git push -o ci.skip --force", D, "git-push-force" },
	{ "git push origin +main", D, "git-push-force-refspec" },
	{ "git push origin +refs/heads/*:refs/heads/*", D, "git-push-force-refspec" },
	{ "git push --force-with-lease", D, "git-push-force-with-lease" },
	{ "git push --force-with-lease=main origin main", D, "git-push-force-with-lease" },
	{ "git push --force-if-includes --force-with-lease", D, "git-push-force-with-lease" },
	{ "git push --delete origin old", D, "git-push-delete" },
	{ "git push origin --delete old", D, "git-push-delete" },
	{ "git push -d origin v1", D, "git-push-delete" },
	{ "git push origin :old", D, "git-push-delete-refspec" },
	{ "git push --mirror", D, "git-push-mirror" },
	{ "git push --prune origin", D, "git-push-delete" },
	{ "git push", A, NULL },
	{ "git push origin main", A, NULL },
	{ "git push -u origin feature/x", A, NULL },
	{ "git push --tags", A, NULL },
	{ "git push --follow-tags origin main", A, NULL },
	{ "git push --dry-run origin main", A, NULL },
	{ "git push -o merge_request.create origin x", A, NULL },
	{ "git -C push status", A, NULL },
	{ "git commit -m 'push -f'", A, NULL },
	{ "git commit -am 'git push --force later'", A, NULL },
	{ "git branch -D old", A, NULL },
	{ "git reset --hard HEAD~3", A, NULL },
	{ "git clean -fdx", A, NULL },
	{ "git rebase -i main", A, NULL },
	{ "git fetch --force origin", A, NULL },
	{ "git tag -d v1", A, NULL },
	{ "git stash drop", A, NULL },
	{ "git -c alias.p='!git push -f' p", D, "git-config-push-override" },
	{ "git -c alias.pf='push --force' pf origin main", D, "git-config-push-override" },
	{ "git -c remote.origin.push=+refs/heads/main push", D, "git-config-push-override" },
	{ "git -c alias.lg='log --oneline' lg", A, NULL },
	{ "git -c core.pager=cat log", A, NULL },
};

Test(exec, table, .init = setup_default, .fini = teardown_default)
{
	for (size_t i = 0; i < TG_ARRAY_SIZE(xcases); i++)
		expect_exec(xcases[i].line, xcases[i].want, xcases[i].rule);
}

/* ---- path operations ----------------------------------------------------- */

struct pcase {
	enum tg_op_kind kind;
	const char *path, *path2;
	int flags;
	enum tg_action want;
	int err;
	const char *rule;
};

static const struct pcase pcases[] = {
	{ TG_OP_UNLINK, WS "/a.c", NULL, 0, A, 0, NULL },
	{ TG_OP_UNLINK, WS, NULL, 0, A, 0, NULL },
	{ TG_OP_RMDIR, WS "/build", NULL, 0, A, 0, NULL },
	{ TG_OP_UNLINK, "/etc/passwd", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_UNLINK, WS "x/a", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_UNLINK, "/home/dev/.bashrc", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_UNLINK, "/tmp/x", NULL, 0, A, 0, NULL },
	{ TG_OP_UNLINK, "/var/tmp/x", NULL, 0, A, 0, NULL },
	{ TG_OP_UNLINK, "/home/dev/.cache/pip/x", NULL, 0, A, 0, NULL },
	{ TG_OP_UNLINK, "/home/dev/.cachex/x", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_OPEN, "/dev/null", NULL, O_WRONLY, A, 0, NULL },
	{ TG_OP_OPEN, "/dev/tty", NULL, O_RDWR, A, 0, NULL },
	{ TG_OP_OPEN, "/dev/pts/3", NULL, O_RDWR, A, 0, NULL },
	{ TG_OP_OPEN, "/dev/shm/sem.x", NULL, O_RDWR | O_CREAT, A, 0, NULL },
	{ TG_OP_OPEN, "/dev/sda", NULL, O_WRONLY, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_OPEN, "/etc/hosts", NULL, O_WRONLY | O_TRUNC, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_OPEN, "/etc/hosts", NULL, O_RDONLY, A, 0, NULL },
	{ TG_OP_OPEN, "pipe:[1234]", NULL, O_WRONLY, A, 0, NULL },
	{ TG_OP_OPEN, "socket:[99]", NULL, O_RDWR, A, 0, NULL },
	{ TG_OP_OPEN, "anon_inode:[eventfd]", NULL, O_RDWR, A, 0, NULL },
	{ TG_OP_CHMOD, "/memfd:jit (deleted)", NULL, 0, A, 0, NULL },
	{ TG_OP_OPEN, WS "/out.txt", NULL, O_WRONLY | O_CREAT, A, 0, NULL },
	{ TG_OP_OPEN, NULL, NULL, O_WRONLY, D, EACCES, "unknown-path" },
	{ TG_OP_RENAME, WS "/a", WS "/b", 0, A, 0, NULL },
	{ TG_OP_RENAME, WS "/a", "/etc/a", 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_RENAME, "/etc/a", WS "/a", 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_RENAME, "/tmp/a", WS "/a", 0, A, 0, NULL },
	{ TG_OP_RENAME, WS "/a", NULL, 0, D, EACCES, "unknown-path" },
	{ TG_OP_LINK, WS "/a", WS "/b", 0, A, 0, NULL },
	{ TG_OP_LINK, "/etc/shadow", WS "/s", 0, D, EXDEV, "link-outside-inode" },
	{ TG_OP_LINK, "/home/dev/.bashrc", WS "/rc", 0, D, EXDEV, "link-outside-inode" },
	{ TG_OP_LINK, WS "/a", "/etc/a", 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_LINK, "/tmp/a", WS "/a", 0, A, 0, NULL },
	{ TG_OP_SYMLINK, WS "/l", NULL, 0, A, 0, NULL },
	{ TG_OP_SYMLINK, "/usr/local/bin/x", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_MKDIR, "/opt/new-dir-that-does-not-exist", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_MKDIR, "/usr", NULL, 0, D, EEXIST, "read-only-outside-workspace" },
	{ TG_OP_MKNOD, "/dev/evil", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_TRUNCATE, "/var/log/syslog", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_CHMOD, "/usr/bin/sudo", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_CHOWN, "/etc", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_UTIMES, "/etc/hosts", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_XATTR, "/usr/bin/ping", NULL, 0, D, EACCES, "read-only-outside-workspace" },
	{ TG_OP_CHMOD, WS "/run.sh", NULL, 0, A, 0, NULL },
	{ TG_OP_UNLINK, STATE "/journal/1.tar.zst", NULL, 0, D, EACCES, "state-dir" },
	{ TG_OP_OPEN, STATE "/history.db", NULL, O_RDONLY, D, EACCES, "state-dir" },
	{ TG_OP_RENAME, WS "/x", STATE "/x", 0, D, EACCES, "state-dir" },
	{ TG_OP_EXEC, STATE "/bin/x", NULL, 0, D, EACCES, "state-dir" },
	{ TG_OP_OPEN, "/home/dev/.ssh/id_ed25519", NULL, O_RDONLY, D, EACCES, "deny-read" },
	{ TG_OP_OPEN, "/home/dev/.aws/credentials", NULL, O_RDONLY, D, EACCES, "deny-read" },
	{ TG_OP_OPEN, "/home/dev/.netrc", NULL, O_RDONLY, D, EACCES, "deny-read" },
	{ TG_OP_OPEN, "/home/dev/other/.env", NULL, O_RDONLY, D, EACCES, "deny-read" },
	{ TG_OP_OPEN, WS "/.env", NULL, O_RDONLY, A, 0, NULL },
	{ TG_OP_OPEN, WS "/.env", NULL, O_RDWR, A, 0, NULL },
	{ TG_OP_OPEN, "/home/dev/.sshx", NULL, O_RDONLY, A, 0, NULL },
	{ TG_OP_EXEC, "/memfd:x (deleted)", NULL, 0, D, EACCES, "exec-memfd" },
	{ TG_OP_OPEN, WS "/.git/hooks/pre-commit", NULL, O_WRONLY | O_CREAT, TG_ACT_AUDIT, 0, "git-hooks-audit" },
	{ TG_OP_UNLINK, WS "/.git/hooks/post-checkout", NULL, 0, TG_ACT_AUDIT, 0, "git-hooks-audit" },
	{ TG_OP_UNLINK, WS "/.git/index.lock", NULL, 0, A, 0, NULL },
};

static void expect_op(const struct tg_policy *p, const struct tg_op *op, enum tg_action want, int err,
                      const char *rule, const char *what)
{
	struct tg_verdict v;
	tg_policy_decide(p, op, &v);
	cr_expect_eq(v.action, want, "%s: got %s (%s), want %s", what, tg_action_name(v.action),
	             v.rule_id ? v.rule_id : "-", tg_action_name(want));
	if (want == TG_ACT_DENY)
		cr_expect_eq(v.err, err, "%s: errno %d, want %d", what, v.err, err);
	if (rule) {
		cr_expect_not_null(v.rule_id, "%s: no rule id", what);
		if (v.rule_id)
			cr_expect_str_eq(v.rule_id, rule, "%s", what);
	}
	if (v.action != TG_ACT_ALLOW)
		cr_expect_not_null(v.reason, "%s: no reason", what);
}

Test(paths, table, .init = setup_default, .fini = teardown_default)
{
	for (size_t i = 0; i < TG_ARRAY_SIZE(pcases); i++) {
		const struct pcase *c = &pcases[i];
		struct tg_op op = { .kind = c->kind, .flags = c->flags, .name = "t" };
		op.path = (char *)c->path;
		op.path2 = (char *)c->path2;
		op.writes = c->kind == TG_OP_OPEN && (c->flags & (O_WRONLY | O_RDWR | O_CREAT));
		char what[256];
		snprintf(what, sizeof(what), "#%zu %s %s %s", i, tg_op_kind_name(c->kind),
		         c->path ? c->path : "(null)", c->path2 ? c->path2 : "");
		expect_op(dflt, &op, c->want, c->err, c->rule, what);
	}
}

Test(paths, no_policy_still_protects)
{
	/* An empty policy keeps the built-in defaults. */
	struct tg_policy *p = load_yaml("version: 1\n");
	struct tg_op op = { .kind = TG_OP_UNLINK, .path = "/etc/passwd", .name = "unlink" };
	expect_op(p, &op, TG_ACT_DENY, EACCES, "read-only-outside-workspace", "empty policy");
	struct tg_op op2 = { .kind = TG_OP_OPEN, .path = "/dev/null", .flags = O_WRONLY, .writes = true };
	expect_op(p, &op2, TG_ACT_ALLOW, 0, NULL, "dev null");
	tg_policy_free(p);
}

Test(paths, allow_rule_widens_and_deny_rule_narrows)
{
	struct tg_policy *p = load_yaml(
		"rules:\n"
		"  - id: opt-tool\n    reason: r\n    action: allow\n    path: {match: [/opt/tool/**]}\n"
		"  - id: no-secrets-dir\n    reason: r\n    action: deny\n    errno: EROFS\n"
		"    path: {match: [$WORKSPACE/secrets/**], ops: [unlink, open]}\n");
	struct tg_op a = { .kind = TG_OP_UNLINK, .path = "/opt/tool/cache/x" };
	expect_op(p, &a, TG_ACT_ALLOW, 0, "opt-tool", "allow rule");
	struct tg_op b = { .kind = TG_OP_UNLINK, .path = "/opt/toolx" };
	expect_op(p, &b, TG_ACT_DENY, EACCES, "read-only-outside-workspace", "allow rule boundary");
	struct tg_op c = { .kind = TG_OP_UNLINK, .path = WS "/secrets/k" };
	expect_op(p, &c, TG_ACT_DENY, EROFS, "no-secrets-dir", "deny inside");
	struct tg_op d = { .kind = TG_OP_CHMOD, .path = WS "/secrets/k" };
	expect_op(p, &d, TG_ACT_ALLOW, 0, NULL, "op not listed");
	tg_policy_free(p);
}

/* ---- network ---------------------------------------------------------------- */

static void inet_op(struct tg_op *op, const char *ip, int port)
{
	memset(op, 0, sizeof(*op));
	op->kind = TG_OP_CONNECT;
	op->name = "connect";
	struct sockaddr_in *in = (void *)&op->addr;
	struct sockaddr_in6 *in6 = (void *)&op->addr;
	if (inet_pton(AF_INET, ip, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		op->addrlen = sizeof(*in);
	} else {
		cr_assert_eq(inet_pton(AF_INET6, ip, &in6->sin6_addr), 1);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		op->addrlen = sizeof(*in6);
	}
}

static void unix_op(struct tg_op *op, const char *path)
{
	memset(op, 0, sizeof(*op));
	op->kind = TG_OP_CONNECT;
	struct sockaddr_un *un = (void *)&op->addr;
	un->sun_family = AF_UNIX;
	strcpy(un->sun_path, path);
	if (path[0] == '@')
		un->sun_path[0] = '\0';
	op->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

Test(network, default_policy, .init = setup_default, .fini = teardown_default)
{
	struct tg_op op;
	unix_op(&op, "/var/run/docker.sock");
	expect_op(dflt, &op, D, EACCES, "container-sockets", "docker sock");
	unix_op(&op, "/run/docker.sock");
	expect_op(dflt, &op, D, EACCES, "container-sockets", "docker sock 2");
	unix_op(&op, "/run/user/1000/docker.sock");
	expect_op(dflt, &op, D, EACCES, "container-sockets", "rootless docker");
	unix_op(&op, "/tmp/app.sock");
	expect_op(dflt, &op, A, 0, NULL, "app sock");
	unix_op(&op, "@abstract");
	expect_op(dflt, &op, A, 0, NULL, "abstract");
	inet_op(&op, "169.254.169.254", 80);
	expect_op(dflt, &op, D, EACCES, "cloud-metadata", "metadata");
	inet_op(&op, "::ffff:169.254.169.254", 80);
	expect_op(dflt, &op, D, EACCES, "cloud-metadata", "v4-mapped metadata");
	inet_op(&op, "127.0.0.1", 8080);
	expect_op(dflt, &op, A, 0, "loopback", "loopback");
	inet_op(&op, "::1", 5432);
	expect_op(dflt, &op, A, 0, "loopback", "loopback6");
	inet_op(&op, "93.184.216.34", 443);
	expect_op(dflt, &op, A, 0, NULL, "internet");
	struct tg_policy_filter_info fi;
	tg_policy_filter_info(dflt, &fi);
	cr_expect(fi.trap_network);
	cr_expect_eq(fi.max_procs, 2048);
}

Test(network, default_deny_with_exceptions)
{
	struct tg_policy *p = load_yaml(
		"network: {default: deny}\n"
		"rules:\n"
		"  - id: lo\n    reason: r\n    action: allow\n    connect: {loopback: true}\n"
		"  - id: https\n    reason: r\n    action: allow\n    connect: {cidr: [10.0.0.0/8], ports: [443, 8000-8999]}\n"
		"  - id: no-ssh\n    reason: r\n    action: deny\n    errno: ECONNREFUSED\n    connect: {ports: [22]}\n");
	struct tg_op op;
	inet_op(&op, "127.0.0.1", 22);
	expect_op(p, &op, D, ECONNREFUSED, "no-ssh", "ssh to loopback: deny wins over allow");
	inet_op(&op, "127.0.0.1", 80);
	expect_op(p, &op, A, 0, "lo", "loopback");
	inet_op(&op, "10.1.2.3", 443);
	expect_op(p, &op, A, 0, "https", "cidr+port");
	inet_op(&op, "10.1.2.3", 8500);
	expect_op(p, &op, A, 0, "https", "port range");
	inet_op(&op, "10.1.2.3", 80);
	expect_op(p, &op, D, EACCES, "network-default-deny", "port outside");
	inet_op(&op, "11.1.2.3", 443);
	expect_op(p, &op, D, EACCES, "network-default-deny", "cidr outside");
	inet_op(&op, "2001:db8::1", 443);
	expect_op(p, &op, D, EACCES, "network-default-deny", "v6");
	tg_policy_free(p);
}

Test(syscalls, filter_info_and_decide, .init = setup_default, .fini = teardown_default)
{
	struct tg_policy_filter_info fi;
	tg_policy_filter_info(dflt, &fi);
	bool keyctl = false;
	for (size_t i = 0; i < fi.ndenied; i++)
		if (strcmp(fi.denied_syscalls[i], "keyctl") == 0)
			keyctl = fi.deny_errno[i] == EPERM;
	cr_expect(keyctl, "keyctl not denied with EPERM");
	struct tg_op op = { .kind = TG_OP_SYSCALL, .name = "open_by_handle_at" };
	expect_op(dflt, &op, D, EPERM, "open-by-handle", "open_by_handle_at");
	op.name = "getpid";
	expect_op(dflt, &op, A, 0, NULL, "getpid");
}

Test(policy, deny_read_and_writable_lists, .init = setup_default, .fini = teardown_default)
{
	size_t n = 0;
	const char *const *v = tg_policy_deny_read_paths(dflt, &n);
	bool ssh = false, env = false;
	for (size_t i = 0; i < n; i++) {
		ssh |= strcmp(v[i], HOME "/.ssh") == 0;
		env |= strstr(v[i], ".env") != NULL;
	}
	cr_expect(ssh, "~/.ssh not in deny-read paths");
	cr_expect(!env, "glob entries must not reach Landlock");
	v = tg_policy_writable_paths(dflt, &n);
	bool tmp = false, cache = false, devnull = false;
	for (size_t i = 0; i < n; i++) {
		tmp |= strcmp(v[i], "/tmp") == 0;
		cache |= strcmp(v[i], HOME "/.cache") == 0;
		devnull |= strcmp(v[i], "/dev/null") == 0;
	}
	cr_expect(tmp && cache && devnull);
}

/* As root, "~/.ssh" and "/root/.ssh" (both in the shipped policy) are one
 * secret: listed once, opened once per start. */
Test(policy, expanded_paths_are_listed_once)
{
	struct tg_policy *p = load_yaml("version: 1\npaths:\n"
	                                "  deny_read: [~/.ssh, /home/dev/.ssh, '$HOME/.ssh/', /x/y]\n"
	                                "  writable: [~/.cache, /home/dev/.cache, /tmp, /tmp/]\n");
	struct tg_policy_ctx ctx = { WS, HOME, STATE, NULL };
	tg_policy_set_ctx(p, &ctx);
	size_t n = 0;
	const char *const *v = tg_policy_deny_read_paths(p, &n);
	cr_expect_eq(n, 2, "%zu deny-read paths", n);
	size_t ssh = 0;
	for (size_t i = 0; i < n; i++)
		ssh += strcmp(v[i], HOME "/.ssh") == 0;
	cr_expect_eq(ssh, 1);
	v = tg_policy_writable_paths(p, &n);
	size_t cache = 0, tmp = 0;
	for (size_t i = 0; i < n; i++) {
		cache += strcmp(v[i], HOME "/.cache") == 0;
		tmp += strcmp(v[i], "/tmp") == 0;
	}
	cr_expect_eq(cache, 1);
	cr_expect_eq(tmp, 1);
	tg_policy_free(p);
}

Test(policy, strictest_wins_and_first_on_tie)
{
	struct tg_policy *p = load_yaml(
		"rules:\n"
		"  - id: a-audit\n    reason: r\n    action: audit\n    exec: {program: [make]}\n"
		"  - id: b-deny\n    reason: r\n    action: deny\n    errno: EACCES\n    exec: {program: [make], args: [install]}\n"
		"  - id: c-deny\n    reason: r\n    action: deny\n    exec: {program: [make], args: [install]}\n"
		"  - id: d-allow\n    reason: r\n    action: allow\n    exec: {program: [make]}\n");
	struct tg_verdict v;
	judge_line(p, "make", &v);
	cr_expect_eq(v.action, TG_ACT_AUDIT);
	cr_expect_str_eq(v.rule_id, "a-audit");
	judge_line(p, "make install", &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	cr_expect_eq(v.err, EACCES);
	cr_expect_str_eq(v.rule_id, "b-deny");
	judge_line(p, "cmake", &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW);
	cr_expect_null(v.rule_id);
	tg_policy_free(p);
}

Test(policy, relative_args_follow_process_cwd)
{
	/* op->pid is this process: its cwd is read from /proc/PID/cwd. */
	struct tg_policy *p = load_yaml(
		"rules:\n  - id: no-etc\n    reason: r\n    action: deny\n"
		"    exec: {program: [rm], args: [/etc/**]}\n");
	char **argv = NULL;
	cr_assert_eq(tg_argv_split("rm hosts", &argv), 0);
	struct tg_op op = { .kind = TG_OP_EXEC, .argv = argv, .argc = 2, .pid = getpid() };
	op.path = tg_strdup("/usr/bin/rm");
	struct tg_verdict v;
	char old[4096];
	cr_assert_not_null(getcwd(old, sizeof(old)));
	cr_assert_eq(chdir("/etc"), 0);
	tg_policy_decide(p, &op, &v);
	cr_assert_eq(chdir(old), 0);
	cr_expect_eq(v.action, TG_ACT_DENY, "relative 'hosts' in /etc");
	op.pid = 0;
	tg_policy_decide(p, &op, &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW, "without a pid it is relative to the workspace");
	tg_op_clear(&op);
	tg_policy_free(p);
}

Test(policy, missing_program_stays_denied_with_enoent, .init = setup_default,
     .fini = teardown_default)
{
	/* dash tries execve("/usr/local/sbin/rm") first: still refused (a file
	 * created there before the kernel looks would otherwise run), but with
	 * the kernel's own ENOENT so the shell goes on to the next entry. */
	char *argv[] = { "rm", "-rf", "/etc/x", NULL };
	struct tg_op op = { .kind = TG_OP_EXEC, .argv = argv, .argc = 3, .pid = getpid() };
	struct tg_verdict v;
	op.path = "/nonexistent-dir/rm";
	tg_policy_decide(dflt, &op, &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	cr_expect_eq(v.err, ENOENT);
	cr_expect_not_null(v.rule_id);
	op.path = "/bin/sh";
	tg_policy_decide(dflt, &op, &v);
	cr_expect_eq(v.action, TG_ACT_DENY, "an existing program is judged");
	cr_expect_neq(v.err, ENOENT);
	op.pid = 0;
	op.path = "/nonexistent-dir/rm";
	tg_policy_decide(dflt, &op, &v);
	cr_expect_eq(v.action, TG_ACT_DENY, "without a tracee (explain) it is judged");
	cr_expect_neq(v.err, ENOENT);
	/* kill rules are never softened */
	char *argv2[] = { "rm", "-rf", "/", NULL };
	op.argv = argv2;
	op.pid = getpid();
	tg_policy_decide(dflt, &op, &v);
	cr_expect_eq(v.action, TG_ACT_KILL);
	/* an allowed exec of a missing file is left to the kernel */
	char *argv3[] = { "ls", NULL };
	op.argv = argv3;
	op.argc = 1;
	tg_policy_decide(dflt, &op, &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW);
}

Test(policy, memfd_exec_is_never_missing, .init = setup_default, .fini = teardown_default)
{
	/* execveat(memfd, "", AT_EMPTY_PATH): the decoder hands the fd's link
	 * text, which stat cannot find; the exec-memfd denial must hold. */
	char *argv[] = { "cc", "--version", NULL };
	const char *names[] = { "/memfd:cc (deleted)", "/memfd:cc", "/memfd:a/b (deleted)" };
	struct tg_op op = { .kind = TG_OP_EXEC, .argv = argv, .argc = 2, .pid = getpid() };
	struct tg_verdict v;
	for (size_t i = 0; i < TG_ARRAY_SIZE(names); i++) {
		op.path = (char *)names[i];
		op.flags = AT_EMPTY_PATH;
		tg_policy_decide(dflt, &op, &v);
		cr_expect_eq(v.action, TG_ACT_DENY, "%s", names[i]);
		cr_expect_eq(v.err, EACCES, "%s: errno %d", names[i], v.err);
		cr_expect_str_eq(v.rule_id ? v.rule_id : "", "exec-memfd", "%s", names[i]);
		op.flags = 0;
		tg_policy_decide(dflt, &op, &v);
		cr_expect_eq(v.err, EACCES, "%s without AT_EMPTY_PATH", names[i]);
	}
	/* A deleted file run through its fd: the name says "(deleted)". */
	struct tg_policy *p = load_yaml("version: 1\nrules:\n  - id: no-tool\n    reason: r\n"
	                                "    action: deny\n    exec:\n      program: ['/ws/*']\n");
	op.path = "/ws/tool (deleted)";
	op.flags = AT_EMPTY_PATH;
	tg_policy_decide(p, &op, &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	cr_expect_eq(v.err, EPERM);
	op.flags = 0;
	tg_policy_decide(p, &op, &v);
	cr_expect_eq(v.err, EPERM, "a '(deleted)' name is not looked up");
	tg_policy_free(p);
}

Test(policy, context_is_normalised)
{
	struct tg_policy *p = load_yaml("paths: {writable: [~/.cache]}\n");
	struct tg_policy_ctx ctx = { "/home/dev//project/", "/home/dev/", STATE "/" };
	tg_policy_set_ctx(p, &ctx);
	struct tg_op op = { .kind = TG_OP_UNLINK, .path = "/home/dev/.cache/x" };
	expect_op(p, &op, TG_ACT_ALLOW, 0, NULL, "cache under a home with a trailing slash");
	struct tg_op op2 = { .kind = TG_OP_UNLINK, .path = WS "/x" };
	expect_op(p, &op2, TG_ACT_ALLOW, 0, NULL, "workspace with doubled slash");
	struct tg_op op3 = { .kind = TG_OP_UNLINK, .path = STATE "/j" };
	expect_op(p, &op3, TG_ACT_DENY, EACCES, "state-dir", "state dir with trailing slash");
	tg_policy_free(p);
}

Test(policy, empty_policy_filter_info)
{
	struct tg_policy *p = load_yaml("version: 1\n");
	struct tg_policy_filter_info fi;
	tg_policy_filter_info(p, &fi);
	cr_expect(!fi.trap_network, "no connect rule, default allow: no network stops");
	cr_expect_eq(fi.max_procs, 0);
	cr_expect_eq(fi.ndenied, 0);
	size_t n = 99;
	tg_policy_deny_read_paths(p, &n);
	cr_expect_eq(n, 0);
	const char *const *w = tg_policy_writable_paths(p, &n);
	cr_expect_eq(n, 5, "the built-in writable devices");
	cr_expect_str_eq(w[0], "/dev/null");
	tg_policy_free(p);
	/* A NULL policy judges with the built-in defaults only. */
	struct tg_op op = { .kind = TG_OP_EXEC, .path = "/bin/true" };
	struct tg_verdict v;
	tg_policy_decide(NULL, &op, &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW);
	tg_policy_decide(NULL, NULL, &v);
	cr_expect_eq(v.action, TG_ACT_DENY, "no op: fail closed");
}

#include "policy/policy_int.h"

Test(default_policy, every_rule_has_examples, .init = setup_default, .fini = teardown_default)
{
	cr_expect_geq(dflt->nrules, 25);
	for (size_t i = 0; i < dflt->nrules; i++) {
		const struct tg_rule *r = dflt->rules[i];
		cr_expect_gt(r->nmatch, 0, "rule %s has no match example", r->id);
		if (r->kind == TG_RULE_EXEC || r->kind == TG_RULE_CONNECT)
			cr_expect_gt(r->nnot_match, 0, "rule %s has no not_match example", r->id);
		cr_expect(r->reason && strlen(r->reason) > 20, "rule %s: a reason says why", r->id);
	}
}

/* ---- the dynamic loader as a wrapper ---- */

Test(loader, judges_the_program_it_runs, .init = setup_default, .fini = teardown_default)
{
	static const char *const kill_lines[] = {
		"/lib64/ld-linux-x86-64.so.2 /usr/bin/rm -rf /",
		"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 /bin/rm -rf /usr",
		"/lib/x86_64-linux-gnu/ld-2.31.so /bin/rm -rf /usr",
		"/lib/ld-musl-x86_64.so.1 /bin/rm -rf /etc",
		"/usr/lib64/ld.so rm -rf /",
		"/lib64/ld64.so.2 /bin/rm -rf /",
		"/lib64/ld-linux-x86-64.so.2 --library-path /x --preload /y.so --inhibit-cache /bin/rm -rf /",
		"/lib64/ld-linux-x86-64.so.2 --list --verify --audit a.so /bin/rm -rf /",
		"/lib64/ld-linux-x86-64.so.2 --library-path=/x /bin/rm -rf /",
		"/lib64/ld-linux-x86-64.so.2 -- /bin/rm -rf /",
		"/lib64/ld-linux-x86-64.so.2 --argv0 rm /bin/busybox -rf /",
		"/lib64/ld-linux-x86-64.so.2 --argv0=rm /bin/busybox -rf /",
		/* a loader running a loader */
		"/lib64/ld-linux-x86-64.so.2 /lib64/ld-linux-x86-64.so.2 --argv0 x /bin/rm -rf /",
		/* an option it does not know: read both ways */
		"/lib64/ld-linux-x86-64.so.2 --future-opt /bin/rm -rf /",
		"/lib64/ld-linux-x86-64.so.2 --future-opt value /bin/rm -rf /",
		/* relative to the process's cwd, like other relative args */
		"/lib64/ld-linux-x86-64.so.2 ../../../bin/rm -rf /",
	};
	for (size_t i = 0; i < TG_ARRAY_SIZE(kill_lines); i++)
		expect_exec(kill_lines[i], TG_ACT_KILL, "rm-recursive-system");
	expect_exec("/lib64/ld-linux-x86-64.so.2 /usr/bin/sudo id", TG_ACT_DENY, "privilege-escalation");
	expect_exec("/lib64/ld-linux-x86-64.so.2 /usr/bin/rm -rf build", TG_ACT_ALLOW, NULL);
	expect_exec("/lib64/ld-linux-x86-64.so.2 --list", TG_ACT_ALLOW, NULL);
	expect_exec("/lib64/ld-linux-x86-64.so.2 --library-path", TG_ACT_ALLOW, NULL);
	expect_exec("/lib64/ld-linux-x86-64.so.2 --help", TG_ACT_ALLOW, NULL);
	/* not loaders: their arguments are not programs */
	expect_exec("ldconfig /bin/rm -rf /", TG_ACT_ALLOW, NULL);
	expect_exec("ldd /usr/bin/sudo", TG_ACT_ALLOW, NULL);
	expect_exec("/usr/bin/ld.bfd /bin/rm -rf /", TG_ACT_ALLOW, NULL);
}

Test(loader, path_rules_and_program_paths, .init = setup_default, .fini = teardown_default)
{
	struct tg_policy *p = load_yaml("version: 1\nrules:\n  - id: no-tool\n    reason: r\n"
	                                "    action: deny\n    exec:\n      program: ['/opt/bad/*']\n");
	struct tg_verdict v;
	judge_line(p, "/lib64/ld-linux-x86-64.so.2 /opt/bad/tool --x", &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	cr_expect_str_eq(v.rule_id ? v.rule_id : "", "no-tool");
	judge_line(p, "/lib64/ld-linux-x86-64.so.2 /opt/good/tool", &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW);
	tg_policy_free(p);
	/* exec-memfd is a path rule with ops: [exec]: it applies too. */
	judge_line(dflt, "/lib64/ld-linux-x86-64.so.2 '/memfd:cc (deleted)'", &v);
	cr_expect_eq(v.action, TG_ACT_DENY);
	cr_expect_str_eq(v.rule_id ? v.rule_id : "", "exec-memfd");
}

/* With a tracee (here: this process), the program is resolved in its view:
 * a symlink in the workspace and /proc/self/fd/N of a memfd both name what
 * the loader will open. */
Test(loader, resolved_in_the_tracee_view, .init = setup_default, .fini = teardown_default)
{
	char dir[] = "/tmp/tg-ldso-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	_cleanup_free_ char *bad = tg_asprintf("%s/bad", dir);
	_cleanup_free_ char *real = tg_asprintf("%s/bad/esc-denied", dir);
	_cleanup_free_ char *alias = tg_asprintf("%s/innocent", dir);
	cr_assert_eq(mkdir(bad, 0700), 0);
	int fd = open(real, O_WRONLY | O_CREAT | O_EXCL, 0700);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(symlink(real, alias), 0);
	_cleanup_free_ char *yaml = tg_asprintf(
		"version: 1\nrules:\n  - id: no-tool\n    reason: r\n    action: deny\n"
		"    exec:\n      program: ['%s/*']\n",
		bad);
	struct tg_policy *p = load_yaml(yaml);
	char *argv[] = { "/lib64/ld-linux-x86-64.so.2", alias, NULL };
	struct tg_op op = { .kind = TG_OP_EXEC, .argv = argv, .argc = 2, .pid = getpid() };
	struct tg_verdict v;
	op.path = "/lib64/ld-linux-x86-64.so.2";
	tg_policy_decide(p, &op, &v);
	cr_expect_eq(v.action, TG_ACT_DENY, "a symlink to the program");
	cr_expect_str_eq(v.rule_id ? v.rule_id : "", "no-tool");
	op.pid = 0;
	tg_policy_decide(p, &op, &v);
	cr_expect_eq(v.action, TG_ACT_ALLOW, "without a tracee only the name is known");
	tg_policy_free(p);

	int mfd = memfd_create("cc", 0);
	cr_assert_geq(mfd, 0);
	char magic[64];
	snprintf(magic, sizeof(magic), "/proc/self/fd/%d", mfd);
	argv[1] = magic;
	op.pid = getpid();
	tg_policy_decide(dflt, &op, &v);
	cr_expect_eq(v.action, TG_ACT_DENY, "a memfd through /proc/self/fd");
	cr_expect_str_eq(v.rule_id ? v.rule_id : "", "exec-memfd");
	close(mfd);
	unlink(alias);
	unlink(real);
	rmdir(bad);
	rmdir(dir);
}

/* /proc/PID/mem opened for writing patches a live process (one whose exec
 * was already judged). Outside the workspace the built-in read-only rule
 * refuses it anyway; the default rule holds where that does not apply. */
Test(proc_mem, write_opens_are_denied, .init = setup_default, .fini = teardown_default)
{
	static const char *const mem[] = { "/proc/1234/mem", "/proc/1/task/77/mem" };
	static const char *const other[] = { "/proc/1234/maps", "/proc/1234/memx", "/proc/1/task/77/comm" };
	const char *paths[] = { TG_TEST_POLICYDIR };
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	cr_assert_eq(tg_policy_load(&p, paths, 1, &d), 0);
	/* A workspace that contains /proc: the built-in rule allows writes. */
	struct tg_policy_ctx ctx = { "/", HOME, STATE };
	tg_policy_set_ctx(p, &ctx);
	struct tg_op op = { .kind = TG_OP_OPEN, .name = "openat", .writes = true };
	struct tg_verdict v;
	const int modes[] = { O_WRONLY, O_RDWR, O_RDWR | O_CREAT };
	for (size_t m = 0; m < TG_ARRAY_SIZE(modes); m++) {
		op.flags = modes[m];
		for (size_t i = 0; i < TG_ARRAY_SIZE(mem); i++) {
			op.path = (char *)mem[i];
			tg_policy_decide(p, &op, &v);
			cr_expect_eq(v.action, TG_ACT_DENY, "%s", mem[i]);
			cr_expect_eq(v.err, EACCES);
			cr_expect_str_eq(v.rule_id ? v.rule_id : "", "proc-mem-write", "%s", mem[i]);
			tg_policy_decide(dflt, &op, &v);
			cr_expect_eq(v.action, TG_ACT_DENY, "%s in the usual workspace", mem[i]);
		}
		for (size_t i = 0; i < TG_ARRAY_SIZE(other); i++) {
			op.path = (char *)other[i];
			tg_policy_decide(p, &op, &v);
			cr_expect_eq(v.action, TG_ACT_ALLOW, "%s", other[i]);
		}
	}
	tg_policy_free(p);
}
