/*
 * Unit tests for queue/rconn.c over a socketpair, the test playing Redis
 * on the other end: the bytes of commands, replies matched in order, a
 * reply split across reads, 1,000 commands pipelined, a NULL to every
 * pending callback exactly once when the connection ends or is freed
 * (from inside a callback too), the synchronous calls, and the TLS
 * settings' errors. TLS against a real server: tests/integration/test_tls.
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "queue/rconn.h"

#define NREC		2048
#define PIPELINE	1000

/* What the callbacks saw, in order. */
struct rec {
	int		 tag;		/* the command's privdata */
	int		 type;		/* reply type, -1 for NULL */
	long long	 integer;
	char		 str[64];
};

struct fixture {
	struct event_base	*base;
	struct event		*failsafe;
	struct event		*ev_peer;
	struct rconn		*c;
	int			 peer;		/* the test's end: "Redis" */
	struct evbuffer		*got;		/* what the peer read */
	int			 peer_eof;
	struct rec		 rec[NREC];
	unsigned		 nrec;
	int			 ups, downs;
	char			 down_why[256];
	int			 free_at_tag;	/* free the rconn in this cb */
	int			 free_on_down;
	int			 send_at_tag;	/* send "ECHO again" in this cb */
	int			 send_rc;
	char			 dir[64];
};

static void
failsafe_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	fail_msg("test_rconn: no progress within 5 s");
}

/* The peer's reads, kept in fx->got. */
static void
peer_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fixture	*fx = arg;
	char		 buf[65536];
	ssize_t		 n;

	(void)what;
	n = read(fd, buf, sizeof buf);
	if (n > 0)
		evbuffer_add(fx->got, buf, n);
	else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		fx->peer_eof = 1;
		event_del(fx->ev_peer);
	}
}

static void
state_cb(struct rconn *c, int up, void *arg)
{
	struct fixture	*fx = arg;

	if (up) {
		fx->ups++;
		return;
	}
	fx->downs++;
	snprintf(fx->down_why, sizeof fx->down_why, "%s", rconn_errstr(c));
	if (fx->free_on_down) {
		rconn_free(c);
		fx->c = NULL;
	}
}

static struct fixture	*cur;		/* the running test's fixture */

/* Records a reply (or NULL) under its tag; may free or send. */
static void
rec_cb(struct rconn *c, redisReply *r, void *privdata)
{
	struct fixture	*fx = cur;
	struct rec	*rc;
	int		 tag = (int)(intptr_t)privdata;

	assert_true(fx->nrec < NREC);
	rc = &fx->rec[fx->nrec++];
	rc->tag = tag;
	rc->type = r != NULL ? r->type : -1;
	if (r != NULL && r->type == REDIS_REPLY_INTEGER)
		rc->integer = r->integer;
	if (r != NULL && r->str != NULL)
		snprintf(rc->str, sizeof rc->str, "%s", r->str);
	if (r != NULL && tag == fx->send_at_tag)
		fx->send_rc = rconn_command(c, rec_cb, (void *)(intptr_t)
		    (tag + 100), "ECHO %s", "again");
	if (tag == fx->free_at_tag) {
		rconn_free(c);
		fx->c = NULL;
	}
}

static int
setup(void **state)
{
	struct fixture	*fx;
	struct timeval	 tv = { 5, 0 };
	int		 sv[2];

	fx = calloc(1, sizeof *fx);
	assert_non_null(fx);
	fx->free_at_tag = -1;
	fx->send_at_tag = -1;
	fx->send_rc = 1;
	assert_non_null(fx->base = event_base_new());
	assert_non_null(fx->failsafe = evtimer_new(fx->base, failsafe_cb,
	    fx));
	evtimer_add(fx->failsafe, &tv);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0, sv), 0);
	fx->peer = sv[1];
	assert_non_null(fx->got = evbuffer_new());
	assert_non_null(fx->ev_peer = event_new(fx->base, fx->peer,
	    EV_READ | EV_PERSIST, peer_read_cb, fx));
	event_add(fx->ev_peer, NULL);
	fx->c = rconn_open_fd(fx->base, sv[0], NULL, NULL, state_cb, fx);
	assert_non_null(fx->c);
	cur = fx;
	*state = fx;
	return (0);
}

