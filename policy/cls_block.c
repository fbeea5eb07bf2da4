/*
 * The classifier's catastrophes: commands refused whatever the tier.
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

/* ---- the built-in blocked checks --------------------------------------- */

/* A target of rm/chmod/mv that is catastrophic: blocked. */
int
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

/* 1 if an absolute path is a system directory or inside one. */
static int
cls_block_sysdir(const char *path)
{
	static const char *const dirs[] = { "/bin/", "/boot/", "/dev/",
	    "/etc/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/opt/",
	    "/proc/", "/root/", "/sbin/", "/sys/", "/usr/", "/var/", NULL };
	char	*n;
	size_t	 i;
	int	 hit;

	if (path[0] != '/')
		return (0);
	n = cls_norm(path);
	hit = cls_in(n, (const char *const[]){ "/", "/bin", "/boot", "/dev",
	    "/etc",
	    "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc", "/root",
	    "/sbin", "/sys", "/usr", "/var", "/usr/bin", "/usr/sbin",
	    "/usr/lib", "/usr/local", "/usr/local/bin", "/usr/share",
	    "/var/lib", NULL });
	free(n);
	if (hit)
		return (1);
	for (i = 0; dirs[i] != NULL; i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			return (1);
	return (0);
}

/*
 * mv: moving the root, a system directory or a home is catastrophic;
 * moving files into a system directory is destructive (it may replace
 * a program), not blocked. The destination is -t DIR, or the last operand.
 */
static int
cls_block_mv(const struct cls_words *ws, struct cls_res *r)
{
	const char	*dest = NULL, *why;
	char		*abs;
	size_t		 i, last = 0, ops = 0;
	int		 opts = 1, replace = 0;

	for (i = 1; i < ws->n; i++) {
		if (opts && strcmp(ws->w[i], "--") == 0)
			opts = 0;
		else if (opts && (strcmp(ws->w[i], "-t") == 0 ||
		    cls_opt_match(ws->w[i], "--target-directory")) &&
		    strchr(ws->w[i], '=') == NULL && i + 1 < ws->n)
			dest = ws->w[++i];
		else if (opts && strncmp(ws->w[i], "--target-directory=",
		    19) == 0)
			dest = ws->w[i] + 19;
		else if (opts && strncmp(ws->w[i], "-t", 2) == 0)
			dest = ws->w[i] + 2;
		else if (opts && (strcmp(ws->w[i], "-T") == 0 ||
		    cls_opt_match(ws->w[i], "--no-target-directory")))
			replace = 1;
		else if (!opts || !cls_is_opt(ws->w[i])) {
			last = i;
			ops++;
		}
	}
	if (dest == NULL && ops >= 2)
		dest = ws->w[last];
	for (i = 1; i < ws->n; i++) {
		if (ws->w[i] == dest || cls_is_opt(ws->w[i]))
			continue;
		if ((why = cls_root_target(ws->w[i], ws->f[i], ws->cwd)) !=
		    NULL) {
			cls_raise(r, CLS_BLOCKED, "blocked:mv-root", "mv of "
			    "%s: %s", ws->w[i], why);
			return (1);
		}
	}
	if (dest == NULL)
		return (0);
	if (replace && (why = cls_root_target(dest, 0, ws->cwd)) != NULL) {
		cls_raise(r, CLS_BLOCKED, "blocked:mv-root", "mv -T replaces "
		    "%s: %s", dest, why);
		return (1);
	}
	if (dest[0] != '/' && ws->cwd != NULL)
		xasprintf(&abs, "%s/%s", ws->cwd, dest);
	else
		abs = xstrdup(dest);
	if (cls_block_sysdir(abs))
		cls_raise(r, CLS_DESTRUCTIVE, "destructive:mv", "mv moves files "
		    "into the system directory %s", abs);
	free(abs);
	return (0);
}

/* Every catastrophe by name and arguments; 1 if blocked. */
int
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
		return (cls_block_mv(ws, r));
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
