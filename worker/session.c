/*
 * Background and PTY sessions (worker/session.h): the registry, the
 * process actions on them (poll, log, write, send-keys, kill, wait,
 * list), their EXEC_CALLBACK, and what Redis shows of them, which
 * queue/store.c writes from the values given here (the mirror, the
 * index, the running set, the fence check).
 */

#include <sys/queue.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "exec/exec.h"
#include "exec/keys.h"
#include "logs/execlog.h"
#include "logs/log.h"
#include "logs/syncer.h"
#include "logs/tail.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "worker/config.h"
#include "worker/live.h"
#include "worker/metrics.h"
#include "worker/session.h"

#define SESSION_TAIL_LINE	500	/* bytes per callback tail line */
#define SESSION_TAIL_MEM	8192	/* output kept in memory, per stream */
#define SESSION_POLL_MAX	65536	/* poll's default max_bytes */
#define SESSION_LOG_MAX		(1 << 20)	/* bytes per log answer */
#define SESSION_WAIT_MS		30000	/* wait's default */
#define SESSION_RUNNING_TTL	604800	/* mirror of a running one */

struct session;

/* A poll or wait that is held until output, the end, or its deadline. */
struct waiter {
	LIST_ENTRY(waiter)	 entry;
	struct session		*s;
	enum item_action	 action;
	char			*item_id;
	long			 offset, max_bytes;
	int			 base64;
	int64_t			 deadline_ms;	/* wall clock: then answer */
	struct event		*ev_timer;
	sessions_answer_cb	 cb;
	void			*arg;
};

struct session {
	LIST_ENTRY(session)	 entry;
	struct sessions		*ss;
	char			*id, *item_id, *command, *reply_to, *log_path;
	struct exec		*ex;		/* NULL once ended */
	pid_t			 pid;
	int			 pty;
	unsigned		 tail_lines;
	int64_t			 started_ms, ended_ms;
	unsigned long long	 output_bytes;
	json_t			*final;		/* the callback, once ended */
	struct item_session_status status;	/* running, or how it ended */
	long long		 serial;	/* names it in a fence check */
	char			 token[33];	/* whoever has it may act on it */
	struct live		*live;		/* execq:out:<id> */
	LIST_HEAD(, waiter)	 waiters;
};

struct sessions {
	struct event_base	*base;
	struct queue		*q;
	const struct config	*cfg;
	LIST_HEAD(, session)	 list;
	unsigned		 nrunning, nended;
	sessions_slot_cb	 slotcb;
	void			*arg;
	sessions_held_cb	 heldcb;	/* list: held items */
	void			*heldarg;
	long long		 serial;	/* the last session's */
	struct syncer		*syncer;	/* reads logs off the loop */
	struct metrics		*metrics;	/* NULL: none */
};

static void	session_wake(struct session *);

/* Wall-clock milliseconds. */
static int64_t
session_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}



/* Answers with a PROCESS_RESULT made of fields (stolen). */
static void
session_answer(const char *item_id, const char *action, const char *sid,
    json_t *fields, sessions_answer_cb cb, void *arg)
{
	char	*text;
	size_t	 len;

	text = item_process_result_to_json(item_id, action, sid, fields, &len);
	cb(NULL, text, len, arg);
	free(text);
}

