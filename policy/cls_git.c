/*
 * The classifier's git: global options, the subcommand, the options that
 * run another program, and the repository, which can name programs git
 * runs on the quietest read (core.fsmonitor on "git status", a diff
 * driver's textconv on "git log -p", a pager, a hook that status starts
 * by writing the index). The repository is found and read the way git
 * finds and reads it: the walk up to a .git directory (one that is no
 * git dir is passed over, as git does), a .git file's "gitdir:", a bare
 * repository; the common dir a "commondir" names; config and
 * config.worktree in both; every include, however spelled, to git's
 * depth; the hooks the subcommand can start; the index, for submodules
 * (git runs git in them under their own config, which is not followed).
 * A config is parsed as git parses it, and what git would reject is
 * unknown rather than guessed. Attributes (info/attributes,
 * .gitattributes) are not read: they only name drivers, and a driver
 * runs a program only through a config key, which is read wherever git
 * would read it. Only files the command may read are read (a git file
 * elsewhere is unknown, unread). The worker gives every command a fresh
 * HOME and XDG_CONFIG_HOME, so no user config applies; /etc/gitconfig
 * is the operator's; GIT_* in the environment is not on its safe list.
 */

#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "policy/classify.h"
#include "policy/cls.h"
#include "policy/shparse.h"
#include "logs/xmalloc.h"

#define CLS_GIT_CONFIG_MAX	(256 * 1024)	/* bigger: not read, unknown */
#define CLS_GIT_INDEX_MAX	(256 * 1024 * 1024)
#define CLS_GIT_UP_MAX		64		/* directories walked up */
#define CLS_GIT_INCLUDE_MAX	10		/* git's own include depth */
#define CLS_GIT_FILES_MAX	64		/* config files read, in all */
#define CLS_GIT_DIRS_MAX	8		/* git dirs looked at */
#define CLS_GIT_HOOKS_MAX	256		/* hooks dir entries read */
#define CLS_GIT_NAME_MAX	64		/* a section or key name */

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
    "alternaterefscommand", "difffilter", "proxycommand", "tool",
    "defaultkeycommand", "packobjectshook", "tunnel", "sendmailcmd",
    "smtpserver", "tocmd", "cccmd", "headercmd", NULL };

/* Sections whose "path" is a program (browser.<tool>.path, ...). */
static const char *const cls_git_path_sections[] = { "browser", "man",
    "difftool", "mergetool", "web", NULL };

/* The hooks a read-only subcommand can start (status writes the index). */
static const char *const cls_git_ro_hooks[] = { "post-index-change",
    "reference-transaction", NULL };

/*
 * One look at a repository, the way git finds and reads it: the first
 * thing found that names a program is kept in why.
 */
struct cls_git_scan {
	const struct cls_policy	*p;
	const char		*sub;		/* the subcommand (aliases) */
	int			 ro;		/* it only reads (its hooks) */
	size_t			 files;		/* config files read */
	size_t			 dirs;		/* git dirs looked at */
	char			 why[CLS_REASON_MAX];	/* "": nothing */
};

