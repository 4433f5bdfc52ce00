/* journal_tar.c — placeholder until its module lands. */
