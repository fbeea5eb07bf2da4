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

#include "policy/classify.h"
#include "policy/cls.h"
#include "policy/shparse.h"
#include "logs/xmalloc.h"

/* How the shell named who reads a string: eval as the one around it. */
static enum cls_shell
cls_wrap_dialect(const struct cls_ctx *ctx, const char *who)
{
	if (strcmp(who, "eval") == 0)
		return (ctx->dialect == SH_POSIX ? CLS_SHELL_POSIX :
		    CLS_SHELL_BASH);
	return (cls_shell_named(who));
}

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
	cls_recurse_source(ctx, str, strlen(str), cls_wrap_dialect(ctx, who));
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

/* sudo, doas: what they run is root's. */
static ssize_t
cls_wrap_sudo(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	size_t	i;

	ctx->privileged = 1;
	i = cls_skip_opts(ws, 1, (const char *const[]){ "-u", "-g", "-h",
	    "-p", "-C", "-D", "-r", "-t", "-U", "--user", "--group", "--host",
	    "--prompt", "--close-from", "--chdir", "--role", "--type",
	    "--other-user", "--command-timeout", NULL });
	if (i >= ws->n || cls_flag_before(ws, i, 'i', "--login") ||
	    cls_flag_before(ws, i, 's', "--shell")) {
		cls_raise(r, CLS_UNKNOWN, "wrapper:sudo", "%s opens a root "
		    "shell", name);
		return (-1);
	}
	cls_raise(r, CLS_DESTRUCTIVE, "wrapper:sudo", "%s runs %s as root",
	    name, ws->w[i]);
	return ((ssize_t)i);
}

/* nohup, time, exec, builtin, setsid, unbuffer: the rest runs. */
static ssize_t
cls_wrap_plain(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	(void)ctx;
	if (strcmp(name, "nohup") == 0)
		cls_raise(r, CLS_WRITE, "write:nohup", "nohup writes nohup.out "
		    "when its output is a terminal (a PTY session)");
	return ((ssize_t)cls_skip_opts(ws, 1, (const char *const[]){ "-a",
	    NULL }));
}

/* command NAME runs NAME; command -v only looks it up. */
static ssize_t
cls_wrap_command(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	size_t	i = cls_skip_opts(ws, 1, (const char *const[]){ NULL });

	(void)ctx;
	(void)name;
	if (cls_flag_before(ws, i, 'v', NULL) ||
	    cls_flag_before(ws, i, 'V', NULL)) {
		cls_raise(r, CLS_READ_ONLY, "read_only:command", "command -v "
		    "only looks a name up");
		return (-1);
	}
	return ((ssize_t)i);
}

/* env [-u NAME] [NAME=value]... COMMAND: only safe names. */
static ssize_t
cls_wrap_env(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	const char	*s;
	size_t		 i;

	(void)name;
	i = cls_skip_opts(ws, 1, (const char *const[]){ "-u", "--unset",
	    "-C", "--chdir", NULL });
	if (cls_flag_before(ws, i, 'S', "--split-string")) {
		cls_raise(r, CLS_UNKNOWN, "unknown:env", "env -S splits a "
		    "string into a command");
		return (-1);
	}
	while (i < ws->n && strchr(ws->w[i], '=') != NULL)
		i++;
	if ((s = cls_env_unsafe(ctx->p, ws->w + 1, i - 1, 0, 0)) != NULL) {
		cls_raise(r, CLS_UNKNOWN, "unknown:environment", "env sets "
		    "%.*s, which is not on the environment's safe list",
		    (int)strcspn(s, "="), s);
		return (-1);
	}
	if (i >= ws->n) {
		cls_raise(r, CLS_READ_ONLY, "read_only:env", "env prints the "
		    "environment");
		return (-1);
	}
	return ((ssize_t)i);
}

/* nice, ionice, stdbuf, chrt (PRIORITY), timeout DURATION, taskset MASK. */
static ssize_t
cls_wrap_nice(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	size_t	i;

	(void)ctx;
	(void)r;
	i = cls_skip_opts(ws, 1, (const char *const[]){ "-n", "-c", "-p",
	    "-i", "-o", "-e", "-s", "-k", "--signal", "--kill-after", NULL });
	if (cls_in(name, (const char *const[]){ "chrt", "timeout", "taskset",
	    NULL }))
		i++;		/* the priority, duration or mask */
	return ((ssize_t)(i <= ws->n ? i : ws->n));
}

/* xargs [options] COMMAND: the command runs on its input. */
static ssize_t
cls_wrap_xargs(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	size_t	i;

	(void)ctx;
	(void)name;
	i = cls_skip_opts(ws, 1, (const char *const[]){ "-n", "-L", "-I",
	    "-d", "-P", "-s", "-E", "-a", "--arg-file", "--max-args",
	    "--max-lines", "--max-procs", "--max-chars", "--delimiter",
	    "--eof", "--process-slot-var", "--replace", NULL });
	if (i >= ws->n) {
		cls_raise(r, CLS_READ_ONLY, "read_only:xargs", "xargs with no "
		    "command only echoes");
		return (-1);
	}
	return ((ssize_t)i);
}

