/* The cgroup pool: v2 leaves, paired v1 limits, the sweep of dead workers. */

#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/cgroup.h"
#include "exec/mountinfo.h"
#include "logs/log.h"
#include "logs/xmalloc.h"

/* The v1 controllers that limit a command, by index. */
enum cgroup_v1 {
	CGROUP_V1_PIDS = 0,
	CGROUP_V1_MEMORY,
	CGROUP_V1_N
};

struct cgroup {
	struct cgroup_pool	*pool;
	unsigned		 index;
	int			 dirfd;		/* O_DIRECTORY, for clone3 */
	int			 events_fd;	/* cgroup.events, pread */
	int			 kill_fd;	/* cgroup.kill, write "1" */
	int			 wd;		/* inotify watch, or -1 */
	char			*events_path;	/* for inotify */
	int			 killed;	/* cgroup.kill was written */
	int			 kept;		/* its session was handed to
						   the holder: left as it is */
	void			*owner;		/* NULL: free */
	int			 v1_procs[CGROUP_V1_N];	/* cgroup.procs */
	int			 v1_events[CGROUP_V1_N]; /* pids.events,
						   memory.oom_control */
	int			 v1_usage;	/* memory.usage_in_bytes */
	/*
	 * What is known of the leaf without reading its files again: once
	 * cgroup.events says it is empty, nothing can enter it but through
	 * cgroup_fd() (a child cloned into it), which forgets all this.
	 */
	int			 idle;		/* read empty since cgroup_fd() */
	int			 counted;	/* idle, and the v1 counters
						   below read since */
	unsigned long long	 pids_hit, oom_kills;
	int			 ready;		/* idle, made fit by cgroup_put
						   (cgroup_leaf_ready) */
};

struct cgroup_pool {
	char		*path;
	int		 inotify_fd;
	unsigned	 n;
	struct cgroup	*leaves;
	char		 evbuf[4096];	/* pending inotify events */
	size_t		 evlen, evpos;
	char		*v1_path[CGROUP_V1_N]; /* execq-<pid> */
	int		 probe;		/* sweeps no dead worker's folders */
	long		 name_pid;	/* execq-<name_pid>: ours, or our
					   holder's (worker/holder.h) */
	int		 limited;	/* every leaf has its v1 groups */
	unsigned long long max_memory;	/* a v1 memory group's limit */
};

/*
 * What a free leaf's memory group may still hold and be handed out
 * again: an ordinary command leaves a few hundred KiB (kernel objects,
 * page cache of what it read first); anything more (its tmpfs or SysV
 * pages not yet freed, page cache of the files it wrote) and the next
 * command gets a fresh group instead, at 0 (see cgroup_v1_renew).
 */
#define CGROUP_MEMORY_LEFTOVER	(1ULL << 20)

/* Each v1 controller's name and the file that counts its limit's hits. */
static const char *const cgroup_v1_names[CGROUP_V1_N] = {
	[CGROUP_V1_PIDS] = "pids",
	[CGROUP_V1_MEMORY] = "memory",
};
static const char *const cgroup_v1_events[CGROUP_V1_N] = {
	[CGROUP_V1_PIDS] = "pids.events",
	[CGROUP_V1_MEMORY] = "memory.oom_control",
};

/* The cgroup2 mount point, from /proc/self/mountinfo. */
static char *
cgroup_mount(void)
{
	struct mountinfo		 mi;
	const struct mountinfo_entry	*e;
	char				*mnt = NULL;

	if (mountinfo_open(&mi, NULL) == -1)
		return (NULL);
	while (mnt == NULL && (e = mountinfo_next(&mi)) != NULL)
		if (strcmp(e->fstype, "cgroup2") == 0)
			mnt = xstrdup(e->mount_point);
	mountinfo_close(&mi);
	return (mnt);
}

/* This process's cgroup2 path ("0::/path" in /proc/self/cgroup). */
static char *
cgroup_self(void)
{
	FILE	*f;
	char	*line = NULL, *self = NULL;
	size_t	 size = 0;
	ssize_t	 n;

	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return (NULL);
	while (self == NULL && (n = getline(&line, &size, f)) != -1) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		if (n > 0 && line[n - 1] == '\n')
			line[n - 1] = '\0';
		self = xstrdup(line + 3);
	}
	free(line);
	fclose(f);
	return (self);
}

