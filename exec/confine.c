/*
 * The kernel-enforced boundary of every command: prepared once here
 * (namespaces, seccomp programs, path fds), one Landlock ruleset built per
 * command (kept with its tmp dir for the next: confine_slot), applied
 * by the child in exec/spawn.c.
 */

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <seccomp.h>

#include "exec/confine.h"
#include "exec/cmdenv.h"
#include "exec/mountinfo.h"
#include "exec/nsroot.h"
#include "exec/rmtree.h"
#include "exec/spawn.h"
#include "logs/execlog.h"
#include "logs/log.h"
#include "logs/xmalloc.h"

/*
 * Landlock's ABI as of ABI 7; Debian 12's headers stop at ABI 2, so the
 * project names what it uses itself.
 */
#define LL_CREATE_RULESET_VERSION	(1U << 0)
/* The network a command has: none, the host's, or the proxy's. */
#define CONFINE_NET_NONE	0
#define CONFINE_NET_HOST	1
#define CONFINE_NET_PROXY	2

#define LL_RULE_PATH_BENEATH		1
#define LL_RULE_NET_PORT		2	/* ABI 4 */

#define LL_FS_ABI1		((1ULL << 13) - 1)	/* EXECUTE .. MAKE_SYM */
#define LL_FS_EXECUTE		(1ULL << 0)
#define LL_FS_WRITE_FILE	(1ULL << 1)
#define LL_FS_READ_FILE		(1ULL << 2)
#define LL_FS_READ_DIR		(1ULL << 3)
#define LL_FS_REFER		(1ULL << 13)	/* ABI 2 */
#define LL_FS_TRUNCATE		(1ULL << 14)	/* ABI 3 */
#define LL_FS_IOCTL_DEV		(1ULL << 15)	/* ABI 5 */
#define LL_NET_BIND_TCP		(1ULL << 0)	/* ABI 4 */
#define LL_NET_CONNECT_TCP	(1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX	(1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL		(1ULL << 1)

/* open_tree's flag (Linux 5.2); <linux/mount.h> clashes with glibc's. */
#define CONFINE_TREE_CLONE	1
#ifndef SYS_open_tree
#define SYS_open_tree		428
#endif

struct ll_ruleset_attr {
	uint64_t	handled_access_fs;
	uint64_t	handled_access_net;
	uint64_t	scoped;
};

struct ll_net_port {
	uint64_t	allowed_access;
	uint64_t	port;
};

struct ll_path_beneath {
	uint64_t	allowed_access;
	int32_t		parent_fd;
} __attribute__((packed));

/*
 * A tmp dir kept for reuse, with its Landlock ruleset: rules hold the
 * inode, not the name, so a command gets a kept dir renamed to its own
 * name (<tmp_dir>/<id>) and the ruleset built for it before, instead of
 * a new dir and 25 system calls of rules. At the end it is renamed back
 * to .slot-<n>, emptied, its mode and times reset; a dir that cannot be
 * made as new (something left that will not go, an extended attribute
 * or ACL) is removed instead, and the slot made anew next time.
 */
struct confine_slot {
	char		*id;		/* the command's using it; NULL: free */
	int		 fd;		/* the dir (O_RDONLY), -1: none made */
	int		 ruleset;	/* -1: none yet */
	int		 network;	/* what the ruleset was built for */
	int		 proxy_port;
};

/* A path a command may use, opened once (O_PATH). */
struct confine_path {
	int		fd;
	int		is_dir;
	uint64_t	access;		/* before masking with the ABI */
};

struct confine {
	struct confine_config	 cfg;
	char			*tmp_dir;
	int			 tmp_fd;	/* tmp_dir as commands see it */
	int			 root_fd, ws_fd;	/* / and the workspace
						   (O_PATH): grants are
						   resolved from them */
	int			 abi;		/* Landlock ABI, 0: none */
	uint64_t		 fs_all;	/* fs rights this ABI handles */
	struct confine_path	*paths;		/* read paths, workspace, devs */
	size_t			 npaths;
	int			 mntns_fd, netns_fd;
	int			 nsroot_fd;	/* the commands' root (O_PATH):
						   grants' mount points */
	char			**hidden;	/* cfg.hide as the host resolves
						   them; NULL-terminated */
	struct sock_fprog	 prog[3];	/* [CONFINE_NET_*] */
	int			 last_cap;
	int			 privs;		/* we have capabilities to drop */
	struct confine_layer	 layers[CONFINE_NLAYERS];
	unsigned long		*socks;		/* /proc/net/unix inodes seen
						   at the last start, sorted */
	size_t			 nsocks;
	struct confine_slot	*slots;		/* tmp dirs kept for reuse */
	size_t			 nslots;
	int			 unix_fd;	/* /proc/net/unix, kept open */
	char			*unix_buf;	/* its text, read at once */
	size_t			 unix_cap;
};

enum {
	CONFINE_L_LANDLOCK = 0,
	CONFINE_L_SECCOMP,
	CONFINE_L_NAMESPACES,
	CONFINE_L_PRIVS,
};

/* Every filesystem right of an ABI. */
static uint64_t
confine_fs_rights(int abi)
{
	uint64_t	all = LL_FS_ABI1;

	if (abi >= 2)
		all |= LL_FS_REFER;
	if (abi >= 3)
		all |= LL_FS_TRUNCATE;
	if (abi >= 5)
		all |= LL_FS_IOCTL_DEV;
	return (all);
}

/* The rights that make sense on a file (not a directory). */
#define CONFINE_FILE_RIGHTS	(LL_FS_EXECUTE|LL_FS_WRITE_FILE| \
				 LL_FS_READ_FILE|LL_FS_TRUNCATE|LL_FS_IOCTL_DEV)
#define CONFINE_READ_RIGHTS	(LL_FS_EXECUTE|LL_FS_READ_FILE|LL_FS_READ_DIR)
#define CONFINE_DEV_RIGHTS	(LL_FS_READ_FILE|LL_FS_WRITE_FILE| \
				 LL_FS_TRUNCATE|LL_FS_IOCTL_DEV)

/* The devices every shell writes to; read ones come with read_paths. */
static const char *const confine_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", NULL
};

/*
 * Adds path with access to c's list, as the commands see it: through
 * root (the namespace helper's /proc/<pid>/root, or "" without one), so
 * /proc is the namespace's own. A missing path is skipped.
 */
static void
confine_add_path(struct confine *c, const char *root, const char *path,
    uint64_t access)
{
	struct confine_path	*p;
	struct stat		 st;
	char			 full[PATH_MAX];
	int			 fd;

	if (snprintf(full, sizeof full, "%s%s", root, path) >=
	    (int)sizeof full || (fd = open(full, O_PATH|O_CLOEXEC)) == -1)
		return;
	if (fstat(fd, &st) == -1) {
		close(fd);
		return;
	}
	c->paths = xreallocarray(c->paths, c->npaths + 1, sizeof *c->paths);
	p = &c->paths[c->npaths++];
	p->fd = fd;
	p->is_dir = S_ISDIR(st.st_mode);
	p->access = access;
}

/* One path_beneath rule; rights that do not apply to a file are left out. */
static int
confine_rule(int ruleset, int fd, int is_dir, uint64_t access, uint64_t all)
{
	struct ll_path_beneath	pb;

	pb.allowed_access = access & all;
	if (!is_dir)
		pb.allowed_access &= CONFINE_FILE_RIGHTS;
	pb.parent_fd = fd;
	if (pb.allowed_access == 0)
		return (0);
	return (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH,
	    &pb, 0) == -1 ? -1 : 0);
}

/* The Landlock layer: the ABI, and the paths every command gets. */
static void
confine_landlock_setup(struct confine *c, const char *root)
{
	struct confine_layer	*l = &c->layers[CONFINE_L_LANDLOCK];
	const char *const	*p;
	long			 abi;

	l->name = "landlock";
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LL_CREATE_RULESET_VERSION);
	if (abi < 1) {
		snprintf(l->detail, sizeof l->detail, "not available: %s",
		    strerror(abi == -1 ? errno : ENOSYS));
		return;
	}
	c->abi = (int)abi;
	c->fs_all = confine_fs_rights(c->abi);
	for (p = c->cfg.read_paths; p != NULL && *p != NULL; p++)
		confine_add_path(c, root, *p, CONFINE_READ_RIGHTS);
	for (p = confine_devices; *p != NULL; p++)
		confine_add_path(c, root, *p, CONFINE_DEV_RIGHTS);
	confine_add_path(c, root, c->cfg.workspace, c->fs_all);
	/*
	 * Below ABI 6 commands that keep uid 0 could signal the worker and
	 * each other: applied, but the layer does not count as whole.
	 */
	l->ok = c->abi >= 6;
	snprintf(l->detail, sizeof l->detail, "ABI %d: writes in the "
	    "workspace and the command's tmp, %zu path rules%s%s",
	    c->abi, c->npaths, c->abi >= 4 ? ", TCP a grant" : "",
	    c->abi >= 6 ? ", signals and abstract sockets scoped" :
	    " (below 6: signals not scoped)");
}

