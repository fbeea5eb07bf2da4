/*
 * tmux key names to terminal bytes, for the send-keys action. The parse
 * follows tmux's key_string_lookup_string(): optional "^" or C-/M-/S-
 * modifiers (any case), then a key name (any case) or one character.
 * The bytes are what xterm sends in normal cursor mode. Whatever does not
 * parse as a key is literal text, as with tmux's send-keys; so is a bare
 * single character. Not supported (taken as text): keypad names, mouse
 * keys and tmux's "0x41" hexadecimal key codes.
 */

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "exec/keys.h"

#define KEYS_CTRL	0x1
#define KEYS_META	0x2
#define KEYS_SHIFT	0x4

/*
 * How a named key is sent. KEYS_PLAIN keys are their bytes whatever the
 * C- or S- modifiers; the others are CSI sequences that take xterm's
 * modifier parameter (1 + shift 1 + ctrl 4): "\033[1;5A" is C-Up.
 */
enum keys_kind {
	KEYS_PLAIN,	/* bytes as is */
	KEYS_CURSOR,	/* \033[<final>, modified \033[1;<m><final> */
	KEYS_SS3,	/* \033O<final>, modified \033[1;<m><final> */
	KEYS_TILDE,	/* \033[<n>~, modified \033[<n>;<m>~ (Home, End:
			   \033[1;<m>H and F, as xterm) */
};

struct keys_name {
	const char	*name;
	enum keys_kind	 kind;
	const char	*bytes;		/* KEYS_PLAIN */
	int		 code;		/* final byte, or the number before ~ */
};

static const struct keys_name keys_names[] = {
	{ "Enter", KEYS_PLAIN, "\r", 0 },
	{ "Tab", KEYS_PLAIN, "\t", 0 },
	{ "BTab", KEYS_PLAIN, "\033[Z", 0 },
	{ "Escape", KEYS_PLAIN, "\033", 0 },
	{ "Space", KEYS_PLAIN, " ", 0 },
	{ "BSpace", KEYS_PLAIN, "\177", 0 },
	{ "Up", KEYS_CURSOR, NULL, 'A' },
	{ "Down", KEYS_CURSOR, NULL, 'B' },
	{ "Right", KEYS_CURSOR, NULL, 'C' },
	{ "Left", KEYS_CURSOR, NULL, 'D' },
	{ "Home", KEYS_TILDE, NULL, 1 },
	{ "End", KEYS_TILDE, NULL, 4 },
	{ "IC", KEYS_TILDE, NULL, 2 },
	{ "Insert", KEYS_TILDE, NULL, 2 },
	{ "DC", KEYS_TILDE, NULL, 3 },
	{ "Delete", KEYS_TILDE, NULL, 3 },
	{ "PageUp", KEYS_TILDE, NULL, 5 },
	{ "PgUp", KEYS_TILDE, NULL, 5 },
	{ "PPage", KEYS_TILDE, NULL, 5 },
	{ "PageDown", KEYS_TILDE, NULL, 6 },
	{ "PgDn", KEYS_TILDE, NULL, 6 },
	{ "NPage", KEYS_TILDE, NULL, 6 },
	{ "F1", KEYS_SS3, NULL, 'P' },
	{ "F2", KEYS_SS3, NULL, 'Q' },
	{ "F3", KEYS_SS3, NULL, 'R' },
	{ "F4", KEYS_SS3, NULL, 'S' },
	{ "F5", KEYS_TILDE, NULL, 15 },
	{ "F6", KEYS_TILDE, NULL, 17 },
	{ "F7", KEYS_TILDE, NULL, 18 },
	{ "F8", KEYS_TILDE, NULL, 19 },
	{ "F9", KEYS_TILDE, NULL, 20 },
	{ "F10", KEYS_TILDE, NULL, 21 },
	{ "F11", KEYS_TILDE, NULL, 23 },
	{ "F12", KEYS_TILDE, NULL, 24 },
};

/* Appends n bytes; -1 (and nothing appended) if they do not fit. */
static int
keys_append(char *buf, size_t cap, size_t *len, const char *p, size_t n)
{
	if (*len > cap || n > cap - *len)
		return (-1);
	memcpy(buf + *len, p, n);
	*len += n;
	return (0);
}

/*
 * Strips leading modifiers from *s, as tmux does: "^x" is C-x, and each
 * "C-", "M-" or "S-" (any case) adds one. Returns the KEYS_* flags.
 */
static int
keys_modifiers(const char **s)
{
	const char	*p = *s;
	int		 mods = 0;

	if (p[0] == '^' && p[1] != '\0') {
		mods |= KEYS_CTRL;
		p++;
	}
	for (; p[0] != '\0' && p[1] == '-'; p += 2) {
		switch (toupper((unsigned char)p[0])) {
		case 'C':
			mods |= KEYS_CTRL;
			break;
		case 'M':
			mods |= KEYS_META;
			break;
		case 'S':
			mods |= KEYS_SHIFT;
			break;
		default:
			goto out;
		}
	}
out:
	*s = p;
	return (mods);
}

