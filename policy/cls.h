#ifndef EXECQ_CLS_H
#define EXECQ_CLS_H

/*
 * The classifier's insides, shared by its files (policy/classify.h is the
 * API; nothing outside policy/cls_*.c and policy/classify.c includes this).
 * Its declarations are grouped below by the file that defines them. The
 * files are layers, from the bottom up: each uses only files listed
 * before it (and policy/shparse.c), so no two of them reach each other
 * (nm on the objects shows it):
 *
 *   cls_words.c	results and the names of risks, tiers, actions and
 *			sandbox modes; word lists, options as GNU getopt
 *			reads them; the way back to the driver
 *   cls_path.c		catastrophic targets, devices, the path sandbox,
 *			directory options, cd/pushd/popd
 *   cls_env.c		which variable names a command may set
 *   cls_vars.c		variables from outside, for/case/[[/((, functions
 *   cls_flow.c		deletes fed by pipes and substitutions, fork loops
 *   cls_block.c	catastrophes, refused whatever the tier
 *   cls_table.c	every read-only tool's options (data)
 *   cls_git.c		git, its options and its repository's config
 *   cls_tools.c	per-tool handlers and the tool lists
 *   cls_wrap.c		wrappers peeled off (sudo, env, sh -c, ...)
 *   classify.c		the driver: parse, classify each command, decide
 *
 * Wrappers, find -exec and a shell fed by a pipe classify what they run
 * through the driver: that recursion goes through the context
 * (cls_ctx.drv, set by classify.c; cls_recurse_words and
 * cls_recurse_source), never through a symbol of classify.c.
 */

#include <sys/types.h>

#include <stddef.h>

struct cls_policy;
struct cls_verdict;
struct sh_cmd;
struct sh_parse;

/* Shared by every file (cls_scope: cls_path.c's). */
#define CLS_DEPTH_MAX	16	/* sh -c inside sh -c ... */
#define CLS_SCAN_MAX	64	/* argument positions and function
				   definitions looked at by the raw scans,
				   so a 1 MiB command stays linear */
#define CLS_NAMES_MAX	64	/* variables and functions remembered */
#define CLS_RULE_MAX	64
#define CLS_DIRS_MAX	8	/* pushd's stack, as far as it is followed */
#define CLS_REASON_MAX	256

/* A risk with the rule that set it and why. */
struct cls_res {
	enum cls_risk	 risk;
	char		 rule[CLS_RULE_MAX];
	char		 reason[CLS_REASON_MAX];
	int		 set;
	int		 network;	/* raised to network once */
};

/* A word list being peeled: borrowed from a parsed command. */
struct cls_words {
	char		**w;
	unsigned	 *f;
	size_t		  n;
	const char	 *cwd;		/* where relative words point, or NULL */
};

struct cls_ctx;

/*
 * The driver's entry points (classify.c fills them in) for the parts that
 * find a command inside a command; called through cls_recurse_*().
 */
struct cls_driver {
	void	(*words)(struct cls_ctx *, struct cls_words *,
		    struct cls_res *, char **inner);
	void	(*source)(struct cls_ctx *, const char *, size_t,
		    enum cls_shell);
};

/* One classification. */
struct cls_ctx {
	const struct cls_policy	*p;
	const struct cls_driver	*drv;
	struct cls_verdict	*v;
	char			*cwd;		/* for relative paths; NULL:
						   unknown (after "cd -") */
	int			 depth;
	int			 privileged;	/* sudo/doas/su seen */
	size_t			 cmdcap;
	int			 dialect;	/* SH_BASH or SH_POSIX */
	char			*tainted[CLS_NAMES_MAX]; /* variables
						   from outside */
	size_t			 ntainted;
	int			 taint_all;	/* too many, or a nameref */
	char			*funcs[CLS_NAMES_MAX];	/* defined */
	size_t			 nfuncs;
	int			 funcs_full;
	int			 home;		/* a cd went to a home dir */
	char			*dirs[CLS_DIRS_MAX]; /* pushd's stack (an
						   entry NULL: unknown) */
	size_t			 ndirs;
	size_t			 dirslost;	/* pushed past the end */
	size_t			 lookups;	/* lstat calls, and */
	size_t			 globbed;	/* directory entries read
						   by globs: both capped */
};

/* The cwd and pushd's stack of an outer shell, while sh -c runs. */
struct cls_scope {
	char		*cwd;
	char		*dirs[CLS_DIRS_MAX];
	size_t		 ndirs;
	size_t		 dirslost;
};