/* Sets the scan's reason, once; returns -1 (stop). */
static int __attribute__((format(printf, 2, 3)))
cls_git_found(struct cls_git_scan *s, const char *fmt, ...)
{
	va_list	ap;

	if (s->why[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(s->why, sizeof s->why, fmt, ap);
		va_end(ap);
	}
	return (-1);
}

/* The last two components of a path, for a reason (".git/config"). */
static const char *
cls_git_short(const char *path)
{
	const char	*p = path + strlen(path), *slashes = NULL;
	int		 n = 0;

	while (p > path && n < 2)
		if (*--p == '/') {
			slashes = p;
			n++;
		}
	return (n == 2 ? slashes + 1 : path);
}

/*
 * Reads path, a regular file of at most max bytes, into *text (allocated,
 * NUL-terminated) and *len: 0; 1 if there is none; -1 (s->why set) if it
 * is there but cannot be read, is too big, or lies outside the paths the
 * command may read (it is never opened then).
 */
static int
cls_git_slurp(struct cls_git_scan *s, const char *path, size_t max,
    char **text, size_t *len)
{
	struct stat	 sb;
	ssize_t		 got;
	size_t		 have = 0;
	char		*dir;
	int		 fd, in;

	*text = NULL;
	/* Its directory first: whether a file is there is not told. */
	dir = xstrndup(path, strrchr(path, '/') - path);
	in = cls_path_inside(s->p, dir[0] != '\0' ? dir : "/");
	free(dir);
	if (in && stat(path, &sb) == -1 && (errno == ENOENT ||
	    errno == ENOTDIR) && lstat(path, &sb) == -1)
		return (1);		/* git reads nothing there either */
	if (!in || !cls_path_inside(s->p, path))
		return (cls_git_found(s, "git would read %s, outside the "
		    "workspace", path));
	if ((fd = open(path, O_RDONLY|O_CLOEXEC|O_NONBLOCK)) == -1 ||
	    fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    (size_t)sb.st_size > max) {
		if (fd != -1)
			close(fd);
		return (cls_git_found(s, "%s cannot be read or is too big "
		    "to read", cls_git_short(path)));
	}
	*text = xmalloc((size_t)sb.st_size + 1);
	while (have < (size_t)sb.st_size && (got = read(fd, *text + have,
	    (size_t)sb.st_size - have)) > 0)
		have += (size_t)got;
	close(fd);
	(*text)[have] = '\0';
	*len = have;
	return (0);
}

static int	cls_git_config(struct cls_git_scan *, const char *, int);

/* include.path or includeIf.<any condition>.path: the file it names. */
static int
cls_git_include(struct cls_git_scan *s, const char *file, const char *val,
    int depth)
{
	const char	*slash;
	char		*path;
	int		 rc;

	if (val == NULL || *val == '\0')
		return (cls_git_found(s, "%s has an include without a path",
		    cls_git_short(file)));
	if (val[0] == '~' || strncmp(val, "%(prefix)", 9) == 0)
		return (cls_git_found(s, "%s includes %s, which is not looked "
		    "at", cls_git_short(file), val));
	if (depth >= CLS_GIT_INCLUDE_MAX)
		return (cls_git_found(s, "its config includes files more "
		    "than %d deep", CLS_GIT_INCLUDE_MAX));
	if (val[0] == '/')
		path = xstrdup(val);
	else {
		slash = strrchr(file, '/');
		xasprintf(&path, "%.*s/%s", (int)(slash - file), file, val);
	}
	rc = cls_git_config(s, path, depth + 1);
	free(path);
	return (rc);
}

/* 1 if a config value is one of git's booleans. */
static int
cls_git_bool(const char *val)
{
	return (val == NULL || cls_in(val, (const char *const[]){ "", "true",
	    "false", "yes", "no", "on", "off", "1", "0", NULL }));
}

/*
 * One variable (section lower case, subsection if any, key lower case,
 * value or NULL): 0, or -1 (s->why set) if it makes git run a program.
 */
static int
cls_git_var(struct cls_git_scan *s, const char *file, int depth,
    const char *section, int hassub, const char *key, const char *val)
{
	char	base[CLS_GIT_NAME_MAX];
	int	bad;

	snprintf(base, sizeof base, "%.*s", (int)strcspn(section, "."),
	    section);
	if ((strcmp(base, "include") == 0 || strcmp(base, "includeif") == 0) &&
	    strcmp(key, "path") == 0)
		return (cls_git_include(s, file, val, depth));
	if (strcmp(base, "alias") == 0)
		bad = !hassub && strcasecmp(key, s->sub) == 0;
	else if (strcmp(base, "pager") == 0)
		bad = !cls_git_bool(val);	/* a command, not on/off */
	else if (strcmp(base, "protocol") == 0)
		bad = strcmp(key, "allow") == 0;	/* ext:: runs one */
	else
		bad = cls_in(key, cls_git_keys) || (strcmp(key, "path") == 0 &&
		    cls_in(base, cls_git_path_sections));
	if (bad || (val != NULL && val[0] == '!'))	/* a shell command */
		return (cls_git_found(s, "%s sets %s%s.%s, which names a "
		    "program git runs", cls_git_short(file), section,
		    hassub ? ".<...>" : "", key));
	return (0);
}

/* git's isspace: the four it knows. */
static int
cls_git_space(int c)
{
	return (c == ' ' || c == '\t' || c == '\n' || c == '\r');
}

/*
 * The next character of a config text as git reads it (CRLF is a
 * newline; the end reads as a newline), or -1 past the end.
 */
static int
cls_git_next(const char *t, size_t len, size_t *i)
{
	if (*i >= len) {
		(*i)++;
		return (*i == len + 1 ? '\n' : -1);
	}
	if (t[*i] == '\r' && *i + 1 < len && t[*i + 1] == '\n')
		(*i)++;
	return ((unsigned char)t[(*i)++]);
}

/* A section header after its '[': 0, or -1 if git would reject it. */
static int
cls_git_header(const char *t, size_t len, size_t *i, char *section,
    int *hassub)
{
	size_t	n = 0;
	int	c;

	*hassub = 0;
	for (;;) {
		if ((c = cls_git_next(t, len, i)) == -1 || c == '\n')
			return (-1);
		if (c == ']')
			break;
		if (cls_git_space(c)) {
			while ((c = cls_git_next(t, len, i)) == ' ' ||
			    c == '\t')
				;
			if (c != '"')
				return (-1);
			for (;;) {	/* the subsection, kept out */
				if ((c = cls_git_next(t, len, i)) == -1 ||
				    c == '\n')
					return (-1);
				if (c == '"')
					break;
				if (c == '\\' && ((c = cls_git_next(t, len,
				    i)) == -1 || c == '\n'))
					return (-1);
			}
			if (cls_git_next(t, len, i) != ']')
				return (-1);
			*hassub = 1;
			break;
		}
		if (!isalnum(c) && c != '-' && c != '.')
			return (-1);
		if (n + 1 >= CLS_GIT_NAME_MAX)
			return (-1);
		section[n++] = (char)tolower(c);
	}
	section[n] = '\0';
	if (strchr(section, '.') != NULL)
		*hassub = 1;		/* [section.subsection] */
	return (n == 0 ? -1 : 0);
}

/*
 * A value after its '=', into val (as long as the text): quotes, the
 * escapes git knows, continuation lines, comments. -1 if git would
 * reject it.
 */
static int
cls_git_value(const char *t, size_t len, size_t *i, char *val)
{
	size_t	n = 0, space = 0;
	int	c, quote = 0, comment = 0;

	for (;;) {
		if ((c = cls_git_next(t, len, i)) == -1)
			return (-1);
		if (c == '\n') {
			if (quote)
				return (-1);
			break;
		}
		if (comment)
			continue;
		if (cls_git_space(c) && !quote) {
			if (n > 0)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = 1;
			continue;
		}
		for (; space > 0; space--)
			val[n++] = ' ';
		if (c == '\\') {
			c = cls_git_next(t, len, i);
			if (c == '\n')
				continue;	/* a continuation line */
			if (c == 't')
				c = '\t';
			else if (c == 'b')
				c = '\b';
			else if (c == 'n')
				c = '\n';
			else if (c != '\\' && c != '"')
				return (-1);
		} else if (c == '"') {
			quote = !quote;
			continue;
		}
		val[n++] = (char)c;
	}
	val[n] = '\0';
	return (0);
}

/*
 * One config file's text, parsed as git's config parser does (a byte
 * git would reject is rejected here too: git stops there, and the scan
 * says unknown rather than guess). 0, or -1 with s->why set.
 */
static int
cls_git_parse(struct cls_git_scan *s, const char *file, const char *t,
    size_t len, int depth)
{
	char	 section[CLS_GIT_NAME_MAX] = "", key[CLS_GIT_NAME_MAX];
	char	*val = xmalloc(len + 1);
	size_t	 i = 0, n;
	int	 c, hassub = 0, rc = 0, bad = 0;

	if (memchr(t, '\0', len) != NULL)
		bad = 1;
	if (len >= 3 && memcmp(t, "\xef\xbb\xbf", 3) == 0)
		i = 3;			/* a UTF-8 BOM */
	while (!bad && rc == 0 && i < len) {
		c = cls_git_next(t, len, &i);
		if (cls_git_space(c))
			continue;
		if (c == '#' || c == ';') {
			while ((c = cls_git_next(t, len, &i)) != -1 &&
			    c != '\n')
				;
			continue;
		}
		if (c == '[') {
			bad = cls_git_header(t, len, &i, section, &hassub);
			continue;
		}
		if (!isalpha(c) || section[0] == '\0') {
			bad = 1;
			break;
		}
		key[0] = (char)tolower(c);
		for (n = 1; i < len && (isalnum((unsigned char)t[i]) ||
		    t[i] == '-'); i++)
			if (n + 1 < sizeof key)
				key[n++] = (char)tolower((unsigned char)t[i]);
			else
				bad = 1;
		key[n] = '\0';
		while ((c = cls_git_next(t, len, &i)) == ' ' || c == '\t')
			;
		if (c == '\n')
			rc = cls_git_var(s, file, depth, section, hassub, key,
			    NULL);
		else if (c != '=' || cls_git_value(t, len, &i, val) == -1)
			bad = 1;
		else
			rc = cls_git_var(s, file, depth, section, hassub, key,
			    val);
	}
	free(val);
	if (bad)
		return (cls_git_found(s, "%s cannot be parsed (git would stop "
		    "at it too)", cls_git_short(file)));
	return (rc);
}

/* One config file, if it is there: 0, or -1 with s->why set. */
static int
cls_git_config(struct cls_git_scan *s, const char *path, int depth)
{
	char	*text;
	size_t	 len;
	int	 rc;

	if (++s->files > CLS_GIT_FILES_MAX)
		return (cls_git_found(s, "its config spans more than %d files",
		    CLS_GIT_FILES_MAX));
	if ((rc = cls_git_slurp(s, path, CLS_GIT_CONFIG_MAX, &text,
	    &len)) != 0)
		return (rc == 1 ? 0 : -1);
	rc = cls_git_parse(s, path, text, len, depth);
	free(text);
	return (rc);
}

/*
 * The hooks in dir/hooks this subcommand can start: for a read-only one
 * the index and ref hooks, for any other every hook there is (a
 * "*.sample" is never run). 0, or -1 with s->why set.
 */
static int
cls_git_hooks(struct cls_git_scan *s, const char *dir)
{
	struct stat	 sb;
	struct dirent	*e;
	DIR		*d;
	char		*path;
	size_t		 i, n = 0;
	int		 rc = 0;

	xasprintf(&path, "%s/hooks", dir);
	if (s->ro) {
		for (i = 0; rc == 0 && cls_git_ro_hooks[i] != NULL; i++) {
			free(path);
			xasprintf(&path, "%s/hooks/%s", dir,
			    cls_git_ro_hooks[i]);
			if (lstat(path, &sb) == 0 || (errno != ENOENT &&
			    errno != ENOTDIR))
				rc = cls_git_found(s, "its hook %s runs on "
				    "git %s", cls_git_ro_hooks[i], s->sub);
		}
		free(path);
		return (rc);
	}
	if ((d = opendir(path)) == NULL) {
		rc = errno == ENOENT || errno == ENOTDIR ? 0 : cls_git_found(s,
		    "its hooks cannot be listed");
		free(path);
		return (rc);
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (++n > CLS_GIT_HOOKS_MAX)
			rc = cls_git_found(s, "it has too many hooks to look "
			    "at");
		else if (strcmp(e->d_name, ".") != 0 &&
		    strcmp(e->d_name, "..") != 0 && (strlen(e->d_name) < 7 ||
		    strcmp(e->d_name + strlen(e->d_name) - 7, ".sample") != 0))
			rc = cls_git_found(s, "its hook %.64s can run on "
			    "git %s", e->d_name, s->sub);
	}
	closedir(d);
	free(path);
	return (rc);
}

/* A big-endian 32-bit number. */
static uint32_t
cls_git_be32(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]);
}

