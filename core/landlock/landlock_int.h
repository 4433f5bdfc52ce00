/* landlock_int.h — what landlock.c and view.c share. */
#pragma once

#include "landlock.h"

/* The view of a ruleset from the lists its build computed: excl, the
 * canonical excluded paths that exist; places, the canonical writable
 * places (NULL-terminated, each may be missing). Both are copied. */
int tg_landlock_view_from(char *const *excl, char *const *places, struct tg_landlock_view **out);
