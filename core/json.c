/* json.c — placeholder until its module lands. */