/*
 * The index's entries, looked at for submodules (mode 160000): git
 * status and diff run git inside each one, under the submodule's own
 * config and hooks, which this scan does not follow. A sparse directory
 * entry or a split index (more entries elsewhere) counts as one. 0, or
 * -1 with s->why set.
 */
static int
cls_git_index(struct cls_git_scan *s, const char *gitdir)
{
	const unsigned char	*t;
	char			*path, *text;
	size_t			 len, off = 12, fixed, nlen, left;
	uint32_t		 ver, count, k, mode;
	int			 rc;

	xasprintf(&path, "%s/index", gitdir);
	rc = cls_git_slurp(s, path, CLS_GIT_INDEX_MAX, &text, &len);
	free(path);
	if (rc != 0)
		return (rc == 1 ? 0 : -1);
	t = (const unsigned char *)text;
	rc = -1;
	if (len < 12 || memcmp(t, "DIRC", 4) != 0 ||
	    (ver = cls_git_be32(t + 4)) < 2 || ver > 4)
		goto out;
	count = cls_git_be32(t + 8);
	for (k = 0; k < count; k++) {
		if (len - off < 62)
			goto out;
		mode = cls_git_be32(t + off + 24);
		fixed = 62 + ((ver >= 3 && (t[off + 60] & 0x40)) ? 2 : 0);
		if ((mode & 0170000) == 0160000 || (mode & 0170000) ==
		    0040000) {
			rc = cls_git_found(s, "it has submodules (git %s runs "
			    "git in them, under their own config)", s->sub);
			goto out;
		}
		if (len - off < fixed)
			goto out;
		off += fixed;
		if (ver == 4) {
			while (off < len && (t[off] & 0x80))
				off++;		/* the prefix length */
			off++;
		}
		if (off >= len || (nlen = strnlen(text + off, len - off)) ==
		    len - off)
			goto out;
		off += nlen + 1;
		if (ver < 4)		/* 1 to 8 NULs, to 8 bytes */
			while ((off - 12) % 8 != 0 && off < len)
				off++;
	}
	/* The extensions, up to the checksum: a split index has a link. */
	while ((left = len - off) >= 8 + 20 && cls_git_be32(t + off + 4) <=
	    left - 8) {
		if (memcmp(t + off, "link", 4) == 0 ||
		    memcmp(t + off, "sdir", 4) == 0) {
			rc = cls_git_found(s, "its index is split or sparse, "
			    "which is not followed");
			goto out;
		}
		off += 8 + cls_git_be32(t + off + 4);
	}
	rc = 0;
out:
	if (rc == -1 && s->why[0] == '\0')
		cls_git_found(s, "its index cannot be read");
	free(text);
	return (rc);
}