/* Syscalls no command needs, denied with EPERM. */
static const char *const confine_denied[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", "mount",
	"umount2", "pivot_root", "unshare", "setns", "bpf",
	"perf_event_open", "keyctl", "add_key", "request_key", "kexec_load",
	"kexec_file_load", "reboot", "init_module", "finit_module",
	"delete_module", "userfaultfd", "io_uring_setup", "io_uring_enter",
	"io_uring_register", "fsopen", "fsconfig", "fsmount", "fspick",
	"move_mount", "open_tree", "mount_setattr", "swapon", "swapoff",
	"acct", "quotactl", "lookup_dcookie", "name_to_handle_at",
	"open_by_handle_at", "chroot", "vhangup", "syslog",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"personality", "uselib", "nfsservctl", "fanotify_init", "kcmp",
	"pidfd_getfd", "process_madvise", "process_mrelease",
	NULL
};

/* An int argument's bits in a 64-bit seccomp argument. */
#define CONFINE_INT_MASK	0xffffffffULL

/* The namespace flags clone() may not carry. */
static const unsigned long confine_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
	CLONE_NEWNET, CLONE_NEWCGROUP, 0
};

/*
 * Which argument of each call that sets a file's mode carries the mode:
 * a command's uid 0 owns what it makes in the workspace, and a set-uid
 * file there would be root for anyone on the host who runs it.
 */
static const struct {
	const char	*name;
	unsigned	 arg;
} confine_mode_args[] = {
	{ "chmod", 1 }, { "fchmod", 1 }, { "fchmodat", 2 },
	{ "fchmodat2", 2 }, { "open", 2 }, { "openat", 3 }, { "creat", 1 },
	{ "mknod", 1 }, { "mknodat", 2 },
};

/* No set-uid or set-gid bit from any call that sets a mode; 0 or -1. */
static int
confine_seccomp_modes(scmp_filter_ctx ctx)
{
	const unsigned long	 bits[] = { S_ISUID, S_ISGID };
	struct scmp_arg_cmp	 cmp;
	size_t			 i, b;
	int			 nr;

	for (i = 0; i < sizeof confine_mode_args /
	    sizeof confine_mode_args[0]; i++) {
		nr = seccomp_syscall_resolve_name(confine_mode_args[i].name);
		if (nr == __NR_SCMP_ERROR)
			continue;
		for (b = 0; b < 2; b++) {
			cmp.arg = confine_mode_args[i].arg;
			cmp.op = SCMP_CMP_MASKED_EQ;
			cmp.datum_a = bits[b];
			cmp.datum_b = bits[b];
			if (seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM),
			    nr, 1, &cmp) < 0)
				return (-1);
		}
	}
	/* Its mode is in memory the filter cannot read. */
	if ((nr = seccomp_syscall_resolve_name("openat2")) != __NR_SCMP_ERROR &&
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0) < 0)
		return (-1);
	return (0);
}

/*
 * Calls that act on another process by its pid (or process group, or
 * user) with only a uid check or none Landlock makes: its limits (uid 0
 * could cap the worker's CPU time and have the kernel kill it), its
 * priority, scheduling class, CPUs and I/O class (a command could renice
 * another agent's command or put it on SCHED_IDLE), its memory's nodes.
 * Only 0, the caller itself, passes: a command cannot renice its own
 * children either, but `nice -n 5 cmd` sets itself before the exec.
 * Which argument is the pid; the whole 64 bits are compared, so stray
 * high bits only refuse more.
 */
static const struct {
	const char	*name;
	unsigned	 arg;
} confine_self_only[] = {
	{ "prlimit64", 0 }, { "setpriority", 1 }, { "ioprio_set", 1 },
	{ "sched_setscheduler", 0 }, { "sched_setparam", 0 },
	{ "sched_setattr", 0 }, { "sched_setaffinity", 0 },
	{ "migrate_pages", 0 }, { "move_pages", 0 },
};

/* setpriority's PRIO_USER and ioprio_set's IOPRIO_WHO_USER: a whole uid. */
#define CONFINE_PRIO_USER	2
#define CONFINE_IOPRIO_USER	3

/* No call on another process's limits or scheduling; 0 or -1. */
static int
confine_seccomp_others(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp	 cmp;
	size_t			 i;
	int			 nr;
	const int		 deny = SCMP_ACT_ERRNO(EPERM);

	for (i = 0; i < sizeof confine_self_only /
	    sizeof confine_self_only[0]; i++) {
		nr = seccomp_syscall_resolve_name(confine_self_only[i].name);
		if (nr == __NR_SCMP_ERROR)
			continue;
		cmp.arg = confine_self_only[i].arg;
		cmp.op = SCMP_CMP_NE;
		cmp.datum_a = 0;
		cmp.datum_b = 0;
		if (seccomp_rule_add_array(ctx, deny, nr, 1, &cmp) < 0)
			return (-1);
	}
	/* "who" 0 with a user means the caller's uid: all of its processes. */
	if (seccomp_rule_add(ctx, deny, SCMP_SYS(setpriority), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CONFINE_INT_MASK,
	    CONFINE_PRIO_USER)) < 0 ||
	    seccomp_rule_add(ctx, deny, SCMP_SYS(ioprio_set), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CONFINE_INT_MASK,
	    CONFINE_IOPRIO_USER)) < 0)
		return (-1);
	return (confine_seccomp_modes(ctx));
}

/* The filter's rules; 0 or -1. */
/*
 * Through the proxy, a command needs TCP and nothing else of the network:
 * sockets of AF_UNIX, or AF_INET and AF_INET6 streams; no UDP (other
 * commands of the namespace share its loopback), raw or packet socket,
 * no other family. 0 or -1.
 */
static int
confine_seccomp_proxy(scmp_filter_ctx ctx)
{
	static const int	 families[] = { AF_INET, AF_INET6 };
	static const int	 types[] = { SOCK_DGRAM, SOCK_RAW, SOCK_RDM,
	    SOCK_SEQPACKET, SOCK_DCCP, SOCK_PACKET };
	const int		 deny = SCMP_ACT_ERRNO(EPERM);
	size_t			 f, t;
	int			 other;

	/* Families 0 and 3..9 lie between AF_UNIX (1), AF_INET (2) and
	   AF_INET6 (10); every other is above. */
	if (seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1,
	    SCMP_A0(SCMP_CMP_GT, AF_INET6)) < 0 ||
	    seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1,
	    SCMP_A0(SCMP_CMP_EQ, AF_UNSPEC)) < 0)
		return (-1);
	for (other = AF_INET + 1; other < AF_INET6; other++)
		if (seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1,
		    SCMP_A0(SCMP_CMP_EQ, other)) < 0)
			return (-1);
	/* The type's low bits; the high ones are SOCK_NONBLOCK|CLOEXEC. */
	for (f = 0; f < sizeof families / sizeof families[0]; f++)
		for (t = 0; t < sizeof types / sizeof types[0]; t++)
			if (seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 2,
			    SCMP_A0(SCMP_CMP_EQ, families[f]),
			    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, types[t])) < 0)
				return (-1);
	return (0);
}

static int
confine_seccomp_rules(scmp_filter_ctx ctx, int network)
{
	const char *const	*n;
	int			 nr, i;
	const int		 deny = SCMP_ACT_ERRNO(EPERM);

	for (n = confine_denied; *n != NULL; n++) {
		if ((nr = seccomp_syscall_resolve_name(*n)) == __NR_SCMP_ERROR)
			continue;
		if (seccomp_rule_add(ctx, deny, nr, 0) < 0)
			return (-1);
	}
	for (i = 0; confine_ns_flags[i] != 0; i++) {
		if (seccomp_rule_add(ctx, deny, SCMP_SYS(clone), 1,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, confine_ns_flags[i],
		    confine_ns_flags[i])) < 0)
			return (-1);
	}
	/* Its flags are in memory the filter cannot read: libc falls back. */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3),
	    0) < 0)
		return (-1);
	/* The request is an int: compare its low 32 bits only. */
	if (seccomp_rule_add(ctx, deny, SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, CONFINE_INT_MASK, TIOCSTI)) < 0 ||
	    seccomp_rule_add(ctx, deny, SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, CONFINE_INT_MASK, TIOCLINUX)) < 0)
		return (-1);
	if (network == CONFINE_NET_NONE && seccomp_rule_add(ctx, deny,
	    SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX)) < 0)
		return (-1);
	if (network == CONFINE_NET_PROXY && confine_seccomp_proxy(ctx) == -1)
		return (-1);
	return (confine_seccomp_others(ctx));
}

