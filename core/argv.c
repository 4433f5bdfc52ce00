/* argv.c — placeholder until its module lands. */
