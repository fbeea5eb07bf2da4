/* Text from elsewhere escaped for a terminal: see display.h. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logs/display.h"
#include "logs/utf8.h"
#include "logs/xmalloc.h"

/* The most one input byte becomes: \xHH. */
#define DISPLAY_GROWTH	4

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
	int			 r, cut;

	o = out = xreallocarray(NULL, len + 1, DISPLAY_GROWTH);
	while (i < len) {
		if (u[i] < 0x80) {
			if ((n = display_control(u, len, i, flags, &o)) == 0)
				break;
			i += n;
			continue;
		}
		r = utf8_char(u + i, len - i, &cp, &cut);
		if (r < 0 && cut && (flags & DISPLAY_MORE))
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
