/*
 * The classifier (see policy/classify.h). Order of the checks for each
 * simple command the parser lists:
 *
 *   1. the words: wrappers (sudo, env, timeout, xargs, sh -c, ...) are
 *      peeled off and what they run is classified instead (sh -c and eval
 *      strings are parsed again, recursively); then the built-in blocked
 *      checks, then the per-command handlers (git, find, sed, ...), then
 *      the plain lists (read-only, writers); anything else is unknown;
 *   2. the configured rules, on the whole text and on the peeled text
 *      (never lowering a built-in blocked);
 *   3. redirections (a file written is at least write; a block device
 *      written is blocked);
 *   4. the path sandbox (recorded in the verdict, not in the risk).
 *
 * A parse that is not complete is at least unknown; what it did list can
 * still raise it. A fork bomb is found in the raw text, since the parser
 * (rightly) gives up on function definitions.
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

static void	cls_salvage(struct cls_ctx *, const char *, size_t);
static int	cls_fork_bomb(const char *, size_t);
static void	cls_embedded(struct cls_ctx *, const struct cls_words *,
		    struct cls_res *);

/* ---- one simple command ------------------------------------------------ */

/*
 * cls_words with the directory a wrapper moved to (env -C, sudo -D) in
 * *dir, which ws->cwd then points to.
 */
static void
cls_words_in(struct cls_ctx *ctx, struct cls_words *ws, struct cls_res *r,
    char **inner, char **dir)
{
	ssize_t		 k;
	char		*moved;
	int		 peel, was;

	*inner = NULL;
	for (peel = 0; peel < CLS_DEPTH_MAX; peel++) {
		if (ws->n == 0) {
			cls_raise(r, CLS_READ_ONLY, "read_only:empty", "nothing "
			    "is run");
			return;
		}
		if (ws->f[0] & SH_W_DYNAMIC) {
			cls_raise(r, CLS_UNKNOWN, "unknown:dynamic", "the "
			    "command name %s is computed at run time",
			    ws->w[0]);
			/* $X -rf / is rm -rf / when X is rm. */
			if (cls_has_flag(ws, 'r', "--recursive") ||
			    cls_has_flag(ws, 'R', NULL))
				cls_block_targets(ws, 1, "a computed command",
				    "blocked:rm-root", r);
			return;
		}
		if ((k = cls_wrapper(ctx, ws, cls_base(ws->w[0]), r)) < 0)
			return;
		if (k == 0)
			break;
		moved = cls_wrapper_dir(ctx, ws, (size_t)k, &was);
		if (was) {
			free(*dir);
			*dir = moved;
			ws->cwd = moved;
		}
		cls_shift(ws, (size_t)k);
	}
	if (ws->n == 0) {
		cls_raise(r, CLS_UNKNOWN, "unknown:wrapper", "a wrapper with no "
		    "command");
		return;
	}
	*inner = cls_join(ws->w, ws->n);
	cls_command(ctx, ws, r);
	/* sudo's destructive verdict must not hide a catastrophe inside. */
	if (r->risk == CLS_UNKNOWN || ctx->privileged || cls_in(cls_base(
	    ws->w[0]), (const char *const[]){ "docker", "podman", "kubectl",
	    "nerdctl", "crictl", "lxc", "lxc-attach", "vagrant", "parallel",
	    NULL }))
		cls_embedded(ctx, ws, r);
	cls_check_args(ctx, ws);
}

/*
 * Classifies a word list: peels wrappers into r (they may raise it), then
 * the command. *inner is the peeled text (allocated). The parts reach it
 * through cls_recurse_words (find -exec's command).
 */
static void
cls_words(struct cls_ctx *ctx, struct cls_words *ws, struct cls_res *r,
    char **inner)
{
	const char	*cwd = ws->cwd;
	char		*dir = NULL;

	cls_words_in(ctx, ws, r, inner, &dir);
	ws->cwd = cwd;
	free(dir);
}

/*
 * A command we cannot follow (an interpreter, a container's exec, an
 * unknown tool) may still carry a catastrophe in its arguments:
 * "docker exec c rm -rf /", "python3 -c 'os.system(\"rm -rf /\")'".
 * Its argument words from each position, and every argument with a space
 * (and every quoted string inside one), are checked for blocked commands
 * only.
 */
