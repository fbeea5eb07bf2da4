/*
 * The classifier's paths: catastrophic targets (the root, system
 * directories, a home), devices, and the path sandbox.
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

/* ---- catastrophic paths ---------------------------------------------- */

static const char *const cls_sysdirs[] = { "/bin", "/boot", "/dev", "/etc",
    "/home", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
    "/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var", "/snap",
    "/media", "/mnt", "/boot/efi", "/usr/bin", "/usr/lib", "/usr/sbin",
    "/usr/local", "/usr/share", "/var/lib", "/tmp", NULL };

/*
 * Lexical normal form of an absolute path: no //, no /./, .. applied,
 * no trailing slash ("/" stays). Allocated.
 */
char *
cls_norm(const char *path)
{
	char		*out = xmalloc(strlen(path) + 2);
	const char	*p = path, *e;
	size_t		 len = 0, n;

	while (*p != '\0') {
		while (*p == '/')
			p++;
		e = p + strcspn(p, "/");
		n = e - p;
		if (n == 0 || (n == 1 && p[0] == '.'))
			;
		else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
		} else {
			out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
		}
		p = e;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	return (out);
}

/* 1 if s has an unquoted-looking glob character. */
static int
cls_globby(const char *s)
{
	return (strpbrk(s, "*?[{") != NULL);
}

/*
 * Why an absolute path is catastrophic to delete or rewrite, or NULL:
 * the root, a glob right under it ("/u*"), a top-level system directory,
 * or a glob of everything in one.
 */
static const char *
cls_root_path(const char *abs)
{
	char		*n = cls_norm(abs), *slash;
	const char	*why = NULL;

	if (strcmp(n, "/") == 0)
		why = "/ (the root directory)";
	else if (cls_in(n, cls_sysdirs))
		why = "a top-level system directory";
	else if ((slash = strrchr(n, '/')) != NULL && cls_globby(slash)) {
		*slash = '\0';
		if (*n == '\0')
			why = "everything under / (the root directory)";
		else if (cls_in(n, cls_sysdirs))
			why = "everything in a top-level system directory";
	}
	free(n);
	return (why);
}

/*
 * Why a target word is catastrophic (rm -r, chmod -R, mv), or NULL. f is
 * its SH_W_* flags: "$HOME" expanded differs from '$HOME' quoted.
 */
const char *
cls_root_target(const char *w, unsigned f, const char *cwd)
{
	const char	*rest, *why;
	char		*joined, *value;
	size_t		 n;

	if (w[0] == '~') {
		rest = w + 1 + strcspn(w + 1, "/");
		if (*rest == '\0' || strcmp(rest, "/") == 0 ||
		    strcmp(rest, "/*") == 0 || strcmp(rest, "/.") == 0)
			return ("a home directory");
	}
	if ((f & SH_W_DYNAMIC) && w[0] == '$') {
		if (strncmp(w, "$HOME", 5) == 0 && !isalnum((unsigned char)w[5])
		    && w[5] != '_')
			rest = w + 5;
		else if (strncmp(w, "${HOME}", 7) == 0)
			rest = w + 7;
		else
			rest = NULL;
		if (rest != NULL && (*rest == '\0' || strcmp(rest, "/") == 0 ||
		    strcmp(rest, "/*") == 0 || strcmp(rest, "/.") == 0))
			return ("the home directory ($HOME)");
		/* $X/ with X empty or unset is /. ${X:?} and ${X?} are not. */
		if (w[1] == '{' && (rest = strchr(w, '}')) != NULL) {
			n = strcspn(w + 2, ":?-=}");
			if (w[2 + n] == '?' || (w[2 + n] == ':' &&
			    w[3 + n] == '?'))
				return (NULL);
			/* ${X:-/} and ${X-/}: the default may be the root. */
			value = w + 2 + n + (w[2 + n] == ':') + 1 < rest ?
			    xstrndup(w + 3 + n + (w[2 + n] == ':'), rest -
			    (w + 3 + n + (w[2 + n] == ':'))) : NULL;
			if (value != NULL) {
				xasprintf(&joined, "%s%s", value, rest + 1);
				why = joined[0] == '/' ? cls_root_path(joined) :
				    NULL;
				free(joined);
				free(value);
				if (why != NULL)
					return ("/ or a system directory if the "
					    "variable's default is used");
			}
			rest++;
		} else if (w[1] == '(') {
			if ((rest = strchr(w, ')')) == NULL)
				return (NULL);
			rest++;
		} else {
			rest = w + 1;
			while (isalnum((unsigned char)*rest) || *rest == '_')
				rest++;
		}
		if (rest[0] == '/' && cls_root_path(rest) != NULL)
			return ("/ or a system directory if the variable in "
			    "front is empty");
		return (NULL);
	}
	if (w[0] == '/')
		return (cls_root_path(w));
	if (cwd != NULL && w[0] != '$' && w[0] != '~') {
		xasprintf(&joined, "%s/%s", cwd, w);
		why = cls_root_path(joined);
		free(joined);
		if (why != NULL)
			return (why);
	}
	return (NULL);
}

