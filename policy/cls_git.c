/*
 * The classifier's git: global options, the subcommand, the options that
 * run another program, and the repository's own config, which can name
 * programs git runs on the quietest read (core.fsmonitor on "git
 * status", a diff driver's textconv on "git log -p", a clean filter on
 * "git diff"). A read-only subcommand in a repository whose config names
 * one is unknown. The worker gives every command a fresh HOME and
 * XDG_CONFIG_HOME, so no user config applies; /etc/gitconfig is the
 * operator's.
 */

#include <sys/stat.h>

#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/classify.h"
#include "policy/cls.h"
#include "policy/shparse.h"
#include "logs/xmalloc.h"

#define CLS_GIT_CONFIG_MAX	(256 * 1024)	/* bigger: not read, unknown */
#define CLS_GIT_UP_MAX		64		/* directories walked up */

static const char *const cls_git_ro[] = { "status", "log", "diff", "show",
    "blame", "annotate", "shortlog", "describe", "rev-parse", "rev-list",
    "ls-files", "ls-tree", "cat-file", "grep", "merge-base", "name-rev",
    "for-each-ref", "show-ref", "count-objects", "whatchanged", "version",
    "help", "var", "check-ignore", "cherry", "range-diff", "diff-tree",
    "diff-files", "diff-index", "show-branch", "--version", "--help",
    NULL };

/* Config keys (the last part, lower case) that name a program to run. */
static const char *const cls_git_keys[] = { "fsmonitor", "textconv",
    "external", "command", "clean", "smudge", "process", "sshcommand",
    "program", "hookspath", "askpass", "editor", "pager", "driver",
    "helper", "cmd", "uploadpack", "receivepack", "gitproxy",
    "alternaterefscommand", "difffilter", "proxycommand", "tool", NULL };

/*
 * Why a config file's text names a program, or NULL: a key of
 * cls_git_keys in any section, any alias, or an include (whose file is
 * not read here).
 */
static const char *
cls_git_config_text(const char *text)
{
	static char	 why[160];
	const char	*p = text, *e;
	char		 key[48], section[48] = "";
	size_t		 n, i;

	for (; *p != '\0'; p = *e != '\0' ? e + 1 : e) {
		e = p + strcspn(p, "\n");
		while (p < e && isspace((unsigned char)*p))
			p++;
		if (*p == '[') {
			n = strcspn(p + 1, " \t\"]");
			snprintf(section, sizeof section, "%.*s", (int)n, p + 1);
			for (i = 0; section[i] != '\0'; i++)
				section[i] = tolower((unsigned char)section[i]);
			if (strncmp(section, "include", 7) == 0)
				return ("it includes another config file");
			p += 1 + strcspn(p + 1, "]");
			if (*p == ']')
				p++;
			while (p < e && isspace((unsigned char)*p))
				p++;
		}
		if (p >= e || *p == '#' || *p == ';')
			continue;
		n = strcspn(p, " \t=\n");
		snprintf(key, sizeof key, "%.*s", (int)(n < 47 ? n : 47), p);
		for (i = 0; key[i] != '\0'; i++)
			key[i] = tolower((unsigned char)key[i]);
		if (cls_in(key, cls_git_keys) || strcmp(section, "alias") == 0) {
			snprintf(why, sizeof why, "its config sets %s.%s, which "
			    "names a program git runs", section, key);
			return (why);
		}
	}
	return (NULL);
}

/*
 * Why the repository around dir has a config that runs programs, or
 * NULL. Walks up to the first .git; a .git file (a linked worktree or a
 * submodule) or a config that cannot be read counts as one.
 */
