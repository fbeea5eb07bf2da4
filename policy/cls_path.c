/*
 * The classifier's paths: catastrophic targets (the root, system
 * directories, a home), devices, and the path sandbox.
 */

#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/classify.h"
#include "policy/cls.h"
#include "policy/shparse.h"
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

/*
 * Paths are resolved as the kernel resolves them (path_resolution(7)):
 * component by component with lstat(2), a symlink expanded where it is
 * found (relative to its directory, absolute from /), ".." taken from the
 * directory actually reached. What the sandbox cannot resolve with
 * certainty counts as outside: a symlink loop or more than 40 links, a
 * ".." after a component that does not exist (it may be created as a
 * symlink by the time it is used), a lookup that fails otherwise (EACCES),
 * a word with ".." or a leading ~ or $HOME whose value is computed, a ".."
 * from an unknown cwd, and anything past the caps below. A word that is
 * not a path stays quiet: a plain word that names nothing here cannot
 * leave, and a computed word is judged by its literal head only ("$F" is
 * not seen, "/etc/$F" is /etc).
 *
 * The cwd is kept as the shell keeps $PWD (cd -L is lexical); the kernel
 * resolves relative paths from the directory it names. A cwd that does
 * not exist yet ("mkdir b && cd b") is taken as a real directory: ".."
 * from it is lexical.
 */
#define CLS_LINKS_MAX	40	/* symlinks in one path: the kernel's ELOOP */
#define CLS_LOOKUP_MAX	20000	/* lstat calls per classification */
#define CLS_GLOB_MAX	1000	/* words a brace expands to, matches a
				   glob gives */
#define CLS_READ_MAX	20000	/* directory entries globs read per
				   classification */
#define CLS_UNSURE	"cannot be resolved with certainty"

/*
 * glob(3)'s directory callbacks take no argument of ours. They list and
 * look up only inside the sandbox (the files the command may read): a
 * glob that would look into a directory elsewhere stops there, and that
 * directory (resolved) is kept in cls_glob_denied, so that no reason
 * names what the worker, not the command, could list.
 */
static __thread size_t			 cls_glob_left;
static __thread const struct cls_policy	*cls_glob_policy;
static __thread char			*cls_glob_denied;

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

/*
 * 1 if path (absolute) resolves inside the workspace or an allowed root,
 * or if there is no sandbox: the files a command may read. A path that
 * cannot be resolved is not inside.
 */
int
cls_path_inside(const struct cls_policy *p, const char *path)
{
	char	*res;
	int	 in;

	if (p->workspace == NULL)
		return (1);
	if ((res = realpath(path, NULL)) == NULL)
		return (0);
	in = cls_inside(p, res);
	free(res);
	return (in);
}

/* Records the first path outside the sandbox; why: not resolved. */
static void
cls_outside(struct cls_ctx *ctx, const char *what, const char *path,
    const char *why)
{
	if (ctx->v->outside != NULL)
		return;
	ctx->v->outside = xstrdup(path);
	if (why == NULL)
		xasprintf(&ctx->v->outside_reason, "%s %s, outside the "
		    "workspace %s", what, path, ctx->p->workspace);
	else
		xasprintf(&ctx->v->outside_reason, "%s %s, which %s: counted "
		    "as outside the workspace %s", what, path, why,
		    ctx->p->workspace);
}

/*
 * One step of cls_walk: the symlink at res (length len, its directory
 * at *dirlen) expanded in front of the rest of the path. The new path to
 * walk (allocated), or NULL.
 */
static char *
cls_walk_link(const char *res, const char *rest, size_t *dirlen)
{
	char	 target[PATH_MAX], *next;
	ssize_t	 n;

	if ((n = readlink(res, target, sizeof target - 1)) <= 0)
		return (NULL);
	target[n] = '\0';
	if (target[0] == '/')
		*dirlen = 0;		/* an absolute link restarts at / */
	xasprintf(&next, "%s/%s", target, rest);
	return (next);
}

/*
 * Resolves path (absolute, or relative to base, an absolute directory
 * taken as it is) as the kernel would; components that do not exist are
 * appended as they are. The result (allocated), or NULL if it cannot be
 * resolved with certainty.
 */