/* Answers with an ERROR. */
static void
session_error(const char *code, sessions_answer_cb cb, void *arg,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void
session_error(const char *code, sessions_answer_cb cb, void *arg,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatal("out of memory");
	va_end(ap);
	cb(code, msg, strlen(msg), arg);
	free(msg);
}

/*
 * Mirrors the session's state to execq:session:<id>: a running one for
 * a week, an ended one for session_ttl_s.
 */
static void
session_mirror(struct session *s)
{
	struct queue_session	m;

	memset(&m, 0, sizeof m);
	m.id = s->id;
	m.pid = (long)s->pid;
	m.command = s->command;
	m.status = "running";
	m.log_path = s->log_path;
	m.started_ms = (long long)s->started_ms;
	m.reply_to = s->reply_to;
	m.pty = s->pty;
	m.output_bytes = s->output_bytes;
	if (s->final != NULL) {
		m.ended = 1;
		m.status = json_string_value(json_object_get(s->final,
		    "status"));
		m.exit_code = (long long)json_integer_value(json_object_get(
		    s->final, "exit_code"));
		m.ended_ms = (long long)s->ended_ms;
	}
	queue_session_mirror(s->ss->q, &m, s->final == NULL ?
	    SESSION_RUNNING_TTL : s->ss->cfg->session_ttl_s);
}

/* Lists the session in execq:sessions (by start time) and as running. */
static void
session_index(struct session *s)
{
	queue_session_index(s->ss->q, s->id, (long long)s->started_ms);
}

/* New output: into the live stream (coalesced), and wake the pollers. */
static void
session_output_cb(struct exec *ex, int fd, const char *buf, size_t len,
    void *arg)
{
	struct session	*s = arg;

	(void)ex;
	s->output_bytes += len;
	live_output(s->live, fd, buf, len);
	session_wake(s);
}


/*
 * A poll or log read of a session's log. For a live session it runs on
 * the syncer's thread (a disk read never waits on the loop) and the
 * session is looked up again by id when it is done; for one that only
 * the disk remembers, at once.
 */
struct session_read {
	struct sessions		*ss;
	char			*sid, *path, *item_id;
	enum item_action	 action;	/* poll or log */
	long			 offset, max, lines;
	int			 base64, may_wait;
	int64_t			 deadline_ms;	/* a poll may wait till then */
	sessions_answer_cb	 cb;
	void			*arg;
	char			*buf;		/* what was read */
	size_t			 len;
	long long		 size;		/* the log's size */
	int			 offline;	/* a session only the disk
						   remembers: */
	char			*meta_path;	/* its <id>.json, */
	json_t			*meta;		/* ... read with the log */
	char			*token;		/* what the caller showed */
	int			 operator;	/* ... or the operator token */
};

static void	session_hold_poll(struct session *, struct session_read *);
static void	session_answer_wait(struct session *, const char *, int,
		    sessions_answer_cb, void *);
static int	 session_token_eq(const char *, const char *);

static struct session_read *
session_read_new(struct session *s, enum item_action action,
    const char *item_id, long offset, long max, sessions_answer_cb cb,
    void *arg)
{
	struct session_read	*r;

	r = xcalloc(1, sizeof *r);
	r->ss = s->ss;
	r->sid = xstrdup(s->id);
	r->path = xstrdup(s->log_path);
	r->item_id = xstrdup(item_id);
	r->action = action;
	r->offset = offset;
	r->max = max;
	r->cb = cb;
	r->arg = arg;
	return (r);
}

static void
session_read_free(struct session_read *r)
{
	free(r->sid);
	free(r->path);
	free(r->item_id);
	free(r->buf);
	free(r->meta_path);
	free(r->token);
	json_decref(r->meta);
	free(r);
}

/*
 * On the syncer's thread (or inline): up to max bytes of the log from
 * offset (log with lines: from near the end), and the log's size.
 */
static int
session_read_work(void *arg)
{
	struct session_read	*r = arg;
	struct stat		 st;
	ssize_t			 n;
	int			 fd;

	if (r->meta_path != NULL &&
	    (fd = execlog_open_safe(r->meta_path, O_RDONLY, 0)) != -1) {
		r->meta = json_loadfd(fd, 0, NULL);
		close(fd);
	}
	r->buf = xmalloc(r->max + 1);
	if ((fd = execlog_open_safe(r->path, O_RDONLY, 0)) == -1)
		return (0);	/* nothing to read (or refused): empty */
	if (fstat(fd, &st) == 0)
		r->size = st.st_size;
	if (r->lines > 0)	/* the end of the log, cut to lines later */
		r->offset = r->size > SESSION_LOG_MAX ?
		    (long)(r->size - SESSION_LOG_MAX) : 0;
	if (r->offset < r->size) {
		n = pread(fd, r->buf, r->max, r->offset);
		if (n > 0)
			r->len = n;
	}
	close(fd);
	return (0);
}

/* A poll's answer: status and the output from offset. */
static void
session_answer_poll(struct session *s, struct session_read *r)
{
	struct item_read	 rd;

	memset(&rd, 0, sizeof rd);
	rd.buf = r->buf;
	rd.len = r->len;
	rd.base64 = r->base64;
	rd.offset = r->offset;
	rd.eof = s->final != NULL &&
	    (long long)(r->offset + r->len) >= r->size;
	session_answer(r->item_id, "poll", s->id, item_poll_to_json(&s->status,
	    &rd), r->cb, r->arg);
}

/* A log's answer: the range read, or its last lines. */
static void
session_answer_log(struct session *s, struct session_read *r)
{
	struct item_read	 rd;
	size_t			 start = 0, i;
	long			 nl = 0;

	if (r->lines > 0) {
		for (i = r->len; i > 0; i--) {
			if (r->buf[i - 1] == '\n' && i != r->len &&
			    ++nl == r->lines)
				break;
		}
		start = i;
	}
	memset(&rd, 0, sizeof rd);
	rd.buf = r->buf + start;
	rd.len = r->len - start;
	rd.base64 = r->base64;
	rd.offset = r->offset + start;
	rd.size = r->size;
	session_answer(r->item_id, "log", s->id, item_log_to_json(&s->status,
	    &rd), r->cb, r->arg);
}

/* What was read answers the request, or a poll waits for output. */
static void
session_read_answer(struct session *s, struct session_read *r)
{
	if (r->action == ITEM_ACTION_LOG)
		session_answer_log(s, r);
	else if (r->len == 0 && s->final == NULL && r->may_wait &&
	    r->deadline_ms > session_now_ms()) {
		session_hold_poll(s, r);
		return;		/* the waiter has r's request now */
	} else
		session_answer_poll(s, r);
	session_read_free(r);
}

/*
 * A session only the disk remembers: its state from <id>.json ("running"
 * in the file of a session nobody runs means its worker died), then the
 * answer as for a live one.
 */
static void
session_read_offline(struct session_read *r)
{
	struct session	 s;
	const char	*status, *token;
	json_t		*code;

	/* Its owner (the token kept in the metadata) or an operator. */
	token = json_string_value(json_object_get(r->meta, "session_token"));
	if (!r->operator && (token == NULL ||
	    !session_token_eq(r->token, token))) {
		session_error("forbidden", r->cb, r->arg, "session %s %s",
		    r->sid, r->token == NULL ? "needs its token (args.token, "
		    "from its EXEC_STARTED)" : "has another token");
		session_read_free(r);
		return;
	}
	memset(&s, 0, sizeof s);
	s.id = r->sid;
	s.log_path = r->path;
	status = json_string_value(json_object_get(r->meta, "status"));
	s.status.status = status == NULL || strcmp(status, "running") == 0 ?
	    "lost" : status;
	s.status.ended = 1;
	code = json_object_get(r->meta, "exit_code");
	s.status.has_exit_code = json_is_integer(code);
	s.status.exit_code = (int)json_integer_value(code);
	s.status.signal = (int)json_integer_value(json_object_get(r->meta,
	    "signal"));
	s.status.killed_by = json_string_value(json_object_get(r->meta,
	    "killed_by"));
	s.final = item_session_end_to_json(&s.status, s.log_path);
	if (r->action == ITEM_ACTION_WAIT) {
		session_answer_wait(&s, r->item_id, 0, r->cb, r->arg);
		session_read_free(r);
	} else
		session_read_answer(&s, r);	/* frees r */
	json_decref(s.final);
}

/* Back on the loop. */
static void
session_read_done(int err, void *arg)
{
	struct session_read	*r = arg;
	struct session		*s;

	if (err == ECANCELED) {		/* shutting down: nobody to answer */
		session_read_free(r);
		return;
	}
	if (r->offline) {
		session_read_offline(r);
		return;
	}
	LIST_FOREACH(s, &r->ss->list, entry)
		if (strcmp(s->id, r->sid) == 0)
			break;
	if (s == NULL) {		/* forgotten meanwhile */
		session_error("unknown_session", r->cb, r->arg, "session %s "
		    "is gone from this worker", r->sid);
		session_read_free(r);
		return;
	}
	session_read_answer(s, r);
}

/* Starts a read: off the loop for a live session, else at once. */
static void
session_read_start(struct session *s, struct session_read *r)
{
	/* Only a session the disk remembers has no ss: it reads now. */
	if (s->ss != NULL && s->ss->syncer != NULL) {
		syncer_call(s->ss->syncer, session_read_work, session_read_done,
		    r);
		return;
	}
	(void)session_read_work(r);
	session_read_answer(s, r);
}

/* A poll: now, or (may_wait) once there is output, until deadline. */
static void
session_poll(struct session *s, const char *item_id, long offset,
    long max, int base64, int may_wait, int64_t deadline_ms,
    sessions_answer_cb cb, void *arg)
{
	struct session_read	*r;

	r = session_read_new(s, ITEM_ACTION_POLL, item_id, offset,
	    max > 0 ? max : SESSION_POLL_MAX, cb, arg);
	r->base64 = base64;
	r->may_wait = may_wait;
	r->deadline_ms = deadline_ms;
	session_read_start(s, r);
}

/* Answers a wait: the final fields, or "still running". */
static void
session_answer_wait(struct session *s, const char *item_id, int waited_out,
    sessions_answer_cb cb, void *arg)
{
	session_answer(item_id, "wait", s->id, item_wait_to_json(s->final,
	    waited_out), cb, arg);
}

/* Frees a waiter that has been answered or dropped. */
static void
session_waiter_free(struct waiter *w)
{
	LIST_REMOVE(w, entry);
	event_free(w->ev_timer);
	free(w->item_id);
	free(w);
}

/* A waiter's deadline: answer with what there is. */
static void
session_waiter_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct waiter	*w = arg;

	(void)fd;
	(void)what;
	if (w->action == ITEM_ACTION_POLL)
		session_poll(w->s, w->item_id, w->offset, w->max_bytes,
		    w->base64, 0, 0, w->cb, w->arg);
	else
		session_answer_wait(w->s, w->item_id, 1, w->cb, w->arg);
	session_waiter_free(w);
}

