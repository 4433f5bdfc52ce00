/* remote.h — command lines that run on another machine (ssh host CMD),
 * read as the remote shell would, so that the exec rules can judge them.
 * Pure text functions: no policy, no ptrace.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* ssh, autossh, dbclient. */
bool tg_remote_is_ssh(const char *argv0);

/* The command text ssh sends for argv (its words after the host joined with
 * spaces, or -o RemoteCommand=...). *out = NULL when there is none (an
 * interactive login, -N, -s subsystem, -O control). 0 or -ENOMEM. */
int tg_remote_ssh_command(char *const *argv, size_t argc, char **out);

/* Split a shell command line into simple commands (argv vectors, quotes
 * removed, redirections and their targets dropped) at ; & && || | ( ) and
 * newlines. -EINVAL for what it does not read: command or process
 * substitution, heredocs, unbalanced quotes. 0, -EINVAL, -ENOMEM. */
int tg_shell_commands(const char *text, char ****out);
void tg_remote_commands_free(char ***cmds);

/* text with command and process substitutions opened up into plain
 * command separators ("echo $(rm -rf /)" -> "echo ; rm -rf /)"), so that
 * what they run is judged too; NULL when there are none (or no memory). */
char *tg_remote_flatten(const char *text);

/* Leading words a shell reads before the command: keywords (if, then, do,
 * !, {, time, exec, command, nohup...) and NAME=value assignments. */
size_t tg_remote_skip_prefix(char *const *argv, size_t argc);

/* For a wrapper (env, nice, ionice, timeout, stdbuf, sudo, doas, xargs,
 * chroot, flock, watch, strace): the index of the command it runs, else 0. */
size_t tg_remote_unwrap(char *const *argv, size_t argc);

/* `sh -c SCRIPT` (bash, dash, zsh, -ec, -o x -c): SCRIPT, else NULL. */
const char *tg_remote_shell_script(char *const *argv, size_t argc);

/* The name-like words of text (letters, digits, . _ + - /). */
int tg_remote_tokens(const char *text, char ***out);
