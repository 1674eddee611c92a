/*
 * utf8.c - UTF-8 sequence validation.
 */
#include <stdint.h>
#include "utf8.h"

int utf8_seq_len(const unsigned char *p)
{
	int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
	if (n == 0)
		return 0;
	for (int i = 1; i < n; i++)  /* a NUL is no continuation byte: stops here */
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	uint32_t cp = n == 2 ? (p[0] & 0x1fu) : n == 3 ? (p[0] & 0x0fu) : (p[0] & 0x07u);
	for (int i = 1; i < n; i++)
		cp = cp << 6 | (p[i] & 0x3fu);
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;               /* overlong, surrogate or out of range */
	return n;
}
