/* test_cache.c — the policy cache's two layers: the parsed trees
 * (policy/ytree.c) and the whole model (policy/model.c). A cached load is
 * the same policy as a parsed one, an edited file is parsed again, and no
 * damaged entry is ever more than a miss. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"
#include "policy/policy_int.h"
#include "policy/ytree.h"

static char *tmpdir(void)
{
	char tmpl[] = "/tmp/tg-cache-XXXXXX";
	char *d = mkdtemp(tmpl);
	cr_assert_not_null(d);
	return strdup(d);
}

static void rm_rf(const char *d)
{
	char *cmd = tg_asprintf("rm -rf '%s'", d);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

/* Load paths with c (NULL: no cache) and return the policy's JSON dump;
 * c's counts are filled. */
static char *load_dump_with(const char *path, struct tg_policy_cache *c)
{
	const char *paths[] = { path };
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	int r = tg_policy_load_cached(&p, paths, 1, &d, c);
	if (r < 0)
		tg_policy_diags_print(&d, stderr);
	cr_assert_eq(r, 0, "the policy must load");
	tg_policy_diags_clear(&d);
	struct tg_policy_ctx ctx = { WS, HOME, STATE, NULL };
	tg_policy_set_ctx(p, &ctx);
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);
	tg_policy_dump(p, true, f);
	fclose(f);
	tg_policy_free(p);
	return buf;
}

/* The tree layer alone (cache dir or NULL): the model would spare the
 * trees these tests are about. */
static char *load_dump(const char *path, const char *cache, struct tg_policy_cache *stats)
{
	struct tg_policy_cache c = { .dir = cache, .no_model = true };
	char *buf = load_dump_with(path, cache ? &c : NULL);
	if (stats)
		*stats = c;
	return buf;
}

static unsigned count_yaml(const char *dir)
{
	unsigned n = 0;
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	for (struct dirent *de; (de = readdir(d));) {
		size_t l = strlen(de->d_name);
		n += de->d_name[0] != '.' && l > 5 && !strcmp(de->d_name + l - 5, ".yaml");
	}
	closedir(d);
	return n;
}

