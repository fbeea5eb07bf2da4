#ifndef EXECQ_XMALLOC_H
#define EXECQ_XMALLOC_H

#include <stddef.h>

/* Allocation that cannot fail: out of memory is fatal(). NULL in, NULL out
 * for xstrdup only where stated. */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
/* A copy of a NULL-terminated list of strings (NULL: NULL). */
char	**xstrvdup(const char *const *);
/* Frees such a list and its strings. NULL ok. */
void	 xstrvfree(char **);
/* Returns the length written; the string is the caller's to free. */
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