/* Builds one program as BPF in memory; 0 or -1. */
static int
confine_seccomp_build(struct sock_fprog *prog, int network)
{
	scmp_filter_ctx	 ctx;
	off_t		 size;
	int		 fd = -1, rc = -1;
	void		*buf = NULL;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return (-1);
	/*
	 * We set no_new_privs ourselves, in the child. A binary tree, not
	 * a list: the kernel runs the filter once per syscall number when
	 * it is attached (its cache), so its length is paid per command.
	 */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0 ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0 ||
	    confine_seccomp_rules(ctx, network) == -1)
		goto out;
	if ((fd = memfd_create("execq-seccomp", MFD_CLOEXEC)) == -1 ||
	    seccomp_export_bpf(ctx, fd) < 0)
		goto out;
	if ((size = lseek(fd, 0, SEEK_END)) <= 0 ||
	    size % sizeof (struct sock_filter) != 0)
		goto out;
	buf = xmalloc(size);
	if (pread(fd, buf, size, 0) != size)
		goto out;
	prog->len = size / sizeof (struct sock_filter);
	prog->filter = buf;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	if (fd != -1)
		close(fd);
	seccomp_release(ctx);
	return (rc);
}

/* The seccomp layer: two programs, with and without network. */
static void
confine_seccomp_setup(struct confine *c)
{
	struct confine_layer	*l = &c->layers[CONFINE_L_SECCOMP];

	l->name = "seccomp";
	if (prctl(PR_GET_SECCOMP) == -1 && errno == EINVAL) {
		snprintf(l->detail, sizeof l->detail, "not in this kernel");
		return;
	}
	if (confine_seccomp_build(&c->prog[CONFINE_NET_NONE],
	    CONFINE_NET_NONE) == -1 ||
	    confine_seccomp_build(&c->prog[CONFINE_NET_HOST],
	    CONFINE_NET_HOST) == -1 ||
	    confine_seccomp_build(&c->prog[CONFINE_NET_PROXY],
	    CONFINE_NET_PROXY) == -1) {
		snprintf(l->detail, sizeof l->detail, "cannot build the "
		    "filter: %s", strerror(errno));
		return;
	}
	l->ok = 1;
	snprintf(l->detail, sizeof l->detail, "%d denied syscalls, "
	    "namespaces in clone, clone3, TIOCSTI/TIOCLINUX, set-uid/gid "
	    "modes; sockets but AF_UNIX without network",
	    (int)(sizeof confine_denied / sizeof confine_denied[0]) - 1);
}

/*
 * The namespace helper's work: a private mount namespace whose root is
 * made for the commands (exec/nsroot.c) and an empty network namespace.
 * Reports 0 or -errno and the number of paths left out or masked through
 * fd, then waits for fd's peer to close.
 */
static void __attribute__((noreturn))
confine_ns_child(const struct confine *c, int fd)
{
	struct nsroot_config	 nc;
	unsigned		 n = 0;
	int			 err = 0;
	char			 byte;

	memset(&nc, 0, sizeof nc);
	nc.workspace = c->cfg.workspace;
	nc.tmp_dir = c->tmp_dir;
	nc.read_paths = c->cfg.read_paths;
	nc.hidden = (const char *const *)c->hidden;
	if (unshare(CLONE_NEWNS|CLONE_NEWNET) == -1 ||
	    mount("none", "/", "none", MS_REC|MS_PRIVATE, NULL) == -1)
		err = -errno;
	if (err == 0)
		err = nsroot_build(&nc, &n);
	if (write(fd, &err, sizeof err) != sizeof err ||
	    write(fd, &n, sizeof n) != sizeof n)
		_exit(1);
	while (read(fd, &byte, 1) == -1 && errno == EINTR)
		;
	_exit(0);
}

/*
 * The namespace layer, made by a short-lived helper and kept as two fds
 * and its root; while the helper lives, the Landlock layer opens its
 * paths through the helper's root, as the commands will see them.
 */
static void
confine_ns_setup(struct confine *c)
{
	struct confine_layer	*l = &c->layers[CONFINE_L_NAMESPACES];
	char			 path[64], tpath[PATH_MAX + 64];
	unsigned		 n = 0;
	int			 sv[2], err = 0;
	pid_t			 pid;

	l->name = "namespaces";
	if (socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0, sv) == -1)
		goto fail;
	if ((pid = fork()) == -1) {
		close(sv[0]);
		close(sv[1]);
		goto fail;
	}
	if (pid == 0) {
		close(sv[0]);
		confine_ns_child(c, sv[1]);
	}
	close(sv[1]);
	if (read(sv[0], &err, sizeof err) != sizeof err ||
	    read(sv[0], &n, sizeof n) != sizeof n)
		err = -EIO;
	if (err == 0) {
		snprintf(path, sizeof path, "/proc/%ld/ns/mnt", (long)pid);
		c->mntns_fd = open(path, O_RDONLY|O_CLOEXEC);
		snprintf(path, sizeof path, "/proc/%ld/ns/net", (long)pid);
		c->netns_fd = open(path, O_RDONLY|O_CLOEXEC);
		snprintf(path, sizeof path, "/proc/%ld/root", (long)pid);
		c->nsroot_fd = open(path, O_PATH|O_DIRECTORY|O_CLOEXEC);
		if (c->mntns_fd == -1 || c->netns_fd == -1 ||
		    c->nsroot_fd == -1)
			err = -errno;
	}
	if (err == 0) {
		snprintf(path, sizeof path, "/proc/%ld/root", (long)pid);
		confine_landlock_setup(c, path);
		snprintf(tpath, sizeof tpath, "%s%s", path, c->tmp_dir);
		c->tmp_fd = open(tpath, O_RDONLY|O_DIRECTORY|O_CLOEXEC);
	}
	close(sv[0]);		/* the helper exits */
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
	if (err != 0) {
		errno = -err;
		goto fail;
	}
	l->ok = 1;
	snprintf(l->detail, sizeof l->detail, "mount (own root: read paths, "
	    "workspace, empty /tmp /run; %u paths and sockets left out; own "
	    "/proc), network (no route), IPC (per command)", n);
	return;

fail:
	snprintf(l->detail, sizeof l->detail, "cannot make them: %s",
	    strerror(errno));
	if (c->mntns_fd != -1)
		close(c->mntns_fd);
	if (c->netns_fd != -1)
		close(c->netns_fd);
	if (c->nsroot_fd != -1)
		close(c->nsroot_fd);
	c->mntns_fd = c->netns_fd = c->nsroot_fd = -1;
}

/* The privilege layer: root drops everything; others have nothing. */
static void
confine_privs_setup(struct confine *c)
{
	struct confine_layer	*l = &c->layers[CONFINE_L_PRIVS];
	FILE			*f;
	int			 cap;

	l->name = "privileges";
	c->last_cap = CAP_LAST_CAP;	/* if the kernel does not say */
	if ((f = fopen("/proc/sys/kernel/cap_last_cap", "re")) != NULL) {
		if (fscanf(f, "%d", &c->last_cap) != 1)
			c->last_cap = CAP_LAST_CAP;
		fclose(f);
	}
	/* Without CAP_SETPCAP there is nothing to drop, only NNP to set. */
	c->privs = prctl(PR_CAPBSET_READ, CAP_SETPCAP) == 1 && geteuid() == 0;
	/*
	 * The bounding set only limits what an exec can gain, and this
	 * process never execs: emptied here once, every child inherits it
	 * empty instead of dropping 41 capabilities itself (~1 us each).
	 */
	if (c->privs) {
		for (cap = 0; cap <= c->last_cap; cap++)
			if (prctl(PR_CAPBSET_DROP, cap) == -1 && errno != EINVAL)
				break;
		if (cap > c->last_cap)
			c->last_cap = -1;	/* the children have none left */
	}
	l->ok = !(geteuid() == 0 && !c->privs);
	if (!l->ok)
		snprintf(l->detail, sizeof l->detail, "root without "
		    "CAP_SETPCAP: the bounding set cannot be emptied");
	else if (!c->privs)
		snprintf(l->detail, sizeof l->detail, "no_new_privs, no "
		    "capabilities (the worker is not root)");
	else if (c->cfg.run_as)
		snprintf(l->detail, sizeof l->detail, "no_new_privs, runs as "
		    "uid %ld gid %ld, no capabilities", (long)c->cfg.uid,
		    (long)c->cfg.gid);
	else
		snprintf(l->detail, sizeof l->detail, "no_new_privs, every "
		    "capability dropped (bounding set too), securebits "
		    "locked");
}

