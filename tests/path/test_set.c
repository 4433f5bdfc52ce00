/* test_set.c — core/base/set.h: string and (dev, ino) sets, the (dev, ino) map; and
 * base/util.h's tg_grow, the arrays' growth. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/set.h"
#include "base/util.h"

Test(strset, empty_set_has_nothing)
{
	struct tg_strset s = { 0 };
	cr_assert(!tg_strset_has(&s, ""));
	cr_assert(!tg_strset_has(&s, "a"));
	cr_assert_null(tg_strset_keys(&s));
	tg_strset_clear(&s);
}

Test(strset, add_tells_new_from_present)
{
	struct tg_strset s = { 0 };
	cr_assert_eq(tg_strset_add(&s, "a/b"), 1);
	cr_assert_eq(tg_strset_add(&s, "a/b"), 0);
	cr_assert_eq(tg_strset_add(&s, ""), 1, "the workspace itself is a key too");
	cr_assert_eq(s.n, 2);
	cr_assert(tg_strset_has(&s, "a/b"));
	cr_assert(tg_strset_has(&s, ""));
	cr_assert(!tg_strset_has(&s, "a"));
	tg_strset_clear(&s);
	cr_assert_eq(s.n, 0);
	cr_assert(!tg_strset_has(&s, "a/b"));
	cr_assert_eq(tg_strset_add(&s, "a/b"), 1, "usable again after clear");
	tg_strset_clear(&s);
}

Test(strset, keeps_a_copy_of_the_key)
{
	struct tg_strset s = { 0 };
	char k[8] = "key";
	cr_assert_eq(tg_strset_add(&s, k), 1);
	k[0] = 'X';
	cr_assert(tg_strset_has(&s, "key"));
	cr_assert(!tg_strset_has(&s, k));
	tg_strset_clear(&s);
}

Test(strset, grows_past_many_entries)
{
	struct tg_strset s = { 0 };
	enum { N = 100000 };
	char k[32];
	for (int i = 0; i < N; i++) {
		snprintf(k, sizeof(k), "dir/%d", i);
		cr_assert_eq(tg_strset_add(&s, k), 1, "%s", k);
	}
	for (int i = 0; i < N; i += 7) {
		snprintf(k, sizeof(k), "dir/%d", i);
		cr_assert_eq(tg_strset_add(&s, k), 0, "%s", k);
	}
	cr_assert_eq(s.n, N);
	cr_assert(s.cap >= 2 * s.n, "at most half full");
	for (int i = 0; i < N; i++) {
		snprintf(k, sizeof(k), "dir/%d", i);
		cr_assert(tg_strset_has(&s, k), "%s", k);
		snprintf(k, sizeof(k), "dir/%d", i + N);
		cr_assert(!tg_strset_has(&s, k), "%s", k);
	}
	/* The keys, each once. */
	const char **v = tg_strset_keys(&s);
	cr_assert_not_null(v);
	char *seen = calloc(N, 1);
	for (size_t i = 0; i < s.n; i++) {
		int n = atoi(v[i] + 4);
		cr_assert(n >= 0 && n < N && !seen[n], "%s", v[i]);
		seen[n] = 1;
	}
	free(seen);
	free(v);
	tg_strset_clear(&s);
}

Test(idset, inode_zero_names_nothing)
{
	struct tg_idset s = { 0 };
	cr_assert(!tg_idset_has(&s, 1, 0));
	cr_assert_eq(tg_idset_add(&s, 1, 0), 0);
	cr_assert(!tg_idset_has(&s, 1, 0));
	cr_assert_eq(s.n, 0);
	tg_idset_clear(&s);
}

Test(idset, dev_and_ino_are_both_the_key)
{
	struct tg_idset s = { 0 };
	cr_assert_eq(tg_idset_add(&s, 2049, 12), 1);
	cr_assert_eq(tg_idset_add(&s, 2049, 12), 0);
	cr_assert(tg_idset_has(&s, 2049, 12));
	cr_assert(!tg_idset_has(&s, 2050, 12), "same inode number, other filesystem");
	cr_assert(!tg_idset_has(&s, 2049, 13));
	cr_assert(!tg_idset_has(&s, 12, 2049));
	tg_idset_clear(&s);
	cr_assert(!tg_idset_has(&s, 2049, 12));
}

Test(idset, grows_past_many_entries)
{
	struct tg_idset s = { 0 };
	enum { N = 200000 };
	/* Sequential inode numbers on two devices: the common case, and the
	 * one a weak hash would pile up. */
	for (uint64_t i = 1; i <= N; i++) {
		cr_assert_eq(tg_idset_add(&s, 64769, i), 1);
		cr_assert_eq(tg_idset_add(&s, 2049, i * 4096), 1);
	}
	cr_assert_eq(s.n, 2 * N);
	cr_assert(s.cap >= 2 * s.n, "at most half full");
	for (uint64_t i = 1; i <= N; i++) {
		cr_assert(tg_idset_has(&s, 64769, i));
		cr_assert(tg_idset_has(&s, 2049, i * 4096));
		cr_assert(!tg_idset_has(&s, 2049, i * 4096 + 1));
		cr_assert(!tg_idset_has(&s, 64770, i));
	}
	tg_idset_clear(&s);
}

/* Removal against a plain array, as a property: random adds, removals and
 * lookups over a few keys (so that probe runs meet, wrap round the end of
 * the table and are cut by removals), every key looked up after each step. */