static char *
cls_walk(struct cls_ctx *ctx, const char *base, const char *path)
{
	struct stat	 sb;
	char		 res[PATH_MAX], *todo, *next;
	const char	*p, *e;
	size_t		 len = 0, n;
	int		 links = 0, missing = 0;

	if (strlen(path) >= PATH_MAX || strlen(base) >= PATH_MAX)
		return (NULL);
	if (path[0] != '/' && strcmp(base, "/") != 0) {
		len = strlen(base);	/* a resolved dir: no trailing / */
		memcpy(res, base, len);
	} else if (path[0] == '/' && ctx->p->workspace != NULL &&
	    (n = strlen(ctx->p->workspace)) > 1 &&
	    strncmp(path, ctx->p->workspace, n) == 0 && (path[n] == '/' ||
	    path[n] == '\0')) {
		len = n;		/* the workspace is a realpath already */
		memcpy(res, path, len);
		path += n;
	}
	res[len] = '\0';
	p = todo = xstrdup(path);
	while (*p != '\0') {
		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		e = p + n;
		if (n == 0 || (n == 1 && p[0] == '.')) {
			p = e;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (missing)
				goto fail;
			while (len > 0 && res[len - 1] != '/')
				len--;
			res[len > 0 ? --len : 0] = '\0';
			p = e;
			continue;
		}
		if (len + 1 + n >= sizeof res)
			goto fail;
		res[len] = '/';
		memcpy(res + len + 1, p, n);
		res[len + 1 + n] = '\0';
		if (!missing && ++ctx->lookups > CLS_LOOKUP_MAX)
			goto fail;
		if (missing || lstat(res, &sb) == -1) {
			if (!missing && errno != ENOENT && errno != ENOTDIR)
				goto fail;
			missing = 1;
		} else if (S_ISLNK(sb.st_mode)) {
			if (++links > CLS_LINKS_MAX || (next =
			    cls_walk_link(res, e, &len)) == NULL)
				goto fail;
			res[len] = '\0';
			free(todo);
			p = todo = next;
			continue;
		} else if (!S_ISDIR(sb.st_mode))
			missing = 1;	/* nothing is found under a file */
		len += 1 + n;
		p = e;
	}
	free(todo);
	return (len == 0 ? xstrdup("/") : xstrndup(res, len));
fail:
	free(todo);
	return (NULL);
}

/* 1 if one of w's components is "..". */
static int
cls_dotdot(const char *w)
{
	size_t	n;

	for (;;) {
		n = strcspn(w, "/");
		if (n == 2 && w[0] == '.' && w[1] == '.')
			return (1);
		if (w[n] == '\0')
			return (0);
		w += n + 1;
	}
}

/* The first expansion in a word ($x, ${..}, $(..), `..`), or NULL. */
static const char *
cls_expansion(const char *w)
{
	for (; *w != '\0'; w++) {
		if (*w == '`' || (*w == '$' && w[1] != '\0' &&
		    (isalnum((unsigned char)w[1]) ||
		    strchr("_{(@*#?$!-", w[1]) != NULL)))
			return (w);
	}
	return (NULL);
}

/* After a leading $name or ${name} in w, or NULL. */
static const char *
cls_var(const char *w, const char *name)
{
	size_t	n = strlen(name);

	if (w[0] != '$')
		return (NULL);
	if (w[1] == '{' && strncmp(w + 2, name, n) == 0 && w[2 + n] == '}')
		return (w + 3 + n);
	if (strncmp(w + 1, name, n) == 0 && !isalnum((unsigned char)w[1 + n])
	    && w[1 + n] != '_')
		return (w + 1 + n);
	return (NULL);
}

/* The physical directory behind a cwd (allocated), or NULL if unknown. */
static char *
cls_pcwd(struct cls_ctx *ctx, const char *cwd)
{
	char	*p;

	if (cwd == NULL)
		return (NULL);
	if ((p = cls_walk(ctx, "/", cwd)) == NULL)
		cls_outside(ctx, "the working directory is", cwd, CLS_UNSURE);
	return (p);
}

/*
 * Checks a literal path, absolute or relative to pcwd (a physical dir,
 * not NULL for a relative w).
 */
static void
cls_check_literal(struct cls_ctx *ctx, const char *pcwd, const char *w,
    const char *what)
{
	struct stat	 sb;
	char		*abs, *res;
	int		 plain;

	if (ctx->v->outside != NULL || cls_harmless_device(w))
		return;
	if (w[0] != '/' && strchr(w, '/') == NULL && strcmp(w, "..") != 0) {
		/* A plain word that names nothing here cannot leave. */
		xasprintf(&abs, "%s/%s", pcwd, w);
		plain = ++ctx->lookups <= CLS_LOOKUP_MAX &&
		    lstat(abs, &sb) != 0;
		free(abs);
		if (plain)
			return;
	}
	if ((res = cls_walk(ctx, w[0] == '/' ? "/" : pcwd, w)) == NULL) {
		if (w[0] == '/')
			cls_outside(ctx, what, w, CLS_UNSURE);
		else {
			xasprintf(&abs, "%s/%s", pcwd, w);
			cls_outside(ctx, what, abs, CLS_UNSURE);
			free(abs);
		}
		return;
	}
	if (!cls_inside(ctx->p, res))
		cls_outside(ctx, what, res, NULL);
	free(res);
}

/* Index of the } closing the { at w[i], or 0. */
static size_t
cls_brace_end(const char *w, size_t i)
{
	size_t	depth = 0;

	for (; w[i] != '\0'; i++) {
		if (w[i] == '{')
			depth++;
		else if (w[i] == '}' && --depth == 0)
			return (i);
	}
	return (0);
}