static void
cls_embedded(struct cls_ctx *ctx, const struct cls_words *ws,
    struct cls_res *r)
{
	struct cls_words	 sub;
	const char		*w, *q, *end;
	size_t			 i;

	for (i = 1; i < ws->n && i <= CLS_SCAN_MAX &&
	    r->risk != CLS_BLOCKED; i++) {
		sub.w = ws->w + i;
		sub.f = ws->f + i;
		sub.n = ws->n - i;
		sub.cwd = ws->cwd;
		if (!(sub.f[0] & SH_W_DYNAMIC))
			cls_blocked(&sub, cls_base(sub.w[0]), r);
	}
	for (i = 1; i < ws->n && ctx->depth < CLS_DEPTH_MAX; i++) {
		w = ws->w[i];
		if ((ws->f[i] & SH_W_DYNAMIC) || strchr(w, ' ') == NULL)
			continue;
		ctx->depth++;
		cls_salvage(ctx, w, strlen(w));
		if (cls_fork_bomb(w, strlen(w)))	/* alias x=..., trap */
			cls_raise(r, CLS_BLOCKED, "blocked:fork-bomb",
			    "a fork bomb handed to %s", ws->w[0]);
		for (q = w; (q = strpbrk(q, "'\"")) != NULL; q = end + 1) {
			if ((end = strchr(q + 1, *q)) == NULL)
				break;
			cls_salvage(ctx, q + 1, end - q - 1);
			if (cls_fork_bomb(q + 1, end - q - 1))
				cls_raise(r, CLS_BLOCKED, "blocked:fork-bomb",
				    "a fork bomb handed to %s", ws->w[0]);
		}
		ctx->depth--;
	}
}

/* Configured rules: the first match sets the risk (never under blocked). */
static const struct cls_rule *
cls_rule_match(const struct cls_policy *p, const char *text,
    const char *inner)
{
	size_t	i;

	for (i = 0; i < p->nrules; i++) {
		if (fnmatch(p->rules[i].glob, text, 0) == 0 ||
		    (inner != NULL && fnmatch(p->rules[i].glob, inner, 0) == 0))
			return (&p->rules[i]);
	}
	return (NULL);
}

/* Output redirections: a file written is a write, a disk is blocked. */
static void
cls_redirs(struct cls_ctx *ctx, const struct sh_cmd *c, struct cls_res *r)
{
	const struct sh_redir	*rd;
	size_t			 i;
	int			 out;

	for (i = 0; i < c->nredirs; i++) {
		rd = &c->redirs[i];
		out = rd->op == SH_R_OUT || rd->op == SH_R_APPEND ||
		    rd->op == SH_R_CLOBBER || rd->op == SH_R_RDWR ||
		    rd->op == SH_R_OUT_ERR || rd->op == SH_R_APPEND_ERR ||
		    (rd->op == SH_R_DUP_OUT && (rd->target[0] == '\0' ||
		    strspn(rd->target, "0123456789") != strlen(rd->target)) &&
		    strcmp(rd->target, "-") != 0);
		if (rd->op == SH_R_HEREDOC || rd->op == SH_R_HERESTRING ||
		    rd->op == SH_R_DUP_IN || (rd->op == SH_R_DUP_OUT && !out))
			continue;
		if (out && rd->dynamic)
			cls_raise(r, CLS_WRITE, "redirect:write", "output goes "
			    "to a file named at run time (%s)", rd->target);
		else if (out && cls_block_device(rd->target))
			cls_raise(r, CLS_BLOCKED, "blocked:device-write",
			    "output is redirected onto the block device %s",
			    rd->target);
		else if (out && !cls_harmless_device(rd->target))
			cls_raise(r, CLS_WRITE, "redirect:write", "output is "
			    "redirected to %s", rd->target);
		cls_check_path(ctx, rd->target, rd->dynamic ? SH_W_DYNAMIC : 0,
		    out ? "a redirection writes" : "a redirection reads");
	}
}