static int
teardown(void **state)
{
	struct fixture	*fx = *state;

	rconn_free(fx->c);
	if (fx->peer != -1)
		close(fx->peer);
	event_free(fx->ev_peer);
	event_free(fx->failsafe);
	evbuffer_free(fx->got);
	event_base_free(fx->base);	/* runs the bufferevents' finalizers */
	if (fx->dir[0] != '\0')
		rmdir(fx->dir);
	free(fx);
	cur = NULL;
	return (0);
}

/* Runs the loop until *flag is at least n (the failsafe fails it). */
static void
run_until(struct fixture *fx, const int *flag, int n)
{
	while (*flag < n)
		assert_int_equal(event_base_loop(fx->base, EVLOOP_ONCE), 0);
}

/* Until the callbacks have recorded n replies. */
static void
run_until_recs(struct fixture *fx, unsigned n)
{
	while (fx->nrec < n)
		assert_int_equal(event_base_loop(fx->base, EVLOOP_ONCE), 0);
}

/* Until the peer has read len bytes: then they must be want. */
static void
peer_expect(struct fixture *fx, const char *want, size_t len)
{
	while (evbuffer_get_length(fx->got) < len)
		assert_int_equal(event_base_loop(fx->base, EVLOOP_ONCE), 0);
	assert_int_equal(evbuffer_get_length(fx->got), len);
	assert_memory_equal(evbuffer_pullup(fx->got, -1), want, len);
	evbuffer_drain(fx->got, len);
}

/* The peer "answers": len bytes to the rconn, as fast as it reads. */
static void
peer_send(struct fixture *fx, const char *p, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if ((n = write(fx->peer, p, len)) == -1) {
			assert_int_equal(errno, EAGAIN);
			assert_int_equal(event_base_loop(fx->base,
			    EVLOOP_ONCE), 0);
			continue;
		}
		p += n;
		len -= n;
	}
}

#define PEER_EXPECT(fx, s)	peer_expect(fx, s, sizeof s - 1)
#define PEER_SEND(fx, s)	peer_send(fx, s, sizeof s - 1)
#define TAG(n)			((void *)(intptr_t)(n))

static void
test_rconn_bytes_and_replies_in_order(void **state)
{
	struct fixture	*fx = *state;
	const char	*argv[] = { "SET", "k", "a\0b" };
	const size_t	 len[] = { 3, 1, 3 };

	run_until(fx, &fx->ups, 1);
	assert_int_equal(rconn_state(fx->c), RCONN_UP);
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(1), "PING"), 0);
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(2), "GET %s", "k"),
	    0);
	assert_int_equal(rconn_command_argv(fx->c, rec_cb, TAG(3), 3, argv,
	    len), 0);
	assert_int_equal(rconn_command(fx->c, NULL, NULL, "INCR %b", "n", 1),
	    0);
	assert_int_equal(rconn_pending(fx->c), 4);
	PEER_EXPECT(fx, "*1\r\n$4\r\nPING\r\n"
	    "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
	    "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na\0b\r\n"
	    "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n");
	PEER_SEND(fx, "+PONG\r\n$3\r\nabc\r\n-ERR no\r\n:7\r\n");
	run_until_recs(fx, 3);
	assert_int_equal(fx->rec[0].tag, 1);
	assert_int_equal(fx->rec[0].type, REDIS_REPLY_STATUS);
	assert_string_equal(fx->rec[0].str, "PONG");
	assert_int_equal(fx->rec[1].tag, 2);
	assert_int_equal(fx->rec[1].type, REDIS_REPLY_STRING);
	assert_string_equal(fx->rec[1].str, "abc");
	assert_int_equal(fx->rec[2].tag, 3);
	assert_int_equal(fx->rec[2].type, REDIS_REPLY_ERROR);
	assert_string_equal(fx->rec[2].str, "ERR no");
	while (rconn_pending(fx->c) > 0)	/* the dropped INCR reply */
		assert_int_equal(event_base_loop(fx->base, EVLOOP_ONCE), 0);
	assert_int_equal(fx->nrec, 3);
	assert_int_equal(fx->downs, 0);
	assert_string_equal(rconn_errstr(fx->c), "");
}