static const char *
cls_git_config(const char *dir)
{
	struct stat	 sb;
	const char	*why = NULL;
	char		*d, *path, *text = NULL, *slash;
	ssize_t		 got;
	int		 fd, up;

	if (dir == NULL)
		return ("the directory it runs in is not known");
	d = xstrdup(dir);
	for (up = 0; up < CLS_GIT_UP_MAX; up++) {
		xasprintf(&path, "%s/.git", d);
		if (lstat(path, &sb) == 0)
			break;
		free(path);
		path = NULL;
		if ((slash = strrchr(d, '/')) == NULL || slash == d)
			break;
		*slash = '\0';
	}
	if (path == NULL) {
		free(d);
		return (NULL);		/* not a repository: git says so */
	}
	if (!S_ISDIR(sb.st_mode))
		why = "its .git is a file (a worktree or submodule)";
	else {
		free(path);
		xasprintf(&path, "%s/.git/config", d);
		fd = open(path, O_RDONLY|O_CLOEXEC|O_NOFOLLOW|O_NONBLOCK);
		if (fd == -1 && lstat(path, &sb) == 0)
			why = "its config cannot be read";
		else if (fd != -1) {
			text = xmalloc(CLS_GIT_CONFIG_MAX + 1);
			got = read(fd, text, CLS_GIT_CONFIG_MAX + 1);
			close(fd);
			if (got < 0 || got > CLS_GIT_CONFIG_MAX)
				why = "its config is too big to read";
			else {
				text[got] = '\0';
				why = cls_git_config_text(text);
			}
		}
	}
	free(text);
	free(path);
	free(d);
	return (why);
}

/*
 * Global options before the subcommand; *dir is where git runs (after
 * -C). The index of the subcommand, or 0 when r was decided.
 */
static size_t
cls_git_globals(struct cls_ctx *ctx, const struct cls_words *ws,
    struct cls_res *r, char **dir)
{
	static const char *const plain[] = { "-P", "-p", "--no-pager",
	    "--paginate", "--bare", "--no-optional-locks",
	    "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
	    "--noglob-pathspecs", "--icase-pathspecs", "--no-advice", NULL };
	const char	*w;
	char		*next;
	size_t		 i;

	for (i = 1; i < ws->n && ws->w[i][0] == '-' &&
	    !cls_in(ws->w[i], cls_git_ro); i++) {
		w = ws->w[i];
		if (cls_opt_match(w, "--git-dir") ||
		    cls_opt_match(w, "--work-tree") || strcmp(w, "-c") == 0 ||
		    cls_opt_match(w, "--config-env") ||
		    cls_opt_match(w, "--exec-path")) {
			cls_raise(r, CLS_UNKNOWN, "unknown:git-config", "git %s "
			    "points git at another repository or config, which "
			    "can name programs it runs", w);
			return (0);
		}
		if (cls_opt_match(w, "--namespace")) {
			i += strchr(w, '=') == NULL;	/* its value */
			continue;
		}
		if (strcmp(w, "-C") == 0 && i + 1 < ws->n) {
			cls_check_path(ctx, ws->w[i + 1], ws->f[i + 1],
			    "git -C uses");
			if ((ws->f[i + 1] & SH_W_DYNAMIC) || *dir == NULL)
				next = NULL;
			else if (ws->w[i + 1][0] == '/')
				next = xstrdup(ws->w[i + 1]);
			else
				xasprintf(&next, "%s/%s", *dir, ws->w[i + 1]);
			free(*dir);
			*dir = next;
			i++;
		} else if (!cls_in(w, plain)) {
			cls_raise(r, CLS_UNKNOWN, "unknown:git-option", "git "
			    "option %s is not followed", w);
			return (0);
		}
	}
	if (i >= ws->n)
		cls_raise(r, CLS_READ_ONLY, "read_only:git", "git alone prints "
		    "its help");
	return (i < ws->n ? i : 0);
}