/* A number of a brace sequence, at most 10^9 either way; -1 if not one. */
static int
cls_brace_num(const char *s, const char **end, long long *v)
{
	char	*e;

	if (!isdigit((unsigned char)s[s[0] == '-']))
		return (-1);
	errno = 0;
	*v = strtoll(s, &e, 10);
	*end = e;
	return (errno != 0 || *v > 1000000000LL || *v < -1000000000LL ?
	    -1 : 0);
}

/*
 * A sequence "A..B" or "A..B..S" (integers, or one letter each) in s
 * (length n): sets its first value and step, returns how many values,
 * or 0 if s is not one (or has more than CLS_GLOB_MAX).
 */
static long long
cls_brace_seq(const char *s, size_t n, long long *from, long long *step)
{
	char		 buf[64];
	const char	*p;
	long long	 to;

	if (n >= sizeof buf)
		return (0);
	memcpy(buf, s, n);
	buf[n] = '\0';
	*step = 1;
	if (n == 4 && buf[1] == '.' && buf[2] == '.' &&
	    isalpha((unsigned char)buf[0]) && isalpha((unsigned char)buf[3])) {
		*from = (unsigned char)buf[0];
		to = (unsigned char)buf[3];
	} else if (cls_brace_num(buf, &p, from) == -1 ||
	    strncmp(p, "..", 2) != 0 || cls_brace_num(p + 2, &p, &to) == -1)
		return (0);
	else if (*p != '\0' && (strncmp(p, "..", 2) != 0 ||
	    cls_brace_num(p + 2, &p, step) == -1 || *p != '\0' || *step == 0))
		return (0);
	*step = *step < 0 ? -*step : *step;
	if (to < *from)
		*step = -*step;
	return ((to - *from) / *step + 1);
}

/* Words a brace expansion makes, and the bytes it may still build. */
struct cls_braces {
	char	**w;
	size_t	  n;
	size_t	  left;
};

static int	cls_brace(const char *, struct cls_braces *);

/* Adds w[0..i) piece after to the words (recursing); -1: too many. */
static int
cls_brace_one(const char *w, size_t i, const char *piece, size_t plen,
    const char *after, struct cls_braces *b)
{
	char	*s;
	size_t	 len = i + plen + strlen(after);
	int	 rc;

	if (len >= b->left)
		return (-1);
	b->left -= len;
	s = xmalloc(len + 1);
	snprintf(s, len + 1, "%.*s%.*s%s", (int)i, w, (int)plen, piece, after);
	rc = cls_brace(s, b);
	free(s);
	return (rc);
}

/* The alternatives of the group w[i..end], or 0 if it has no comma. */
static int
cls_brace_alts(const char *w, size_t i, size_t end, struct cls_braces *b,
    int *done)
{
	size_t	k, start = i + 1, depth = 0;

	*done = 0;
	for (k = i + 1; k < end; k++) {
		if (w[k] == '{')
			depth++;
		else if (w[k] == '}')
			depth--;
		else if (w[k] == ',' && depth == 0)
			break;
	}
	if (k == end)
		return (0);
	*done = 1;
	for (k = i + 1, depth = 0; k <= end; k++) {
		if (w[k] == '{')
			depth++;
		else if (w[k] == '}' && k < end)
			depth--;
		if ((w[k] != ',' || depth != 0) && k != end)
			continue;
		if (cls_brace_one(w, i, w + start, k - start, w + end + 1,
		    b) == -1)
			return (-1);
		start = k + 1;
	}
	return (0);
}

/*
 * Brace expansion as bash does it before globbing: "{a,b}" (nested too)
 * and sequences "{1..3}", "{a..c}". -1 if w makes more than CLS_GLOB_MAX
 * words or too much text.
 */
static int
cls_brace(const char *w, struct cls_braces *b)
{
	char		 piece[32];
	size_t		 i, end;
	long long	 from, step, count, j;
	int		 done;

	for (i = 0; w[i] != '\0'; i++) {
		if (w[i] != '{' || (end = cls_brace_end(w, i)) == 0)
			continue;
		if ((count = cls_brace_seq(w + i + 1, end - i - 1, &from,
		    &step)) > CLS_GLOB_MAX)
			return (-1);
		for (j = 0; j < count; j++) {
			if (isalpha((unsigned char)w[i + 1]))
				snprintf(piece, sizeof piece, "%c",
				    (char)(from + j * step));
			else
				snprintf(piece, sizeof piece, "%lld",
				    from + j * step);
			if (cls_brace_one(w, i, piece, strlen(piece),
			    w + end + 1, b) == -1)
				return (-1);
		}
		if (count > 0)
			return (0);
		if (cls_brace_alts(w, i, end, b, &done) == -1)
			return (-1);
		if (done)
			return (0);
	}
	if (b->n >= CLS_GLOB_MAX)
		return (-1);
	b->w = xreallocarray(b->w, b->n + 1, sizeof *b->w);
	b->w[b->n++] = xstrdup(w);
	return (0);
}

