/* Daemon diagnostics: one line each on stderr, with the time and the level. */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "logs/clock.h"
#include "logs/log.h"

static const char	*log_prog = "execq";
static enum log_level	 log_min = LOG_LEVEL_INFO;

void
log_init(const char *prog, enum log_level level)
{
	log_prog = prog;
	log_min = level;
}

int
log_open(const char *path)
{
	int	fd, saved;

	fd = open(path, O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC|O_NOCTTY, 0640);
	if (fd == -1)
		return (-1);
	fflush(stderr);
	if (dup2(fd, STDERR_FILENO) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	close(fd);
	return (0);
}

int
log_enabled(enum log_level level)
{
	return (level >= log_min);
}

/* One write per line so lines from several processes do not interleave. */
static void
log_vwrite(const char *level, const char *fmt, va_list ap)
{
	char		 line[2048], now[CLOCK_ISO_LEN];
	int		 n, m;

	clock_wall_iso(now, sizeof now);
	n = snprintf(line, sizeof line, "%s %s[%s] ", now, log_prog, level);
	m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	if ((size_t)(n + m) > sizeof line - 2)
		m = sizeof line - 2 - n;
	line[n + m] = '\n';
	fwrite(line, 1, n + m + 1, stderr);
	fflush(stderr);
}

void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	if (log_min > LOG_LEVEL_DEBUG)
		return;
	va_start(ap, fmt);
	log_vwrite("debug", fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	ap;

	if (log_min > LOG_LEVEL_INFO)
		return;
	va_start(ap, fmt);
	log_vwrite("info", fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list	ap;

	if (log_min > LOG_LEVEL_WARN)
		return;
	va_start(ap, fmt);
	log_vwrite("warn", fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vwrite("fatal", fmt, ap);
	va_end(ap);
	exit(1);
}
