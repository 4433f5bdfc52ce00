/* txn.c — placeholder until its module lands. */