/* cd, pushd and popd move the cwd later commands use. */
static void
cls_track_cd(struct cls_ctx *ctx, const struct sh_cmd *c)
{
	const char	*to;
	size_t		 i;

	if (c->kind != SH_K_SIMPLE || c->argc == 0)
		return;
	if (!cls_in(c->argv[0], (const char *const[]){ "cd", "pushd", NULL })) {
		cls_cd(ctx, c);		/* popd */
		return;
	}
	for (i = 1; i < c->argc && c->argv[i][0] == '-' && c->argv[i][1] !=
	    '\0'; i++)
		;
	to = i < c->argc ? c->argv[i] : NULL;
	/* Home, for "cd ~ && rm -rf *"; kept through an if, as it may be. */
	if ((to == NULL && strcmp(c->argv[0], "cd") == 0) || (to != NULL &&
	    ((to[0] == '~' && strchr(to, '/') == NULL) ||
	    strcmp(to, "~/") == 0 ||
	    ((c->argflags[i] & SH_W_DYNAMIC) && (strcmp(to, "$HOME") == 0 ||
	    strcmp(to, "${HOME}") == 0)))))
		ctx->home = 1;
	else if (!(c->flags & (SH_CONTROL|SH_IN_FUNC)) && c->depth == 0)
		ctx->home = 0;
	cls_cd(ctx, c);
}

/* Appends one classified command to the verdict and raises it. */
static void
cls_add(struct cls_ctx *ctx, char *text, const struct cls_res *r)
{
	struct cls_verdict	*v = ctx->v;
	struct cls_cmd		*c;

	if (v->ncmds == ctx->cmdcap) {
		ctx->cmdcap = ctx->cmdcap == 0 ? 8 : ctx->cmdcap * 2;
		v->cmds = xreallocarray(v->cmds, ctx->cmdcap, sizeof *v->cmds);
	}
	c = &v->cmds[v->ncmds++];
	c->text = text;
	c->risk = r->risk;
	c->rule = xstrdup(r->rule);
	c->reason = xstrdup(r->reason);
	c->network = r->network;
	v->network |= r->network;
	if (v->rule == NULL || r->risk > v->risk) {
		v->risk = r->risk;
		free(v->rule);
		free(v->reason);
		v->rule = xstrdup(r->rule);
		v->reason = xstrdup(r->reason);
	}
}

/* Text of a command with no words: its redirections or assignments. */
static char *
cls_bare_text(const struct sh_cmd *c)
{
	if (c->nredirs > 0)
		return (xstrdup(c->redirs[0].target));
	return (cls_join(c->assigns, c->nassigns));
}


/* Command i of the parse. */
static void
cls_simple(struct cls_ctx *ctx, const struct sh_parse *ps, size_t i)
{
	const struct sh_cmd	*c = &ps->cmds[i];
	struct cls_words	 ws;
	struct cls_res		 r;
	const struct cls_rule	*rule;
	char			*text, *inner = NULL, name[CLS_RULE_MAX];

	memset(&r, 0, sizeof r);
	ws.w = c->argv;
	ws.f = c->argflags;
	ws.n = c->argc;
	ws.cwd = ctx->cwd;
	ctx->privileged = 0;
	text = c->argc > 0 ? cls_join(c->argv, c->argc) : cls_bare_text(c);
	if (c->kind != SH_K_SIMPLE)
		cls_vars_construct(ctx, c, &r);
	else if (c->argc == 0)
		cls_raise(&r, CLS_READ_ONLY, "read_only:assignment", "only "
		    "sets variables");
	else if (cls_vars_is_func(ctx, c))
		cls_raise(&r, CLS_READ_ONLY, "read_only:function", "calls "
		    "the function %.40s (its body is classified)", c->argv[0]);
	else
		cls_words(ctx, &ws, &r, &inner);
	/* A rule decides the command; nothing below may be lowered by it. */
	if (c->kind == SH_K_SIMPLE && c->argc > 0 && (rule =
	    cls_rule_match(ctx->p, text, inner)) != NULL &&
	    r.risk != CLS_BLOCKED) {
		snprintf(name, sizeof name, "rule:%s", rule->name);
		cls_set(&r, rule->risk, name, rule->reason);
	}
	free(inner);
	cls_flow_delete(ctx, ps, i, &r);
	cls_flow_bomb(ps, i, &r);
	if (ctx->privileged)
		cls_raise(&r, CLS_DESTRUCTIVE, "wrapper:sudo", "runs as root "
		    "or another user");
	cls_env_check(ctx, c, &r);
	if (cls_vars_eval(ctx, c))
		cls_raise(&r, CLS_UNKNOWN, "unknown:bash-eval", "bash evaluates "
		    "a value here as code (a subscript, arithmetic, a name "
		    "reference, a prompt), which can run commands");
	cls_vars_track(ctx, c);
	cls_redirs(ctx, c, &r);
	cls_add(ctx, text, &r);
	cls_flow_stdin(ctx, ps, i);
	cls_track_cd(ctx, c);
}