/*
 * The common dir of a git dir: what its "commondir" file names
 * (relative to it), or the git dir itself. Allocated, or NULL (s->why
 * set).
 */
static char *
cls_git_common(struct cls_git_scan *s, const char *gitdir)
{
	char	*path, *text, *common;
	size_t	 len;
	int	 rc;

	xasprintf(&path, "%s/commondir", gitdir);
	rc = cls_git_slurp(s, path, PATH_MAX, &text, &len);
	free(path);
	if (rc == 1)
		return (xstrdup(gitdir));
	if (rc == -1)
		return (NULL);
	while (len > 0 && cls_git_space((unsigned char)text[len - 1]))
		text[--len] = '\0';
	if (len == 0 || strlen(text) != len) {
		free(text);
		cls_git_found(s, "its commondir cannot be read");
		return (NULL);
	}
	if (text[0] == '/')
		common = text;
	else {
		xasprintf(&common, "%s/%s", gitdir, text);
		free(text);
	}
	return (common);
}

/*
 * One git dir: its common dir, the configs git reads there (config and
 * config.worktree, in both), what they include, its hooks, its index.
 * 0, or -1 with s->why set.
 */
static int
cls_git_repo(struct cls_git_scan *s, const char *gitdir)
{
	static const char *const names[] = { "config", "config.worktree",
	    NULL };
	char	*common, *path;
	size_t	 i;
	int	 rc = 0;

	if (++s->dirs > CLS_GIT_DIRS_MAX)
		return (cls_git_found(s, "too many git dirs around it"));
	if (!cls_path_inside(s->p, gitdir))
		return (cls_git_found(s, "its git dir %s is outside the "
		    "workspace", gitdir));
	if ((common = cls_git_common(s, gitdir)) == NULL)
		return (-1);
	if (!cls_path_inside(s->p, common)) {
		cls_git_found(s, "its common dir %s is outside the workspace",
		    common);
		free(common);
		return (-1);
	}
	for (i = 0; rc == 0 && names[i] != NULL; i++) {
		xasprintf(&path, "%s/%s", common, names[i]);
		rc = cls_git_config(s, path, 0);
		free(path);
		if (rc == 0 && strcmp(common, gitdir) != 0) {
			xasprintf(&path, "%s/%s", gitdir, names[i]);
			rc = cls_git_config(s, path, 0);
			free(path);
		}
	}
	if (rc == 0)
		rc = cls_git_hooks(s, common);
	if (rc == 0 && strcmp(common, gitdir) != 0)
		rc = cls_git_hooks(s, gitdir);
	if (rc == 0)
		rc = cls_git_index(s, gitdir);
	free(common);
	return (rc);
}

