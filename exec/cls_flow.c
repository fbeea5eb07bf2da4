/*
 * The classifier's data flow and fork loops: a recursive delete whose
 * targets come from elsewhere (xargs fed by echo, printf, find or a
 * here-string; a substitution that prints a literal; "*" after "cd ~"),
 * a function that starts copies of itself, a shell loop that never ends
 * and backgrounds a command on every pass, an interpreter one-liner that
 * forks in an endless loop. Only what can be known statically is
 * followed: a producer whose output is not known (cat list | xargs rm
 * -rf) leaves the command destructive, not blocked.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/classify.h"
#include "exec/cls.h"
#include "exec/shparse.h"
#include "logs/xmalloc.h"

/* Why one word of produced text is catastrophic to delete, or NULL. */
static const char *
cls_flow_token(const char *tok, size_t n, const char *cwd)
{
	const char	*why;
	char		*w;

	if (n == 0)
		return (NULL);
	w = xstrndup(tok, n);
	why = cls_root_target(w, 0, cwd);
	if (why == NULL && strcmp(w, "$HOME") == 0)
		why = "the home directory ($HOME)";
	free(w);
	return (why);
}

/*
 * Why text a command produces names something catastrophic to delete:
 * split at blanks, newlines and the escapes printf and echo -e turn into
 * separators (\n, \0, \t).
 */
static const char *
cls_flow_text(const char *text, const char *cwd)
{
	const char	*p = text, *s, *why;

	while (*p != '\0') {
		while (*p != '\0' && (isspace((unsigned char)*p) ||
		    (p[0] == '\\' && strchr("n0t", p[1]) != NULL && p[1] != 0)))
			p += *p == '\\' ? 2 : 1;
		for (s = p; *p != '\0' && !isspace((unsigned char)*p) &&
		    !(p[0] == '\\' && p[1] != '\0' && strchr("n0t", p[1]) !=
		    NULL); p++)
			;
		if ((why = cls_flow_token(s, p - s, cwd)) != NULL)
			return (why);
	}
	return (NULL);
}

/* What a simple command prints, when it is known (allocated), or NULL. */
static char *
cls_flow_output(const struct sh_cmd *c, const char *cwd)
{
	const char	*name;
	size_t		 i = 1, k;

	for (k = 0; k < c->nredirs; k++)
		if (c->redirs[k].op == SH_R_HERESTRING && !c->redirs[k].dynamic)
			return (xstrdup(c->redirs[k].target));
		else if (c->redirs[k].op == SH_R_HEREDOC &&
		    c->redirs[k].body != NULL && !c->redirs[k].dynamic)
			return (xstrdup(c->redirs[k].body));
	if (c->kind != SH_K_SIMPLE || c->argc == 0)
		return (NULL);
	for (k = 0; k < c->argc; k++)	/* ~ and $HOME are known enough */
		if ((c->argflags[k] & SH_W_DYNAMIC) && !cls_in(c->argv[k],
		    (const char *const[]){ "~", "~/", "$HOME", "${HOME}",
		    NULL }))
			return (NULL);
	name = cls_base(c->argv[0]);
	if (strcmp(name, "pwd") == 0)
		return (cwd != NULL ? xstrdup(cwd) : NULL);
	if (strcmp(name, "echo") == 0)
		while (i < c->argc && c->argv[i][0] == '-' &&
		    strspn(c->argv[i] + 1, "neE") == strlen(c->argv[i] + 1))
			i++;
	else if (strcmp(name, "find") == 0)
		for (k = 1; k < c->argc && c->argv[k][0] != '-' &&
		    strcmp(c->argv[k], "(") != 0 && strcmp(c->argv[k], "!") != 0;
		    k++)
			;
	else if (!cls_in(name, (const char *const[]){ "printf", "dirname",
	    "realpath", "readlink", "cat", NULL }))
		return (NULL);
	if (strcmp(name, "cat") == 0)
		return (NULL);		/* cat without a here-string */
	if (strcmp(name, "dirname") == 0 && c->argc == 2 &&
	    strchr(c->argv[1], '/') != NULL)
		return (c->argv[1][0] == '/' && strchr(c->argv[1] + 1, '/') ==
		    NULL ? xstrdup("/") : xstrndup(c->argv[1],
		    strrchr(c->argv[1], '/') - c->argv[1]));
	if (strcmp(name, "find") == 0)
		return (k > 1 ? cls_join(c->argv + 1, k - 1) : xstrdup("."));
	while (i < c->argc && c->argv[i][0] == '-' && strcmp(name, "echo"))
		i++;			/* realpath -m, readlink -f, ... */
	return (cls_join(c->argv + i, c->argc - i));
}

