/* run.c — placeholder until the CLI lands. */
