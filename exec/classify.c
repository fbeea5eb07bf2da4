/*
 * The classifier (see exec/classify.h). Order of the checks for each
 * simple command the parser lists:
 *
 *   1. the words: wrappers (sudo, env, timeout, xargs, sh -c, ...) are
 *      peeled off and what they run is classified instead (sh -c and eval
 *      strings are parsed again, recursively); then the built-in blocked
 *      checks, then the per-command handlers (git, find, sed, ...), then
 *      the plain lists (read-only, writers); anything else is unknown;
 *   2. the configured rules, on the whole text and on the peeled text
 *      (never lowering a built-in blocked);
 *   3. redirections (a file written is at least write; a block device
 *      written is blocked);
 *   4. the path sandbox (recorded in the verdict, not in the risk).
 *
 * A parse that is not complete is at least unknown; what it did list can
 * still raise it. A fork bomb is found in the raw text, since the parser
 * (rightly) gives up on function definitions.
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
#include "exec/shparse.h"
#include "logs/xmalloc.h"

#define CLS_DEPTH_MAX	16	/* sh -c inside sh -c ... */
#define CLS_SCAN_MAX	64	/* argument positions and function
				   definitions looked at by the raw scans,
				   so a 1 MiB command stays linear */
#define CLS_RULE_MAX	64
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

/* One classification. */
struct cls_ctx {
	const struct cls_policy	*p;
	struct cls_verdict	*v;
	char			*cwd;		/* for relative paths; NULL:
						   unknown (after "cd -") */
	int			 depth;
	int			 privileged;	/* sudo/doas/su seen */
	size_t			 cmdcap;
};

static const char *cls_risk_names[] = { "read_only", "write", "network",
    "unknown", "destructive", "blocked" };
static const char *cls_tier_names[] = { "read_only", "read_write", "confined",
    "admin" };
static const char *cls_action_names[] = { "run", "hold", "refuse" };
static const char *cls_sandbox_names[] = { "hold", "refuse", "off" };

static void	cls_source(struct cls_ctx *, const char *, size_t);
static void	cls_words(struct cls_ctx *, struct cls_words *,
		    struct cls_res *, char **inner);
static const char *cls_risky_assign(char *const *, size_t);
static void	cls_salvage(struct cls_ctx *, const char *, size_t);
static void	cls_embedded(struct cls_ctx *, const struct cls_words *,
		    struct cls_res *);

/* Raises r to risk (the first reason at the highest risk stays). */
static void __attribute__((format(printf, 4, 5)))
cls_raise(struct cls_res *r, enum cls_risk risk, const char *rule,
    const char *fmt, ...)
{
	va_list	ap;

	if (risk == CLS_NETWORK)
		r->network = 1;
	if (r->set && risk <= r->risk)
		return;
	r->risk = risk;
	r->set = 1;
	snprintf(r->rule, sizeof r->rule, "%s", rule);
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof r->reason, fmt, ap);
	va_end(ap);
}

/* Sets r outright (configured rules may lower). */
static void
cls_set(struct cls_res *r, enum cls_risk risk, const char *rule,
    const char *reason)
{
	r->risk = risk;
	r->set = 1;
	r->network = risk == CLS_NETWORK;
	snprintf(r->rule, sizeof r->rule, "%s", rule);
	snprintf(r->reason, sizeof r->reason, "%s", reason);
}

/* The last path component of a command name. */
static const char *
cls_base(const char *s)
{
	const char	*slash = strrchr(s, '/');

	return (slash != NULL ? slash + 1 : s);
}

/* 1 if s is one of the NULL-terminated list. */
static int
cls_in(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return (1);
	return (0);
}

/* Drops the first k words. */
static void
cls_shift(struct cls_words *ws, size_t k)
{
	if (k > ws->n)
		k = ws->n;
	ws->w += k;
	ws->f += k;
	ws->n -= k;
}

/* Words joined by spaces (allocated). */
static char *
cls_join(char *const *w, size_t n)
{
	char	*s;
	size_t	 i, len = 1, off = 0;

	for (i = 0; i < n; i++)
		len += strlen(w[i]) + 1;
	s = xmalloc(len);
	for (i = 0; i < n; i++) {
		if (i > 0)
			s[off++] = ' ';
		memcpy(s + off, w[i], strlen(w[i]));
		off += strlen(w[i]);
	}
	s[off] = '\0';
	return (s);
}

/* 1 if word w is an option "-x..." (not "-" alone, not a number). */
static int
cls_is_opt(const char *w)
{
	return (w[0] == '-' && w[1] != '\0');
}

/*
 * 1 if word w is option opt: a long option also abbreviated as GNU
 * getopt allows ("--outp" is --output; at least two letters), with or
 * without "=value"; a short one also with its value attached ("-Ifoo").
 */
static int
cls_opt_match(const char *w, const char *opt)
{
	size_t	len = strlen(opt), n;

	if (opt[0] == '-' && opt[1] == '-') {
		if (w[0] != '-' || w[1] != '-')
			return (0);
		n = strcspn(w, "=");
		return (n >= 4 && n <= len && strncmp(w, opt, n) == 0);
	}
	return (strncmp(w, opt, len) == 0);
}

/* 1 if some word (from 1 on, before "--") is the option opt. */
static int
cls_has_opt(const struct cls_words *ws, const char *opt)
{
	size_t	i;

	for (i = 1; i < ws->n; i++) {
		if (strcmp(ws->w[i], "--") == 0)
			return (0);
		if (cls_opt_match(ws->w[i], opt))
			return (1);
	}
	return (0);
}

/* 1 if some word (before "--") starts with prefix. */
static int
cls_has_prefix(const struct cls_words *ws, const char *prefix)
{
	size_t	i;

	for (i = 1; i < ws->n; i++) {
		if (strcmp(ws->w[i], "--") == 0)
			return (0);
		if (strncmp(ws->w[i], prefix, strlen(prefix)) == 0)
			return (1);
	}
	return (0);
}

/* 1 if a short-option cluster ("-rf", "-fR") holds c, before any "--". */
static int
cls_has_flag(const struct cls_words *ws, char c, const char *lng)
{
	size_t	i;

	for (i = 1; i < ws->n; i++) {
		if (strcmp(ws->w[i], "--") == 0)
			return (0);
		if (ws->w[i][0] == '-' && ws->w[i][1] != '-' &&
		    strchr(ws->w[i] + 1, c) != NULL)
			return (1);
		if (lng != NULL && cls_opt_match(ws->w[i], lng))
			return (1);
	}
	return (0);
}

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
static char *
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
static const char *
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
static int
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
static int
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
static void
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
static void
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

/* ---- the built-in blocked checks --------------------------------------- */

