/*
 * A recursive-descent shell parser that lists simple commands for the
 * policy. It never expands anything: expansions are kept as source text
 * and flagged. Anything uncertain sets complete = 0 through sp_fail; a
 * "stop" failure also unwinds every loop, so each loop either consumes a
 * byte or checks sp->stop.
 */

#include <stdlib.h>
#include <string.h>

#include "policy/shparse.h"
#include "logs/xmalloc.h"

struct sp_heredoc {
	size_t		 cmd;		/* index in out->cmds */
	size_t		 redir;		/* index in that command's redirs */
	int		 strip;		/* <<- */
	int		 quoted;	/* delimiter had quotes: body literal */
};

struct sp {
	const char		*s;
	size_t			 len;
	size_t			 pos;
	size_t			 base;		/* offset of s in src */
	struct sh_parse		*out;
	int			 depth;
	unsigned		 ctx;		/* SH_SUBSTITUTED|SH_SUBSHELL */
	unsigned		 pflags;	/* ! and time, next cmd */
	int			 posix;		/* SH_POSIX */
	int			 kwdepth;	/* compound commands around */
	int			 stop;
	int			 absurd;
	struct sp_heredoc	*hd;		/* pending here-docs */
	size_t			 nhd;
	size_t			 hdcap;
};

struct sp_word {
	char		*p;
	size_t		 len;
	size_t		 cap;
	unsigned	 flags;		/* SH_W_* */
	size_t		 qfirst;	/* first quoted byte, or SIZE_MAX */
	int		 started;
	int		 bracket;	/* unquoted [ seen */
	int		 brace;		/* unquoted { seen */
	int		 bracesep;	/* then , or .. */
};

/* What ends a list (sp_list's term), besides the end of input. */
#define SP_T_PAREN	0x01	/* ) */
#define SP_T_BRACE	0x02	/* } as a word of its own */
#define SP_T_KW		0x04	/* then else elif fi do done esac */
#define SP_T_CASE	0x08	/* ;; ;& ;;& */

static void	sp_list(struct sp *, int);
static void	sp_nested(struct sp *, unsigned);
static void	sp_dollar(struct sp *, struct sp_word *, int);
static void	sp_backtick(struct sp *, struct sp_word *, int);
static void	sp_dquote_body(struct sp *, struct sp_word *, int);

/* Marks the parse incomplete (first reason wins); stop also unwinds. */
static void
sp_fail(struct sp *sp, const char *why, int stop)
{
	if (sp->out->complete) {
		sp->out->complete = 0;
		sp->out->why = why;
		sp->out->where = sp->base + sp->pos;
	}
	if (stop)
		sp->stop = 1;
}

/* The byte at pos + off, or 0 past the end. */
static int
sp_at(const struct sp *sp, size_t off)
{
	if (sp->pos + off >= sp->len)
		return (0);
	return ((unsigned char)sp->s[sp->pos + off]);
}

/* 1 if c ends an unquoted word (0 is the end of input). */
static int
sp_meta(int c)
{
	return (c == 0 || strchr(" \t\n;&|<>()", c) != NULL);
}

/* Appends n bytes to a word, keeping it NUL-terminated. */
static void
sp_word_add(struct sp_word *w, const char *p, size_t n)
{
	if (w->len + n + 1 > w->cap) {
		w->cap = w->cap == 0 ? 32 : w->cap;
		while (w->len + n + 1 > w->cap)
			w->cap *= 2;
		w->p = xrealloc(w->p, w->cap);
	}
	memcpy(w->p + w->len, p, n);
	w->len += n;
	w->p[w->len] = '\0';
	w->started = 1;
}

/* Appends quoted bytes: they cannot be part of an assignment name. */
static void
sp_word_addq(struct sp_word *w, const char *p, size_t n)
{
	if (w->qfirst == (size_t)-1)
		w->qfirst = w->len;
	w->flags |= SH_W_QUOTED;
	sp_word_add(w, p, n);
}

/* Appends the raw source text of an expansion and flags it dynamic. */
static void
sp_word_adddyn(struct sp *sp, struct sp_word *w, size_t start)
{
	sp_word_addq(w, sp->s + start, sp->pos - start);
	w->flags |= SH_W_DYNAMIC;
}

/* Skips blanks, line continuations and comments; not newlines. */
static void
sp_blank(struct sp *sp)
{
	int	c;

	while (sp->pos < sp->len) {
		c = sp_at(sp, 0);
		if (c == ' ' || c == '\t')
			sp->pos++;
		else if (c == '\\' && sp_at(sp, 1) == '\n')
			sp->pos += 2;
		else if (c == '#') {
			while (sp->pos < sp->len && sp_at(sp, 0) != '\n')
				sp->pos++;
		} else
			break;
	}
}

/* Enters a nesting level; fails (absurd) beyond SH_PARSE_DEPTH. */
static int
sp_enter(struct sp *sp)
{
	if (sp->depth + sp->kwdepth >= SH_PARSE_DEPTH) {
		sp->absurd = 1;
		sp_fail(sp, "nested too deeply", 1);
		return (-1);
	}
	sp->depth++;
	return (0);
}

/* Adds an empty command with the current context and returns its index. */
static size_t
sp_cmd_new(struct sp *sp)
{
	struct sh_parse	*out = sp->out;
	struct sh_cmd	*cmd;

	if (out->ncmds == out->cmdcap) {
		out->cmdcap = out->cmdcap == 0 ? 8 : out->cmdcap * 2;
		out->cmds = xreallocarray(out->cmds, out->cmdcap,
		    sizeof *out->cmds);
	}
	cmd = &out->cmds[out->ncmds];
	memset(cmd, 0, sizeof *cmd);
	cmd->argcap = cmd->assigncap = 4;
	cmd->argv = xcalloc(cmd->argcap, sizeof *cmd->argv);
	cmd->argflags = xcalloc(cmd->argcap, sizeof *cmd->argflags);
	cmd->assigns = xcalloc(cmd->assigncap, sizeof *cmd->assigns);
	cmd->assignflags = xcalloc(cmd->assigncap, sizeof *cmd->assignflags);
	cmd->flags = sp->ctx | sp->pflags;
	cmd->depth = sp->depth;
	sp->pflags = 0;
	return (out->ncmds++);
}

/* Frees one command's contents. */
static void
sp_cmd_release(struct sh_cmd *cmd)
{
	size_t	i;

	for (i = 0; i < cmd->argc; i++)
		free(cmd->argv[i]);
	for (i = 0; i < cmd->nassigns; i++)
		free(cmd->assigns[i]);
	for (i = 0; i < cmd->nredirs; i++) {
		free(cmd->redirs[i].target);
		free(cmd->redirs[i].body);
	}
	free(cmd->argv);
	free(cmd->argflags);
	free(cmd->assigns);
	free(cmd->assignflags);
	free(cmd->redirs);
}

/* Appends s (taken) to a NULL-terminated array with parallel flags. */
static void
sp_push(char ***arr, unsigned **flags, size_t *n, size_t *cap, char *s,
    unsigned f)
{
	if (*n + 2 > *cap) {
		*cap *= 2;
		*arr = xreallocarray(*arr, *cap, sizeof **arr);
		*flags = xreallocarray(*flags, *cap, sizeof **flags);
	}
	(*arr)[*n] = s;
	(*flags)[*n] = f;
	(*n)++;
	(*arr)[*n] = NULL;
	(*flags)[*n] = 0;
}

/* Appends a redirection (target taken) and returns its index. */
static size_t
sp_redir_add(struct sh_cmd *cmd, int fd, enum sh_redir_op op, char *target,
    int dynamic)
{
	struct sh_redir	*r;

	if (cmd->nredirs == cmd->redircap) {
		cmd->redircap = cmd->redircap == 0 ? 2 : cmd->redircap * 2;
		cmd->redirs = xreallocarray(cmd->redirs, cmd->redircap,
		    sizeof *cmd->redirs);
	}
	r = &cmd->redirs[cmd->nredirs];
	r->fd = fd;
	r->op = op;
	r->target = target;
	r->dynamic = dynamic;
	r->body = NULL;
	if (dynamic)
		cmd->flags |= SH_DYNAMIC;
	return (cmd->nredirs++);
}

