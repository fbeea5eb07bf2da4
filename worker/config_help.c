/* The worker's settings: --help, written from the table. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logs/xmalloc.h"
#include "worker/config_int.h"


/* One option of --help: flags on the left, help lines on the right. */
static void
config_usage_row(FILE *f, const char *left1, const char *left2,
    const char *help, const char *env, const char *def)
{
	const char	*left[2] = { left1, left2 }, *p, *nl;
	char		*text;
	int		 row, len;

	xasprintf(&text, "%s\n(%s; default %s)", help, env, def);
	for (p = text, row = 0; p != NULL; p = nl, row++) {
		if ((nl = strchr(p, '\n')) != NULL)
			len = (int)(nl++ - p);
		else
			len = (int)strlen(p);
		fprintf(f, "  %-22s  %.*s\n", row < 2 && left[row] != NULL ?
		    left[row] : "", len, p);
	}
	free(text);
}

/* The table's options, in its order. */
static void
config_usage_opts(FILE *f)
{
	const struct config_opt	*opt;
	char			 left[64], noflag[64];
	size_t			 i;

	for (i = 0; i < config_nopts; i++) {
		opt = &config_opts[i];
		if (opt->flag == NULL)
			snprintf(left, sizeof left, "(no flag)");
		else
			snprintf(left, sizeof left, "--%s%s%s", opt->flag,
			    opt->metavar != NULL ? " " : "",
			    opt->metavar != NULL ? opt->metavar : "");
		snprintf(noflag, sizeof noflag, "--%s",
		    opt->noflag != NULL ? opt->noflag : "");
		config_usage_row(f, left, opt->noflag != NULL ? noflag : NULL,
		    opt->help, opt->env, opt->def != NULL ? opt->def :
		    "<hostname>-<pid>");
	}
}

/* --help. */
void
config_usage(FILE *f)
{
	fprintf(f, "execq-worker: runs shell commands taken from a Redis "
	    "queue.\n\n"
	    "usage: execq-worker [options]\n\n"
	    "Running commands is OFF by default: pass --enable-execute or set\n"
	    "ENABLE_EXECUTE=1, or every EXEC item is answered with an error.\n"
	    "\n"
	    "Options (in parentheses: the environment variable and the "
	    "default):\n");
	config_usage_row(f, "--config FILE", NULL,
	    "JSON config file, keys as in docs/CONFIG.md", "EXECQ_CONFIG",
	    "none");
	config_usage_opts(f);
	fprintf(f, "  %-22s  %s\n  %-22s  %s\n  %-22s  %s\n  %-22s  %s\n"
	    "  %-22s  %s\n\n",
	    "--check-confinement", "probe every confinement layer, print",
	    "", "them, exit 0 if all are on (1 if not)",
	    "-v, --verbose", "debug diagnostics on stderr",
	    "-h, --help", "print this help and exit",
	    "-V, --version", "print the version and exit");
	fprintf(f, "Precedence, highest first: flags, environment, config "
	    "file, defaults.\n"
	    "Seconds may be fractional (0.5); sizes take k, m or g (64k,\n"
	    "1m, 2g).\n"
	    "Every setting is described in docs/CONFIG.md.\n");
}