/*
 * 1 if dir is a git dir for certain, so git's walk up stops there: a
 * HEAD that is a ref or an object name, objects/ and refs/ beside it,
 * no commondir. Stricter than git is safe (the walk goes on and looks
 * at more); looser would not be.
 */
static int
cls_git_valid(const char *dir)
{
	struct stat	 sb;
	char		 head[128], *path;
	ssize_t		 n = -1;
	size_t		 len;
	int		 fd, ok;

	xasprintf(&path, "%s/HEAD", dir);
	if ((fd = open(path, O_RDONLY|O_CLOEXEC|O_NOFOLLOW|O_NONBLOCK)) !=
	    -1) {
		n = read(fd, head, sizeof head - 1);
		close(fd);
	}
	free(path);
	if (n <= 0)
		return (0);
	head[n] = '\0';
	len = strspn(head, "0123456789abcdef");
	ok = (strncmp(head, "ref:", 4) == 0 && strncmp(head + 4 +
	    strspn(head + 4, " \t"), "refs/", 5) == 0) || len == 40 ||
	    len == 64;
	xasprintf(&path, "%s/commondir", dir);
	ok = ok && lstat(path, &sb) == -1;
	free(path);
	xasprintf(&path, "%s/objects", dir);
	ok = ok && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
	free(path);
	xasprintf(&path, "%s/refs", dir);
	ok = ok && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
	free(path);
	return (ok);
}