/*
 * 1 if glob may look into dir: it resolves inside the sandbox, or to
 * nothing at all. Otherwise the first such dir is kept.
 */
static int
cls_glob_may(const char *dir)
{
	char	*res;

	if (cls_glob_denied != NULL)
		return (0);
	if ((res = realpath(dir[0] != '\0' ? dir : "/", NULL)) == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			return (1);
		cls_glob_denied = xstrdup(dir);
		return (0);
	}
	if (cls_inside(cls_glob_policy, res)) {
		free(res);
		return (1);
	}
	cls_glob_denied = res;
	return (0);
}

/* glob(3)'s opendir: only inside. */
static void *
cls_glob_opendir(const char *path)
{
	if (!cls_glob_may(path)) {
		errno = EACCES;
		return (NULL);
	}
	return (opendir(path));
}

/* 1 if glob may look up path: its directory is one it may look into. */
static int
cls_glob_lookup(const char *path)
{
	char	*dir, *slash;
	int	 may;

	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	may = cls_glob_may(slash != NULL ? dir : ".");
	free(dir);
	if (!may)
		errno = ENOENT;
	return (may);
}

/* glob(3)'s lstat and stat: only inside. */
static int
cls_glob_lstat(const char *path, struct stat *sb)
{
	return (cls_glob_lookup(path) ? lstat(path, sb) : -1);
}

static int
cls_glob_stat(const char *path, struct stat *sb)
{
	return (cls_glob_lookup(path) ? stat(path, sb) : -1);
}

/* glob(3)'s readdir: stops when the classification's share is read. */
static struct dirent *
cls_glob_readdir(void *d)
{
	if (cls_glob_left == 0)
		return (NULL);
	cls_glob_left--;
	return (readdir(d));
}

/* glob(3)'s closedir. */
static void
cls_glob_closedir(void *d)
{
	closedir(d);
}

/*
 * The matches of one glob pattern, relative to pcwd unless absolute, into
 * g: 0, GLOB_NOMATCH, or -1 if they cannot all be looked at.
 */
static int
cls_glob(struct cls_ctx *ctx, const char *pcwd, const char *w, glob_t *g)
{
	char		*pat, *q;
	const char	*c;
	int		 rc;

	pat = q = xmalloc(2 * strlen(pcwd != NULL ? pcwd : "") + strlen(w) +
	    2);
	for (c = w[0] == '/' ? "" : pcwd; *c != '\0'; c++) {
		if (strchr("*?[\\", *c) != NULL)
			*q++ = '\\';	/* the cwd is no pattern */
		*q++ = *c;
	}
	if (w[0] != '/')
		*q++ = '/';
	strcpy(q, w);
	memset(g, 0, sizeof *g);
	g->gl_opendir = cls_glob_opendir;
	g->gl_readdir = cls_glob_readdir;
	g->gl_closedir = cls_glob_closedir;
	g->gl_lstat = cls_glob_lstat;
	g->gl_stat = cls_glob_stat;
	cls_glob_policy = ctx->p;
	free(cls_glob_denied);
	cls_glob_denied = NULL;
	cls_glob_left = ctx->globbed < CLS_READ_MAX ? CLS_READ_MAX -
	    ctx->globbed : 0;
	rc = glob(pat, GLOB_NOSORT|GLOB_ALTDIRFUNC, NULL, g);
	ctx->globbed = CLS_READ_MAX - cls_glob_left;
	free(pat);
	if (cls_glob_left == 0 || (rc != 0 && rc != GLOB_NOMATCH) ||
	    (rc == 0 && g->gl_pathc > CLS_GLOB_MAX))
		return (-1);
	return (rc);
}

/* One word of a brace expansion: its matches, or itself if none. */
static void
cls_check_pattern(struct cls_ctx *ctx, const char *pcwd, const char *w,
    const char *what)
{
	glob_t	 g;
	size_t	 i;
	int	 rc;

	if (w[0] != '/' && pcwd == NULL) {
		if (cls_dotdot(w))
			cls_outside(ctx, what, w, CLS_UNSURE);
		return;
	}
	if (strpbrk(w, "*?[") == NULL) {
		cls_check_literal(ctx, pcwd, w, what);
		return;
	}
	rc = cls_glob(ctx, pcwd, w, &g);
	if (cls_glob_denied != NULL) {
		/* The directory, never a name listed in it. */
		cls_outside(ctx, what, cls_glob_denied, NULL);
		free(cls_glob_denied);
		cls_glob_denied = NULL;
		globfree(&g);
		return;
	}
	if (rc == -1)
		cls_outside(ctx, what, w, "matches too much to check");
	else if (rc == GLOB_NOMATCH)
		cls_check_literal(ctx, pcwd, w, what);	/* as the shell */
	for (i = 0; rc == 0 && i < g.gl_pathc; i++)
		cls_check_literal(ctx, pcwd, g.gl_pathv[i], what);
	globfree(&g);
}

