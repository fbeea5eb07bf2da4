/* Allocation that cannot fail: out of memory is fatal. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logs/log.h"
#include "logs/xmalloc.h"

void *
xmalloc(size_t n)
{
	void	*p;

	if ((p = malloc(n == 0 ? 1 : n)) == NULL)
		fatal("out of memory (%zu bytes)", n);
	return (p);
}

void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if ((p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size)) == NULL)
		fatal("out of memory (%zu x %zu bytes)", n, size);
	return (p);
}

void *
xrealloc(void *old, size_t n)
{
	void	*p;

	if ((p = realloc(old, n == 0 ? 1 : n)) == NULL)
		fatal("out of memory (%zu bytes)", n);
	return (p);
}

void *
xreallocarray(void *old, size_t n, size_t size)
{
	void	*p;

	if ((p = reallocarray(old, n == 0 ? 1 : n, size == 0 ? 1 : size)) ==
	    NULL)
		fatal("out of memory (%zu x %zu bytes)", n, size);
	return (p);
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("out of memory");
	return (p);
}

char *
xstrndup(const char *s, size_t n)
{
	char	*p;

	if ((p = strndup(s, n)) == NULL)
		fatal("out of memory");
	return (p);
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n == -1)
		fatal("out of memory");
	return (n);
}

char **
xstrvdup(const char *const *v)
{
	char	**out;
	size_t	  i, n = 0;

	if (v == NULL)
		return (NULL);
	while (v[n] != NULL)
		n++;
	out = xcalloc(n + 1, sizeof *out);
	for (i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return (out);
}

void
xstrvfree(char **v)
{
	size_t	i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}
