/*
 * The classifier's shell variables and constructs: the words of for,
 * case, [[ ]] and (( )), function definitions and calls, and which
 * variables hold values from outside (read from input, a file list, a
 * command's output). bash evaluates a variable's value as arithmetic in
 * (( )), $(( )), [[ -eq ]], let, array subscripts and a substring's
 * offset and length ("${v:x}"), and a value such as "a[$(cmd)]" runs cmd
 * there: arithmetic on such a variable is unknown, and so is every other
 * way bash evaluates one as code: ${x@P} (a prompt), ${!x} (the name it
 * holds, a subscript included), a name computed from one (declare "$x",
 * read "$x", test -v), and any integer (-i) or name reference (-n)
 * attribute. Arithmetic on loop counters and literals stays read-only.
 * dash reads such a value as an illegal number, so the rule is bash's
 * only.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/classify.h"
#include "policy/cls.h"
#include "policy/shparse.h"
#include "logs/xmalloc.h"

/* POSIX special builtins: in sh they win over a function's name. */
static const char *const cls_special[] = { "break", ":", ".", "continue",
    "eval", "exec", "exit", "export", "readonly", "return", "set", "shift",
    "times", "trap", "unset", NULL };

/* Adds name[0..len) to a bounded list; past the bound, *full is set. */
static void
cls_vars_add(char **list, size_t *n, int *full, const char *name, size_t len)
{
	size_t	i;

	for (i = 0; i < *n; i++)
		if (strlen(list[i]) == len && strncmp(list[i], name, len) == 0)
			return;
	if (*n == CLS_NAMES_MAX) {
		*full = 1;
		return;
	}
	list[(*n)++] = xstrndup(name, len);
}

/* Marks a variable as holding a value from outside. */
static void
cls_vars_taint(struct cls_ctx *ctx, const char *name, size_t len)
{
	if (len > 0)
		cls_vars_add(ctx->tainted, &ctx->ntainted, &ctx->taint_all,
		    name, len);
}

/* 1 if the variable name[0..len) may hold a value from outside. */
static int
cls_vars_tainted(const struct cls_ctx *ctx, const char *name, size_t len)
{
	size_t	i;

	if (ctx->taint_all)
		return (1);
	for (i = 0; i < ctx->ntainted; i++)
		if (strlen(ctx->tainted[i]) == len &&
		    strncmp(ctx->tainted[i], name, len) == 0)
			return (1);
	return (0);
}