/*
 * Kills (v2: cgroup.kill; v1 has none) and removes a folder and its leaves,
 * children first.
 */
static void
cgroup_remove_tree(const char *path, int wait)
{
	DIR		*d;
	struct dirent	*de;
	char		 sub[PATH_MAX];
	int		 fd;

	if ((d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
			cgroup_remove_tree(sub, wait);
		}
		closedir(d);
	}
	snprintf(sub, sizeof sub, "%s/cgroup.kill", path);
	if ((fd = open(sub, O_WRONLY|O_CLOEXEC)) != -1) {
		if (write(fd, "1", 1) == -1)
			log_debug("cgroup %s: kill: %s", path, strerror(errno));
		close(fd);
	}
	/* The kill is asynchronous: give the members a moment to leave. */
	for (int i = 0; i < 100 && rmdir(path) == -1 && errno == EBUSY &&
	    wait; i++)
		usleep(10000);
}

/*
 * 1 if pid is a live execq-worker, or execq-bench (which makes a pool of
 * its own): a reused pid is someone else.
 */
static int
cgroup_worker_alive(long pid)
{
	char	path[64], comm[32];
	ssize_t	n;
	int	fd;

	if (kill((pid_t)pid, 0) == -1 && errno != EPERM)
		return (0);
	snprintf(path, sizeof path, "/proc/%ld/comm", pid);
	if ((fd = open(path, O_RDONLY|O_CLOEXEC)) == -1)
		return (errno == ENOENT ? 0 : 1);
	n = read(fd, comm, sizeof comm - 1);
	close(fd);
	if (n <= 0)
		return (1);
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	return (strcmp(comm, "execq-worker") == 0 ||
	    strcmp(comm, "execq-bench") == 0);
}

/*
 * Kills the execq-<pid> folders under base whose worker is gone, and
 * removes them (wait: until they are empty; else only if they already
 * are, the rest at a later sweep). Returns how many were killed.
 */
static unsigned
cgroup_sweep_stale(const char *base, long name_pid, int wait)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX];
	long		 pid;
	unsigned	 n = 0;

	if ((d = opendir(base)) == NULL)
		return (0);
	while ((de = readdir(d)) != NULL) {
		if (sscanf(de->d_name, "execq-%ld", &pid) != 1 ||
		    pid == (long)getpid() || pid == name_pid ||
		    cgroup_worker_alive(pid))
			continue;
		snprintf(path, sizeof path, "%s/%s", base, de->d_name);
		log_info("cgroup: killing what is left in %s of a dead worker",
		    path);
		cgroup_remove_tree(path, wait);
		n++;
	}
	closedir(d);
	return (n);
}

unsigned
cgroup_pool_sweep(struct cgroup_pool *pool)
{
	char	*base, *slash;
	unsigned n;

	if (pool == NULL || pool->probe)
		return (0);
	base = xstrdup(pool->path);
	if ((slash = strrchr(base, '/')) != NULL)
		*slash = '\0';
	n = cgroup_sweep_stale(base, pool->name_pid, 0);
	free(base);
	return (n);
}

/* Opens one leaf's files and watches its cgroup.events. */
static int
cgroup_leaf_open(struct cgroup_pool *pool, struct cgroup *cg, unsigned i)
{
	char	path[PATH_MAX];

	cg->pool = pool;
	cg->index = i;
	cg->dirfd = cg->events_fd = cg->kill_fd = cg->wd = -1;
	snprintf(path, sizeof path, "%s/%u", pool->path, i);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		return (-1);
	if ((cg->dirfd = open(path, O_RDONLY|O_DIRECTORY|O_CLOEXEC)) == -1)
		return (-1);
	cg->events_fd = openat(cg->dirfd, "cgroup.events", O_RDONLY|O_CLOEXEC);
	cg->kill_fd = openat(cg->dirfd, "cgroup.kill", O_WRONLY|O_CLOEXEC);
	if (cg->events_fd == -1 || cg->kill_fd == -1)
		return (-1);
	if (cg->events_path == NULL)
		xasprintf(&cg->events_path, "%s/%u/cgroup.events", pool->path, i);
	return (0);
}

