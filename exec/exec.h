#ifndef EXECQ_EXEC_H
#define EXECQ_EXEC_H

/*
 * One running command: its process tree, its output (captured and logged)
 * and its timers. An exec finishes in one place, once its main process is
 * reaped, its output has reached EOF and its cgroup is empty; then the
 * done callback runs and the exec is freed.
 */

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "logs/errcode.h"

struct cgroup_pool;
struct confine;
struct event_base;
struct exec;
struct json_t;
struct rusage;
struct syncer;

/* Settings shared by every exec; borrowed, must outlive them. */
struct exec_config {
	const char	*shell;
	const char	*log_dir;
	unsigned	 kill_grace_ms;		/* TERM -> KILL */
	unsigned	 drain_ms;		/* output still open after exit */
	int		 log_fsync;		/* fsync every log, off the loop */
	unsigned long long log_max_bytes;	/* then only the tail is kept */
	unsigned	 max_pids;		/* cgroup v1 limits, as set */
	unsigned long long max_memory;
	struct syncer	*syncer;		/* fsyncs logs; the caller's */
	unsigned	 spare_files;		/* made ahead (logs/spare.h) */
};

/* How one command was confined (all 0: not at all). */
struct exec_confinement {
	int		 landlock;	/* Landlock ABI applied, 0: none */
	int		 seccomp;
	int		 namespaces;	/* mount and (without network) net */
	int		 network;	/* the command had network */
	int		 privileges;	/* dropped (or run_as) */
	int		 limits;	/* cgroup v1 pids and memory */
	unsigned	 pids_max;
	unsigned long long memory_max;
	unsigned long long pids_limit_hit;	/* forks refused (at the end) */
	unsigned long long oom_kills;		/* OOM kills (at the end) */
};

/* New output as it arrives, of fd 1 (stdout, or the PTY) or 2; borrowed. */
typedef void (*exec_output_cb)(struct exec *, int fd, const char *buf,
    size_t len, void *arg);

/* What to run; all borrowed for the length of exec_start(). */
struct exec_spec {
	const char	*id;		/* checked: safe as a file name */
	const char	*log_id;	/* its log is <log_id>.log; NULL: id */
	const char	*command;
	char *const	*argv_direct;	/* command's words, exec'd without
					   the shell (worker/direct.h), as
					   dash would with PWD=cwd added;
					   NULL, or PWD set: through it */
	const char	*cwd;		/* absolute, already checked */
	char *const	*envp;
	unsigned	 timeout_ms;	/* 0: none */
	size_t		 output_cap;	/* per stream, head + tail */
	int		 pty;
	unsigned	 rows, cols;
	int		 input_socket;	/* a session's stdin: a one-way
					   socket, not a pipe (a shell's) */
	int		 background;	/* a session: stdin is a pipe (or the
					   PTY), the log is fsync'd at the end,
					   leftovers get drain_ms after exit */
	unsigned	 idle_timeout_ms;	/* 0: none; idle: no output and
						   no input (exec_write) */
	exec_output_cb	 outputcb;	/* NULL: none; called with arg */
	int		 network;	/* confined with the host's network */
	const char	*proxy_url;	/* else, with the worker's proxy as its
					   only way out: HTTP_PROXY and the
					   like; NULL: no network */
	int		 proxy_port;	/* ... at 127.0.0.1 in the namespace:
					   the one TCP port it may connect to */
	const char	*grant;		/* a file a human approved, as
					   exec_grant_record recorded it when
					   the approval was asked for:
					   writable for it if it is still
					   that file; NULL: none */
	const char	*token;		/* a session's, kept in <id>.json so
					   its owner can still read it from
					   the files; NULL: none */
};

enum exec_end {
	EXEC_END_EXIT = 0,	/* it exited or died by itself */
	EXEC_END_TIMEOUT,
	EXEC_END_KILLED,	/* exec_kill() by a user */
	EXEC_END_IDLE,		/* no output or input for idle_timeout_ms */
	EXEC_END_SHUTDOWN,	/* the worker is stopping */
};

/* The facts of a finished exec, from exec_result(). */
struct exec_result {
	int		 exit_code;	/* 128+n if killed by signal n */
	int		 signal;	/* 0: none */
	enum exec_end	 end;
	char		*out, *err;	/* capped, allocated; err NULL for PTY */
	size_t		 out_len, err_len;
	int		 truncated;
	uint64_t	 output_bytes;	/* everything read, before capping */
	int64_t		 started_ms;	/* wall clock, ms since the epoch */
	int64_t		 duration_ms;
	int64_t		 user_ms, sys_ms, max_rss_kb;
	const char	*log_path;	/* borrowed from the exec */
	int		 log_error;	/* errno of a failed log write, or 0 */
	pid_t		 pid;
	struct exec_confinement confinement;
};

/* Called once when the exec is finished; the exec is freed on return. */
typedef void (*exec_done_cb)(struct exec *, void *arg);

/*
 * Sets up the module: the loop, the settings, the cgroup pool (NULL:
 * no cgroups; the worker becomes a subreaper and sweeps instead) and the
 * confinement (NULL: none). Takes both. 0, or -1 with errno.
 */
int		 exec_init(struct event_base *, const struct exec_config *,
		    struct cgroup_pool *, struct confine *);
/*
 * Kills and frees every exec without calling back; then the pool. Free
 * the syncer first: its callbacks would reach freed execs.
 */
void		 exec_shutdown(void);
/*
 * Starts spec. NULL when it cannot start, with *code (log_failed,
 * log_unsafe, confine_failed, spawn_failed) and an allocated *cause;
 * nothing is left open or running.
 */
