#ifndef EXECQ_DISPLAY_H
#define EXECQ_DISPLAY_H

/*
 * Text from elsewhere (a command, a reason, a worker's name, a log) made
 * safe to show a person on a terminal: nothing in it can move the
 * cursor, erase, recolour, reorder or hide what is shown. What would is
 * written as a visible escape instead:
 *
 *   \\            a backslash, so that every escape below is unambiguous
 *   \n \r \t \e   newline, carriage return, tab, ESC
 *   \xHH          any other C0 control, DEL, and each byte that is not
 *                 part of valid UTF-8 (a cut-short sequence, an overlong
 *                 form, a surrogate, past U+10FFFF)
 *   \uHHHH        C1 controls (U+0080-U+009F), the bidirectional controls
 *                 (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)
 *                 and the invisible ones that can hide text (U+200B-U+200D,
 *                 U+2028, U+2029, U+2060-U+2064, U+FEFF)
 *   \UHHHHHHHH    the tag characters U+E0000-U+E007F (invisible letters)
 *
 * All other valid UTF-8 (accents, CJK, emoji) is kept as it is. Pure.
 */

#include <stddef.h>

/* Lines stay lines: \n, \t, and a \r right before a \n, kept as they are. */
#define DISPLAY_LINES	0x1
/*
 * More text follows this piece: a UTF-8 character, or with DISPLAY_LINES
 * a \r, cut short at its end is not escaped but left unused (*used).
 */
#define DISPLAY_MORE	0x2

/*
 * len bytes of s escaped, as an allocated NUL-terminated string (it holds
 * no NUL of its own: a NUL is \x00). used (NULL ok without DISPLAY_MORE)
 * is set to how many bytes of s it shows: len, or with DISPLAY_MORE, less
 * by the cut-short tail, which the caller gives again with what follows.
 */
char	*display_escape(const char *s, size_t len, int flags, size_t *used);
/* A whole C string escaped, no flags; allocated; NULL gives "". */
char	*display_str(const char *s);

#endif
