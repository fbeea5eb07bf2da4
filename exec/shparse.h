#ifndef EXECQ_SHPARSE_H
#define EXECQ_SHPARSE_H

#include <stddef.h>

/*
 * A POSIX-shell command parser for the command policy: it finds every
 * simple command a string would run, without running or expanding
 * anything. Pure code: no I/O, no globals, safe on any bytes.
 *
 * The rule for callers: a parse with complete == 0 is never read-only.
 * When complete is 0 the command list is best effort: parsing goes on past
 * control-structure keywords (if/then/else/elif/fi/while/until/do/done) so
 * that a catastrophic command inside them is still listed, and stops at the
 * first thing it cannot tokenize (the commands found so far stay listed,
 * the last one possibly partial). A classifier may raise the verdict from
 * what it finds but must not lower it.
 *
 * Words are given after quote removal. An expansion whose value is unknown
 * is kept as its raw source text ("$HOME", "${x:-y}", "$(whoami)", "`id`",
 * "$((1+2))", "~") and flags the word SH_W_DYNAMIC, so a classifier can
 * tell "$HOME" (expanded) from '$HOME' (literal: no flag).
 *
 * The grammar is bash's superset where /bin/sh (dash) would refuse or
 * differ only in ways that do not hide a command: <( ) >( ), |&, &>, <<<
 * are parsed as bash does; dash reads "a &>f" as "a &" then ">f", which
 * writes the same file. $'...' differs between the two (dash keeps it
 * literal), so it makes the parse incomplete.
 */

/* Per-command flags (struct sh_cmd.flags). */
#define SH_DYNAMIC	0x01	/* a word, assignment or target is dynamic */
#define SH_SUBSTITUTED	0x02	/* inside $( ), ` `, <( ) or >( ) */
#define SH_SUBSHELL	0x04	/* inside ( ) or { } */
#define SH_GLOB		0x08	/* an unquoted * ? [..] or {a,b}; implies
				   SH_DYNAMIC */
#define SH_NEGATED	0x10	/* the pipeline started with ! (skipped) */
#define SH_TIMED	0x20	/* the pipeline started with time (skipped) */

/* Per-word flags (struct sh_cmd.argflags, assignflags). */
#define SH_W_DYNAMIC	0x01	/* $var ${..} $(..) `..` $((..)) <(..) ~ */
#define SH_W_GLOB	0x02	/* unquoted glob or brace expansion; the
				   word is then also SH_W_DYNAMIC */
#define SH_W_QUOTED	0x04	/* some part was quoted or backslashed */

/* Operators seen anywhere, substitutions included (struct sh_parse.ops). */
#define SH_OP_PIPE	0x01	/* | or |& */
#define SH_OP_AND	0x02	/* && */
#define SH_OP_OR	0x04	/* || */
#define SH_OP_SEQ	0x08	/* ; or newline between two commands */
#define SH_OP_BG	0x10	/* & */
#define SH_OP_PIPE_ERR	0x20	/* |& (stderr goes down the pipe too) */

enum sh_redir_op {
	SH_R_IN,		/* <  */
	SH_R_OUT,		/* >  */
	SH_R_APPEND,		/* >> */
	SH_R_CLOBBER,		/* >| */
	SH_R_DUP_IN,		/* <& target is an fd, or "-" */
	SH_R_DUP_OUT,		/* >& target is an fd or "-"; anything else
				   is a file written as with &> (bash) */
	SH_R_RDWR,		/* <> opens the file read-write (creates it) */
	SH_R_HEREDOC,		/* << and <<-: target is the delimiter */
	SH_R_HERESTRING,	/* <<< target is the string */
	SH_R_OUT_ERR,		/* &>  fd is -1: stdout and stderr */
	SH_R_APPEND_ERR		/* &>> fd is -1: stdout and stderr */
};

struct sh_redir {
	int		 fd;		/* explicit or default (0 or 1); -1 for
					   &> and &>> */
	enum sh_redir_op op;
	char		*target;	/* after quote removal; never NULL */
	int		 dynamic;	/* target or unquoted here-doc body has
					   an expansion */
	char		*body;		/* SH_R_HEREDOC: the body, tabs already
					   stripped for <<-; else NULL. An
					   unquoted body's $( ) and ` ` are
					   listed (SH_SUBSTITUTED) */
};

/*
 * One simple command. Commands with no words are listed too: "A=1" (only
 * assignments) and ">f" (only a redirection, which truncates f).
 */
struct sh_cmd {
	char		**argv;		/* NULL-terminated, never NULL */
	unsigned	 *argflags;	/* SH_W_* per argv word */
	size_t		  argc;
	char		**assigns;	/* leading NAME=value (or NAME+=value)
					   words, NULL-terminated, never NULL */
	unsigned	 *assignflags;	/* SH_W_* per assignment */
	size_t		  nassigns;
	struct sh_redir	 *redirs;	/* NULL when nredirs is 0 */
	size_t		  nredirs;
	unsigned	  flags;	/* SH_DYNAMIC ... SH_TIMED */
	int		  depth;	/* substitutions and subshells around
					   this command; 0 at top level */
	size_t		  argcap, assigncap, redircap;	/* private */
};

/*
 * Every simple command in source order of its start: a command comes
 * before those inside its own substitutions ("echo $(id)" lists echo, then
 * id at depth 1). A redirection on "( ... )" or "{ ...; }" is copied to
 * every command listed inside it.
 */
struct sh_parse {
	struct sh_cmd	*cmds;
	size_t		 ncmds;
	int		 complete;	/* 1: parsed with certainty */
	const char	*why;		/* complete == 0: static reason */
	size_t		 where;		/* complete == 0: byte offset */
	unsigned	 ops;		/* SH_OP_* */
	size_t		 cmdcap;	/* private */
};

/*
 * Parses src[0..len) (NUL bytes make it incomplete). Always fills *out,
 * which the caller releases with sh_parse_release even on failure.
 * Returns 0, or -1 for absurd input: longer than SH_PARSE_MAX bytes or
 * nested deeper than SH_PARSE_DEPTH (then complete is 0 as well).
 * Reasons for complete == 0: unterminated quote, substitution, ( { or
 * here-doc; control structures (if, while, until, for, case, select,
 * function, coproc, [[ ]], (( )), "name()" definitions, arrays); $'...';
 * ${...} containing quotes, backslashes or substitutions; $(( )) containing
 * a substitution; a syntax error (a lone operator, "a |", ";;").
 */
#define SH_PARSE_MAX	(1024 * 1024)
#define SH_PARSE_DEPTH	64
int	 sh_parse(const char *src, size_t len, struct sh_parse *out);
void	 sh_parse_release(struct sh_parse *);	/* NULL ok; zeroes it */

#endif