/*
 * Output or the end: a wait is answered once the session ended; a poll
 * reads again (it waits on if the read finds nothing new).
 */
static void
session_wake(struct session *s)
{
	struct waiter	*w, *next;

	for (w = LIST_FIRST(&s->waiters); w != NULL; w = next) {
		next = LIST_NEXT(w, entry);
		if (w->action == ITEM_ACTION_WAIT) {
			if (s->final == NULL)
				continue;
			session_answer_wait(s, w->item_id, 0, w->cb, w->arg);
		} else
			session_poll(s, w->item_id, w->offset, w->max_bytes,
			    w->base64, 1, w->deadline_ms, w->cb, w->arg);
		session_waiter_free(w);
	}
}

/* Holds a poll or wait until session_wake or deadline_ms. */
static struct waiter *
session_hold_until(struct session *s, enum item_action action,
    const char *item_id, int64_t deadline_ms, sessions_answer_cb cb,
    void *arg)
{
	struct waiter	*w;
	struct timeval	 tv;
	int64_t		 ms = deadline_ms - session_now_ms();

	if (ms < 0)
		ms = 0;
	w = xcalloc(1, sizeof *w);
	w->s = s;
	w->action = action;
	w->item_id = xstrdup(item_id);
	w->deadline_ms = deadline_ms;
	w->cb = cb;
	w->arg = arg;
	if ((w->ev_timer = evtimer_new(s->ss->base, session_waiter_timeout_cb,
	    w)) == NULL)
		fatal("out of memory (libevent)");
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(w->ev_timer, &tv);
	LIST_INSERT_HEAD(&s->waiters, w, entry);
	return (w);
}

