/* esc-denied: the program the battery policy denies. It does nothing but
 * say so and exit 42, the code the exec cases look for. */
#include <stdio.h>

int main(void)
{
	fputs("esc-denied: RAN (a denied program was executed)\n", stderr);
	return 42;
}