/* Closes one leaf's files and stops watching it. */
static void
cgroup_leaf_close(struct cgroup *cg)
{
	if (cg->wd != -1)
		inotify_rm_watch(cg->pool->inotify_fd, cg->wd);
	if (cg->dirfd != -1)
		close(cg->dirfd);
	if (cg->events_fd != -1)
		close(cg->events_fd);
	if (cg->kill_fd != -1)
		close(cg->kill_fd);
	cg->wd = cg->dirfd = cg->events_fd = cg->kill_fd = -1;
	cg->idle = cg->counted = cg->ready = 0;
}

int
cgroup_watch(struct cgroup *cg)
{
	if (cg->wd == -1)
		cg->wd = inotify_add_watch(cg->pool->inotify_fd,
		    cg->events_path, IN_MODIFY);
	return (cg->wd == -1 ? -1 : 0);
}

/*
 * A leaf that cgroup.kill was written to keeps killing every process that
 * enters it on this kernel, so it is replaced by a fresh one (about a
 * millisecond, only after a kill).
 */
static void
cgroup_leaf_renew(struct cgroup *cg)
{
	char	path[PATH_MAX];

	cgroup_leaf_close(cg);
	snprintf(path, sizeof path, "%s/%u", cg->pool->path, cg->index);
	/* Recursively: the command may have made cgroups of its own. */
	cgroup_remove_tree(path, 0);	/* empty: no waiting */
	if (cgroup_leaf_open(cg->pool, cg, cg->index) == -1) {
		/* Still killed: cgroup_take() tries again later. */
		log_warn("cgroup %s: cannot renew: %s", path, strerror(errno));
		cgroup_leaf_close(cg);
		return;
	}
	cg->killed = 0;
}

/* The folder the pool lives in, from spec. */
static char *
cgroup_base(const char *spec, char **cause)
{
	char	*mnt, *self, *base;

	if (strcmp(spec, "auto") != 0)
		return (xstrdup(spec));
	if ((mnt = cgroup_mount()) == NULL) {
		xasprintf(cause, "no cgroup2 mount");
		return (NULL);
	}
	self = cgroup_self();
	xasprintf(&base, "%s%s", mnt,
	    self == NULL || strcmp(self, "/") == 0 ? "" : self);
	free(mnt);
	free(self);
	return (base);
}

/* Closes one leaf's v1 files. */
static void
cgroup_v1_close(struct cgroup *cg)
{
	int	i;

	for (i = 0; i < CGROUP_V1_N; i++) {
		if (cg->v1_procs[i] != -1)
			close(cg->v1_procs[i]);
		if (cg->v1_events[i] != -1)
			close(cg->v1_events[i]);
		cg->v1_procs[i] = cg->v1_events[i] = -1;
	}
	if (cg->v1_usage != -1)
		close(cg->v1_usage);
	cg->v1_usage = -1;
	cg->counted = cg->ready = 0;
}

/* Where the v1 controller name is mounted, and this process's group in it. */
static char *
cgroup_v1_base(const char *name)
{
	struct mountinfo		 mi;
	const struct mountinfo_entry	*e;
	FILE				*f;
	char				*line = NULL, *mnt = NULL, *self = NULL;
	char				*base = NULL, *save;
	size_t				 size = 0;

	if (mountinfo_open(&mi, NULL) == 0) {
		while (mnt == NULL && (e = mountinfo_next(&mi)) != NULL)
			if (strcmp(e->fstype, "cgroup") == 0 &&
			    mountinfo_has_opt(e->super_opts, name))
				mnt = xstrdup(e->mount_point);
		mountinfo_close(&mi);
	}
	if (mnt != NULL && (f = fopen("/proc/self/cgroup", "re")) != NULL) {
		/* "N:ctrl[,ctrl]:/path" */
		while (self == NULL && getline(&line, &size, f) != -1) {
			char	*ctrls, *path, *tok;

			line[strcspn(line, "\n")] = '\0';
			if ((ctrls = strchr(line, ':')) == NULL ||
			    (path = strchr(++ctrls, ':')) == NULL)
				continue;
			*path++ = '\0';
			for (tok = strtok_r(ctrls, ",", &save); tok != NULL;
			    tok = strtok_r(NULL, ",", &save))
				if (strcmp(tok, name) == 0)
					self = xstrdup(path);
		}
		fclose(f);
	}
	if (mnt != NULL && self != NULL)
		xasprintf(&base, "%s%s", mnt, strcmp(self, "/") == 0 ? "" :
		    self);
	free(line);
	free(mnt);
	free(self);
	return (base);
}

