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

#include "policy/classify.h"
#include "policy/cls.h"
#include "policy/shparse.h"
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
	why = cls_root_target(w, w[0] == '$' ? SH_W_DYNAMIC : 0, cwd);
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

/* 1 if a computed word is a home: ~, ~/x, ~user, $HOME, ${HOME}/x. */
static int
cls_flow_homeish(const char *w)
{
	return (w[0] == '~' || (strncmp(w, "$HOME", 5) == 0 &&
	    (w[5] == '\0' || w[5] == '/')) || (strncmp(w, "${HOME}", 7) == 0 &&
	    (w[7] == '\0' || w[7] == '/')));
}

/*
 * The words of a command that can be known: literal ones, globs (they
 * name what they match), homes. Others (computed) are left out: they are
 * no evidence either way. Joined from i on (allocated).
 */
static char *
cls_flow_words(const struct sh_cmd *c, size_t i)
{
	char	**w = xcalloc(c->argc + 1, sizeof *w), *s;
	size_t	  n = 0;

	for (; i < c->argc; i++)
		if (!(c->argflags[i] & SH_W_DYNAMIC) ||
		    (c->argflags[i] & SH_W_GLOB) || cls_flow_homeish(c->argv[i]))
			w[n++] = c->argv[i];
	s = cls_join(w, n);
	free(w);
	return (s);
}

/*
 * What a simple command prints, when it is known (allocated), or NULL:
 * echo, printf, find (its start points), ls (names in the cwd, or its
 * operands with -d), pwd, dirname, realpath, readlink, a here-string or
 * here-doc it reads. home: the cwd is a home.
 */
static char *
cls_flow_output(const struct sh_cmd *c, const char *cwd, int home)
{
	struct cls_words	 ws;
	const char		*name;
	size_t			 i = 1, k;

	for (k = 0; k < c->nredirs; k++) {
		if (c->redirs[k].op == SH_R_HERESTRING && (!c->redirs[k].dynamic
		    || cls_flow_homeish(c->redirs[k].target)))
			return (xstrdup(c->redirs[k].target));
		if (c->redirs[k].op == SH_R_HEREDOC &&
		    c->redirs[k].body != NULL && !c->redirs[k].dynamic)
			return (xstrdup(c->redirs[k].body));
		if (c->redirs[k].fd == 1 || c->redirs[k].fd == -1)
			return (NULL);		/* its output goes elsewhere */
	}
	if (c->kind != SH_K_SIMPLE || c->argc == 0)
		return (NULL);
	name = cls_base(c->argv[0]);
	if (strcmp(name, "pwd") == 0)
		return (home ? xstrdup("~") : cwd != NULL ? xstrdup(cwd) : NULL);
	ws.w = c->argv;
	ws.f = c->argflags;
	ws.n = c->argc;
	ws.cwd = NULL;
	if (strcmp(name, "ls") == 0) {	/* names, relative to the cwd */
		if (!cls_has_flag(&ws, 'd', "--directory"))
			return (xstrdup("*"));
		for (i = 1; i < c->argc && c->argv[i][0] == '-'; i++)
			;
		return (cls_flow_words(c, i));
	}
	if (strcmp(name, "echo") == 0)
		while (i < c->argc && c->argv[i][0] == '-' &&
		    strspn(c->argv[i] + 1, "neE") == strlen(c->argv[i] + 1))
			i++;
	else if (strcmp(name, "find") == 0) {
		for (k = 1; k < c->argc && (c->argv[k][0] != '-' ||
		    cls_in(c->argv[k], (const char *const[]){ "-L", "-H", "-P",
		    NULL })) && strcmp(c->argv[k], "(") != 0 &&
		    strcmp(c->argv[k], "!") != 0; k++)
			;
		return (k > 1 ? cls_flow_words(c, 1) : xstrdup("."));
	} else if (!cls_in(name, (const char *const[]){ "printf", "dirname",
	    "realpath", "readlink", NULL }))
		return (NULL);
	if (strcmp(name, "dirname") == 0 && c->argc == 2 &&
	    strchr(c->argv[1], '/') != NULL)
		return (c->argv[1][0] == '/' && strchr(c->argv[1] + 1, '/') ==
		    NULL ? xstrdup("/") : xstrndup(c->argv[1],
		    strrchr(c->argv[1], '/') - c->argv[1]));
	while (i < c->argc && c->argv[i][0] == '-' && strcmp(name, "echo"))
		i++;			/* realpath -m, readlink -f, ... */
	return (cls_flow_words(c, i));
}