/* UTF-8 of code point v into buf; its length, or 0 if invalid. */
static size_t
sp_utf8(unsigned long v, char *buf)
{
	if (v < 0x80) {
		buf[0] = (char)v;
		return (1);
	}
	if (v < 0x800) {
		buf[0] = (char)(0xc0 | (v >> 6));
		buf[1] = (char)(0x80 | (v & 0x3f));
		return (2);
	}
	if (v < 0x10000) {
		buf[0] = (char)(0xe0 | (v >> 12));
		buf[1] = (char)(0x80 | ((v >> 6) & 0x3f));
		buf[2] = (char)(0x80 | (v & 0x3f));
		return (3);
	}
	if (v > 0x10ffff)
		return (0);
	buf[0] = (char)(0xf0 | (v >> 18));
	buf[1] = (char)(0x80 | ((v >> 12) & 0x3f));
	buf[2] = (char)(0x80 | ((v >> 6) & 0x3f));
	buf[3] = (char)(0x80 | (v & 0x3f));
	return (4);
}

/* One escape of $'...' at pos (a backslash) into buf: its length. */
static size_t
sp_ansi_escape(struct sp *sp, char *buf)
{
	static const char	 from[] = "abeEfnrtv\\'\"?";
	static const char	 to[] = "\a\b\033\033\f\n\r\t\v\\'\"?";
	const char		*p;
	unsigned long		 v;
	int			 c = sp_at(sp, 1), d, max, base, i;

	sp->pos += 2;
	if (c != 0 && (p = strchr(from, c)) != NULL) {
		buf[0] = to[p - from];
		return (1);
	}
	if (c == 'c' && sp_at(sp, 0) != 0) {
		buf[0] = (char)(sp_at(sp, 0) & 0x1f);
		sp->pos++;
		return (buf[0] != 0 ? 1 : 0);
	}
	base = c >= '0' && c <= '7' ? 8 : 16;
	max = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : base == 8 ? 2 : 0;
	if (max == 0) {			/* not an escape: kept as it is */
		buf[0] = '\\';
		buf[1] = (char)c;
		sp->pos -= c == 0 ? 1 : 0;
		return (c == 0 ? 1 : 2);
	}
	v = base == 8 ? (unsigned long)(c - '0') : 0;
	for (i = 0; i < max; i++) {
		d = sp_at(sp, 0);
		if (base == 8 && d >= '0' && d <= '7')
			v = v * 8 + (d - '0');
		else if (base == 16 && d >= '0' && d <= '9')
			v = v * 16 + (d - '0');
		else if (base == 16 && ((d | 0x20) >= 'a' && (d | 0x20) <= 'f'))
			v = v * 16 + ((d | 0x20) - 'a' + 10);
		else
			break;
		sp->pos++;
	}
	if (base == 16 && i == 0) {	/* "\x" with no digit */
		buf[0] = '\\';
		buf[1] = (char)c;
		return (2);
	}
	if (c == 'u' || c == 'U')
		return (sp_utf8(v, buf));
	buf[0] = (char)(v & 0xff);
	return (buf[0] != 0 ? 1 : 0);
}

/* $'...': bash decodes escapes; dash reads a $ and a quoted string. */
static void
sp_dollar_quote(struct sp *sp, struct sp_word *w)
{
	char	buf[8];
	size_t	n;

	sp->out->ops |= SH_OP_DIALECT;
	if (sp->posix) {
		sp_word_add(w, "$", 1);
		sp->pos++;
		return;
	}
	sp->pos += 2;
	sp_word_addq(w, "", 0);
	while (!sp->stop) {
		if (sp->pos >= sp->len) {
			sp_fail(sp, "unterminated $'", 1);
			return;
		}
		if (sp_at(sp, 0) == '\'') {
			sp->pos++;
			return;
		}
		if (sp_at(sp, 0) != '\\') {
			sp_word_addq(w, sp->s + sp->pos, 1);
			sp->pos++;
			continue;
		}
		if ((n = sp_ansi_escape(sp, buf)) == 0)
			sp_fail(sp, "NUL or invalid character in $'...'", 1);
		else
			sp_word_addq(w, buf, n);
	}
}

/*
 * The inside of (( )) or $(( )), pos just past the two (: substitutions
 * in it are listed. 1 at a closing "))" (pos past it); 0 when the
 * parentheses close otherwise ("((a) b)" is not arithmetic) or on a
 * failure (sp->stop).
 */
static int
sp_arith_body(struct sp *sp)
{
	struct sp_word	scratch;
	int		depth = 0, c, closed = 0;

	memset(&scratch, 0, sizeof scratch);
	scratch.qfirst = (size_t)-1;
	while (!sp->stop && sp->pos < sp->len) {
		c = sp_at(sp, 0);
		if (c == ')' && depth == 0) {
			closed = sp_at(sp, 1) == ')' ? 1 : -1;
			sp->pos += closed == 1 ? 2 : 0;
			break;
		}
		if (c == '(' || c == ')') {
			depth += c == '(' ? 1 : -1;
			sp->pos++;
		} else if (c == '$')
			sp_dollar(sp, &scratch, 1);
		else if (c == '`')
			sp_backtick(sp, &scratch, 1);
		else if (c == '"') {
			sp->pos++;
			sp_dquote_body(sp, &scratch, 0);
		} else if (c == '\\' && sp_at(sp, 1) == '\n')
			sp->pos += 2;
		else if (c == '\'' || c == '\\')
			sp_fail(sp, "quote in arithmetic", 1);
		else
			sp->pos++;
	}
	free(scratch.p);
	if (closed == 0 && !sp->stop)
		sp_fail(sp, "unterminated ((", 1);
	return (closed == 1);
}

/*
 * What "((" at pos (its first parenthesis) opens, decided as bash does
 * by where its parentheses close: 1 if the inner one closes right before
 * the outer ("...))": arithmetic), 0 if not (a subshell in a subshell or
 * a substitution), -1 if they never close. A scan of the text (quotes and
 * escapes skipped), so deciding costs no parse: parsing twice to find
 * out would double the work at every level of nesting.
 */
static int
sp_arith_ahead(const struct sp *sp, size_t pos)
{
	size_t	i, inner = 0;
	int	depth = 0, c, q = 0;

	for (i = pos; i < sp->len; i++) {
		c = (unsigned char)sp->s[i];
		if (q != 0) {
			if (c == '\\' && q != '\'')
				i++;
			else if (c == q)
				q = 0;
			continue;
		}
		if (c == '\\')
			i++;
		else if (c == '\'' || c == '"' || c == '`')
			q = c;
		else if (c == '(')
			depth++;
		else if (c == ')') {
			if (--depth == 1)
				inner = i;
			else if (depth == 0)
				return (inner == i - 1 ? 1 : 0);
		}
	}
	return (-1);
}

/* $(( ... )): arithmetic; "$((a) b)" is a substitution of a subshell. */
static void
sp_arith(struct sp *sp, struct sp_word *w, size_t start)
{
	switch (sp_arith_ahead(sp, start + 1)) {
	case 1:
		sp->pos = start + 3;
		if (sp_arith_body(sp))
			sp_word_adddyn(sp, w, start);
		else if (!sp->stop)
			sp_fail(sp, "ambiguous $((", 1);
		break;
	case 0:
		sp->pos = start + 2;
		sp_nested(sp, SH_SUBSTITUTED);
		if (!sp->stop)
			sp_word_adddyn(sp, w, start);
		break;
	default:
		sp->pos = start;
		sp_fail(sp, "unterminated $((", 1);
		break;
	}
}

/* ${...}: nested ${ } only; anything that could run a command fails. */
static void
sp_brace_param(struct sp *sp, struct sp_word *w, size_t start)
{
	int	depth = 1, c;

	sp->pos = start + 2;
	while (sp->pos < sp->len && depth > 0) {
		c = sp_at(sp, 0);
		if (c == '$' && sp_at(sp, 1) == '{') {
			depth++;
			sp->pos++;
		} else if (c == '}')
			depth--;
		else if (c == '`' || c == '\'' || c == '"' || c == '\\' ||
		    (c == '$' && sp_at(sp, 1) == '(')) {
			sp_fail(sp, "quote or substitution in ${}", 1);
			return;
		}
		sp->pos++;
	}
	if (depth > 0) {
		sp_fail(sp, "unterminated ${", 1);
		return;
	}
	sp_word_adddyn(sp, w, start);
}