/* 1 (r raised) if a subcommand's option runs another program. */
static int
cls_git_runs(const struct cls_words *sub, struct cls_res *r)
{
	const char	*cmd = sub->w[0];

	if (cls_has_prefix(sub, "--upload-pack") ||
	    cls_has_prefix(sub, "--receive-pack") ||
	    cls_has_prefix(sub, "--exec") || (cls_has_opt(sub, "-u") &&
	    cls_in(cmd, (const char *const[]){ "ls-remote", "fetch", "clone",
	    "pull", "archive", NULL })) ||
	    cls_has_opt(sub, "--open-files-in-pager") ||
	    (strcmp(cmd, "grep") == 0 && cls_has_flag(sub, 'O', NULL)) ||
	    cls_has_opt(sub, "--ext-diff") ||
	    cls_has_opt(sub, "--show-signature") ||
	    cls_in(cmd, (const char *const[]){ "verify-commit", "verify-tag",
	    "difftool", "mergetool", "instaweb", "web--browse", NULL })) {
		cls_raise(r, CLS_UNKNOWN, "unknown:git-option", "git %s with "
		    "this option runs another program", cmd);
		return (1);
	}
	return (0);
}

/* 1 if the subcommand can lose work or rewrite history. */
static int
cls_git_destroys(const struct cls_words *s)
{
	const char	*c = s->w[0];
	const char	*last = s->w[s->n - 1];

	if (cls_in(c, (const char *const[]){ "filter-branch", "filter-repo",
	    "rebase", "rm", "prune", NULL }))
		return (1);
	if (strcmp(c, "reset") == 0)
		return (cls_has_opt(s, "--hard") || cls_has_opt(s, "--merge") ||
		    cls_has_opt(s, "--keep"));
	if (strcmp(c, "clean") == 0)
		return (cls_has_flag(s, 'f', "--force"));
	if (strcmp(c, "push") == 0)
		return (cls_has_flag(s, 'f', "--force") ||
		    cls_has_opt(s, "--force-with-lease") ||
		    cls_has_opt(s, "--force-if-includes") ||
		    cls_has_flag(s, 'd', "--delete") ||
		    cls_has_opt(s, "--mirror") || cls_has_opt(s, "--prune"));
	if (strcmp(c, "branch") == 0)
		return (cls_has_flag(s, 'D', NULL) ||
		    cls_has_flag(s, 'd', "--delete") ||
		    cls_has_flag(s, 'M', NULL));
	if (strcmp(c, "tag") == 0)
		return (cls_has_flag(s, 'd', "--delete"));
	if (strcmp(c, "stash") == 0 || strcmp(c, "reflog") == 0)
		return (s->n > 1 && cls_in(s->w[1], (const char *const[]){
		    "drop", "clear", "expire", "delete", NULL }));
	if (strcmp(c, "checkout") == 0)
		return (cls_has_opt(s, "--") || cls_has_flag(s, 'f', "--force") ||
		    (s->n > 1 && strcmp(last, ".") == 0));
	if (strcmp(c, "restore") == 0)
		return (!(s->n > 1 && cls_has_opt(s, "--staged") &&
		    !cls_has_opt(s, "--worktree")));
	if (strcmp(c, "gc") == 0)
		return (cls_has_opt(s, "--prune"));
	if (strcmp(c, "update-ref") == 0)
		return (cls_has_flag(s, 'd', NULL));
	return (0);
}

/* 1 if branch/tag/remote/config/... only lists. */
static int
cls_git_lists(const struct cls_words *s)
{
	const char	*c = s->w[0];
	size_t		 i;

	if (!cls_in(c, (const char *const[]){ "branch", "tag", "remote",
	    "config", "stash", "worktree", "notes", "reflog", "symbolic-ref",
	    NULL }))
		return (0);
	for (i = 1; i < s->n; i++) {
		if (cls_in(s->w[i], (const char *const[]){ "-a", "-r", "-v",
		    "-vv", "-l", "--list", "--show-current", "--get",
		    "--get-all", "--get-regexp", "--show-origin", "list", "show",
		    "get-url", "-n", "--all", NULL }) ||
		    strncmp(s->w[i], "--sort=", 7) == 0 ||
		    strncmp(s->w[i], "--format=", 9) == 0 ||
		    strncmp(s->w[i], "--color", 7) == 0)
			continue;
		if (strcmp(c, "config") == 0 && i > 1 && cls_in(s->w[1],
		    (const char *const[]){ "--get", "--get-all",
		    "--get-regexp", NULL }))
			continue;
		if (strcmp(c, "symbolic-ref") == 0 && s->n == 2)
			continue;
		return (0);
	}
	return (s->n > 1 || cls_in(c, (const char *const[]){ "branch", "tag",
	    "remote", "reflog", NULL }));
}

