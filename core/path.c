/* path.c — placeholder until its module lands. */