/*
 * dash (/bin/sh) does no brace expansion: the word as it stands, if it
 * resolves (names with { and , that do not exist are no escape).
 */
static void
cls_check_unbraced(struct cls_ctx *ctx, const char *pcwd, const char *w,
    const char *what)
{
	char	*res;

	if (ctx->v->outside != NULL || (w[0] != '/' && pcwd == NULL) ||
	    (res = cls_walk(ctx, w[0] == '/' ? "/" : pcwd, w)) == NULL)
		return;
	if (!cls_inside(ctx->p, res))
		cls_outside(ctx, what, res, NULL);
	free(res);
}

/*
 * A word with unquoted * ? [..] or {..}: brace expansion, then each word
 * globbed against the file system.
 */
static void
cls_check_glob(struct cls_ctx *ctx, const char *pcwd, const char *w,
    const char *what)
{
	struct cls_braces	 b;
	size_t			 i;
	int			 braced;

	memset(&b, 0, sizeof b);
	b.left = 64 * PATH_MAX;
	if (strlen(w) >= PATH_MAX || cls_brace(w, &b) == -1)
		cls_outside(ctx, what, w, "expands to too many words to check");
	braced = b.n > 1 || (b.n == 1 && strcmp(b.w[0], w) != 0);
	for (i = 0; i < b.n; i++) {
		cls_check_pattern(ctx, pcwd, b.w[i], what);
		free(b.w[i]);
	}
	if (braced)
		cls_check_unbraced(ctx, pcwd, w, what);
	free(b.w);
}

/*
 * A word with an expansion whose value is unknown: $HOME is outside,
 * $PWD the cwd; otherwise a ".." makes it unknowable, and only the
 * directory of its literal head is checked ("/etc/$F" is /etc).
 */
static void
cls_check_dynamic(struct cls_ctx *ctx, const char *pcwd, const char *w,
    const char *what)
{
	const char	*x = cls_expansion(w), *rest;
	char		*head, *slash;

	if (x == NULL)
		return;
	if (x == w && ((rest = cls_var(w, "HOME")) != NULL) &&
	    (*rest == '\0' || *rest == '/')) {
		cls_outside(ctx, what, w, NULL);
		return;
	}
	if (x == w && (rest = cls_var(w, "PWD")) != NULL && pcwd != NULL &&
	    (*rest == '\0' || *rest == '/') && cls_expansion(rest) == NULL) {
		cls_check_literal(ctx, pcwd, *rest == '\0' ? "." : rest + 1,
		    what);
		return;
	}
	if (cls_dotdot(w)) {
		cls_outside(ctx, what, w, CLS_UNSURE);
		return;
	}
	head = xstrndup(w, x - w);
	if ((slash = strrchr(head, '/')) != NULL) {
		slash[1] = '\0';
		if (head[0] == '/' || pcwd != NULL)
			cls_check_literal(ctx, pcwd, head, what);
	}
	free(head);
}

/* Checks one word as a path from pcwd (physical; NULL: unknown). */
static void
cls_check_at(struct cls_ctx *ctx, const char *pcwd, const char *w,
    unsigned f, const char *what)
{
	if (ctx->p->workspace == NULL || ctx->v->outside != NULL ||
	    *w == '\0' || cls_harmless_device(w))
		return;
	if (w[0] == '~') {		/* the home directory, or a user's */
		cls_outside(ctx, what, w, NULL);
		return;
	}
	if ((f & SH_W_DYNAMIC) && (!(f & SH_W_GLOB) ||
	    cls_expansion(w) != NULL)) {
		cls_check_dynamic(ctx, pcwd, w, what);
		return;
	}
	if (w[0] != '/' && pcwd == NULL) {
		/* After "cd -" or "cd $X" only .. is known to leave. */
		if (cls_dotdot(w))
			cls_outside(ctx, what, w, CLS_UNSURE);
		return;
	}
	if (f & SH_W_GLOB)
		cls_check_glob(ctx, pcwd, w, what);
	else
		cls_check_literal(ctx, pcwd, w, what);
}

/* Checks one word as a path from the cwd. what: "cat names". */
void
cls_check_path(struct cls_ctx *ctx, const char *w, unsigned f,
    const char *what)
{
	char	*pcwd;

	if (ctx->p->workspace == NULL || ctx->v->outside != NULL)
		return;
	pcwd = cls_pcwd(ctx, ctx->cwd);
	cls_check_at(ctx, pcwd, w, f, what);
	free(pcwd);
}

/* ---- directories: options that name one, cd, pushd, popd ------------- */

/*
 * Options whose value is a directory. run: the tool works there, so its
 * later relative words resolve from it; lead: only before the first
 * operand (git -C, not git log -C). The value is checked as a path
 * either way.
 */
