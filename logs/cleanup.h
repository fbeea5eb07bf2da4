#ifndef EXECQ_CLEANUP_H
#define EXECQ_CLEANUP_H

/*
 * Clean-up of a log dir by each item's state: an id's files (<id>.log,
 * <id>.json, a leftover .<id>.json.tmp) are judged together and removed
 * together, when the newest of them was last modified before the limit
 * and its command is not running. Running means: the worker holds a
 * lock on <id>.log (execlog_open takes it; a foreground command writes
 * no metadata), or <id>.json says "status":"running" with a "pid" alive
 * on this host (a session). Used, with the same rule, by the worker at
 * start-up (log_max_age_hours) and by `execq cleanup` (cron).
 */

struct cleanup_stats {
	unsigned		 removed;	/* files (would be) removed */
	unsigned		 kept_running;	/* files of running commands */
	unsigned		 kept_recent;	/* files newer than the limit */
	unsigned long long	 bytes;		/* bytes (would be) freed */
};

/* Called for each file removed (or that would be, with dry_run). */
typedef void (*cleanup_file_cb)(const char *path, void *arg);

/*
 * Cleans dir of the finished items older than max_age_hours; 0 hours
 * means cleanup is off (nothing is removed), in every caller. 0, or -1
 * with errno if dir cannot be read or max_age_hours is negative (a
 * missing dir is 0 with nothing done). cb may be NULL.
 */
int	cleanup_logs(const char *dir, double max_age_hours, int dry_run,
	    cleanup_file_cb cb, void *arg, struct cleanup_stats *);

#endif
