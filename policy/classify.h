#ifndef EXECQ_CLASSIFY_H
#define EXECQ_CLASSIFY_H

/*
 * The command policy's classifier: what a shell command would do, decided
 * before anything runs, from policy/shparse.h's parse (never regexes over
 * the raw string). Every simple command found (substitutions, subshells,
 * the inner strings of sh -c and eval included) gets a risk; the command
 * takes the worst. The verdict always names the rule that decided it and
 * why, so a human reading an approval request knows what they approve.
 *
 * Pure code apart from the path sandbox, which resolves paths as the
 * kernel does with lstat(2), readlink(2) and glob(3) (only when
 * cls_policy.workspace is set). No globals: one cls_policy may be shared
 * by any number of calls (glob's callbacks count in a thread-local).
 */

#include <stddef.h>

/*
 * Risks, ordered: a chain takes the highest. unknown sits above write
 * because it may be anything; destructive above it because then we know.
 */
enum cls_risk {
	CLS_READ_ONLY = 0,	/* allowlisted, flags and subcommands checked */
	CLS_WRITE,		/* changes files or state, recoverably */
	CLS_NETWORK,		/* talks to the network: it can carry the
				   workspace out; what a network grant keys
				   on */
	CLS_UNKNOWN,		/* not on any list, dynamic, or unparsable */
	CLS_DESTRUCTIVE,	/* deletes, overwrites, kills, force-pushes */
	CLS_BLOCKED,		/* catastrophic: refused, never proposed */
};
#define CLS_RISK_LAST	CLS_BLOCKED	/* the name tables run to it */

/* Permission tiers: the highest risk that runs without a human. */
enum cls_tier {
	CLS_TIER_READ_ONLY = 0,	/* read_only runs; the rest is held */
	CLS_TIER_READ_WRITE,	/* read_only and write run */
	CLS_TIER_CONFINED,	/* read_only, write and unknown run: the
				   kernel's boundary holds them (the
				   default when every layer is on) */
	CLS_TIER_ADMIN,		/* all but blocked runs */
};
#define CLS_TIER_LAST	CLS_TIER_ADMIN	/* the name tables run to it */

/* What the worker does with a command. */
enum cls_action {
	CLS_RUN = 0,
	CLS_HOLD,		/* parked until a human approves */
	CLS_REFUSE,
};
#define CLS_ACTION_LAST	CLS_REFUSE	/* the name tables run to it */

/* What the path sandbox does with a path outside the workspace. */
enum cls_sandbox {
	CLS_SANDBOX_HOLD = 0,	/* default: needs approval */
	CLS_SANDBOX_REFUSE,
	CLS_SANDBOX_OFF,
};
#define CLS_SANDBOX_LAST	CLS_SANDBOX_OFF	/* the name tables run to it */

/*
 * A configured rule. glob is matched with fnmatch(3) (flags 0, so * also
 * matches /) against each simple command's text (see cls_cmd.text), and
 * also against the text with wrappers removed ("sudo -u x make" is tried
 * as "make" too). Rules are tried in order; the first that matches sets
 * that command's risk, overriding the built-in lists in both directions,
 * with one exception: a built-in blocked verdict is never lowered (a rule
 * "rm *" -> read_only cannot make "rm -rf /" run). Output redirections and
 * the path sandbox are still applied on top of a rule's risk.
 */
struct cls_rule {
	char		*name;		/* shown as the verdict's rule */
	char		*glob;
	enum cls_risk	 risk;
	char		*reason;
	char		**match;	/* examples that must be decided by this
					   rule; NULL-terminated, >= 1 */
	char		**no_match;	/* examples it must not match at all;
					   NULL-terminated, may be empty */
};

/* How the worker's shell reads a command (bash and dash differ). */
enum cls_shell {
	CLS_SHELL_ANY = 0,	/* not known: where they differ, both */
	CLS_SHELL_BASH,
	CLS_SHELL_POSIX,	/* dash, ash, busybox sh */
};