/* Drops leading control keywords ("do rm -rf /" is "rm -rf /"). */
static const char *
cls_skip_keywords(const char *p)
{
	static const char *const kw[] = { "if", "then", "else", "elif", "fi",
	    "for", "while", "until", "do", "done", "case", "esac", "select",
	    "function", "!", "time", "coproc", NULL };
	char	 word[16];
	size_t	 n;

	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		n = strcspn(p, " \t\n");
		if (n == 0 || n >= sizeof word)
			return (p);
		memcpy(word, p, n);
		word[n] = '\0';
		if (!cls_in(word, kw))
			return (p);
		p += n;
	}
}

/*
 * An incomplete parse may hide a catastrophe inside a loop or a function
 * ("for i in 1; do rm -rf /; done"). Each piece between operators and
 * brackets is parsed on its own, keywords dropped; only blocked verdicts
 * are kept (the pieces may be cut wrong, so nothing else is trusted).
 */
static void
cls_salvage(struct cls_ctx *ctx, const char *src, size_t len)
{
	struct sh_parse		 ps;
	struct cls_words	 ws;
	struct cls_res		 r;
	const char		*q;
	char			*piece, *inner;
	size_t			 start = 0, i, k;

	for (i = 0; i <= len; i++) {
		if (i < len && strchr(";&|\n(){}`", src[i]) == NULL &&
		    src[i] != '\0')
			continue;
		piece = xstrndup(src + start, i - start);
		start = i + 1;
		q = cls_skip_keywords(piece);
		sh_parse(q, strlen(q), ctx->dialect, &ps);
		for (k = 0; k < ps.ncmds; k++) {
			memset(&r, 0, sizeof r);
			ws.w = ps.cmds[k].argv;
			ws.f = ps.cmds[k].argflags;
			ws.n = ps.cmds[k].argc;
			ws.cwd = ctx->cwd;
			cls_words(ctx, &ws, &r, &inner);
			free(inner);
			if (r.risk == CLS_BLOCKED)
				cls_add(ctx, cls_join(ps.cmds[k].argv,
				    ps.cmds[k].argc), &r);
		}
		sh_parse_release(&ps);
		free(piece);
	}
}

/* Parses src as the shell dialect reads it and classifies it. */
static unsigned
cls_source_as(struct cls_ctx *ctx, const char *src, size_t len, int dialect)
{
	struct sh_parse	 ps;
	struct cls_res	 r;
	size_t		 i;
	int		 saved = ctx->dialect;
	unsigned	 ops;

	ctx->dialect = dialect;
	sh_parse(src, len, dialect, &ps);
	if (!ps.complete) {
		ctx->v->complete = 0;
		memset(&r, 0, sizeof r);
		cls_raise(&r, CLS_UNKNOWN, "parse:incomplete", "cannot be "
		    "parsed with certainty: %s (at byte %zu)", ps.why != NULL ?
		    ps.why : "unknown", ps.where);
		cls_add(ctx, xstrndup(src, len > 80 ? 80 : len), &r);
	}
	if (cls_fork_bomb(src, len)) {
		memset(&r, 0, sizeof r);
		cls_raise(&r, CLS_BLOCKED, "blocked:fork-bomb", "a function "
		    "that starts copies of itself until the machine stops");
		cls_add(ctx, xstrndup(src, len > 80 ? 80 : len), &r);
	}
	for (i = 0; i < ps.ncmds; i++)
		cls_simple(ctx, &ps, i);
	if (!ps.complete && ctx->depth < CLS_DEPTH_MAX) {
		ctx->depth++;
		cls_salvage(ctx, src, len);
		ctx->depth--;
	}
	ops = ps.ops;
	sh_parse_release(&ps);
	ctx->dialect = saved;
	return (ops);
}