/* Writes value into dir/file; 0 or -1. */
static int
cgroup_v1_set(const char *dir, const char *file, unsigned long long value)
{
	char	path[PATH_MAX], buf[32];
	int	fd, n, rc;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	if ((fd = open(path, O_WRONLY|O_CLOEXEC)) == -1)
		return (-1);
	n = snprintf(buf, sizeof buf, "%llu", value);
	rc = write(fd, buf, n) == n ? 0 : -1;
	close(fd);
	return (rc);
}

/* Makes leaf i of controller k with its limit and opens its files. */
static int
cgroup_v1_leaf(struct cgroup_pool *pool, unsigned i, enum cgroup_v1 k,
    unsigned long long limit)
{
	struct cgroup	*cg = &pool->leaves[i];
	char		 dir[PATH_MAX], path[PATH_MAX + 32];

	snprintf(dir, sizeof dir, "%s/%u", pool->v1_path[k], i);
	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return (-1);
	if (cg->dirfd != -1 && cgroup_populated(cg) == 1)
		;	/* a held session's (worker/holder.h): as it was set */
	else if (k == CGROUP_V1_PIDS && cgroup_v1_set(dir, "pids.max",
	    limit) == -1)
		return (-1);
	else if (k == CGROUP_V1_MEMORY) {
		if (cgroup_v1_set(dir, "memory.limit_in_bytes", limit) == -1)
			return (-1);
		/* With swap accounting, swap counts against the limit too. */
		(void)cgroup_v1_set(dir, "memory.memsw.limit_in_bytes", limit);
	}
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	if ((cg->v1_procs[k] = open(path, O_WRONLY|O_CLOEXEC)) == -1)
		return (-1);
	snprintf(path, sizeof path, "%s/%s", dir, cgroup_v1_events[k]);
	if ((cg->v1_events[k] = open(path, O_RDONLY|O_CLOEXEC)) == -1)
		return (-1);
	snprintf(path, sizeof path, "%s/memory.usage_in_bytes", dir);
	if (k == CGROUP_V1_MEMORY &&
	    (cg->v1_usage = open(path, O_RDONLY|O_CLOEXEC)) == -1)
		return (-1);
	return (0);
}

/* Bytes charged to the leaf's v1 memory group; 0 without one. */
static unsigned long long
cgroup_v1_usage(const struct cgroup *cg)
{
	char	buf[32];
	ssize_t	n;

	if (cg->v1_usage == -1 ||
	    (n = pread(cg->v1_usage, buf, sizeof buf - 1, 0)) <= 0)
		return (0);
	buf[n] = '\0';
	return (strtoull(buf, NULL, 10));
}

/*
 * A fresh v1 memory group for an empty leaf whose group still holds a
 * charge: rmdir takes the old one offline (what is still charged to it,
 * a file's page cache, stays charged to it and so to the worker's group
 * above, until freed or reclaimed), mkdir makes a new one at 0 with the
 * same limit: no command starts with another's charge against its
 * limit. About 60 us. 0, or -1 (the leaf then has no memory group and
 * is not handed out until a renewal works).
 */
static int
cgroup_v1_renew(struct cgroup *cg)
{
	struct cgroup_pool	*pool = cg->pool;
	char			 dir[PATH_MAX];
	const enum cgroup_v1	 k = CGROUP_V1_MEMORY;

	if (cg->v1_procs[k] != -1)
		close(cg->v1_procs[k]);
	if (cg->v1_events[k] != -1)
		close(cg->v1_events[k]);
	if (cg->v1_usage != -1)
		close(cg->v1_usage);
	cg->v1_procs[k] = cg->v1_events[k] = cg->v1_usage = -1;
	cg->counted = 0;		/* a new group counts from 0 */
	snprintf(dir, sizeof dir, "%s/%u", pool->v1_path[k], cg->index);
	if ((rmdir(dir) == -1 && errno != ENOENT) ||
	    cgroup_v1_leaf(pool, cg->index, k, pool->max_memory) == -1) {
		log_warn("cgroup %s: cannot renew: %s", dir, strerror(errno));
		return (-1);
	}
	return (0);
}

