/*
 * The worker's settings: the command line. Flags are collected before
 * any other layer is read (--config names the file, --help and --version
 * end it) and applied last, above them all.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logs/xmalloc.h"
#include "worker/config_int.h"

#define CONFIG_VERSION	"execq-worker " EXECQ_VERSION

/* getopt_long values of the flags that are not in the table. */
#define CONFIG_FLAG_CONFIG	1
#define CONFIG_FLAG_CHECK	2	/* --check-confinement */
#define CONFIG_FLAG_SET		256	/* + index: --flag */
#define CONFIG_FLAG_CLEAR	512	/* + index: a bool's --no-flag */

/* getopt_long's table, built from config_opts. Free it. */
static struct option *
config_longopts(void)
{
	struct option	*lo, *o;
	size_t		 i;

	o = lo = xcalloc(2 * config_nopts + 6, sizeof *lo);
	for (i = 0; i < config_nopts; i++) {
		if (config_opts[i].flag == NULL)
			continue;	/* a secret: never on argv */
		o->name = config_opts[i].flag;
		o->has_arg = config_opts[i].type == CONFIG_BOOL ?
		    no_argument : required_argument;
		(o++)->val = CONFIG_FLAG_SET + i;
		if (config_opts[i].noflag == NULL)
			continue;
		o->name = config_opts[i].noflag;
		(o++)->val = CONFIG_FLAG_CLEAR + i;
	}
	*o++ = (struct option){ "config", required_argument, NULL,
	    CONFIG_FLAG_CONFIG };
	*o++ = (struct option){ "check-confinement", no_argument, NULL,
	    CONFIG_FLAG_CHECK };
	*o++ = (struct option){ "verbose", no_argument, NULL, 'v' };
	*o++ = (struct option){ "help", no_argument, NULL, 'h' };
	*o = (struct option){ "version", no_argument, NULL, 'V' };
	return (lo);
}

/* The message for a flag getopt refused: ch is '?' or ':'. */
static int
config_flag_error(int ch, char **argv, char **cause)
{
	const char	*arg = argv[optind - 1];

	if (ch == ':')
		xasprintf(cause, "%s needs a value", arg);
	else if (optopt >= CONFIG_FLAG_SET)
		xasprintf(cause, "%s takes no value", arg);
	else if (optopt != 0)
		xasprintf(cause, "unknown flag '-%c'", optopt);
	else
		xasprintf(cause, "unknown flag '%s'", arg);
	return (-1);
}

/*
 * 1 if the flag of row i, which takes a password's file, was typed
 * shortened: getopt takes --redis-password for --redis-password-file,
 * and what follows would be a password, to be shown in an error.
 */
static int
config_flag_abbreviated(size_t i, char **argv)
{
	const char	*flag = config_opts[i].flag;
	size_t		 len = strlen(flag);

	if (strcmp(config_opts[i].key, "redis_password_file") != 0)
		return (0);
	if (optind >= 1 && strncmp(argv[optind - 1], "--", 2) == 0 &&
	    strncmp(argv[optind - 1] + 2, flag, len) == 0 &&
	    argv[optind - 1][len + 2] == '=')
		return (0);
	return (optind < 2 || strncmp(argv[optind - 2], "--", 2) != 0 ||
	    strcmp(argv[optind - 2] + 2, flag) != 0);
}

/* One flag: 0 to go on, 1 after --help or --version, -1 on error. */
static int
config_flag(struct config_state *st, int ch, char **argv, char **cause)
{
	size_t	i;

	switch (ch) {
	case 'v':
		st->verbose++;
		return (0);
	case 'h':
		config_usage(stdout);
		return (1);
	case 'V':
		printf("%s\n", CONFIG_VERSION);
		return (1);
	case CONFIG_FLAG_CONFIG:
		st->config_file = optarg;
		return (0);
	case CONFIG_FLAG_CHECK:
		st->check = 1;
		return (0);
	case '?':
	case ':':
		return (config_flag_error(ch, argv, cause));
	}
	i = ch - (ch >= CONFIG_FLAG_CLEAR ? CONFIG_FLAG_CLEAR :
	    CONFIG_FLAG_SET);
	if (config_flag_abbreviated(i, argv)) {
		xasprintf(cause, "spell out --%s (a password is never given "
		    "on the command line)", config_opts[i].flag);
		return (-1);
	}
	if (config_opts[i].type != CONFIG_BOOL)
		st->seen[i].flag_val = optarg;
	else
		st->seen[i].flag_val = ch >= CONFIG_FLAG_CLEAR ? "0" : "1";
	st->seen[i].flag_name = ch >= CONFIG_FLAG_CLEAR ?
	    config_opts[i].noflag : config_opts[i].flag;
	return (0);
}

/* Collects the flags into st; they are applied after the other layers. */
int
config_parse_flags(struct config_state *st, int argc, char **argv,
    char **cause)
{
	struct option	*lo;
	int		 ch, r = 0;

	if (argc < 1)
		return (0);
	lo = config_longopts();
	optind = 0;	/* GNU: full reset, so config_load can run again */
	opterr = 0;
	while (r == 0 &&
	    (ch = getopt_long(argc, argv, "+:vhV", lo, NULL)) != -1)
		r = config_flag(st, ch, argv, cause);
	if (r == 0 && optind < argc) {
		xasprintf(cause, "unexpected argument '%s'", argv[optind]);
		r = -1;
	}
	free(lo);
	return (r);
}

/* The top layer: what config_parse_flags() collected. */
int
config_apply_flags(struct config_state *st, char **cause)
{
	char	*where;
	size_t	 i;
	int	 r = 0;

	for (i = 0; r == 0 && i < config_nopts; i++) {
		if (st->seen[i].flag_val == NULL)
			continue;
		xasprintf(&where, "--%s", st->seen[i].flag_name);
		r = config_set(st, i, st->seen[i].flag_val, where, cause);
		free(where);
	}
	return (r);
}
