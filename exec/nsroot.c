/*
 * The root of the commands' mount namespace, built by the namespace
 * helper (exec/confine.c) in its own private namespace: see nsroot.h.
 */

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/cmdenv.h"
#include "exec/mountinfo.h"
#include "exec/nsroot.h"
#include "logs/xmalloc.h"

/*
 * Masks one path in the namespace: an empty read-only tmpfs over a
 * directory, /dev/null over anything else (a socket then refuses every
 * connection). Runs in the namespace helper; 1 if masked, 0 if there
 * is no such path, or -errno.
 */
static int
nsroot_mask(const char *path)
{
	struct stat	st;

	if (stat(path, &st) == -1)
		return (errno == ENOENT ? 0 : -errno);
	if (S_ISDIR(st.st_mode)) {
		if (mount("execq-masked", path, "tmpfs",
		    MS_RDONLY|MS_NOSUID|MS_NODEV|MS_NOEXEC, "size=4k,mode=0555")
		    == -1)
			return (-errno);
		return (1);
	}
	if (mount("/dev/null", path, "none", MS_BIND, NULL) == -1)
		return (-errno);
	return (1);
}

/*
 * Masks path's first component below the workspace: a mount point cannot
 * be renamed, but its parent could be, and the worker would then write
 * its logs where the command can reach them. 1, 0 or -errno as
 * nsroot_mask.
 */
static int
nsroot_mask_top(const char *ws, const char *path)
{
	char	top[PATH_MAX];
	size_t	len = strlen(ws), n;

	while (len > 0 && ws[len - 1] == '/')
		len--;
	if (path[len] != '/' || path[len + 1] == '\0')
		return (nsroot_mask(path));
	n = len + 1 + strcspn(path + len + 1, "/");
	if (n >= sizeof top)
		return (-ENAMETOOLONG);
	memcpy(top, path, n);
	top[n] = '\0';
	return (nsroot_mask(top));
}

/*
 * Where the namespace helper builds the commands' root: a tmpfs of its
 * own at /new, the host's root at /old, both in a tmpfs it pivots into
 * first (so no path of the host is covered while it binds).
 */
#define NSROOT_NEW	"/new"
#define NSROOT_OLD	"/old"

/*
 * Made anew, empty and read-only, in the commands' root; never bound from
 * the host: a socket anyone makes there, whenever, is in no command's
 * world. /dev and /proc are made anew too.
 */
static const char *const nsroot_fresh[] = {
	"/tmp", "/var/tmp", "/run", "/dev/shm", NULL
};

/* The devices the commands' /dev holds, bound one by one from the host. */
static const char *const nsroot_dev_nodes[] = {
	"null", "zero", "full", "random", "urandom", "tty", NULL
};

/* The links of a usual /dev. */
static const char *const nsroot_dev_links[][2] = {
	{ "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" },
	{ "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
	{ "ptmx", "pts/ptmx" },
};

/*
 * What the helper leaves out of the commands' root: the hidden paths as
 * the host resolves them, and the unix sockets found in the trees it
 * binds.
 */
struct nsroot_hidden {
	char		**paths;
	size_t		  n;
	unsigned	  left_out;	/* found and left out */
};

static void
nsroot_hidden_add(struct nsroot_hidden *h, const char *path)
{
	h->paths = xreallocarray(h->paths, h->n + 1, sizeof *h->paths);
	h->paths[h->n++] = xstrdup(path);
}

/* 1 if path is hidden, or inside what is. */
static int
nsroot_hidden_is(const struct nsroot_hidden *h, const char *path)
{
	size_t	i;

	for (i = 0; i < h->n; i++)
		if (cmdenv_inside(h->paths[i], path))
			return (1);
	return (0);
}

/* 1 if something hidden is strictly below path. */
static int
nsroot_hidden_below(const struct nsroot_hidden *h, const char *path)
{
	size_t	i;

	for (i = 0; i < h->n; i++)
		if (strcmp(h->paths[i], path) != 0 &&
		    cmdenv_inside(path, h->paths[i]))
			return (1);
	return (0);
}

/*
 * Every unix socket under path (as the commands see it, read from the
 * host's root at /old), depth levels down, hidden: the local services
 * whose sockets were there at start-up (Redis, Docker, D-Bus...).
 */
static void
nsroot_find_sockets(struct nsroot_hidden *h, const char *path, int depth)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	char		 from[PATH_MAX], sub[PATH_MAX];

	if (depth < 0 || snprintf(from, sizeof from, NSROOT_OLD "%s", path) >=
	    (int)sizeof from || (d = opendir(from)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) >=
		    (int)sizeof sub)
			continue;
		if (de->d_type == DT_UNKNOWN && snprintf(from, sizeof from,
		    NSROOT_OLD "%s", sub) < (int)sizeof from &&
		    lstat(from, &st) == 0)
			de->d_type = S_ISSOCK(st.st_mode) ? DT_SOCK :
			    S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		if (de->d_type == DT_SOCK)
			nsroot_hidden_add(h, sub);
		else if (de->d_type == DT_DIR)
			nsroot_find_sockets(h, sub, depth - 1);
	}
	closedir(d);
}