static const struct cls_dir {
	const char	*tool;
	const char	*opt;
	int		 run;
	int		 lead;
} cls_dirs[] = {
	{ "env", "-C", 1, 1 },		{ "env", "--chdir", 1, 1 },
	{ "sudo", "-D", 1, 1 },		{ "sudo", "--chdir", 1, 1 },
	{ "git", "-C", 1, 1 },		{ "go", "-C", 1, 1 },
	{ "make", "-C", 1, 0 },		{ "make", "--directory", 1, 0 },
	{ "gmake", "-C", 1, 0 },	{ "gmake", "--directory", 1, 0 },
	{ "ninja", "-C", 1, 0 },	{ "meson", "-C", 1, 0 },
	{ "tar", "-C", 1, 0 },		{ "tar", "--directory", 1, 0 },
	{ "npm", "--prefix", 1, 0 },	{ "npm", "-C", 1, 0 },
	{ "pnpm", "-C", 1, 0 },		{ "pnpm", "--dir", 1, 0 },
	{ "yarn", "--cwd", 1, 0 },	{ "just", "--working-directory", 1, 0 },
	{ "just", "-d", 1, 0 },		{ "cmake", "-S", 0, 0 },
	{ "cmake", "-B", 0, 0 },	{ NULL, NULL, 0, 0 }
};

/*
 * If ws->w[*i] is one of tool's directory options, the entry, with its
 * value in *val, *vf (attached, after =, or the next word: *i moves).
 */
static const struct cls_dir *
cls_dir_opt(const char *tool, const struct cls_words *ws, size_t *i,
    int lead, const char **val, unsigned *vf)
{
	const struct cls_dir	*d;
	const char		*w = ws->w[*i], *eq;
	size_t			 len;

	for (d = cls_dirs; d->tool != NULL; d++) {
		if (strcmp(d->tool, tool) != 0 || (d->lead && !lead))
			continue;
		len = strlen(d->opt);
		if (d->opt[1] == '-' ? !cls_opt_match(w, d->opt) :
		    strncmp(w, d->opt, len) != 0)
			continue;
		*vf = ws->f[*i];
		if (d->opt[1] == '-' && (eq = strchr(w, '=')) != NULL) {
			*val = eq + 1;
			return (d);
		}
		if (d->opt[1] != '-' && w[len] != '\0') {
			*val = w + len;
			return (d);
		}
		if (*i + 1 >= ws->n)
			return (NULL);
		*val = ws->w[++*i];
		*vf = ws->f[*i];
		return (d);
	}
	return (NULL);
}

/* Where a command run in dir from pcwd runs (allocated), or NULL. */
static char *
cls_chdir(struct cls_ctx *ctx, const char *pcwd, const char *dir, unsigned f)
{
	if ((f & SH_W_DYNAMIC) || dir[0] == '~' || *dir == '\0' ||
	    (dir[0] != '/' && pcwd == NULL))
		return (NULL);
	return (cls_walk(ctx, dir[0] == '/' ? "/" : pcwd, dir));
}

/*
 * Checks a directory option's value from *pcwd and, if the tool runs
 * there, moves *pcwd to it.
 */
static void
cls_check_dir(struct cls_ctx *ctx, const char *tool,
    const struct cls_dir *d, char **pcwd, const char *val, unsigned vf)
{
	char	 what[128], *next;

	snprintf(what, sizeof what, "%s %s uses", tool, d->opt);
	cls_check_at(ctx, *pcwd, val, vf, what);
	if (!d->run)
		return;
	next = cls_chdir(ctx, *pcwd, val, vf);
	free(*pcwd);
	*pcwd = next;
}

/*
 * The options of cd, pushd and popd: -P (the last of -L and -P wins) and
 * -n. The index of the operand.
 */
static size_t
cls_cd_opts(char *const *w, size_t n, int *phys, int *nocd)
{
	const char	*p;
	size_t		 i;

	*phys = *nocd = 0;
	for (i = 1; i < n; i++) {
		if (strcmp(w[i], "--") == 0)
			return (i + 1);
		if (w[i][0] != '-' || w[i][1] == '\0' ||
		    w[i][strspn(w[i] + 1, "LPen@") + 1] != '\0')
			return (i);
		for (p = w[i] + 1; *p != '\0'; p++) {
			if (*p == 'P' || *p == 'L')
				*phys = *p == 'P';
			else if (*p == 'n')
				*nocd = 1;
		}
	}
	return (i);
}

/* 1 if w is pushd's or popd's +N or -N. */
static int
cls_cd_rotate(const char *w)
{
	return ((w[0] == '+' || w[0] == '-') && isdigit((unsigned char)w[1]));
}

/*
 * The cwd after cd (or pushd) dir from cwd (allocated), or NULL if
 * unknown: -L as bash does it ($PWD/dir with .. taken lexically), -P as
 * the kernel resolves dir.
 */