/*
 * A nested command list that ends at ')': $( ), <( ), >( ) and ( ).
 * pos is just past the '('; on success it is just past the ')'.
 */
static void
sp_nested(struct sp *sp, unsigned ctx)
{
	unsigned	saved = sp->ctx;
	size_t		nhd = sp->nhd;

	if (sp_enter(sp) == -1)
		return;
	sp->ctx |= ctx;
	sp_list(sp, SP_T_PAREN);
	sp->ctx = saved;
	sp->depth--;
	if (sp->stop)
		return;
	if (sp_at(sp, 0) != ')') {
		sp_fail(sp, "unterminated (", 1);
		return;
	}
	if (sp->nhd > nhd) {
		sp_fail(sp, "here-doc body outside its substitution", 1);
		return;
	}
	sp->pos++;
}

/* Parses $... at pos; in_dq: inside "..." or an unquoted here-doc body. */
static void
sp_dollar(struct sp *sp, struct sp_word *w, int in_dq)
{
	size_t	start = sp->pos;
	int	c = sp_at(sp, 1);

	if (c == '(' && sp_at(sp, 2) == '(')
		sp_arith(sp, w, start);
	else if (c == '(') {
		sp->pos += 2;
		sp_nested(sp, SH_SUBSTITUTED);
		if (!sp->stop)
			sp_word_adddyn(sp, w, start);
	} else if (c == '{')
		sp_brace_param(sp, w, start);
	else if (c == '[')
		sp_fail(sp, "$[ ] arithmetic", 1);
	else if (c == '\'' && !in_dq)
		sp_dollar_quote(sp, w);
	else if (c == '"' && !in_dq) {
		sp->out->ops |= SH_OP_DIALECT;	/* bash: "..."; dash: $"..." */
		if (sp->posix)
			sp_word_add(w, "$", 1);
		sp->pos++;
	}
	else if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
		sp->pos++;
		while ((c = sp_at(sp, 0)) == '_' || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
			sp->pos++;
		sp_word_adddyn(sp, w, start);
	} else if (c != 0 && strchr("0123456789@*#?-$!", c) != NULL) {
		sp->pos += 2;
		sp_word_adddyn(sp, w, start);
	} else {
		sp_word_add(w, "$", 1);
		sp->pos++;
	}
}

/* Parses a string of its own (backtick or here-doc body) as a nested sp. */
static void
sp_sub(struct sp *sp, const char *s, size_t len, size_t base, int heredoc)
{
	struct sp	sub;
	struct sp_word	w;

	memset(&sub, 0, sizeof sub);
	memset(&w, 0, sizeof w);
	w.qfirst = (size_t)-1;
	sub.s = s;
	sub.len = len;
	sub.base = base;
	sub.out = sp->out;
	sub.depth = sp->depth;
	sub.kwdepth = sp->kwdepth;
	sub.posix = sp->posix;
	sub.ctx = sp->ctx;
	if (heredoc)
		sp_dquote_body(&sub, &w, 1);
	else if (sp_enter(&sub) == 0) {
		sub.ctx |= SH_SUBSTITUTED;
		sp_list(&sub, 0);
		if (!sub.stop && sub.nhd > 0)
			sp_fail(&sub, "unterminated here-doc", 1);
	}
	if (sub.stop)
		sp->stop = 1;
	if (sub.absurd)
		sp->absurd = 1;
	free(sub.hd);
	free(w.p);
}

/* `...`: \` \\ \$ (and \" inside "...") are unescaped, then parsed. */
static void
sp_backtick(struct sp *sp, struct sp_word *w, int in_dq)
{
	struct sp_word	inner;
	size_t		start = sp->pos;
	int		c, n;

	memset(&inner, 0, sizeof inner);
	sp->pos++;
	for (;;) {
		c = sp_at(sp, 0);
		if (sp->pos >= sp->len) {
			sp_fail(sp, "unterminated `", 1);
			free(inner.p);
			return;
		}
		if (c == '`')
			break;
		n = sp_at(sp, 1);
		if (c == '\\' && (n == '`' || n == '\\' || n == '$' ||
		    (in_dq && n == '"')))
			sp->pos++;
		sp_word_add(&inner, sp->s + sp->pos, 1);
		sp->pos++;
	}
	sp->pos++;
	sp_sub(sp, inner.p != NULL ? inner.p : "", inner.len,
	    sp->base + start + 1, 0);
	free(inner.p);
	if (!sp->stop)
		sp_word_adddyn(sp, w, start);
}

/*
 * The inside of "..." (pos after the quote; consumes the closing one) or,
 * with heredoc, a whole unquoted here-doc body, where " is plain text.
 */
static void
sp_dquote_body(struct sp *sp, struct sp_word *w, int heredoc)
{
	int	c, n;

	w->started = 1;
	if (w->qfirst == (size_t)-1)
		w->qfirst = w->len;
	w->flags |= SH_W_QUOTED;
	while (!sp->stop) {
		if (sp->pos >= sp->len) {
			if (!heredoc)
				sp_fail(sp, "unterminated \"", 1);
			return;
		}
		c = sp_at(sp, 0);
		n = sp_at(sp, 1);
		if (c == '"' && !heredoc) {
			sp->pos++;
			return;
		}
		if (c == '\\' && n == '\n')
			sp->pos += 2;
		else if (c == '\\' && (n == '$' || n == '`' || n == '\\' ||
		    (n == '"' && !heredoc))) {
			sp_word_addq(w, sp->s + sp->pos + 1, 1);
			sp->pos += 2;
		} else if (c == '$')
			sp_dollar(sp, w, 1);
		else if (c == '`')
			sp_backtick(sp, w, 1);
		else {
			sp_word_addq(w, sp->s + sp->pos, 1);
			sp->pos++;
		}
	}
}

/* Tracks unquoted glob and brace-expansion characters. */
static void
sp_word_glob(struct sp_word *w, int c, int next)
{
	if (c == '*' || c == '?' || (c == ']' && w->bracket) ||
	    (c == '}' && w->brace && w->bracesep))
		w->flags |= SH_W_GLOB|SH_W_DYNAMIC;
	else if (c == '[')
		w->bracket = 1;
	else if (c == '{')
		w->brace = 1;
	else if (w->brace && (c == ',' || (c == '.' && next == '.')))
		w->bracesep = 1;
}

/*
 * Reads one word at pos into w (which must be zeroed, qfirst SIZE_MAX).
 * w->started is 0 if pos is at a metacharacter.
 */
static void
sp_word(struct sp *sp, struct sp_word *w)
{
	size_t	start;
	int	c, n;

	while (!sp->stop && sp->pos < sp->len) {
		c = sp_at(sp, 0);
		n = sp_at(sp, 1);
		if ((c == '<' || c == '>') && n == '(' && !w->started) {
			start = sp->pos;
			sp->pos += 2;
			sp_nested(sp, SH_SUBSTITUTED);
			if (!sp->stop)
				sp_word_adddyn(sp, w, start);
			continue;
		}
		if (sp_meta(c))
			break;
		if (c == '\\' && n == '\n')
			sp->pos += 2;
		else if (c == '\\') {
			if (sp->pos + 1 >= sp->len) {
				sp_fail(sp, "trailing backslash", 1);
				break;
			}
			sp_word_addq(w, sp->s + sp->pos + 1, 1);
			sp->pos += 2;
		} else if (c == '\'') {
			start = ++sp->pos;
			while (sp->pos < sp->len && sp_at(sp, 0) != '\'')
				sp->pos++;
			if (sp->pos >= sp->len) {
				sp_fail(sp, "unterminated '", 1);
				break;
			}
			w->started = 1;
			sp_word_addq(w, sp->s + start, sp->pos - start);
			sp->pos++;
		} else if (c == '"') {
			sp->pos++;
			sp_dquote_body(sp, w, 0);
		} else if (c == '$')
			sp_dollar(sp, w, 0);
		else if (c == '`')
			sp_backtick(sp, w, 0);
		else {
			if (c == '~' && (w->len == 0 ||
			    w->p[w->len - 1] == '=' || w->p[w->len - 1] == ':'))
				w->flags |= SH_W_DYNAMIC;
			sp_word_glob(w, c, n);
			sp_word_add(w, sp->s + sp->pos, 1);
			sp->pos++;
		}
	}
}

