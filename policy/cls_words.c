/*
 * The bottom of the classifier: results (raising one, the names of risks,
 * tiers, actions and sandbox modes), word lists and options as GNU getopt
 * reads them, and the way back to the driver for a command inside a
 * command. Everything else in policy/cls_*.c builds on this file.
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

/* ---- the way back to the driver ---------------------------------------- */

/*
 * A part that finds a command inside a command (sh -c's string, find
 * -exec's words) hands it to the driver through the context: the driver
 * calls the parts, the parts never link to the driver.
 */
void
cls_recurse_words(struct cls_ctx *ctx, struct cls_words *ws,
    struct cls_res *r, char **inner)
{
	ctx->drv->words(ctx, ws, r, inner);
}

void
cls_recurse_source(struct cls_ctx *ctx, const char *src, size_t len,
    enum cls_shell shell)
{
	ctx->drv->source(ctx, src, len, shell);
}

/* ---- names, as in the JSON ----------------------------------------------- */

/* Indexed by the enums: a reordering cannot mislabel (tests check each). */
static const char *const cls_risk_names[CLS_RISK_LAST + 1] = {
	[CLS_READ_ONLY] = "read_only",
	[CLS_WRITE] = "write",
	[CLS_NETWORK] = "network",
	[CLS_UNKNOWN] = "unknown",
	[CLS_DESTRUCTIVE] = "destructive",
	[CLS_BLOCKED] = "blocked",
};
static const char *const cls_tier_names[CLS_TIER_LAST + 1] = {
	[CLS_TIER_READ_ONLY] = "read_only",
	[CLS_TIER_READ_WRITE] = "read_write",
	[CLS_TIER_CONFINED] = "confined",
	[CLS_TIER_ADMIN] = "admin",
};
static const char *const cls_action_names[CLS_ACTION_LAST + 1] = {
	[CLS_RUN] = "run",
	[CLS_HOLD] = "hold",
	[CLS_REFUSE] = "refuse",
};
static const char *const cls_sandbox_names[CLS_SANDBOX_LAST + 1] = {
	[CLS_SANDBOX_HOLD] = "hold",
	[CLS_SANDBOX_REFUSE] = "refuse",
	[CLS_SANDBOX_OFF] = "off",
};

/* Index of s in names[0..n) (NULL entries skipped), or -1. */
static int
cls_lookup(const char *s, const char *const *names, int n)
{
	int	i;

	for (i = 0; i < n; i++)
		if (names[i] != NULL && strcmp(s, names[i]) == 0)
			return (i);
	return (-1);
}

const char *
cls_risk_name(enum cls_risk r)
{
	return ((unsigned)r <= CLS_RISK_LAST ? cls_risk_names[r] : "unknown");
}

int
cls_risk_parse(const char *s, enum cls_risk *r)
{
	int	i = cls_lookup(s, cls_risk_names, CLS_RISK_LAST + 1);

	if (i < 0)
		return (-1);
	*r = (enum cls_risk)i;
	return (0);
}

const char *
cls_tier_name(enum cls_tier t)
{
	return ((unsigned)t <= CLS_TIER_LAST ? cls_tier_names[t] :
	    "read_only");
}

int
cls_tier_parse(const char *s, enum cls_tier *t)
{
	int	i = cls_lookup(s, cls_tier_names, CLS_TIER_LAST + 1);

	if (i < 0)
		return (-1);
	*t = (enum cls_tier)i;
	return (0);
}

const char *
cls_action_name(enum cls_action a)
{
	return ((unsigned)a <= CLS_ACTION_LAST ? cls_action_names[a] :
	    "hold");
}

const char *
cls_sandbox_name(enum cls_sandbox sb)
{
	return ((unsigned)sb <= CLS_SANDBOX_LAST ? cls_sandbox_names[sb] :
	    "hold");
}

int
cls_sandbox_parse(const char *s, enum cls_sandbox *sb)
{
	int	i = cls_lookup(s, cls_sandbox_names, CLS_SANDBOX_LAST + 1);

	if (i < 0)
		return (-1);
	*sb = (enum cls_sandbox)i;
	return (0);
}