static void
test_rconn_reply_split_across_reads(void **state)
{
	struct fixture	*fx = *state;
	const char	 reply[] = "*2\r\n$11\r\nhello world\r\n:42\r\n";
	size_t		 i;

	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(1), "LPOP l"), 0);
	PEER_EXPECT(fx, "*2\r\n$4\r\nLPOP\r\n$1\r\nl\r\n");
	for (i = 0; i + 1 < sizeof reply - 1; i++) {
		peer_send(fx, reply + i, 1);
		/* The byte is readable: one round reads it, and no more. */
		assert_int_equal(event_base_loop(fx->base, EVLOOP_ONCE), 0);
		assert_int_equal(fx->nrec, 0);
	}
	peer_send(fx, reply + i, 1);
	run_until_recs(fx, 1);
	assert_int_equal(fx->rec[0].type, REDIS_REPLY_ARRAY);
	assert_int_equal(rconn_pending(fx->c), 0);
}

static void
test_rconn_pipeline_1000(void **state)
{
	struct fixture	*fx = *state;
	struct evbuffer	*want, *answers;
	char		*cmd, n[32];
	int		 i, len;
	size_t		 off, chunk;
	unsigned char	*p;

	assert_non_null(want = evbuffer_new());
	assert_non_null(answers = evbuffer_new());
	for (i = 0; i < PIPELINE; i++) {
		snprintf(n, sizeof n, "%d", i);
		assert_int_equal(rconn_command(fx->c, rec_cb, TAG(i),
		    "INCRBY counter:%s %s", n, n), 0);
		len = redisFormatCommand(&cmd, "INCRBY counter:%s %s", n, n);
		evbuffer_add(want, cmd, len);
		free(cmd);
		evbuffer_add_printf(answers, ":%d\r\n", i * 3);
	}
	assert_int_equal(rconn_pending(fx->c), PIPELINE);
	peer_expect(fx, (char *)evbuffer_pullup(want, -1),
	    evbuffer_get_length(want));
	/* Answers in odd-sized pieces, cutting replies anywhere. */
	p = evbuffer_pullup(answers, -1);
	for (off = 0; off < evbuffer_get_length(answers); off += chunk) {
		chunk = evbuffer_get_length(answers) - off;
		if (chunk > 7)
			chunk = 7;
		peer_send(fx, (char *)p + off, chunk);
	}
	run_until_recs(fx, PIPELINE);
	for (i = 0; i < PIPELINE; i++) {
		assert_int_equal(fx->rec[i].tag, i);
		assert_int_equal(fx->rec[i].type, REDIS_REPLY_INTEGER);
		assert_int_equal(fx->rec[i].integer, i * 3);
	}
	assert_int_equal(rconn_pending(fx->c), 0);
	evbuffer_free(want);
	evbuffer_free(answers);
}

