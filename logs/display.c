/* Text from elsewhere escaped for a terminal: see display.h. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logs/display.h"
#include "logs/xmalloc.h"

/* The most one input byte becomes: \xHH. */
#define DISPLAY_GROWTH	4

/*
 * The UTF-8 character at s (n > 0 bytes left): its length, with its code
 * point in *cp; 0 if s does not start a valid one (a NUL counts as
 * valid: the caller saw every byte below 0x80 already); -1 if it is
 * valid as far as it goes but cut short by the end of s.
 */
static int
display_utf8(const unsigned char *s, size_t n, unsigned long *cp)
{
	unsigned char	lo = 0x80, hi = 0xbf;
	int		need, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 4;
	else
		return (0);		/* 80..C1, F5..FF */
	if (s[0] == 0xe0)
		lo = 0xa0;		/* overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;		/* surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;		/* overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;		/* > U+10FFFF */
	*cp = s[0] & (0x7f >> need);
	for (i = 1; i < need; i++) {
		if ((size_t)i >= n)
			return (-1);
		if (s[i] < lo || s[i] > hi)
			return (0);
		*cp = *cp << 6 | (s[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	return (need);
}

/* 1 if code point cp is a C1 control, a bidi control or invisible. */
static int
display_hidden(unsigned long cp)
{
	return ((cp >= 0x80 && cp <= 0x9f) ||		/* C1 controls */
	    cp == 0x61c ||				/* ALM */
	    (cp >= 0x200b && cp <= 0x200f) ||		/* ZWSP..RLM */
	    (cp >= 0x2028 && cp <= 0x202e) ||		/* LS, PS, LRE..RLO */
	    (cp >= 0x2060 && cp <= 0x2069) ||		/* WJ..PDI */
	    cp == 0xfeff ||				/* ZWNBSP, BOM */
	    (cp >= 0xe0000 && cp <= 0xe007f));		/* tags */
}

/*
 * Writes the escape of ASCII control or backslash c at o; returns the
 * end of what it wrote.
 */
static char *
display_ascii(char *o, unsigned char c)
{
	switch (c) {
	case '\\':
		return (stpcpy(o, "\\\\"));
	case '\n':
		return (stpcpy(o, "\\n"));
	case '\r':
		return (stpcpy(o, "\\r"));
	case '\t':
		return (stpcpy(o, "\\t"));
	case '\033':
		return (stpcpy(o, "\\e"));
	}
	return (o + sprintf(o, "\\x%02x", c));
}

/*
 * How many bytes at s[i] (a byte below 0x80) go out, at *o, as they are
 * or escaped; 0 for a \r left for the next piece (DISPLAY_MORE).
 */
static size_t
display_control(const unsigned char *s, size_t len, size_t i, int flags,
    char **o)
{
	unsigned char	c = s[i];
	int		lines = (flags & DISPLAY_LINES) != 0;

	if ((c >= 0x20 && c < 0x7f && c != '\\') ||
	    (lines && (c == '\n' || c == '\t')) ||
	    (lines && c == '\r' && i + 1 < len && s[i + 1] == '\n')) {
		*(*o)++ = c;
		return (1);
	}
	if (lines && c == '\r' && i + 1 == len && (flags & DISPLAY_MORE))
		return (0);	/* a \n may follow */
	*o = display_ascii(*o, c);
	return (1);
}

char *
display_escape(const char *s, size_t len, int flags, size_t *used)
{
	const unsigned char	*u = (const unsigned char *)s;
	unsigned long		 cp = 0;
	char			*out, *o;
	size_t			 i = 0, n;
	int			 r;

	o = out = xreallocarray(NULL, len + 1, DISPLAY_GROWTH);
	while (i < len) {
		if (u[i] < 0x80) {
			if ((n = display_control(u, len, i, flags, &o)) == 0)
				break;
			i += n;
			continue;
		}
		r = display_utf8(u + i, len - i, &cp);
		if (r == -1 && (flags & DISPLAY_MORE))
			break;		/* the rest comes with the next piece */
		if (r <= 0)
			o += sprintf(o, "\\x%02x", u[i++]);
		else if (!display_hidden(cp)) {
			memcpy(o, s + i, r);
			o += r;
			i += r;
		} else {
			o += sprintf(o, cp > 0xffff ? "\\U%08lx" : "\\u%04lx",
			    cp);
			i += r;
		}
	}
	*o = '\0';
	if (used != NULL)
		*used = i;
	return (out);
}

char *
display_str(const char *s)
{
	if (s == NULL)
		return (xstrdup(""));
	return (display_escape(s, strlen(s), 0, NULL));
}
