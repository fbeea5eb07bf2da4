/*
 * The classifier's word lists and options: raising a result, matching
 * options as GNU getopt reads them, skipping options to the operand.
 */

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/classify.h"
#include "policy/cls.h"
#include "policy/shparse.h"
#include "logs/xmalloc.h"

/* Raises r to risk (the first reason at the highest risk stays). */
void __attribute__((format(printf, 4, 5)))
cls_raise(struct cls_res *r, enum cls_risk risk, const char *rule,
    const char *fmt, ...)
{
	va_list	ap;

	if (risk == CLS_NETWORK)
		r->network = 1;
	if (r->set && risk <= r->risk)
		return;
	r->risk = risk;
	r->set = 1;
	snprintf(r->rule, sizeof r->rule, "%s", rule);
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof r->reason, fmt, ap);
	va_end(ap);
}

/* Sets r outright (configured rules may lower). */
void
cls_set(struct cls_res *r, enum cls_risk risk, const char *rule,
    const char *reason)
{
	r->risk = risk;
	r->set = 1;
	r->network = risk == CLS_NETWORK;
	snprintf(r->rule, sizeof r->rule, "%s", rule);
	snprintf(r->reason, sizeof r->reason, "%s", reason);
}

/* The last path component of a command name. */
const char *
cls_base(const char *s)
{
	const char	*slash = strrchr(s, '/');

	return (slash != NULL ? slash + 1 : s);
}

/* 1 if s is one of the NULL-terminated list. */
int
cls_in(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return (1);
	return (0);
}

/* 1 if word (n bytes) is one of the space-separated words of list. */
int
cls_listed(const char *list, const char *word, size_t n)
{
	const char	*p = list;
	size_t		 len;

	while (*p != '\0') {
		len = strcspn(p, " ");
		if (len == n && strncmp(p, word, n) == 0)
			return (1);
		p += len + (p[len] == ' ');
	}
	return (0);
}

/* Drops the first k words. */
void
cls_shift(struct cls_words *ws, size_t k)
{
	if (k > ws->n)
		k = ws->n;
	ws->w += k;
	ws->f += k;
	ws->n -= k;
}

/* Words joined by spaces (allocated). */
char *
cls_join(char *const *w, size_t n)
{
	char	*s;
	size_t	 i, len = 1, off = 0;

	for (i = 0; i < n; i++)
		len += strlen(w[i]) + 1;
	s = xmalloc(len);
	for (i = 0; i < n; i++) {
		if (i > 0)
			s[off++] = ' ';
		memcpy(s + off, w[i], strlen(w[i]));
		off += strlen(w[i]);
	}
	s[off] = '\0';
	return (s);
}

/* 1 if word w is an option "-x..." (not "-" alone, not a number). */
int
cls_is_opt(const char *w)
{
	return (w[0] == '-' && w[1] != '\0');
}

/*
 * 1 if word w is option opt: a long option also abbreviated as GNU
 * getopt allows ("--outp" is --output; at least two letters), with or
 * without "=value"; a short one also with its value attached ("-Ifoo").
 */
int
cls_opt_match(const char *w, const char *opt)
{
	size_t	len = strlen(opt), n;

	if (opt[0] == '-' && opt[1] == '-') {
		if (w[0] != '-' || w[1] != '-')
			return (0);
		n = strcspn(w, "=");
		return (n >= 4 && n <= len && strncmp(w, opt, n) == 0);
	}
	return (strncmp(w, opt, len) == 0);
}

/* 1 if some word (from 1 on, before "--") is the option opt. */
int
cls_has_opt(const struct cls_words *ws, const char *opt)
{
	size_t	i;

	for (i = 1; i < ws->n; i++) {
		if (strcmp(ws->w[i], "--") == 0)
			return (0);
		if (cls_opt_match(ws->w[i], opt))
			return (1);
	}
	return (0);
}

/* 1 if some word (before "--") starts with prefix. */
int
cls_has_prefix(const struct cls_words *ws, const char *prefix)
{
	size_t	i;

	for (i = 1; i < ws->n; i++) {
		if (strcmp(ws->w[i], "--") == 0)
			return (0);
		if (strncmp(ws->w[i], prefix, strlen(prefix)) == 0)
			return (1);
	}
	return (0);
}

/* 1 if a short-option cluster ("-rf", "-fR") holds c, before any "--". */
int
cls_has_flag(const struct cls_words *ws, char c, const char *lng)
{
	size_t	i;

	for (i = 1; i < ws->n; i++) {
		if (strcmp(ws->w[i], "--") == 0)
			return (0);
		if (ws->w[i][0] == '-' && ws->w[i][1] != '-' &&
		    strchr(ws->w[i] + 1, c) != NULL)
			return (1);
		if (lng != NULL && cls_opt_match(ws->w[i], lng))
			return (1);
	}
	return (0);
}


/* 1 if one of words [1, end) is short flag c (in a cluster) or lng. */
int
cls_flag_before(const struct cls_words *ws, size_t end, char c,
    const char *lng)
{
	size_t	i;

	for (i = 1; i < end && i < ws->n; i++) {
		if (ws->w[i][0] == '-' && ws->w[i][1] != '-' &&
		    strchr(ws->w[i] + 1, c) != NULL)
			return (1);
		if (lng != NULL && cls_opt_match(ws->w[i], lng))
			return (1);
	}
	return (0);
}

/* Index of the first word after options; with_arg options take a value. */
size_t
cls_skip_opts(const struct cls_words *ws, size_t i,
    const char *const *with_arg)
{
	while (i < ws->n) {
		if (strcmp(ws->w[i], "--") == 0)
			return (i + 1);
		if (!cls_is_opt(ws->w[i]))
			break;
		i += cls_in(ws->w[i], with_arg) ? 2 : 1;
	}
	return (i < ws->n ? i : ws->n);	/* "env -u" has no value */
}

/* How a shell program named name reads commands (sh: not known). */
enum cls_shell
cls_shell_named(const char *name)
{
	if (cls_in(name, (const char *const[]){ "bash", "zsh", "ksh", "mksh",
	    NULL }))
		return (CLS_SHELL_BASH);
	if (cls_in(name, (const char *const[]){ "dash", "ash", "posh", NULL }))
		return (CLS_SHELL_POSIX);
	return (CLS_SHELL_ANY);		/* sh, su, ssh, watch: not known */
}