/* 1 if w is NAME=... or NAME+=... with NAME unquoted. */
static int
sp_is_assign(const struct sp_word *w)
{
	size_t	i;
	int	c;

	for (i = 0; i < w->len && i < w->qfirst; i++) {
		c = (unsigned char)w->p[i];
		if (c == '=' || (c == '+' && i + 1 < w->len &&
		    w->p[i + 1] == '=' && i + 1 < w->qfirst))
			return (i > 0);
		if (!(c == '_' || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')))
			return (0);
	}
	return (0);
}

/* Reads the body of every pending here-doc; pos is after a newline. */
static void
sp_heredocs(struct sp *sp)
{
	struct sp_heredoc	*hd;
	struct sh_redir		*r;
	struct sp_word		 body;
	size_t			 i, eol, bol, dlen, bstart;
	const char		*delim;
	int			 found;

	for (i = 0; i < sp->nhd && !sp->stop; i++) {
		hd = &sp->hd[i];
		if (hd->cmd >= sp->out->ncmds ||
		    hd->redir >= sp->out->cmds[hd->cmd].nredirs) {
			sp_fail(sp, "lost here-doc", 1); /* can't happen */
			break;
		}
		r = &sp->out->cmds[hd->cmd].redirs[hd->redir];
		delim = r->target;
		dlen = strlen(delim);
		memset(&body, 0, sizeof body);
		bstart = sp->pos;
		found = 0;
		while (sp->pos < sp->len) {
			bol = sp->pos;
			if (hd->strip)
				while (bol < sp->len && sp->s[bol] == '\t')
					bol++;
			eol = bol;
			while (eol < sp->len && sp->s[eol] != '\n')
				eol++;
			sp->pos = eol < sp->len ? eol + 1 : eol;
			if (eol - bol == dlen && memcmp(sp->s + bol, delim,
			    dlen) == 0) {
				found = 1;
				break;
			}
			sp_word_add(&body, sp->s + bol, sp->pos - bol);
			if (eol == sp->len)
				sp_word_add(&body, "\n", 1);
		}
		r->body = body.p != NULL ? body.p : xstrdup("");
		if (!found) {
			sp_fail(sp, "here-doc without its delimiter line", 1);
			break;
		}
		if (!hd->quoted && strpbrk(r->body, "$`\\") != NULL) {
			r->dynamic = 1;
			sp->out->cmds[hd->cmd].flags |= SH_DYNAMIC;
			sp_sub(sp, r->body, strlen(r->body), bstart, 1);
		}
	}
	sp->nhd = 0;
}

/* Consumes a newline token and reads here-doc bodies after it. */
static void
sp_newline(struct sp *sp)
{
	sp->pos++;
	if (sp->nhd > 0)
		sp_heredocs(sp);
}

/* Skips blanks and newlines where a command must follow (after | && ||). */
static void
sp_linebreak(struct sp *sp)
{
	for (;;) {
		sp_blank(sp);
		if (sp->stop || sp_at(sp, 0) != '\n' || sp->pos >= sp->len)
			return;
		sp_newline(sp);
	}
}

/* 1 if pos starts a redirection: [digits](< or >), or &>. */
static int
sp_is_redir(const struct sp *sp)
{
	size_t	i = 0;
	int	c;

	while ((c = sp_at(sp, i)) >= '0' && c <= '9')
		i++;
	if (c == '<' || c == '>')
		return (sp_at(sp, i + 1) != '(' || i > 0);
	return (i == 0 && c == '&' && sp_at(sp, 1) == '>');
}

/* Parses one redirection onto command ci. */
static void
sp_redir(struct sp *sp, size_t ci)
{
	struct sp_word		 w;
	struct sp_heredoc	*hd;
	enum sh_redir_op	 op;
	int			 fd = -2, c, n, strip = 0;
	size_t			 ri;

	while ((c = sp_at(sp, 0)) >= '0' && c <= '9') {
		if (fd > 99999) {
			sp_fail(sp, "file descriptor too large", 1);
			return;
		}
		fd = (fd < 0 ? 0 : fd * 10) + (c - '0');
		sp->pos++;
	}
	c = sp_at(sp, 0);
	n = sp_at(sp, 1);
	sp->pos += 2;
	if (c == '&') {
		op = SH_R_OUT_ERR;
		if (sp_at(sp, 0) == '>') {
			op = SH_R_APPEND_ERR;
			sp->pos++;
		}
	} else if (c == '<' && n == '<' && sp_at(sp, 0) == '<') {
		op = SH_R_HERESTRING;
		sp->pos++;
	} else if (c == '<' && n == '<') {
		op = SH_R_HEREDOC;
		if (sp_at(sp, 0) == '-') {
			strip = 1;
			sp->pos++;
		}
	} else if (c == '<' && n == '&')
		op = SH_R_DUP_IN;
	else if (c == '<' && n == '>')
		op = SH_R_RDWR;
	else if (c == '>' && n == '>')
		op = SH_R_APPEND;
	else if (c == '>' && n == '|')
		op = SH_R_CLOBBER;
	else if (c == '>' && n == '&')
		op = SH_R_DUP_OUT;
	else {
		op = c == '<' ? SH_R_IN : SH_R_OUT;
		sp->pos--;
	}
	if (fd == -2)
		fd = (c == '<') ? 0 : (c == '&' ? -1 : 1);
	else if (c == '&')
		fd = -1;
	sp_blank(sp);
	memset(&w, 0, sizeof w);
	w.qfirst = (size_t)-1;
	sp_word(sp, &w);
	if (sp->stop) {
		free(w.p);
		return;
	}
	if (!w.started) {
		free(w.p);
		sp_fail(sp, "redirection without a target", 1);
		return;
	}
	ri = sp_redir_add(&sp->out->cmds[ci], fd, op,
	    w.p != NULL ? w.p : xstrdup(""), (w.flags & SH_W_DYNAMIC) != 0);
	if (op != SH_R_HEREDOC)
		return;
	if (sp->nhd == sp->hdcap) {
		sp->hdcap = sp->hdcap == 0 ? 4 : sp->hdcap * 2;
		sp->hd = xreallocarray(sp->hd, sp->hdcap, sizeof *sp->hd);
	}
	hd = &sp->hd[sp->nhd++];
	hd->cmd = ci;
	hd->redir = ri;
	hd->strip = strip;
	hd->quoted = (w.flags & SH_W_QUOTED) != 0;
	sp->out->cmds[ci].redirs[ri].dynamic = 0; /* the delimiter is text */
}

/* Files word w into command ci as an assignment or an argument. */
static void
sp_cmd_word(struct sp *sp, size_t ci, struct sp_word *w)
{
	struct sh_cmd	*cmd = &sp->out->cmds[ci];
	char		*s = w->p != NULL ? w->p : xstrdup("");

	if (w->flags & SH_W_DYNAMIC)
		cmd->flags |= SH_DYNAMIC;
	if (w->flags & SH_W_GLOB)
		cmd->flags |= SH_GLOB;
	if (cmd->argc == 0 && sp_is_assign(w))
		sp_push(&cmd->assigns, &cmd->assignflags, &cmd->nassigns,
		    &cmd->assigncap, s, w->flags);
	else
		sp_push(&cmd->argv, &cmd->argflags, &cmd->argc, &cmd->argcap,
		    s, w->flags);
}

/* Removes command ci if it came out empty (a failed first word). */
static void
sp_cmd_drop_empty(struct sp *sp, size_t ci)
{
	struct sh_parse	*out = sp->out;
	struct sh_cmd	*cmd = &out->cmds[ci];

	if (cmd->argc > 0 || cmd->nassigns > 0 || cmd->nredirs > 0)
		return;
	sp_cmd_release(cmd);
	memmove(cmd, cmd + 1, (out->ncmds - ci - 1) * sizeof *cmd);
	out->ncmds--;
}

/* Flags commands [from, ncmds) (at depth, unless depth is -1). */
static void
sp_mark(struct sp *sp, size_t from, int depth, unsigned flags,
    unsigned pipepos)
{
	for (; from < sp->out->ncmds; from++) {
		if (depth != -1 && sp->out->cmds[from].depth != depth)
			continue;
		sp->out->cmds[from].flags |= flags;
		if (pipepos > 0)
			sp->out->cmds[from].pipepos = pipepos;
	}
}

/* Appends word s (taken) to command ci's argv, its flags to the command's. */
static void
sp_arg(struct sp *sp, size_t ci, char *s, unsigned wflags)
{
	struct sh_cmd	*cmd = &sp->out->cmds[ci];

	if (wflags & SH_W_DYNAMIC)
		cmd->flags |= SH_DYNAMIC;
	if (wflags & SH_W_GLOB)
		cmd->flags |= SH_GLOB;
	sp_push(&cmd->argv, &cmd->argflags, &cmd->argc, &cmd->argcap,
	    s != NULL ? s : xstrdup(""), wflags);
}

/* 1 if pos is at the reserved word kw (a word of its own). */
static int
sp_at_word(const struct sp *sp, const char *kw)
{
	size_t	n = strlen(kw);

	return (sp->pos + n <= sp->len && memcmp(sp->s + sp->pos, kw, n) ==
	    0 && sp_meta(sp_at(sp, n)));
}

/* 1 if w is a shell name: [A-Za-z_][A-Za-z0-9_]*, unquoted. */
static int
sp_is_name(const struct sp_word *w)
{
	size_t	i;
	int	c;

	if (w->p == NULL || w->flags != 0)
		return (0);
	for (i = 0; i < w->len; i++) {
		c = (unsigned char)w->p[i];
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' &&
		    c <= 'Z') || (i > 0 && c >= '0' && c <= '9')))
			return (0);
	}
	return (w->len > 0);
}

