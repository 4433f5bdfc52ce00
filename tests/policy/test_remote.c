/* test_remote.c — reading remote command lines (core/policy/remote.c). */
#include "test_util.h"

#include "policy/remote.h"

static char *ssh_cmd(const char *line)
{
	char **argv = NULL, *out = NULL;
	cr_assert_eq(tg_argv_split(line, &argv), 0);
	cr_assert_eq(tg_remote_ssh_command(argv, tg_strv_len(argv), &out), 0);
	tg_strv_free(argv);
	return out;
}

Test(remote, ssh_options_host_and_command)
{
	char *s;
	s = ssh_cmd("ssh host rm -rf /");
	cr_expect_str_eq(s, "rm -rf /");
	free(s);
	s = ssh_cmd("ssh -p 22 -i key -tt me@host 'ls -l'");
	cr_expect_str_eq(s, "ls -l");
	free(s);
	s = ssh_cmd("ssh -p22 -oBatchMode=yes host uptime");
	cr_expect_str_eq(s, "uptime");
	free(s);
	s = ssh_cmd("ssh -o 'RemoteCommand rm -x' host");
	cr_expect_str_eq(s, "rm -x");
	free(s);
	s = ssh_cmd("autossh -M 0 host df");
	cr_expect_str_eq(s, "df");
	free(s);
	cr_expect_null(ssh_cmd("ssh host"));
	cr_expect_null(ssh_cmd("ssh -N -L 1:a:2 host"));
	cr_expect_null(ssh_cmd("ssh -s host sftp"));
}

static char ***split(const char *text, int want)
{
	char ***cmds = NULL;
	cr_assert_eq(tg_shell_commands(text, &cmds), want, "%s", text);
	return cmds;
}

Test(remote, shell_lines_split_into_commands)
{
	char ***c = split("cd /srv && rm -rf 'a b' ; echo \"x;y\" | grep x > /dev/null 2>&1 &", 0);
	cr_assert_not_null(c[0]);
	cr_expect_str_eq(c[0][0], "cd");
	cr_expect_str_eq(c[1][0], "rm");
	cr_expect_str_eq(c[1][2], "a b");
	cr_expect_str_eq(c[2][1], "x;y");
	cr_expect_str_eq(c[3][0], "grep");
	cr_expect_null(c[3][2], "the redirection and its target are dropped");
	cr_expect_null(c[4]);
	tg_remote_commands_free(c);
	c = split("(rm -rf /x)\n# rm -rf /\necho ok", 0);
	cr_expect_str_eq(c[0][0], "rm");
	cr_expect_str_eq(c[1][0], "echo");
	cr_expect_null(c[2]);
	tg_remote_commands_free(c);
}

Test(remote, what_is_not_read_is_einval)
{
	split("echo $(rm -rf /)", -EINVAL);
	split("echo `id`", -EINVAL);
	split("echo \"$(id)\"", -EINVAL);
	split("cat <<EOF", -EINVAL);
	split("diff <(ls) x", -EINVAL);
	split("echo 'open", -EINVAL);
	split("echo >", -EINVAL);
	char *f = tg_remote_flatten("echo \"$(rm -rf /)\" `id`");
	char ***c = split(f, 0);
	cr_expect_str_eq(c[1][0], "rm");
	cr_expect_str_eq(c[2][0], "id");
	tg_remote_commands_free(c);
	free(f);
	cr_expect_null(tg_remote_flatten("plain text"));
}

static size_t unwrap(const char *line)
{
	char **argv = NULL;
	cr_assert_eq(tg_argv_split(line, &argv), 0);
	size_t i = tg_remote_unwrap(argv, tg_strv_len(argv));
	tg_strv_free(argv);
	return i;
}

Test(remote, wrappers_are_looked_through)
{
	cr_expect_eq(unwrap("env -i FOO=1 -u BAR rm x"), 5);
	cr_expect_eq(unwrap("nice -n 5 rm x"), 3);
	cr_expect_eq(unwrap("nice -n5 rm x"), 2);
	cr_expect_eq(unwrap("timeout -s KILL 10 rm x"), 4);
	cr_expect_eq(unwrap("timeout --signal=KILL 10 rm x"), 3);
	cr_expect_eq(unwrap("sudo -u root -- rm x"), 4);
	cr_expect_eq(unwrap("xargs -n 1 -I {} rm {}"), 5);
	cr_expect_eq(unwrap("rm -rf x"), 0);
	cr_expect_eq(unwrap("env"), 0);
	char *argv[] = { (char *)"bash", (char *)"-ec", (char *)"rm -rf /", NULL };
	cr_expect_str_eq(tg_remote_shell_script(argv, 3), "rm -rf /");
	char *argv2[] = { (char *)"bash", (char *)"script.sh", NULL };
	cr_expect_null(tg_remote_shell_script(argv2, 2));
	char *argv3[] = { (char *)"A=1", (char *)"time", (char *)"!", (char *)"rm", NULL };
	cr_expect_eq(tg_remote_skip_prefix(argv3, 4), 3);
}