/* 1 if path, resolved, is dir (a realpath) or below it. */
static int
confine_inside(const char *dir, const char *path)
{
	char	*real;
	int	 in;

	if ((real = realpath(path, NULL)) == NULL)
		return (0);
	in = cmdenv_inside(dir, real);
	free(real);
	return (in);
}

/*
 * The hidden paths, kept (the config's strings are the caller's) and
 * resolved as the host does: a link on the way would otherwise lead the
 * namespace around them.
 */
static void
confine_hide_paths(struct confine *c)
{
	const char *const	*p;
	size_t			 n = 0;
	char			*real;

	for (p = c->cfg.hide; p != NULL && *p != NULL; p++)
		n++;
	c->hidden = xcalloc(n + 1, sizeof *c->hidden);
	for (n = 0, p = c->cfg.hide; p != NULL && *p != NULL; p++)
		c->hidden[n++] = (real = realpath(*p, NULL)) != NULL ? real :
		    xstrdup(*p);
	c->cfg.hide = NULL;	/* the caller's, freed after */
}

#define CONFINE_SLOT_NAME	".slot-%zu"

static int	confine_ruleset(struct confine *, int, int, int, int, int);

/* Forgets slot i: its ruleset closed, its dir (kept or named) removed. */
static void
confine_slot_drop(struct confine *c, struct confine_slot *sl, size_t i)
{
	char	name[32];

	snprintf(name, sizeof name, CONFINE_SLOT_NAME, i);
	if (sl->ruleset != -1)
		close(sl->ruleset);
	if (sl->fd != -1) {
		close(sl->fd);
		if (rmtree_at(c->tmp_fd, sl->id != NULL ? sl->id : name) == -1)
			log_warn("tmp %s/%s: cannot remove all of it: %s",
			    c->tmp_dir, sl->id != NULL ? sl->id : name,
			    strerror(errno));
	}
	free(sl->id);
	sl->id = NULL;
	sl->fd = sl->ruleset = -1;
}

/*
 * Makes slot i's dir (anything of that name left by an earlier worker
 * removed first: it would not be new). 0 or -1 with errno.
 */
static int
confine_slot_make(struct confine *c, struct confine_slot *sl, size_t i)
{
	char	name[32];

	snprintf(name, sizeof name, CONFINE_SLOT_NAME, i);
	if (rmtree_at(c->tmp_fd, name) == -1 ||
	    mkdirat(c->tmp_fd, name, 0700) == -1)
		return (-1);
	sl->fd = openat(c->tmp_fd, name, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|
	    O_CLOEXEC);
	if (sl->fd == -1 || (c->cfg.run_as &&
	    fchown(sl->fd, c->cfg.uid, c->cfg.gid) == -1) ||
	    flistxattr(sl->fd, NULL, 0) != 0) {
		/* Labels or ACLs from the tmp root: not kept, not checked. */
		if (sl->fd != -1)
			close(sl->fd);
		sl->fd = -1;
		(void)rmtree_at(c->tmp_fd, name);
		errno = ENOTSUP;
		return (-1);
	}
	return (0);
}

/*
 * A free slot renamed to id with its ruleset for (network, proxy_port),
 * made if need be; its index, or -1 (errno EEXIST: id is taken; else
 * no slot: the caller makes a dir of its own).
 */
static ssize_t
confine_slot_take(struct confine *c, const char *id, int network,
    int proxy_port)
{
	struct confine_slot	*sl = NULL;
	char			 name[32];
	size_t			 i;

	for (i = 0; i < c->nslots && sl == NULL; i++)
		if (c->slots[i].id == NULL)
			sl = &c->slots[i];
	if (sl == NULL) {
		c->slots = xreallocarray(c->slots, c->nslots + 1,
		    sizeof *c->slots);
		i = c->nslots++;
		sl = &c->slots[i];
		sl->id = NULL;
		sl->fd = sl->ruleset = -1;
	} else
		i--;
	if (sl->fd == -1 && confine_slot_make(c, sl, i) == -1)
		return (-1);
	if (sl->ruleset != -1 && (sl->network != network ||
	    sl->proxy_port != proxy_port)) {
		close(sl->ruleset);
		sl->ruleset = -1;
	}
	if (sl->ruleset == -1) {
		sl->ruleset = confine_ruleset(c, network, proxy_port, sl->fd,
		    -1, -1);
		if (sl->ruleset == -1)
			return (-1);
		sl->network = network;
		sl->proxy_port = proxy_port;
	}
	snprintf(name, sizeof name, CONFINE_SLOT_NAME, i);
	/* Never over one that is there: it would not be the command's. */
	if (renameat2(c->tmp_fd, name, c->tmp_fd, id, RENAME_NOREPLACE) == -1)
		return (-1);
	sl->id = xstrdup(id);
	return ((ssize_t)i);
}

/*
 * Slot i back under its own name, emptied and as it was made: 0, or -1
 * when it is not (then it is dropped).
 */
static int
confine_slot_clean(struct confine *c, struct confine_slot *sl, size_t i)
{
	char			 name[32], buf[4096];
	struct dirent64		*d;
	ssize_t			 n, off;
	int			 round, left = 1;

	snprintf(name, sizeof name, CONFINE_SLOT_NAME, i);
	if (renameat2(c->tmp_fd, sl->id, c->tmp_fd, name,
	    RENAME_NOREPLACE) == -1)
		return (-1);
	free(sl->id);
	sl->id = NULL;
	/* Most commands leave it empty: one look. */
	for (round = 0; round < 4 && left; round++) {
		if (lseek(sl->fd, 0, SEEK_SET) == -1)
			return (-1);
		left = 0;
		while ((n = getdents64(sl->fd, buf, sizeof buf)) > 0)
			for (off = 0; off < n; off += d->d_reclen) {
				d = (struct dirent64 *)(buf + off);
				if (strcmp(d->d_name, ".") == 0 ||
				    strcmp(d->d_name, "..") == 0)
					continue;
				left = 1;
				if (rmtree_at(sl->fd, d->d_name) == -1)
					return (-1);
			}
		if (n == -1)
			return (-1);
	}
	if (left || fchmod(sl->fd, 0700) == -1 ||
	    futimens(sl->fd, NULL) == -1 || flistxattr(sl->fd, NULL, 0) != 0)
		return (-1);
	return (0);
}

struct confine *
confine_create(const struct confine_config *cfg, char **cause)
{
	struct confine	*c;

	*cause = NULL;
	if (cfg->mode == CONFINE_OFF)
		return (NULL);
	c = xcalloc(1, sizeof *c);
	c->cfg = *cfg;
	c->mntns_fd = c->netns_fd = c->tmp_fd = c->ws_fd = -1;
	c->nsroot_fd = c->unix_fd = -1;
	c->tmp_dir = xstrdup(cfg->tmp_dir);
	confine_hide_paths(c);
	/* Grants are resolved from these (a probe may lack the workspace). */
	if ((c->root_fd = open("/", O_PATH|O_DIRECTORY|O_CLOEXEC)) == -1) {
		xasprintf(cause, "cannot open /: %s", strerror(errno));
		confine_free(c);
		return (NULL);
	}
	c->ws_fd = open(cfg->workspace, O_PATH|O_DIRECTORY|O_NOFOLLOW|
	    O_CLOEXEC);
	if (execlog_mkdir(c->tmp_dir) == -1) {
		xasprintf(cause, "tmp_dir %s: %s", c->tmp_dir,
		    strerror(errno));
		confine_free(c);
		return (NULL);
	}
	if (confine_inside(cfg->workspace, c->tmp_dir)) {
		xasprintf(cause, "tmp_dir %s is inside the workspace %s: "
		    "Landlock's grant of the workspace would let every command "
		    "into every other's tmp; put it elsewhere", c->tmp_dir,
		    cfg->workspace);
		confine_free(c);
		return (NULL);
	}
	confine_ns_setup(c);
	if (c->mntns_fd == -1)
		confine_landlock_setup(c, "");
	if (c->tmp_fd == -1 && (c->tmp_fd = open(c->tmp_dir,
	    O_RDONLY|O_DIRECTORY|O_CLOEXEC)) == -1) {
		xasprintf(cause, "tmp_dir %s: %s", c->tmp_dir, strerror(errno));
		confine_free(c);
		return (NULL);
	}
	confine_seccomp_setup(c);
	confine_privs_setup(c);
	if (cfg->run_as && !c->privs) {
		xasprintf(cause, "run_as needs a worker that runs as root");
		confine_free(c);
		return (NULL);
	}
	return (c);
}

