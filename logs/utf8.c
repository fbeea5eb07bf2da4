/* Reading UTF-8 one character at a time, strictly: see utf8.h. */

#include "logs/utf8.h"

int
utf8_char(const unsigned char *s, size_t n, unsigned long *cp, int *cut)
{
	unsigned char	lo = 0x80, hi = 0xbf;
	unsigned long	c;
	int		need, i;

	if (cut != NULL)
		*cut = 0;
	if (s[0] < 0x80) {
		if (cp != NULL)
			*cp = s[0];
		return (1);
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 4;
	else
		return (-1);		/* 80..C1, F5..FF */
	if (s[0] == 0xe0)
		lo = 0xa0;		/* overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;		/* surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;		/* overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;		/* > U+10FFFF */
	c = s[0] & (0x7f >> need);
	for (i = 1; i < need; i++) {
		if ((size_t)i >= n) {
			if (cut != NULL)
				*cut = 1;
			return (-i);
		}
		if (s[i] < lo || s[i] > hi)
			return (-i);
		c = c << 6 | (s[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	if (cp != NULL)
		*cp = c;
	return (need);
}
