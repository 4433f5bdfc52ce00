/* landlock_int.h — what landlock.c and view.c share. */
#pragma once

#include "landlock.h"

/* The view of a ruleset from the lists its build computed: excl, the
 * canonical excluded paths that exist; places, the canonical writable
 * places (NULL-terminated, each may be missing). Both are copied. */
int tg_landlock_view_from(char *const *excl, char *const *places, struct tg_landlock_view **out);
/* The same from the places a build granted whole (one rule beneath each,
 * nothing excluded in it): what the ruleset holds, not what an lstat of
 * each place would guess. roots: canonical, NULL-terminated (may be NULL). */
int tg_landlock_view_of(char *const *excl, char *const *roots, struct tg_landlock_view **out);