/* Block devices: writing one destroys a disk. */
int
cls_block_device(const char *path)
{
	static const char *const pats[] = { "/dev/sd*", "/dev/hd*",
	    "/dev/vd*", "/dev/xvd*", "/dev/nvme*", "/dev/mmcblk*", "/dev/md*",
	    "/dev/dm-*", "/dev/loop*", "/dev/mapper/*", "/dev/disk/*",
	    "/dev/sr*", "/dev/mem", "/dev/kmem", "/dev/port", "/dev/nbd*",
	    "/dev/block/*", "/dev/rbd*", "/dev/zd*", "/dev/ubd*",
	    "/proc/sysrq-trigger", NULL };
	char	*n;
	size_t	 i;
	int	 hit = 0;

	if (path[0] != '/')
		return (0);
	n = cls_norm(path);
	if (strncmp(n, "/dev/fd/", 8) == 0 || strncmp(n, "/proc/self/fd/", 14) ==
	    0)
		hit = 0;	/* an fd of ours, checked where it is opened */
	for (i = 0; pats[i] != NULL && !hit; i++)
		hit = fnmatch(pats[i], n, 0) == 0;
	free(n);
	return (hit);
}

/* Devices any command may name. */
int
cls_harmless_device(const char *path)
{
	static const char *const ok[] = { "/dev/null", "/dev/stdin",
	    "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero",
	    "/dev/random", "/dev/urandom", "/dev/full", NULL };

	char	*n;
	int	 hit;

	if (path[0] != '/')
		return (0);
	n = cls_norm(path);	/* "/dev/fd/../../etc/x" is not an fd */
	hit = cls_in(n, ok) || (strncmp(n, "/dev/fd/", 8) == 0 &&
	    strchr(n + 8, '/') == NULL);
	free(n);
	return (hit);
}

/* ---- the path sandbox -------------------------------------------------- */

/* 1 if path is root or under it. */
static int
cls_under(const char *path, const char *root)
{
	size_t	len = strlen(root);

	if (strcmp(root, "/") == 0)
		return (1);
	return (strncmp(path, root, len) == 0 &&
	    (path[len] == '\0' || path[len] == '/'));
}

/*
 * The path as the kernel would find it: the longest existing prefix
 * realpath'd (symlinks followed), the rest appended lexically.
 */
static char *
cls_resolve(const char *abs)
{
	char		*n = cls_norm(abs), *prefix = xstrdup(n), *cut, *rp;
	char		*joined, *out;
	const char	*suffix;

	while ((rp = realpath(prefix, NULL)) == NULL) {
		if ((cut = strrchr(prefix, '/')) == NULL || cut == prefix) {
			prefix[1] = '\0';	/* "/" */
			rp = xstrdup("/");
			break;
		}
		*cut = '\0';
	}
	suffix = strcmp(prefix, "/") == 0 ? n : n + strlen(prefix);
	xasprintf(&joined, "%s%s", strcmp(rp, "/") == 0 ? "" : rp, suffix);
	out = cls_norm(joined);
	free(joined);
	free(rp);
	free(prefix);
	free(n);
	return (out);
}

/* 1 if the resolved path is inside the workspace or an allowed root. */
static int
cls_inside(const struct cls_policy *p, const char *resolved)
{
	size_t	i;

	if (cls_under(resolved, p->workspace))
		return (1);
	for (i = 0; i < p->nallow; i++)
		if (cls_under(resolved, p->allow_paths[i]))
			return (1);
	return (0);
}

/* Records the first path outside the sandbox. */
static void
cls_outside(struct cls_ctx *ctx, const char *what, const char *resolved)
{
	if (ctx->v->outside != NULL)
		return;
	ctx->v->outside = xstrdup(resolved);
	xasprintf(&ctx->v->outside_reason, "%s %s, outside the workspace %s",
	    what, resolved, ctx->p->workspace);
}

/*
 * Checks one word as a path: absolute, ~, with a .. component, or
 * through a symlink that exists. what says who uses it ("cat names").
 */
void
cls_check_path(struct cls_ctx *ctx, const char *w, unsigned f,
    const char *what)
{
	struct stat	 sb;
	char		*abs, *res;

	if (ctx->p->workspace == NULL || ctx->v->outside != NULL ||
	    *w == '\0' || cls_harmless_device(w))
		return;
	if (w[0] == '~') {		/* the home directory, or a user's */
		cls_outside(ctx, what, w);
		return;
	}
	if (f & SH_W_DYNAMIC)
		return;
	if (w[0] != '/') {
		if (ctx->cwd == NULL) {
			/* After "cd -" or "cd $X" only .. is known to leave. */
			if (strstr(w, "..") != NULL)
				cls_outside(ctx, what, w);
			return;
		}
		xasprintf(&abs, "%s/%s", ctx->cwd, w);
		/* A plain word that names nothing here cannot leave. */
		if (strchr(w, '/') == NULL && strcmp(w, "..") != 0 &&
		    lstat(abs, &sb) != 0) {
			free(abs);
			return;
		}
	} else
		abs = xstrdup(w);
	res = cls_resolve(abs);
	if (!cls_inside(ctx->p, res))
		cls_outside(ctx, what, res);
	free(res);
	free(abs);
}

/* Every argument (and --opt=VALUE value) of a command as a path. */
void
cls_check_args(struct cls_ctx *ctx, const struct cls_words *ws)
{
	const char	*eq;
	char		 what[128];
	size_t		 i;

	if (ctx->p->workspace == NULL || ws->n == 0)
		return;
	snprintf(what, sizeof what, "%s names", cls_base(ws->w[0]));
	for (i = 1; i < ws->n && ctx->v->outside == NULL; i++) {
		if (ws->w[i][0] == '-') {
			if (ws->w[i][1] == '-' && (eq = strchr(ws->w[i],
			    '=')) != NULL)
				cls_check_path(ctx, eq + 1, ws->f[i], what);
			continue;
		}
		cls_check_path(ctx, ws->w[i], ws->f[i], what);
	}
}
