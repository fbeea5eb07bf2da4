#ifndef EXECQ_UTF8_H
#define EXECQ_UTF8_H

/* Reading UTF-8 one character at a time, strictly (RFC 3629). */

#include <stddef.h>

/*
 * The character at s (n > 0 bytes left): its length (1 to 4), with its
 * code point in *cp (NULL: not wanted); a NUL is a valid character.
 * Else minus the length of its maximal invalid subpart (at least 1: an
 * overlong form, a surrogate, past U+10FFFF, a stray continuation byte),
 * with *cut (NULL: not wanted) 1 when that subpart is a valid start cut
 * short by the end of s, else 0.
 */
int	utf8_char(const unsigned char *s, size_t n, unsigned long *cp,
	    int *cut);

#endif