/* base and path joined in buf. 0 or -ENAMETOOLONG. */
static int
nsroot_at(char *buf, size_t len, const char *base, const char *path)
{
	return (snprintf(buf, len, "%s%s", base, path) >= (int)len ?
	    -ENAMETOOLONG : 0);
}

/* mkdir -p, 0755. 0 or -errno. */
static int
nsroot_mkdirs(const char *path)
{
	char	buf[PATH_MAX], *p, c;

	if (strlen(path) >= sizeof buf)
		return (-ENAMETOOLONG);
	strcpy(buf, path);
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (p[-1] != '/' && mkdir(buf, 0755) == -1 && errno != EEXIST)
			return (-errno);
		*p = c;
		if (c == '\0')
			return (0);
	}
}

/* The directory of path (a copy in buf). */
static void
nsroot_dirname(const char *path, char *buf, size_t len)
{
	const char	*slash = strrchr(path, '/');
	size_t		 n = slash != NULL ? (size_t)(slash - path) : 0;

	if (n >= len)
		n = len - 1;
	memcpy(buf, path, n);
	buf[n] = '\0';
}

/*
 * from (under /old) at to (under /new): a directory or a file bound,
 * with what is mounted below it (read-only later), a symbolic link made
 * again; a socket, a FIFO, what is missing left out. 0 or -errno.
 */
static int
nsroot_bind(const char *from, const char *to)
{
	struct stat	st;
	char		buf[PATH_MAX];
	ssize_t		n;
	int		fd, err;

	if (lstat(from, &st) == -1)
		return (errno == ENOENT ? 0 : -errno);
	if (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode))
		return (0);
	nsroot_dirname(to, buf, sizeof buf);
	if ((err = nsroot_mkdirs(buf)) != 0)
		return (err);
	if (S_ISLNK(st.st_mode)) {
		if ((n = readlink(from, buf, sizeof buf - 1)) == -1)
			return (-errno);
		buf[n] = '\0';
		if (symlink(buf, to) == -1 && errno != EEXIST)
			return (-errno);
		return (0);
	}
	if (S_ISDIR(st.st_mode)) {
		if (mkdir(to, 0755) == -1 && errno != EEXIST)
			return (-errno);
	} else if (lstat(to, &st) == 0)
		return (0);	/* there already (a device listed twice) */
	else if ((fd = open(to, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC,
	    0600)) == -1)
		return (-errno);
	else
		close(fd);
	if (mount(from, to, "none", MS_BIND|MS_REC, NULL) == -1)
		return (-errno);
	return (0);
}

/*
 * path, a directory with something hidden below it, as a directory of
 * the root's tmpfs that holds every entry of the host's but the hidden
 * ones, each bound (or a link made again); the directories on the way
 * to a hidden path the same, down to it. Nothing is masked, so nothing
 * the host does to a hidden file (a rename over it, as a password
 * change does) brings it back; the price: an entry the host replaces
 * or adds here later is seen as it was, or not at all, until the worker
 * starts again. 0 or -errno.
 */
static int
nsroot_skeleton(struct nsroot_hidden *h, const char *path)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	char		 from[PATH_MAX], to[PATH_MAX], sub[PATH_MAX];
	int		 err;

	if ((err = nsroot_at(from, sizeof from, NSROOT_OLD, path)) != 0)
		return (err);
	if ((err = nsroot_at(to, sizeof to, NSROOT_NEW, path)) != 0)
		return (err);
	if ((err = nsroot_mkdirs(to)) != 0)
		return (err);
	if (stat(from, &st) == 0)
		chmod(to, st.st_mode & 0777);
	if ((d = opendir(from)) == NULL)
		return (errno == ENOENT ? 0 : -errno);
	while (err == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    snprintf(sub, sizeof sub, "%s/%s", strcmp(path, "/") == 0 ?
		    "" : path, de->d_name) >= (int)sizeof sub)
			continue;
		if (nsroot_hidden_is(h, sub)) {
			h->left_out++;
			continue;
		}
		if (snprintf(from, sizeof from, NSROOT_OLD "%s", sub) >=
		    (int)sizeof from || snprintf(to, sizeof to, NSROOT_NEW
		    "%s", sub) >= (int)sizeof to)
			continue;
		if (lstat(from, &st) == 0 && S_ISDIR(st.st_mode) &&
		    nsroot_hidden_below(h, sub))
			err = nsroot_skeleton(h, sub);
		else
			err = nsroot_bind(from, to);
	}
	closedir(d);
	return (err);
}