/* Reads one word at pos into a fresh w; 0 if there is none. */
static int
sp_read_word(struct sp *sp, struct sp_word *w)
{
	memset(w, 0, sizeof *w);
	w->qfirst = (size_t)-1;
	sp_blank(sp);
	sp_word(sp, w);
	if (!sp->stop && w->started)
		return (1);
	free(w->p);
	w->p = NULL;
	return (0);
}

/* bash's a=(x y z): the words up to ) are the value. */
static void
sp_array(struct sp *sp, size_t ci)
{
	struct sh_cmd	*cmd;
	struct sp_word	 w;
	char		*val;
	unsigned	 f = SH_W_QUOTED;

	sp->out->ops |= SH_OP_DIALECT;
	if (sp->posix) {
		sp_fail(sp, "array assignment in sh", 1);
		return;
	}
	sp->pos++;
	for (;;) {
		sp_linebreak(sp);
		if (sp->stop || sp_at(sp, 0) == ')' || sp->pos >= sp->len)
			break;
		if (!sp_read_word(sp, &w)) {
			sp_fail(sp, "syntax error in array", 1);
			break;
		}
		f |= w.flags;
		free(w.p);
	}
	if (sp->stop)
		return;
	if (sp_at(sp, 0) != ')') {
		sp_fail(sp, "unterminated array", 1);
		return;
	}
	sp->pos++;
	cmd = &sp->out->cmds[ci];
	xasprintf(&val, "%s(...)", cmd->assigns[cmd->nassigns - 1]);
	free(cmd->assigns[cmd->nassigns - 1]);
	cmd->assigns[cmd->nassigns - 1] = val;
	cmd->assignflags[cmd->nassigns - 1] |= f;
	if (f & SH_W_DYNAMIC)
		cmd->flags |= SH_DYNAMIC;
}

static void	sp_command(struct sp *);
static int	sp_enter_kw(struct sp *);

/* NAME() BODY: the name's command becomes the definition. */
static void
sp_funcdef(struct sp *sp, size_t ci)
{
	struct sh_cmd	*cmd = &sp->out->cmds[ci];
	unsigned	 saved = sp->ctx;

	if (cmd->argc != 1 || cmd->nassigns > 0 || cmd->nredirs > 0 ||
	    (cmd->argflags[0] & (SH_W_DYNAMIC|SH_W_QUOTED))) {
		sp_fail(sp, "syntax error near (", 1);
		return;
	}
	sp->pos++;
	sp_blank(sp);
	if (sp_at(sp, 0) != ')') {
		sp_fail(sp, "syntax error in a function definition", 1);
		return;
	}
	sp->pos++;
	cmd->kind = SH_K_FUNC;
	sp->out->cmds[ci].argflags[0] = 0;
	sp_linebreak(sp);
	if (sp->stop || sp_enter_kw(sp) == -1)
		return;
	sp->ctx |= SH_IN_FUNC;
	sp_command(sp);
	sp->kwdepth--;
	sp->ctx = saved;
}

/* A simple command: assignments, words and redirections in any order. */
static void
sp_simple(struct sp *sp)
{
	struct sp_word	w;
	size_t		ci, before;
	int		c;

	ci = sp_cmd_new(sp);
	while (!sp->stop) {
		before = sp->pos;
		sp_blank(sp);
		c = sp_at(sp, 0);
		if (sp->pos >= sp->len || c == '\n' || c == ';' || c == '|' ||
		    c == ')' || (c == '&' && sp_at(sp, 1) != '>'))
			break;
		if (c == '(') {
			if (sp->pos == before && sp->out->cmds[ci].argc == 0 &&
			    sp->out->cmds[ci].nassigns > 0 &&
			    sp->s[sp->pos - 1] == '=')
				sp_array(sp, ci);
			else {
				sp_funcdef(sp, ci);
				break;
			}
			continue;
		}
		if (sp_is_redir(sp)) {
			sp_redir(sp, ci);
			continue;
		}
		memset(&w, 0, sizeof w);
		w.qfirst = (size_t)-1;
		sp_word(sp, &w);
		if (!w.started) {	/* only after a failure */
			free(w.p);
			break;
		}
		sp_cmd_word(sp, ci, &w);
	}
	sp_cmd_drop_empty(sp, ci);
}

/* Reserved words at command start. */
enum sp_kw {
	SP_KW_NONE,
	SP_KW_PREFIX,		/* ! time */
	SP_KW_IF,
	SP_KW_LOOP,		/* while until */
	SP_KW_FOR,		/* for select */
	SP_KW_CASE,
	SP_KW_FUNCTION,
	SP_KW_COPROC,
	SP_KW_COND,		/* [[ */
	SP_KW_LBRACE,
	SP_KW_CLOSE,		/* then else elif fi do done esac } ]] */
};

/* Peeks an unquoted reserved word at pos; *n is its length. */
static enum sp_kw
sp_keyword(const struct sp *sp, size_t *n)
{
	static const struct {
		const char	*word;
		enum sp_kw	 kw;
		int		 bash;		/* only in bash */
	} kws[] = {
		{ "!", SP_KW_PREFIX, 0 }, { "time", SP_KW_PREFIX, 1 },
		{ "if", SP_KW_IF, 0 }, { "while", SP_KW_LOOP, 0 },
		{ "until", SP_KW_LOOP, 0 }, { "for", SP_KW_FOR, 0 },
		{ "select", SP_KW_FOR, 1 }, { "case", SP_KW_CASE, 0 },
		{ "function", SP_KW_FUNCTION, 1 },
		{ "coproc", SP_KW_COPROC, 1 }, { "[[", SP_KW_COND, 1 },
		{ "{", SP_KW_LBRACE, 0 }, { "then", SP_KW_CLOSE, 0 },
		{ "else", SP_KW_CLOSE, 0 }, { "elif", SP_KW_CLOSE, 0 },
		{ "fi", SP_KW_CLOSE, 0 }, { "do", SP_KW_CLOSE, 0 },
		{ "done", SP_KW_CLOSE, 0 }, { "esac", SP_KW_CLOSE, 0 },
		{ "}", SP_KW_CLOSE, 0 }, { "]]", SP_KW_CLOSE, 1 },
	};
	size_t	i, len;
	int	c;

	for (len = 0; (c = sp_at(sp, len)) != 0 && len < 9; len++) {
		if (!((c >= 'a' && c <= 'z') || c == '!' || c == '[' ||
		    c == ']' || c == '{' || c == '}'))
			break;
	}
	if (len == 0 || !sp_meta(sp_at(sp, len)))
		return (SP_KW_NONE);
	for (i = 0; i < sizeof kws / sizeof kws[0]; i++) {
		if (strlen(kws[i].word) == len &&
		    memcmp(kws[i].word, sp->s + sp->pos, len) == 0) {
			if (kws[i].bash && sp->posix)
				return (SP_KW_NONE);
			*n = len;
			return (kws[i].kw);
		}
	}
	return (SP_KW_NONE);
}

