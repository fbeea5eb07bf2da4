#ifndef EXECQ_LOG_H
#define EXECQ_LOG_H

/*
 * Daemon diagnostics, one line each on stderr:
 *   <time> <prog>[level] <what>
 * Exec output never goes here: it is data (logs/execlog.h).
 */

enum log_level {
	LOG_LEVEL_DEBUG = 0,
	LOG_LEVEL_INFO,
	LOG_LEVEL_WARN,
	LOG_LEVEL_QUIET,
};

/* Program name in each line, and the lowest level printed. */
void	log_init(const char *prog, enum log_level);
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
/* Logs and exits 1: start-up errors and "cannot happen" only. */
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
int	log_enabled(enum log_level);
/*
 * Sends the lines (all of stderr) to path, appended, created 0640; called
 * again it reopens (SIGHUP after logrotate). -1 and errno, stderr kept.
 */
int	log_open(const char *path);

#endif