/* The peer hangs up with 5 commands pending: 5 NULLs, then down. */
static void
test_rconn_close_nulls_every_pending_once(void **state)
{
	struct fixture	*fx = *state;
	int		 i;

	run_until(fx, &fx->ups, 1);
	for (i = 0; i < 5; i++)
		assert_int_equal(rconn_command(fx->c, rec_cb, TAG(i), "GET x"),
		    0);
	while (evbuffer_get_length(fx->got) < 5 * 20)	/* read: no RST */
		assert_int_equal(event_base_loop(fx->base, EVLOOP_ONCE), 0);
	PEER_SEND(fx, "$1\r\na\r\n");		/* the first is answered */
	close(fx->peer);
	fx->peer = -1;
	run_until(fx, &fx->downs, 1);
	assert_int_equal(fx->nrec, 5);
	assert_int_equal(fx->rec[0].type, REDIS_REPLY_STRING);
	for (i = 1; i < 5; i++) {
		assert_int_equal(fx->rec[i].tag, i);
		assert_int_equal(fx->rec[i].type, -1);
	}
	assert_string_equal(fx->down_why, "connection closed by the server");
	assert_int_equal(rconn_state(fx->c), RCONN_DOWN);
	assert_int_equal(rconn_pending(fx->c), 0);
	/* Down for good: refused, and the callback is never called. */
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(9), "PING"), -1);
	rconn_free(fx->c);
	fx->c = NULL;
	assert_int_equal(fx->nrec, 5);
	assert_int_equal(fx->downs, 1);
	assert_int_equal(fx->ups, 1);
}

/*
 * The first reply's callback frees the rconn, with the second reply in
 * the same read: every other command gets NULL once, no state callback.
 */
static void
test_rconn_free_inside_a_callback(void **state)
{
	struct fixture	*fx = *state;
	int		 i;

	fx->free_at_tag = 0;
	for (i = 0; i < 4; i++)
		assert_int_equal(rconn_command(fx->c, rec_cb, TAG(i), "PING"),
		    0);
	PEER_SEND(fx, "+PONG\r\n+PONG\r\n");
	run_until_recs(fx, 4);
	assert_null(fx->c);
	assert_int_equal(fx->rec[0].type, REDIS_REPLY_STATUS);
	for (i = 1; i < 4; i++) {
		assert_int_equal(fx->rec[i].tag, i);
		assert_int_equal(fx->rec[i].type, -1);
	}
	/* The socket closes in the loop (the bufferevent's finalizer). */
	run_until(fx, &fx->peer_eof, 1);
	assert_int_equal(fx->nrec, 4);
	assert_int_equal(fx->downs, 0);
}

/* A NULL callback (the connection ending) frees it: once, no crash. */
static void
test_rconn_free_inside_a_null_callback(void **state)
{
	struct fixture	*fx = *state;
	int		 i;

	fx->free_at_tag = 1;
	for (i = 0; i < 3; i++)
		assert_int_equal(rconn_command(fx->c, rec_cb, TAG(i), "PING"),
		    0);
	close(fx->peer);
	fx->peer = -1;
	run_until_recs(fx, 3);
	assert_null(fx->c);
	for (i = 0; i < 3; i++)
		assert_int_equal(fx->rec[i].type, -1);
	assert_int_equal(fx->downs, 0);		/* freed before it was told */
}

/* The state callback frees it when down. */
static void
test_rconn_free_inside_the_state_callback(void **state)
{
	struct fixture	*fx = *state;

	fx->free_on_down = 1;
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(1), "PING"), 0);
	close(fx->peer);
	fx->peer = -1;
	run_until(fx, &fx->downs, 1);
	assert_null(fx->c);
	assert_int_equal(fx->nrec, 1);
	assert_int_equal(fx->rec[0].type, -1);
}

/* rconn_free outside any callback: pending get NULL, no state call. */
static void
test_rconn_free_with_commands_pending(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(1), "PING"), 0);
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(2), "PING"), 0);
	rconn_free(fx->c);
	fx->c = NULL;
	assert_int_equal(fx->nrec, 2);
	assert_int_equal(fx->rec[0].tag, 1);
	assert_int_equal(fx->rec[1].tag, 2);
	assert_int_equal(fx->rec[1].type, -1);
	assert_int_equal(fx->downs, 0);
}

/*
 * A reply's callback disconnects (an AUTH refused, say): the others get
 * NULL, the state callback says down with the reason, once.
 */
static void
disconnect_cb(struct rconn *c, redisReply *r, void *privdata)
{
	rec_cb(c, r, privdata);
	rconn_disconnect(c, "refused: WRONGPASS");
	rconn_disconnect(c, "twice");
}