/* What a git subcommand does (sub starts at it). */
static void
cls_git_sub(const struct cls_words *sub, struct cls_res *r)
{
	const char	*cmd = sub->w[0];

	if ((cls_has_opt(sub, "--output") || cls_has_opt(sub, "-o")) &&
	    cls_in(cmd, cls_git_ro)) {
		cls_raise(r, CLS_WRITE, "write:git", "git %s --output writes "
		    "a file", cmd);
		return;
	}
	if (cls_in(cmd, (const char *const[]){ "fetch", "pull", "push",
	    "clone", "ls-remote", NULL })) {
		/* Then on: push --force is still destructive. */
		cls_raise(r, CLS_NETWORK, "network:git", "git %s talks to a "
		    "remote", cmd);
		if (strcmp(cmd, "ls-remote") == 0)
			return;
	}
	if (cls_in(cmd, cls_git_ro) || cls_git_lists(sub))
		cls_raise(r, CLS_READ_ONLY, "read_only:git", "git %s only "
		    "reads", cmd);
	else if (cls_git_destroys(sub))
		cls_raise(r, CLS_DESTRUCTIVE, "destructive:git", "git %s can "
		    "lose work or rewrite history", cmd);
	else if (cls_in(cmd, (const char *const[]){ "push", "pull", "fetch",
	    "commit", "add", "merge", "checkout", "switch", "clone", "init",
	    "am", "apply", "cherry-pick", "revert", "stash", "mv", "submodule",
	    "branch", "tag", "remote", "config", "worktree", "notes", "gc",
	    "restore", "format-patch", "bisect", "archive", "bundle",
	    "update-index", "symbolic-ref", "lfs", "maintenance",
	    "sparse-checkout", "reflog", "replace", "fsck", "repack",
	    "pack-refs", NULL }))
		cls_raise(r, CLS_WRITE, "write:git", "git %s changes the "
		    "repository%s", cmd, strcmp(cmd, "push") == 0 ?
		    " and the remote" : "");
	else
		cls_raise(r, CLS_UNKNOWN, "unknown:git", "git %s is not a known "
		    "git command (an alias?)", cmd);
}

/* git: global options, then the subcommand, then the repository's config. */
void
cls_git(struct cls_ctx *ctx, const struct cls_words *ws, struct cls_res *r)
{
	struct cls_words	 sub = *ws;
	const char		*why;
	char			*dir = ws->cwd != NULL ? xstrdup(ws->cwd) : NULL;
	size_t			 i;

	if ((i = cls_git_globals(ctx, ws, r, &dir)) == 0) {
		free(dir);
		return;
	}
	cls_shift(&sub, i);
	if (!cls_git_runs(&sub, r)) {
		cls_git_sub(&sub, r);
		/* Without a workspace nor a cwd there is no disk to read. */
		if (r->risk < CLS_UNKNOWN && (dir != NULL ||
		    ctx->p->workspace != NULL) && strcmp(sub.w[0], "clone") != 0 &&
		    strcmp(sub.w[0], "init") != 0 && strcmp(sub.w[0],
		    "--version") != 0 && strcmp(sub.w[0], "version") != 0 &&
		    (why = cls_git_config(dir)) != NULL)
			cls_raise(r, CLS_UNKNOWN, "unknown:git-config", "git %s "
			    "in this repository: %s", sub.w[0], why);
	}
	free(dir);
}