int
cgroup_pool_limit(struct cgroup_pool *pool, unsigned max_pids,
    unsigned long long max_memory, char **cause)
{
	char		*base;
	unsigned	 i;
	enum cgroup_v1	 k;

	*cause = NULL;
	for (k = 0; k < CGROUP_V1_N; k++) {
		if ((base = cgroup_v1_base(cgroup_v1_names[k])) == NULL) {
			xasprintf(cause, "no cgroup v1 %s controller",
			    cgroup_v1_names[k]);
			return (-1);
		}
		if (!pool->probe)
			cgroup_sweep_stale(base, pool->name_pid, 1);
		xasprintf(&pool->v1_path[k], "%s/execq-%ld", base,
		    pool->name_pid);
		free(base);
		if (mkdir(pool->v1_path[k], 0755) == -1 && errno != EEXIST)
			goto fail;
		for (i = 0; i < pool->n; i++) {
			if (cgroup_v1_leaf(pool, i, k, k == CGROUP_V1_PIDS ?
			    max_pids : max_memory) == -1)
				goto fail;
		}
	}
	pool->limited = 1;
	pool->max_memory = max_memory;
	return (0);

fail:
	xasprintf(cause, "%s: %s", pool->v1_path[k], strerror(errno));
	for (i = 0; i < pool->n; i++)	/* all leaves, or none */
		cgroup_v1_close(&pool->leaves[i]);
	return (-1);
}

int
cgroup_v1_fds(const struct cgroup *cg, int fds[2])
{
	fds[0] = cg->v1_procs[CGROUP_V1_PIDS];
	fds[1] = cg->v1_procs[CGROUP_V1_MEMORY];
	return (fds[0] != -1 && fds[1] != -1 ? 0 : -1);
}

/* The number after key in the file behind fd, or 0. */
static unsigned long long
cgroup_v1_count(int fd, const char *key)
{
	char	buf[512], *p;
	ssize_t	n;
	size_t	kl = strlen(key);

	if (fd == -1 || (n = pread(fd, buf, sizeof buf - 1, 0)) <= 0)
		return (0);
	buf[n] = '\0';
	for (p = buf; p != NULL; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ' ')
			return (strtoull(p + kl + 1, NULL, 10));
	}
	return (0);
}

void
cgroup_limit_events(struct cgroup *cg, unsigned long long *pids_hit,
    unsigned long long *oom_kills)
{
	/* An empty leaf's counters stay as they are: read them once. */
	if (!cg->counted) {
		cg->pids_hit = cgroup_v1_count(cg->v1_events[CGROUP_V1_PIDS],
		    "max");
		cg->oom_kills = cgroup_v1_count(
		    cg->v1_events[CGROUP_V1_MEMORY], "oom_kill");
		cg->counted = cg->idle;
	}
	*pids_hit = cg->pids_hit;
	*oom_kills = cg->oom_kills;
}

/*
 * The pool; probe: without sweeping dead workers' folders. name_pid is
 * ours, or our holder's: then the folder may be there already, with the
 * leaves of sessions an earlier worker handed over.
 */
static struct cgroup_pool *
cgroup_pool_make(const char *spec, unsigned n, long name_pid, int probe,
    char **cause)
{
	struct cgroup_pool	*pool;
	char			*base;
	unsigned		 i;
	int			 k;

	*cause = NULL;
	if (strcmp(spec, "off") == 0)
		return (NULL);
	if ((base = cgroup_base(spec, cause)) == NULL)
		return (NULL);
	if (!probe)
		cgroup_sweep_stale(base, name_pid, 1);
	pool = xcalloc(1, sizeof *pool);
	pool->probe = probe;
	pool->name_pid = name_pid;
	pool->n = n;
	pool->leaves = xcalloc(n, sizeof *pool->leaves);
	for (i = 0; i < n; i++) {
		pool->leaves[i].dirfd = pool->leaves[i].events_fd =
		    pool->leaves[i].kill_fd = pool->leaves[i].wd = -1;
		for (k = 0; k < CGROUP_V1_N; k++)
			pool->leaves[i].v1_procs[k] =
			    pool->leaves[i].v1_events[k] = -1;
		pool->leaves[i].v1_usage = -1;
	}
	xasprintf(&pool->path, "%s/execq-%ld", base, name_pid);
	free(base);
	pool->inotify_fd = inotify_init1(IN_NONBLOCK|IN_CLOEXEC);
	if (pool->inotify_fd == -1 || (mkdir(pool->path, 0755) == -1 &&
	    (errno != EEXIST || name_pid == (long)getpid())))
		goto fail;
	for (i = 0; i < n; i++) {
		if (cgroup_leaf_open(pool, &pool->leaves[i], i) == -1)
			goto fail;
	}
	return (pool);

fail:
	xasprintf(cause, "%s: %s", pool->path, strerror(errno));
	cgroup_pool_free(pool);
	return (NULL);
}

