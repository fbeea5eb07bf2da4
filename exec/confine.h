#ifndef EXECQ_CONFINE_H
#define EXECQ_CONFINE_H

/*
 * The boundary the kernel enforces around every command: no privileges
 * (no_new_privs, every capability dropped, or another user), Landlock
 * (writes only in the workspace, the command's own tmp and a few devices;
 * reads only in read_paths; TCP only with network; signals and abstract
 * sockets scoped to the command's own tree), seccomp (no namespaces,
 * mounts, ptrace, io_uring, TIOCSTI, bpf...; no sockets but AF_UNIX
 * without network), and a mount and a network namespace made once at
 * start-up that every command joins: a root of its own that holds only
 * the read paths, the workspace, fresh /dev and /proc and empty /tmp,
 * /var/tmp, /run and /dev/shm (no unix socket of the host elsewhere,
 * whenever made), /proc shows a command only its own tree, the hidden
 * paths (log directory, config file, Redis socket, secrets, unix
 * sockets found at start-up in the read paths) are left out, and there
 * is no route to any host or local service.
 *
 * What can be prepared once is (the namespaces, the seccomp programs, the
 * fds of the paths); per command the parent builds one Landlock ruleset
 * (its tmp and its PTY differ) and the child only applies (spawn.h).
 */

#include <sys/types.h>

#include <stdio.h>

struct confine;
struct spawn_confine;

enum confine_mode {
	CONFINE_AUTO = 0,	/* every layer the kernel has; see confine_full */
	CONFINE_REQUIRED,	/* refuse to start without every layer */
	CONFINE_OFF,
};

struct confine_config {
	enum confine_mode	 mode;
	const char		*workspace;	/* realpath'd */
	const char		*tmp_dir;	/* absolute; per-command dirs */
	const char *const	*read_paths;	/* NULL-terminated; missing ok */
	const char *const	*hide;		/* not in the commands' view:
						   files, dirs or sockets;
						   NULL-terminated; copied */
	int			 run_as;	/* 1: setresuid/gid to uid/gid */
	uid_t			 uid;
	gid_t			 gid;
};

/* One layer of the boundary, as the start-up self-check reports it. */
struct confine_layer {
	const char	*name;		/* "landlock", "seccomp", ... */
	int		 ok;
	char		 detail[160];	/* what is on, or why not */
};

#define CONFINE_NLAYERS	4	/* landlock, seccomp, namespaces, privileges */

/*
 * Probes the kernel and prepares what every command shares; as root it
 * also empties the calling process's capability bounding set (it limits
 * only what an exec gains: the caller must never exec anything but
 * confined commands, which then inherit it empty). Never NULL
 * unless the mode is off (then NULL and *cause NULL) or something that
 * must work failed (NULL, allocated *cause). A layer the kernel lacks is
 * reported by confine_layers() and left out.
 */
struct confine	*confine_create(const struct confine_config *, char **cause);
/* Closes the namespaces and frees the programs. NULL ok. */
void		 confine_free(struct confine *);
/* The layers, CONFINE_NLAYERS of them; borrowed. */
const struct confine_layer *confine_layers(const struct confine *);
/* 1 if every layer of this module is on. */
int		 confine_full(const struct confine *);
/* The Landlock ABI in use (0: none). */
int		 confine_landlock_abi(const struct confine *);
int		 confine_has_seccomp(const struct confine *);
int		 confine_has_namespaces(const struct confine *);

/*
 * For one command: makes its tmp dir <tmp_dir>/<id> (its TMPDIR and HOME;
 * with the namespace layer <tmp_dir> is a tmpfs only commands see)
 * and fills *sc with what the child applies: the Landlock ruleset (the
 * workspace, the tmp, read_paths, the devices, and pty_fd's terminal
 * when pty_fd != -1, and grant, a file a human approved, as
 * confine_grant_record recorded it: resolved again, never through a
 * symlink, it must be what it was then, and its fd gets the rule; a
 * file that was not there is made empty in the directory that was
 * checked), the namespaces (the network one only without network), the
 * seccomp program. proxy_port (0: none), without network: the command
 * stays in the empty network namespace with inet sockets allowed, and
 * may connect to that TCP port on its loopback only (Landlock ABI 4):
 * the worker's proxy. *tmp gets the allocated tmp path. First, with the
 * namespace layer, the host's unix sockets bound since the commands'
 * root was built (or deeper than its scan) that the root has are masked
 * there (/proc/net/unix: absolute names), for this and later commands.
 * 0, or -1 with an allocated *cause (nothing left behind but a grant's
 * file made empty, or a socket's mask).
 */
int		 confine_prepare(struct confine *, const char *id, int network,
		    int proxy_port, int pty_fd, const char *grant,
		    struct spawn_confine *sc, char **tmp, char **cause);
/* The commands' network namespace, -1 without the namespace layer. */
int		 confine_netns_fd(const struct confine *);
/*
 * What a grant of path (absolute) would open, as it is now: resolved one
 * component at a time from the workspace (a path in it) or /, no symlink
 * followed (openat2, or an O_PATH|O_NOFOLLOW walk where there is none);
 * the identity of the regular file there, or of the directory it would
 * be made in, or why it cannot be granted (a symlink on the way, a
 * directory, not a regular file). An allocated record for
 * confine_prepare's grant: "<errno>:<made>:<st_dev>:<st_ino>:<path>".
 */
char		*confine_grant_record(struct confine *, const char *path);
/* After the spawn: closes what the child needed (the ruleset). */
void		 confine_spawned(struct spawn_confine *);
/*
 * Removes everything in a command's tmp dir, and the dir; one of the
 * dirs kept for reuse (confine_prepare) is kept, emptied, when reuse
 * says nothing of the command can still write there (its cgroup is
 * empty), else removed too. NULL ok.
 */
void		 confine_release_tmp(struct confine *, const char *tmp,
		    int reuse);
/* The same, reuse 1: the caller knows the command is gone. */
void		 confine_remove_tmp(struct confine *, const char *tmp);
/*
 * A running session's tmp goes on without this worker (worker/holder.h):
 * its slot, if it had one, forgets it; nothing is removed. NULL ok.
 */
void		 confine_keep_tmp(struct confine *, const char *tmp);

#endif