/* A poll that read nothing new waits for output (r is used up). */
static void
session_hold_poll(struct session *s, struct session_read *r)
{
	struct waiter	*w;

	w = session_hold_until(s, ITEM_ACTION_POLL, r->item_id,
	    r->deadline_ms, r->cb, r->arg);
	w->offset = r->offset;
	w->max_bytes = r->max;
	w->base64 = r->base64;
	session_read_free(r);
}


/* The EXEC_CALLBACK of a finished exec: also the session's final state. */
static json_t *
session_callback(struct session *s, const struct exec_result *r)
{
	struct item_callback	 c;
	json_t			*o;
	char			**lines;
	unsigned		 n;

	/* A log that could not be written: the tail kept in memory. */
	if (r->log_error != 0 && r->out_len == 0 && r->err != NULL)
		lines = tail_lines_buf(r->err, r->err_len, s->tail_lines,
		    SESSION_TAIL_LINE, &n);
	else if (r->log_error != 0)
		lines = tail_lines_buf(r->out, r->out_len, s->tail_lines,
		    SESSION_TAIL_LINE, &n);
	else
		lines = tail_lines(s->log_path, s->tail_lines,
		    SESSION_TAIL_LINE, &n);
	memset(&c, 0, sizeof c);
	c.id = s->item_id;
	c.session_id = s->id;
	c.status = exec_status_name(r);
	c.exit_code = r->exit_code;
	c.signal = r->signal;
	c.killed_by = exec_killed_by(r);
	c.log_path = s->log_path;
	c.tail = (const char *const *)lines;
	c.ntail = n;
	c.duration_ms = r->duration_ms;
	c.output_bytes = r->output_bytes;
	c.ended_ms = s->ended_ms;
	c.user_ms = r->user_ms;
	c.sys_ms = r->sys_ms;
	c.max_rss_kb = r->max_rss_kb;
	c.worker = queue_consumer(s->ss->q);
	c.log_error = r->log_error != 0 ? strerror(r->log_error) : NULL;
	c.confinement = exec_confinement_json(&r->confinement, 1);
	o = item_callback_to_json(&c);
	json_decref(c.confinement);
	tail_free(lines);
	return (o);
}

/* Compares a token given with a session's, in constant time. */
static int
session_token_eq(const char *given, const char *token)
{
	unsigned char	diff = 0;
	size_t		i, n;

	if (given == NULL || (n = strlen(token)) != strlen(given))
		return (0);
	for (i = 0; i < n; i++)
		diff |= (unsigned char)given[i] ^ (unsigned char)token[i];
	return (diff == 0);
}

int
sessions_operator(const struct config *cfg, const struct item *it)
{
	return (cfg->operator_token != NULL && *cfg->operator_token != '\0' &&
	    session_token_eq(it->operator_token, cfg->operator_token));
}

/* list: is s one of the caller's (one of its tokens is s's)? */
static int
session_listed(const struct item *it, const struct session *s)
{
	size_t	i;

	for (i = 0; it->tokens != NULL && it->tokens[i] != NULL; i++)
		if (session_token_eq(it->tokens[i], s->token))
			return (1);
	return (session_token_eq(it->token, s->token));
}

/* Frees a session (ended, no waiters left). */
static void
session_free(struct session *s)
{
	struct waiter	*w;

	while ((w = LIST_FIRST(&s->waiters)) != NULL)
		session_waiter_free(w);
	LIST_REMOVE(s, entry);
	if (s->ex == NULL)
		s->ss->nended--;
	live_free(s->live);
	json_decref(s->final);
	free(s->id);
	free(s->item_id);
	free(s->command);
	free(s->reply_to);
	free(s->log_path);
	free(s);
}