/* Enters a compound command's body; fails beyond SH_PARSE_DEPTH. */
static int
sp_enter_kw(struct sp *sp)
{
	if (sp->depth + sp->kwdepth >= SH_PARSE_DEPTH) {
		sp->absurd = 1;
		sp_fail(sp, "nested too deeply", 1);
		return (-1);
	}
	sp->kwdepth++;
	return (0);
}

/* Consumes reserved word kw where a list stopped; fails without it. */
static int
sp_expect(struct sp *sp, const char *kw)
{
	if (sp->stop)
		return (-1);
	if (!sp_at_word(sp, kw)) {
		sp_fail(sp, kw[0] == 'd' && kw[1] == 'o' && kw[2] == '\0' ?
		    "missing do" : "unterminated compound command", 1);
		return (-1);
	}
	sp->pos += strlen(kw);
	return (0);
}

/* A list inside a compound command: its commands get SH_CONTROL. */
static void
sp_body(struct sp *sp, int term)
{
	unsigned	saved = sp->ctx;

	sp->ctx |= SH_CONTROL;
	sp_list(sp, term);
	sp->ctx = saved;
}

/* if LIST then LIST [elif LIST then LIST]... [else LIST] fi */
static void
sp_if(struct sp *sp)
{
	for (;;) {
		sp_body(sp, SP_T_KW);
		if (sp_expect(sp, "then") == -1)
			return;
		sp_body(sp, SP_T_KW);
		if (sp->stop)
			return;
		if (sp_at_word(sp, "elif")) {
			sp->pos += 4;
			continue;
		}
		if (sp_at_word(sp, "else")) {
			sp->pos += 4;
			sp_body(sp, SP_T_KW);
		}
		sp_expect(sp, "fi");
		return;
	}
}

/* 1 if the commands [from, ncmds) are one that always succeeds (fails). */
static int
sp_endless(struct sp *sp, size_t from, int until)
{
	const struct sh_cmd	*c;
	const char		*name;

	if (sp->out->ncmds != from + 1)
		return (0);
	c = &sp->out->cmds[from];
	if (c->kind != SH_K_SIMPLE || c->argc == 0 || c->nredirs > 0 ||
	    (c->flags & SH_NEGATED))
		return (0);
	name = strrchr(c->argv[0], '/') != NULL ? strrchr(c->argv[0], '/') +
	    1 : c->argv[0];		/* /bin/true is true */
	if (until)
		return (c->argc == 1 && strcmp(name, "false") == 0);
	return ((c->argc == 1 && (strcmp(name, ":") == 0 ||
	    strcmp(name, "true") == 0)) || (c->argc == 3 &&
	    strcmp(c->argv[0], "[") == 0 && strcmp(c->argv[2], "]") == 0 &&
	    !(c->argflags[1] & SH_W_DYNAMIC)) || (c->argc == 2 &&
	    strcmp(c->argv[0], "test") == 0 &&
	    !(c->argflags[1] & SH_W_DYNAMIC)));
}

/* do LIST done, every loop's body; endless marks it SH_ENDLESS. */
static void
sp_do_done(struct sp *sp, int endless)
{
	size_t	body;

	if (sp_expect(sp, "do") == -1)
		return;
	body = sp->out->ncmds;
	sp_body(sp, SP_T_KW);
	if (endless)
		sp_mark(sp, body, -1, SH_ENDLESS, 0);
	sp_expect(sp, "done");
}

/* while/until LIST do LIST done */
static void
sp_loop(struct sp *sp, int until)
{
	size_t	first = sp->out->ncmds;

	sp_body(sp, SP_T_KW);
	sp_do_done(sp, !sp->stop && sp_endless(sp, first, until));
}

/* The words of for/select after "in", up to ; or a newline. */
static void
sp_for_words(struct sp *sp, size_t ci)
{
	struct sp_word	w;
	int		c;

	for (;;) {
		sp_blank(sp);
		c = sp_at(sp, 0);
		if (sp->stop || sp->pos >= sp->len || c == ';' || c == '\n')
			return;
		if (sp_meta(c)) {
			sp_fail(sp, "syntax error in a for list", 1);
			return;
		}
		if (!sp_read_word(sp, &w))
			return;
		sp_arg(sp, ci, w.p, w.flags);
	}
}

/*
 * for (( E1; E2; E3 )) (bash), pos at the first (. 1 if E2 is empty (the
 * loop never ends by its condition).
 */
static int
sp_for_arith(struct sp *sp)
{
	size_t	ci = sp_cmd_new(sp), start = sp->pos + 2;
	char	*text, *semi;
	int	 endless;

	sp->out->cmds[ci].kind = SH_K_ARITH;
	sp->pos += 2;
	if (!sp_arith_body(sp)) {
		if (!sp->stop)
			sp_fail(sp, "syntax error in for ((", 1);
		return (0);
	}
	text = xstrndup(sp->s + start, sp->pos - 2 - start);
	semi = strchr(text, ';');
	endless = semi != NULL && semi[1 + strspn(semi + 1, " \t\n")] == ';';
	sp_arg(sp, ci, text, strpbrk(text, "$`") != NULL ? SH_W_DYNAMIC : 0);
	sp_blank(sp);
	if (sp_at(sp, 0) == ';')
		sp->pos++;
	sp_linebreak(sp);
	return (endless);
}

/* for/select NAME [in WORDS] ; do LIST done */
static void
sp_for(struct sp *sp, int select)
{
	struct sp_word	w;
	size_t		ci;
	int		c, endless = 0;

	if (select)
		sp->out->ops |= SH_OP_DIALECT;
	sp_blank(sp);
	if (!sp->posix && !select && sp_at(sp, 0) == '(' &&
	    sp_at(sp, 1) == '(') {
		sp->out->ops |= SH_OP_DIALECT;
		endless = sp_for_arith(sp);
	} else {
		ci = sp_cmd_new(sp);
		sp->out->cmds[ci].kind = select ? SH_K_SELECT : SH_K_FOR;
		if (!sp_read_word(sp, &w) || !sp_is_name(&w)) {
			free(w.p);
			sp_fail(sp, "for without a name", 1);
			return;
		}
		sp_arg(sp, ci, w.p, 0);
		sp_linebreak(sp);
		if (sp_at_word(sp, "in")) {
			sp->pos += 2;
			sp_for_words(sp, ci);
		} else
			sp->out->cmds[ci].flags |= SH_DYNAMIC;	/* "$@" */
		sp_blank(sp);
		c = sp_at(sp, 0);
		if (c == ';')
			sp->pos++;
		else if (c == '\n')
			sp_newline(sp);
		sp_linebreak(sp);
	}
	sp_do_done(sp, endless);
}

/* One case item's patterns: [(] PATTERN [| PATTERN]... ) */
static void
sp_case_patterns(struct sp *sp, size_t ci)
{
	struct sp_word	w;

	sp_blank(sp);
	if (sp_at(sp, 0) == '(')
		sp->pos++;
	for (;;) {
		if (!sp_read_word(sp, &w)) {
			sp_fail(sp, "case item without a pattern", 1);
			return;
		}
		sp_arg(sp, ci, w.p, w.flags & ~SH_W_GLOB);
		sp_blank(sp);
		if (sp_at(sp, 0) == '|' && sp_at(sp, 1) != '|') {
			sp->pos++;
			continue;
		}
		if (sp_at(sp, 0) != ')') {
			sp_fail(sp, "syntax error in a case pattern", 1);
			return;
		}
		sp->pos++;
		return;
	}
}

