/*
 * The classifier's wrappers: sudo, env, timeout, xargs, sh -c, ssh, ...
 * are peeled and what they run is classified instead.
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

/* Parses str as a shell command of its own (sh -c, eval, ssh, watch). */
static void
cls_nested(struct cls_ctx *ctx, const char *str, unsigned f,
    const char *who, struct cls_res *r)
{
	struct cls_scope	 sc;
	int			 own;

	if (f & SH_W_DYNAMIC) {
		cls_raise(r, CLS_UNKNOWN, "unknown:dynamic", "%s runs a "
		    "command string computed at run time", who);
		return;
	}
	if (ctx->depth >= CLS_DEPTH_MAX) {
		cls_raise(r, CLS_UNKNOWN, "unknown:nested", "%s nests shells "
		    "too deeply to follow", who);
		return;
	}
	cls_raise(r, CLS_READ_ONLY, "wrapper:shell", "%s runs its string as "
	    "a shell command (classified with it)", who);
	ctx->depth++;
	own = strcmp(who, "eval") != 0;	/* eval's cd stays; a shell's not */
	if (own)
		cls_scope_enter(ctx, &sc);
	cls_source(ctx, str, strlen(str));
	if (own)
		cls_scope_leave(ctx, &sc);
	ctx->depth--;
}

/* sh/bash -c STR; 1 if handled (no inner words to classify). */
static int
cls_shell(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	static const char *const with_arg[] = { "-o", "+o", "-O", "+O",
	    "--rcfile", "--init-file", NULL };
	size_t	i;

	for (i = 1; i < ws->n; i++) {
		if (strcmp(ws->w[i], "-c") == 0 || (ws->w[i][0] == '-' &&
		    ws->w[i][1] != '-' && strchr(ws->w[i], 'c') != NULL)) {
			if (i + 1 >= ws->n)
				break;
			cls_nested(ctx, ws->w[i + 1], ws->f[i + 1], name, r);
			return (1);
		}
		if (!cls_is_opt(ws->w[i]) && ws->w[i][0] != '+')
			break;
		if (cls_in(ws->w[i], with_arg))
			i++;
	}
	cls_raise(r, CLS_UNKNOWN, "unknown:shell", "%s runs a script or its "
	    "standard input, which is not classified", name);
	return (1);
}

/*
 * If ws starts with a wrapper, its words to drop (> 0), 0 if it is not a
 * wrapper, or -1 when it was handled whole (r set).
 */
