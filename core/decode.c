/* decode.c — placeholder until its module lands. */