static void
test_rconn_disconnect_inside_a_callback(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(rconn_command(fx->c, disconnect_cb, TAG(1), "AUTH x"),
	    0);
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(2), "PING"), 0);
	PEER_SEND(fx, "-WRONGPASS invalid\r\n+PONG\r\n");
	run_until(fx, &fx->downs, 1);
	assert_int_equal(fx->nrec, 2);
	assert_int_equal(fx->rec[0].type, REDIS_REPLY_ERROR);
	assert_int_equal(fx->rec[1].type, -1);
	assert_string_equal(fx->down_why, "refused: WRONGPASS");
	assert_int_equal(rconn_state(fx->c), RCONN_DOWN);
	assert_int_equal(fx->downs, 1);
}

/* A callback sends a command: it goes out after the others, answered. */
static void
test_rconn_callback_sends_a_command(void **state)
{
	struct fixture	*fx = *state;

	fx->send_at_tag = 1;
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(1), "PING"), 0);
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(2), "PING"), 0);
	PEER_EXPECT(fx, "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n");
	PEER_SEND(fx, "+PONG\r\n");
	run_until_recs(fx, 1);
	assert_int_equal(fx->send_rc, 0);
	PEER_EXPECT(fx, "*2\r\n$4\r\nECHO\r\n$5\r\nagain\r\n");
	PEER_SEND(fx, "+PONG\r\n$5\r\nagain\r\n");
	run_until_recs(fx, 3);
	assert_int_equal(fx->rec[1].tag, 2);
	assert_int_equal(fx->rec[2].tag, 101);
	assert_string_equal(fx->rec[2].str, "again");
}

static void
test_rconn_protocol_error_takes_it_down(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(1), "PING"), 0);
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(2), "PING"), 0);
	PEER_SEND(fx, "+PONG\r\n?what\r\n");
	run_until(fx, &fx->downs, 1);
	assert_int_equal(fx->nrec, 2);
	assert_int_equal(fx->rec[0].type, REDIS_REPLY_STATUS);
	assert_int_equal(fx->rec[1].type, -1);
	assert_non_null(strstr(fx->down_why, "protocol error"));
}

static void
test_rconn_reply_to_no_command_takes_it_down(void **state)
{
	struct fixture	*fx = *state;

	run_until(fx, &fx->ups, 1);
	PEER_SEND(fx, "+HELLO\r\n");
	run_until(fx, &fx->downs, 1);
	assert_string_equal(fx->down_why,
	    "protocol error: a reply to no command");
}

/* A path nobody listens on: down, from the loop, with the reason. */
static void
test_rconn_connect_refused_said_from_the_loop(void **state)
{
	struct fixture	*fx = *state;
	char		 path[128];

	snprintf(fx->dir, sizeof fx->dir, "/tmp/test_rconn.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(path, sizeof path, "%s/nobody.sock", fx->dir);
	rconn_free(fx->c);
	fx->c = rconn_connect_unix(fx->base, path, state_cb, fx);
	assert_non_null(fx->c);
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(1), "PING"), 0);
	assert_int_equal(fx->downs, 0);		/* not on our stack */
	assert_int_equal(fx->nrec, 0);
	run_until(fx, &fx->downs, 1);
	assert_string_equal(fx->down_why,
	    "connect: No such file or directory");
	assert_int_equal(fx->nrec, 1);
	assert_int_equal(fx->rec[0].type, -1);
	assert_int_equal(fx->ups, 0);
}

