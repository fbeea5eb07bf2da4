/*
 * A background or PTY session's life (worker/session.h): the registry,
 * start, its output, its end and EXEC_CALLBACK, pruning, and what Redis
 * shows of it, which queue/store.c writes from the values given here (the
 * mirror, the index, the running set, the fence check). The PROCESS
 * actions on sessions are in worker/session_act.c, below this file.
 */

#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "exec/exec.h"
#include "logs/clock.h"
#include "logs/execlog.h"
#include "logs/log.h"
#include "logs/token.h"
#include "logs/tail.h"
#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/keyspace.h"
#include "queue/queue.h"
#include "worker/config.h"
#include "worker/holder.h"
#include "worker/live.h"
#include "worker/metrics.h"
#include "worker/proxy.h"
#include "worker/session.h"
#include "worker/session_int.h"
#include "worker/shell.h"
#include "worker/waiting.h"

#define SESSION_TAIL_LINE	500	/* bytes per callback tail line */
#define SESSION_TAIL_MEM	8192	/* output kept in memory, per stream */
#define SESSION_RUNNING_TTL	604800	/* mirror of a running one */
#define SESSION_TICK_MS		1000	/* activity reaches the mirror */

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
	m.waiting_input = s->status.waiting_input;
	if (s->ex != NULL)
		s->mirrored_ms = exec_active_ms(s->ex);
	m.last_activity_ms = (long long)s->mirrored_ms;
	m.keep = s->keep;
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
	if (s->shell != NULL)
		shell_output(s->shell, fd, buf, len);
	waiting_activity(s->wait);
	session_wake(s);
}

/* Its EXEC_WAITING: the last lines of its log, the reader. */
static void
session_waiting_notice(struct session *s)
{
	struct item_waiting	 w;
	char			**lines, *text;
	unsigned		 n;
	size_t			 len;
	pid_t			 pid = 0;

	memset(&w, 0, sizeof w);
	(void)waiting_now(s->wait, &w.waiting_since_ms, &pid);
	lines = tail_lines(s->log_path, s->tail_lines, SESSION_TAIL_LINE, &n);
	w.id = s->item_id;
	w.session_id = s->id;
	w.tail = (const char *const *)lines;
	w.ntail = n;
	w.pid = (long)pid;
	text = item_waiting_to_json(&w, &len);
	tail_free(lines);
	log_info("session %s: waiting for input (pid %ld)", s->id, w.pid);
	live_flush(s->live);	/* the prompt before the notice */
	queue_answer(s->ss->q, s->reply_to, KS_LANE_HIGH, NULL,
	    QUEUE_STORE_NONE, NULL, NULL, text, len);
	free(text);
}

/*
 * The watch's finding changed (worker/waiting.h): poll, list and the
 * mirror show it; a new prompt also gets its EXEC_WAITING.
 */
