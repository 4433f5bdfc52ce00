/* args.c — placeholder until the CLI lands. */
