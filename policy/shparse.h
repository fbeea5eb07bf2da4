#ifndef EXECQ_SHPARSE_H
#define EXECQ_SHPARSE_H

#include <stddef.h>

/*
 * A POSIX-shell command parser for the command policy: it finds every
 * simple command a string would run, without running or expanding
 * anything. Pure code: no I/O, no globals, safe on any bytes.
 *
 * The rule for callers: a parse with complete == 0 is never read-only.
 * When complete is 0 the command list is best effort: parsing stops at the
 * first thing it cannot read (the commands found so far stay listed, the
 * last one possibly partial). A classifier may raise the verdict from what
 * it finds but must not lower it.
 *
 * Words are given after quote removal. An expansion whose value is unknown
 * is kept as its raw source text ("$HOME", "${x:-y}", "$(whoami)", "`id`",
 * "$((1+2))", "~") and flags the word SH_W_DYNAMIC, so a classifier can
 * tell "$HOME" (expanded) from '$HOME' (literal: no flag).
 *
 * The whole grammar: pipelines, and-or lists, ( ) and { }, if/elif/else,
 * while, until, for, case, function definitions, here-docs; in the bash
 * dialect also [[ ]], (( )), for (( ; ; )), select, coproc, function NAME,
 * arrays and $'...'. The words of for, case, [[ ]] and (( )) are listed
 * as commands of their own kind (enum sh_kind) so a classifier can see
 * them; the commands inside a body are listed with SH_CONTROL.
 *
 * Dialects (sh_parse's dialect): SH_BASH reads [[ (( $'..' function
 * select coproc as bash does; SH_POSIX as dash does ("((a))" is two
 * subshells, "[[" a command name, $'x' the word $x). Both read <( ) >( ),
 * |&, &> and <<< as bash does; dash reads "a &>f" as "a &" then ">f",
 * which writes the same file. A parse that used something the two
 * dialects read differently sets SH_OP_DIALECT, so a caller that does not
 * know the shell can parse again in the other dialect.
 */

/* Per-command flags (struct sh_cmd.flags). */
#define SH_DYNAMIC	0x01	/* a word, assignment or target is dynamic */
#define SH_SUBSTITUTED	0x02	/* inside $( ), ` `, <( ) or >( ) */
#define SH_SUBSHELL	0x04	/* inside ( ) or { } */
#define SH_GLOB		0x08	/* an unquoted * ? [..] or {a,b}; implies
				   SH_DYNAMIC */
#define SH_NEGATED	0x10	/* the pipeline started with ! (skipped) */
#define SH_TIMED	0x20	/* the pipeline started with time (skipped) */
#define SH_CONTROL	0x40	/* inside the body or condition of if,
				   while, until, for, select or case: it
				   may run never, once or many times */
#define SH_IN_FUNC	0x80	/* inside a function body: it runs when the
				   function is called */
#define SH_BACKGROUND	0x100	/* its list ends with & (or coproc) */
#define SH_ENDLESS	0x200	/* in the body of a loop that never ends by
				   its condition: while : / while true /
				   until false / for (( ; ; )) */

/* What a listed command is (struct sh_cmd.kind). */
enum sh_kind {
	SH_K_SIMPLE = 0,	/* a simple command */
	SH_K_FOR,		/* for NAME in WORDS: argv is NAME, WORDS;
				   without "in" it loops over "$@" and is
				   SH_DYNAMIC */
	SH_K_SELECT,		/* select NAME in WORDS: as SH_K_FOR; the
				   value comes from standard input */
	SH_K_CASE,		/* case WORD in PATTERNS: argv is WORD, then
				   every pattern */
	SH_K_ARITH,		/* (( EXPR )) or for (( E1; E2; E3 )): argv
				   is each expression's source text */
	SH_K_COND,		/* [[ ... ]]: argv is its words and
				   operators ("!", "(", "&&", "<", ...) */
	SH_K_FUNC,		/* NAME() BODY or function NAME BODY: argv
				   is NAME; the body's commands follow,
				   flagged SH_IN_FUNC */
};

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
#define SH_OP_DIALECT	0x40	/* something bash and dash read
				   differently: (( [[ $' $" function select
				   coproc time arrays */

/* Dialects. */
#define SH_BASH		0	/* bash (also sh when it is bash) */
#define SH_POSIX	1	/* dash, ash, busybox sh */

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
	enum sh_kind	  kind;
	unsigned	  flags;	/* SH_DYNAMIC ... SH_ENDLESS */
	unsigned	  pipepos;	/* stage in its pipeline (0: first or
					   alone); set for the commands at the
					   pipeline's own depth */
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
 * Parses src[0..len) as dialect (SH_BASH or SH_POSIX) reads it (NUL bytes
 * make it incomplete). Always fills *out, which the caller releases with
 * sh_parse_release even on failure. Returns 0, or -1 for absurd input:
 * longer than SH_PARSE_MAX bytes or nested deeper than SH_PARSE_DEPTH
 * (then complete is 0 as well). Reasons for complete == 0: unterminated
 * quote, substitution, ( { if while for case [[ (( or here-doc; ${...}
 * containing quotes, backslashes or substitutions; $[ ]; a here-doc on a
 * substitution's line; a syntax error (a lone operator, "a |", ";;",
 * "fi" alone, "for 1 in").
 */
#define SH_PARSE_MAX	(1024 * 1024)
#define SH_PARSE_DEPTH	64
int	 sh_parse(const char *src, size_t len, int dialect,
	    struct sh_parse *out);
void	 sh_parse_release(struct sh_parse *);	/* NULL ok; zeroes it */

#endif
