#ifndef EXECQ_CONFIG_INT_H
#define EXECQ_CONFIG_INT_H

/*
 * Private to the config files: the worker's settings in several files, as
 * the worker module's are (worker/worker_int.h). worker/config.h is their
 * face; nothing else includes this.
 *
 * The files, bottom up (each uses only those before it; none calls back
 * up into config.c):
 *
 *   config_check.c   the checks of string settings (names, URLs, modes)
 *   config_opts.c    the table: one row per setting, data only
 *   config_value.c   one value: parsed by its row's type, checked, stored,
 *                    and where it came from remembered
 *   config_help.c    --help, from the table
 *   config_file.c    the config file layer (JSON)
 *   config_flags.c   the command line: collected first, applied last
 *   config_finish.c  the checks that need every layer and the file system
 *   config.c         the driver: the layers in their order, the defaults
 *                    and the environment, config_load, config_release
 */

#include <stddef.h>

#include "worker/config.h"

enum config_type {
	CONFIG_STRING,
	CONFIG_BOOL,
	CONFIG_UINT,		/* unsigned */
	CONFIG_MS,		/* seconds in, unsigned milliseconds stored */
	CONFIG_SIZE,		/* bytes with an optional k or m, size_t */
};

/* NULL if the string is acceptable, else an allocated reason. */
typedef char *(*config_check_fn)(const char *);

/* One setting: where it is read from, how it parses, what --help says. */
struct config_opt {
	const char		*key;		/* config file */
	const char		*flag;		/* --flag */
	const char		*noflag;	/* bools: --flag that clears */
	const char		*env;
	enum config_type	 type;
	size_t			 off;
	unsigned long long	 min;		/* numbers: stored units */
	unsigned long long	 max;
	const char		*def;		/* NULL: computed (consumer) */
	const char		*metavar;
	const char		*help;		/* lines of --help */
	config_check_fn		 check;		/* strings only */
};

/* What one config_load() call saw of one setting. */
struct config_seen {
	const char	*flag_val;	/* the last --flag's value (argv's) */
	const char	*flag_name;	/* that flag, as typed */
	char		*where;		/* where the value came from */
};

/* One config_load() call: the flags seen, and where each value came from. */
struct config_state {
	struct config		*c;
	struct config_seen	*seen;		/* one per row of config_opts */
	const char		*config_file;	/* --config */
	int			 verbose;
	int			 check;		/* --check-confinement */
};

/* config_check.c: each NULL, or an allocated reason. */
char	*config_check_url(const char *);
char	*config_check_name(const char *);
char	*config_check_agents(const char *);
char	*config_check_domains(const char *);
char	*config_check_retry(const char *);
char	*config_check_limits(const char *);
char	*config_check_nonempty(const char *);
char	*config_check_operator_token(const char *);
char	*config_check_absolute(const char *);
char	*config_check_cgroup(const char *);
char	*config_check_tier(const char *);
char	*config_check_replicas(const char *);
char	*config_check_sandbox(const char *);
char	*config_check_confine(const char *);
char	*config_check_http(const char *);

/* config_opts.c */
extern const struct config_opt	 config_opts[];
extern const size_t		 config_nopts;
int	 config_find(const char *key);		/* row of a file key, or -1 */

/* config_value.c */
/* A limit for messages, in the units the user types. */
void	 config_format(enum config_type, unsigned long long, char *, size_t);
/* Applies row i's value; -1 and *cause (naming where) if it is bad. */
int	 config_set(struct config_state *, size_t i, const char *value,
	    const char *where, char **cause);
/* Where the setting with this file key came from ("default queue"...). */
const char *config_where(const struct config_state *, const char *key);

/* config_file.c: every key known and of its type; -1 and *cause if not. */
int	 config_apply_file(struct config_state *, const char *path,
	    char **cause);

/* config_flags.c */
/* Collects argv's flags into st: 0, 1 after --help or --version, -1. */
int	 config_parse_flags(struct config_state *, int argc, char **argv,
	    char **cause);
/* Applies what config_parse_flags collected, above the other layers. */
int	 config_apply_flags(struct config_state *, char **cause);

/* config_finish.c: the checks that need every layer in; 0 or -1. */
int	 config_finish(struct config_state *, char **cause);

#endif
