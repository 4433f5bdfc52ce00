/* journal.c — placeholder until its module lands. */
