#ifndef EXECQ_TAIL_H
#define EXECQ_TAIL_H

/*
 * The last lines of a log for a callback: read from the end of the file,
 * never the whole of it; ANSI escape sequences (CSI, OSC, two-byte ESC)
 * and carriage returns removed; each line capped; blank trailing lines
 * dropped. Pure apart from reading the file.
 */

#include <stddef.h>

/*
 * Up to n last lines of the file at path, each at most max_line bytes
 * (longer lines are cut and end in "..."). Returns a NULL-terminated array
 * of allocated strings (free with tail_free), empty when the file is empty
 * or missing; *count is set to the number of lines.
 */
char	**tail_lines(const char *path, unsigned n, size_t max_line,
	    unsigned *count);
/* The same, from a buffer in memory. */
char	**tail_lines_buf(const char *buf, size_t len, unsigned n,
	    size_t max_line, unsigned *count);
void	  tail_free(char **);		/* NULL ok */
/* Removes ANSI escapes and CRs from s in place; returns the new length. */
size_t	  tail_strip_ansi(char *s, size_t len);

#endif
