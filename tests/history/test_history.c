/* test_history.c — unit tests of the history module's own logic: the
 * multi-command transaction records (no run needed) and id resolution. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "history/history.h"

static char tmpl[] = "/tmp/tg-history-unit.XXXXXX";
static const char *sd;

static void setup(void)
{
	strcpy(tmpl, "/tmp/tg-history-unit.XXXXXX");
	sd = mkdtemp(tmpl);
	cr_assert_not_null(sd);
}

static void teardown(void)
{
	char *cmd = tg_asprintf("rm -rf '%s'", sd);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

TestSuite(history_tx, .init = setup, .fini = teardown);

Test(history_tx, begin_fresh_and_named)
{
	char *id = NULL;
	cr_assert_eq(tg_history_tx_begin("/ws", sd, NULL, &id), 0);
	cr_assert_eq(strlen(id), 11);
	cr_assert_eq(strncmp(id, "tx-", 3), 0);
	cr_assert_eq(tg_history_tx_check("/ws", sd, id), 0);
	free(id);
	cr_assert_eq(tg_history_tx_begin("/ws", sd, "task.1_a-b", &id), 0);
	cr_assert_str_eq(id, "task.1_a-b");
	free(id);
	id = NULL;
	cr_assert_eq(tg_history_tx_begin("/ws", sd, "task.1_a-b", &id), -EEXIST);
	cr_assert_eq(tg_history_tx_begin("/ws", sd, "../x", &id), -EINVAL);
	cr_assert_eq(tg_history_tx_begin("/ws", sd, ".hidden", &id), -EINVAL);
	cr_assert_eq(tg_history_tx_begin("/ws", sd, "", &id), -EINVAL);
	cr_assert_null(id);
}

Test(history_tx, lifecycle_commit)
{
	char *id = NULL;
	cr_assert_eq(tg_history_tx_begin("/ws", sd, "t", &id), 0);
	cr_assert_eq(tg_history_tx_record("/ws", sd, "t", "run-1", false, false), 0);
	cr_assert_eq(tg_history_tx_record("/ws", sd, "t", "run-2", true, false), 0);
	cr_assert_eq(tg_history_tx_record("/ws", sd, "t", NULL, true, false), 0);
	struct tg_tx_info t = { 0 };
	cr_assert_eq(tg_history_tx_load("/ws", sd, "t", &t), 0);
	cr_assert_eq(t.state, TG_TX_OPEN);
	cr_assert_eq(t.nmembers, 2);
	cr_assert_str_eq(t.members[0].txn_id, "run-1");
	cr_assert(!t.members[0].rolled_back);
	cr_assert(t.members[1].rolled_back);
	tg_tx_info_clear(&t);
	cr_assert_eq(tg_history_tx_commit("/ws", sd, "t"), 0);
	cr_assert_eq(tg_history_tx_check("/ws", sd, "t"), -ESTALE);
	cr_assert_eq(tg_history_tx_commit("/ws", sd, "t"), -ESTALE);
	cr_assert_eq(tg_history_tx_record("/ws", sd, "t", "run-3", false, false), -ESTALE);
	free(id);
}

Test(history_tx, unknown)
{
	cr_assert_eq(tg_history_tx_check("/ws", sd, "nope"), -ENOENT);
	cr_assert_eq(tg_history_tx_check("/ws", sd, "../../etc/passwd"), -ENOENT);
	cr_assert_eq(tg_history_tx_commit("/ws", sd, "nope"), -ENOENT);
	cr_assert_eq(tg_history_tx_record("/ws", sd, "nope", "r", false, false), -ENOENT);
}

/* Members that rolled themselves back need no undo: abandoning a
 * transaction made only of those touches no journal and aborts it. */
Test(history_tx, abandon_without_committed_members)
{
	char *id = NULL;
	cr_assert_eq(tg_history_tx_begin("/ws", sd, "t", &id), 0);
	cr_assert_eq(tg_history_tx_record("/ws", sd, "t", "run-1", true, true), 0);
	struct tg_tx_info t = { 0 };
	cr_assert_eq(tg_history_tx_load("/ws", sd, "t", &t), 0);
	cr_assert_eq(t.state, TG_TX_ABORTED);
	tg_tx_info_clear(&t);
	cr_assert_eq(tg_history_tx_check("/ws", sd, "t"), -ESTALE);
	free(id);
}

/* A committed member that left history (the bound) cannot be undone: the
 * rollback fails and the transaction stays open. */
Test(history_tx, rollback_of_a_member_gone_from_history)
{
	char *id = NULL;
	cr_assert_eq(tg_history_tx_begin("/ws", sd, "t", &id), 0);
	cr_assert_eq(tg_history_tx_record("/ws", sd, "t", "gone", false, false), 0);
	struct tg_undo_result r = { 0 };
	cr_assert_eq(tg_history_tx_rollback("/ws", sd, "t", false, &r), -ENOENT);
	tg_undo_result_clear(&r);
	cr_assert_eq(tg_history_tx_check("/ws", sd, "t"), 0);
	free(id);
}

Test(history_tx, corrupt_record)
{
	char *id = NULL;
	cr_assert_eq(tg_history_tx_begin("/ws", sd, "t", &id), 0);
	char *p = tg_asprintf("%s/tx/t", sd);
	FILE *f = fopen(p, "w");
	fputs("txguard-tx 1\nid t\nstate sideways\n", f);
	fclose(f);
	cr_assert_eq(tg_history_tx_check("/ws", sd, "t"), -EINVAL);
	f = fopen(p, "w");
	fputs("txguard-tx 2\nid t\nstate open\n", f);
	fclose(f);
	cr_assert_eq(tg_history_tx_check("/ws", sd, "t"), -EPROTO);
	free(p);
	free(id);
}

static struct tg_txinfo infos[3];

Test(history_find, ids_prefixes_last)
{
	char *names[] = { "20261130T170000.000-aaaaaa", "20261130T160000.000-bbbbbb",
	                  "20261130T160000.000-bbbbbc" };
	for (int i = 0; i < 3; i++)
		infos[i].id = names[i];
	struct tg_history h = { .v = infos, .n = 3 };
	size_t at = 99;
	cr_assert_eq(tg_history_find(&h, "last", &at), 0);
	cr_assert_eq(at, 0);
	cr_assert_eq(tg_history_find(&h, NULL, &at), 0);
	cr_assert_eq(at, 0);
	cr_assert_eq(tg_history_find(&h, names[2], &at), 0);
	cr_assert_eq(at, 2);
	cr_assert_eq(tg_history_find(&h, "20261130T17", &at), 0);
	cr_assert_eq(at, 0);
	cr_assert_eq(tg_history_find(&h, "20261130T16", &at), -EEXIST);
	cr_assert_eq(tg_history_find(&h, "202", &at), -EEXIST); /* any length: ambiguous here */
	cr_assert_eq(tg_history_find(&h, "nope", &at), -ENOENT);
	/* The random suffix, or a unique prefix of it. */
	cr_assert_eq(tg_history_find(&h, "aaaaaa", &at), 0);
	cr_assert_eq(at, 0);
	cr_assert_eq(tg_history_find(&h, "aa", &at), 0);
	cr_assert_eq(at, 0);
	cr_assert_eq(tg_history_find(&h, "bbbbbc", &at), 0);
	cr_assert_eq(at, 2);
	cr_assert_eq(tg_history_find(&h, "bbbbb", &at), -EEXIST);
	cr_assert_eq(tg_history_find(&h, "", &at), -ENOENT);
	struct tg_history empty = { 0 };
	cr_assert_eq(tg_history_find(&empty, "last", &at), -ENOENT);
}