/* Forgets finished sessions past session_ttl_s or session_keep. */
static void
session_prune(struct sessions *ss)
{
	struct session	*s, *next, *oldest;
	int64_t		 limit = session_now_ms() -
			    (int64_t)ss->cfg->session_ttl_s * 1000;

	for (s = LIST_FIRST(&ss->list); s != NULL; s = next) {
		next = LIST_NEXT(s, entry);
		if (s->ex == NULL && s->ended_ms < limit &&
		    LIST_EMPTY(&s->waiters))
			session_free(s);
	}
	while (ss->nended > ss->cfg->session_keep) {
		oldest = NULL;
		LIST_FOREACH(s, &ss->list, entry)
			if (s->ex == NULL && (oldest == NULL ||
			    s->ended_ms < oldest->ended_ms))
				oldest = s;
		if (oldest == NULL)
			break;
		session_free(oldest);
	}
}

/* The process ended and its log is on disk: call back, exactly once. */
static void
session_done_cb(struct exec *ex, void *arg)
{
	struct session		*s = arg;
	struct sessions		*ss = s->ss;
	struct exec_result	 r;
	char			*text;
	size_t			 len;

	exec_result(ex, &r);
	s->ex = NULL;
	s->ended_ms = session_now_ms();
	s->output_bytes = r.output_bytes;
	s->final = session_callback(s, &r);
	s->status.status = exec_status_name(&r);	/* static */
	s->status.ended = 1;
	s->status.has_exit_code = 1;
	s->status.exit_code = r.exit_code;
	s->status.signal = r.signal;
	s->status.killed_by = exec_killed_by(&r);	/* static or NULL */
	exec_result_release(&r);
	ss->nrunning--;
	ss->nended++;
	text = json_dumps(s->final, JSON_COMPACT);
	len = strlen(text);
	log_info("session %s: %s, exit %d", s->id, json_string_value(
	    json_object_get(s->final, "status")), (int)json_integer_value(
	    json_object_get(s->final, "exit_code")));
	live_flush(s->live);	/* its output before its callback */
	queue_answer(ss->q, s->reply_to, KS_LANE_HIGH, s->id,
	    QUEUE_STORE_CALLBACK, NULL, NULL, text, len);
	if (ss->metrics != NULL) {
		metrics_add(ss->metrics, METRICS_SESSIONS_ENDED, 1,
		    json_string_value(json_object_get(s->final, "status")),
		    NULL);
		metrics_add(ss->metrics, METRICS_CALLBACKS, 1, NULL, NULL);
		metrics_add(ss->metrics, METRICS_OUTPUT_BYTES, s->output_bytes,
		    "session", NULL);
	}
	/* The live stream's last entry says how it ended. */
	live_end(s->live, text, ss->cfg->session_ttl_s);
	free(text);
	session_mirror(s);
	queue_session_ended(ss->q, s->id);
	session_wake(s);
	session_prune(ss);
	ss->slotcb(ss->arg);
}

/* A new session, linked; not started yet. */
static struct session *
session_new(struct sessions *ss, const struct item *it)
{
	struct session	*s;

	s = xcalloc(1, sizeof *s);
	s->ss = ss;
	s->id = xstrdup(it->id);
	s->item_id = xstrdup(it->id);
	s->command = xstrdup(it->command);
	s->reply_to = xstrdup(it->reply_to != NULL ? it->reply_to :
	    ss->cfg->reply_default);
	s->pty = it->pty;
	s->tail_lines = it->tail_lines < 0 ? 5 : (unsigned)it->tail_lines;
	s->live = live_create(ss->base, ss->q, s->id, 0);
	s->started_ms = session_now_ms();
	s->status.status = "running";
	s->serial = ++ss->serial;
	sessions_new_token(s->token);
	LIST_INIT(&s->waiters);
	LIST_INSERT_HEAD(&ss->list, s, entry);
	return (s);
}