/* 1 if e[0..len) as arithmetic names a variable from outside. */
static int
cls_vars_arith_n(const struct cls_ctx *ctx, const char *e, size_t len)
{
	const char	*p = e, *s, *end = e + len;

	while (p < end) {
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') ||
		    (*p >= 'A' && *p <= 'Z')) || (p > e && (p[-1] == '_' ||
		    (p[-1] >= '0' && p[-1] <= '9') || (p[-1] >= 'a' &&
		    p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z')))) {
			p++;
			continue;
		}
		for (s = p; p < end && (*p == '_' || (*p >= 'a' && *p <= 'z') ||
		    (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')); p++)
			;
		if (cls_vars_tainted(ctx, s, p - s))
			return (1);
	}
	return (0);
}

/* 1 if an arithmetic expression names a variable from outside. */
static int
cls_vars_arith(const struct cls_ctx *ctx, const char *e)
{
	return (cls_vars_arith_n(ctx, e, strlen(e)));
}

/*
 * 1 if a ${...} of w evaluates something from outside: the value of
 * ${!name} names the variable expanded (a subscript in it is
 * arithmetic), and a substring's offset and length are arithmetic
 * ("${v:x}", "${@:1:x}"; "${v:-x}" is a default).
 */
static int
cls_vars_params(const struct cls_ctx *ctx, const char *w)
{
	const char	*p, *s;
	size_t		 n;

	for (p = w; (p = strstr(p, "${")) != NULL; p += 2) {
		s = p + 2;
		if (*s == '!') {
			n = strspn(s + 1, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
			if (ctx->taint_all || (n > 0 &&
			    cls_vars_tainted(ctx, s + 1, n)))
				return (1);
		}
		s += strspn(s, "!#");
		s += strspn(s, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@*");
		if (*s == '[')
			s += strcspn(s, "]}");
		if (*s == ']')
			s++;
		if (*s == ':' && strchr("-=?+", s[1]) == NULL &&
		    cls_vars_arith(ctx, s + 1))
			return (1);
	}
	return (0);
}

/*
 * 1 if a word that names a variable (declare's, read's, unset's, test
 * -v's operand) may name one whose subscript runs something: a
 * subscript naming a variable from outside ("a[x]"), or a name computed
 * from one ("$x", which may hold "a[$(cmd)]").
 */
static int
cls_vars_name(const struct cls_ctx *ctx, const char *w, unsigned f)
{
	size_t		 n = strcspn(w, "+=");
	const char	*sub = memchr(w, '[', n);

	if (sub != NULL && cls_vars_arith_n(ctx, sub, n - (sub - w)))
		return (1);
	return ((f & SH_W_DYNAMIC) && memchr(w, '$', n) != NULL &&
	    (ctx->taint_all || cls_vars_arith_n(ctx, w, n)));
}

/* 1 if a word's $(( )) or ${a[...]} evaluates a variable from outside. */
static int
cls_vars_word(const struct cls_ctx *ctx, const char *w, unsigned f)
{
	const char	*p;

	if (!(f & SH_W_DYNAMIC))
		return (0);
	if (strstr(w, "@P}") != NULL)	/* ${x@P} expands a prompt */
		return (1);
	if (cls_vars_params(ctx, w))
		return (1);
	if ((p = strstr(w, "$((")) != NULL && cls_vars_arith(ctx, p + 3))
		return (1);
	if ((p = strstr(w, "${")) != NULL && (p = strchr(p, '[')) != NULL &&
	    cls_vars_arith(ctx, p))
		return (1);
	return (0);
}

/*
 * 1 if bash would evaluate something from outside as code: arithmetic
 * on such a variable, or a subscript with a substitution in a word that
 * names a variable ("test -v 'a[$(cmd)]'", "read 'a[$(cmd)]'").
 */
int
cls_vars_eval(const struct cls_ctx *ctx, const struct sh_cmd *c)
{
	static const char *const names[] = { "let", "test", "[", "read",
	    "printf", "declare", "typeset", "local", "readonly", "export",
	    "unset", "shift", "return", "exit", "wait", "mapfile",
	    "readarray", "getopts", "[[", NULL };
	static const char *const arith[] = { "-eq", "-ne", "-lt", "-le",
	    "-gt", "-ge", NULL };
	static const char *const decl[] = { "declare", "typeset", "local",
	    NULL };
	static const char *const namers[] = { "declare", "typeset", "local",
	    "readonly", "export", "unset", "read", "mapfile", "readarray",
	    "getopts", NULL };
	const char	*w, *cmd = c->argc > 0 ? c->argv[0] : "";
	size_t		 i;

	if (ctx->dialect == SH_POSIX)
		return (0);	/* dash: "Illegal number", never code */
	if (c->kind == SH_K_ARITH)
		return (c->argc > 0 && cls_vars_arith(ctx, c->argv[0]));
	if (c->kind == SH_K_COND)
		cmd = "[[";
	for (i = 0; i < c->nassigns; i++)
		if (cls_vars_word(ctx, c->assigns[i], c->assignflags[i]))
			return (1);
	for (i = 0; i < c->argc; i++) {
		w = c->argv[i];
		if (cls_vars_word(ctx, w, c->argflags[i]))
			return (1);
		/* Attributes: an integer's every value is arithmetic, a
		   name reference resolves its target on every use. */
		if (i > 0 && w[0] == '-' && strpbrk(w, "in") != NULL &&
		    cls_in(cmd, decl))
			return (1);
		if (i > 0 && cls_vars_name(ctx, w, c->argflags[i]) &&
		    ((w[0] != '-' && cls_in(cmd, namers)) ||
		    (cls_in(cmd, (const char *const[]){ "printf", "test", "[",
		    "[[", NULL }) && (strcmp(c->argv[i - 1], "-v") == 0 ||
		    strcmp(c->argv[i - 1], "-R") == 0))))
			return (1);
		if ((i > 0 || c->kind == SH_K_COND) && cls_in(cmd, names) &&
		    strchr(w, '[') && (strstr(w, "$(") != NULL ||
		    strchr(w, '`') != NULL))
			return (1);
		if (c->kind == SH_K_COND && cls_in(w, arith) && ((i > 0 &&
		    cls_vars_arith(ctx, c->argv[i - 1])) || (i + 1 < c->argc &&
		    cls_vars_arith(ctx, c->argv[i + 1]))))
			return (1);
		if (i > 0 && strcmp(cmd, "let") == 0 && cls_vars_arith(ctx, w))
			return (1);
	}
	return (0);
}

/*
 * 1 if an assignment's value comes from outside, hides code, or names a
 * variable from outside ("y=x": $((y)) evaluates x in turn).
 */
static int
cls_vars_value(const struct cls_ctx *ctx, const char *w, unsigned f)
{
	const char	*v = strchr(w, '=');

	if (v == NULL)
		return (0);
	return ((f & SH_W_DYNAMIC) || (strchr(v, '[') != NULL &&
	    (strstr(v, "$(") != NULL || strchr(v, '`') != NULL)) ||
	    cls_vars_arith(ctx, v + 1));
}

/* Variables a simple command fills from outside: read, mapfile, ... */
void
cls_vars_track(struct cls_ctx *ctx, const struct sh_cmd *c)
{
	const char	*cmd = c->argc > 0 ? c->argv[0] : "";
	size_t		 i;

	for (i = 0; i < c->nassigns; i++)
		if (cls_vars_value(ctx, c->assigns[i], c->assignflags[i]))
			cls_vars_taint(ctx, c->assigns[i],
			    strcspn(c->assigns[i], "+=["));
	if (c->kind != SH_K_SIMPLE)
		return;
	for (i = 1; i < c->argc; i++) {
		if (cls_in(cmd, (const char *const[]){ "read", "mapfile",
		    "readarray", NULL }) && c->argv[i][0] != '-')
			cls_vars_taint(ctx, c->argv[i], strlen(c->argv[i]));
		else if (strcmp(cmd, "getopts") == 0 && i == 2)
			cls_vars_taint(ctx, c->argv[i], strlen(c->argv[i]));
		else if (strcmp(cmd, "printf") == 0 && i > 1 &&
		    strcmp(c->argv[i - 1], "-v") == 0)
			cls_vars_taint(ctx, c->argv[i], strcspn(c->argv[i],
			    "["));
		else if (cls_in(cmd, (const char *const[]){ "declare",
		    "typeset", "local", "export", "readonly", NULL })) {
			if (c->argv[i][0] == '-' && strchr(c->argv[i], 'n'))
				ctx->taint_all = 1;	/* a name reference */
			else if (cls_vars_value(ctx, c->argv[i],
			    c->argflags[i]))
				cls_vars_taint(ctx, c->argv[i],
				    strcspn(c->argv[i], "+=["));
		}
	}
}

/* 1 if a simple command calls a function defined before it. */
int
cls_vars_is_func(const struct cls_ctx *ctx, const struct sh_cmd *c)
{
	size_t	i;

	if (c->kind != SH_K_SIMPLE || c->argc == 0 ||
	    (c->argflags[0] & (SH_W_DYNAMIC|SH_W_QUOTED)) ||
	    cls_in(c->argv[0], cls_special))
		return (0);
	for (i = 0; i < ctx->nfuncs; i++)
		if (strcmp(ctx->funcs[i], c->argv[0]) == 0)
			return (1);
	return (0);
}

/*
 * A construct's own words: for and select set a variable (from outside
 * when the words are computed or a glob, or select reads it), case
 * matches, [[ ]] tests (its words are paths as test's are), (( ))
 * computes, a function definition defines. None of them runs a program;
 * the commands inside are listed and classified on their own.
 */
void
cls_vars_construct(struct cls_ctx *ctx, const struct sh_cmd *c,
    struct cls_res *r)
{
	struct cls_words	ws;
	static const char	*what[] = { "", "for", "select", "case",
	    "arithmetic", "[[", "function" };
	char			rule[CLS_RULE_MAX];

	snprintf(rule, sizeof rule, "read_only:%s", what[c->kind]);
	cls_raise(r, CLS_READ_ONLY, rule, "%s",
	    c->kind == SH_K_FUNC ? "defines a function (its body is "
	    "classified)" : c->kind == SH_K_ARITH ? "only computes" :
	    c->kind == SH_K_CASE ? "only matches patterns" :
	    c->kind == SH_K_COND ? "only tests" : "a loop that only sets "
	    "a variable");
	if (c->argc == 0)
		return;		/* "for" or "function" alone: incomplete */
	if ((c->kind == SH_K_FOR && (c->flags & (SH_DYNAMIC|SH_GLOB))) ||
	    c->kind == SH_K_SELECT)
		cls_vars_taint(ctx, c->argv[0], strlen(c->argv[0]));
	if (c->kind == SH_K_FUNC)
		cls_vars_add(ctx->funcs, &ctx->nfuncs, &ctx->funcs_full,
		    c->argv[0], strlen(c->argv[0]));
	if (c->kind == SH_K_FOR || c->kind == SH_K_SELECT ||
	    c->kind == SH_K_COND) {
		ws.w = c->argv;
		ws.f = c->argflags;
		ws.n = c->argc;
		ws.cwd = ctx->cwd;
		cls_check_args(ctx, &ws);	/* $f later is not checked */
	}
}

/* Frees the lists of one classification. */
void
cls_vars_release(struct cls_ctx *ctx)
{
	size_t	i;

	for (i = 0; i < ctx->ntainted; i++)
		free(ctx->tainted[i]);
	for (i = 0; i < ctx->nfuncs; i++)
		free(ctx->funcs[i]);
	ctx->ntainted = ctx->nfuncs = 0;
}
