/* esc-tool: allowed, except with --destroy (the battery policy denies that
 * argv). Exits 42 when it sees --destroy, 7 otherwise. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--destroy") == 0) {
			fputs("esc-tool: RAN with --destroy\n", stderr);
			return 42;
		}
	return 7;
}