struct exec	*exec_start(const struct exec_spec *, exec_done_cb, void *arg,
		    enum errcode *code, char **cause);
/* The commands' network namespace (-1: none), for the proxy to listen in. */
int		 exec_netns_fd(void);
/*
 * The record of a grant of path (absolute) that exec_start's spec.grant
 * takes, made when a human is asked for it (confine_grant_record): what
 * the path is now, so that the start opens only that. Allocated; NULL
 * when nothing is confined (no grant is needed).
 */
char		*exec_grant_record(const char *path);
/*
 * Ends the whole tree: sig (usually SIGTERM) to every process in it, then
 * SIGKILL after the grace period. The exec finishes with end why (the
 * first reason given wins).
 */
void		 exec_kill(struct exec *, int sig, enum exec_end why);
/*
 * Writes to the command's stdin (or its PTY) without blocking: returns the
 * bytes taken (maybe fewer than len), or -1 with errno (EPIPE: closed).
 */
ssize_t		 exec_write(struct exec *, const void *, size_t);
/* Closes stdin (EOF for the command); on a PTY sends ^D. 0 or -1. */
int		 exec_close_input(struct exec *);
/*
 * When it last printed or was written to (exec_write, exec_close_input),
 * wall clock in ms; its start until then.
 */
int64_t		 exec_active_ms(const struct exec *);
/* Bytes of output so far (both streams). */
unsigned long long exec_output_bytes(const struct exec *);
const char	*exec_log_path(const struct exec *);
/* Routes a reaped child; 0 if the pid is not one of ours. */
int		 exec_reaped(pid_t, int status, const struct rusage *);
/*
 * The same for an exec reaped by another process (worker/holder.h): it
 * must be exec id's pid, so a pid used again is never taken for it (id
 * NULL: any exec of that pid, as exec_reaped).
 */
int		 exec_reaped_id(const char *id, pid_t, int status,
		    const struct rusage *);
/* "completed", "failed", "timed_out" or "killed". */
const char	*exec_status_name(const struct exec_result *);
/*
 * "user", "timeout", "idle", "shutdown", "memory_limit" (the OOM killer
 * of its memory limit killed it) or NULL.
 */
const char	*exec_killed_by(const struct exec_result *);
/* Fills *r; call from the done callback. Release with exec_result_release. */
void		 exec_result(struct exec *, struct exec_result *);
void		 exec_result_release(struct exec_result *);
const char	*exec_id(const struct exec *);
/* How it is confined (the limit counters as of now). */
void		 exec_confinement(const struct exec *,
		    struct exec_confinement *);
/*
 * The "confinement" object of answers and the metadata file, a new
 * reference: {"landlock": 7, "seccomp": true, "namespaces": true,
 * "network": false, "privileges": "dropped", "pids_max": 512,
 * "memory_max": 2147483648, "pids_limit_hit": 0, "oom_kills": 0} (the
 * counters only when at_end), or {"confined": false}.
 */
struct json_t	*exec_confinement_json(const struct exec_confinement *,
		    int at_end);
pid_t		 exec_pid(const struct exec *);

/*
 * Sessions that outlive the worker (worker/holder.h). The fds the holder
 * keeps a copy of: the output (or the PTY), stderr and stdin (-1: none).
 */
void		 exec_hold_fds(const struct exec *, int fds[3]);
/* Its tmp dir (TMPDIR), or NULL. */
const char	*exec_tmp(const struct exec *);
/* Its cgroup leaf's index (what exec_adopted.leaf takes), or -1. */
int		 exec_leaf(const struct exec *);
/* What is left of its timeout, in ms; 0: none. */
int64_t		 exec_timeout_left_ms(const struct exec *);
/*
 * 1 with its wait status and resource use if its main process was reaped
 * already (it may still be draining its output), else 0.
 */
int		 exec_exit_status(const struct exec *, int *status,
		    struct rusage *);
/*
 * Frees ex without a signal or a callback: its processes, tmp and leaf
 * go on (the holder has them now); this worker's copies of its fds close.
 */
void		 exec_leave(struct exec *);

/* A running session an earlier worker handed over, as exec_adopt takes. */
struct exec_adopted {
	const char	*id, *command, *cwd, *token;
	const char	*tmp;		/* its tmp dir, or NULL */
	pid_t		 pid;		/* not our child: the holder reaps it
					   and tells exec_reaped */
	int		 pty;
	int		 out_fd, err_fd, in_fd;	/* taken, -1: none */
	int		 leaf;		/* cgroup leaf index, -1: none */
	int64_t		 started_ms;
	int64_t		 timeout_left_ms;	/* 0: none */
	unsigned	 idle_timeout_ms;
	unsigned long long output_bytes;	/* counted so far */
	size_t		 output_cap;
	exec_output_cb	 outputcb;
	struct exec_confinement conf;
};
/*
 * Takes over a running session: its log is appended to from where it
 * stopped, its timers go on from what was left. NULL with an allocated
 * *cause (the fds are closed then).
 */
struct exec	*exec_adopt(const struct exec_adopted *, exec_done_cb,
		    void *arg, char **cause);
/*
 * The worker's end of the command's input, borrowed, for a look at who
 * reads it: the PTY master (*pty set to 1) or the write end of a
 * session's stdin pipe (*pty 0); -1 when there is none (closed).
 */
int		 exec_input_fd(const struct exec *, int *pty);
/*
 * The O_DIRECTORY fd of its cgroup leaf (borrowed; its cgroup.procs lists
 * the command's processes), or -1 when it runs without one.
 */
int		 exec_cgroup_fd(const struct exec *);
/* How many execs are running. */
unsigned	 exec_count(void);

#endif