static void
session_waiting_cb(int waiting, int fresh, void *arg)
{
	struct session	*s = arg;

	s->status.waiting_input = waiting;
	if (waiting && fresh)
		session_waiting_notice(s);
	session_mirror(s);
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

/* Frees a session (ended, no waiters left). */
static void
session_free(struct session *s)
{
	session_waiters_free(s);
	waiting_free(s->wait);
	LIST_REMOVE(s, entry);
	if (s->ex == NULL)
		s->ss->nended--;
	live_free(s->live);
	shell_free(s->shell);
	json_decref(s->final);
	free(s->acted_before);
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
	int64_t		 limit = clock_wall_ms() -
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
	s->mirrored_ms = exec_active_ms(ex);
	s->ex = NULL;
	if (s->shell != NULL)
		shell_ended(s->shell);
	waiting_free(s->wait);
	s->wait = NULL;
	s->status.waiting_input = 0;
	if (ss->proxy != NULL)
		proxy_revoke(ss->proxy, s->id);
	s->ended_ms = clock_wall_ms();
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
	holder_link_drop(ss->holder, s->id);
	session_wake(s);
	session_prune(ss);
	ss->slotcb(ss->arg);
}

/* The longest command text a holder's record keeps (<id>.json has all). */
#define SESSION_HOLD_COMMAND	16384

/*
 * The holder's record of a new session (worker/holder.h): what the next
 * worker needs to take it over, and copies of its fds.
 */
static void
session_hold(struct session *s, int shell, unsigned idle_ms, const char *cwd)
{
	struct exec_confinement	 c;
	json_t			*o;
	char			*cmd, link[64], path[PATH_MAX];
	int			 fds[3];
	int64_t			 left;
	ssize_t			 n;

	if (s->ss->holder == NULL)
		return;
	exec_confinement(s->ex, &c);
	cmd = xstrdup(s->command);
	if (strlen(cmd) > SESSION_HOLD_COMMAND)
		cmd[SESSION_HOLD_COMMAND] = '\0';
	left = exec_timeout_left_ms(s->ex);
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:b, s:b, s:b, s:i,"
	    " s:I, s:s, s:i, s:s, s:I, s:I}",
	    "item_id", s->item_id, "command", cmd, "reply_to", s->reply_to,
	    "token", s->token, "log_path", s->log_path,
	    "pid", (json_int_t)s->pid, "pty", s->pty, "keep", s->keep,
	    "shell", shell, "tail_lines", (int)s->tail_lines,
	    "started_ms", (json_int_t)s->started_ms, "cwd", cwd,
	    "leaf", exec_leaf(s->ex), "tmp", exec_tmp(s->ex) != NULL ?
	    exec_tmp(s->ex) : "", "idle_ms", (json_int_t)idle_ms,
	    "deadline_ms", (json_int_t)(left > 0 ? clock_mono_ms() + left :
	    0));
	free(cmd);
	if (o == NULL)
		fatal("out of memory (json)");
	json_object_set_new(o, "conf", json_pack("{s:i, s:b, s:b, s:b, s:b}",
	    "landlock", c.landlock, "seccomp", c.seccomp != 0,
	    "namespaces", c.namespaces != 0, "network", c.network != 0,
	    "privileges", c.privileges != 0));
	/* The holder ends its whole tree through it, should no worker. */
	snprintf(link, sizeof link, "/proc/self/fd/%d", exec_cgroup_fd(s->ex));
	if (exec_cgroup_fd(s->ex) != -1 &&
	    (n = readlink(link, path, sizeof path - 1)) > 0) {
		path[n] = '\0';
		json_object_set_new(o, "cgroup", json_string(path));
	}
	exec_hold_fds(s->ex, fds);
	holder_link_hold(s->ss->holder, s->id, o, fds);
	json_decref(o);
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
	s->keep = it->keep;
	s->tail_lines = it->tail_lines < 0 ? 5 : (unsigned)it->tail_lines;
	s->live = live_create(ss->base, ss->q, s->id, 0);
	s->started_ms = clock_wall_ms();
	s->status.status = "running";
	s->serial = ++ss->serial;
	token_new(s->token);
	LIST_INIT(&s->waiters);
	LIST_INSERT_HEAD(&ss->list, s, entry);
	return (s);
}

/* How many sessions may run at once: max_sessions, or half of max_procs. */
static unsigned
session_max(const struct sessions *ss)
{
	unsigned	n = ss->cfg->max_sessions;

	if (n == 0)
		n = ss->cfg->max_procs / 2;
	return (n > 0 ? n : 1);
}

/*
 * Each second while sessions run: the activity (last output or input) of
 * those that had some since the last tick reaches their mirror, so a busy
 * session costs Redis one write a second, a quiet one none.
 */
static void
session_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sessions	*ss = arg;
	struct session	*s;

	(void)fd;
	(void)what;
	if (ss->nrunning == 0) {
		event_del(ss->ev_tick);
		return;
	}
	LIST_FOREACH(s, &ss->list, entry)
		if (s->ex != NULL && exec_active_ms(s->ex) != s->mirrored_ms)
			session_mirror(s);
}