/* busybox APPLET: the applet is the command. */
static ssize_t
cls_wrap_busybox(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	(void)ctx;
	(void)ws;
	(void)name;
	(void)r;
	return (1);
}

/* flock, chroot, unshare, nsenter: where or how it runs changes. */
static ssize_t
cls_wrap_ns(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	size_t	i;

	(void)ctx;
	cls_raise(r, CLS_UNKNOWN, "unknown:namespace", "%s changes where or "
	    "how the command runs", name);
	i = cls_skip_opts(ws, 1, (const char *const[]){ "-w", "-E", "-t",
	    NULL });
	if (strcmp(name, "flock") == 0 || strcmp(name, "chroot") == 0)
		i++;
	return ((ssize_t)(i <= ws->n ? i : ws->n));
}

/* sh, bash, ...: -c STRING is classified; a script is not. */
static ssize_t
cls_wrap_shell(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	return (cls_shell(ctx, ws, name, r) ? -1 : 0);
}

/* su [-c STRING]: as another user. */
static ssize_t
cls_wrap_su(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	const char	*s;
	size_t		 i;

	(void)name;
	ctx->privileged = 1;
	cls_raise(r, CLS_DESTRUCTIVE, "wrapper:su", "su runs as another user");
	for (i = 1; i < ws->n; i++) {
		s = ws->w[i];
		if (strncmp(s, "--command=", 10) == 0)
			cls_nested(ctx, s + 10, ws->f[i], "su", r);
		else if (s[0] == '-' && s[1] == 'c' && s[2] != '\0')
			cls_nested(ctx, s + 2, ws->f[i], "su", r);
		else if ((strcmp(s, "-c") == 0 || cls_opt_match(s,
		    "--command")) && i + 1 < ws->n)
			cls_nested(ctx, ws->w[i + 1], ws->f[i + 1], "su", r);
		else
			continue;
		return (-1);
	}
	cls_raise(r, CLS_UNKNOWN, "wrapper:su", "su opens a shell");
	return (-1);
}

/* eval, watch, ssh HOST: the rest is a shell command string. */
static ssize_t
cls_wrap_remote(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	static const char *const with_arg[] = { "-n", "-p", "-i", "-l", "-o",
	    "-F", "-J", "-L", "-R", NULL };
	char	*s;
	size_t	 i, k;
	int	 ssh = strcmp(name, "ssh") == 0;

	i = cls_skip_opts(ws, 1, with_arg) + ssh;	/* ssh: the host */
	if (ssh) {
		cls_raise(r, CLS_NETWORK, "network:ssh", "ssh runs on another "
		    "machine");
		if (cls_flag_before(ws, i, 'o', NULL) ||
		    cls_flag_before(ws, i, 'F', NULL)) {
			cls_raise(r, CLS_UNKNOWN, "unknown:option", "ssh -o and "
			    "-F can run another program (ProxyCommand, "
			    "LocalCommand)");
			return (-1);
		}
	}
	if (i >= ws->n)
		return (-1);
	for (k = i; k < ws->n; k++)
		if (ws->f[k] & SH_W_DYNAMIC) {
			cls_raise(r, CLS_UNKNOWN, "unknown:dynamic", "%s runs a "
			    "command computed at run time", name);
			return (-1);
		}
	s = cls_join(ws->w + i, ws->n - i);
	cls_nested(ctx, s, 0, name, r);
	free(s);
	return (-1);
}

/* Wrappers by name (space-separated) and what peels each. */
static const struct {
	const char	*names;
	ssize_t		(*fn)(struct cls_ctx *, struct cls_words *,
			    const char *, struct cls_res *);
} cls_wrappers[] = {
	{ "sudo doas", cls_wrap_sudo },
	{ "nohup time exec builtin setsid unbuffer", cls_wrap_plain },
	{ "command", cls_wrap_command },
	{ "env", cls_wrap_env },
	{ "nice ionice stdbuf chrt timeout taskset", cls_wrap_nice },
	{ "xargs", cls_wrap_xargs },
	{ "busybox", cls_wrap_busybox },
	{ "flock chroot unshare nsenter", cls_wrap_ns },
	{ "sh bash dash zsh ksh mksh ash", cls_wrap_shell },
	{ "su", cls_wrap_su },
	{ "eval watch ssh", cls_wrap_remote },
};

/*
 * If ws starts with a wrapper, its words to drop (> 0), 0 if it is not a
 * wrapper, or -1 when it was handled whole (r set).
 */
ssize_t
cls_wrapper(struct cls_ctx *ctx, struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	size_t	i;

	for (i = 0; i < sizeof cls_wrappers / sizeof cls_wrappers[0]; i++)
		if (cls_listed(cls_wrappers[i].names, name, strlen(name)))
			return (cls_wrappers[i].fn(ctx, ws, name, r));
	return (0);
}
