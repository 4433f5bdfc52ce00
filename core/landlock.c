/* landlock.c — placeholder until its module lands. */