/* What a $(...), <(...) or `...` word prints: one known command's output. */
static char *
cls_flow_subst(const char *w, const char *cwd, int dialect)
{
	struct sh_parse	 ps;
	char		*out = NULL, *inner;
	size_t		 n = strlen(w);

	if (n > 3 && (w[0] == '$' || w[0] == '<') && w[1] == '(' &&
	    w[n - 1] == ')' && w[2] != '(')
		inner = xstrndup(w + 2, n - 3);
	else if (n > 2 && w[0] == '`' && w[n - 1] == '`')
		inner = xstrndup(w + 1, n - 2);
	else
		return (NULL);
	sh_parse(inner, strlen(inner), dialect, &ps);
	if (ps.complete && ps.ncmds == 1)
		out = cls_flow_output(&ps.cmds[0], cwd);
	sh_parse_release(&ps);
	free(inner);
	return (out);
}

/* 1 if words (a command, wrappers gone) delete or rewrite recursively. */
static int
cls_flow_deletes(const struct cls_words *ws)
{
	const char	*name;

	if (ws->n == 0)
		return (0);
	name = cls_base(ws->w[0]);
	if (strcmp(name, "rm") == 0)
		return (cls_has_flag(ws, 'r', "--recursive") ||
		    cls_has_flag(ws, 'R', NULL));
	if (cls_in(name, (const char *const[]){ "chmod", "chown", "chgrp",
	    NULL }))
		return (cls_has_flag(ws, 'R', "--recursive"));
	if (strcmp(name, "find") == 0)
		return (cls_has_opt(ws, "-delete"));
	return (strcmp(name, "shred") == 0);
}

/* The producer feeding command i through a pipe, or NULL. */
static const struct sh_cmd *
cls_flow_producer(const struct sh_parse *ps, size_t i)
{
	const struct sh_cmd	*c = &ps->cmds[i];
	size_t			 k;

	if (c->pipepos == 0)
		return (NULL);
	for (k = i; k-- > 0;)
		if (ps->cmds[k].depth == c->depth)
			return (ps->cmds[k].pipepos == c->pipepos - 1 ?
			    &ps->cmds[k] : NULL);
	return (NULL);
}

/* Why what xargs reads (its redirections, or its pipe) is catastrophic. */
static const char *
cls_flow_xargs_input(struct cls_ctx *ctx, const struct sh_parse *ps,
    size_t i, char **what)
{
	const struct sh_cmd	*c = &ps->cmds[i], *prod;
	const struct sh_redir	*rd;
	const char		*why = NULL;
	char			*out = NULL;
	size_t			 k;

	for (k = 0; k < c->nredirs && out == NULL; k++) {
		rd = &c->redirs[k];
		if (rd->op == SH_R_HERESTRING && !rd->dynamic)
			out = xstrdup(rd->target);
		else if (rd->op == SH_R_HEREDOC && rd->body != NULL &&
		    !rd->dynamic)
			out = xstrdup(rd->body);
		else if (rd->op == SH_R_IN && rd->target[0] == '<' &&
		    rd->target[1] == '(')
			out = cls_flow_subst(rd->target, ctx->cwd,
			    ctx->dialect);
	}
	if (out == NULL && (prod = cls_flow_producer(ps, i)) != NULL) {
		out = cls_flow_output(prod, ctx->cwd);
		*what = prod->argc > 0 ? xstrdup(prod->argv[0]) : NULL;
	}
	if (out != NULL)
		why = cls_flow_text(out, ctx->cwd);
	free(out);
	return (why);
}