Test(idset, removal_keeps_every_other_entry_reachable)
{
	enum { KEYS = 48, STEPS = 4000 };
	for (unsigned seed = 1; seed <= 40; seed++) {
		srandom(seed);
		struct tg_idset s = { 0 };
		bool in[2][KEYS + 1] = { { false } };
		size_t n = 0;
		for (int step = 0; step < STEPS; step++) {
			uint64_t dev = 2049 + (uint64_t)(random() % 2), ino = 1 + (uint64_t)(random() % KEYS);
			bool *was = &in[dev - 2049][ino];
			if (random() % 2) {
				cr_assert_eq(tg_idset_add(&s, dev, ino), !*was, "seed %u step %d: add", seed, step);
				n += !*was;
				*was = true;
			} else {
				cr_assert_eq(tg_idset_del(&s, dev, ino), *was, "seed %u step %d: del", seed, step);
				n -= *was;
				*was = false;
			}
			cr_assert_eq(s.n, n, "seed %u step %d: count", seed, step);
			for (uint64_t d = 0; d < 2; d++)
				for (uint64_t i = 1; i <= KEYS; i++)
					cr_assert_eq(tg_idset_has(&s, 2049 + d, i), in[d][i], "seed %u step %d: has %llu:%llu",
					             seed, step, (unsigned long long)(2049 + d), (unsigned long long)i);
		}
		tg_idset_clear(&s);
	}
}

Test(idset, removal_of_what_is_not_there_changes_nothing)
{
	struct tg_idset s = { 0 };
	cr_assert_eq(tg_idset_del(&s, 2049, 12), 0, "an empty set");
	cr_assert_eq(tg_idset_add(&s, 2049, 12), 1);
	cr_assert_eq(tg_idset_del(&s, 2049, 13), 0);
	cr_assert_eq(tg_idset_del(&s, 2049, 0), 0, "inode 0 names nothing");
	cr_assert_eq(s.n, 1);
	cr_assert_eq(tg_idset_del(&s, 2049, 12), 1);
	cr_assert_eq(tg_idset_del(&s, 2049, 12), 0, "removed once");
	cr_assert(!tg_idset_has(&s, 2049, 12));
	cr_assert_eq(tg_idset_add(&s, 2049, 12), 1, "and added again");
	tg_idset_clear(&s);
}

/* The growth every array of the journal and the txn uses: one element at
 * a time, the room doubles, and what was stored stays. */
Test(grow, keeps_elements_and_doubles_the_room)
{
	uint64_t *v = NULL;
	size_t n = 0, cap = 0, grew = 0;
	for (uint64_t i = 0; i < 1000; i++) {
		size_t before = cap;
		uint64_t *nv = tg_grow(v, n, &cap, sizeof(*nv), 16);
		cr_assert_not_null(nv);
		grew += cap != before;
		cr_assert(cap == before || cap == (before ? 2 * before : 16), "room %zu after %zu", cap, before);
		v = nv;
		v[n++] = i * 7;
	}
	cr_assert_eq(cap, 1024);
	cr_assert_eq(grew, 7, "16, 32, ..., 1024");
	for (uint64_t i = 0; i < 1000; i++)
		cr_assert_eq(v[i], i * 7);
	free(v);
}

Test(grow, no_room_is_enomem_and_leaves_the_array)
{
	char *v = malloc(4);
	cr_assert_not_null(v);
	memcpy(v, "abc", 4);
	size_t cap = SIZE_MAX / 2 + 1; /* twice that does not fit a size_t */
	errno = 0;
	cr_assert_null(tg_grow(v, cap, &cap, 1, 16));
	cr_assert_eq(errno, ENOMEM);
	cr_assert_eq(cap, SIZE_MAX / 2 + 1, "the room is as it was");
	size_t big = SIZE_MAX / 8 + 1; /* elements of 16 bytes: too many bytes */
	cr_assert_null(tg_grow(v, big, &big, 16, 16));
	cr_assert_str_eq(v, "abc", "the array is untouched");
	size_t four = 4;
	cr_assert_eq(tg_grow(v, 3, &four, 1, 16), v, "room left: the same array");
	free(v);
}

/* The map beside the set (changes.c finds a moved object by its inode):
 * values are kept and replaced, inode 0 names nothing, and what a table
 * twice regrown holds is all still found. */
Test(idmap, put_get_replace_and_grow)
{
	struct tg_idmap m = { 0 };
	uint64_t v = 7;
	cr_assert_not(tg_idmap_get(&m, 1, 2, &v), "empty");
	cr_assert_eq(v, 7, "untouched when absent");
	cr_assert_eq(tg_idmap_put(&m, 1, 0, 5), 0);
	cr_assert_not(tg_idmap_get(&m, 1, 0, &v), "inode 0 names nothing");
	for (uint64_t i = 1; i <= 1000; i++)
		cr_assert_eq(tg_idmap_put(&m, i % 3, i, i * 10), 0);
	cr_assert_eq(m.n, 1000);
	for (uint64_t i = 1; i <= 1000; i++) {
		cr_assert(tg_idmap_get(&m, i % 3, i, &v), "%llu", (unsigned long long)i);
		cr_assert_eq(v, i * 10);
		cr_assert_not(tg_idmap_get(&m, i % 3 + 1, i, &v), "another device's");
	}
	cr_assert_eq(tg_idmap_put(&m, 2, 5, 99), 0);
	cr_assert(tg_idmap_get(&m, 2, 5, &v));
	cr_assert_eq(v, 99, "replaced");
	cr_assert_eq(m.n, 1000, "no second entry");
	tg_idmap_clear(&m);
	cr_assert_not(tg_idmap_get(&m, 2, 5, &v));
}
