/* glob.c — placeholder until its module lands. */
