/* subcmds.c — placeholder until the CLI lands. */
