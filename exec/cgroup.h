#ifndef EXECQ_CGROUP_H
#define EXECQ_CGROUP_H

/*
 * A pool of empty cgroup v2 leaves, one per process slot, made once at
 * start-up: creating and removing a cgroup per command costs about a
 * millisecond, reusing one costs nothing. A child is placed in its leaf
 * atomically (clone3 CLONE_INTO_CGROUP, see spawn.h), so everything it
 * starts, setsid'd or double-forked, stays inside and cgroup.kill ends it.
 */

struct cgroup;
struct cgroup_pool;

/*
 * Makes n leaves under <spec>/execq-<pid> ("auto": this process's own
 * cgroup on the cgroup2 mount), pid being name_pid (0: our own). Returns
 * NULL with an allocated *cause when cgroups cannot be used; with spec
 * "off", NULL and *cause NULL. Leftover execq-<pid> folders of dead
 * workers are killed and removed.
 *
 * Under a holder (worker/holder.h) name_pid is the holder's: the folder
 * outlives each worker, and the leaves of the sessions handed over are
 * found there still running. The new worker takes them (cgroup_adopt),
 * then kills what the others still hold (cgroup_pool_reclaim): the
 * commands of a worker that died mid-item.
 */
struct cgroup_pool	*cgroup_pool_create(const char *spec, unsigned n,
			    long name_pid, char **cause);
/* Leaf index of the pool for owner, as it is (running); NULL if none. */
struct cgroup		*cgroup_adopt(struct cgroup_pool *, unsigned index,
			    void *owner);
/* Kills what runs in the leaves nobody took; how many. NULL ok. */
unsigned		 cgroup_pool_reclaim(struct cgroup_pool *);
/* The leaf's index in its pool (what cgroup_adopt takes). */
unsigned		 cgroup_index(const struct cgroup *);
/*
 * The leaf's session goes on under the holder: it is left as it is, and
 * cgroup_pool_free then removes only the other leaves. NULL ok.
 */
void			 cgroup_keep(struct cgroup *);
/*
 * The same for a probe (--check-confinement): no dead worker's folder is
 * swept, here, in cgroup_pool_limit or in cgroup_pool_sweep; its own
 * folders go with cgroup_pool_free.
 */
struct cgroup_pool	*cgroup_pool_probe(const char *spec, unsigned n,
			    char **cause);
/*
 * Gives every leaf a cgroup v1 pids and memory group beside it (under
 * this process's own v1 groups, so an outer limit still holds) with
 * pids.max and memory.limit_in_bytes set. 0, or -1 with an allocated
 * *cause when v1 cannot be used (the leaves then have no limits).
 */
int			 cgroup_pool_limit(struct cgroup_pool *,
			    unsigned max_pids, unsigned long long max_memory,
			    char **cause);
/*
 * Kills what is left in the execq-<pid> folders beside the pool whose
 * worker is gone (a dead worker's commands must not outlive it, nor run
 * beside their retry): cgroup.kill at once, the folders removed when
 * empty (now, or at a later sweep: this never waits). How many. NULL ok.
 */
unsigned		 cgroup_pool_sweep(struct cgroup_pool *);
/* Kills whatever is left in the leaves and removes them. NULL ok. */
void			 cgroup_pool_free(struct cgroup_pool *);
/* The pool's directory, for messages. */
const char		*cgroup_pool_path(const struct cgroup_pool *);
/*
 * The inotify fd that turns readable when a watched leaf's cgroup.events
 * changes (see cgroup_watch);
 * cgroup_pool_changed() then reads it and returns, one per call, the
 * owners of the leaves that changed (NULL when there are no more).
 */
int			 cgroup_pool_fd(const struct cgroup_pool *);
void			*cgroup_pool_changed(struct cgroup_pool *);

/*
 * An empty leaf for owner, or NULL if none is free. Nothing of an earlier
 * command is left in it: no process (a leaf that was killed is made anew
 * once empty), and no memory charge above a small leftover (the leaf's
 * v1 memory group is made anew, at 0, when the last command left more:
 * tmpfs or SysV pages, page cache of the files it wrote).
 */
struct cgroup		*cgroup_take(struct cgroup_pool *, void *owner);
/*
 * Back to the pool; kills anything still inside first. An empty leaf is
 * made fit for the next command here (see cgroup_take), so remove what
 * the command leaves that is charged to it (its tmp dir) before. NULL ok.
 */
void			 cgroup_put(struct cgroup *);
/*
 * The leaf's v1 pids and memory cgroup.procs (the child writes "0" to
 * join). 0, or -1 (fds -1) without limits.
 */
int			 cgroup_v1_fds(const struct cgroup *, int fds[2]);
/*
 * Counters of the v1 groups so far: forks refused, OOM kills (read once
 * while the leaf is empty: they stay as they are).
 */
void			 cgroup_limit_events(struct cgroup *,
			    unsigned long long *pids_hit,
			    unsigned long long *oom_kills);
/*
 * O_DIRECTORY fd of the leaf, for CLONE_INTO_CGROUP: a child may enter
 * it now, so the leaf is no longer known to be empty (cgroup_populated
 * and cgroup_limit_events read its files again).
 */
int			 cgroup_fd(struct cgroup *);
/*
 * Watches the leaf until it goes back to the pool: a watch costs syscalls,
 * so it is only set when someone waits for the leaf to empty. 0 or -1.
 */
int			 cgroup_watch(struct cgroup *);
/*
 * 1 if a process is inside, 0 if empty, -1 with errno. Once it reads
 * empty, it stays so without a read until the next cgroup_fd(): nothing
 * can enter an empty leaf but a child cloned into it.
 */
int			 cgroup_populated(struct cgroup *);
/* SIGKILL to everything inside, atomically (cgroup.kill). 0 or -1. */
int			 cgroup_kill(struct cgroup *);
/* sig to every process inside (cgroup.procs); 0 or -1. */
int			 cgroup_signal(struct cgroup *, int sig);

#endif
