/*
 * The PROCESS actions on sessions (worker/session_int.h): list, poll,
 * log, write, send-keys, kill and wait, the polls and waits held until
 * output or the end, the offline reads of <id>.log and <id>.json, held
 * items' answers, and the session tokens.
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
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "exec/exec.h"
#include "exec/keys.h"
#include "logs/clock.h"
#include "logs/execlog.h"
#include "logs/log.h"
#include "logs/token.h"
#include "logs/syncer.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "worker/config.h"
#include "worker/holder.h"
#include "worker/session.h"
#include "worker/session_int.h"
#include "worker/shell.h"
#include "worker/waiting.h"

#define SESSION_POLL_MAX	65536	/* poll's default max_bytes */
#define SESSION_LOG_MAX		(1 << 20)	/* bytes per log answer */
#define SESSION_WAIT_MS		30000	/* wait's default */

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

/* Answers with a PROCESS_RESULT made of fields (stolen). */
static void
session_answer(const char *item_id, const char *action, const char *sid,
    json_t *fields, sessions_answer_cb cb, void *arg)
{
	char	*text;
	size_t	 len;

	text = item_process_result_to_json(item_id, action, sid, fields, &len);
	cb(ERR_NONE, text, len, arg);
	free(text);
}

/* Answers with an ERROR. */
static void
session_error(enum errcode code, sessions_answer_cb cb, void *arg,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void
session_error(enum errcode code, sessions_answer_cb cb, void *arg,
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
	    r->deadline_ms > clock_wall_ms()) {
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
	    !token_eq(r->token, token))) {
		session_error(ERR_FORBIDDEN, r->cb, r->arg, "session %s %s",
		    r->sid, r->token == NULL ? "needs its token (args.token, "
		    "from its EXEC_STARTED or EXEC_RESULT)" :
		    "has another token");
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
		session_error(ERR_UNKNOWN_SESSION, r->cb, r->arg, "session %s "
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

void
session_waiters_free(struct session *s)
{
	struct waiter	*w;

	while ((w = LIST_FIRST(&s->waiters)) != NULL)
		session_waiter_free(w);
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

/* Output or the end (worker/session_int.h). */
void
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
	int64_t		 ms = deadline_ms - clock_wall_ms();

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

int
sessions_operator(const struct config *cfg, const struct item *it)
{
	return (cfg->operator_token != NULL && *cfg->operator_token != '\0' &&
	    token_eq(it->operator_token, cfg->operator_token));
}

/* list: is s one of the caller's (one of its tokens is s's)? */
static int
session_listed(const struct item *it, const struct session *s)
{
	size_t	i;

	for (i = 0; it->tokens != NULL && it->tokens[i] != NULL; i++)
		if (token_eq(it->tokens[i], s->token))
			return (1);
	return (token_eq(it->token, s->token));
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
		e.keep = s->keep;
		if (s->ex != NULL && (e.idle_ms = clock_wall_ms() -
		    exec_active_ms(s->ex)) < 0)
			e.idle_ms = 0;		/* the clock was set back */
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

/*
 * 1 (answered duplicate_id) if it is what an earlier worker of this
 * session carried out last before it died: a takeover delivers such an
 * item again, and what it writes or runs must not go in twice.
 */
static int
session_acted_before(struct session *s, const struct item *it,
    sessions_answer_cb cb, void *arg)
{
	if (s->acted_before == NULL || strcmp(s->acted_before, it->id) != 0)
		return (0);
	session_error(ERR_DUPLICATE_ID, cb, arg, "%s %s went into session %s "
	    "just before the worker running it died; it is not done again: "
	    "what followed is in the session's log (poll, log)",
	    it->action_name, it->id, s->id);
	return (1);
}

/* What went in: the holder's record says so, for the next worker. */
static void
session_acted(struct session *s, const struct item *it)
{
	json_t	*o;

	if (s->ss->holder == NULL)
		return;
	o = json_pack("{s:s}", "acted", it->id);
	holder_link_state(s->ss->holder, s->id, o);
	json_decref(o);
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
		session_error(ERR_SESSION_ENDED, cb, arg, "session %s has ended",
		    s->id);
		return;
	}
	if (it->action == ITEM_ACTION_SEND_KEYS) {
		len = 0;
		for (i = 0; it->keys[i] != NULL; i++) {
			if (keys_encode(it->keys[i], keys, sizeof keys,
			    &len) == -1) {
				session_error(ERR_BAD_ARGS, cb, arg, "args.keys "
				    "come to more than %zu bytes", sizeof keys);
				return;
			}
		}
		buf = keys;
	}
	if (session_acted_before(s, it, cb, arg))
		return;
	if (len > 0 && (n = exec_write(s->ex, buf, len)) == -1) {
		session_error(ERR_SESSION_ENDED, cb, arg, "session %s does not "
		    "read its input any more: %s", s->id, strerror(errno));
		return;
	}
	if (it->eof && exec_close_input(s->ex) == -1)
		log_debug("session %s: close input: %s", s->id,
		    strerror(errno));
	else if (it->eof && !s->pty)	/* its copy too: EOF for it */
		holder_link_input_closed(s->ss->holder, s->id);
	if (n > 0 || it->eof) {	/* answered: a wait after is a new one */
		waiting_activity(s->wait);
		session_acted(s, it);
	}
	session_answer(it->id, it->action_name, s->id,
	    item_write_to_json((long long)n), cb, arg);
}

/* exec: a command in a shell session, answered when it ends. */
static void
session_act_exec(struct session *s, const struct item *it,
    sessions_answer_cb cb, void *arg)
{
	enum errcode	 code;
	char		*cause;

	if (s->shell == NULL) {
		session_error(ERR_BAD_ACTION, cb, arg, "session %s is not a "
		    "shell session (start one with args.shell)", s->id);
		return;
	}
	if (session_acted_before(s, it, cb, arg))
		return;
	if (shell_exec(s->shell, it->id, it->command, it->timeout_ms, cb, arg,
	    &code, &cause) == -1) {
		session_error(code, cb, arg, "%s", cause);
		free(cause);
		return;
	}
	session_acted(s, it);
}

/*
 * interrupt: SIGINT to what runs: a shell's command (its process
 * groups), a terminal's foreground (^C on the pty), else the session's
 * process group.
 */
static void
session_act_interrupt(struct session *s, const struct item *it,
    sessions_answer_cb cb, void *arg)
{
	int	n;

	if (s->ex == NULL) {
		session_error(ERR_SESSION_ENDED, cb, arg, "session %s has ended",
		    s->id);
		return;
	}
	if (s->shell != NULL)
		n = shell_interrupt(s->shell);
	else if (s->pty)
		n = exec_write(s->ex, "\003", 1) == 1;
	else
		n = kill(-s->pid, SIGINT) == 0;
	session_answer(it->id, it->action_name, s->id, json_pack("{s:b}",
	    "interrupted", n > 0), cb, arg);
}

void
sessions_shell_set_tier(struct sessions *ss, const char *id, int tier)
{
	struct session	*s = session_find(ss, id);
	json_t		*o;

	if (s == NULL)
		return;
	s->tier = tier;
	if (ss->holder != NULL) {	/* the next worker classifies alike */
		o = json_pack("{s:i}", "tier", tier);
		holder_link_state(ss->holder, s->id, o);
		json_decref(o);
	}
}

int
sessions_shell_context(struct sessions *ss, const char *id, int *tier,
    char **cwd)
{
	struct session	*s = session_find(ss, id);

	if (s == NULL || s->shell == NULL)
		return (-1);
	*tier = s->tier;
	*cwd = shell_cwd(s->shell);
	return (0);
}

int
sessions_may(struct sessions *ss, const struct item *it)
{
	struct session	*s = session_find(ss, it->session_id);

	return (s != NULL && (sessions_operator(ss->cfg, it) ||
	    token_eq(it->token, s->token)));
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
	const char	*name = it->signal_name != NULL ? it->signal_name :
			    "TERM";
	int		 sig;

	if (s->ex == NULL) {
		session_error(ERR_SESSION_ENDED, cb, arg, "session %s has ended",
		    s->id);
		return;
	}
	if ((sig = session_signal_num(name)) == -1) {
		session_error(ERR_BAD_ARGS, cb, arg, "unknown signal '%s'", name);
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
		session_error(ERR_UNKNOWN_SESSION, cb, arg, "no session %s on "
		    "this worker or any other", it->session_id);
		return;
	}
	if (s != NULL && !sessions_operator(ss->cfg, it) &&
	    !token_eq(it->token, s->token)) {
		session_error(ERR_FORBIDDEN, cb, arg, it->token == NULL ?
		    "session %s needs its token (args.token, from its "
		    "EXEC_STARTED or EXEC_RESULT)" :
		    "wrong token for session %s",
		    it->session_id);
		return;
	}
	switch (it->action) {
	case ITEM_ACTION_LIST:
		session_act_list(ss, it, cb, arg);
		break;
	case ITEM_ACTION_POLL:
		session_poll(s, it->id, it->offset, it->max_bytes, it->base64,
		    it->wait_ms > 0, clock_wall_ms() + it->wait_ms, cb, arg);
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
	case ITEM_ACTION_EXEC:
		session_act_exec(s, it, cb, arg);
		break;
	case ITEM_ACTION_INTERRUPT:
		session_act_interrupt(s, it, cb, arg);
		break;
	case ITEM_ACTION_CANCEL:	/* the worker's (worker/attempt.c) */
		session_error(ERR_BAD_ACTION, cb, arg, "cancel is not a "
		    "session's action");
		break;
	case ITEM_ACTION_WAIT:
		ms = it->timeout_ms > 0 ? it->timeout_ms : SESSION_WAIT_MS;
		if (s->final != NULL)
			session_answer_wait(s, it->id, 0, cb, arg);
		else
			(void)session_hold_until(s, ITEM_ACTION_WAIT, it->id,
			    clock_wall_ms() + ms, cb, arg);
		break;
	}
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
		session_error(ERR_HELD, cb, arg, "%s is %s (approval request "
		    "%s): it has no process%s", h->id, strcmp(h->state,
		    "held") == 0 ? "held for approval" : h->state, h->request,
		    strcmp(h->state, "held") == 0 ? " until a human approves it"
		    : "");
		break;
	}
}