/* What a $(...), <(...) or `...` word prints: one known command's output. */
static char *
cls_flow_subst(const struct cls_ctx *ctx, const char *w)
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
	sh_parse(inner, strlen(inner), ctx->dialect, &ps);
	if (ps.complete && ps.ncmds == 1)
		out = cls_flow_output(&ps.cmds[0], ctx->cwd, ctx->home);
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

/*
 * The producer feeding command i through a pipe, or NULL; a cat or tee
 * that only passes its input on ("echo / | cat | xargs") is looked
 * through.
 */
static const struct sh_cmd *
cls_flow_producer(const struct sh_parse *ps, size_t i)
{
	const struct sh_cmd	*c = &ps->cmds[i], *p;
	size_t			 k;

	while (c->pipepos > 0) {
		for (k = i, p = NULL; k-- > 0;)
			if (ps->cmds[k].depth == c->depth) {
				if (ps->cmds[k].pipepos == c->pipepos - 1)
					p = &ps->cmds[k];
				break;
			}
		if (p == NULL || p->kind != SH_K_SIMPLE || p->argc != 1 ||
		    p->nredirs > 0 || !cls_in(cls_base(p->argv[0]),
		    (const char *const[]){ "cat", "tee", NULL }))
			return (p);
		c = p;
		i = k;
	}
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
		if (rd->op == SH_R_HERESTRING && (!rd->dynamic ||
		    cls_flow_homeish(rd->target)))
			out = xstrdup(rd->target);
		else if (rd->op == SH_R_HEREDOC && rd->body != NULL &&
		    !rd->dynamic)
			out = xstrdup(rd->body);
		else if (rd->op == SH_R_IN && rd->target[0] == '<' &&
		    rd->target[1] == '(')
			out = cls_flow_subst(ctx, rd->target);
	}
	if (out == NULL && (prod = cls_flow_producer(ps, i)) != NULL) {
		out = cls_flow_output(prod, ctx->cwd, ctx->home);
		*what = prod->argc > 0 ? xstrdup(prod->argv[0]) : NULL;
	}
	if (out != NULL)
		why = cls_flow_text(out, ctx->cwd);
	free(out);
	return (why);
}

/* Drops plain wrappers in front: sudo rm, nice rm, xargs sudo rm. */
static void
cls_flow_unwrap(struct cls_words *ws)
{
	while (ws->n > 1 && cls_in(cls_base(ws->w[0]), (const char *const[]){
	    "sudo", "doas", "nice", "nohup", "command", "exec", "time",
	    "setsid", NULL }))
		cls_shift(ws, 1);
}

/*
 * A shell reading its script from its input ("echo 'rm -rf /' | sh",
 * "bash <<< CMD"): when that input is known, it is classified as the
 * shell's own commands.
 */
void
cls_flow_stdin(struct cls_ctx *ctx, const struct sh_parse *ps, size_t i)
{
	const struct sh_cmd	*c = &ps->cmds[i], *prod;
	char			*text = NULL, *p;
	size_t			 k;

	if (c->kind != SH_K_SIMPLE || c->argc == 0 ||
	    ctx->depth >= CLS_DEPTH_MAX || !cls_in(cls_base(c->argv[0]),
	    (const char *const[]){ "sh", "bash", "dash", "zsh", "ksh", "mksh",
	    "ash", NULL }))
		return;
	for (k = 1; k < c->argc; k++)	/* -c, or a script: not stdin */
		if ((c->argv[k][0] != '-' && c->argv[k][0] != '+') ||
		    strchr(c->argv[k], 'c') != NULL)
			return;
	for (k = 0; k < c->nredirs && text == NULL; k++)
		if ((c->redirs[k].op == SH_R_HERESTRING ||
		    c->redirs[k].op == SH_R_HEREDOC) && !c->redirs[k].dynamic)
			text = xstrdup(c->redirs[k].op == SH_R_HEREDOC &&
			    c->redirs[k].body != NULL ? c->redirs[k].body :
			    c->redirs[k].target);
	if (text == NULL && (prod = cls_flow_producer(ps, i)) != NULL &&
	    (text = cls_flow_output(prod, ctx->cwd, ctx->home)) != NULL &&
	    strcmp(cls_base(prod->argv[0]), "printf") == 0)
		while ((p = strstr(text, "\\n")) != NULL) {
			*p = '\n';	/* printf's \n: a new line */
			memmove(p + 1, p + 2, strlen(p + 2) + 1);
		}
	if (text == NULL)
		return;
	ctx->depth++;
	cls_recurse_source(ctx, text, strlen(text), cls_shell_named(cls_base(
	    c->argv[0])));
	ctx->depth--;
	free(text);
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
		if (cls_flag_before(&ws, k, 'a', "--arg-file"))
			return;		/* it reads a file, not its input */
		cls_shift(&ws, k);
		cls_flow_unwrap(&ws);
		if (cls_flow_deletes(&ws) &&
		    (why = cls_flow_xargs_input(ctx, ps, i, &what)) != NULL)
			cls_raise(r, CLS_BLOCKED, "blocked:rm-root", "%s fed "
			    "by %s deletes %s", ws.w[0], what != NULL ? what :
			    "its input", why);
		free(what);
		return;
	}
	cls_flow_unwrap(&ws);
	if (!cls_flow_deletes(&ws))
		return;
	for (k = 1; k < ws.n; k++) {
		if ((ws.f[k] & SH_W_DYNAMIC) && (out = cls_flow_subst(ctx,
		    ws.w[k])) != NULL) {
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
 * never waits (no foreground wait, sleep or read): the loop's header (its
 * condition) is not in the background itself, so the & is inside the
 * body.
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
	/* A pass that waits in the foreground is throttled: not a bomb. */
	for (k = h + 1; k < ps->ncmds && (ps->cmds[k].flags & SH_ENDLESS);
	    k++)
		if (ps->cmds[k].argc > 0 && !(ps->cmds[k].flags &
		    SH_BACKGROUND) && cls_in(cls_base(ps->cmds[k].argv[0]),
		    (const char *const[]){ "wait", "sleep", "read", NULL }))
			return (0);
	return (1);
}

