/*
 * The classifier's environment: which variable names a command or an
 * item may set.
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

#include "exec/classify.h"
#include "exec/cls.h"
#include "exec/shparse.h"
#include "logs/xmalloc.h"

/*
 * NAME=value words that change what later commands are or load: PATH=.
 * makes "ls" run ./ls. Checked in assignments, export/declare/env args.
 */
const char *
cls_risky_assign(char *const *w, size_t n)
{
	static const char *const names[] = { "PATH", "IFS", "ENV",
	    "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND",
	    "CDPATH", "PYTHONPATH", "PYTHONSTARTUP", "PERL5LIB", "PERL5OPT",
	    "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH", "GIT_SSH",
	    "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER",
	    "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_EXEC_PATH", "GIT_DIR",
	    "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
	    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "LESSOPEN",
	    "MANPAGER", NULL };
	char	 name[64];
	size_t	 i, len;

	for (i = 0; i < n; i++) {
		len = strcspn(w[i], "+=");
		if (w[i][len] == '\0' || len >= sizeof name)
			continue;
		memcpy(name, w[i], len);
		name[len] = '\0';
		if (cls_in(name, names) || strncmp(name, "LD_", 3) == 0 ||
		    strncmp(name, "GIT_CONFIG_", 11) == 0)
			return (w[i]);
	}
	return (NULL);
}