/* The entries in dir, NULL-terminated, sorted. */
static char **entries(const char *dir)
{
	struct dirent **list = NULL;
	int n = scandir(dir, &list, NULL, alphasort);
	cr_assert_geq(n, 0);
	char **v = calloc((size_t)n + 1, sizeof(*v));
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		if (list[i]->d_name[0] != '.')
			v[k++] = tg_asprintf("%s/%s", dir, list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return v;
}

Test(cache, shipped_policy_loads_the_same_from_the_cache)
{
	char *cache = tmpdir();
	unsigned nfiles = count_yaml(TG_TEST_POLICYDIR);
	cr_assert_gt(nfiles, 5);
	char *parsed = load_dump(TG_TEST_POLICYDIR, NULL, NULL);

	struct tg_policy_cache st;
	char *first = load_dump(TG_TEST_POLICYDIR, cache, &st);
	cr_expect_eq(st.hits, 0);
	cr_expect_eq(st.misses, nfiles);
	cr_expect_eq(st.stored, nfiles);
	cr_expect_str_eq(first, parsed);

	char *second = load_dump(TG_TEST_POLICYDIR, cache, &st);
	cr_expect_eq(st.hits, nfiles, "every file from the cache (%u of %u)", st.hits, nfiles);
	cr_expect_eq(st.misses, 0);
	cr_expect_eq(st.stored, 0);
	cr_expect_str_eq(second, parsed, "a cached tree must judge as the parsed one");
	free(parsed);
	free(first);
	free(second);
	rm_rf(cache);
	free(cache);
}

Test(cache, an_edited_file_is_parsed_again)
{
	char *cache = tmpdir(), *dir = tmpdir();
	char *file = tg_asprintf("%s/p.yaml", dir);
	write_text(file, "version: 1\nrules:\n  - id: one\n    reason: r\n    action: deny\n    exec: {program: [foo]}\n");
	struct tg_policy_cache st;
	free(load_dump(file, cache, &st));
	char *old = load_dump(file, cache, &st);
	cr_expect_eq(st.hits, 1);
	cr_expect(strstr(old, "\"one\"") != NULL);

	/* Same length, other text: the key is the text, not the file. */
	write_text(file, "version: 1\nrules:\n  - id: two\n    reason: r\n    action: deny\n    exec: {program: [foo]}\n");
	char *now = load_dump(file, cache, &st);
	cr_expect_eq(st.hits, 0, "an edited file must not come from the cache");
	cr_expect_eq(st.misses, 1);
	cr_expect(strstr(now, "\"two\"") != NULL && strstr(now, "\"one\"") == NULL, "%s", now);
	free(old);
	free(now);
	free(file);
	rm_rf(cache);
	rm_rf(dir);
	free(cache);
	free(dir);
}

Test(cache, a_file_with_errors_is_not_stored)
{
	char *cache = tmpdir(), *dir = tmpdir();
	char *file = tg_asprintf("%s/p.yaml", dir);
	write_text(file, "version: 1\nbogus: 1\n");
	const char *paths[] = { file };
	struct tg_policy_cache c = { .dir = cache };
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	cr_expect_eq(tg_policy_load_cached(&p, paths, 1, &d, &c), -EINVAL);
	cr_expect_eq(c.stored, 0);
	cr_expect_gt(d.n, 0);
	tg_policy_diags_clear(&d);
	char **e = entries(cache);
	cr_expect_null(e[0], "nothing stored for a file with errors");
	tg_strv_free(e);
	free(file);
	rm_rf(cache);
	rm_rf(dir);
	free(cache);
	free(dir);
}

/* Damage one entry at random: flip bytes, cut it short, grow it, or write
 * noise; the load must give the parsed policy every time (and, under the
 * sanitizers, touch nothing out of bounds). */
static void damage(const char *path, unsigned seed)
{
	char *buf = NULL;
	size_t len = 0;
	cr_assert_eq(tg_read_file(path, &buf, &len, 1 << 24), 0);
	srand(seed);
	switch (rand() % 4) {
	case 0:
		for (int k = 1 + rand() % 4; k > 0 && len; k--)
			buf[(size_t)rand() % len] ^= (char)(1 + rand() % 255);
		break;
	case 1:
		len = len ? (size_t)rand() % len : 0;
		break;
	case 2:
		buf = realloc(buf, len + 64);
		for (int k = 0; k < 64; k++)
			buf[len + k] = (char)rand();
		len += 1 + (size_t)rand() % 63;
		break;
	default:
		for (size_t k = 0; k < len; k++)
			buf[k] = (char)rand();
		break;
	}
	int fd = open(path, O_WRONLY | O_TRUNC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(tg_write_all(fd, buf, len), 0);
	close(fd);
	free(buf);
}

Test(cache, damaged_entries_are_misses, .timeout = 300)
{
	char *cache = tmpdir();
	char *parsed = load_dump(TG_TEST_POLICYDIR, NULL, NULL);
	free(load_dump(TG_TEST_POLICYDIR, cache, NULL));
	unsigned nfiles = count_yaml(TG_TEST_POLICYDIR);
	for (unsigned seed = 1; seed <= 150; seed++) {
		char **e = entries(cache);
		size_t n = tg_strv_len(e);
		cr_assert_eq(n, nfiles);
		damage(e[seed % n], seed);
		struct tg_policy_cache st;
		char *got = load_dump(TG_TEST_POLICYDIR, cache, &st);
		cr_assert_str_eq(got, parsed, "seed %u: a damaged entry changed the policy", seed);
		/* A damaged entry is a miss and is stored again; flips that
		 * hit nothing checked are impossible: the checksum covers all. */
		cr_assert_eq(st.hits + st.misses, nfiles);
		cr_assert_eq(st.misses, st.stored, "seed %u", seed);
		cr_assert_leq(st.misses, 1, "seed %u", seed);
		free(got);
		tg_strv_free(e);
	}
	free(parsed);
	rm_rf(cache);
	free(cache);
}

/* The decoder alone, on every prefix and every single-byte change of a
 * small tree's encoding whose checksum is then made right again, so that
 * the structural checks are what is tested. */
Test(cache, decoder_checks_every_count_and_offset)
{
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	/* Build a tree through the cache: a load that stores it. */
	char *cache = tmpdir(), *dir = tmpdir();
	char *file = tg_asprintf("%s/t.yaml", dir);
	write_text(file, "version: 1\npaths: {writable: [/tmp/a, '/tmp/b']}\nlimits: {}\nrules: []\n");
	const char *paths[] = { file };
	struct tg_policy_cache c = { .dir = cache, .no_model = true };
	cr_assert_eq(tg_policy_load_cached(&p, paths, 1, &d, &c), 0);
	tg_policy_free(p);
	char **e = entries(cache);
	cr_assert_not_null(e[0]);
	char *enc = NULL;
	size_t len = 0;
	cr_assert_eq(tg_read_file(e[0], &enc, &len, 1 << 20), 0);
	char *src = NULL;
	size_t srclen = 0;
	cr_assert_eq(tg_read_file(file, &src, &srclen, 1 << 20), 0);
	uint64_t h = ytree_hash(src, srclen);
	struct ytree t;
	cr_assert_eq(ytree_decode(enc, len, h, srclen, &t), 1, "the stored entry decodes");
	cr_assert_eq(t.root->type, Y_MAP);
	cr_assert_eq(t.root->nkid, 8, "four pairs: %zu", t.root->nkid);
	ytree_clear(&t);
	const size_t hdr = 40; /* magic, hash, srclen, sum, nnodes, ntext */
	unsigned sound = 0;
	for (size_t cut = 0; cut < len; cut++)
		cr_assert_eq(ytree_decode(enc, cut, h, srclen, &t), 0, "a prefix of %zu bytes", cut);
	for (size_t i = 0; i < len; i++) {
		for (int delta = 1; delta < 256; delta += 37) {
			char *m = malloc(len);
			memcpy(m, enc, len);
			m[i] = (char)(m[i] + delta);
			if (i >= hdr) {
				uint64_t sum = ytree_hash(m + hdr, len - hdr);
				memcpy(m + 24, &sum, sizeof(sum));
			}
			int r = ytree_decode(m, len, h, srclen, &t);
			cr_assert_geq(r, 0);
			if (r == 1) {
				/* Only text or positions may differ: still a tree. */
				cr_assert_not_null(t.root);
				sound++;
			}
			ytree_clear(&t);
			free(m);
		}
	}
	cr_expect_gt(sound, 0, "changes of a scalar's text or a line number still decode");
	tg_strv_free(e);
	free(enc);
	free(src);
	free(file);
	rm_rf(cache);
	rm_rf(dir);
	free(cache);
	free(dir);
}

Test(cache, a_cache_that_cannot_be_written_costs_only_the_parse)
{
	struct tg_policy_cache st;
	char *parsed = load_dump(TG_TEST_POLICYDIR, NULL, NULL);
	char *got = load_dump(TG_TEST_POLICYDIR, "/proc/self/no-such-dir/cache", &st);
	cr_expect_str_eq(got, parsed);
	cr_expect_eq(st.hits, 0);
	cr_expect_eq(st.stored, 0);
	free(got);
	free(parsed);
}

/* Past Y_MAX_ENTRIES a store clears the others. */
Test(cache, entries_stay_bounded)
{
	char *cache = tmpdir(), *dir = tmpdir();
	char *file = tg_asprintf("%s/p.yaml", dir);
	for (int i = 0; i < 140; i++) {
		char *text = tg_asprintf("version: 1\npaths: {writable: [/tmp/w%d]}\n", i);
		write_text(file, text);
		free(text);
		free(load_dump(file, cache, NULL));
	}
	char **e = entries(cache);
	size_t n = tg_strv_len(e);
	cr_expect_leq(n, 128, "%zu entries", n);
	cr_expect_geq(n, 1);
	tg_strv_free(e);
	free(file);
	rm_rf(cache);
	rm_rf(dir);
	free(cache);
	free(dir);
}

/* Below the trusted part no symlink is followed: a command that created
 * ~/.local/state/txguard as a link to a dir of its own must not get to
 * write the trees the next run trusts. */
Test(cache, no_symlink_below_the_trusted_part)
{
	char *top = tmpdir();
	char *real = tg_asprintf("%s/real", top), *link = tg_asprintf("%s/link", top);
	cr_assert_eq(mkdir(real, 0700), 0);
	cr_assert_eq(symlink("real", link), 0);
	char *cache = tg_asprintf("%s/link/txguard/policy-cache", top);
	const char *paths[] = { TG_TEST_POLICYDIR };
	struct tg_policy_cache c = { .dir = cache, .trusted = strlen(top) };
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	cr_assert_eq(tg_policy_load_cached(&p, paths, 1, &d, &c), 0);
	tg_policy_free(p);
	cr_expect_eq(c.stored, 0, "stored through a symlink below the trusted part");
	char *made = tg_asprintf("%s/txguard", real);
	struct stat st;
	cr_expect_neq(lstat(made, &st), 0, "a directory was made through the link");
	/* The link in the trusted part (a HOME reached through /home -> ...)
	 * is followed. */
	c = (struct tg_policy_cache){ .dir = cache, .trusted = strlen(link) };
	cr_assert_eq(tg_policy_load_cached(&p, paths, 1, &d, &c), 0);
	tg_policy_free(p);
	cr_expect_gt(c.stored, 0);
	cr_expect_eq(lstat(made, &st), 0);
	cr_expect(S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700, "mode %o", st.st_mode & 07777);
	free(made);
	free(cache);
	free(real);
	free(link);
	rm_rf(top);
	free(top);
}

/* ---- the whole model (policy/model.c) ---- */

/* A file's stat stands for its text only once it has not changed for a
 * couple of seconds (load.c, M_SETTLED_SEC): the model tests wait that
 * long after writing. */
static void settle(void)
{
	sleep(3);
}

/* A copy of the shipped policy.d, settled. */
static char *shipped_copy(void)
{
	char *dir = tmpdir();
	char *cmd = tg_asprintf("cp '%s'/*.yaml '%s'/", TG_TEST_POLICYDIR, dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	settle();
	return dir;
}

/* The one .model entry in cache (NULL when none), malloc'ed. */
static char *model_entry(const char *cache)
{
	char **e = entries(cache), *found = NULL;
	for (size_t i = 0; e[i]; i++) {
		size_t l = strlen(e[i]);
		if (l > 6 && !strcmp(e[i] + l - 6, ".model")) {
			cr_assert_null(found, "one model per policy set");
			found = strdup(e[i]);
		}
	}
	tg_strv_free(e);
	return found;
}

Test(model, shipped_policy_loads_the_same_from_the_model, .timeout = 60)
{
	char *cache = tmpdir(), *dir = shipped_copy();
	char *parsed = load_dump_with(dir, NULL);

	struct tg_policy_cache c = { .dir = cache };
	char *first = load_dump_with(dir, &c);
	cr_expect(c.model_stored, "a settled policy set is stored whole");
	cr_expect_not(c.model_hit);
	cr_expect_str_eq(first, parsed);

	c = (struct tg_policy_cache){ .dir = cache };
	char *second = load_dump_with(dir, &c);
	cr_expect(c.model_hit, "the next load reads the model");
	cr_expect_eq(c.hits + c.misses + c.stored, 0, "and no tree at all");
	cr_expect_not(c.model_stored);
	cr_expect_str_eq(second, parsed, "a model read back must judge as the walked one");

	/* What the dump does not show: the rules' examples, checked against
	 * the rules they belong to. */
	const char *paths[] = { dir };
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	c = (struct tg_policy_cache){ .dir = cache };
	cr_assert_eq(tg_policy_load_cached(&p, paths, 1, &d, &c), 0);
	cr_assert(c.model_hit);
	cr_expect_eq(tg_policy_check_examples(p, stderr), 0, "the model's examples all hold");
	tg_policy_free(p);
	free(parsed);
	free(first);
	free(second);
	rm_rf(cache);
	rm_rf(dir);
	free(cache);
	free(dir);
}

static const char *const ONE =
	"version: 1\nrules:\n  - id: one\n    reason: r\n    action: deny\n    exec: {program: [foo]}\n";
static const char *const TWO =
	"version: 1\nrules:\n  - id: two\n    reason: r\n    action: deny\n    exec: {program: [foo]}\n";

static bool names(const char *dump, const char *id)
{
	char *q = tg_asprintf("\"%s\"", id);
	bool r = strstr(dump, q) != NULL;
	free(q);
	return r;
}

Test(model, an_edited_file_is_walked_again_and_its_model_replaced, .timeout = 60)
{
	char *cache = tmpdir(), *dir = tmpdir();
	char *file = tg_asprintf("%s/p.yaml", dir);
	write_text(file, ONE);
	settle();
	struct tg_policy_cache c = { .dir = cache };
	free(load_dump_with(dir, &c));
	cr_assert(c.model_stored);

	/* Same length, other text, just now: its stat may not have moved
	 * within the clock's tick, so it is not trusted yet. */
	write_text(file, TWO);
	c = (struct tg_policy_cache){ .dir = cache };
	char *now = load_dump_with(dir, &c);
	cr_expect_not(c.model_hit, "a file changed just now must not come from a model");
	cr_expect_not(c.model_stored);
	cr_expect(names(now, "two") && !names(now, "one"), "%s", now);

	/* Settled: a new key (ctime moved), walked, stored, then read. */
	settle();
	c = (struct tg_policy_cache){ .dir = cache };
	char *walked = load_dump_with(dir, &c);
	cr_expect_not(c.model_hit);
	cr_expect(c.model_stored);
	c = (struct tg_policy_cache){ .dir = cache };
	char *read = load_dump_with(dir, &c);
	cr_expect(c.model_hit);
	cr_expect_str_eq(read, walked);
	cr_expect(names(read, "two") && !names(read, "one"), "%s", read);
	free(now);
	free(walked);
	free(read);
	free(file);
	rm_rf(cache);
	rm_rf(dir);
	free(cache);
	free(dir);
}

/* The key has the directory's listing: a file added is in the policy, a
 * file removed is out of it. */
Test(model, the_files_of_a_directory_are_in_the_key, .timeout = 60)
{
	char *cache = tmpdir(), *dir = tmpdir();
	char *a = tg_asprintf("%s/a.yaml", dir), *b = tg_asprintf("%s/b.yaml", dir);
	write_text(a, ONE);
	write_text(b, TWO);
	settle();
	struct tg_policy_cache c = { .dir = cache };
	char *both = load_dump_with(dir, &c);
	cr_assert(c.model_stored);
	cr_expect(names(both, "one") && names(both, "two"));

	cr_assert_eq(unlink(b), 0);
	c = (struct tg_policy_cache){ .dir = cache };
	char *only = load_dump_with(dir, &c);
	cr_expect_not(c.model_hit, "the model of two files is not the model of one");
	cr_expect(names(only, "one") && !names(only, "two"), "%s", only);

	/* Back as it was (same inode gone, so a new file): a new key again. */
	write_text(b, TWO);
	settle();
	c = (struct tg_policy_cache){ .dir = cache };
	char *again = load_dump_with(dir, &c);
	cr_expect(names(again, "one") && names(again, "two"));
	cr_expect_str_eq(again, both);
	free(both);
	free(only);
	free(again);
	free(a);
	free(b);
	rm_rf(cache);
	rm_rf(dir);
	free(cache);
	free(dir);
}

Test(model, damaged_models_are_misses, .timeout = 300)
{
	char *cache = tmpdir(), *dir = shipped_copy();
	char *parsed = load_dump_with(dir, NULL);
	struct tg_policy_cache c = { .dir = cache };
	free(load_dump_with(dir, &c));
	cr_assert(c.model_stored);
	for (unsigned seed = 1; seed <= 100; seed++) {
		char *m = model_entry(cache);
		cr_assert_not_null(m);
		damage(m, seed);
		free(m);
		c = (struct tg_policy_cache){ .dir = cache };
		char *got = load_dump_with(dir, &c);
		cr_assert_str_eq(got, parsed, "seed %u: a damaged model changed the policy", seed);
		cr_assert_not(c.model_hit, "seed %u: a damaged model was read", seed);
		cr_assert(c.model_stored, "seed %u: and stored again", seed);
		free(got);
	}
	free(parsed);
	rm_rf(cache);
	rm_rf(dir);
	free(cache);
	free(dir);
}

/* Every kind of rule and every field the model has, for the decoder. */
static const char *const ALL_KINDS =
	"version: 1\n"
	"paths: {writable: [/tmp/w], deny_read: [/tmp/secret], create: [/tmp/w/new/]}\n"
	"limits: {max_procs: 64}\n"
	"network:\n"
	"  default: deny\n"
	"  hosts:\n"
	"    allow: [pypi.org, \"ci.example:8000-8999\"]\n"
	"    deny: [evil.example]\n"
	"    examples: {match: [pypi.org], not_match: [evil.example]}\n"
	"rules:\n"
	"  - id: e\n    reason: r\n    action: deny\n    errno: EROFS\n"
	"    exec: {program: [rm], flags: ['-r|-R', '-f'], args: [/], not_flags: [-i]}\n"
	"    examples: {match: ['rm -rf /'], not_match: ['rm -ri /']}\n"
	"  - id: p\n    reason: r\n    action: audit\n    path: {match: ['/tmp/w/**'], ops: write}\n"
	"  - id: s\n    reason: r\n    action: deny\n    syscall: [keyctl]\n"
	"  - id: c\n    reason: r\n    action: deny\n"
	"    connect: {unix: [/run/x.sock, '@abstract'], cidr: ['::1/128', 10.0.0.0/8], ports: ['1-2', 3]}\n"
	"  - id: k\n    reason: r\n    action: allow\n"
	"    process: {program: [vite], uid: [1000], cgroup: [/user.slice/**]}\n";

Test(model, decoder_checks_every_count_and_offset, .timeout = 300)
{
	struct tg_policy *p = NULL;
	struct tg_policy_diags d = { 0 };
	int rc = tg_policy_load_string(&p, "t.yaml", ALL_KINDS, strlen(ALL_KINDS), &d);
	if (rc < 0)
		tg_policy_diags_print(&d, stderr);
	cr_assert_eq(rc, 0);
	char *enc = NULL;
	size_t len = 0;
	cr_assert_eq(tg_policy_model_encode(p, 42, &enc, &len), 0);
	tg_policy_free(p);

	/* Sound: it decodes, and encodes again to the very same bytes. */
	char *copy = malloc(len);
	memcpy(copy, enc, len);
	cr_assert_eq(tg_policy_model_decode(copy, len, 42, &p), 1);
	char *again = NULL;
	size_t alen = 0;
	cr_assert_eq(tg_policy_model_encode(p, 42, &again, &alen), 0);
	cr_assert_eq(alen, len);
	cr_assert_eq(memcmp(again, enc, len), 0, "decode then encode is the identity");
	cr_expect_eq(p->nrules, 5);
	cr_expect_eq(p->nhosts, 3);
	tg_policy_free(p); /* frees copy: the model's arena */
	free(again);
	cr_expect_eq(tg_policy_model_decode(enc, len, 43, &p), 0, "another key is a miss");

	const size_t hdr = 32; /* magic, key, payload length, checksum */
	unsigned sound = 0;
	for (size_t cut = 0; cut < len; cut++) {
		char *m = malloc(len);
		memcpy(m, enc, len);
		cr_assert_eq(tg_policy_model_decode(m, cut, 42, &p), 0, "a prefix of %zu bytes", cut);
		free(m);
	}
	for (size_t i = hdr; i < len; i++) {
		for (int delta = 1; delta < 256; delta += 51) {
			char *m = malloc(len);
			memcpy(m, enc, len);
			m[i] = (char)(m[i] + delta);
			uint64_t sum = ytree_hash(m + hdr, len - hdr);
			memcpy(m + 24, &sum, sizeof(sum));
			int r = tg_policy_model_decode(m, len, 42, &p);
			cr_assert_geq(r, 0);
			if (r == 1) {
				sound++;
				tg_policy_free(p);
			} else {
				free(m);
			}
		}
	}
	cr_expect_gt(sound, 0, "a change of a string's byte or a line number still decodes");
	free(enc);
}