/* Length of s if it is exactly one UTF-8 character (or one byte), else 0. */
static size_t
keys_one_char(const char *s)
{
	const unsigned char	*u = (const unsigned char *)s;
	size_t			 n, i;

	if (u[0] == '\0')
		return (0);
	if (u[0] < 0xc0 || u[0] > 0xf4)
		n = 1;
	else if (u[0] < 0xe0)
		n = 2;
	else if (u[0] < 0xf0)
		n = 3;
	else
		n = 4;
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return (u[1] == '\0' ? 1 : 0);
	}
	return (u[n] == '\0' ? n : 0);
}

/* The control code of c (C-a is 1, C-Space 0, C-? 127), or -1 if none. */
static int
keys_ctrl_char(int c)
{
	if (c >= 'a' && c <= 'z')
		return (c - 'a' + 1);
	if (c >= '@' && c <= '_')	/* @, A-Z, [, \, ], ^, _ */
		return (c - '@');
	if (c == ' ')
		return (0);
	if (c == '?')
		return (0x7f);
	return (-1);
}

/* Writes the bytes of a named key with C-/S- modifiers into out. */
static size_t
keys_named(const struct keys_name *k, int mods, char *out, size_t size)
{
	const char	*p;
	int		 m = 1, n;

	if (mods & KEYS_SHIFT)
		m += 1;
	if (mods & KEYS_CTRL)
		m += 4;
	if (k->kind == KEYS_PLAIN) {
		if (strcmp(k->bytes, "\t") == 0 && (mods & KEYS_SHIFT))
			p = "\033[Z";		/* S-Tab is BTab */
		else if (strcmp(k->bytes, " ") == 0 && (mods & KEYS_CTRL))
			return (1);		/* C-Space: out[0] is NUL */
		else
			p = k->bytes;
		n = snprintf(out, size, "%s", p);
	} else if (k->kind == KEYS_TILDE && m == 1)
		n = snprintf(out, size, "\033[%d~", k->code);
	else if (k->kind == KEYS_TILDE && (k->code == 1 || k->code == 4))
		n = snprintf(out, size, "\033[1;%d%c", m,
		    k->code == 1 ? 'H' : 'F');	/* xterm's C-Home, C-End */
	else if (k->kind == KEYS_TILDE)
		n = snprintf(out, size, "\033[%d;%d~", k->code, m);
	else if (m == 1)
		n = snprintf(out, size, "\033%c%c",
		    k->kind == KEYS_SS3 ? 'O' : '[', k->code);
	else
		n = snprintf(out, size, "\033[1;%d%c", m, k->code);
	return (n < 0 ? 0 : (size_t)n);
}

/*
 * Writes the bytes of key (modifiers already stripped) into out (size
 * bytes, enough for any key). Returns the length, or 0 if not a key.
 */
static size_t
keys_lookup(const char *key, int mods, char *out, size_t size)
{
	size_t	i, clen;
	int	c;

	memset(out, 0, size);
	for (i = 0; i < sizeof keys_names / sizeof keys_names[0]; i++) {
		if (strcasecmp(key, keys_names[i].name) == 0)
			return (keys_named(&keys_names[i], mods, out, size));
	}
	if ((clen = keys_one_char(key)) == 0)
		return (0);
	if (clen == 1 && (mods & KEYS_CTRL)) {
		if ((c = keys_ctrl_char((unsigned char)key[0])) == -1)
			return (0);
		out[0] = (char)c;
		return (1);
	}
	if (mods & KEYS_CTRL)
		return (0);	/* no control code for a non-ASCII char */
	memcpy(out, key, clen);
	if (clen == 1 && (mods & KEYS_SHIFT))
		out[0] = (char)toupper((unsigned char)out[0]);
	return (clen);
}

/* Modifiers, then a key name or one character; anything else is text. */
int
keys_encode(const char *key, char *buf, size_t cap, size_t *len)
{
	const char	*name = key;
	char		 out[32];
	size_t		 n;
	int		 mods;

	mods = keys_modifiers(&name);
	/* A bare character is text, like tmux's send-keys "a". */
	if ((n = keys_lookup(name, mods, out, sizeof out)) == 0 ||
	    (mods == 0 && keys_one_char(name) != 0)) {
		if (keys_append(buf, cap, len, key, strlen(key)) == -1)
			return (-1);
		return (0);
	}
	/* M- is ESC before the key, so M-Enter is "\033\r". */
	if (mods & KEYS_META) {
		if (*len > cap || n + 1 > cap - *len)
			return (-1);
		buf[(*len)++] = '\033';
	}
	if (keys_append(buf, cap, len, out, n) == -1)
		return (-1);
	return (1);
}