/*
 * Parses and classifies src (also the strings of sh -c and eval, through
 * cls_recurse_source) as shell reads it; when the shell is not known and
 * bash and dash would read src differently, both readings are classified
 * (the worst wins).
 */
static void
cls_source(struct cls_ctx *ctx, const char *src, size_t len,
    enum cls_shell shell)
{
	char		*cwd = ctx->cwd != NULL ? xstrdup(ctx->cwd) : NULL;
	unsigned	 ops;

	ops = cls_source_as(ctx, src, len, shell == CLS_SHELL_POSIX ?
	    SH_POSIX : SH_BASH);
	if (shell == CLS_SHELL_ANY && (ops & SH_OP_DIALECT)) {
		free(ctx->cwd);		/* the second reading starts over */
		ctx->cwd = cwd;
		cwd = NULL;
		cls_source_as(ctx, src, len, SH_POSIX);
	}
	free(cwd);
}

/*
 * 1 (and *i at the closing quote) if the quoted region at *i holds a
 * blank or an operator: it is data here (an echo's text, a commit
 * message); if it is a command (sh -c, eval), it is scanned where it is
 * parsed on its own. A quoted name (':' or "f") is kept.
 */
static int
cls_bomb_quoted(const char *src, size_t len, size_t *i)
{
	size_t	end, k;

	for (end = *i + 1; end < len && src[end] != src[*i]; end++)
		if (src[*i] == '"' && src[end] == '\\')
			end++;
	if (end >= len)
		return (0);
	for (k = *i + 1; k < end; k++)
		if (strchr(" \t\n(){}|&;", src[k]) != NULL && src[k] != '\0')
			break;
	if (k == end)
		return (0);
	*i = end;
	return (1);
}