/* case WORD in [PATTERNS) LIST ;;]... esac */
static void
sp_case(struct sp *sp)
{
	struct sp_word	w;
	size_t		ci = sp_cmd_new(sp);

	sp->out->cmds[ci].kind = SH_K_CASE;
	if (!sp_read_word(sp, &w)) {
		sp_fail(sp, "case without a word", 1);
		return;
	}
	sp_arg(sp, ci, w.p, w.flags & ~SH_W_GLOB);
	sp_linebreak(sp);
	if (sp_expect(sp, "in") == -1)
		return;
	for (;;) {
		sp_linebreak(sp);
		if (sp->stop)
			return;
		if (sp_at_word(sp, "esac")) {
			sp->pos += 4;
			return;
		}
		sp_case_patterns(sp, ci);
		sp_body(sp, SP_T_KW|SP_T_CASE);
		if (sp->stop)
			return;
		if (sp_at(sp, 0) == ';') {
			if (sp_at(sp, 1) == '&')
				sp->out->ops |= SH_OP_DIALECT;
			sp->pos += sp_at(sp, 2) == '&' ? 3 : 2;
		} else if (!sp_at_word(sp, "esac")) {
			sp_fail(sp, "unterminated case", 1);
			return;
		}
	}
}

/* function NAME [()] BODY (bash) */
static void
sp_function(struct sp *sp)
{
	struct sp_word	w;
	size_t		ci = sp_cmd_new(sp);
	unsigned	saved = sp->ctx;

	sp->out->ops |= SH_OP_DIALECT;
	sp->out->cmds[ci].kind = SH_K_FUNC;
	if (!sp_read_word(sp, &w) || (w.flags & (SH_W_DYNAMIC|SH_W_QUOTED))) {
		free(w.p);
		sp_fail(sp, "function without a name", 1);
		return;
	}
	sp_arg(sp, ci, w.p, 0);
	sp_blank(sp);
	if (sp_at(sp, 0) == '(') {
		sp->pos++;
		sp_blank(sp);
		if (sp_at(sp, 0) != ')') {
			sp_fail(sp, "syntax error in a function definition", 1);
			return;
		}
		sp->pos++;
	}
	sp_linebreak(sp);
	if (sp->stop || sp_enter_kw(sp) == -1)
		return;
	sp->ctx |= SH_IN_FUNC;
	sp_command(sp);
	sp->kwdepth--;
	sp->ctx = saved;
}

/* The word after =~ in [[ ]]: ( ) and | are part of it. */
static void
sp_cond_regex(struct sp *sp, struct sp_word *w)
{
	int	depth = 0, c;

	while (!sp->stop && sp->pos < sp->len) {
		c = sp_at(sp, 0);
		if (c == '(')
			depth++;
		else if (c == ')' && depth > 0)
			depth--;
		else if ((c == ' ' || c == '\t' || c == '\n') && depth == 0)
			break;
		else if (c != '|' && c != ' ' && c != '\t' && sp_meta(c))
			break;
		else if (c != '|' && c != ' ' && c != '\t') {
			sp_word(sp, w);
			continue;
		}
		sp_word_add(w, sp->s + sp->pos, 1);
		sp->pos++;
	}
}

/* [[ ... ]] (bash): words and operators, none of them redirections. */
static void
sp_cond(struct sp *sp)
{
	struct sp_word	 w;
	size_t		 ci = sp_cmd_new(sp);
	char		 op[3];
	int		 c, regex = 0;

	sp->out->ops |= SH_OP_DIALECT;
	sp->out->cmds[ci].kind = SH_K_COND;
	for (;;) {
		sp_linebreak(sp);
		c = sp_at(sp, 0);
		if (sp->stop || sp->pos >= sp->len) {
			if (!sp->stop)
				sp_fail(sp, "unterminated [[", 1);
			return;
		}
		if (sp_at_word(sp, "]]")) {
			sp->pos += 2;
			return;
		}
		memset(&w, 0, sizeof w);
		w.qfirst = (size_t)-1;
		if (regex)
			sp_cond_regex(sp, &w);
		else if (strchr("()!<>&|", c) != NULL && sp_meta(c == '!' ?
		    sp_at(sp, 1) : ' ')) {
			op[0] = (char)c;
			op[1] = (c == '&' || c == '|') && sp_at(sp, 1) == c ?
			    (char)c : '\0';
			op[2] = '\0';
			if ((c == '&' || c == '|') && op[1] == '\0') {
				sp_fail(sp, "syntax error in [[", 1);
				return;
			}
			sp->pos += strlen(op);
			sp_word_add(&w, op, strlen(op));
		} else
			sp_word(sp, &w);
		if (sp->stop || !w.started) {
			free(w.p);
			if (!sp->stop)
				sp_fail(sp, "syntax error in [[", 1);
			return;
		}
		if (w.p == NULL)		/* "" */
			w.p = xstrdup("");
		regex = strcmp(w.p, "=~") == 0 && !(w.flags & SH_W_QUOTED);
		sp_arg(sp, ci, w.p, w.flags & ~SH_W_GLOB);
	}
}