/* Commands queued before up go out once up, in order. */
static void
test_rconn_commands_before_up_wait(void **state)
{
	struct fixture		*fx = *state;
	struct sockaddr_un	 sun;
	int			 l, a;

	snprintf(fx->dir, sizeof fx->dir, "/tmp/test_rconn.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s/r.sock", fx->dir);
	assert_true((l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sun, sizeof sun), 0);
	assert_int_equal(listen(l, 1), 0);
	rconn_free(fx->c);
	fx->c = rconn_connect_unix(fx->base, sun.sun_path, state_cb, fx);
	assert_non_null(fx->c);
	assert_int_equal(rconn_state(fx->c), RCONN_CONNECTING);
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(1), "AUTH %s", "pw"),
	    0);
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(2), "PING"), 0);
	assert_true((a = accept4(l, NULL, NULL, SOCK_CLOEXEC |
	    SOCK_NONBLOCK)) >= 0);
	close(l);
	unlink(sun.sun_path);
	/* The fixture's peer becomes the accepted socket. */
	event_del(fx->ev_peer);
	event_free(fx->ev_peer);
	close(fx->peer);
	fx->peer = a;
	assert_non_null(fx->ev_peer = event_new(fx->base, fx->peer,
	    EV_READ | EV_PERSIST, peer_read_cb, fx));
	event_add(fx->ev_peer, NULL);
	PEER_EXPECT(fx, "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n*1\r\n$4\r\nPING\r\n");
	assert_int_equal(fx->ups, 1);
	PEER_SEND(fx, "+OK\r\n+PONG\r\n");
	run_until_recs(fx, 2);
	assert_string_equal(fx->rec[1].str, "PONG");
}

/* reply_ms: commands that wait with nothing read take it down. */
static void
test_rconn_reply_timeout(void **state)
{
	struct fixture	*fx = *state;

	rconn_set_timeout(fx->c, 0, 30);
	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(1), "BLPOP l 0"),
	    0);
	run_until(fx, &fx->downs, 1);
	assert_string_equal(fx->down_why, "no reply from Redis in 30 ms");
	assert_int_equal(fx->nrec, 1);
	assert_int_equal(fx->rec[0].type, -1);
}

static void
test_rconn_bad_format_refused(void **state)
{
	struct fixture	*fx = *state;

	assert_int_equal(rconn_command(fx->c, rec_cb, TAG(1), "GET %q"), -1);
	assert_string_equal(rconn_errstr(fx->c), "bad command format");
	assert_int_equal(rconn_pending(fx->c), 0);
}

/* The synchronous side, on a private base. */
static void
test_rconn_sync_call_and_pipeline(void **state)
{
	struct fixture	*fx = *state;
	redisReply	*r;
	const char	*argv[] = { "GET", "k" };
	int		 sv[2];

	assert_null(rconn_call(fx->c, "PING"));		/* async: no */
	assert_string_equal(rconn_errstr(fx->c),
	    "not a synchronous connection");
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0, sv), 0);
	rconn_free(fx->c);
	fx->c = rconn_open_fd(NULL, sv[0], NULL, NULL, NULL, NULL);
	assert_non_null(fx->c);
	assert_int_equal(rconn_wait_up(fx->c), 0);
	/* Answers written ahead: the socket holds them until read. */
	assert_int_equal(write(sv[1], "+OK\r\n", 5), 5);
	r = rconn_call(fx->c, "SET k %b", "v\0w", (size_t)3);
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_STATUS);
	freeReplyObject(r);
	assert_int_equal(write(sv[1], "$3\r\nv\0w\r\n:1\r\n-ERR x\r\n", 21),
	    21);
	assert_int_equal(rconn_append_argv(fx->c, 2, argv, NULL), 0);
	assert_int_equal(rconn_append(fx->c, "EXISTS k"), 0);
	assert_int_equal(rconn_append(fx->c, "NOPE"), 0);
	assert_non_null(r = rconn_next(fx->c));
	assert_int_equal(r->len, 3);
	assert_memory_equal(r->str, "v\0w", 3);
	freeReplyObject(r);
	assert_non_null(r = rconn_next(fx->c));
	assert_int_equal(r->integer, 1);
	freeReplyObject(r);
	assert_non_null(r = rconn_next(fx->c));
	assert_int_equal(r->type, REDIS_REPLY_ERROR);	/* a reply */
	freeReplyObject(r);
	assert_null(rconn_next(fx->c));		/* nothing asked */
	/* A timeout ends the connection, and every later call fails. */
	rconn_set_timeout(fx->c, 0, 20);
	assert_null(rconn_call(fx->c, "PING"));
	assert_string_equal(rconn_errstr(fx->c),
	    "no reply from Redis in 20 ms");
	assert_null(rconn_call(fx->c, "PING"));
	close(sv[1]);
}