static char *
cls_cd_dest(struct cls_ctx *ctx, const char *cwd, const char *dir,
    unsigned f, int phys)
{
	char	*pcwd, *next, *joined;

	if ((f & SH_W_DYNAMIC) || dir[0] == '~' || *dir == '\0' ||
	    strcmp(dir, "-") == 0 || (dir[0] != '/' && cwd == NULL))
		return (NULL);
	if (phys) {
		pcwd = dir[0] == '/' ? NULL : cls_pcwd(ctx, cwd);
		next = cls_chdir(ctx, pcwd, dir, f);
		free(pcwd);
		return (next);
	}
	xasprintf(&joined, "%s/%s", dir[0] == '/' ? "" : cwd, dir);
	next = cls_norm(joined);
	free(joined);
	return (next);
}

/* The directory cd or pushd goes to, checked as the shell gets there. */
static void
cls_check_cd(struct cls_ctx *ctx, const struct cls_words *ws)
{
	const char	*what = "cd goes to";
	char		*dest, *pcwd;
	size_t		 i;
	int		 phys, nocd;

	i = cls_cd_opts(ws->w, ws->n, &phys, &nocd);
	if (i >= ws->n) {
		if (strcmp(ws->w[0], "cd") == 0)
			cls_check_at(ctx, NULL, "~", 0, what);
		return;
	}
	if (cls_cd_rotate(ws->w[i]) || strcmp(ws->w[i], "-") == 0)
		return;
	if (!phys && !(ws->f[i] & SH_W_DYNAMIC) &&
	    (dest = cls_cd_dest(ctx, ws->cwd, ws->w[i], 0, 0)) != NULL) {
		cls_check_at(ctx, NULL, dest, 0, what);
		free(dest);
		return;
	}
	pcwd = cls_pcwd(ctx, ws->cwd);
	cls_check_at(ctx, pcwd, ws->w[i], ws->f[i], what);
	free(pcwd);
}

/* Every argument (and --opt=VALUE value) of a command as a path. */
void
cls_check_args(struct cls_ctx *ctx, const struct cls_words *ws)
{
	const struct cls_dir	*d;
	const char		*name, *eq, *val;
	char			 what[128], *pcwd;
	unsigned		 vf;
	size_t			 i;
	int			 lead = 1;

	if (ctx->p->workspace == NULL || ws->n == 0)
		return;
	name = cls_base(ws->w[0]);
	if (strcmp(name, "cd") == 0 || strcmp(name, "pushd") == 0) {
		cls_check_cd(ctx, ws);
		return;
	}
	snprintf(what, sizeof what, "%s names", name);
	pcwd = cls_pcwd(ctx, ws->cwd);
	for (i = 1; i < ws->n && ctx->v->outside == NULL; i++) {
		if ((d = cls_dir_opt(name, ws, &i, lead, &val, &vf)) != NULL) {
			cls_check_dir(ctx, name, d, &pcwd, val, vf);
			continue;
		}
		if (ws->w[i][0] == '-') {
			if (ws->w[i][1] == '-' && (eq = strchr(ws->w[i],
			    '=')) != NULL)
				cls_check_at(ctx, pcwd, eq + 1, ws->f[i], what);
			continue;
		}
		lead = 0;
		cls_check_at(ctx, pcwd, ws->w[i], ws->f[i], what);
	}
	free(pcwd);
}

/*
 * A wrapper's directory option (env -C, sudo -D) among words [1, end):
 * checks it; *moved says whether what the wrapper runs runs elsewhere,
 * and the directory is returned (allocated; NULL: unknown).
 */
char *
cls_wrapper_dir(struct cls_ctx *ctx, const struct cls_words *ws,
    size_t end, int *moved)
{
	struct cls_words	 head = *ws;
	const struct cls_dir	*d;
	const char		*val;
	char			*pcwd = NULL;
	unsigned		 vf;
	size_t			 i;

	*moved = 0;
	if (ctx->p->workspace == NULL || ws->n == 0)
		return (NULL);
	head.n = end < ws->n ? end : ws->n;
	for (i = 1; i < head.n; i++) {
		if ((d = cls_dir_opt(cls_base(ws->w[0]), &head, &i, 1, &val,
		    &vf)) == NULL)
			continue;
		if (!*moved)
			pcwd = cls_pcwd(ctx, ws->cwd);
		*moved = 1;
		cls_check_dir(ctx, cls_base(ws->w[0]), d, &pcwd, val, vf);
	}
	return (pcwd);
}

/* Pushes dir (owned; NULL: unknown) on pushd's stack. */
static void
cls_dirs_push(struct cls_ctx *ctx, char *dir)
{
	if (ctx->ndirs < CLS_DIRS_MAX && ctx->dirslost == 0) {
		ctx->dirs[ctx->ndirs++] = dir;
		return;
	}
	free(dir);
	ctx->dirslost++;
}