/* A target of rm/chmod/mv that is catastrophic: blocked. */
static int
cls_block_targets(const struct cls_words *ws, size_t from, const char *verb,
    const char *rule, struct cls_res *r)
{
	const char	*why;
	size_t		 i;
	int		 opts = 1;

	for (i = from; i < ws->n; i++) {
		if (opts && strcmp(ws->w[i], "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && cls_is_opt(ws->w[i]))
			continue;
		if ((why = cls_root_target(ws->w[i], ws->f[i], ws->cwd)) !=
		    NULL) {
			cls_raise(r, CLS_BLOCKED, rule, "%s of %s: %s", verb,
			    ws->w[i], why);
			return (1);
		}
	}
	return (0);
}

/* kill with -1 among its pids (every process the user may signal). */
static int
cls_block_kill(const struct cls_words *ws, struct cls_res *r)
{
	size_t	i = 1;

	if (i < ws->n && strcmp(ws->w[i], "-s") == 0)
		i += 2;
	else if (i < ws->n && strcmp(ws->w[i], "-n") == 0)
		i += 2;
	else if (i < ws->n && ws->w[i][0] == '-' && strcmp(ws->w[i], "--") &&
	    ws->n > i + 1)
		i++;		/* -9, -KILL, -1: the signal */
	for (; i < ws->n; i++) {
		if (strcmp(ws->w[i], "--") == 0)
			continue;
		if (ws->w[i][0] == '-' && strspn(ws->w[i] + 1, "0") ==
		    strlen(ws->w[i] + 1) - 1 && ws->w[i][strlen(ws->w[i]) - 1] ==
		    '1' && strlen(ws->w[i]) >= 2) {
			cls_raise(r, CLS_BLOCKED, "blocked:kill-all", "kill "
			    "-1 signals every process this user may signal");
			return (1);
		}
	}
	return (0);
}

/* dd, cp, tee, shred, truncate onto a block device. */
static int
cls_block_device_write(const struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	const char	*t;
	size_t		 i;

	for (i = 1; i < ws->n; i++) {
		t = ws->w[i];
		if (strcmp(name, "dd") == 0) {
			if (strncmp(t, "of=", 3) != 0)
				continue;
			t += 3;
		} else if (strcmp(name, "cp") == 0 && i != ws->n - 1)
			continue;
		if (cls_block_device(t)) {
			cls_raise(r, CLS_BLOCKED, "blocked:device-write", "%s "
			    "writes the block device %s", name, t);
			return (1);
		}
	}
	return (0);
}

/* find / -delete, find / -exec rm ...: deletes from a root. */
static int
cls_block_find(const struct cls_words *ws, struct cls_res *r)
{
	const char	*root = NULL;
	size_t		 i;
	int		 deletes = 0;

	for (i = 1; i < ws->n; i++) {
		if (root == NULL && ws->w[i][0] != '-' &&
		    cls_root_target(ws->w[i], ws->f[i], ws->cwd) != NULL)
			root = ws->w[i];
		if (strcmp(ws->w[i], "-delete") == 0 ||
		    ((strcmp(ws->w[i], "-exec") == 0 ||
		    strcmp(ws->w[i], "-execdir") == 0 ||
		    strcmp(ws->w[i], "-ok") == 0) && i + 1 < ws->n &&
		    cls_in(cls_base(ws->w[i + 1]), (const char *const[]){
		    "rm", "shred", "chmod", "chown", "chgrp", "truncate", "mv",
		    "dd", "unlink", NULL })))
			deletes = 1;
	}
	if (root == NULL || !deletes)
		return (0);
	cls_raise(r, CLS_BLOCKED, "blocked:rm-root", "find deletes files "
	    "under %s", root);
	return (1);
}

/* Every catastrophe by name and arguments; 1 if blocked. */
static int
cls_blocked(const struct cls_words *ws, const char *name, struct cls_res *r)
{
	static const char *const power[] = { "shutdown", "reboot", "halt",
	    "poweroff", "killall5", NULL };
	static const char *const mkfs[] = { "mke2fs", "mkswap", "wipefs",
	    "mkntfs", "mkdosfs", "mkfs", "blkdiscard", NULL };
	static const char *const parts[] = { "fdisk", "sfdisk", "parted",
	    "sgdisk", "gdisk", "cfdisk", NULL };
	static const char *const sysverbs[] = { "poweroff", "reboot", "halt",
	    "kexec", "emergency", "rescue", NULL };
	size_t	i;

	if (cls_in(name, power)) {
		cls_raise(r, CLS_BLOCKED, "blocked:power", "%s stops or "
		    "restarts the machine", name);
		return (1);
	}
	if (cls_in(name, mkfs) || strncmp(name, "mkfs.", 5) == 0) {
		cls_raise(r, CLS_BLOCKED, "blocked:mkfs", "%s destroys a "
		    "file system", name);
		return (1);
	}
	if (cls_in(name, parts) && !cls_has_flag(ws, 'l', "--list")) {
		cls_raise(r, CLS_BLOCKED, "blocked:partition", "%s rewrites "
		    "a partition table", name);
		return (1);
	}
	if ((strcmp(name, "init") == 0 || strcmp(name, "telinit") == 0) &&
	    ws->n > 1 && (strcmp(ws->w[1], "0") == 0 ||
	    strcmp(ws->w[1], "6") == 0)) {
		cls_raise(r, CLS_BLOCKED, "blocked:power", "%s %s stops or "
		    "restarts the machine", name, ws->w[1]);
		return (1);
	}
	if (strcmp(name, "systemctl") == 0)
		for (i = 1; i < ws->n; i++)
			if (cls_in(ws->w[i], sysverbs) || cls_in(ws->w[i],
			    (const char *const[]){ "poweroff.target",
			    "reboot.target", "halt.target", "kexec.target",
			    "shutdown.target", "emergency.target",
			    "rescue.target", "ctrl-alt-del.target", NULL })) {
				cls_raise(r, CLS_BLOCKED, "blocked:power",
				    "systemctl %s stops or restarts the "
				    "machine", ws->w[i]);
				return (1);
			}
	if (strcmp(name, "rm") == 0) {
		if (cls_has_opt(ws, "--no-preserve-root")) {
			cls_raise(r, CLS_BLOCKED, "blocked:rm-root", "rm "
			    "--no-preserve-root is only for deleting /");
			return (1);
		}
		return (cls_block_targets(ws, 1, "rm", "blocked:rm-root", r));
	}
	if (strcmp(name, "mv") == 0)
		return (cls_block_targets(ws, 1, "mv", "blocked:mv-root", r));
	if (strcmp(name, "chmod") == 0 || strcmp(name, "chown") == 0 ||
	    strcmp(name, "chgrp") == 0)
		return (cls_block_targets(ws, 2, name, "blocked:perm-root", r));
	if (strcmp(name, "kill") == 0)
		return (cls_block_kill(ws, r));
	if ((strcmp(name, "pkill") == 0 || strcmp(name, "killall") == 0) &&
	    ws->n > 1 && (cls_in(ws->w[ws->n - 1], (const char *const[]){
	    ".", ".*", "", "-1", NULL }))) {
		cls_raise(r, CLS_BLOCKED, "blocked:kill-all", "%s %s matches "
		    "every process", name, ws->w[ws->n - 1]);
		return (1);
	}
	if (strcmp(name, "find") == 0)
		return (cls_block_find(ws, r));
	if (cls_in(name, (const char *const[]){ "dd", "cp", "tee", "shred",
	    "truncate", "cat", "pv", NULL }))
		return (cls_block_device_write(ws, name, r));
	return (0);
}

/* ---- wrappers ---------------------------------------------------------- */

/* 1 if one of words [1, end) is short flag c (in a cluster) or lng. */
static int
cls_flag_before(const struct cls_words *ws, size_t end, char c,
    const char *lng)
{
	size_t	i;

	for (i = 1; i < end && i < ws->n; i++) {
		if (ws->w[i][0] == '-' && ws->w[i][1] != '-' &&
		    strchr(ws->w[i] + 1, c) != NULL)
			return (1);
		if (lng != NULL && cls_opt_match(ws->w[i], lng))
			return (1);
	}
	return (0);
}

/* Index of the first word after options; with_arg options take a value. */
static size_t
cls_skip_opts(const struct cls_words *ws, size_t i,
    const char *const *with_arg)
{
	while (i < ws->n) {
		if (strcmp(ws->w[i], "--") == 0)
			return (i + 1);
		if (!cls_is_opt(ws->w[i]))
			break;
		i += cls_in(ws->w[i], with_arg) ? 2 : 1;
	}
	return (i < ws->n ? i : ws->n);	/* "env -u" has no value */
}

/* Parses str as a shell command of its own (sh -c, eval, ssh, watch). */
static void
cls_nested(struct cls_ctx *ctx, const char *str, unsigned f,
    const char *who, struct cls_res *r)
{
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
	cls_source(ctx, str, strlen(str));
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
static ssize_t
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

/* ---- per-command handlers ---------------------------------------------- */

/* git: read-only subcommands, destructive ones, the rest write. */
static void
cls_git(struct cls_ctx *ctx, const struct cls_words *ws, struct cls_res *r)
{
	static const char *const ro[] = { "status", "log", "diff", "show",
	    "blame", "annotate", "shortlog", "describe", "rev-parse",
	    "rev-list", "ls-files", "ls-tree", "cat-file",
	    "grep", "merge-base", "name-rev", "for-each-ref", "show-ref",
	    "count-objects", "whatchanged", "version", "help", "var",
	    "check-ignore", "cherry", "range-diff", "diff-tree", "diff-files",
	    "diff-index", "show-branch", "verify-commit", "verify-tag",
	    "--version", "--help", NULL };
	static const char *const hard[] = { "--hard", "--merge", "--keep",
	    NULL };
	struct cls_words	 sub = *ws;
	const char		*cmd;
	size_t			 i = 1;

	while (i < ws->n && ws->w[i][0] == '-' && !cls_in(ws->w[i], ro)) {
		if (strcmp(ws->w[i], "-c") == 0 ||
		    strncmp(ws->w[i], "--config-env", 12) == 0 ||
		    strncmp(ws->w[i], "--exec-path", 11) == 0) {
			cls_raise(r, CLS_UNKNOWN, "unknown:git-config", "git %s "
			    "can change what git runs", ws->w[i]);
			return;
		}
		if (!cls_in(ws->w[i], (const char *const[]){ "-C", "-P",
		    "-p", "--no-pager", "--paginate", "--bare",
		    "--no-optional-locks", "--no-replace-objects",
		    "--literal-pathspecs", "--glob-pathspecs",
		    "--noglob-pathspecs", "--icase-pathspecs", "--git-dir",
		    "--work-tree", "--namespace", NULL }) &&
		    strncmp(ws->w[i], "--git-dir=", 10) != 0 &&
		    strncmp(ws->w[i], "--work-tree=", 12) != 0 &&
		    strncmp(ws->w[i], "--namespace=", 12) != 0) {
			cls_raise(r, CLS_UNKNOWN, "unknown:git-option", "git "
			    "option %s is not followed", ws->w[i]);
			return;
		}
		if (cls_in(ws->w[i], (const char *const[]){ "--git-dir",
		    "--work-tree", "--namespace", NULL }) && i + 1 < ws->n)
			i++;	/* its value */
		if (strcmp(ws->w[i], "-C") == 0 && i + 1 < ws->n) {
			cls_check_path(ctx, ws->w[i + 1], ws->f[i + 1],
			    "git -C uses");
			i++;
		}
		i++;
	}
	if (i >= ws->n) {
		cls_raise(r, CLS_READ_ONLY, "read_only:git", "git alone prints "
		    "its help");
		return;
	}
	cls_shift(&sub, i);
	cmd = sub.w[0];
	if (cls_has_prefix(&sub, "--upload-pack") ||
	    cls_has_prefix(&sub, "--receive-pack") ||
	    cls_has_prefix(&sub, "--exec") || (cls_has_opt(&sub, "-u") &&
	    cls_in(cmd, (const char *const[]){ "ls-remote", "fetch", "clone",
	    "pull", "archive", NULL })) ||
	    cls_has_opt(&sub, "--open-files-in-pager") ||
	    (strcmp(cmd, "grep") == 0 && cls_has_flag(&sub, 'O', NULL)) ||
	    cls_has_opt(&sub, "--ext-diff")) {
		cls_raise(r, CLS_UNKNOWN, "unknown:git-option", "git %s with "
		    "this option runs another program", cmd);
		return;
	}
	if (cls_has_opt(&sub, "--output") || cls_has_opt(&sub, "-o")) {
		if (cls_in(cmd, ro)) {
			cls_raise(r, CLS_WRITE, "write:git", "git %s --output "
			    "writes a file", cmd);
			return;
		}
	}
	if (cls_in(cmd, (const char *const[]){ "fetch", "pull", "push",
	    "clone", "ls-remote", NULL })) {
		/* Then on: push --force is still destructive. */
		cls_raise(r, CLS_NETWORK, "network:git", "git %s talks to a "
		    "remote", cmd);
		if (strcmp(cmd, "ls-remote") == 0)
			return;
	}
	if (cls_in(cmd, ro)) {
		cls_raise(r, CLS_READ_ONLY, "read_only:git", "git %s only "
		    "reads", cmd);
		return;
	}
	if ((strcmp(cmd, "reset") == 0 && (cls_has_opt(&sub, "--hard") ||
	    cls_has_opt(&sub, "--merge") || cls_has_opt(&sub, "--keep"))) ||
	    (strcmp(cmd, "clean") == 0 && (cls_has_flag(&sub, 'f', "--force"))) ||
	    (strcmp(cmd, "push") == 0 && (cls_has_flag(&sub, 'f', "--force") ||
	    cls_has_opt(&sub, "--force-with-lease") ||
	    cls_has_opt(&sub, "--force-if-includes") ||
	    cls_has_flag(&sub, 'd', "--delete") || cls_has_opt(&sub, "--mirror")
	    || cls_has_opt(&sub, "--prune"))) ||
	    (strcmp(cmd, "branch") == 0 && (cls_has_flag(&sub, 'D', NULL) ||
	    cls_has_flag(&sub, 'd', "--delete") || cls_has_flag(&sub, 'M',
	    NULL))) ||
	    (strcmp(cmd, "tag") == 0 && cls_has_flag(&sub, 'd', "--delete")) ||
	    (strcmp(cmd, "stash") == 0 && sub.n > 1 && (strcmp(sub.w[1],
	    "drop") == 0 || strcmp(sub.w[1], "clear") == 0)) ||
	    (strcmp(cmd, "checkout") == 0 && (cls_has_opt(&sub, "--") ||
	    cls_has_flag(&sub, 'f', "--force") || (sub.n > 1 &&
	    strcmp(sub.w[sub.n - 1], ".") == 0))) ||
	    (strcmp(cmd, "restore") == 0 && !(sub.n > 1 &&
	    cls_has_opt(&sub, "--staged") && !cls_has_opt(&sub, "--worktree")))
	    || (strcmp(cmd, "reflog") == 0 && sub.n > 1 &&
	    (strcmp(sub.w[1], "expire") == 0 || strcmp(sub.w[1], "delete") ==
	    0)) || strcmp(cmd, "filter-branch") == 0 ||
	    strcmp(cmd, "filter-repo") == 0 || strcmp(cmd, "rebase") == 0 ||
	    strcmp(cmd, "rm") == 0 || strcmp(cmd, "prune") == 0 ||
	    (strcmp(cmd, "gc") == 0 && cls_has_opt(&sub, "--prune")) ||
	    (strcmp(cmd, "update-ref") == 0 && cls_has_flag(&sub, 'd', NULL))) {
		cls_raise(r, CLS_DESTRUCTIVE, "destructive:git", "git %s can "
		    "lose work or rewrite history", cmd);
		return;
	}
	(void)hard;
	if (cls_in(cmd, (const char *const[]){ "branch", "tag", "remote",
	    "config", "stash", "worktree", "notes", "reflog", "symbolic-ref",
	    NULL })) {
		for (i = 1; i < sub.n; i++) {
			if (cls_in(sub.w[i], (const char *const[]){ "-a", "-r",
			    "-v", "-vv", "-l", "--list", "--show-current",
			    "--get", "--get-all", "--get-regexp", "--show-origin",
			    "list", "show", "get-url", "-n", "--all", NULL }) ||
			    strncmp(sub.w[i], "--sort=", 7) == 0 ||
			    strncmp(sub.w[i], "--format=", 9) == 0 ||
			    strncmp(sub.w[i], "--color", 7) == 0)
				continue;
			if (strcmp(cmd, "config") == 0 && i > 1 && cls_in(
			    sub.w[1], (const char *const[]){ "--get",
			    "--get-all", "--get-regexp", NULL }))
				continue;
			if (strcmp(cmd, "symbolic-ref") == 0 && sub.n == 2)
				continue;
			break;
		}
		if (i == sub.n && (sub.n > 1 || cls_in(cmd,
		    (const char *const[]){ "branch", "tag", "remote", "reflog",
		    NULL }))) {
			cls_raise(r, CLS_READ_ONLY, "read_only:git", "git %s "
			    "only lists", cmd);
			return;
		}
	}
	if (cls_in(cmd, (const char *const[]){ "push", "pull", "fetch",
	    "commit", "add", "merge", "checkout", "switch", "clone", "init",
	    "am", "apply", "cherry-pick", "revert", "stash", "mv", "submodule",
	    "branch", "tag", "remote", "config", "worktree", "notes", "gc",
	    "restore", "format-patch", "bisect", "archive", "bundle",
	    "update-index", "symbolic-ref", "lfs", "maintenance", "sparse-checkout",
	    "reflog", "replace", "fsck", "repack", "pack-refs", NULL })) {
		cls_raise(r, CLS_WRITE, "write:git", "git %s changes the "
		    "repository%s", cmd, strcmp(cmd, "push") == 0 ?
		    " and the remote" : "");
		return;
	}
	cls_raise(r, CLS_UNKNOWN, "unknown:git", "git %s is not a known git "
	    "command (an alias?)", cmd);
}

/* find: read-only without actions that write, delete or run. */
static void
cls_find(struct cls_ctx *ctx, const struct cls_words *ws, struct cls_res *r)
{
	struct cls_words	 sub;
	struct cls_res		 inner;
	char			*text = NULL;
	size_t			 i, j;

	cls_raise(r, CLS_READ_ONLY, "read_only:find", "find only lists");
	for (i = 1; i < ws->n; i++) {
		if (strcmp(ws->w[i], "-delete") == 0)
			cls_raise(r, CLS_DESTRUCTIVE, "destructive:find",
			    "find -delete deletes what it finds");
		else if (strncmp(ws->w[i], "-fprint", 7) == 0 ||
		    strcmp(ws->w[i], "-fls") == 0)
			cls_raise(r, CLS_WRITE, "write:find", "find %s writes "
			    "a file", ws->w[i]);
		else if (cls_in(ws->w[i], (const char *const[]){ "-exec",
		    "-execdir", "-ok", "-okdir", NULL })) {
			for (j = i + 1; j < ws->n && strcmp(ws->w[j], ";") &&
			    strcmp(ws->w[j], "+"); j++)
				;
			sub.w = ws->w + i + 1;
			sub.f = ws->f + i + 1;
			sub.n = j - i - 1;
			sub.cwd = ws->cwd;
			memset(&inner, 0, sizeof inner);
			cls_words(ctx, &sub, &inner, &text);
			free(text);
			text = NULL;
			cls_raise(r, CLS_WRITE, "write:find", "find %s runs a "
			    "command on what it finds", ws->w[i]);
			if (inner.risk > r->risk)
				cls_set(r, inner.risk, inner.rule,
				    inner.reason);
			i = j;
		}
	}
}

/* A sed script that can write files or run commands (w, W, e). */
static int
cls_sed_script_unsafe(const char *script)
{
	const char	*p;

	for (p = script; *p != '\0'; p++)
		if ((*p == 'w' || *p == 'W' || *p == 'e') && (p == script ||
		    strchr(";}{ \t\n0123456789$/gpIiMm", p[-1]) != NULL))
			return (1);
	return (0);
}

/*
 * sed: read-only without -i and with scripts that only print. Options
 * are read as GNU sed does: clusters ("-ne"), attached values ("-ee p"),
 * abbreviated long options ("--expr"); the first operand is the script
 * unless -e or -f gave one.
 */
static void
cls_sed(const struct cls_words *ws, struct cls_res *r)
{
	const char	*w, *script;
	size_t		 i, k;
	int		 scripts = 0, files = 0;

	for (i = 1; i < ws->n; i++) {
		w = ws->w[i];
		script = NULL;
		if (strcmp(w, "--") == 0)
			files = 1;
		else if (!files && w[0] == '-' && w[1] == '-') {
			if (cls_opt_match(w, "--in-place")) {
				cls_raise(r, CLS_WRITE, "write:sed", "sed -i "
				    "edits files in place");
				return;
			}
			if (cls_opt_match(w, "--file")) {
				cls_raise(r, CLS_UNKNOWN, "unknown:sed", "sed -f "
				    "runs a script file that is not classified");
				return;
			}
			if (cls_opt_match(w, "--expression"))
				script = strchr(w, '=') != NULL ? strchr(w,
				    '=') + 1 : (i + 1 < ws->n ? ws->w[++i] : "");
			else if (cls_opt_match(w, "--line-length") &&
			    strchr(w, '=') == NULL)
				i++;
		} else if (!files && w[0] == '-' && w[1] != '\0') {
			for (k = 1; w[k] != '\0'; k++) {
				if (w[k] == 'i') {
					cls_raise(r, CLS_WRITE, "write:sed",
					    "sed -i edits files in place");
					return;
				}
				if (w[k] == 'f') {
					cls_raise(r, CLS_UNKNOWN, "unknown:sed",
					    "sed -f runs a script file that is "
					    "not classified");
					return;
				}
				if (w[k] == 'e' || w[k] == 'l') {
					script = w[k + 1] != '\0' ? w + k + 1 :
					    (i + 1 < ws->n ? ws->w[++i] : "");
					if (w[k] == 'l')
						script = NULL;
					break;
				}
			}
		} else if (scripts == 0)
			script = w;	/* the script operand */
		if (script == NULL)
			continue;
		scripts++;
		if (cls_sed_script_unsafe(script)) {
			cls_raise(r, CLS_UNKNOWN, "unknown:sed", "the sed script "
			    "may write files or run commands");
			return;
		}
	}
	cls_raise(r, CLS_READ_ONLY, "read_only:sed", "sed without -i only "
	    "prints");
}

/* awk: read-only when the program cannot write or run. */
static void
cls_awk(const struct cls_words *ws, const char *name, struct cls_res *r)
{
	const char	*w;
	size_t		 i;

	for (i = 1; i < ws->n; i++) {
		w = ws->w[i];
		if (strcmp(w, "-F") == 0 || strcmp(w, "-v") == 0 ||
		    cls_opt_match(w, "--field-separator") ||
		    cls_opt_match(w, "--assign")) {
			if (strchr(w, '=') == NULL || w[1] != '-')
				i++;
			continue;
		}
		if (strncmp(w, "-F", 2) == 0 || strncmp(w, "-v", 2) == 0)
			continue;
		if (strcmp(w, "--") == 0)
			continue;
		if (cls_is_opt(w)) {
			cls_raise(r, CLS_UNKNOWN, "unknown:awk", "%s option %s "
			    "is not followed (program files, extensions)",
			    name, w);
			return;
		}
		if (strstr(w, "system") != NULL || strpbrk(w, "|>") != NULL ||
		    strchr(w, '@') != NULL) {
			cls_raise(r, CLS_UNKNOWN, "unknown:awk", "the %s "
			    "program may write files or run commands", name);
			return;
		}
		break;		/* the program; the rest are files */
	}
	cls_raise(r, CLS_READ_ONLY, "read_only:awk", "%s only prints", name);
}

/* Non-option operands. */
static size_t
cls_operands(const struct cls_words *ws)
{
	size_t	i, n = 0;

	for (i = 1; i < ws->n; i++)
		if (!cls_is_opt(ws->w[i]))
			n++;
	return (n);
}

/* A tool whose subcommand decides (npm install, apt remove, ...). */
struct cls_sub {
	const char	*name;
	const char	*const *ro;		/* read-only subcommands */
	const char	*const *bad;		/* destructive ones */
	enum cls_risk	 other;			/* everything else */
	const char	*const *net;		/* ones that use the network */
};

#define L(...)	((const char *const []){ __VA_ARGS__, NULL })
static const struct cls_sub cls_subs[] = {
	{ "npm", L("ls", "list", "--version", "-v", "help", "root",
	    "prefix"), L("uninstall", "rm", "remove", "unpublish", "prune"),
	    CLS_WRITE, L("install", "i", "ci", "update", "add", "view",
	    "info", "outdated", "search", "publish", "audit", "login") },
	{ "yarn", L("list", "--version", "why"), L("remove"), CLS_WRITE,
	    L("install", "add", "upgrade", "info", "outdated", "publish") },
	{ "pnpm", L("list", "ls", "--version", "why"),
	    L("remove", "rm", "prune"), CLS_WRITE, L("install", "i", "add",
	    "update", "outdated", "publish") },
	{ "pip", L("list", "show", "freeze", "--version", "check", "help"),
	    L("uninstall"), CLS_WRITE, L("install", "download", "search",
	    "index") },
	{ "pip3", L("list", "show", "freeze", "--version", "check", "help"),
	    L("uninstall"), CLS_WRITE, L("install", "download", "search",
	    "index") },
	{ "apt", L("list", "search", "show", "policy", "depends", "rdepends",
	    "--version"), L("remove", "purge", "autoremove"), CLS_WRITE,
	    L("install", "update", "upgrade", "full-upgrade", "download",
	    "source") },
	{ "apt-get", L("--version", "check", "changelog"), L("remove",
	    "purge", "autoremove", "clean"), CLS_WRITE, L("install", "update",
	    "upgrade", "dist-upgrade", "download", "source") },
	{ "apt-cache", L("search", "show", "policy", "depends", "rdepends",
	    "madison", "pkgnames", "stats"), L("__none__"), CLS_READ_ONLY },
	{ "dpkg", L("-l", "-L", "-s", "-S", "--list", "--listfiles",
	    "--status", "--search", "--version", "--print-architecture"),
	    L("-r", "-P", "--remove", "--purge"), CLS_WRITE },
	{ "systemctl", L("status", "show", "list-units", "list-unit-files",
	    "list-timers", "list-sockets", "is-active", "is-enabled",
	    "is-failed", "cat", "--version", "help", "get-default"),
	    L("stop", "disable", "mask", "kill", "isolate", "reset-failed"),
	    CLS_WRITE },
	{ "docker", L("ps", "images", "inspect", "logs", "version", "info",
	    "stats", "top", "history", "port", "diff", "--version"),
	    L("rm", "rmi", "kill", "stop", "prune", "system", "volume",
	    "network"), CLS_WRITE, L("pull", "push", "search", "login") },
	{ "podman", L("ps", "images", "inspect", "logs", "version", "info",
	    "--version"), L("rm", "rmi", "kill", "stop", "system", "volume"),
	    CLS_WRITE },
	{ "kubectl", L("get", "describe", "logs", "version", "explain",
	    "api-resources", "top", "cluster-info", "diff"), L("delete",
	    "drain", "cordon", "replace"), CLS_WRITE },
	{ "go", L("version", "list", "doc", "help"), L("clean"),
	    CLS_WRITE, L("get", "install", "mod") },
	{ "cargo", L("--version", "-V", "tree", "metadata", "help"),
	    L("clean", "uninstall", "yank"), CLS_WRITE, L("search", "fetch",
	    "install", "update", "publish", "login") },
	{ "crontab", L("-l"), L("-r"), CLS_WRITE },
	{ "iptables", L("-L", "-S", "--list", "-V"), L("-F", "-X", "-D",
	    "--flush", "--delete", "-P"), CLS_WRITE },
	{ "tar", L("t", "-t", "tf", "-tf", "tvf", "-tvf", "tzf", "-tzf",
	    "tvzf", "-tvzf", "--list"), L("__none__"), CLS_WRITE },
	{ "unzip", L("-l", "-v", "-t", "-Z"), L("__none__"), CLS_WRITE },
};
#undef L

/* Tools decided by their first word after the options. */
static int
cls_subcommand(const struct cls_words *ws, const char *name,
    struct cls_res *r)
{
	const struct cls_sub	*s = NULL;
	const char		*cmd = NULL;
	size_t			 i;

	for (i = 0; i < sizeof cls_subs / sizeof cls_subs[0]; i++)
		if (strcmp(cls_subs[i].name, name) == 0)
			s = &cls_subs[i];
	if (s == NULL)
		return (0);
	for (i = 1; i < ws->n && cmd == NULL; i++) {
		if (cls_in(ws->w[i], s->ro) || cls_in(ws->w[i], s->bad))
			cmd = ws->w[i];
		else if (!cls_is_opt(ws->w[i]))
			cmd = ws->w[i];
		else if (strchr(ws->w[i], '=') == NULL) {
			/* "-n get delete": its value could be taken for it. */
			cls_raise(r, CLS_UNKNOWN, "unknown:subcommand", "%s %s "
			    "before the subcommand is not followed", name,
			    ws->w[i]);
			return (1);
		}
	}
	if (cmd != NULL && cls_in(cmd, s->bad))
		cls_raise(r, CLS_DESTRUCTIVE, "destructive:subcommand", "%s %s "
		    "removes or stops things", name, cmd);
	else if (cmd != NULL && cls_in(cmd, s->ro))
		cls_raise(r, CLS_READ_ONLY, "read_only:subcommand", "%s %s only "
		    "reads", name, cmd);
	else if (cmd != NULL && s->net != NULL && cls_in(cmd, s->net))
		cls_raise(r, CLS_NETWORK, "network:subcommand", "%s %s talks to "
		    "the network", name, cmd);
	else
		cls_raise(r, s->other, s->other == CLS_WRITE ? "write:subcommand" :
		    "unknown:subcommand", "%s %s %s", name, cmd != NULL ? cmd :
		    "(no subcommand)", s->other == CLS_WRITE ? "changes files or "
		    "state" : "is not classified");
	return (1);
}

/* Read-only commands, by name. */
static const char *const cls_read_only[] = { "ls", "cat", "head", "tail",
    "wc", "grep", "egrep", "fgrep", "rg", "ag", "echo", "printf", "pwd",
    "whoami", "id", "groups", "uname", "which", "whereis", "type", "file",
    "stat", "du", "df", "tree", "diff", "cmp", "comm", "cut", "tr", "paste",
    "column", "fold", "fmt", "nl", "rev", "tac", "od", "hexdump", "strings",
    "basename", "dirname", "realpath", "readlink", "md5sum", "sha1sum",
    "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum",
    "base64", "base32", "jq", "test", "[", "true", "false", "seq", "expr",
    "sleep", "ps", "pgrep", "free", "uptime", "printenv", "tty", "locale",
    "nproc", "getconf", "lsblk", "lscpu", "lsof", "dir", "vdir", "zcat", "zgrep", "bzcat", "xzcat", "numfmt", "join", "look",
    "yes", "arch", "logname", "users", "who", "w", "last", "env", "cd",
    "pushd", "popd", "dirs", "exit", "return", ":", "export", "unset",
    "set", "shift", "wait", "read", "local", "declare", "typeset",
    "readonly", "hash", "getopts", "umask", "ulimit", "times", "jobs",
    "let", "break", "continue", "shopt", "nm", "objdump", "readelf",
    "size", "tput", "clear",
    "apropos", "whatis", "pidof", "vmstat", "iostat", "mpstat", "sum", "expand", "unexpand", "shuf", "factor", "sha1", "md5", "sort",
    "uniq", "xxd", "tee", NULL };

/* Known writers and destroyers: name, risk, reason. */
static const struct {
	const char	*name;
	enum cls_risk	 risk;
	const char	*reason;
} cls_writers[] = {
	{ "mkdir", CLS_WRITE, "creates directories" },
	{ "touch", CLS_WRITE, "creates or updates files" },
	{ "cp", CLS_WRITE, "copies files (and may overwrite)" },
	{ "mv", CLS_WRITE, "moves files (and may overwrite)" },
	{ "ln", CLS_WRITE, "creates links" },
	{ "install", CLS_WRITE, "copies files into place" },
	{ "chmod", CLS_WRITE, "changes permissions" },
	{ "chown", CLS_WRITE, "changes owners" },
	{ "chgrp", CLS_WRITE, "changes groups" },
	{ "patch", CLS_WRITE, "edits files" },
	{ "zip", CLS_WRITE, "writes an archive" },
	{ "gzip", CLS_WRITE, "replaces files with compressed ones" },
	{ "gunzip", CLS_WRITE, "replaces files with uncompressed ones" },
	{ "bzip2", CLS_WRITE, "replaces files with compressed ones" },
	{ "bunzip2", CLS_WRITE, "replaces files with uncompressed ones" },
	{ "xz", CLS_WRITE, "replaces files with compressed ones" },
	{ "unxz", CLS_WRITE, "replaces files with uncompressed ones" },
	{ "zstd", CLS_WRITE, "writes compressed files" },
	{ "split", CLS_WRITE, "writes files" },
	{ "csplit", CLS_WRITE, "writes files" },
	{ "rsync", CLS_WRITE, "copies files (and may overwrite)" },
	{ "scp", CLS_NETWORK, "copies files over the network" },
	{ "sftp", CLS_NETWORK, "copies files over the network" },
	{ "curl", CLS_NETWORK, "talks to the network" },
	{ "wget", CLS_NETWORK, "downloads files" },
	{ "aria2c", CLS_NETWORK, "downloads files" },
	{ "nc", CLS_NETWORK, "opens network connections" },
	{ "ncat", CLS_NETWORK, "opens network connections" },
	{ "netcat", CLS_NETWORK, "opens network connections" },
	{ "socat", CLS_NETWORK, "opens network connections" },
	{ "telnet", CLS_NETWORK, "opens network connections" },
	{ "ftp", CLS_NETWORK, "talks to a file server" },
	{ "lftp", CLS_NETWORK, "talks to a file server" },
	{ "ping", CLS_NETWORK, "sends packets to a host" },
	{ "ping6", CLS_NETWORK, "sends packets to a host" },
	{ "traceroute", CLS_NETWORK, "sends packets to a host" },
	{ "tracepath", CLS_NETWORK, "sends packets to a host" },
	{ "mtr", CLS_NETWORK, "sends packets to a host" },
	{ "host", CLS_NETWORK, "asks a name server" },
	{ "dig", CLS_NETWORK, "asks a name server" },
	{ "nslookup", CLS_NETWORK, "asks a name server" },
	{ "whois", CLS_NETWORK, "asks a whois server" },
	{ "ssh-keyscan", CLS_NETWORK, "talks to ssh servers" },
	{ "make", CLS_WRITE, "runs build recipes" },
	{ "cmake", CLS_WRITE, "generates a build" },
	{ "ninja", CLS_WRITE, "runs a build" },
	{ "gcc", CLS_WRITE, "compiles (writes output files)" },
	{ "cc", CLS_WRITE, "compiles (writes output files)" },
	{ "clang", CLS_WRITE, "compiles (writes output files)" },
	{ "g++", CLS_WRITE, "compiles (writes output files)" },
	{ "ld", CLS_WRITE, "links (writes output files)" },
	{ "ar", CLS_WRITE, "writes an archive" },
	{ "rmdir", CLS_WRITE, "removes empty directories" },
	{ "mktemp", CLS_WRITE, "creates a temporary file" },
	{ "mkfifo", CLS_WRITE, "creates a pipe file" },
	{ "git-lfs", CLS_WRITE, "changes the repository" },
	{ "rm", CLS_DESTRUCTIVE, "deletes files" },
	{ "shred", CLS_DESTRUCTIVE, "overwrites files beyond recovery" },
	{ "truncate", CLS_DESTRUCTIVE, "cuts files short" },
	{ "dd", CLS_DESTRUCTIVE, "overwrites its output" },
	{ "kill", CLS_DESTRUCTIVE, "signals processes" },
	{ "pkill", CLS_DESTRUCTIVE, "signals processes by name" },
	{ "killall", CLS_DESTRUCTIVE, "signals processes by name" },
	{ "userdel", CLS_DESTRUCTIVE, "deletes a user" },
	{ "groupdel", CLS_DESTRUCTIVE, "deletes a group" },
	{ "useradd", CLS_WRITE, "adds a user" },
	{ "passwd", CLS_DESTRUCTIVE, "changes a password" },
	{ "mount", CLS_DESTRUCTIVE, "changes the mounts" },
	{ "umount", CLS_DESTRUCTIVE, "changes the mounts" },
	{ "swapoff", CLS_DESTRUCTIVE, "turns swap off" },
	{ "sysctl", CLS_DESTRUCTIVE, "changes kernel settings" },
	{ "modprobe", CLS_DESTRUCTIVE, "loads kernel modules" },
	{ "rmmod", CLS_DESTRUCTIVE, "unloads kernel modules" },
};

/* Interpreters: they run code nobody classified. */
static const char *const cls_interpreters[] = { "python", "python2",
    "python3", "node", "nodejs", "deno", "bun", "perl", "ruby", "php",
    "lua", "luajit", "tclsh", "Rscript", "julia", "java", "dotnet",
    "osascript", "pwsh", "powershell", "fish", "csh", "tcsh", "npx",
    "source", ".", "alias", "trap", "nix", "expect", NULL };

/* 1 if an rsync operand names another machine (host:path, rsync://). */
static int
cls_rsync_remote(const struct cls_words *ws)
{
	const char	*colon;
	size_t		 i;

	for (i = 1; i < ws->n; i++) {
		if (ws->w[i][0] == '-')
			continue;
		if (strncmp(ws->w[i], "rsync://", 8) == 0)
			return (1);
		colon = strchr(ws->w[i], ':');
		if (colon != NULL && colon != ws->w[i] &&
		    memchr(ws->w[i], '/', colon - ws->w[i]) == NULL)
			return (1);
	}
	return (0);
}

/* Writers, interpreters, and everything else (unknown). */
static void
cls_known(const struct cls_words *ws, const char *name, struct cls_res *r)
{
	char	rule[CLS_RULE_MAX];
	size_t	i;

	for (i = 0; i < sizeof cls_writers / sizeof cls_writers[0]; i++) {
		if (strcmp(cls_writers[i].name, name) != 0)
			continue;
		if (strcmp(name, "rsync") == 0 && cls_rsync_remote(ws))
			cls_raise(r, CLS_NETWORK, "network:rsync", "rsync "
			    "copies to or from another machine");
		if (strcmp(name, "rsync") == 0 && (cls_has_prefix(ws,
		    "--del") || cls_has_opt(ws, "--remove-source-files")))
			cls_raise(r, CLS_DESTRUCTIVE, "destructive:rsync",
			    "rsync --delete deletes files");
		else {
			snprintf(rule, sizeof rule, "%s:%s", cls_risk_name(
			    cls_writers[i].risk), name);
			cls_raise(r, cls_writers[i].risk, rule, "%s %s", name,
			    cls_writers[i].reason);
		}
		return;
	}
	if (cls_in(name, cls_interpreters)) {
		if (ws->n == 2 && (strcmp(ws->w[1], "--version") == 0 ||
		    strcmp(ws->w[1], "-V") == 0))
			cls_raise(r, CLS_READ_ONLY, "read_only:version", "%s "
			    "only prints its version", name);
		else
			cls_raise(r, CLS_UNKNOWN, "unknown:interpreter", "%s "
			    "runs code that is not classified", name);
		return;
	}
	cls_raise(r, CLS_UNKNOWN, "unknown:command", "%s is not a command "
	    "execq knows", name);
}

/* Options that make a read-only tool run something else. */
static int
cls_runs_program(const struct cls_words *ws, const char *name)
{
	if (strcmp(name, "rg") == 0)
		return (cls_has_opt(ws, "--pre"));
	if (strcmp(name, "sort") == 0)
		return (cls_has_opt(ws, "--compress-program"));
	if (strcmp(name, "tar") == 0)
		return (cls_has_opt(ws, "--to-command") ||
		    cls_has_opt(ws, "--use-compress-program") ||
		    cls_has_opt(ws, "-I") || cls_has_opt(ws, "--info-script") ||
		    cls_has_opt(ws, "-F") || cls_has_opt(ws, "--new-volume-script") ||
		    cls_has_opt(ws, "--checkpoint-action"));
	if (strcmp(name, "hash") == 0)
		return (cls_has_flag(ws, 'p', NULL));
	return (0);
}

/* ip: showing is read-only; changing the network is not. */
static void
cls_ip(const struct cls_words *ws, struct cls_res *r)
{
	static const char *const change[] = { "add", "del", "delete", "set",
	    "flush", "change", "replace", "append", "up", "down", "exec",
	    "monitor", NULL };
	size_t	i;

	for (i = 1; i < ws->n; i++)
		if (cls_in(ws->w[i], change)) {
			cls_raise(r, CLS_DESTRUCTIVE, "destructive:ip", "ip %s "
			    "changes the network", ws->w[i]);
			return;
		}
	cls_raise(r, CLS_READ_ONLY, "read_only:ip", "ip only shows");
}

/* 1 if a program path is a system one (/usr/bin/ls is ls). */
static int
cls_system_path(const char *path)
{
	static const char *const dirs[] = { "/bin/", "/usr/bin/", "/sbin/",
	    "/usr/sbin/", "/usr/local/bin/", "/usr/local/sbin/", NULL };
	size_t	i;

	for (i = 0; dirs[i] != NULL; i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0 &&
		    strchr(path + strlen(dirs[i]), '/') == NULL)
			return (1);
	return (0);
}

/* The command itself, wrappers gone: blocked, handlers, lists. */
static void
cls_command(struct cls_ctx *ctx, const struct cls_words *ws,
    struct cls_res *r)
{
	const char	*name = cls_base(ws->w[0]);
	char		 rule[CLS_RULE_MAX];
	size_t		 i;

	if (cls_blocked(ws, name, r))
		return;
	if (strchr(ws->w[0], '/') != NULL && !cls_system_path(ws->w[0])) {
		cls_raise(r, CLS_UNKNOWN, "unknown:program", "%s is a program "
		    "that is not classified", ws->w[0]);
		return;
	}
	if (strcmp(name, "git") == 0)
		cls_git(ctx, ws, r);
	else if (strcmp(name, "find") == 0)
		cls_find(ctx, ws, r);
	else if (strcmp(name, "sed") == 0)
		cls_sed(ws, r);
	else if (cls_in(name, (const char *const[]){ "awk", "gawk", "mawk",
	    "nawk", NULL }))
		cls_awk(ws, name, r);
	else if (cls_runs_program(ws, name))
		cls_raise(r, CLS_UNKNOWN, "unknown:option", "an option of %s "
		    "runs another program", name);
	else if (cls_subcommand(ws, name, r))
		;
	else if (strcmp(name, "sort") == 0 && (cls_has_flag(ws, 'o', NULL) ||
	    cls_has_opt(ws, "--output")))
		cls_raise(r, CLS_WRITE, "write:sort", "sort -o writes a file");
	else if ((strcmp(name, "uniq") == 0 || strcmp(name, "xxd") == 0) &&
	    cls_operands(ws) > 1)
		cls_raise(r, CLS_WRITE, "write:output-file", "%s writes its "
		    "second operand", name);
	else if (strcmp(name, "tee") == 0) {
		for (i = 1; i < ws->n; i++) {
			if (strcmp(ws->w[i], "--") == 0) {
				i++;	/* everything after is a file */
				break;
			}
			if (!cls_is_opt(ws->w[i]) &&
			    !cls_harmless_device(ws->w[i]))
				break;
		}
		while (i < ws->n && cls_harmless_device(ws->w[i]))
			i++;
		if (i < ws->n)
			cls_raise(r, CLS_WRITE, "write:tee", "tee writes %s",
			    ws->w[i]);
		else
			cls_raise(r, CLS_READ_ONLY, "read_only:tee", "tee "
			    "writes no file");
	} else if ((strcmp(name, "date") == 0 && (cls_has_flag(ws, 's',
	    "--set") || cls_has_opt(ws, "--set"))) ||
	    (strcmp(name, "hostname") == 0 && cls_operands(ws) > 0))
		cls_raise(r, CLS_DESTRUCTIVE, "destructive:system", "%s with an "
		    "argument changes the system", name);
	else if (strcmp(name, "ip") == 0)
		cls_ip(ws, r);
	else if ((strcmp(name, "tree") == 0 || strcmp(name, "shuf") == 0) &&
	    cls_has_flag(ws, 'o', "--output"))
		cls_raise(r, CLS_WRITE, "write:output-file", "%s -o writes a "
		    "file", name);
	else if (strcmp(name, "date") == 0 || strcmp(name, "hostname") == 0)
		cls_raise(r, CLS_READ_ONLY, "read_only:system", "%s only "
		    "prints", name);
	else if (cls_in(name, cls_read_only)) {
		snprintf(rule, sizeof rule, "read_only:%s", name);
		cls_raise(r, CLS_READ_ONLY, rule, "%s only reads or prints",
		    name);
	}
	else
		cls_known(ws, name, r);
}

/* ---- one simple command ------------------------------------------------ */

/*
 * Classifies a word list: peels wrappers into r (they may raise it), then
 * the command. *inner is the peeled text (allocated).
 */
static void
cls_words(struct cls_ctx *ctx, struct cls_words *ws, struct cls_res *r,
    char **inner)
{
	ssize_t		 k;
	int		 peel;

	*inner = NULL;
	for (peel = 0; peel < CLS_DEPTH_MAX; peel++) {
		if (ws->n == 0) {
			cls_raise(r, CLS_READ_ONLY, "read_only:empty", "nothing "
			    "is run");
			return;
		}
		if (ws->f[0] & SH_W_DYNAMIC) {
			cls_raise(r, CLS_UNKNOWN, "unknown:dynamic", "the "
			    "command name %s is computed at run time",
			    ws->w[0]);
			/* $X -rf / is rm -rf / when X is rm. */
			if (cls_has_flag(ws, 'r', "--recursive") ||
			    cls_has_flag(ws, 'R', NULL))
				cls_block_targets(ws, 1, "a computed command",
				    "blocked:rm-root", r);
			return;
		}
		if ((k = cls_wrapper(ctx, ws, cls_base(ws->w[0]), r)) < 0)
			return;
		if (k == 0)
			break;
		cls_shift(ws, (size_t)k);
	}
	if (ws->n == 0) {
		cls_raise(r, CLS_UNKNOWN, "unknown:wrapper", "a wrapper with no "
		    "command");
		return;
	}
	*inner = cls_join(ws->w, ws->n);
	cls_command(ctx, ws, r);
	if (r->risk == CLS_UNKNOWN || cls_in(cls_base(ws->w[0]),
	    (const char *const[]){ "docker", "podman", "kubectl", "nerdctl",
	    "crictl", "lxc", "lxc-attach", "vagrant", "parallel", NULL }))
		cls_embedded(ctx, ws, r);
	cls_check_args(ctx, ws);
}

/*
 * A command we cannot follow (an interpreter, a container's exec, an
 * unknown tool) may still carry a catastrophe in its arguments:
 * "docker exec c rm -rf /", "python3 -c 'os.system(\"rm -rf /\")'".
 * Its argument words from each position, and every argument with a space
 * (and every quoted string inside one), are checked for blocked commands
 * only.
 */
static void
cls_embedded(struct cls_ctx *ctx, const struct cls_words *ws,
    struct cls_res *r)
{
	struct cls_words	 sub;
	const char		*w, *q, *end;
	size_t			 i;

	for (i = 1; i < ws->n && i <= CLS_SCAN_MAX &&
	    r->risk != CLS_BLOCKED; i++) {
		sub.w = ws->w + i;
		sub.f = ws->f + i;
		sub.n = ws->n - i;
		sub.cwd = ws->cwd;
		if (!(sub.f[0] & SH_W_DYNAMIC))
			cls_blocked(&sub, cls_base(sub.w[0]), r);
	}
	for (i = 1; i < ws->n && ctx->depth < CLS_DEPTH_MAX; i++) {
		w = ws->w[i];
		if ((ws->f[i] & SH_W_DYNAMIC) || strchr(w, ' ') == NULL)
			continue;
		ctx->depth++;
		cls_salvage(ctx, w, strlen(w));
		for (q = w; (q = strpbrk(q, "'\"")) != NULL; q = end + 1) {
			if ((end = strchr(q + 1, *q)) == NULL)
				break;
			cls_salvage(ctx, q + 1, end - q - 1);
		}
		ctx->depth--;
	}
}

/* Configured rules: the first match sets the risk (never under blocked). */
static const struct cls_rule *
cls_rule_match(const struct cls_policy *p, const char *text,
    const char *inner)
{
	size_t	i;

	for (i = 0; i < p->nrules; i++) {
		if (fnmatch(p->rules[i].glob, text, 0) == 0 ||
		    (inner != NULL && fnmatch(p->rules[i].glob, inner, 0) == 0))
			return (&p->rules[i]);
	}
	return (NULL);
}

/* Output redirections: a file written is a write, a disk is blocked. */
static void
cls_redirs(struct cls_ctx *ctx, const struct sh_cmd *c, struct cls_res *r)
{
	const struct sh_redir	*rd;
	size_t			 i;
	int			 out;

	for (i = 0; i < c->nredirs; i++) {
		rd = &c->redirs[i];
		out = rd->op == SH_R_OUT || rd->op == SH_R_APPEND ||
		    rd->op == SH_R_CLOBBER || rd->op == SH_R_RDWR ||
		    rd->op == SH_R_OUT_ERR || rd->op == SH_R_APPEND_ERR ||
		    (rd->op == SH_R_DUP_OUT && (rd->target[0] == '\0' ||
		    strspn(rd->target, "0123456789") != strlen(rd->target)) &&
		    strcmp(rd->target, "-") != 0);
		if (rd->op == SH_R_HEREDOC || rd->op == SH_R_HERESTRING ||
		    rd->op == SH_R_DUP_IN || (rd->op == SH_R_DUP_OUT && !out))
			continue;
		if (out && rd->dynamic)
			cls_raise(r, CLS_WRITE, "redirect:write", "output goes "
			    "to a file named at run time (%s)", rd->target);
		else if (out && cls_block_device(rd->target))
			cls_raise(r, CLS_BLOCKED, "blocked:device-write",
			    "output is redirected onto the block device %s",
			    rd->target);
		else if (out && !cls_harmless_device(rd->target))
			cls_raise(r, CLS_WRITE, "redirect:write", "output is "
			    "redirected to %s", rd->target);
		cls_check_path(ctx, rd->target, rd->dynamic ? SH_W_DYNAMIC : 0,
		    out ? "a redirection writes" : "a redirection reads");
	}
}

/* "cd DIR" at the top level moves the cwd later commands use. */
static void
cls_track_cd(struct cls_ctx *ctx, const struct sh_cmd *c)
{
	char	*next;

	if (c->depth != 0 || c->argc == 0 || strcmp(c->argv[0], "cd") != 0)
		return;
	if (c->argc < 2 || (c->argflags[1] & SH_W_DYNAMIC) ||
	    strcmp(c->argv[1], "-") == 0 || c->argv[1][0] == '~' ||
	    (ctx->cwd == NULL && c->argv[1][0] != '/')) {
		free(ctx->cwd);
		ctx->cwd = NULL;
		if (c->argc < 2 || c->argv[1][0] == '~')
			cls_check_path(ctx, "~", 0, "cd goes to");
		return;
	}
	if (c->argv[1][0] == '/')
		next = cls_norm(c->argv[1]);
	else {
		xasprintf(&next, "%s/%s", ctx->cwd, c->argv[1]);
		free(ctx->cwd);
		ctx->cwd = cls_norm(next);
		free(next);
		return;
	}
	free(ctx->cwd);
	ctx->cwd = next;
}

/* Appends one classified command to the verdict and raises it. */
static void
cls_add(struct cls_ctx *ctx, char *text, const struct cls_res *r)
{
	struct cls_verdict	*v = ctx->v;
	struct cls_cmd		*c;

	if (v->ncmds == ctx->cmdcap) {
		ctx->cmdcap = ctx->cmdcap == 0 ? 8 : ctx->cmdcap * 2;
		v->cmds = xreallocarray(v->cmds, ctx->cmdcap, sizeof *v->cmds);
	}
	c = &v->cmds[v->ncmds++];
	c->text = text;
	c->risk = r->risk;
	c->rule = xstrdup(r->rule);
	c->reason = xstrdup(r->reason);
	c->network = r->network;
	v->network |= r->network;
	if (v->rule == NULL || r->risk > v->risk) {
		v->risk = r->risk;
		free(v->rule);
		free(v->reason);
		v->rule = xstrdup(r->rule);
		v->reason = xstrdup(r->reason);
	}
}

/* Text of a command with no words: its redirections or assignments. */
static char *
cls_bare_text(const struct sh_cmd *c)
{
	if (c->nredirs > 0)
		return (xstrdup(c->redirs[0].target));
	return (cls_join(c->assigns, c->nassigns));
}

/*
 * NAME=value words that change what later commands are or load: PATH=.
 * makes "ls" run ./ls. Checked in assignments, export/declare/env args.
 */
static const char *
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

/*
 * Bash evaluates array subscripts and arithmetic in places that look
 * harmless: "let 'x=a[$(cmd)]'", "test -v 'a[$(cmd)]'", "read 'a[$(cmd)]'",
 * "printf -v 'a[$(cmd)]'", "declare 'a[$(cmd)]=1'", "$((x))" with x set
 * to such a string, "${x@P}". Such words make the command unknown.
 */
static int
cls_bash_eval(const struct sh_cmd *c)
{
	static const char *const names[] = { "let", "test", "[", "read",
	    "printf", "declare", "typeset", "local", "readonly", "export",
	    "unset", "shift", "return", "exit", "wait", "mapfile",
	    "readarray", NULL };
	const char	*w, *p;
	size_t		 i;

	for (i = 0; i < c->argc; i++) {
		w = c->argv[i];
		if ((c->argflags[i] & SH_W_DYNAMIC) && ((p = strstr(w,
		    "$((")) != NULL && strpbrk(p, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != NULL))
			return (1);
		if ((c->argflags[i] & SH_W_DYNAMIC) && strstr(w, "@P}") != NULL)
			return (1);
		if (i > 0 && cls_in(c->argv[0], names) && strchr(w, '[') &&
		    (strstr(w, "$(") != NULL || strchr(w, '`') != NULL))
			return (1);
	}
	return (c->argc > 0 && strcmp(c->argv[0], "let") == 0 && c->argc > 1 &&
	    strpbrk(c->argv[1], "[$`") != NULL);
}

/* Variables a command sets by name: read NAME, printf -v NAME. */
static const char *
cls_risky_target(const struct sh_cmd *c)
{
	const char	*one[2];
	size_t		 i;

	if (c->argc < 2)
		return (NULL);
	for (i = 1; i < c->argc; i++) {
		if (strcmp(c->argv[0], "read") == 0 ||
		    strcmp(c->argv[0], "mapfile") == 0 ||
		    strcmp(c->argv[0], "readarray") == 0 ||
		    (strcmp(c->argv[0], "printf") == 0 && i > 1 &&
		    strcmp(c->argv[i - 1], "-v") == 0)) {
			xasprintf((char **)&one[0], "%s=", c->argv[i]);
			one[1] = cls_risky_assign((char *const *)one, 1);
			free((char *)one[0]);
			if (one[1] != NULL)
				return (c->argv[i]);
		}
	}
	return (NULL);
}

/* One simple command of the parse. */
static void
cls_simple(struct cls_ctx *ctx, const struct sh_cmd *c)
{
	struct cls_words	 ws;
	struct cls_res		 r;
	const struct cls_rule	*rule;
	const char		*risky;
	char			*text, *inner = NULL, name[CLS_RULE_MAX];

	memset(&r, 0, sizeof r);
	ws.w = c->argv;
	ws.f = c->argflags;
	ws.n = c->argc;
	ws.cwd = ctx->cwd;
	ctx->privileged = 0;
	text = c->argc > 0 ? cls_join(c->argv, c->argc) : cls_bare_text(c);
	if (c->argc == 0)
		cls_raise(&r, CLS_READ_ONLY, "read_only:assignment", "only "
		    "sets variables");
	else
		cls_words(ctx, &ws, &r, &inner);
	/* A rule decides the command; nothing below may be lowered by it. */
	if (c->argc > 0 && (rule = cls_rule_match(ctx->p, text, inner)) !=
	    NULL && r.risk != CLS_BLOCKED) {
		snprintf(name, sizeof name, "rule:%s", rule->name);
		cls_set(&r, rule->risk, name, rule->reason);
	}
	free(inner);
	if (ctx->privileged)
		cls_raise(&r, CLS_DESTRUCTIVE, "wrapper:sudo", "runs as root "
		    "or another user");
	if ((risky = cls_risky_assign(c->assigns, c->nassigns)) != NULL ||
	    (c->argc > 1 && cls_in(c->argv[0], (const char *const[]){
	    "export", "declare", "typeset", "readonly", "local", "env",
	    NULL }) && (risky = cls_risky_assign(c->argv + 1,
	    c->argc - 1)) != NULL) || (risky = cls_risky_target(c)) != NULL)
		cls_raise(&r, CLS_UNKNOWN, "unknown:environment", "%.40s "
		    "changes which programs run or what they load", risky);
	if (cls_bash_eval(c))
		cls_raise(&r, CLS_UNKNOWN, "unknown:bash-eval", "bash evaluates "
		    "this subscript or arithmetic, which can run commands");
	cls_redirs(ctx, c, &r);
	cls_add(ctx, text, &r);
	cls_track_cd(ctx, c);
}

/* Drops leading control keywords ("do rm -rf /" is "rm -rf /"). */
static const char *
cls_skip_keywords(const char *p)
{
	static const char *const kw[] = { "if", "then", "else", "elif", "fi",
	    "for", "while", "until", "do", "done", "case", "esac", "select",
	    "function", "!", "time", "coproc", NULL };
	char	 word[16];
	size_t	 n;

	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		n = strcspn(p, " \t\n");
		if (n == 0 || n >= sizeof word)
			return (p);
		memcpy(word, p, n);
		word[n] = '\0';
		if (!cls_in(word, kw))
			return (p);
		p += n;
	}
}

/*
 * An incomplete parse may hide a catastrophe inside a loop or a function
 * ("for i in 1; do rm -rf /; done"). Each piece between operators and
 * brackets is parsed on its own, keywords dropped; only blocked verdicts
 * are kept (the pieces may be cut wrong, so nothing else is trusted).
 */
static void
cls_salvage(struct cls_ctx *ctx, const char *src, size_t len)
{
	struct sh_parse		 ps;
	struct cls_words	 ws;
	struct cls_res		 r;
	const char		*q;
	char			*piece, *inner;
	size_t			 start = 0, i, k;

	for (i = 0; i <= len; i++) {
		if (i < len && strchr(";&|\n(){}`", src[i]) == NULL &&
		    src[i] != '\0')
			continue;
		piece = xstrndup(src + start, i - start);
		start = i + 1;
		q = cls_skip_keywords(piece);
		sh_parse(q, strlen(q), &ps);
		for (k = 0; k < ps.ncmds; k++) {
			memset(&r, 0, sizeof r);
			ws.w = ps.cmds[k].argv;
			ws.f = ps.cmds[k].argflags;
			ws.n = ps.cmds[k].argc;
			ws.cwd = ctx->cwd;
			cls_words(ctx, &ws, &r, &inner);
			free(inner);
			if (r.risk == CLS_BLOCKED)
				cls_add(ctx, cls_join(ps.cmds[k].argv,
				    ps.cmds[k].argc), &r);
		}
		sh_parse_release(&ps);
		free(piece);
	}
}

/* Parses and classifies src (also the strings of sh -c and eval). */
static void
cls_source(struct cls_ctx *ctx, const char *src, size_t len)
{
	struct sh_parse	 ps;
	struct cls_res	 r;
	size_t		 i;

	sh_parse(src, len, &ps);
	if (!ps.complete) {
		ctx->v->complete = 0;
		memset(&r, 0, sizeof r);
		cls_raise(&r, CLS_UNKNOWN, "parse:incomplete", "cannot be "
		    "parsed with certainty: %s (at byte %zu)", ps.why != NULL ?
		    ps.why : "unknown", ps.where);
		cls_add(ctx, xstrndup(src, len > 80 ? 80 : len), &r);
	}
	for (i = 0; i < ps.ncmds; i++)
		cls_simple(ctx, &ps.cmds[i]);
	if (!ps.complete && ctx->depth < CLS_DEPTH_MAX) {
		ctx->depth++;
		cls_salvage(ctx, src, len);
		ctx->depth--;
	}
	sh_parse_release(&ps);
}

/* 1 if name occurs in z at a word start, followed by what. */
static int
cls_bomb_call(const char *z, const char *name, const char *what)
{
	char		 pat[80];
	const char	*p;
	size_t		 len;

	snprintf(pat, sizeof pat, "%s%s", name, what);
	len = strlen(pat);
	for (p = z; (p = strstr(p, pat)) != NULL; p++) {
		if (p > z && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		if (strcmp(what, "&") == 0 && p[len] == '&')
			continue;	/* && */
		return (1);
	}
	return (0);
}

/*
 * Fork bombs: a function that calls itself twice through a pipe, or once
 * in the background ("f(){ f|f& };f", ":(){ :|:& };:", "function f {
 * f|f & }; f", quoted or backslashed names too). The text is looked at
 * with quotes, backslashes and blanks taken out.
 */
static int
cls_fork_bomb(const char *src, size_t len)
{
	char		*q = xmalloc(len + 1), *z = xmalloc(len + 1), name[40];
	char		 twice[48];
	const char	*c, *p, *e;
	size_t		 i, nq = 0, nz = 0, n, defs = 0;
	int		 bomb = 0;

	for (i = 0; i < len; i++) {
		if (src[i] == '\'' || src[i] == '"' || src[i] == '\\' ||
		    src[i] == '\0')
			continue;
		q[nq++] = src[i];
		if (!isspace((unsigned char)src[i]))
			z[nz++] = src[i];
	}
	q[nq] = z[nz] = '\0';
	for (c = q; *c != '\0' && !bomb && defs < CLS_SCAN_MAX; c++) {
		p = e = NULL;
		if (strncmp(c, "function", 8) == 0 && isspace((unsigned char)
		    c[8])) {
			for (p = c + 8; isspace((unsigned char)*p); p++)
				;
			e = p + strcspn(p, " \t\n({");
		} else if (*c == '(') {
			for (e = c + 1; isspace((unsigned char)*e); e++)
				;
			if (*e != ')')
				continue;
			for (e = c; e > q && isspace((unsigned char)e[-1]); e--)
				;
			for (p = e; p > q && (isalnum((unsigned char)p[-1]) ||
			    strchr("_:.-", p[-1]) != NULL); p--)
				;
		}
		if (e == NULL || (n = e - p) == 0 || n >= sizeof name)
			continue;
		memcpy(name, p, n);
		name[n] = '\0';
		defs++;
		snprintf(twice, sizeof twice, "|%s", name);
		bomb = cls_bomb_call(z, name, twice) ||
		    cls_bomb_call(z, name, "&");
	}
	free(q);
	free(z);
	return (bomb);
}

void
cls_classify(const struct cls_policy *p, const char *cmd, size_t len,
    const char *cwd, struct cls_verdict *out)
{
	struct cls_ctx	 ctx;
	struct cls_res	 r;

	memset(out, 0, sizeof *out);
	memset(&ctx, 0, sizeof ctx);
	out->complete = 1;
	ctx.p = p;
	ctx.v = out;
	cwd = cwd != NULL ? cwd : p->workspace;
	ctx.cwd = cwd != NULL ? xstrdup(cwd) : NULL;
	if (cls_fork_bomb(cmd, len)) {
		memset(&r, 0, sizeof r);
		cls_raise(&r, CLS_BLOCKED, "blocked:fork-bomb", "a function "
		    "that starts copies of itself until the machine stops");
		cls_add(&ctx, xstrndup(cmd, len > 80 ? 80 : len), &r);
	}
	cls_source(&ctx, cmd, len);
	if (out->ncmds == 0) {
		memset(&r, 0, sizeof r);
		cls_raise(&r, CLS_UNKNOWN, "unknown:empty", "the command is "
		    "empty");
		cls_add(&ctx, xstrdup(""), &r);
	}
	free(ctx.cwd);
}

void
cls_classify_env(struct cls_verdict *v, char *const *env)
{
	const char	*risky;
	size_t		 n = 0;

	while (env != NULL && env[n] != NULL)
		n++;
	if ((risky = cls_risky_assign(env, n)) == NULL ||
	    v->risk >= CLS_UNKNOWN)
		return;
	v->risk = CLS_UNKNOWN;
	free(v->rule);
	free(v->reason);
	v->rule = xstrdup("unknown:environment");
	xasprintf(&v->reason, "the item's env sets %.*s, which changes which "
	    "programs run or what they load", (int)strcspn(risky, "="), risky);
}

void
cls_verdict_release(struct cls_verdict *v)
{
	size_t	i;

	if (v == NULL)
		return;
	for (i = 0; i < v->ncmds; i++) {
		free(v->cmds[i].text);
		free(v->cmds[i].rule);
		free(v->cmds[i].reason);
	}
	free(v->cmds);
	free(v->rule);
	free(v->reason);
	free(v->outside);
	free(v->outside_reason);
	memset(v, 0, sizeof *v);
}

enum cls_action
cls_decide(const struct cls_verdict *v, enum cls_tier t, enum cls_sandbox sb,
    const char **rule, const char **reason)
{
	*rule = v->rule;
	*reason = v->reason;
	if (v->risk == CLS_BLOCKED)
		return (CLS_REFUSE);
	if (v->outside != NULL && sb != CLS_SANDBOX_OFF) {
		*rule = "sandbox";
		*reason = v->outside_reason;
		return (sb == CLS_SANDBOX_REFUSE ? CLS_REFUSE : CLS_HOLD);
	}
	if (t == CLS_TIER_ADMIN || (t == CLS_TIER_CONFINED &&
	    v->risk <= CLS_UNKNOWN) || (t == CLS_TIER_READ_WRITE &&
	    v->risk <= CLS_WRITE) || v->risk == CLS_READ_ONLY)
		return (CLS_RUN);
	return (CLS_HOLD);
}

/* 1 if rule decided one of example's commands. */
static int
cls_rule_decides(const struct cls_policy *p, const struct cls_rule *rule,
    const char *example)
{
	struct cls_verdict	 v;
	char			 name[CLS_RULE_MAX];
	size_t			 i;
	int			 hit = 0;

	snprintf(name, sizeof name, "rule:%s", rule->name);
	cls_classify(p, example, strlen(example), NULL, &v);
	for (i = 0; i < v.ncmds && !hit; i++)
		hit = strcmp(v.cmds[i].rule, name) == 0;
	cls_verdict_release(&v);
	return (hit);
}

/* 1 if rule's glob matches any simple command of example. */
static int
cls_rule_touches(const struct cls_rule *rule, const char *example)
{
	struct cls_policy	 one;
	struct cls_verdict	 v;
	char			 name[CLS_RULE_MAX];
	size_t			 i;
	int			 hit = 0;

	memset(&one, 0, sizeof one);
	one.rules = rule;
	one.nrules = 1;
	snprintf(name, sizeof name, "rule:%s", rule->name);
	cls_classify(&one, example, strlen(example), NULL, &v);
	for (i = 0; i < v.ncmds && !hit; i++)
		hit = strcmp(v.cmds[i].rule, name) == 0 ||
		    fnmatch(rule->glob, v.cmds[i].text, 0) == 0;
	cls_verdict_release(&v);
	return (hit);
}

int
cls_rules_check(const struct cls_policy *p, char **cause)
{
	const struct cls_rule	*rule;
	size_t			 i, j;

	*cause = NULL;
	for (i = 0; i < p->nrules; i++) {
		rule = &p->rules[i];
		for (j = 0; rule->match != NULL && rule->match[j] != NULL;
		    j++) {
			if (cls_rule_decides(p, rule, rule->match[j]))
				continue;
			xasprintf(cause, "rule %s: example \"%s\" is not "
			    "decided by it (%s)", rule->name, rule->match[j],
			    cls_rule_touches(rule, rule->match[j]) ?
			    "an earlier rule or a blocked built-in decides it" :
			    "its glob does not match");
			return (-1);
		}
		for (j = 0; rule->no_match != NULL && rule->no_match[j] !=
		    NULL; j++) {
			if (!cls_rule_touches(rule, rule->no_match[j]))
				continue;
			xasprintf(cause, "rule %s: counter-example \"%s\" "
			    "matches its glob \"%s\"", rule->name,
			    rule->no_match[j], rule->glob);
			return (-1);
		}
	}
	return (0);
}

/* Index of s in names, or -1. */
static int
cls_lookup(const char *s, const char *const *names, int n)
{
	int	i;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (i);
	return (-1);
}

const char *
cls_risk_name(enum cls_risk r)
{
	return ((unsigned)r < 6 ? cls_risk_names[r] : "unknown");
}

int
cls_risk_parse(const char *s, enum cls_risk *r)
{
	int	i = cls_lookup(s, cls_risk_names, 6);

	if (i < 0)
		return (-1);
	*r = (enum cls_risk)i;
	return (0);
}

const char *
cls_tier_name(enum cls_tier t)
{
	return ((unsigned)t < 4 ? cls_tier_names[t] : "read_only");
}

int
cls_tier_parse(const char *s, enum cls_tier *t)
{
	int	i = cls_lookup(s, cls_tier_names, 4);

	if (i < 0)
		return (-1);
	*t = (enum cls_tier)i;
	return (0);
}

const char *
cls_action_name(enum cls_action a)
{
	return ((unsigned)a < 3 ? cls_action_names[a] : "hold");
}

const char *
cls_sandbox_name(enum cls_sandbox sb)
{
	return ((unsigned)sb < 3 ? cls_sandbox_names[sb] : "hold");
}

int
cls_sandbox_parse(const char *s, enum cls_sandbox *sb)
{
	int	i = cls_lookup(s, cls_sandbox_names, 3);

	if (i < 0)
		return (-1);
	*sb = (enum cls_sandbox)i;
	return (0);
}