/* 1 if a relative target means everything here (star, dot, ...). */
static int
cls_flow_here(const char *w)
{
	return (cls_in(w, (const char *const[]){ "*", ".", "./", "./*", ".*",
	    "./.*", "*/", ".[!.]*", "..", "../*", NULL }));
}

/*
 * A recursive delete whose targets flow in: from xargs's input, from a
 * substitution that prints a literal, or "*" in the home directory after
 * "cd ~". Raises r to blocked.
 */
void
cls_flow_delete(struct cls_ctx *ctx, const struct sh_parse *ps, size_t i,
    struct cls_res *r)
{
	const struct sh_cmd	*c = &ps->cmds[i];
	struct cls_words	 ws;
	const char		*why;
	char			*out, *what = NULL;
	size_t			 k, x;

	if (c->kind != SH_K_SIMPLE || c->argc == 0 || r->risk == CLS_BLOCKED)
		return;
	for (x = 0; x < c->argc && x < 4; x++)
		if (strcmp(cls_base(c->argv[x]), "xargs") == 0)
			break;
	ws.w = c->argv;
	ws.f = c->argflags;
	ws.n = c->argc;
	ws.cwd = ctx->cwd;
	if (x < c->argc && x < 4) {
		k = cls_skip_opts(&ws, x + 1, (const char *const[]){ "-n", "-L",
		    "-I", "-d", "-P", "-s", "-E", "-a", NULL });
		cls_shift(&ws, k);
		if (cls_flow_deletes(&ws) &&
		    (why = cls_flow_xargs_input(ctx, ps, i, &what)) != NULL) {
			cls_raise(r, CLS_BLOCKED, "blocked:rm-root", "%s fed "
			    "by %s deletes %s", ws.w[0], what != NULL ? what :
			    "its input", why);
			free(what);
			return;
		}
		free(what);
		return;
	}
	while (ws.n > 1 && cls_in(cls_base(ws.w[0]), (const char *const[]){
	    "sudo", "doas", "nice", "nohup", "command", "exec", "time",
	    "setsid", NULL }))
		cls_shift(&ws, 1);	/* sudo rm, nice rm, ... */
	if (!cls_flow_deletes(&ws))
		return;
	for (k = 1; k < ws.n; k++) {
		if ((ws.f[k] & SH_W_DYNAMIC) && (out = cls_flow_subst(ws.w[k],
		    ctx->cwd, ctx->dialect)) != NULL) {
			why = cls_flow_text(out, ctx->cwd);
			free(out);
			if (why != NULL) {
				cls_raise(r, CLS_BLOCKED, "blocked:rm-root", "%s "
				    "of %s: %s", ws.w[0], ws.w[k], why);
				return;
			}
		}
		if (ctx->home && !(ws.f[k] & SH_W_QUOTED) &&
		    cls_flow_here(ws.w[k])) {
			cls_raise(r, CLS_BLOCKED, "blocked:rm-root", "%s of %s "
			    "after cd to the home directory", ws.w[0], ws.w[k]);
			return;
		}
	}
}

/* A function whose body calls it in a pipe or in the background. */
static int
cls_flow_func_bomb(const struct sh_parse *ps, size_t i)
{
	const struct sh_cmd	*f = &ps->cmds[i], *c;
	size_t			 k;

	if (f->kind != SH_K_FUNC || f->argc == 0)
		return (0);
	for (k = i + 1; k < ps->ncmds && (ps->cmds[k].flags & SH_IN_FUNC);
	    k++) {
		c = &ps->cmds[k];
		if (c->kind == SH_K_SIMPLE && c->argc > 0 &&
		    strcmp(c->argv[0], f->argv[0]) == 0 &&
		    ((c->flags & SH_BACKGROUND) || c->pipepos > 0))
			return (1);
	}
	return (0);
}