void
confine_free(struct confine *c)
{
	size_t	i;

	if (c == NULL)
		return;
	for (i = 0; i < c->npaths; i++)
		close(c->paths[i].fd);
	free(c->paths);
	for (i = 0; i < c->nslots; i++)
		confine_slot_drop(c, &c->slots[i], i);
	free(c->slots);
	free(c->socks);
	free(c->unix_buf);
	if (c->unix_fd != -1)
		close(c->unix_fd);
	if (c->mntns_fd != -1)
		close(c->mntns_fd);
	if (c->netns_fd != -1)
		close(c->netns_fd);
	if (c->nsroot_fd != -1)
		close(c->nsroot_fd);
	for (i = 0; c->hidden != NULL && c->hidden[i] != NULL; i++)
		free(c->hidden[i]);
	free(c->hidden);
	if (c->tmp_fd != -1)
		close(c->tmp_fd);
	if (c->root_fd != -1)
		close(c->root_fd);
	if (c->ws_fd != -1)
		close(c->ws_fd);
	free(c->prog[CONFINE_NET_NONE].filter);
	free(c->prog[CONFINE_NET_HOST].filter);
	free(c->prog[CONFINE_NET_PROXY].filter);
	free(c->tmp_dir);
	free(c);
}

const struct confine_layer *
confine_layers(const struct confine *c)
{
	return (c->layers);
}

int
confine_full(const struct confine *c)
{
	int	i;

	for (i = 0; i < CONFINE_NLAYERS; i++)
		if (!c->layers[i].ok)
			return (0);
	return (1);
}

int
confine_landlock_abi(const struct confine *c)
{
	return (c->abi);
}

int
confine_has_seccomp(const struct confine *c)
{
	return (c->layers[CONFINE_L_SECCOMP].ok);
}

int
confine_netns_fd(const struct confine *c)
{
	return (c->netns_fd);
}

int
confine_has_namespaces(const struct confine *c)
{
	return (c->layers[CONFINE_L_NAMESPACES].ok);
}

/*
 * A grant's path as it was, or is: the file (its identity), or the
 * directory it is to be made in (made), or why it cannot be granted.
 */
struct confine_grant {
	int		 err;		/* 0, or ELOOP (a symlink), EISDIR,
					   ENOTSUP (not a regular file),
					   another errno */
	int		 made;		/* not there: dev and ino are its
					   directory's */
	uintmax_t	 dev, ino;
};

/*
 * An O_PATH fd of rel beneath dirfd, no symlink followed, one component
 * at a time (openat2's fallback); -1 with errno (ELOOP for a symlink).
 */
static int
confine_grant_walk(int dirfd, const char *rel)
{
	struct stat	 st;
	char		*copy, *name, *save;
	int		 fd = -1, next, saved_errno;

	copy = xstrdup(rel);
	errno = ENOENT;
	for (name = strtok_r(copy, "/", &save); name != NULL;
	    name = strtok_r(NULL, "/", &save)) {
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			errno = EXDEV;
			goto fail;
		}
		next = openat(fd != -1 ? fd : dirfd, name,
		    O_PATH|O_NOFOLLOW|O_CLOEXEC);
		if (next == -1)
			goto fail;
		if (fd != -1)
			close(fd);
		fd = next;
		if (fstat(fd, &st) == -1)
			goto fail;
		if (S_ISLNK(st.st_mode)) {
			errno = ELOOP;
			goto fail;
		}
	}
	if (fd == -1)
		goto fail;
	free(copy);
	return (fd);

fail:
	saved_errno = errno;
	if (fd != -1)
		close(fd);
	free(copy);
	errno = saved_errno;
	return (-1);
}