/* 1 if dir may be a bare repository git would take (HEAD, objects). */
static int
cls_git_bare(const char *dir)
{
	struct stat	 sb;
	char		*path;
	int		 maybe;

	xasprintf(&path, "%s/HEAD", dir[0] != '\0' ? dir : "");
	maybe = lstat(path, &sb) == 0;
	free(path);
	if (!maybe)
		return (0);
	xasprintf(&path, "%s/objects", dir);
	maybe = lstat(path, &sb) == 0;
	free(path);
	xasprintf(&path, "%s/commondir", dir);
	maybe = maybe || lstat(path, &sb) == 0;
	free(path);
	return (maybe);
}

/*
 * A .git file: "gitdir: <path>" (relative to the directory holding it);
 * the git dir it names is looked at. 0, or -1 with s->why set.
 */
static int
cls_git_file(struct cls_git_scan *s, const char *dir, const char *dotgit)
{
	char	*text, *gitdir;
	size_t	 len;
	int	 rc;

	if ((rc = cls_git_slurp(s, dotgit, PATH_MAX, &text, &len)) != 0)
		return (rc == 1 ? cls_git_found(s, "its .git cannot be "
		    "read") : -1);
	while (len > 0 && cls_git_space((unsigned char)text[len - 1]))
		text[--len] = '\0';
	if (strncmp(text, "gitdir: ", 8) != 0 || len == 8 ||
	    strlen(text) != len) {
		free(text);
		return (cls_git_found(s, "its .git file cannot be read as git "
		    "reads it"));
	}
	if (text[8] == '/')
		gitdir = xstrdup(text + 8);
	else
		xasprintf(&gitdir, "%s/%s", dir, text + 8);
	free(text);
	rc = cls_git_repo(s, gitdir);
	free(gitdir);
	return (rc);
}

