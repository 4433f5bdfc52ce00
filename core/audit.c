/* audit.c — placeholder until its module lands. */