/*
 * Interpreter code with its string literals and # comments blanked: what
 * it prints is not what it does (allocated).
 */
static char *
cls_flow_code(const char *code)
{
	char	*s = xstrdup(code), *p, q = 0;

	for (p = s; *p != '\0'; p++) {
		if (q != 0) {
			if (*p == '\\' && p[1] != '\0')
				*p++ = ' ';
			else if (*p == q) {
				q = 0;
				continue;
			}
			*p = ' ';
		} else if (*p == '\'' || *p == '"')
			q = *p;
		else if (*p == '#' && (p == s || isspace((unsigned char)p[-1]) ||
		    p[-1] == ';'))
			while (*p != '\0' && *p != '\n')
				*p++ = ' ';
		if (*p == '\0')
			break;
	}
	return (s);
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
	    "until 0", "redo", "while :", "setInterval", "loop{", NULL };
	char	*s = cls_flow_code(code);
	size_t	 i, j;
	int	 bomb = 0;

	for (i = 0; forks[i] != NULL && !bomb; i++) {
		if (strstr(s, forks[i]) == NULL)
			continue;
		for (j = 0; loops[j] != NULL && !bomb; j++)
			bomb = strstr(s, loops[j]) != NULL;
	}
	free(s);
	return (bomb);
}

/*
 * An interpreter one-liner (python3 -c, perl -e, ruby -e, node -e, php
 * -r, ...) that forks forever. Only the code given by the option is
 * read: words after a script are the script's arguments.
 */
static int
cls_flow_interp_bomb(const struct sh_cmd *c)
{
	static const char *const interps[] = { "python", "python2", "python3",
	    "perl", "ruby", "node", "nodejs", "php", "lua", "bun", "deno",
	    NULL };
	const char	*w;
	size_t		 k, x;

	for (x = 0; x < c->argc && x < 4; x++)
		if (cls_in(cls_base(c->argv[x]), interps) ||
		    strncmp(cls_base(c->argv[x]), "python3.", 8) == 0)
			break;
	for (k = x + 1; x < 4 && k < c->argc; k++) {
		w = c->argv[k];
		if (w[0] != '-')
			return (0);	/* a script: the rest is its argv */
		if (w[1] != '-' && strchr("ceEr", w[1]) != NULL && w[2] != '\0' &&
		    !(c->argflags[k] & SH_W_DYNAMIC) &&
		    cls_flow_code_bomb(w + 2))
			return (1);	/* perl -e'CODE' */
		if (strcmp(w, "--eval") == 0 || strcmp(w, "--print") == 0 ||
		    (w[1] != '-' && strchr("ceEpr", w[strlen(w) - 1]) != NULL &&
		    strspn(w + 1, "lnapwsWTtcEeOBdIiur") == strlen(w + 1))) {
			if (k + 1 < c->argc && !(c->argflags[k + 1] &
			    SH_W_DYNAMIC) && cls_flow_code_bomb(c->argv[k + 1]))
				return (1);
			k++;
		}
	}
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