char *
sessions_start(struct sessions *ss, const struct item *it, const char *cwd,
    char *const *envp, int network, const char *grant, size_t *len,
    char **kept, size_t *kept_len, const char **code, char **cause)
{
	struct exec_confinement	 conf;
	struct item_started	 st;
	struct session		*s;
	struct exec_spec	 spec;
	char			*text;

	if (sessions_has(ss, it->id)) {
		*code = "duplicate_id";
		xasprintf(cause, "a session with id %s is known already",
		    it->id);
		return (NULL);
	}
	s = session_new(ss, it);
	memset(&spec, 0, sizeof spec);
	spec.id = it->id;
	spec.command = it->command;
	spec.cwd = cwd;
	spec.envp = envp;
	spec.timeout_ms = (unsigned)it->timeout_ms;	/* 0: none */
	/* The log has it all; this much stays in memory, should it fail. */
	spec.output_cap = SESSION_TAIL_MEM;
	spec.pty = it->pty;
	spec.rows = it->rows;
	spec.cols = it->cols;
	spec.background = 1;
	spec.idle_timeout_ms = (unsigned)it->idle_timeout_ms;
	spec.outputcb = session_output_cb;
	spec.network = network;
	spec.grant = grant;
	spec.token = s->token;
	if ((s->ex = exec_start(&spec, session_done_cb, s, code, cause)) ==
	    NULL) {
		s->ss->nended++;	/* session_free counts it out */
		session_free(s);
		return (NULL);
	}
	ss->nrunning++;
	s->pid = exec_pid(s->ex);
	s->log_path = xstrdup(exec_log_path(s->ex));
	session_mirror(s);
	session_index(s);
	exec_confinement(s->ex, &conf);
	memset(&st, 0, sizeof st);
	st.id = it->id;
	st.session_id = s->id;
	st.pid = (long)s->pid;
	st.log_path = s->log_path;
	st.pty = s->pty;
	st.worker = queue_consumer(ss->q);
	st.confinement = exec_confinement_json(&conf, 0);
	*kept = item_started_to_json(&st, kept_len);
	st.token = s->token;		/* sent once, never kept */
	text = item_started_to_json(&st, len);
	json_decref(st.confinement);
	return (text);
}

/* The session named by id, or NULL. */
static struct session *
session_find(struct sessions *ss, const char *id)
{
	struct session	*s;

	LIST_FOREACH(s, &ss->list, entry)
		if (strcmp(s->id, id) == 0)
			return (s);
	return (NULL);
}

int
sessions_has(struct sessions *ss, const char *id)
{
	return (session_find(ss, id) != NULL);
}

unsigned
sessions_running(const struct sessions *ss)
{
	return (ss->nrunning);
}

unsigned
sessions_ended(const struct sessions *ss)
{
	return (ss->nended);
}

void
sessions_set_metrics(struct sessions *ss, struct metrics *m)
{
	ss->metrics = m;
}

/* list: this worker's sessions, newest first. */
static void
session_act_list(struct sessions *ss, const struct item *it,
    sessions_answer_cb cb, void *arg)
{
	struct session		*s;
	struct item_session	 e;
	json_t			*a;
	int			 op;

	a = json_array();
	op = sessions_operator(ss->cfg, it);
	LIST_FOREACH(s, &ss->list, entry) {
		if (!op && !session_listed(it, s))
			continue;	/* someone else's */
		memset(&e, 0, sizeof e);
		e.session_id = s->id;
		e.command = s->command;
		e.log_path = s->log_path;
		e.pid = (long)s->pid;
		e.pty = s->pty;
		e.started_ms = s->started_ms;
		e.ended_ms = s->ended_ms;
		e.output_bytes = (int64_t)(s->ex != NULL ?
		    exec_output_bytes(s->ex) : s->output_bytes);
		e.status = s->status;
		json_array_append_new(a, item_session_to_json(&e));
	}
	if (ss->heldcb != NULL && op)	/* held items: operators only */
		ss->heldcb(a, ss->heldarg);
	session_answer(it->id, "list", NULL, item_list_to_json(a), cb, arg);
}

/* log: a byte range, or the last lines. */
static void
session_act_log(struct session *s, const struct item *it,
    sessions_answer_cb cb, void *arg)
{
	struct session_read	*r;
	long			 want;

	want = it->length > 0 && it->length < SESSION_LOG_MAX ? it->length :
	    SESSION_LOG_MAX;
	r = session_read_new(s, ITEM_ACTION_LOG, it->id, it->offset, want, cb,
	    arg);
	r->lines = it->lines;
	r->base64 = it->base64;
	session_read_start(s, r);
}

/* write and send-keys: bytes to stdin or the PTY. */
static void
session_act_write(struct session *s, const struct item *it,
    sessions_answer_cb cb, void *arg)
{
	char		 keys[8192];
	const char	*buf = it->data;
	size_t		 len = it->data_len, i;
	ssize_t		 n = 0;

	if (s->ex == NULL) {
		session_error("session_ended", cb, arg, "session %s has ended",
		    s->id);
		return;
	}
	if (it->action == ITEM_ACTION_SEND_KEYS) {
		len = 0;
		for (i = 0; it->keys[i] != NULL; i++) {
			if (keys_encode(it->keys[i], keys, sizeof keys,
			    &len) == -1) {
				session_error("bad_args", cb, arg, "args.keys "
				    "come to more than %zu bytes", sizeof keys);
				return;
			}
		}
		buf = keys;
	}
	if (len > 0 && (n = exec_write(s->ex, buf, len)) == -1) {
		session_error("session_ended", cb, arg, "session %s does not "
		    "read its input any more: %s", s->id, strerror(errno));
		return;
	}
	if (it->eof && exec_close_input(s->ex) == -1)
		log_debug("session %s: close input: %s", s->id,
		    strerror(errno));
	session_answer(it->id, it->action_name, s->id,
	    item_write_to_json((long long)n), cb, arg);
}

