/* The real test is that every hdrtest_*.c compiled with -Werror -pedantic. */
#include <criterion/criterion.h>

Test(headers, compile_alone)
{
	cr_assert(1);
}