/* One read path in the commands' root, its hidden paths left out. */
static int
nsroot_ns_read(struct nsroot_hidden *h, const char *path)
{
	struct stat	st;
	char		from[PATH_MAX], to[PATH_MAX];

	if (nsroot_hidden_is(h, path)) {
		h->left_out++;
		return (0);
	}
	if (snprintf(from, sizeof from, NSROOT_OLD "%s", path) >=
	    (int)sizeof from || snprintf(to, sizeof to, NSROOT_NEW "%s",
	    path) >= (int)sizeof to)
		return (-ENAMETOOLONG);
	if (lstat(from, &st) == -1)
		return (0);		/* missing: skipped */
	if (S_ISDIR(st.st_mode) && strcmp(path, "/sys") != 0)
		nsroot_find_sockets(h, path, 3);
	if (S_ISDIR(st.st_mode) && nsroot_hidden_below(h, path))
		return (nsroot_skeleton(h, path));
	return (nsroot_bind(from, to));
}

/* 1 if path is or is below one of nsroot_fresh, /dev or /proc. */
static int
nsroot_is_fresh(const char *path)
{
	const char *const	*f;

	for (f = nsroot_fresh; *f != NULL; f++)
		if (cmdenv_inside(*f, path))
			return (1);
	return (cmdenv_inside("/dev", path) || cmdenv_inside("/proc", path));
}

/* 1 if path is one of nsroot_fresh, /dev or /proc. */
static int
nsroot_is_fresh_top(const char *path)
{
	const char *const	*f;

	for (f = nsroot_fresh; *f != NULL; f++)
		if (strcmp(*f, path) == 0)
			return (1);
	return (strcmp(path, "/dev") == 0 || strcmp(path, "/proc") == 0);
}

/*
 * The read paths, those below a fresh directory (fresh 1: bound over
 * it, an admin's choice) or not; each once, inside another one skipped.
 */
static int
nsroot_ns_reads(const struct nsroot_config *c, struct nsroot_hidden *h,
    int fresh)
{
	const char *const	*p, *const *q;
	int			 err = 0, inner;

	for (p = c->read_paths; err == 0 && p != NULL && *p != NULL;
	    p++) {
		if (nsroot_is_fresh_top(*p) || cmdenv_inside("/proc", *p) ||
		    nsroot_is_fresh(*p) != fresh)
			continue;
		for (q = c->read_paths, inner = 0; *q != NULL; q++)
			if (strcmp(*q, *p) != 0 && cmdenv_inside(*q, *p) &&
			    !nsroot_is_fresh_top(*q))
				inner = 1;
		if (!inner)
			err = nsroot_ns_read(h, *p);
	}
	return (err);
}

/* A new tmpfs at path (made). 0 or -errno. */
static int
nsroot_tmpfs(const char *path, const char *name, unsigned long flags,
    const char *opts)
{
	int	err;

	if ((err = nsroot_mkdirs(path)) != 0)
		return (err);
	if (mount(name, path, "tmpfs", flags, opts) == -1)
		return (-errno);
	return (0);
}