/*
 * A command put in the background on every pass of an endless loop that
 * never waits: the loop's header (its condition) is not in the
 * background itself, so the & is inside the body.
 */
static int
cls_flow_loop_bomb(const struct sh_parse *ps, size_t i)
{
	const struct sh_cmd	*c = &ps->cmds[i];
	size_t			 h, k;

	if ((c->flags & (SH_ENDLESS|SH_BACKGROUND)) !=
	    (SH_ENDLESS|SH_BACKGROUND))
		return (0);
	for (h = i; h-- > 0;)
		if (!(ps->cmds[h].flags & SH_ENDLESS) &&
		    ps->cmds[h].depth <= c->depth)
			break;
	if (h == (size_t)-1 || (ps->cmds[h].flags & SH_BACKGROUND))
		return (0);
	for (k = h + 1; k < ps->ncmds && (ps->cmds[k].flags & SH_ENDLESS);
	    k++)
		if (ps->cmds[k].argc > 0 && strcmp(ps->cmds[k].argv[0],
		    "wait") == 0)
			return (0);
	return (1);
}

/* 1 if interpreter code both forks and loops without an end. */
static int
cls_flow_code_bomb(const char *code)
{
	static const char *const forks[] = { "fork", "spawn", "system",
	    "popen", "Popen", "subprocess", "child_process", "`", "qx",
	    NULL };
	static const char *const loops[] = { "while 1", "while(1)",
	    "while (1)", "while True", "while true", "while(true)",
	    "while (true)", "while fork", "loop {", "loop do", "for(;;)",
	    "for (;;)", "iter(int", "itertools.count", "until false",
	    "while :", "setInterval", "loop{", NULL };
	size_t	i, j;

	for (i = 0; forks[i] != NULL; i++) {
		if (strstr(code, forks[i]) == NULL)
			continue;
		for (j = 0; loops[j] != NULL; j++)
			if (strstr(code, loops[j]) != NULL)
				return (1);
	}
	return (0);
}

/* An interpreter one-liner (python3 -c, perl -e, ...) that forks forever. */
static int
cls_flow_interp_bomb(const struct sh_cmd *c)
{
	static const char *const interps[] = { "python", "python2", "python3",
	    "perl", "ruby", "node", "nodejs", "php", "lua", "bun", "deno",
	    NULL };
	size_t	k, x;

	for (x = 0; x < c->argc && x < 4; x++)
		if (cls_in(cls_base(c->argv[x]), interps) ||
		    strncmp(cls_base(c->argv[x]), "python3.", 8) == 0)
			break;
	if (x >= c->argc || x >= 4)
		return (0);
	for (k = x + 1; k < c->argc; k++)
		if (!(c->argflags[k] & SH_W_DYNAMIC) &&
		    cls_flow_code_bomb(c->argv[k]))
			return (1);
	return (0);
}

/* Fork bombs the parse shows: functions, loops, interpreter one-liners. */
void
cls_flow_bomb(const struct sh_parse *ps, size_t i, struct cls_res *r)
{
	const char	*why = NULL;

	if (cls_flow_func_bomb(ps, i))
		why = "a function that starts copies of itself until the "
		    "machine stops";
	else if (cls_flow_loop_bomb(ps, i))
		why = "an endless loop that starts a command in the background "
		    "on every pass";
	else if (ps->cmds[i].kind == SH_K_SIMPLE &&
	    cls_flow_interp_bomb(&ps->cmds[i]))
		why = "interpreter code that starts processes in an endless "
		    "loop";
	if (why != NULL)
		cls_raise(r, CLS_BLOCKED, "blocked:fork-bomb", "%s", why);
}
