#ifndef EXECQ_CLEANUP_H
#define EXECQ_CLEANUP_H

/*
 * Age-based clean-up of a log dir: <id>.log, <id>.json and leftover
 * .<id>.json.tmp files whose modification time is older than the limit
 * are removed, except the files of a session that is still running (its
 * <id>.json says "status":"running" and its "pid" is alive on this host).
 * Used by the worker at start-up and by `execq cleanup` (cron).
 */

struct cleanup_stats {
	unsigned		 removed;	/* files (would be) removed */
	unsigned		 kept_running;	/* files of running sessions */
	unsigned		 kept_recent;	/* files newer than the limit */
	unsigned long long	 bytes;		/* bytes (would be) freed */
};

/* Called for each file removed (or that would be, with dry_run). */
typedef void (*cleanup_file_cb)(const char *path, void *arg);

/*
 * Cleans dir. 0, or -1 with errno if dir cannot be read (a missing dir is
 * 0 with nothing done). cb may be NULL.
 */
int	cleanup_logs(const char *dir, double max_age_hours, int dry_run,
	    cleanup_file_cb cb, void *arg, struct cleanup_stats *);

#endif
