/* state_dir.c — where a workspace's journals and history live by default
 * (docs/journal.md, "Where it lives"): outside the workspace on the same
 * filesystem when the user's state home is there, else in the workspace's
 * .txguard/state.
 */
#include "journal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"

/* Nearest existing ancestor's st_dev: where the state dir would live. */
static int dev_of_ancestor(const char *path, dev_t *dev)
{
	_cleanup_free_ char *p = tg_strdup(path);
	if (!p)
		return -ENOMEM;
	for (;;) {
		struct stat st;
		if (stat(p, &st) == 0) {
			*dev = st.st_dev;
			return 0;
		}
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			return stat("/", &st) == 0 ? (*dev = st.st_dev, 0) : -errno;
		*slash = '\0';
	}
}

static char *state_name(const char *workspace)
{
	const char *base = strrchr(workspace, '/');
	base = base && base[1] ? base + 1 : "root";
	char clean[33];
	size_t n = 0;
	for (; *base && n < 32; base++)
		clean[n++] = (char)((*base >= 'a' && *base <= 'z') || (*base >= 'A' && *base <= 'Z') ||
		                    (*base >= '0' && *base <= '9') || *base == '-' || *base == '_' ? *base : '_');
	clean[n] = '\0';
	return tg_asprintf("%s-%016llx", clean, (unsigned long long)tg_hash_str(workspace));
}

int tg_journal_state_home(char **out, size_t *base_len)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	const char *base = xdg && xdg[0] == '/' ? xdg : home && home[0] == '/' ? home : NULL;
	if (!base)
		return -ENOENT;
	*out = tg_asprintf("%s%s", base, base == xdg ? "/txguard" : "/.local/state/txguard");
	if (base_len)
		*base_len = strlen(base);
	return *out ? 0 : -ENOMEM;
}

int tg_journal_default_state_dir(const char *workspace, char **out)
{
	_cleanup_free_ char *name = state_name(workspace);
	if (!name)
		return -ENOMEM;
	_cleanup_free_ char *base = NULL;
	if (tg_journal_state_home(&base, NULL) == -ENOMEM)
		return -ENOMEM;
	struct stat ws;
	if (stat(workspace, &ws) < 0)
		return -errno;
	dev_t dev = 0;
	/* The stash hard-links into the state dir: only O(1) on one filesystem. */
	if (base && dev_of_ancestor(base, &dev) == 0 && dev == ws.st_dev) {
		*out = tg_asprintf("%s/%s", base, name);
	} else {
		/* The journal one level down: .txguard/.gitignore stays readable
		 * to the command (git inside the run must not see .txguard
		 * either) while the state itself is private. */
		*out = tg_asprintf("%s/.txguard/state", strcmp(workspace, "/") ? workspace : "");
	}
	return *out ? 0 : -ENOMEM;
}