struct cls_policy {
	const struct cls_rule	 *rules;
	size_t			  nrules;
	const char		 *workspace;	/* realpath'd; NULL: no sandbox */
	const char *const	 *allow_paths;	/* more roots counted as inside
						   (realpath'd), e.g. "/usr" */
	size_t			  nallow;
	enum cls_shell		  shell;
	const char *const	 *env_allow;	/* fnmatch patterns of more
						   names an item or command
						   may export */
	size_t			  nenv_allow;
};

/* One simple command found, in the parser's order. */
struct cls_cmd {
	char		*text;		/* argv joined by single spaces, after
					   quote removal, without assignments
					   and redirections: "git push origin" */
	enum cls_risk	 risk;
	char		*rule;		/* "read_only:git", "blocked:rm-root",
					   "rule:<name>", ... */
	char		*reason;
	int		 network;	/* it needs the network */
};

struct cls_verdict {
	enum cls_risk	 risk;		/* the worst of cmds (and the parse) */
	char		*rule;		/* the rule that decided risk */
	char		*reason;	/* why, for a human: one sentence */
	char		*outside;	/* the first path outside the sandbox
					   (resolved), or NULL */
	char		*outside_reason; /* "cat reads /etc/passwd, outside
					   the workspace" or NULL */
	int		 complete;	/* the parse was certain */
	int		 network;	/* a command of it needs the network
					   (even when another's risk is
					   higher) */
	struct cls_cmd	*cmds;
	size_t		 ncmds;
};

/*
 * Classifies cmd[0..len) as run from cwd (an absolute, realpath'd dir; used
 * by the sandbox and for relative paths; NULL: the workspace). Always fills
 * *out (release it with cls_verdict_release); never fails: input it cannot
 * parse is unknown (or blocked, if what was parsed is catastrophic).
 */
void		 cls_classify(const struct cls_policy *, const char *cmd,
		    size_t len, const char *cwd, struct cls_verdict *out);
void		 cls_verdict_release(struct cls_verdict *);	/* NULL ok */
/*
 * The environment an item adds (NAME=value, NULL-terminated; NULL ok):
 * a name not on the safe list (LANG, LC_*, TZ, CI, COLUMNS, LINES,
 * NO_COLOR, ... and the policy's env_allow patterns) raises v to unknown,
 * and so does a value bash arithmetic would run ("a[$(cmd)]").
 */
void		 cls_classify_env(const struct cls_policy *,
		    struct cls_verdict *v, char *const *env);

/*
 * The one decision: blocked is refused; a path outside the sandbox is held
 * (or refused, or ignored, per sb) whatever the tier; otherwise risks up to
 * the tier run and the rest is held. *rule and *reason (borrowed from v,
 * or static) say why.
 */
enum cls_action	 cls_decide(const struct cls_verdict *v, enum cls_tier,
		    enum cls_sandbox sb, const char **rule,
		    const char **reason);

/*
 * Checks every rule's examples against the whole policy: each "match"
 * example must be classified with that rule deciding at least one of its
 * simple commands (so a rule shadowed by an earlier one fails too), and
 * no "no_match" example may match the rule's glob on any simple command.
 * 0, or -1 with an allocated *cause naming the rule and the example.
 */
int		 cls_rules_check(const struct cls_policy *, char **cause);

/*
 * The dialect of a shell program (the worker's "shell"): resolved with
 * realpath(3), so /bin/sh -> dash is posix. Unknown shells are ANY.
 */
enum cls_shell	 cls_shell_of(const char *path);

/* Names, as in the JSON: "read_only", "write", ...; parse: 0 or -1. */
const char	*cls_risk_name(enum cls_risk);
int		 cls_risk_parse(const char *, enum cls_risk *);
const char	*cls_tier_name(enum cls_tier);
int		 cls_tier_parse(const char *, enum cls_tier *);
const char	*cls_action_name(enum cls_action);	/* run, hold, refuse */
const char	*cls_sandbox_name(enum cls_sandbox);	/* hold, refuse, off */
int		 cls_sandbox_parse(const char *, enum cls_sandbox *);

#endif