/* A session's idle timeout: its own, else the queue's unless kept. */
static unsigned
session_idle_ms(const struct sessions *ss, const struct item *it)
{
	if (it->idle_timeout_ms > 0)
		return ((unsigned)it->idle_timeout_ms);
	return (it->keep ? 0 : ss->cfg->session_idle_timeout_ms);
}

char *
sessions_start(struct sessions *ss, const struct item *it, const char *cwd,
    char *const *envp, int network, const char *proxy_url, const char *grant,
    size_t *len, char **kept, size_t *kept_len, enum errcode *code,
    char **cause)
{
	struct exec_confinement	 conf;
	struct item_started	 st;
	struct session		*s;
	struct exec_spec	 spec;
	struct timeval		 tick = { SESSION_TICK_MS / 1000, 0 };
	char			*text;

	if (sessions_has(ss, it->id)) {
		*code = ERR_DUPLICATE_ID;
		xasprintf(cause, "a session with id %s is known already",
		    it->id);
		return (NULL);
	}
	if (ss->nrunning >= session_max(ss)) {
		*code = ERR_TOO_MANY_SESSIONS;
		xasprintf(cause, "this worker runs %u sessions, its most "
		    "(max_sessions); end one (execq ps shows how long each "
		    "has been idle) or send it again later", ss->nrunning);
		return (NULL);
	}
	s = session_new(ss, it);
	memset(&spec, 0, sizeof spec);
	spec.id = it->id;
	spec.command = it->shell ? shell_command(ss->cfg->shell) :
	    it->command;
	spec.input_socket = it->shell;	/* no text slipped in: exec.h */
	spec.cwd = cwd;
	spec.envp = envp;
	spec.timeout_ms = (unsigned)it->timeout_ms;	/* 0: none */
	/* The log has it all; this much stays in memory, should it fail. */
	spec.output_cap = SESSION_TAIL_MEM;
	spec.pty = it->pty;
	spec.rows = it->rows;
	spec.cols = it->cols;
	spec.background = 1;
	spec.idle_timeout_ms = session_idle_ms(ss, it);
	spec.outputcb = session_output_cb;
	spec.network = network;
	spec.proxy_url = proxy_url;
	spec.proxy_port = ss->proxy != NULL ? proxy_port(ss->proxy) : 0;
	spec.grant = grant;
	spec.token = s->token;
	if ((s->ex = exec_start(&spec, session_done_cb, s, code, cause)) ==
	    NULL) {
		s->ss->nended++;	/* session_free counts it out */
		session_free(s);
		return (NULL);
	}
	ss->nrunning++;
	if (!evtimer_pending(ss->ev_tick, NULL))
		evtimer_add(ss->ev_tick, &tick);
	/*
	 * A shell reads its commands from the worker, never from a person:
	 * between commands it waits on its input by design, and a command
	 * has /dev/null for stdin. No watch for "waiting for input" there.
	 */
	if (it->shell)
		s->shell = shell_create(ss->base, s->ex, s->id,
		    ss->cfg->output_cap, ss->cfg->default_timeout_ms,
		    ss->cfg->kill_grace_ms, it->command);
	else
		s->wait = waiting_create(ss->base, s->ex, session_waiting_cb,
		    s);
	s->pid = exec_pid(s->ex);
	s->log_path = xstrdup(exec_log_path(s->ex));
	session_hold(s, it->shell, spec.idle_timeout_ms, cwd);
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
sessions_set_proxy(struct sessions *ss, struct proxy *p)
{
	ss->proxy = p;
}

void
sessions_set_metrics(struct sessions *ss, struct metrics *m)
{
	ss->metrics = m;
}

void
sessions_set_holder(struct sessions *ss, struct holder_link *hl)
{
	ss->holder = hl;
}

unsigned
sessions_shells_busy(const struct sessions *ss)
{
	const struct session	*s;
	unsigned		 n = 0;

	LIST_FOREACH(s, &ss->list, entry)
		if (s->ex != NULL && s->shell != NULL && shell_busy(s->shell))
			n++;
	return (n);
}

void
sessions_leave(struct sessions *ss)
{
	struct session	*s, *next;
	struct rusage	 ru;
	json_t		*o;
	int64_t		 left;
	int		 status;

	for (s = LIST_FIRST(&ss->list); s != NULL; s = next) {
		next = LIST_NEXT(s, entry);
		if (s->ex == NULL)
			continue;
		left = exec_timeout_left_ms(s->ex);
		o = json_pack("{s:I, s:I, s:i}", "output_bytes",
		    (json_int_t)exec_output_bytes(s->ex), "deadline_ms",
		    (json_int_t)(left > 0 ? clock_mono_ms() + left : 0),
		    "tier", s->tier);
		holder_link_state(ss->holder, s->id, o);
		json_decref(o);
		/* Reaped here, still draining: the next worker ends it. */
		if (exec_exit_status(s->ex, &status, &ru))
			holder_link_exited(ss->holder, s->id, status, &ru);
		log_info("session %s: handed over (pid %ld)", s->id,
		    (long)s->pid);
		exec_leave(s->ex);
		s->ex = NULL;
		ss->nrunning--;
		ss->nended++;		/* session_free counts it out */
		session_free(s);
	}
	holder_link_leave(ss->holder);
}

/* Its json field as a string ("" if none). */
static const char *
session_rec_str(json_t *o, const char *key)
{
	const char	*v = json_string_value(json_object_get(o, key));

	return (v != NULL ? v : "");
}

/* Takes over one session the holder kept; 0, or -1 (logged). */
static int
session_adopt(struct sessions *ss, struct holder_record *r)
{
	struct exec_adopted	 a;
	struct session		*s;
	json_t			*o = r->state, *c = json_object_get(o, "conf");
	const char		*id = session_rec_str(o, "id");
	char			*cause;
	int64_t			 deadline;

	if (!execlog_id_ok(id) || sessions_has(ss, id) ||
	    r->fds[0] == -1) {
		log_warn("holder: a record with no usable id or output (%s); "
		    "not adopted", id);
		return (-1);
	}
	s = xcalloc(1, sizeof *s);
	s->ss = ss;
	s->id = xstrdup(id);
	s->item_id = xstrdup(session_rec_str(o, "item_id"));
	s->command = xstrdup(session_rec_str(o, "command"));
	s->reply_to = xstrdup(*session_rec_str(o, "reply_to") != '\0' ?
	    session_rec_str(o, "reply_to") : ss->cfg->reply_default);
	s->log_path = xstrdup(session_rec_str(o, "log_path"));
	s->pid = (pid_t)json_integer_value(json_object_get(o, "pid"));
	s->pty = json_is_true(json_object_get(o, "pty"));
	s->keep = json_is_true(json_object_get(o, "keep"));
	s->tail_lines = (unsigned)json_integer_value(json_object_get(o,
	    "tail_lines"));
	s->started_ms = json_integer_value(json_object_get(o, "started_ms"));
	s->tier = (int)json_integer_value(json_object_get(o, "tier"));
	s->output_bytes = json_integer_value(json_object_get(o,
	    "output_bytes"));
	snprintf(s->token, sizeof s->token, "%s", session_rec_str(o, "token"));
	if (*session_rec_str(o, "acted") != '\0')
		s->acted_before = xstrdup(session_rec_str(o, "acted"));
	s->status.status = "running";
	s->serial = ++ss->serial;
	LIST_INIT(&s->waiters);
	memset(&a, 0, sizeof a);
	a.id = s->id;
	a.command = s->command;
	a.cwd = session_rec_str(o, "cwd");
	a.token = s->token;
	a.tmp = *session_rec_str(o, "tmp") != '\0' ? session_rec_str(o,
	    "tmp") : NULL;
	a.pid = s->pid;
	a.pty = s->pty;
	a.out_fd = r->fds[0];
	a.err_fd = r->fds[1];
	a.in_fd = r->fds[2];
	r->fds[0] = r->fds[1] = r->fds[2] = -1;	/* exec_adopt's now */
	a.leaf = json_is_integer(json_object_get(o, "leaf")) ?
	    (int)json_integer_value(json_object_get(o, "leaf")) : -1;
	a.started_ms = s->started_ms;
	deadline = json_integer_value(json_object_get(o, "deadline_ms"));
	a.timeout_left_ms = deadline > 0 ? (deadline > clock_mono_ms() ?
	    deadline - clock_mono_ms() : 1) : 0;
	a.idle_timeout_ms = (unsigned)json_integer_value(json_object_get(o,
	    "idle_ms"));
	a.output_bytes = s->output_bytes;
	a.output_cap = SESSION_TAIL_MEM;
	a.outputcb = session_output_cb;
	a.conf.landlock = (int)json_integer_value(json_object_get(c,
	    "landlock"));
	a.conf.seccomp = json_is_true(json_object_get(c, "seccomp"));
	a.conf.namespaces = json_is_true(json_object_get(c, "namespaces"));
	a.conf.network = json_is_true(json_object_get(c, "network"));
	a.conf.privileges = json_is_true(json_object_get(c, "privileges"));
	if ((s->ex = exec_adopt(&a, session_done_cb, s, &cause)) == NULL) {
		log_warn("session %s: not adopted: %s", s->id, cause);
		free(cause);
		LIST_INSERT_HEAD(&ss->list, s, entry);
		ss->nended++;		/* session_free counts it out */
		session_free(s);
		return (-1);
	}
	LIST_INSERT_HEAD(&ss->list, s, entry);
	ss->nrunning++;
	s->live = live_create(ss->base, ss->q, s->id, 0);
	if (json_is_true(json_object_get(o, "shell")))
		s->shell = shell_create(ss->base, s->ex, s->id,
		    ss->cfg->output_cap, ss->cfg->default_timeout_ms,
		    ss->cfg->kill_grace_ms, NULL);
	else
		s->wait = waiting_create(ss->base, s->ex, session_waiting_cb,
		    s);
	session_mirror(s);
	session_index(s);
	log_info("session %s: adopted (pid %ld, %llu bytes of output so far)",
	    s->id, (long)s->pid, s->output_bytes);
	return (0);
}

unsigned
sessions_adopt(struct sessions *ss)
{
	struct holder_record	*r;
	struct timeval		 tick = { SESSION_TICK_MS / 1000, 0 };
	size_t			 n, i;
	unsigned		 got = 0;

	r = holder_link_records(ss->holder, &n);
	for (i = 0; i < n; i++) {
		if (session_adopt(ss, &r[i]) == -1) {
			/* The holder lets go; its leaf is reclaimed (killed). */
			holder_link_drop(ss->holder, json_string_value(
			    json_object_get(r[i].state, "id")));
			continue;
		}
		got++;
		/* It ended while no worker ran: reaped by the holder. */
		if (r[i].exited && !exec_reaped_id(json_string_value(
		    json_object_get(r[i].state, "id")), (pid_t)
		    json_integer_value(json_object_get(r[i].state, "pid")),
		    r[i].status, &r[i].ru))
			log_warn("holder: an adopted session's end went "
			    "nowhere");
	}
	if (got > 0 && !evtimer_pending(ss->ev_tick, NULL))
		evtimer_add(ss->ev_tick, &tick);
	return (got);
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
	if ((ss->ev_tick = event_new(base, -1, EV_PERSIST, session_tick_cb,
	    ss)) == NULL)
		fatal("out of memory (libevent)");
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
	if (ss->ev_tick != NULL)
		event_free(ss->ev_tick);
	free(ss);
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
