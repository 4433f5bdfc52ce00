/* esc-allowd: an allowed program whose path has the same length as
 * esc-denied's (exec-race swaps the two names in place). Exits 7. */
int main(void)
{
	return 7;
}
