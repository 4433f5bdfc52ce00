/* workspace.c — which directory a run journals, and why.
 *
 * Without -w the workspace is the project the current directory belongs to:
 * walking up from the current directory, the first directory that holds a
 * .txguard.yaml or a .git (a directory, or the file of a worktree or a
 * submodule) — the top of the enclosing git work tree, as `git rev-parse
 * --show-toplevel` finds it. None: the current directory. An agent whose
 * shell sits in app/src thus journals (and may change) all of app/. The
 * command itself still runs in the current directory.
 *
 * A workspace that is too wide to journal sensibly (/, $HOME, /home and
 * the other system trees) is refused unless
 * --force-workspace: every write anywhere below would be journaled, and the
 * policy's "outside the workspace" rules would protect nothing. A
 * discovered root that is too wide (a dotfiles repository in $HOME) is
 * passed over for the current directory.
 */
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "base/path.h"
#include "common.h"

static bool has_entry(const char *dir, const char *name)
{
	_cleanup_free_ char *p = tg_path_join(dir, name);
	struct stat st;
	return p && lstat(p, &st) == 0;
}

/* The nearest ancestor of dir (itself included) holding a marker. */
static char *discover(const char *dir, enum tg_ws_source *src)
{
	_cleanup_free_ char *d = tg_strdup(dir);
	while (d) {
		if (has_entry(d, TG_WORKSPACE_POLICY)) {
			*src = TG_WS_POLICY_FILE;
			return steal_pointer(&d);
		}
		if (has_entry(d, ".git")) {
			*src = TG_WS_GIT;
			return steal_pointer(&d);
		}
		if (strcmp(d, "/") == 0)
			return NULL;
		char *slash = strrchr(d, '/');
		if (slash == d)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	return NULL;
}

static const char *const wide_roots[] = {
	"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
	"/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp",
	"/usr", "/usr/local", "/var", "/var/tmp", "/var/lib",
};

const char *tg_workspace_too_wide(const char *ws)
{
	for (size_t i = 0; i < TG_ARRAY_SIZE(wide_roots); i++)
		if (strcmp(ws, wide_roots[i]) == 0)
			return strcmp(ws, "/") == 0 ? "the whole file system" : "a system directory";
	const char *home = getenv("HOME");
	_cleanup_free_ char *h = home && home[0] == '/' ? tg_path_normalize(home) : NULL;
	if (h && strcmp(ws, h) == 0)
		return "your home directory";
	return NULL;
}

static char *normalized_realpath(const char *p)
{
	_cleanup_free_ char *real = realpath(p, NULL);
	return real ? tg_path_normalize(real) : NULL;
}

int tg_workspace_resolve(const struct tg_opts *o, char **out, enum tg_ws_source *src)
{
	*src = o->workspace ? TG_WS_OPTION : TG_WS_CWD;
	_cleanup_free_ char *ws = normalized_realpath(o->workspace ? o->workspace : ".");
	if (!ws)
		return -errno;
	struct stat st;
	if (stat(ws, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (!o->workspace) {
		enum tg_ws_source found = TG_WS_CWD;
		_cleanup_free_ char *top = discover(ws, &found);
		if (top && !tg_workspace_too_wide(top)) {
			free(ws);
			ws = steal_pointer(&top);
			*src = found;
		}
	}
	*out = steal_pointer(&ws);
	return 0;
}

int tg_workspace_path(const struct tg_opts *o, char **out)
{
	enum tg_ws_source src;
	return tg_workspace_resolve(o, out, &src);
}

const char *tg_ws_source_name(enum tg_ws_source src)
{
	static const char *const names[] = {
		[TG_WS_OPTION] = "option", [TG_WS_GIT] = "git",
		[TG_WS_POLICY_FILE] = "policy_file", [TG_WS_CWD] = "cwd",
	};
	return (size_t)src < TG_ARRAY_SIZE(names) ? names[src] : "cwd";
}

int tg_workspace_for_writing(const struct tg_opts *o, char **out, enum tg_ws_source *src,
                             char *why, size_t len)
{
	const char *given = o->workspace ? o->workspace : ".";
	int rc = tg_workspace_resolve(o, out, src);
	if (rc == -ENOTDIR)
		snprintf(why, len, "workspace %s is not a directory: give -w a directory", given);
	else if (rc == -ENOENT)
		snprintf(why, len, "workspace %s does not exist: create it, or give -w an existing directory", given);
	else if (rc < 0)
		snprintf(why, len, "workspace %s: %s", given, strerror(-rc));
	if (rc < 0)
		return rc;
	const char *wide = o->force_workspace ? NULL : tg_workspace_too_wide(*out);
	if (!wide)
		return 0;
	snprintf(why, len, "refusing workspace %s: it is %s, so every write below it would be "
	         "journaled and nothing would count as outside it; give -w the project "
	         "directory (or --force-workspace if you mean it)", *out, wide);
	free(*out);
	*out = NULL;
	return -EPERM;
}