ssize_t
cls_wrapper(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh",
	    "ksh", "mksh", "ash", NULL };
	static const char *const plain[] = { "nohup", "time", "exec",
	    "builtin", "setsid", "unbuffer", NULL };
	char	*s;
	size_t	 i;

	if (strcmp(name, "sudo") == 0 || strcmp(name, "doas") == 0) {
		ctx->privileged = 1;
		i = cls_skip_opts(ws, 1, (const char *const[]){ "-u", "-g",
		    "-h", "-p", "-C", "-D", "-r", "-t", "-U", "--user",
		    "--group", "--host", "--prompt", "--close-from", "--chdir",
		    "--role", "--type", "--other-user", "--command-timeout",
		    NULL });
		if (i >= ws->n || cls_flag_before(ws, i, 'i', "--login") ||
		    cls_flag_before(ws, i, 's', "--shell")) {
			cls_raise(r, CLS_UNKNOWN, "wrapper:sudo", "%s opens a "
			    "root shell", name);
			return (-1);
		}
		cls_raise(r, CLS_DESTRUCTIVE, "wrapper:sudo", "%s runs %s as "
		    "root", name, ws->w[i]);
		return ((ssize_t)i);
	}
	if (cls_in(name, plain))
		return (cls_skip_opts(ws, 1, (const char *const[]){ "-a",
		    NULL }));
	if (strcmp(name, "command") == 0) {
		i = cls_skip_opts(ws, 1, (const char *const[]){ NULL });
		if (cls_flag_before(ws, i, 'v', NULL) ||
		    cls_flag_before(ws, i, 'V', NULL)) {
			cls_raise(r, CLS_READ_ONLY, "read_only:command",
			    "command -v only looks a name up");
			return (-1);
		}
		return ((ssize_t)i);
	}
	if (strcmp(name, "env") == 0) {
		i = cls_skip_opts(ws, 1, (const char *const[]){ "-u",
		    "--unset", "-C", "--chdir", NULL });
		if (cls_flag_before(ws, i, 'S', "--split-string")) {
			cls_raise(r, CLS_UNKNOWN, "unknown:env", "env -S splits "
			    "a string into a command");
			return (-1);
		}
		while (i < ws->n && strchr(ws->w[i], '=') != NULL)
			i++;
		if (cls_risky_assign(ws->w + 1, i - 1) != NULL) {
			cls_raise(r, CLS_UNKNOWN, "unknown:environment", "env "
			    "sets a variable that changes which programs run");
			return (-1);
		}
		if (i >= ws->n) {
			cls_raise(r, CLS_READ_ONLY, "read_only:env",
			    "env prints the environment");
			return (-1);
		}
		return ((ssize_t)i);
	}
	if (strcmp(name, "nice") == 0 || strcmp(name, "ionice") == 0 ||
	    strcmp(name, "stdbuf") == 0 || strcmp(name, "chrt") == 0)
		return (cls_skip_opts(ws, 1, (const char *const[]){ "-n", "-c",
		    "-p", "-i", "-o", "-e", NULL }) + (strcmp(name, "chrt") == 0 ?
		    1 : 0));
	if (strcmp(name, "timeout") == 0) {
		i = cls_skip_opts(ws, 1, (const char *const[]){ "-s", "-k",
		    "--signal", "--kill-after", NULL });
		return ((ssize_t)(i + 1 <= ws->n ? i + 1 : ws->n));
	}
	if (strcmp(name, "taskset") == 0) {
		i = cls_skip_opts(ws, 1, (const char *const[]){ NULL });
		return ((ssize_t)(i + 1 <= ws->n ? i + 1 : ws->n));
	}
	if (strcmp(name, "xargs") == 0) {
		i = cls_skip_opts(ws, 1, (const char *const[]){ "-n", "-L",
		    "-I", "-d", "-P", "-s", "-E", "-a", "--arg-file",
		    "--max-args", "--max-lines", "--max-procs", "--max-chars",
		    "--delimiter", "--eof", "--process-slot-var", "--replace",
		    NULL });
		if (i >= ws->n) {
			cls_raise(r, CLS_READ_ONLY, "read_only:xargs",
			    "xargs with no command only echoes");
			return (-1);
		}
		return ((ssize_t)i);
	}
	if (strcmp(name, "busybox") == 0)
		return (1);
	if (strcmp(name, "flock") == 0 || strcmp(name, "chroot") == 0 ||
	    strcmp(name, "unshare") == 0 || strcmp(name, "nsenter") == 0) {
		cls_raise(r, CLS_UNKNOWN, "unknown:namespace", "%s changes "
		    "where or how the command runs", name);
		i = cls_skip_opts(ws, 1, (const char *const[]){ "-w", "-E",
		    "-t", NULL });
		if (strcmp(name, "flock") == 0 || strcmp(name, "chroot") == 0)
			i++;
		return ((ssize_t)(i <= ws->n ? i : ws->n));
	}
	if (cls_in(name, shells))
		return (cls_shell(ctx, ws, name, r) ? -1 : 0);
	if (strcmp(name, "eval") == 0 || strcmp(name, "watch") == 0 ||
	    strcmp(name, "ssh") == 0 || strcmp(name, "su") == 0) {
		if (strcmp(name, "su") == 0) {
			ctx->privileged = 1;
			cls_raise(r, CLS_DESTRUCTIVE, "wrapper:su", "su runs "
			    "as another user");
			for (i = 1; i < ws->n; i++) {
				s = ws->w[i];
				if (strncmp(s, "--command=", 10) == 0) {
					cls_nested(ctx, s + 10, ws->f[i], "su", r);
					return (-1);
				}
				if (s[0] == '-' && s[1] == 'c' && s[2] != '\0') {
					cls_nested(ctx, s + 2, ws->f[i], "su", r);
					return (-1);
				}
				if ((strcmp(s, "-c") == 0 ||
				    cls_opt_match(s, "--command")) &&
				    i + 1 < ws->n) {
					cls_nested(ctx, ws->w[i + 1],
					    ws->f[i + 1], "su", r);
					return (-1);
				}
			}
			cls_raise(r, CLS_UNKNOWN, "wrapper:su", "su opens a "
			    "shell");
			return (-1);
		}
		i = cls_skip_opts(ws, 1, (const char *const[]){ "-n", "-p",
		    "-i", "-l", "-o", "-F", "-J", "-L", "-R", NULL });
		if (strcmp(name, "ssh") == 0) {
			cls_raise(r, CLS_NETWORK, "network:ssh", "ssh runs "
			    "on another machine");
			i++;	/* the host */
		}
		if (i >= ws->n)
			return (-1);
		for (s = NULL; i < ws->n; i++)
			if (ws->f[i] & SH_W_DYNAMIC)
				break;
		if (i < ws->n) {
			cls_raise(r, CLS_UNKNOWN, "unknown:dynamic", "%s runs "
			    "a command computed at run time", name);
			return (-1);
		}
		i = cls_skip_opts(ws, 1, (const char *const[]){ "-n", "-p",
		    "-i", "-l", "-o", "-F", "-J", "-L", "-R", NULL }) +
		    (strcmp(name, "ssh") == 0);
		s = cls_join(ws->w + i, ws->n - i);
		cls_nested(ctx, s, 0, name, r);
		free(s);
		return (-1);
	}
	return (0);
}