/* A signal number from "TERM", "SIGTERM", "term" or "15"; -1 if none. */
static int
session_signal_num(const char *name)
{
	const char	*abbrev;
	char		*end;
	long		 n;
	int		 i;

	if (strncasecmp(name, "SIG", 3) == 0)
		name += 3;
	n = strtol(name, &end, 10);
	if (*name != '\0' && *end == '\0')
		return (n > 0 && n < NSIG ? (int)n : -1);
	for (i = 1; i < NSIG; i++) {
		abbrev = sigabbrev_np(i);
		if (abbrev != NULL && strcasecmp(abbrev, name) == 0)
			return (i);
	}
	return (-1);
}

/* kill: the signal (TERM by default) to the tree, KILL after the grace. */
static void
session_act_kill(struct session *s, const struct item *it,
    sessions_answer_cb cb, void *arg)
{
	const char	*name = it->signal_name != NULL ? it->signal_name : "TERM";
	int		 sig;

	if (s->ex == NULL) {
		session_error("session_ended", cb, arg, "session %s has ended",
		    s->id);
		return;
	}
	if ((sig = session_signal_num(name)) == -1) {
		session_error("bad_args", cb, arg, "unknown signal '%s'", name);
		return;
	}
	log_info("session %s: kill with signal %d", s->id, sig);
	exec_kill(s->ex, sig, EXEC_END_KILLED);
	session_answer(it->id, "kill", s->id, item_kill_to_json(), cb, arg);
}

int
sessions_act_offline(struct sessions *ss, const struct item *it,
    sessions_answer_cb cb, void *arg)
{
	struct session_read	*r;
	struct session		 s;
	struct stat		 st;
	long			 max;

	if (it->action != ITEM_ACTION_LOG && it->action != ITEM_ACTION_POLL &&
	    it->action != ITEM_ACTION_WAIT)
		return (-1);
	memset(&s, 0, sizeof s);
	s.id = it->session_id;
	xasprintf(&s.log_path, "%s/%s.log", ss->cfg->log_dir, it->session_id);
	if (lstat(s.log_path, &st) == -1 || !S_ISREG(st.st_mode)) {
		free(s.log_path);
		return (-1);
	}
	if (it->action == ITEM_ACTION_POLL)
		max = it->max_bytes > 0 ? it->max_bytes : SESSION_POLL_MAX;
	else if (it->action == ITEM_ACTION_LOG)
		max = it->length > 0 && it->length < SESSION_LOG_MAX ?
		    it->length : SESSION_LOG_MAX;
	else
		max = 0;		/* wait: the metadata only */
	r = session_read_new(&s, it->action, it->id, it->offset, max, cb, arg);
	free(s.log_path);
	r->ss = ss;
	r->lines = it->action == ITEM_ACTION_LOG ? it->lines : 0;
	r->base64 = it->base64;
	r->offline = 1;
	r->token = it->token != NULL ? xstrdup(it->token) : NULL;
	r->operator = sessions_operator(ss->cfg, it);
	xasprintf(&r->meta_path, "%s/%s.json", ss->cfg->log_dir,
	    it->session_id);
	if (ss->syncer != NULL)
		syncer_call(ss->syncer, session_read_work, session_read_done,
		    r);
	else {
		(void)session_read_work(r);
		session_read_done(0, r);
	}
	return (0);
}

void
sessions_act(struct sessions *ss, const struct item *it,
    sessions_answer_cb cb, void *arg)
{
	struct session	*s = NULL;
	long		 ms;

	if (it->action != ITEM_ACTION_LIST &&
	    (s = session_find(ss, it->session_id)) == NULL) {
		if (sessions_act_offline(ss, it, cb, arg) == 0)
			return;
		session_error("unknown_session", cb, arg, "no session %s on "
		    "this worker or any other", it->session_id);
		return;
	}
	if (s != NULL && !sessions_operator(ss->cfg, it) &&
	    !session_token_eq(it->token, s->token)) {
		session_error("forbidden", cb, arg, it->token == NULL ?
		    "session %s needs its token (args.token, from its "
		    "EXEC_STARTED)" : "wrong token for session %s",
		    it->session_id);
		return;
	}
	switch (it->action) {
	case ITEM_ACTION_LIST:
		session_act_list(ss, it, cb, arg);
		break;
	case ITEM_ACTION_POLL:
		session_poll(s, it->id, it->offset, it->max_bytes, it->base64,
		    it->wait_ms > 0, session_now_ms() + it->wait_ms, cb, arg);
		break;
	case ITEM_ACTION_LOG:
		session_act_log(s, it, cb, arg);
		break;
	case ITEM_ACTION_WRITE:
	case ITEM_ACTION_SEND_KEYS:
		session_act_write(s, it, cb, arg);
		break;
	case ITEM_ACTION_KILL:
		session_act_kill(s, it, cb, arg);
		break;
	case ITEM_ACTION_WAIT:
		ms = it->timeout_ms > 0 ? it->timeout_ms : SESSION_WAIT_MS;
		if (s->final != NULL)
			session_answer_wait(s, it->id, 0, cb, arg);
		else
			(void)session_hold_until(s, ITEM_ACTION_WAIT, it->id,
			    session_now_ms() + ms, cb, arg);
		break;
	}
}