/* /dev, /proc and the empty fresh directories. 0 or -errno. */
static int
nsroot_ns_fresh(void)
{
	const char *const	*f;
	struct stat		 st;
	char			 from[PATH_MAX], to[PATH_MAX];
	size_t			 i;
	int			 err;

	if ((err = nsroot_tmpfs(NSROOT_NEW "/dev", "execq-dev",
	    MS_NOSUID|MS_NOEXEC, "mode=0755,size=64k")) != 0)
		return (err);
	for (i = 0; nsroot_dev_nodes[i] != NULL; i++) {
		snprintf(from, sizeof from, NSROOT_OLD "/dev/%s",
		    nsroot_dev_nodes[i]);
		snprintf(to, sizeof to, NSROOT_NEW "/dev/%s",
		    nsroot_dev_nodes[i]);
		if ((err = nsroot_bind(from, to)) != 0)
			return (err);
	}
	/* The PTYs the worker opens for sessions are the host's. */
	if ((err = nsroot_bind(NSROOT_OLD "/dev/pts",
	    NSROOT_NEW "/dev/pts")) != 0)
		return (err);
	for (i = 0; i < sizeof nsroot_dev_links / sizeof
	    nsroot_dev_links[0]; i++) {
		snprintf(to, sizeof to, NSROOT_NEW "/dev/%s",
		    nsroot_dev_links[i][0]);
		if (symlink(nsroot_dev_links[i][1], to) == -1)
			return (-errno);
	}
	for (f = nsroot_fresh; *f != NULL; f++) {
		snprintf(to, sizeof to, NSROOT_NEW "%s", *f);
		/* A link of a bound tree (/var/tmp in /var) stays one. */
		if (lstat(to, &st) == 0 && S_ISLNK(st.st_mode))
			continue;
		if ((err = nsroot_tmpfs(to, "execq-empty",
		    MS_NOSUID|MS_NODEV|MS_NOEXEC, "mode=0755,size=64k")) != 0)
			return (err);
	}
	if (lstat(NSROOT_NEW "/var/run", &st) == -1 &&
	    symlink("../run", NSROOT_NEW "/var/run") == -1)
		return (-errno);
	/*
	 * A process is listed only if the reader may ptrace it, which
	 * Landlock refuses across domains. "ptraceable" (5.8) ignores the
	 * gid= exemption that hidepid=2 grants gid 0, our commands' group.
	 */
	if ((err = nsroot_mkdirs(NSROOT_NEW "/proc")) != 0)
		return (err);
	if (mount("proc", NSROOT_NEW "/proc", "proc",
	    MS_NOSUID|MS_NODEV|MS_NOEXEC|MS_RDONLY, "hidepid=ptraceable") == -1)
		return (-errno);
	return (0);
}

/*
 * What name resolution needs of the fresh directories: /etc/resolv.conf
 * is often a link into /run (systemd-resolved): its target, the file
 * alone (not the directory, which holds resolved's socket).
 */