/* 1 if name occurs in z at a word start, followed by what. */
static int
cls_bomb_call(const char *z, const char *name, const char *what)
{
	char		 pat[80];
	const char	*p;
	size_t		 len;

	snprintf(pat, sizeof pat, "%s%s", name, what);
	len = strlen(pat);
	for (p = z; (p = strstr(p, pat)) != NULL; p++) {
		if (p > z && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		if (strcmp(what, "&") == 0 && p[len] == '&')
			continue;	/* && */
		return (1);
	}
	return (0);
}

/*
 * Fork bombs: a function that calls itself twice through a pipe, or once
 * in the background ("f(){ f|f& };f", ":(){ :|:& };:", "function f {
 * f|f & }; f", quoted or backslashed names too). The text is looked at
 * with quotes, backslashes and blanks taken out.
 */
static int
cls_fork_bomb(const char *src, size_t len)
{
	char		*q = xmalloc(len + 1), *z = xmalloc(len + 1), name[40];
	char		 twice[48];
	const char	*c, *p, *e;
	size_t		 i, nq = 0, nz = 0, n, defs = 0;
	int		 bomb = 0;

	for (i = 0; i < len; i++) {
		if ((src[i] == '\'' || src[i] == '"') && cls_bomb_quoted(src,
		    len, &i))
			continue;
		if (src[i] == '\\' && i + 1 < len && src[i + 1] != '\n') {
			i++;		/* an escaped character is data */
			continue;
		}
		if (src[i] == '#' && (i == 0 || isspace((unsigned char)
		    src[i - 1]))) {
			while (i + 1 < len && src[i + 1] != '\n')
				i++;	/* a comment */
			continue;
		}
		if (src[i] == '\'' || src[i] == '"' || src[i] == '\\' ||
		    src[i] == '\0')
			continue;
		q[nq++] = src[i];
		if (!isspace((unsigned char)src[i]))
			z[nz++] = src[i];
	}
	q[nq] = z[nz] = '\0';
	for (c = q; *c != '\0' && !bomb && defs < CLS_SCAN_MAX; c++) {
		p = e = NULL;
		if (strncmp(c, "function", 8) == 0 && isspace((unsigned char)
		    c[8])) {
			for (p = c + 8; isspace((unsigned char)*p); p++)
				;
			e = p + strcspn(p, " \t\n({");
		} else if (*c == '(') {
			for (e = c + 1; isspace((unsigned char)*e); e++)
				;
			if (*e != ')')
				continue;
			for (e = c; e > q && isspace((unsigned char)e[-1]); e--)
				;
			for (p = e; p > q && (isalnum((unsigned char)p[-1]) ||
			    strchr("_:.-", p[-1]) != NULL); p--)
				;
		}
		if (e == NULL || (n = e - p) == 0 || n >= sizeof name)
			continue;
		memcpy(name, p, n);
		name[n] = '\0';
		defs++;
		snprintf(twice, sizeof twice, "|%s", name);
		bomb = cls_bomb_call(z, name, twice) ||
		    cls_bomb_call(z, name, "&");
	}
	free(q);
	free(z);
	return (bomb);
}

/* What the parts hand back to the driver (policy/cls.h). */
static const struct cls_driver cls_driver = {
	.words = cls_words,
	.source = cls_source,
};

void
cls_classify(const struct cls_policy *p, const char *cmd, size_t len,
    const char *cwd, struct cls_verdict *out)
{
	struct cls_ctx	 ctx;
	struct cls_res	 r;

	memset(out, 0, sizeof *out);
	memset(&ctx, 0, sizeof ctx);
	out->complete = 1;
	ctx.p = p;
	ctx.v = out;
	ctx.drv = &cls_driver;
	cwd = cwd != NULL ? cwd : p->workspace;
	ctx.cwd = cwd != NULL ? xstrdup(cwd) : NULL;
	cls_source(&ctx, cmd, len, p->shell);
	if (out->ncmds == 0) {
		memset(&r, 0, sizeof r);
		cls_raise(&r, CLS_UNKNOWN, "unknown:empty", "the command is "
		    "empty");
		cls_add(&ctx, xstrdup(""), &r);
	}
	cls_dirs_release(&ctx);
	free(ctx.cwd);
	cls_vars_release(&ctx);
}

void
cls_classify_env(const struct cls_policy *p, struct cls_verdict *v,
    char *const *env)
{
	const char	*bad, *val;
	size_t		 n = 0, i;

	while (env != NULL && env[n] != NULL)
		n++;
	if (v->risk >= CLS_UNKNOWN)
		return;
	for (i = 0; i < n; i++) {
		val = strchr(env[i], '=');
		if (val != NULL && strchr(val, '[') != NULL &&
		    (strstr(val, "$(") != NULL || strchr(val, '`') != NULL))
			break;		/* "$((NAME))" would run it */
	}
	bad = cls_env_unsafe(p, env, n, 1, 0);
	if (bad == NULL && i == n)
		return;
	v->risk = CLS_UNKNOWN;
	free(v->rule);
	free(v->reason);
	if (bad != NULL) {
		v->rule = xstrdup("unknown:environment");
		xasprintf(&v->reason, "the item's env sets %.*s, which is not "
		    "on the environment's safe list (a program may read it to "
		    "decide what to run, load or write)",
		    (int)strcspn(bad, "="), bad);
	} else {
		v->rule = xstrdup("unknown:bash-eval");
		xasprintf(&v->reason, "the item's env value of %.*s holds a "
		    "subscript with a substitution, which bash arithmetic "
		    "would run", (int)strcspn(env[i], "="), env[i]);
	}
}

void
cls_verdict_release(struct cls_verdict *v)
{
	size_t	i;

	if (v == NULL)
		return;
	for (i = 0; i < v->ncmds; i++) {
		free(v->cmds[i].text);
		free(v->cmds[i].rule);
		free(v->cmds[i].reason);
	}
	free(v->cmds);
	free(v->rule);
	free(v->reason);
	free(v->outside);
	free(v->outside_reason);
	memset(v, 0, sizeof *v);
}

enum cls_action
cls_decide(const struct cls_verdict *v, enum cls_tier t, enum cls_sandbox sb,
    const char **rule, const char **reason)
{
	*rule = v->rule;
	*reason = v->reason;
	if (v->risk == CLS_BLOCKED)
		return (CLS_REFUSE);
	if (v->outside != NULL && sb != CLS_SANDBOX_OFF) {
		*rule = "sandbox";
		*reason = v->outside_reason;
		return (sb == CLS_SANDBOX_REFUSE ? CLS_REFUSE : CLS_HOLD);
	}
	if (t == CLS_TIER_ADMIN || (t == CLS_TIER_CONFINED &&
	    v->risk <= CLS_UNKNOWN) || (t == CLS_TIER_READ_WRITE &&
	    v->risk <= CLS_WRITE) || v->risk == CLS_READ_ONLY)
		return (CLS_RUN);
	return (CLS_HOLD);
}

/* 1 if rule decided one of example's commands. */
static int
cls_rule_decides(const struct cls_policy *p, const struct cls_rule *rule,
    const char *example)
{
	struct cls_verdict	 v;
	char			 name[CLS_RULE_MAX];
	size_t			 i;
	int			 hit = 0;

	snprintf(name, sizeof name, "rule:%s", rule->name);
	cls_classify(p, example, strlen(example), NULL, &v);
	for (i = 0; i < v.ncmds && !hit; i++)
		hit = strcmp(v.cmds[i].rule, name) == 0;
	cls_verdict_release(&v);
	return (hit);
}

/* 1 if rule's glob matches any simple command of example. */
static int
cls_rule_touches(const struct cls_rule *rule, const char *example)
{
	struct cls_policy	 one;
	struct cls_verdict	 v;
	char			 name[CLS_RULE_MAX];
	size_t			 i;
	int			 hit = 0;

	memset(&one, 0, sizeof one);
	one.rules = rule;
	one.nrules = 1;
	snprintf(name, sizeof name, "rule:%s", rule->name);
	cls_classify(&one, example, strlen(example), NULL, &v);
	for (i = 0; i < v.ncmds && !hit; i++)
		hit = strcmp(v.cmds[i].rule, name) == 0 ||
		    fnmatch(rule->glob, v.cmds[i].text, 0) == 0;
	cls_verdict_release(&v);
	return (hit);
}

int
cls_rules_check(const struct cls_policy *p, char **cause)
{
	const struct cls_rule	*rule;
	size_t			 i, j;

	*cause = NULL;
	for (i = 0; i < p->nrules; i++) {
		rule = &p->rules[i];
		for (j = 0; rule->match != NULL && rule->match[j] != NULL;
		    j++) {
			if (cls_rule_decides(p, rule, rule->match[j]))
				continue;
			xasprintf(cause, "rule %s: example \"%s\" is not "
			    "decided by it (%s)", rule->name, rule->match[j],
			    cls_rule_touches(rule, rule->match[j]) ?
			    "an earlier rule or a blocked built-in decides it" :
			    "its glob does not match");
			return (-1);
		}
		for (j = 0; rule->no_match != NULL && rule->no_match[j] !=
		    NULL; j++) {
			if (!cls_rule_touches(rule, rule->no_match[j]))
				continue;
			xasprintf(cause, "rule %s: counter-example \"%s\" "
			    "matches its glob \"%s\"", rule->name,
			    rule->no_match[j], rule->glob);
			return (-1);
		}
	}
	return (0);
}

enum cls_shell
cls_shell_of(const char *path)
{
	char		*rp = path != NULL ? realpath(path, NULL) : NULL;
	const char	*base = cls_base(rp != NULL ? rp : (path != NULL ? path :
			    ""));
	enum cls_shell	 shell = CLS_SHELL_ANY;

	if (strcmp(base, "bash") == 0)
		shell = CLS_SHELL_BASH;
	else if (cls_in(base, (const char *const[]){ "dash", "ash", "posh",
	    "busybox", NULL }))
		shell = CLS_SHELL_POSIX;
	free(rp);
	return (shell);
}