/* coproc [NAME] COMMAND (bash): COMMAND runs in the background. */
static void
sp_coproc(struct sp *sp)
{
	size_t	i, first;
	int	c;

	sp->out->ops |= SH_OP_DIALECT|SH_OP_BG;
	first = sp->out->ncmds;
	sp_blank(sp);
	/* "coproc NAME { ...; }": NAME is skipped when a compound follows. */
	for (i = 0; (c = sp_at(sp, i)) == '_' || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9'); i++)
		;
	if (i > 0 && (c == ' ' || c == '\t')) {
		while ((c = sp_at(sp, i)) == ' ' || c == '\t')
			i++;
		if (c == '{' || c == '(')
			sp->pos += i;
	}
	sp_command(sp);
	sp_mark(sp, first, -1, SH_BACKGROUND, 0);
}

/*
 * Redirections after a compound command (its commands are from first
 * on): each goes to every command inside; a here-doc only to the first,
 * which reads its body.
 */
static void
sp_compound_tail(struct sp *sp, size_t first)
{
	struct sh_cmd	*cmd;
	size_t		 i, j, ci, nhd = sp->nhd, k;

	if (sp->stop)
		return;
	if (sp->out->ncmds == first) {
		sp_fail(sp, "empty compound command", 1);
		return;
	}
	ci = sp_cmd_new(sp);		/* scratch: parsed into, then copied */
	for (;;) {
		sp_blank(sp);
		if (sp->stop || !sp_is_redir(sp))
			break;
		sp_redir(sp, ci);
	}
	if (!sp->stop && !sp_meta(sp_at(sp, 0)))
		sp_fail(sp, "word after a compound command", 1);
	cmd = &sp->out->cmds[ci];
	for (i = first; i < ci; i++) {
		for (j = 0; j < cmd->nredirs; j++) {
			if (cmd->redirs[j].op == SH_R_HEREDOC && i != first)
				continue;
			k = sp_redir_add(&sp->out->cmds[i], cmd->redirs[j].fd,
			    cmd->redirs[j].op, xstrdup(cmd->redirs[j].target),
			    cmd->redirs[j].dynamic);
			cmd = &sp->out->cmds[ci];
			for (nhd = 0; nhd < sp->nhd; nhd++)
				if (sp->hd[nhd].cmd == ci &&
				    sp->hd[nhd].redir == j) {
					sp->hd[nhd].cmd = i;
					sp->hd[nhd].redir = k;
				}
		}
	}
	/* Commands of a substitution in a target may follow the scratch. */
	sp_cmd_release(cmd);
	memmove(cmd, cmd + 1, (sp->out->ncmds - ci - 1) * sizeof *cmd);
	sp->out->ncmds--;
	for (k = 0; k < sp->nhd; k++)
		if (sp->hd[k].cmd > ci)
			sp->hd[k].cmd--;
}

/* ( list ) or { list; } */
static void
sp_group(struct sp *sp, int brace)
{
	unsigned	saved = sp->ctx;

	sp->pos++;
	if (!brace) {
		sp_nested(sp, SH_SUBSHELL);
		return;
	}
	if (sp_enter(sp) == -1)
		return;
	sp->ctx |= SH_SUBSHELL;
	sp_list(sp, SP_T_BRACE);
	sp->ctx = saved;
	sp->depth--;
	if (!sp->stop && !sp_at_word(sp, "}"))
		sp_fail(sp, "unterminated {", 1);
	else if (!sp->stop)
		sp->pos++;
}

/* (( EXPR )) (bash); "((a) b)" is a subshell in a subshell. */
static void
sp_arith_cmd(struct sp *sp)
{
	size_t	start = sp->pos, ci;
	char	*text;

	sp->out->ops |= SH_OP_DIALECT;
	if (sp_arith_ahead(sp, start) != 1) {
		sp_group(sp, 0);
		return;
	}
	ci = sp_cmd_new(sp);
	sp->out->cmds[ci].kind = SH_K_ARITH;
	sp->pos += 2;
	if (!sp_arith_body(sp)) {
		if (!sp->stop)
			sp_fail(sp, "ambiguous ((", 1);
		return;
	}
	text = xstrndup(sp->s + start + 2, sp->pos - start - 4);
	sp_arg(sp, ci, text, strpbrk(text, "$`") != NULL ? SH_W_DYNAMIC : 0);
}

/* A compound command by its reserved word (pos past it). */
static void
sp_compound(struct sp *sp, enum sp_kw kw, size_t n)
{
	size_t	first = sp->out->ncmds;
	int	select = sp->s[sp->pos] == 's';
	int	until = sp->s[sp->pos] == 'u';
	int	kwlevel = kw != SP_KW_NONE && kw != SP_KW_LBRACE;

	if (kwlevel && sp_enter_kw(sp) == -1)
		return;
	sp->pos += n;
	switch (kw) {
	case SP_KW_IF:
		sp_if(sp);
		break;
	case SP_KW_LOOP:
		sp_loop(sp, until);
		break;
	case SP_KW_FOR:
		sp_for(sp, select);
		break;
	case SP_KW_CASE:
		sp_case(sp);
		break;
	case SP_KW_FUNCTION:
		sp_function(sp);
		break;
	case SP_KW_COND:
		sp_cond(sp);
		break;
	case SP_KW_LBRACE:
		sp->pos -= n;
		sp_group(sp, 1);
		break;
	default:
		sp->pos -= n;
		if (sp_at(sp, 1) == '(' && !sp->posix)
			sp_arith_cmd(sp);
		else
			sp_group(sp, 0);
		break;
	}
	if (kwlevel)
		sp->kwdepth--;
	if (kw != SP_KW_FUNCTION)
		sp_compound_tail(sp, first);
}

/* One command of a pipeline, after any reserved words. */
static void
sp_command(struct sp *sp)
{
	size_t		n = 0;
	enum sp_kw	kw;
	int		c;

	for (;;) {
		sp_blank(sp);
		c = sp_at(sp, 0);
		if (sp->stop)
			return;
		if (sp->pos >= sp->len || strchr("\n;|)", c) != NULL ||
		    (c == '&' && sp_at(sp, 1) != '>')) {
			sp_fail(sp, "missing command", 1);
			return;
		}
		kw = sp_keyword(sp, &n);
		if (kw != SP_KW_PREFIX)
			break;
		if (c == 't')
			sp->out->ops |= SH_OP_DIALECT;
		sp->pflags |= c == '!' ? SH_NEGATED : SH_TIMED;
		sp->pos += n;
		sp_blank(sp);
		if (c == 't' && sp_at(sp, 0) == '-' && sp_at(sp, 1) == 'p' &&
		    sp_meta(sp_at(sp, 2)))
			sp->pos += 2;
	}
	if (kw == SP_KW_CLOSE)
		sp_fail(sp, "unexpected reserved word", 1);
	else if (kw == SP_KW_COPROC) {
		sp->pos += n;
		sp_coproc(sp);
	} else if (kw != SP_KW_NONE || c == '(')
		sp_compound(sp, kw, n);
	else
		sp_simple(sp);
}

/* A pipeline: commands joined by | or |&. */
static void
sp_pipeline(struct sp *sp)
{
	size_t		first;
	unsigned	stage;

	for (stage = 0;; stage++) {
		first = sp->out->ncmds;
		sp_command(sp);
		sp_mark(sp, first, sp->depth, 0, stage);
		sp_blank(sp);
		if (sp->stop || sp_at(sp, 0) != '|' || sp_at(sp, 1) == '|')
			return;
		sp->out->ops |= SH_OP_PIPE;
		sp->pos++;
		if (sp_at(sp, 0) == '&') {
			sp->out->ops |= SH_OP_PIPE_ERR;
			sp->pos++;
		}
		sp_linebreak(sp);
	}
}

/* Pipelines joined by && and ||. */
static void
sp_and_or(struct sp *sp)
{
	int	c;

	for (;;) {
		sp_pipeline(sp);
		sp_blank(sp);
		c = sp_at(sp, 0);
		if (sp->stop || (c != '&' && c != '|') || sp_at(sp, 1) != c)
			return;
		sp->out->ops |= c == '&' ? SH_OP_AND : SH_OP_OR;
		sp->pos += 2;
		sp_linebreak(sp);
	}
}

/* 1 if pos is where a list ending in term stops (a command position). */
static int
sp_list_end(struct sp *sp, int term, int any)
{
	size_t	n;

	if (sp_at(sp, 0) == '}' && sp_meta(sp_at(sp, 1)))
		return ((term & SP_T_BRACE) && any);
	if (sp_keyword(sp, &n) != SP_KW_CLOSE || sp_at(sp, 0) == '}')
		return (0);
	if (term & SP_T_KW)
		return (1);
	sp_fail(sp, "unexpected reserved word", 1);
	return (1);
}

/*
 * A list of and-or lists separated by ; & or newlines, up to the end of
 * input or to what term allows (left unread): ')' (SP_T_PAREN), a
 * closing '}' (SP_T_BRACE), then/else/elif/fi/do/done/esac (SP_T_KW),
 * ;; ;& ;;& (SP_T_CASE).
 */
static void
sp_list(struct sp *sp, int term)
{
	size_t	last = sp->out->ncmds;
	int	after = 0, seq = 0, any = 0, c;

	while (!sp->stop) {
		sp_blank(sp);
		if (sp->pos >= sp->len)
			return;
		c = sp_at(sp, 0);
		if (c == ')') {
			if (!(term & SP_T_PAREN))
				sp_fail(sp, "unexpected )", 1);
			return;
		}
		if ((term & SP_T_CASE) && c == ';' && (sp_at(sp, 1) == ';' ||
		    sp_at(sp, 1) == '&'))
			return;
		if (!after && sp_list_end(sp, term, any))
			return;
		if (c == '\n') {
			sp_newline(sp);
			seq |= after;
			after = 0;
		} else if (c == ';' || (c == '&' && sp_at(sp, 1) != '>')) {
			if (!after || sp_at(sp, 1) == ';') {
				sp_fail(sp, "unexpected ; or &", 1);
				return;
			}
			if (c == '&') {
				sp->out->ops |= SH_OP_BG;
				sp_mark(sp, last, -1, SH_BACKGROUND, 0);
			}
			seq = c == ';';
			after = 0;
			sp->pos++;
		} else if (after) {
			sp_fail(sp, "syntax error", 1);
			return;
		} else {
			if (seq)
				sp->out->ops |= SH_OP_SEQ;
			seq = 0;
			last = sp->out->ncmds;
			sp_and_or(sp);
			after = any = 1;
		}
	}
}

/* Entry point: see shparse.h. */
int
sh_parse(const char *src, size_t len, int dialect, struct sh_parse *out)
{
	struct sp	sp;

	memset(out, 0, sizeof *out);
	out->complete = 1;
	memset(&sp, 0, sizeof sp);
	sp.s = src != NULL ? src : "";
	sp.len = src != NULL ? len : 0;
	sp.out = out;
	sp.posix = dialect == SH_POSIX;
	if (sp.len > SH_PARSE_MAX) {
		sp_fail(&sp, "input too long", 1);
		return (-1);
	}
	if (memchr(sp.s, '\0', sp.len) != NULL) {
		sp_fail(&sp, "NUL byte in input", 1);
		return (0);
	}
	sp_list(&sp, 0);
	if (!sp.stop && sp.nhd > 0)
		sp_fail(&sp, "here-doc without a body", 1);
	free(sp.hd);
	return (sp.absurd ? -1 : 0);
}

/* Frees everything sh_parse allocated and zeroes *p. */
void
sh_parse_release(struct sh_parse *p)
{
	size_t	i;

	if (p == NULL)
		return;
	for (i = 0; i < p->ncmds; i++)
		sp_cmd_release(&p->cmds[i]);
	free(p->cmds);
	memset(p, 0, sizeof *p);
}