static int
nsroot_ns_resolv(void)
{
	char	link[PATH_MAX], path[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	ssize_t	n;
	int	err;

	n = readlink(NSROOT_OLD "/etc/resolv.conf", link, sizeof link - 1);
	if (n <= 0)
		return (0);
	link[n] = '\0';
	/* "../run/...", "/run/..." or "name" (in /etc). */
	if (snprintf(path, sizeof path, "%s%s", link[0] == '/' ? "" :
	    strncmp(link, "../", 3) == 0 ? "/" : "/etc/", link[0] == '/' ?
	    link : strncmp(link, "../", 3) == 0 ? link + 3 : link) >=
	    (int)sizeof path || strstr(path, "/..") != NULL ||
	    !nsroot_is_fresh(path))
		return (0);
	if ((err = nsroot_at(from, sizeof from, NSROOT_OLD, path)) != 0)
		return (err);
	if ((err = nsroot_at(to, sizeof to, NSROOT_NEW, path)) != 0)
		return (err);
	return (nsroot_bind(from, to));
}

/*
 * The commands' root, made and entered: a tmpfs holding the read paths
 * (bound from the host, the hidden paths left out), a fresh /dev and
 * /proc, empty /tmp, /var/tmp, /run and /dev/shm, the workspace at its
 * path and the tmp root's mount point. What is not there cannot be
 * reached, whatever Landlock covers: no unix socket of the host outside
 * those, made before or after. 0 or -errno.
 */
static int
nsroot_ns_root(const struct nsroot_config *c, struct nsroot_hidden *h)
{
	char	from[PATH_MAX], to[PATH_MAX];
	int	err;

	/* A staging tmpfs over the tmp dir, entered: the host at /old. */
	if ((err = nsroot_tmpfs(c->tmp_dir, "execq-stage", MS_NOSUID|MS_NODEV,
	    "mode=0700,size=64k")) != 0)
		return (err);
	if (chdir(c->tmp_dir) == -1 || mkdir("." NSROOT_OLD, 0700) == -1 ||
	    syscall(SYS_pivot_root, ".", "." NSROOT_OLD) == -1 ||
	    chdir("/") == -1)
		return (-errno);
	if ((err = nsroot_tmpfs(NSROOT_NEW, "execq-root", MS_NOSUID|MS_NODEV,
	    "mode=0755,size=1m")) != 0 ||
	    (err = nsroot_ns_reads(c, h, 0)) != 0 ||
	    (err = nsroot_ns_fresh()) != 0 ||
	    (err = nsroot_ns_reads(c, h, 1)) != 0 ||
	    (err = nsroot_ns_resolv()) != 0)
		return (err);
	if ((err = nsroot_at(from, sizeof from, NSROOT_OLD, c->workspace)) != 0)
		return (err);
	if ((err = nsroot_at(to, sizeof to, NSROOT_NEW, c->workspace)) != 0)
		return (err);
	if ((err = nsroot_bind(from, to)) != 0)
		return (err);
	if ((err = nsroot_at(to, sizeof to, NSROOT_NEW, c->tmp_dir)) != 0)
		return (err);
	if ((err = nsroot_mkdirs(to)) != 0)
		return (err);
	/* In, and the staging root with the host's under it gone. */
	if (chdir(NSROOT_NEW) == -1 ||
	    syscall(SYS_pivot_root, ".", ".") == -1 ||
	    umount2(".", MNT_DETACH) == -1 || chdir("/") == -1)
		return (-errno);
	return (0);
}

/* The per-mount flags of a mountinfo options field, for a remount. */
static unsigned long
nsroot_mount_flags(const char *opts)
{
	static const struct {
		const char	*name;
		unsigned long	 flag;
	} names[] = {
		{ "nosuid", MS_NOSUID }, { "nodev", MS_NODEV },
		{ "noexec", MS_NOEXEC }, { "noatime", MS_NOATIME },
		{ "nodiratime", MS_NODIRATIME }, { "relatime", MS_RELATIME },
	};
	unsigned long	flags = 0;
	size_t		i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (mountinfo_has_opt(opts, names[i].name))
			flags |= names[i].flag;
	return (flags);
}

/*
 * Every mount read-only, its other flags kept: Landlock decides who may
 * write, but not who may chmod or touch the times of a file it owns, and
 * the commands' uid 0 owns the system. 0 or -errno.
 */
static int
nsroot_ns_readonly(void)
{
	struct mountinfo		 mi;
	const struct mountinfo_entry	*e;
	int				 err = 0;

	if (mountinfo_open(&mi, NULL) == -1)
		return (-errno);
	while ((e = mountinfo_next(&mi)) != NULL)
		if (mount("none", e->mount_point, "none", MS_REMOUNT|MS_BIND|
		    MS_RDONLY|nsroot_mount_flags(e->opts), NULL) == -1 &&
		    strcmp(e->mount_point, "/") == 0)
			err = -errno;	/* others may be gone or special */
	mountinfo_close(&mi);
	return (err);
}

/* path (a directory) writable again, for set-uid-less files. 0 or -errno. */
static int
nsroot_ns_writable(const char *path)
{
	if (mount(path, path, "none", MS_BIND|MS_REC, NULL) == -1 ||
	    mount("none", path, "none", MS_REMOUNT|MS_BIND|MS_NOSUID|MS_NODEV,
	    NULL) == -1)
		return (-errno);
	return (0);
}


int
nsroot_build(const struct nsroot_config *c, unsigned *left_out)
{
	struct nsroot_hidden	 h;
	size_t			 i;
	unsigned		 n;
	int			 err, rc;

	memset(&h, 0, sizeof h);
	for (i = 0; c->hidden != NULL && c->hidden[i] != NULL; i++)
		nsroot_hidden_add(&h, c->hidden[i]);
	err = nsroot_ns_root(c, &h);
	/* Read-only everywhere but the workspace and the tmp root. */
	if (err == 0)
		err = nsroot_ns_readonly();
	if (err == 0)
		err = nsroot_ns_writable(c->workspace);
	/*
	 * The tmp root is a tmpfs of the namespace's own: a command's tmp
	 * costs a few microseconds to make and remove (ext4: 100), its
	 * pages count against the command's memory limit, and the host
	 * never sees it.
	 */
	if (err == 0 && mount("execq-tmp", c->tmp_dir, "tmpfs",
	    MS_NOSUID|MS_NODEV, "mode=0711,size=50%") == -1)
		err = -errno;
	n = h.left_out;
	for (i = 0; err == 0 && c->hidden != NULL && c->hidden[i] != NULL;
	    i++) {
		if (!cmdenv_inside(c->workspace, c->hidden[i]))
			continue;
		if ((rc = nsroot_mask_top(c->workspace, c->hidden[i])) < 0)
			err = rc;
		else
			n += rc;
	}
	for (i = 0; i < h.n; i++)
		free(h.paths[i]);
	free(h.paths);
	*left_out = n;
	return (err);
}