/*
 * Walks up from dir as git does to find its repository: a .git directory
 * (one that is not a git dir is passed over, by git too), a .git file
 * naming the git dir, or a bare repository. Every candidate passed on
 * the way is looked at too. 0, or -1 with s->why set.
 */
static int
cls_git_find(struct cls_git_scan *s, const char *dir)
{
	struct stat	 sb;
	char		*d, *path, *slash;
	int		 up, rc = 0, done = 0;

	d = xstrdup(dir);
	if (strcmp(d, "/") == 0)
		d[0] = '\0';		/* the root is "" + "/.git" */
	for (up = 0; rc == 0 && !done; up++) {
		if (up == CLS_GIT_UP_MAX) {
			rc = cls_git_found(s, "it runs too deep to find its "
			    "repository");
			break;
		}
		xasprintf(&path, "%s/.git", d);
		if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
			rc = cls_git_file(s, d[0] != '\0' ? d : "/", path);
			done = 1;
		} else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			rc = cls_git_repo(s, path);
			done = cls_git_valid(path);
		} else if (stat(path, &sb) == 0 || (errno != ENOENT &&
		    errno != ENOTDIR))
			rc = cls_git_found(s, "its .git cannot be read");
		free(path);
		if (rc == 0 && !done && cls_git_bare(d)) {
			rc = cls_git_repo(s, d[0] != '\0' ? d : "/");
			done = cls_git_valid(d[0] != '\0' ? d : "/");
		}
		if (d[0] == '\0')
			break;
		if ((slash = strrchr(d, '/')) == NULL)
			break;
		*slash = '\0';
	}
	free(d);
	return (rc);
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

/* git: global options, then the subcommand, then the repository. */
void
cls_git(struct cls_ctx *ctx, const struct cls_words *ws, struct cls_res *r)
{
	struct cls_words	 sub = *ws;
	struct cls_git_scan	 s;
	char			*dir = ws->cwd != NULL ? xstrdup(ws->cwd) : NULL;
	size_t			 i;

	if ((i = cls_git_globals(ctx, ws, r, &dir)) == 0) {
		free(dir);
		return;
	}
	cls_shift(&sub, i);
	if (cls_git_runs(&sub, r) || r->risk >= CLS_UNKNOWN) {
		free(dir);
		return;
	}
	cls_git_sub(&sub, r);
	/* Without a workspace nor a cwd there is no disk to read. */
	if (r->risk < CLS_UNKNOWN && (dir != NULL ||
	    ctx->p->workspace != NULL) && !cls_in(sub.w[0],
	    (const char *const[]){ "clone", "init", "--version", "version",
	    NULL })) {
		memset(&s, 0, sizeof s);
		s.p = ctx->p;
		s.sub = sub.w[0];
		s.ro = r->risk == CLS_READ_ONLY;
		if (dir == NULL)
			cls_git_found(&s, "the directory it runs in is not "
			    "known");
		else
			cls_git_find(&s, dir);
		if (s.why[0] != '\0')
			cls_raise(r, CLS_UNKNOWN, "unknown:git-config",
			    "git %s in this repository: %s", sub.w[0], s.why);
	}
	free(dir);
}