/* An O_PATH fd of rel beneath dirfd, no symlink followed; -1 with errno. */
static int
confine_grant_openat(int dirfd, const char *rel)
{
	struct open_how	how;
	int		fd;

	if (rel[0] == '\0')
		return (fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
	memset(&how, 0, sizeof how);
	how.flags = O_PATH|O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
	    RESOLVE_NO_MAGICLINKS;
	fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
	if (fd == -1 && errno == ENOSYS)
		fd = confine_grant_walk(dirfd, rel);
	return (fd);
}

/*
 * 1 if path is absolute and spelled plainly: no empty, "." or ".." part,
 * no trailing slash. Resolved without symlinks, such a path is its own
 * realpath, so the string compares with the hidden paths (realpaths);
 * "/a//b" or "/a/x/../b" would name a hidden /a/b unseen.
 */
static int
confine_grant_plain(const char *path)
{
	const char	*p = path;
	size_t		 n;

	if (*p != '/' || p[1] == '\0')
		return (0);
	while (*p == '/') {
		n = strcspn(++p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return (0);
		p += n;
	}
	return (*p == '\0');
}

/*
 * The file systems whose files are the kernel's controls, not data: a
 * sysctl, core_pattern, sysrq-trigger, a cgroup's limits. uid 0 with no
 * capability writes many of them once they are mounted writable.
 */
static const unsigned long confine_kernel_fs[] = {
	PROC_SUPER_MAGIC, SYSFS_MAGIC, CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC,
	DEBUGFS_MAGIC, TRACEFS_MAGIC, SECURITYFS_MAGIC, BPF_FS_MAGIC,
	0x62656570 /* configfs */, EFIVARFS_MAGIC, DEVPTS_SUPER_MAGIC,
	SELINUX_MAGIC, SMACK_MAGIC, PSTOREFS_MAGIC, 0x65735543 /* fusectl */,
	BINFMTFS_MAGIC, 0
};

/* 1 if fd is on one of confine_kernel_fs (or cannot be told). */
static int
confine_kernel_file(int fd)
{
	struct statfs	sfs;
	size_t		i;

	if (fstatfs(fd, &sfs) == -1)
		return (1);
	for (i = 0; confine_kernel_fs[i] != 0; i++)
		if ((unsigned long)sfs.f_type == confine_kernel_fs[i])
			return (1);
	return (0);
}

/*
 * Resolves path as it is now, component by component from the workspace
 * (a path in it) or /, never through a symlink: *g says what is there,
 * and *fd is an O_PATH fd of the file, or of its directory when it is
 * not there (g->made). 0, or -1 with g->err set and *fd -1.
 */
static int
confine_grant_resolve(struct confine *c, const char *path,
    struct confine_grant *g, int *fd)
{
	struct stat	 st;
	const char	*rel;
	char		*dir;
	int		 base;

	memset(g, 0, sizeof *g);
	*fd = -1;
	if (!confine_grant_plain(path)) {
		g->err = EINVAL;
		return (-1);
	}
	if (c->ws_fd != -1 && cmdenv_inside(c->cfg.workspace, path)) {
		base = c->ws_fd;
		rel = path + strlen(c->cfg.workspace);
	} else {
		base = c->root_fd;
		rel = path;
	}
	rel += strspn(rel, "/");
	if ((*fd = confine_grant_openat(base, rel)) == -1 && errno == ENOENT) {
		g->made = 1;
		dir = xstrndup(rel, strrchr(rel, '/') != NULL ?
		    (size_t)(strrchr(rel, '/') - rel) : 0);
		*fd = confine_grant_openat(base, dir);
		free(dir);
	}
	if (*fd == -1 || fstat(*fd, &st) == -1)
		g->err = errno;
	else if (S_ISLNK(st.st_mode))
		g->err = ELOOP;
	else if (!g->made && S_ISDIR(st.st_mode))
		g->err = EISDIR;
	else if (g->made ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
		g->err = g->made ? ENOTDIR : ENOTSUP;
	else if (confine_kernel_file(*fd))
		g->err = EPERM;
	if (g->err == 0) {
		g->dev = st.st_dev;
		g->ino = st.st_ino;
		return (0);
	}
	if (*fd != -1)
		close(*fd);
	*fd = -1;
	return (-1);
}

char *
confine_grant_record(struct confine *c, const char *path)
{
	struct confine_grant	 g;
	char			*rec;
	int			 fd;

	if (confine_grant_resolve(c, path, &g, &fd) == 0)
		close(fd);
	xasprintf(&rec, "%d:%d:%ju:%ju:%s", g.err, g.made, g.dev, g.ino,
	    path);
	return (rec);
}

/* What g says was (or is) at a grant's path, for a person. */
static void
confine_grant_say(const struct confine_grant *g, char *buf, size_t len)
{
	if (g->err == ELOOP)
		snprintf(buf, len, "a symbolic link, or a path through one");
	else if (g->err == EPERM)
		snprintf(buf, len, "a file of the kernel (proc, sysfs, "
		    "cgroup...): a control, not data");
	else if (g->err == EINVAL)
		snprintf(buf, len, "not a plain absolute path (with //, . "
		    "or ..)");
	else if (g->err == EISDIR)
		snprintf(buf, len, "a directory (only a file is granted)");
	else if (g->err == ENOTSUP)
		snprintf(buf, len, "not a regular file");
	else if (g->err == ENOENT)
		snprintf(buf, len, "in a directory that does not exist");
	else if (g->err != 0)
		snprintf(buf, len, "%s", strerror(g->err));
	else if (g->made)
		snprintf(buf, len, "not there, to be made in directory "
		    "%ju:%ju", g->dev, g->ino);
	else
		snprintf(buf, len, "the file %ju:%ju", g->dev, g->ino);
}

/* 1 if path is hidden from the commands, or inside what is. */
static int
confine_grant_hidden(const struct confine *c, const char *path)
{
	size_t	i;

	for (i = 0; c->hidden[i] != NULL; i++)
		if (cmdenv_inside(c->hidden[i], path))
			return (1);
	return (0);
}

/* The per-mount flags statfs reports, for a remount (same bits). */
#define CONFINE_STATFS_FLAGS	(MS_NOSUID|MS_NODEV|MS_NOEXEC|MS_NOATIME| \
				 MS_NODIRATIME|MS_RELATIME)

/*
 * 1 if fd (below a directory of dev) is the root of a mount: what
 * statx says (5.8), or a change of file system.
 */
static int
confine_mount_root(int fd, dev_t dev, const struct stat *st)
{
	struct statx	stx;

	if (statx(fd, "", AT_EMPTY_PATH|AT_SYMLINK_NOFOLLOW, 0, &stx) == 0 &&
	    (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return ((stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0);
	return (st->st_dev != dev);
}

/*
 * The grant's file outside the workspace for the child to mount at p in
 * its copy of the namespace, whose root has no host path but the read
 * paths and the workspace: the file as a detached mount (open_tree, in
 * the host's namespace), and where that root lacks p, what the child
 * makes first (the directories, then the file, in the mount it makes
 * writable a moment; the names stay, empty, in the commands' root).
 * 0, or -1 with *cause.
 */
static int
confine_grant_mount(struct confine *c, const char *p, int fd,
    struct spawn_confine *sc, char **cause)
{
	struct stat	 st;
	struct statfs	 sfs;
	char		*copy, *name, *save, *at, *mnt, *next_name;
	char		**dirs;
	size_t		 ndirs = 0;
	unsigned long	 flags = 0;
	int		 dir, next, missing = 0, err = 0;
	dev_t		 dev;

	sc->grant_tree = syscall(SYS_open_tree, fd, "", CONFINE_TREE_CLONE|
	    O_CLOEXEC|AT_EMPTY_PATH);
	if (sc->grant_tree == -1) {
		xasprintf(cause, "grant_path %s: cannot take it into the "
		    "commands' namespace: %s; nothing ran", p, strerror(errno));
		return (-1);
	}
	if ((dir = fcntl(c->nsroot_fd, F_DUPFD_CLOEXEC, 0)) == -1 ||
	    fstat(dir, &st) == -1) {
		err = errno;
		goto fail_early;
	}
	dev = st.st_dev;
	copy = xstrdup(p);
	at = xcalloc(1, strlen(p) + 2);
	mnt = xstrdup("/");
	dirs = xcalloc(strlen(p) + 1, sizeof *dirs);
	for (name = strtok_r(copy, "/", &save); name != NULL && err == 0;
	    name = next_name) {
		next_name = strtok_r(NULL, "/", &save);
		strcat(strcat(at, "/"), name);
		if (!missing) {
			next = openat(dir, name, O_PATH|O_NOFOLLOW|O_CLOEXEC);
			if (next == -1 && errno == ENOENT) {
				missing = 1;
				if (fstatfs(dir, &sfs) == -1)
					err = errno;
				flags = sfs.f_flags & CONFINE_STATFS_FLAGS;
			} else if (next == -1 || fstat(next, &st) == -1)
				err = errno;
			else if (S_ISLNK(st.st_mode) || (next_name != NULL) !=
			    (S_ISDIR(st.st_mode) != 0))
				err = ENOTDIR;
			else if (confine_mount_root(next, dev, &st)) {
				free(mnt);
				mnt = xstrdup(at);
			}
			if (next != -1) {
				close(dir);
				dir = next;
				dev = st.st_dev;
			}
		}
		if (missing && next_name != NULL)
			dirs[ndirs++] = xstrdup(at);
	}
	close(dir);
	free(copy);
	free(at);
	if (err != 0) {
		free(mnt);
		while (ndirs > 0)
			free(dirs[--ndirs]);
		free(dirs);
		xasprintf(cause, "grant_path %s: not a file in the commands' "
		    "namespace (%s); nothing ran", p, strerror(err));
		goto fail;
	}
	if (missing) {
		sc->grant_mnt = mnt;
		sc->grant_mnt_flags = flags;
		sc->grant_dirs = dirs;
	} else {
		free(mnt);
		free(dirs);
	}
	sc->grant_path = xstrdup(p);
	return (0);

fail_early:
	if (dir != -1)
		close(dir);
	xasprintf(cause, "grant_path %s: the commands' namespace: %s; "
	    "nothing ran", p, strerror(err));
fail:
	close(sc->grant_tree);
	sc->grant_tree = -1;
	return (-1);
}

/* What confine_grant_mount gave the child, closed and freed. */
static void
confine_grant_release(struct spawn_confine *sc)
{
	size_t	i;

	if (sc->grant_path != NULL && sc->grant_tree != -1)
		close(sc->grant_tree);
	sc->grant_tree = -1;
	free(sc->grant_path);
	sc->grant_path = NULL;
	free(sc->grant_mnt);
	sc->grant_mnt = NULL;
	for (i = 0; sc->grant_dirs != NULL && sc->grant_dirs[i] != NULL; i++)
		free(sc->grant_dirs[i]);
	free(sc->grant_dirs);
	sc->grant_dirs = NULL;
}

/*
 * The approved grant, rec as confine_grant_record made it when the
 * approval was asked for: resolved again, it must be what it was then;
 * a file that was not there is made now (empty, the command's) in the
 * directory that was checked, never following a symlink; never a path hidden from the commands. An fd of the
 * file, and outside the workspace what the child mounts in *sc; or
 * -1 with *cause (allocated).
 */
static int
confine_grant_fd(struct confine *c, const char *rec,
    struct spawn_confine *sc, char **cause)
{
	struct confine_grant	 then, now;
	const char		*p;
	char			 was[128], is[128];
	int			 fd, dfd, n = -1;

	memset(&then, 0, sizeof then);
	if (sscanf(rec, "%d:%d:%ju:%ju:%n", &then.err, &then.made,
	    &then.dev, &then.ino, &n) != 4 || n < 0 || rec[n] != '/') {
		xasprintf(cause, "the grant %s was not recorded when the "
		    "approval was asked for; nothing ran", rec);
		return (-1);
	}
	p = rec + n;
	if (!confine_grant_plain(p)) {
		xasprintf(cause, "grant_path %s is not a plain absolute path "
		    "(with //, . or ..): it could name a path hidden from "
		    "commands; nothing ran", p);
		return (-1);
	}
	if (confine_grant_hidden(c, p)) {
		xasprintf(cause, "grant_path %s is hidden from commands (the "
		    "worker's own files, secrets); nothing ran", p);
		return (-1);
	}
	confine_grant_say(&then, was, sizeof was);
	if (then.err != 0) {
		xasprintf(cause, "grant_path %s cannot be granted: when the "
		    "approval was asked for it was %s; nothing ran", p, was);
		return (-1);
	}
	/* fd is -1 unless now.err is 0. */
	confine_grant_resolve(c, p, &now, &fd);
	confine_grant_say(&now, is, sizeof is);
	if (fd != -1 && (now.made != then.made || now.dev != then.dev ||
	    now.ino != then.ino)) {
		close(fd);
		fd = -1;
	} else if (fd != -1 && now.made) {
		dfd = fd;
		fd = openat(dfd, strrchr(p, '/') + 1,
		    O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0644);
		close(dfd);
		if (fd == -1)
			snprintf(is, sizeof is, "%s", errno == EEXIST ?
			    "there, made since" : strerror(errno));
		else if (c->cfg.run_as &&
		    fchown(fd, c->cfg.uid, c->cfg.gid) == -1) {
			xasprintf(cause, "grant_path %s: cannot give it to "
			    "uid %ld: %s; nothing ran", p, (long)c->cfg.uid,
			    strerror(errno));
			close(fd);
			return (-1);
		}
	}
	if (fd == -1) {
		xasprintf(cause, "grant_path %s changed since the approval "
		    "was asked for (then %s, now %s); nothing ran", p, was, is);
		return (-1);
	}
	/*
	 * The child mounts the file at its path, writable: only one
	 * outside, where no command can change a directory. The workspace
	 * is writable already; without a namespace Landlock's rule is all.
	 */
	if (!cmdenv_inside(c->cfg.workspace, p) && c->nsroot_fd != -1 &&
	    confine_grant_mount(c, p, fd, sc, cause) == -1) {
		close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * The command's Landlock ruleset, with grant_fd's file (or -1) writable;
 * an fd, or -1 with errno.
 */
static int
confine_ruleset(struct confine *c, int network, int proxy_port, int tmp_fd,
    int pty_fd, int grant_fd)
{
	struct ll_ruleset_attr	attr;
	struct ll_net_port	np;
	size_t			i;
	int			fd, saved_errno;

	memset(&attr, 0, sizeof attr);
	attr.handled_access_fs = c->fs_all;
	if (c->abi >= 4 && (!network || proxy_port != 0))
		attr.handled_access_net = LL_NET_BIND_TCP|LL_NET_CONNECT_TCP;
	if (c->abi >= 6)
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX|LL_SCOPE_SIGNAL;
	/* An older kernel takes the attribute only as far as it knows it. */
	fd = syscall(SYS_landlock_create_ruleset, &attr, c->abi >= 6 ?
	    sizeof attr : c->abi >= 4 ? offsetof(struct ll_ruleset_attr,
	    scoped) : offsetof(struct ll_ruleset_attr, handled_access_net), 0);
	if (fd == -1)
		return (-1);
	for (i = 0; i < c->npaths; i++) {
		if (confine_rule(fd, c->paths[i].fd, c->paths[i].is_dir,
		    c->paths[i].access, c->fs_all) == -1)
			goto fail;
	}
	if (confine_rule(fd, tmp_fd, 1, c->fs_all, c->fs_all) == -1)
		goto fail;
	if (c->abi >= 4 && proxy_port != 0) {
		np.allowed_access = LL_NET_CONNECT_TCP;
		np.port = (uint64_t)proxy_port;
		if (syscall(SYS_landlock_add_rule, fd, LL_RULE_NET_PORT, &np,
		    0) == -1)
			goto fail;
	}
	if (pty_fd != -1 && confine_rule(fd, pty_fd, 0, CONFINE_DEV_RIGHTS,
	    c->fs_all) == -1)
		goto fail;
	/* The rule is on the fd that was checked: no lookup in between. */
	if (grant_fd != -1 && confine_rule(fd, grant_fd, 0, c->fs_all,
	    c->fs_all) == -1)
		goto fail;
	return (fd);

fail:
	saved_errno = errno;
	close(fd);
	errno = saved_errno;
	return (-1);
}

/* The host's bound unix sockets, as the kernel lists them. */
#define CONFINE_NET_UNIX	"/proc/net/unix"
/* At most this many masked by one child. */
#define CONFINE_SOCKS_MAX	64

/*
 * The name in one line of /proc/net/unix ("Num RefCount Protocol Flags
 * Type St Inode Path"), or NULL when it has none or a relative one
 * (bound in another directory or mount namespace: not placed); *inode
 * its inode.
 */
static char *
confine_sock_name(char *line, unsigned long *inode)
{
	char	*p = line;
	int	 field;

	*inode = 0;
	for (field = 0; field < 7; field++) {
		p += strspn(p, " ");
		if (field == 6)
			*inode = strtoul(p, NULL, 10);
		p += strcspn(p, " \n");
		if (*p != ' ')
			return (NULL);
	}
	p++;
	p[strcspn(p, "\n")] = '\0';
	return (*p == '/' ? p : NULL);
}

/*
 * An O_PATH fd of path as the commands' root has it (absolute symlinks
 * resolved in that root), if it is a unix socket there; else -1.
 */
static int
confine_sock_in_root(const struct confine *c, const char *path)
{
	struct open_how	how;
	struct stat	st;
	int		fd;

	memset(&how, 0, sizeof how);
	how.flags = O_PATH|O_NOFOLLOW|O_CLOEXEC;
	how.resolve = RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS;
	fd = syscall(SYS_openat2, c->nsroot_fd, path + 1, &how, sizeof how);
	if (fd == -1 && errno == ENOSYS)
		fd = confine_grant_walk(c->nsroot_fd, path + 1);
	if (fd == -1)
		return (-1);
	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * /dev/null bound over each of the n sockets (O_PATH fds) in the
 * commands' namespace, by a child that joins it (only a process inside
 * may mount there); the masks stay for every later command. 0 or -1.
 */
static int
confine_sock_mask(const struct confine *c, const int *fds, size_t n)
{
	char	targets[CONFINE_SOCKS_MAX][32];
	size_t	i;
	pid_t	pid;
	int	status;

	for (i = 0; i < n; i++)
		snprintf(targets[i], sizeof targets[i], "/proc/self/fd/%d",
		    fds[i]);
	if ((pid = fork()) == -1)
		return (-1);
	if (pid == 0) {
		if (setns(c->mntns_fd, CLONE_NEWNS) == -1)
			_exit(1);
		for (i = 0; i < n; i++)
			if (mount("/dev/null", targets[i], "none", MS_BIND,
			    NULL) == -1)
				_exit(2);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return (-1);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		errno = WIFEXITED(status) && WEXITSTATUS(status) == 1 ?
		    EPERM : EIO;
		return (-1);
	}
	return (0);
}

/*
 * The host's unix sockets made since the commands' root was built (or
 * below what its scan looked at), hidden before a command starts: every
 * socket bound on an absolute path in the worker's network namespace
 * (the host's services: whatever its depth) that the commands' root has
 * as a socket, outside the workspace and the tmp root (commands' own),
 * gets /dev/null over it; connect() and sendto() then find no socket.
 * A socket made while a command runs is seen at the next start. 0, or
 * -1 with an allocated *cause.
 */
/* Orders inodes. */
static int
confine_inode_cmp(const void *a, const void *b)
{
	unsigned long	x = *(const unsigned long *)a;
	unsigned long	y = *(const unsigned long *)b;

	return (x < y ? -1 : x > y);
}

/*
 * Notes inode as seen now; 1 if the last pass had not seen it (a socket
 * bound since: look at it), 0 if it had (masked then, or not in the
 * commands' root: its path cannot change without a new inode).
 */
static int
confine_sock_new(const struct confine *c, unsigned long inode,
    unsigned long **now, size_t *nnow, size_t *capnow)
{
	if (*nnow == *capnow) {
		*capnow = *capnow == 0 ? 64 : *capnow * 2;
		*now = xreallocarray(*now, *capnow, sizeof **now);
	}
	(*now)[(*nnow)++] = inode;
	return (inode == 0 || c->nsocks == 0 || bsearch(&inode, c->socks,
	    c->nsocks, sizeof *c->socks, confine_inode_cmp) == NULL);
}


/*
 * The whole of /proc/net/unix in c->unix_buf, NUL-terminated: the file
 * stays open and is read again from 0 (the kernel makes the text anew
 * at every read from 0), in as few reads as the buffer allows. 0, or -1
 * with errno.
 */
static int
confine_unix_read(struct confine *c)
{
	size_t	len = 0;
	ssize_t	r;

	if (c->unix_fd == -1 && (c->unix_fd = open(CONFINE_NET_UNIX,
	    O_RDONLY|O_CLOEXEC)) == -1)
		return (-1);
	for (;;) {
		if (c->unix_cap - len < 2) {
			c->unix_cap = c->unix_cap == 0 ? 16384 :
			    c->unix_cap * 2;
			c->unix_buf = xrealloc(c->unix_buf, c->unix_cap);
		}
		r = pread(c->unix_fd, c->unix_buf + len, c->unix_cap - len - 1,
		    (off_t)len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return (-1);
		if (r == 0)
			break;
		len += (size_t)r;
	}
	c->unix_buf[len] = '\0';
	return (0);
}

static int
confine_hide_new_sockets(struct confine *c, char **cause)
{
	char		*line, *next, *name, first[PATH_MAX] = "";
	size_t		 n = 0, i, nnow = 0, capnow = 0;
	unsigned long	 inode, *now = NULL;
	int		 fds[CONFINE_SOCKS_MAX], fd, rc = 0, done;

	if (confine_unix_read(c) == -1) {
		xasprintf(cause, "cannot list the host's unix sockets (%s): "
		    "%s", CONFINE_NET_UNIX, strerror(errno));
		return (-1);
	}
	for (done = 0, line = c->unix_buf; rc == 0 && !done; line = next) {
		/* One line at a time, its newline kept (as getline's). */
		if ((next = strchr(line, '\n')) != NULL)
			next++;
		else
			next = line + strlen(line);
		if (*line == '\0')
			done = 1;
		else if ((name = confine_sock_name(line, &inode)) != NULL &&
		    confine_sock_new(c, inode, &now, &nnow, &capnow) &&
		    !cmdenv_inside(c->cfg.workspace, name) &&
		    !cmdenv_inside(c->tmp_dir, name) &&
		    (fd = confine_sock_in_root(c, name)) != -1) {
			if (n == 0)
				snprintf(first, sizeof first, "%s", name);
			log_info("confine: hiding the host's unix socket %s "
			    "from the commands", name);
			fds[n++] = fd;
		}
		if (n == CONFINE_SOCKS_MAX || (done && n > 0)) {
			if ((rc = confine_sock_mask(c, fds, n)) == -1)
				xasprintf(cause, "cannot hide the host's unix "
				    "socket %s from the commands: %s", first,
				    strerror(errno));
			for (i = 0; i < n; i++)
				close(fds[i]);
			n = 0;
		}
	}
	/* What this pass saw is what the next one need not look at again. */
	free(c->socks);
	c->socks = now;
	c->nsocks = nnow;
	if (rc == -1)
		c->nsocks = 0;	/* look at every one again */
	if (c->nsocks > 1)
		qsort(c->socks, c->nsocks, sizeof *c->socks,
		    confine_inode_cmp);
	return (rc);
}

int
confine_prepare(struct confine *c, const char *id, int network,
    int proxy_port, int pty_fd, const char *grant, struct spawn_confine *sc,
    char **tmp, char **cause)
{
	ssize_t	slot = -1;
	int	tmp_fd, grant_fd = -1, saved_errno;

	*cause = NULL;
	sc->ruleset_fd = sc->mntns_fd = sc->netns_fd = -1;
	sc->ruleset_kept = 0;
	sc->seccomp = NULL;
	sc->grant_path = NULL;
	sc->grant_tree = -1;
	sc->grant_mnt = NULL;
	sc->grant_dirs = NULL;
	*tmp = NULL;
	if (c->nsroot_fd != -1 && c->mntns_fd != -1 &&
	    confine_hide_new_sockets(c, cause) == -1)
		return (-1);
	xasprintf(tmp, "%s/%s", c->tmp_dir, id);
	/* The common case: a kept dir and its ruleset (confine_slot). */
	if (c->abi > 0 && pty_fd == -1 && grant == NULL &&
	    (slot = confine_slot_take(c, id, network, proxy_port)) != -1) {
		sc->ruleset_fd = c->slots[slot].ruleset;
		sc->ruleset_kept = 1;
		goto rest;
	}
	/* Never one that was there: it would not be the command's own. */
	if (mkdirat(c->tmp_fd, id, 0700) == -1) {
		xasprintf(cause, "cannot make its tmp dir %s: %s", *tmp,
		    strerror(errno));
		free(*tmp);
		*tmp = NULL;
		return (-1);
	}
	tmp_fd = openat(c->tmp_fd, id, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|
	    O_CLOEXEC);
	if (tmp_fd == -1 || (c->cfg.run_as &&
	    fchown(tmp_fd, c->cfg.uid, c->cfg.gid) == -1)) {
		xasprintf(cause, "cannot give its tmp dir %s to uid %ld: %s",
		    *tmp, (long)c->cfg.uid, strerror(errno));
		if (tmp_fd != -1)
			close(tmp_fd);
		goto fail;
	}
	if (grant != NULL && (grant_fd = confine_grant_fd(c, grant, sc,
	    cause)) == -1) {
		close(tmp_fd);
		goto fail;
	}
	if (c->abi > 0)
		sc->ruleset_fd = confine_ruleset(c, network, proxy_port, tmp_fd,
		    pty_fd,
		    grant_fd);
	saved_errno = errno;
	close(tmp_fd);
	if (grant_fd != -1)
		close(grant_fd);
	errno = saved_errno;
	if (c->abi > 0 && sc->ruleset_fd == -1)
		goto ruleset_fail;
rest:
	sc->mntns_fd = c->mntns_fd;
	sc->netns_fd = network ? -1 : c->netns_fd;
	if (c->layers[CONFINE_L_SECCOMP].ok)
		sc->seccomp = &c->prog[network ? CONFINE_NET_HOST :
		    proxy_port != 0 ? CONFINE_NET_PROXY : CONFINE_NET_NONE];
	sc->drop_privs = c->privs;
	sc->no_new_privs = 1;
	sc->last_cap = c->last_cap;
	sc->set_ids = c->cfg.run_as;
	sc->uid = c->cfg.uid;
	sc->gid = c->cfg.gid;
	return (0);

ruleset_fail:
	xasprintf(cause, "cannot build its Landlock ruleset: %s",
	    strerror(errno));
fail:
	confine_grant_release(sc);
	confine_release_tmp(c, *tmp, 0);
	free(*tmp);
	*tmp = NULL;
	return (-1);
}

void
confine_spawned(struct spawn_confine *sc)
{
	if (sc->ruleset_fd != -1 && !sc->ruleset_kept)
		close(sc->ruleset_fd);
	sc->ruleset_fd = -1;
	confine_grant_release(sc);
}

void
confine_remove_tmp(struct confine *c, const char *tmp)
{
	confine_release_tmp(c, tmp, 1);
}

void
confine_keep_tmp(struct confine *c, const char *tmp)
{
	const char	*id;
	size_t		 i;

	if (c == NULL || tmp == NULL)
		return;
	id = strrchr(tmp, '/') != NULL ? strrchr(tmp, '/') + 1 : tmp;
	for (i = 0; i < c->nslots; i++) {
		if (c->slots[i].id == NULL || strcmp(c->slots[i].id, id) != 0)
			continue;
		/* Forgotten, not removed: the dir is the session's now. */
		if (c->slots[i].ruleset != -1)
			close(c->slots[i].ruleset);
		if (c->slots[i].fd != -1)
			close(c->slots[i].fd);
		c->slots[i].fd = c->slots[i].ruleset = -1;
		free(c->slots[i].id);
		c->slots[i].id = NULL;
		return;
	}
}

void
confine_release_tmp(struct confine *c, const char *tmp, int reuse)
{
	const char	*id;
	size_t		 i;

	if (c == NULL || tmp == NULL)
		return;
	id = strrchr(tmp, '/') != NULL ? strrchr(tmp, '/') + 1 : tmp;
	for (i = 0; i < c->nslots; i++) {
		if (c->slots[i].id == NULL || strcmp(c->slots[i].id, id) != 0)
			continue;
		if (!reuse || confine_slot_clean(c, &c->slots[i], i) == -1)
			confine_slot_drop(c, &c->slots[i], i);
		return;
	}
	/* Most commands leave it empty: one rmdir, not a tree walk. */
	if (unlinkat(c->tmp_fd, id, AT_REMOVEDIR) == 0 || errno == ENOENT)
		return;
	if (rmtree_at(c->tmp_fd, id) == -1)
		log_warn("tmp %s: cannot remove all of it: %s", tmp,
		    strerror(errno));
}
