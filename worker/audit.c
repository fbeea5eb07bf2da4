/* The audit log: one JSON object per line, appended. */


#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "logs/clock.h"
#include "logs/execlog.h"
#include "logs/log.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "worker/audit.h"

struct audit {
	int	 fd;
	char	*path;
	int	 err;		/* the last line's errno; 0: written */
};

struct audit *
audit_open(const char *state_dir)
{
	struct audit	*a;
	char		*path;
	int		 fd;

	xasprintf(&path, "%s/audit.log", state_dir);
	fd = execlog_open_safe(path, O_WRONLY|O_APPEND|O_CREAT, 0640);
	if (fd == -1) {
		free(path);
		return (NULL);
	}
	a = xcalloc(1, sizeof *a);
	a->fd = fd;
	a->path = path;
	return (a);
}

int
audit_reopen(struct audit *a)
{
	int	fd;

	fd = execlog_open_safe(a->path, O_WRONLY|O_APPEND|O_CREAT, 0640);
	if (fd == -1)
		return (-1);
	close(a->fd);
	a->fd = fd;
	return (0);
}

void
audit_close(struct audit *a)
{
	if (a == NULL)
		return;
	close(a->fd);
	free(a->path);
	free(a);
}

/* Sets key to s (as valid UTF-8) unless s is NULL. */
static void
audit_set(json_t *o, const char *key, const char *s)
{
	char	*clean;
	size_t	 n;

	if (s == NULL)
		return;
	clean = item_utf8_sanitize(s, strlen(s), &n);
	json_object_set_new(o, key, json_stringn_nocheck(clean, n));
	free(clean);
}

int
audit_error(const struct audit *a)
{
	return (a != NULL ? a->err : 0);
}

const char *
audit_path(const struct audit *a)
{
	return (a->path);
}

void
audit_writable(struct audit *a)
{
	if (a->err != 0)
		log_info("audit %s can be written again", a->path);
	a->err = 0;
}

int
audit_write(struct audit *a, const struct audit_event *e)
{
	json_t	*o;
	char	 now[64], *line, *nl;
	size_t	 len;
	ssize_t	 n;
	int	 err = 0;

	if (a == NULL)
		return (0);
	clock_wall_iso(now, sizeof now);
	if ((o = json_object()) == NULL)
		fatal("out of memory");
	audit_set(o, "time", now);
	audit_set(o, "event", e->event);
	audit_set(o, "id", e->id);
	audit_set(o, "request", e->request);
	audit_set(o, "command", e->command);
	audit_set(o, "cwd", e->cwd);
	audit_set(o, "risk", e->risk);
	audit_set(o, "rule", e->rule);
	audit_set(o, "reason", e->reason);
	audit_set(o, "tier", e->tier);
	audit_set(o, "by", e->by);
	audit_set(o, "queue", e->queue);
	audit_set(o, "worker", e->worker);
	line = json_dumps(o, JSON_COMPACT|JSON_PRESERVE_ORDER);
	json_decref(o);
	if (line == NULL)
		fatal("out of memory");
	len = strlen(line);
	nl = xmalloc(len + 2);
	memcpy(nl, line, len);
	nl[len++] = '\n';
	free(line);
	if ((n = write(a->fd, nl, len)) != (ssize_t)len) {
		err = n == -1 ? errno : ENOSPC;
		if (a->err == 0)
			log_warn("audit %s: %s", a->path, n == -1 ?
			    strerror(err) : "short write");
	}
	free(nl);
	if (err == 0 && a->err != 0)
		log_info("audit %s can be written again", a->path);
	a->err = err;
	errno = err;
	return (err != 0 ? -1 : 0);
}