struct cgroup_pool *
cgroup_pool_create(const char *spec, unsigned n, long name_pid, char **cause)
{
	return (cgroup_pool_make(spec, n, name_pid > 0 ? name_pid :
	    (long)getpid(), 0, cause));
}

struct cgroup_pool *
cgroup_pool_probe(const char *spec, unsigned n, char **cause)
{
	return (cgroup_pool_make(spec, n, (long)getpid(), 1, cause));
}

struct cgroup *
cgroup_adopt(struct cgroup_pool *pool, unsigned index, void *owner)
{
	struct cgroup	*cg;

	if (pool == NULL || index >= pool->n)
		return (NULL);
	cg = &pool->leaves[index];
	if (cg->owner != NULL || cg->dirfd == -1)
		return (NULL);
	cg->owner = owner;
	cg->idle = cg->counted = cg->ready = 0;	/* it runs */
	return (cg);
}

unsigned
cgroup_pool_reclaim(struct cgroup_pool *pool)
{
	struct cgroup	*cg;
	unsigned	 i, n = 0;

	for (i = 0; pool != NULL && i < pool->n; i++) {
		cg = &pool->leaves[i];
		if (cg->owner == NULL && cg->dirfd != -1 &&
		    cgroup_populated(cg) == 1) {
			log_info("cgroup %s/%u: killing what an earlier worker "
			    "left running", pool->path, i);
			cgroup_kill(cg);
			n++;
		}
	}
	return (n);
}

unsigned
cgroup_index(const struct cgroup *cg)
{
	return (cg->index);
}

void
cgroup_keep(struct cgroup *cg)
{
	if (cg == NULL)
		return;
	cg->kept = 1;
	cg->owner = NULL;
}

/*
 * Frees a pool some of whose leaves were kept for the holder: those stay
 * as they are (the next worker adopts them), the others and their v1
 * groups are removed, and so is nothing else.
 */
static void
cgroup_pool_free_kept(struct cgroup_pool *pool)
{
	struct cgroup	*cg;
	char		 path[PATH_MAX];
	unsigned	 i;
	int		 k;

	for (i = 0; i < pool->n; i++) {
		cg = &pool->leaves[i];
		if (cg->pool != NULL)
			cgroup_leaf_close(cg);
		free(cg->events_path);
		cgroup_v1_close(cg);
		if (cg->kept)
			continue;
		snprintf(path, sizeof path, "%s/%u", pool->path, i);
		cgroup_remove_tree(path, 1);
		for (k = 0; k < CGROUP_V1_N; k++) {
			if (pool->v1_path[k] == NULL)
				continue;
			snprintf(path, sizeof path, "%s/%u", pool->v1_path[k],
			    i);
			cgroup_remove_tree(path, 1);
		}
	}
	if (pool->inotify_fd != -1)
		close(pool->inotify_fd);
	for (k = 0; k < CGROUP_V1_N; k++)
		free(pool->v1_path[k]);
	free(pool->leaves);
	free(pool->path);
	free(pool);
}

void
cgroup_pool_free(struct cgroup_pool *pool)
{
	struct cgroup	*cg;
	unsigned	 i;

	if (pool == NULL)
		return;
	for (i = 0; i < pool->n; i++) {
		if (pool->leaves[i].kept) {
			cgroup_pool_free_kept(pool);
			return;
		}
	}
	for (i = 0; i < pool->n; i++) {
		cg = &pool->leaves[i];
		if (cg->pool != NULL)
			cgroup_leaf_close(cg);
		free(cg->events_path);
		cgroup_v1_close(cg);
	}
	if (pool->inotify_fd != -1)
		close(pool->inotify_fd);
	cgroup_remove_tree(pool->path, 1);
	for (i = 0; i < CGROUP_V1_N; i++) {
		if (pool->v1_path[i] != NULL)
			cgroup_remove_tree(pool->v1_path[i], 1);
		free(pool->v1_path[i]);
	}
	free(pool->leaves);
	free(pool->path);
	free(pool);
}