void
sessions_kill_all(struct sessions *ss)
{
	struct session	*s;

	LIST_FOREACH(s, &ss->list, entry)
		if (s->ex != NULL)
			exec_kill(s->ex, SIGTERM, EXEC_END_SHUTDOWN);
}

/*
 * Redis's answer to a fence check: the serial of a session another worker
 * declared lost (its lost callback went out), or 0.
 */
static void
session_fence_cb(long long serial, void *arg)
{
	struct sessions	*ss = arg;
	struct session	*s;

	if (serial <= 0)
		return;
	LIST_FOREACH(s, &ss->list, entry) {
		if (s->serial != serial || s->ex == NULL)
			continue;
		log_warn("session %s: declared lost while this worker was "
		    "away from Redis; killing it (its callback went out "
		    "already)", s->id);
		exec_kill(s->ex, SIGKILL, EXEC_END_SHUTDOWN);
	}
}

void
sessions_new_token(char out[33])
{
	unsigned char	raw[16];
	size_t		got = 0;
	ssize_t		n;
	int		i;

	while (got < sizeof raw) {
		n = getrandom(raw + got, sizeof raw - got, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			fatal("getrandom: %s", strerror(errno));
		got += n;
	}
	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

void
sessions_remirror(struct sessions *ss)
{
	struct session	*s;

	LIST_FOREACH(s, &ss->list, entry) {
		if (s->ex == NULL)
			continue;
		session_mirror(s);
		session_index(s);
	}
}

void
sessions_fence(struct sessions *ss)
{
	struct session	*s;

	LIST_FOREACH(s, &ss->list, entry) {
		if (s->ex == NULL)
			continue;
		queue_session_fence(ss->q, s->id, s->serial, session_fence_cb,
		    ss);
	}
}

struct sessions *
sessions_create(struct event_base *base, struct queue *q,
    const struct config *cfg, struct syncer *syncer, sessions_slot_cb slotcb,
    void *arg)
{
	struct sessions	*ss;

	ss = xcalloc(1, sizeof *ss);
	ss->syncer = syncer;
	ss->base = base;
	ss->q = q;
	ss->cfg = cfg;
	ss->slotcb = slotcb;
	ss->arg = arg;
	LIST_INIT(&ss->list);
	return (ss);
}

void
sessions_free(struct sessions *ss)
{
	struct session	*s;

	if (ss == NULL)
		return;
	while ((s = LIST_FIRST(&ss->list)) != NULL) {
		if (s->ex != NULL) {	/* exec_shutdown frees the exec */
			s->ex = NULL;
			ss->nended++;
		}
		session_free(s);
	}
	free(ss);
}

void
sessions_on_held(struct sessions *ss, sessions_held_cb cb, void *arg)
{
	ss->heldcb = cb;
	ss->heldarg = arg;
}

void
sessions_act_held(const struct item *it, const struct item_held *h,
    sessions_answer_cb cb, void *arg)
{
	switch (it->action) {
	case ITEM_ACTION_POLL:
	case ITEM_ACTION_LOG:
	case ITEM_ACTION_WAIT:
		session_answer(it->id, it->action == ITEM_ACTION_POLL ? "poll" :
		    it->action == ITEM_ACTION_LOG ? "log" : "wait", h->id,
		    item_held_answer_to_json(h, it->action, it->base64), cb,
		    arg);
		break;
	default:
		session_error("held", cb, arg, "%s is %s (approval request "
		    "%s): it has no process%s", h->id, strcmp(h->state,
		    "held") == 0 ? "held for approval" : h->state, h->request,
		    strcmp(h->state, "held") == 0 ? " until a human approves it"
		    : "");
		break;
	}
}

void
sessions_mirror_held(struct sessions *ss, const struct item_held *h,
    const char *reply_to, int drop)
{
	long long	ttl;

	if (drop) {
		queue_held_drop(ss->q, h->id);
		return;
	}
	/* Held: until its request expires, then as long as an ended one. */
	ttl = (long long)ss->cfg->session_ttl_s + (strcmp(h->state, "held") ==
	    0 ? (h->expires_ms - h->created_ms) / 1000 : 0);
	queue_held_mirror(ss->q, h, reply_to, ttl);
}