/* cls_words.c */
void	 cls_recurse_words(struct cls_ctx *, struct cls_words *,
	    struct cls_res *, char **inner);	/* the driver's cls_words */
void	 cls_recurse_source(struct cls_ctx *, const char *, size_t,
	    enum cls_shell);			/* the driver's cls_source */
void	 cls_raise(struct cls_res *, enum cls_risk, const char *rule,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void	 cls_set(struct cls_res *, enum cls_risk, const char *rule,
	    const char *reason);
const char *cls_base(const char *);
int	 cls_in(const char *, const char *const *list);
int	 cls_listed(const char *list, const char *word, size_t n);
enum cls_shell cls_shell_named(const char *name);
void	 cls_shift(struct cls_words *, size_t k);
char	*cls_join(char *const *w, size_t n);
int	 cls_is_opt(const char *);
int	 cls_opt_match(const char *w, const char *opt);
int	 cls_has_opt(const struct cls_words *, const char *opt);
int	 cls_has_prefix(const struct cls_words *, const char *prefix);
int	 cls_has_flag(const struct cls_words *, char c, const char *lng);
int	 cls_flag_before(const struct cls_words *, size_t end, char c,
	    const char *lng);
size_t	 cls_skip_opts(const struct cls_words *, size_t i,
	    const char *const *with_arg);

/* cls_path.c */
char	*cls_norm(const char *path);
int	 cls_path_inside(const struct cls_policy *, const char *path);
const char *cls_root_target(const char *w, unsigned f, const char *cwd);
int	 cls_block_device(const char *path);
int	 cls_harmless_device(const char *path);
void	 cls_check_path(struct cls_ctx *, const char *w, unsigned f,
	    const char *what);
void	 cls_check_args(struct cls_ctx *, const struct cls_words *);
char	*cls_wrapper_dir(struct cls_ctx *, const struct cls_words *,
	    size_t end, int *moved);
void	 cls_cd(struct cls_ctx *, const struct sh_cmd *);
void	 cls_scope_enter(struct cls_ctx *, struct cls_scope *);
void	 cls_scope_leave(struct cls_ctx *, struct cls_scope *);
void	 cls_dirs_release(struct cls_ctx *);

/* cls_env.c */
int	 cls_env_safe(const struct cls_policy *, const char *name,
	    size_t len);
const char *cls_env_unsafe(const struct cls_policy *, char *const *w,
	    size_t n, int names, int shell);
void	 cls_env_check(struct cls_ctx *, const struct sh_cmd *,
	    struct cls_res *);

/* cls_vars.c */
int	 cls_vars_eval(const struct cls_ctx *, const struct sh_cmd *);
void	 cls_vars_track(struct cls_ctx *, const struct sh_cmd *);
int	 cls_vars_is_func(const struct cls_ctx *, const struct sh_cmd *);
void	 cls_vars_construct(struct cls_ctx *, const struct sh_cmd *,
	    struct cls_res *);
void	 cls_vars_release(struct cls_ctx *);

/* cls_flow.c */
void	 cls_flow_delete(struct cls_ctx *, const struct sh_parse *, size_t,
	    struct cls_res *);
void	 cls_flow_bomb(const struct sh_parse *, size_t, struct cls_res *);
void	 cls_flow_stdin(struct cls_ctx *, const struct sh_parse *, size_t);

/* cls_block.c */
int	 cls_block_targets(const struct cls_words *, size_t from,
	    const char *verb, const char *rule, struct cls_res *);
int	 cls_blocked(const struct cls_words *, const char *name,
	    struct cls_res *);

/* cls_table.c: a tool's options, sorted by name. */
#define CLS_T_DIGITS	0x01	/* -NUM is an option ("head -20") */
struct cls_tool {
	const char	*name;
	const char	*shorts;	/* getopt-style; NULL: not checked */
	const char	*longs;		/* "name name= name=2 name?" */
	int		 flags;
};
extern const struct cls_tool	cls_tools[];
extern const size_t		cls_ntools;

/* cls_git.c */
void	 cls_git(struct cls_ctx *, const struct cls_words *,
	    struct cls_res *);

/* cls_tools.c */
void	 cls_command(struct cls_ctx *, const struct cls_words *,
	    struct cls_res *);

/* cls_wrap.c */
ssize_t	 cls_wrapper(struct cls_ctx *, struct cls_words *, const char *name,
	    struct cls_res *);

#endif