const char *
cgroup_pool_path(const struct cgroup_pool *pool)
{
	return (pool->path);
}

int
cgroup_pool_fd(const struct cgroup_pool *pool)
{
	return (pool->inotify_fd);
}

void *
cgroup_pool_changed(struct cgroup_pool *pool)
{
	struct inotify_event	*ie;
	ssize_t			 n;
	unsigned		 i;

	for (;;) {
		if (pool->evpos >= pool->evlen) {
			n = read(pool->inotify_fd, pool->evbuf,
			    sizeof pool->evbuf);
			if (n <= 0)
				return (NULL);
			pool->evlen = n;
			pool->evpos = 0;
		}
		ie = (struct inotify_event *)(pool->evbuf + pool->evpos);
		pool->evpos += sizeof *ie + ie->len;
		for (i = 0; i < pool->n; i++) {
			if (pool->leaves[i].wd == ie->wd &&
			    pool->leaves[i].owner != NULL)
				return (pool->leaves[i].owner);
		}
	}
}

/*
 * Makes a free leaf fit to hand out: empty and never killed (else, once
 * empty, a fresh one), its memory group holding no more than
 * CGROUP_MEMORY_LEFTOVER (else a fresh one). 1 if it is, 0 if not yet
 * (still emptying, or a renewal failed: tried again at the next take).
 */
static int
cgroup_leaf_ready(struct cgroup *cg)
{
	if (cg->killed && (cg->events_fd == -1 || cgroup_populated(cg) == 0))
		cgroup_leaf_renew(cg);
	if (cg->killed)
		return (0);
	if (cg->pool->limited && (cg->v1_usage == -1 ||
	    cgroup_v1_usage(cg) > CGROUP_MEMORY_LEFTOVER) &&
	    cgroup_v1_renew(cg) == -1)
		return (0);
	return (1);
}

struct cgroup *
cgroup_take(struct cgroup_pool *pool, void *owner)
{
	struct cgroup	*cg;
	unsigned	 i;

	if (pool == NULL)
		return (NULL);
	for (i = 0; i < pool->n; i++) {
		cg = &pool->leaves[i];
		if (cg->owner != NULL)
			continue;
		/* Made fit by cgroup_put, and nothing ran since: it is. */
		if (!(cg->ready && cg->idle) && !cgroup_leaf_ready(cg))
			continue;
		cg->ready = 0;
		cg->owner = owner;
		return (cg);
	}
	return (NULL);
}

void
cgroup_put(struct cgroup *cg)
{
	if (cg == NULL)
		return;
	if (cgroup_populated(cg) == 1)
		cgroup_kill(cg);
	cg->owner = NULL;
	if (cg->wd != -1)
		inotify_rm_watch(cg->pool->inotify_fd, cg->wd);
	cg->wd = -1;
	if (cgroup_populated(cg) == 0)	/* else cgroup_take() makes it fit */
		cg->ready = cgroup_leaf_ready(cg) && cg->idle;
}

int
cgroup_fd(struct cgroup *cg)
{
	cg->idle = cg->counted = cg->ready = 0;	/* a child may enter now */
	return (cg->dirfd);
}

int
cgroup_populated(struct cgroup *cg)
{
	char	buf[256];
	ssize_t	n;

	if (cg->idle)
		return (0);
	n = pread(cg->events_fd, buf, sizeof buf - 1, 0);
	if (n == -1)
		return (-1);
	buf[n] = '\0';
	if (strstr(buf, "populated 1") != NULL)
		return (1);
	cg->idle = 1;		/* nothing inside can start anything now */
	return (0);
}

int
cgroup_kill(struct cgroup *cg)
{
	cg->killed = 1;
	return (pwrite(cg->kill_fd, "1", 1, 0) == 1 ? 0 : -1);
}

int
cgroup_signal(struct cgroup *cg, int sig)
{
	FILE	*f;
	long	 pid;
	int	 fd;

	fd = openat(cg->dirfd, "cgroup.procs", O_RDONLY|O_CLOEXEC);
	if (fd == -1 || (f = fdopen(fd, "r")) == NULL) {
		if (fd != -1)
			close(fd);
		return (-1);
	}
	while (fscanf(f, "%ld", &pid) == 1)
		kill((pid_t)pid, sig);
	fclose(f);
	return (0);
}