/* A sync connection freed with replies taken by nobody: no leak. */
static void
test_rconn_sync_free_with_replies_kept(void **state)
{
	struct fixture	*fx = *state;
	redisReply	*r;
	int		 sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0, sv), 0);
	rconn_free(fx->c);
	fx->c = rconn_open_fd(NULL, sv[0], NULL, NULL, NULL, NULL);
	assert_int_equal(write(sv[1], "+A\r\n+B\r\n", 8), 8);
	assert_int_equal(rconn_append(fx->c, "PING"), 0);
	assert_int_equal(rconn_append(fx->c, "PING"), 0);
	assert_int_equal(rconn_append(fx->c, "PING"), 0);
	r = rconn_next(fx->c);			/* B arrives with A */
	assert_string_equal(r->str, "A");
	freeReplyObject(r);
	close(sv[1]);
	/* B kept, the third pending: both go with the rconn. */
}

/* The TLS settings' errors name the file and the problem. */
static void
test_rconn_tls_ctx_causes(void **state)
{
	struct fixture		*fx = *state;
	struct rconn_tls	 t;
	char			 path[128], *cause;
	SSL_CTX			*ctx;
	FILE			*f;

	snprintf(fx->dir, sizeof fx->dir, "/tmp/test_rconn.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	memset(&t, 0, sizeof t);
	t.ca_file = "/nonexistent/ca.pem";
	assert_null(rconn_tls_ctx(&t, &cause));
	assert_string_equal(cause,
	    "TLS CA file /nonexistent/ca.pem: No such file or directory");
	free(cause);

	snprintf(path, sizeof path, "%s/junk.pem", fx->dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("not a certificate\n", f);
	fclose(f);
	t.ca_file = path;
	assert_null(rconn_tls_ctx(&t, &cause));
	assert_non_null(strstr(cause, "TLS CA file "));
	assert_non_null(strstr(cause, "junk.pem: "));
	free(cause);

	t.ca_file = NULL;
	t.cert_file = path;
	assert_null(rconn_tls_ctx(&t, &cause));
	assert_non_null(strstr(cause, "TLS certificate file "));
	free(cause);

	t.cert_file = NULL;
	t.key_file = path;
	assert_null(rconn_tls_ctx(&t, &cause));
	assert_non_null(strstr(cause, "without a certificate"));
	free(cause);

	t.key_file = NULL;
	ctx = rconn_tls_ctx(&t, &cause);	/* the system's CAs */
	assert_non_null(ctx);
	assert_null(cause);
	rconn_tls_ctx_free(ctx);
	unlink(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name)	cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_rconn_bytes_and_replies_in_order),
		T(test_rconn_reply_split_across_reads),
		T(test_rconn_pipeline_1000),
		T(test_rconn_close_nulls_every_pending_once),
		T(test_rconn_free_inside_a_callback),
		T(test_rconn_free_inside_a_null_callback),
		T(test_rconn_free_inside_the_state_callback),
		T(test_rconn_free_with_commands_pending),
		T(test_rconn_disconnect_inside_a_callback),
		T(test_rconn_callback_sends_a_command),
		T(test_rconn_protocol_error_takes_it_down),
		T(test_rconn_reply_to_no_command_takes_it_down),
		T(test_rconn_connect_refused_said_from_the_loop),
		T(test_rconn_commands_before_up_wait),
		T(test_rconn_reply_timeout),
		T(test_rconn_bad_format_refused),
		T(test_rconn_sync_call_and_pipeline),
		T(test_rconn_sync_free_with_replies_kept),
		T(test_rconn_tls_ctx_causes),
#undef T
	};

	signal(SIGPIPE, SIG_IGN);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