/* Sets the cwd (owned; NULL: unknown). */
static void
cls_set_cwd(struct cls_ctx *ctx, char *cwd)
{
	free(ctx->cwd);
	ctx->cwd = cwd;
}

/* popd [-n] [+N|-N]: back to the directory pushed last. */
static void
cls_popd(struct cls_ctx *ctx, const char *arg, int nocd)
{
	char	*top;

	if (arg != NULL && cls_cd_rotate(arg) && strcmp(arg, "+0") != 0) {
		/* Which entry goes is not followed: the stack is unknown. */
		ctx->dirslost += ctx->ndirs;
		while (ctx->ndirs > 0)
			free(ctx->dirs[--ctx->ndirs]);
		return;
	}
	if (ctx->dirslost > 0) {
		ctx->dirslost--;
		if (!nocd)
			cls_set_cwd(ctx, NULL);
		return;
	}
	if (ctx->ndirs == 0)
		return;		/* "directory stack empty": nothing moves */
	top = ctx->dirs[--ctx->ndirs];
	if (nocd)
		free(top);
	else
		cls_set_cwd(ctx, top);
}

/* pushd with no directory (swaps) or with +N/-N (rotates). */
static void
cls_pushd_rotate(struct cls_ctx *ctx, int rotate)
{
	char	*top;

	if (rotate || ctx->dirslost > 0) {
		ctx->dirslost += ctx->ndirs;
		while (ctx->ndirs > 0)
			free(ctx->dirs[--ctx->ndirs]);
		cls_set_cwd(ctx, NULL);
		return;
	}
	if (ctx->ndirs == 0)
		return;
	top = ctx->dirs[ctx->ndirs - 1];
	ctx->dirs[ctx->ndirs - 1] = ctx->cwd;
	ctx->cwd = top;
}

/*
 * Follows cd, pushd and popd: the cwd later commands use. Inside a
 * subshell or a substitution (depth > 0) the parse does not say where it
 * ends: a move deeper is ignored (the outer cwd is the stricter one for
 * both sides), any other makes the cwd unknown.
 */
void
cls_cd(struct cls_ctx *ctx, const struct sh_cmd *c)
{
	const char	*name;
	char		*next;
	size_t		 i;
	int		 phys, nocd;

	if (c->argc == 0 || !cls_in(c->argv[0], (const char *const[]){ "cd",
	    "pushd", "popd", NULL }))
		return;
	name = c->argv[0];
	i = cls_cd_opts(c->argv, c->argc, &phys, &nocd);
	next = i < c->argc && strcmp(name, "popd") != 0 &&
	    !cls_cd_rotate(c->argv[i]) ? cls_cd_dest(ctx, ctx->cwd,
	    c->argv[i], c->argflags[i], phys) : NULL;
	if (c->depth > 0 || (c->flags & (SH_CONTROL|SH_IN_FUNC))) {
		/* It may run or not: only a move deeper keeps the cwd. */
		if (next == NULL || ctx->cwd == NULL || !cls_under(next,
		    ctx->cwd) || strcmp(name, "cd") != 0)
			cls_set_cwd(ctx, NULL);
		free(next);
	} else if (strcmp(name, "popd") == 0)
		cls_popd(ctx, i < c->argc ? c->argv[i] : NULL, nocd);
	else if (strcmp(name, "pushd") == 0 && (i >= c->argc ||
	    cls_cd_rotate(c->argv[i])))
		cls_pushd_rotate(ctx, i < c->argc);
	else if (strcmp(name, "pushd") == 0 && nocd)
		cls_dirs_push(ctx, next);
	else if (strcmp(name, "pushd") == 0) {
		cls_dirs_push(ctx, ctx->cwd);
		ctx->cwd = next;
	} else
		cls_set_cwd(ctx, next);
}

/* A new shell (sh -c): its own copy of the cwd, an empty stack. */
void
cls_scope_enter(struct cls_ctx *ctx, struct cls_scope *sc)
{
	sc->cwd = ctx->cwd;
	memcpy(sc->dirs, ctx->dirs, sizeof sc->dirs);
	sc->ndirs = ctx->ndirs;
	sc->dirslost = ctx->dirslost;
	ctx->cwd = sc->cwd != NULL ? xstrdup(sc->cwd) : NULL;
	ctx->ndirs = ctx->dirslost = 0;
}

/* Back to the outer shell's cwd and stack. */
void
cls_scope_leave(struct cls_ctx *ctx, struct cls_scope *sc)
{
	cls_dirs_release(ctx);
	free(ctx->cwd);
	ctx->cwd = sc->cwd;
	memcpy(ctx->dirs, sc->dirs, sizeof ctx->dirs);
	ctx->ndirs = sc->ndirs;
	ctx->dirslost = sc->dirslost;
}

/* Frees pushd's stack. */
void
cls_dirs_release(struct cls_ctx *ctx)
{
	while (ctx->ndirs > 0)
		free(ctx->dirs[--ctx->ndirs]);
	ctx->dirslost = 0;
}
