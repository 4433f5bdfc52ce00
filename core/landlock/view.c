/* landlock/view.c — what the ruleset refuses, seen from the supervisor
 * (see landlock.h). It mirrors build() in landlock.c: a writable place gets
 * one rule beneath it when it exists and holds no excluded path; otherwise
 * it is walked entry by entry, and entries created later get no rule. Only
 * the first case is certain to be granted: everything else may be refused,
 * and the caller watches those calls' results (a second ptrace stop) to
 * report what the kernel really did. */
#include "landlock_int.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"
#include "base/util.h"

struct tg_landlock_view {
	char **roots;   /* canonical writable places granted beneath as a whole */
	char **excl;    /* canonical deny_read and hidden paths */
};

static bool excl_at_or_beneath(char *const *excl, const char *path)
{
	for (size_t i = 0; excl && excl[i]; i++)
		if (tg_path_is_under(excl[i], path) || tg_path_is_under(path, excl[i]))
			return true;
	return false;
}

/* c: a canonical writable place. A missing place gets no rule at all;
 * one holding an excluded path is granted piecewise, as at build time. */
static int add_canonical_root(struct tg_landlock_view *v, const char *c)
{
	struct stat st;
	if (lstat(c, &st) < 0 || excl_at_or_beneath(v->excl, c))
		return 0;
	return tg_strv_push(&v->roots, c);
}

static int view_new(char *const *excl, char *const *places, bool granted, struct tg_landlock_view **out)
{
	struct tg_landlock_view *v = calloc(1, sizeof(*v));
	int r = v ? 0 : -ENOMEM;
	*out = NULL;
	for (size_t i = 0; r == 0 && excl && excl[i]; i++)
		r = tg_strv_push(&v->excl, excl[i]);
	for (size_t i = 0; r == 0 && places && places[i]; i++)
		r = granted ? tg_strv_push(&v->roots, places[i]) : add_canonical_root(v, places[i]);
	if (r < 0) {
		tg_landlock_view_free(v);
		return r;
	}
	*out = v;
	return 0;
}

int tg_landlock_view_from(char *const *excl, char *const *places, struct tg_landlock_view **out)
{
	return view_new(excl, places, false, out);
}

int tg_landlock_view_of(char *const *excl, char *const *roots, struct tg_landlock_view **out)
{
	return view_new(excl, roots, true, out);
}

void tg_landlock_view_free(struct tg_landlock_view *v)
{
	if (!v)
		return;
	tg_strv_free(v->roots);
	tg_strv_free(v->excl);
	free(v);
}

bool tg_landlock_view_may_refuse(const struct tg_landlock_view *v, const char *path, bool entry)
{
	if (!v || !path)
		return false;
	for (size_t i = 0; v->roots && v->roots[i]; i++) {
		if (!tg_path_is_under(path, v->roots[i]))
			continue;
		/* The place itself: its own name lives in a parent that has
		 * no write rule. */
		if (!entry || strcmp(path, v->roots[i]) != 0)
			return false;
	}
	return true;
}

const char *tg_landlock_view_excluded(const struct tg_landlock_view *v, const char *path)
{
	for (size_t i = 0; v && path && v->excl && v->excl[i]; i++)
		if (tg_path_is_under(path, v->excl[i]))
			return v->excl[i];
	return NULL;
}
