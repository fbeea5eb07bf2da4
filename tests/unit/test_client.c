/*
 * Unit tests for queue/client.c: the exact bytes each client_* function
 * puts on the wire, read from the other end of a socketpair (no Redis)
 * adopted by a synchronous rconn (a client's first connection), and the
 * reply it hands back from a canned answer written beforehand; on a
 * Redis Cluster, the same commands with their keys tagged.
 */

#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "queue/client.h"
#include "queue/rconn.h"

/*
 * The key names below are spelled out on purpose (docs/PROTOCOL.md,
 * section 1): the test checks the wire names, not queue/keyspace.h.
 */

/* An item with spaces and UTF-8 (é, ö, U+2713), 66 bytes. */
#define ITEM_JSON	"{\"id\":\"a 1\",\"type\":\"EXEC\",\"args\":{\"cmd\":" \
			    "\"echo h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93\"}}"
/* A decision whose approver is Zoë, 70 bytes. */
#define DECISION_JSON	"{\"type\":\"APPROVE\",\"request\":\"req-1\"," \
			    "\"by\":\"Zo\xc3\xab\",\"reason\":\"looks fine\"}"

/* Which client_* function a row calls. */
enum wire_call {
	CALL_AUTH,		/* a: user (or NULL), b: password */
	CALL_SELECT,		/* num: db */
	CALL_WHOAMI,
	CALL_ITEM_ADD,		/* a: stream, b: json, len */
	CALL_ITEM_DEL,		/* a: stream, b: entry */
	CALL_REPLY_DEL,		/* a: reply */
	CALL_STREAM_LAST,	/* a: stream */
	CALL_STREAM_AFTER,	/* a: stream, b: after */
	CALL_XREAD,		/* num: count, block, n, streams, ids */
	CALL_EXISTS,		/* a: key */
	CALL_SESSION_GET,	/* a: id */
	CALL_SESSIONS_NEWEST,	/* num: count */
	CALL_WORKERS_GET,
	CALL_WORKER_ALIVE,	/* a: consumer */
	CALL_WORKERS_DEL,	/* a: consumer */
	CALL_WORKERS_BEAT_DEL,	/* a: consumer */
	CALL_APPROVAL_GET,	/* a: request */
	CALL_APPROVALS_PENDING,	/* num: now_ms */
	CALL_DECISION_ADD,	/* b: json, len */
	/* The pipelines: the _append, then client_next_reply. */
	CALL_SESSION_GET_APPEND,	/* a: id, len */
	CALL_WORKER_ALIVE_APPEND	/* a: consumer, len */
};

/* One call, the bytes it must send, and the reply Redis gives it. */
struct wire_row {
	const char	*name;
	enum wire_call	 call;
	const char	*a, *b;		/* string arguments (see the enum) */
	size_t		 len;		/* the length argument, if any */
	long long	 num;		/* a count, a db, now_ms */
	long long	 block;		/* client_xread's block_ms */
	int		 n;
	const char	*streams[3], *ids[3];
	const char	*reply;		/* canned RESP, written first */
	int		 type;		/* the type of the reply we get */
	const char	*want;		/* the bytes on the wire */
	size_t		 want_len;
	int		 cluster;	/* the client is on a cluster, its
					   home queue "exec" */
};

/* The expected bytes of a row, NULs included. */
#define WIRE(s)		.want = (s), .want_len = sizeof (s) - 1

#define OK		.reply = "+OK\r\n", .type = REDIS_REPLY_STATUS
#define ZERO		.reply = ":0\r\n", .type = REDIS_REPLY_INTEGER
#define ONE		.reply = ":1\r\n", .type = REDIS_REPLY_INTEGER
#define EMPTY		.reply = "*0\r\n", .type = REDIS_REPLY_ARRAY
#define NIL_ARRAY	.reply = "*-1\r\n", .type = REDIS_REPLY_NIL
#define NIL		.reply = "$-1\r\n", .type = REDIS_REPLY_NIL
#define ENTRY_ID	.reply = "$15\r\n1700000000000-0\r\n", \
			    .type = REDIS_REPLY_STRING

static const struct wire_row rows[] = {
	/* The login. */
	{ "AUTH password", CALL_AUTH, .b = "s3cret", OK,
	    WIRE("*2\r\n$4\r\nAUTH\r\n$6\r\ns3cret\r\n") },
	{ "AUTH user, password with a space", CALL_AUTH, .a = "alice",
	    .b = "correct horse", .reply = "-WRONGPASS invalid "
	    "username-password pair or user is disabled.\r\n",
	    .type = REDIS_REPLY_ERROR,
	    WIRE("*3\r\n$4\r\nAUTH\r\n$5\r\nalice\r\n"
	    "$13\r\ncorrect horse\r\n") },
	{ "AUTH empty password", CALL_AUTH, .b = "",
	    .reply = "-ERR AUTH <password> called without any password "
	    "configured for the default user.\r\n",
	    .type = REDIS_REPLY_ERROR,
	    WIRE("*2\r\n$4\r\nAUTH\r\n$0\r\n\r\n") },
	{ "SELECT 3", CALL_SELECT, .num = 3, OK,
	    WIRE("*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n") },
	{ "SELECT 15", CALL_SELECT, .num = 15, OK,
	    WIRE("*2\r\n$6\r\nSELECT\r\n$2\r\n15\r\n") },
	{ "ACL WHOAMI", CALL_WHOAMI,
	    .reply = "$7\r\ndefault\r\n", .type = REDIS_REPLY_STRING,
	    WIRE("*2\r\n$3\r\nACL\r\n$6\r\nWHOAMI\r\n") },

	/* Streams. */
	{ "XADD an item, spaces and UTF-8", CALL_ITEM_ADD,
	    .a = "q:exec:normal", .b = ITEM_JSON,
	    .len = sizeof ITEM_JSON - 1, ENTRY_ID,
	    WIRE("*5\r\n$4\r\nXADD\r\n$13\r\nq:exec:normal\r\n$1\r\n*\r\n"
	    "$4\r\nitem\r\n$66\r\n" ITEM_JSON "\r\n") },
	{ "XADD an item with a NUL, by its length", CALL_ITEM_ADD,
	    .a = "q:exec:ctl", .b = "{\"k\":\"a\0b\"}", .len = 11, ENTRY_ID,
	    WIRE("*5\r\n$4\r\nXADD\r\n$10\r\nq:exec:ctl\r\n$1\r\n*\r\n"
	    "$4\r\nitem\r\n$11\r\n{\"k\":\"a\0b\"}\r\n") },
	{ "XADD an item shorter than its string", CALL_ITEM_ADD,
	    .a = "q:exec:low", .b = "{}trailing", .len = 2, ENTRY_ID,
	    WIRE("*5\r\n$4\r\nXADD\r\n$10\r\nq:exec:low\r\n$1\r\n*\r\n"
	    "$4\r\nitem\r\n$2\r\n{}\r\n") },
	{ "XADD an empty item", CALL_ITEM_ADD, .a = "q:exec:high",
	    .b = "", .len = 0, ENTRY_ID,
	    WIRE("*5\r\n$4\r\nXADD\r\n$11\r\nq:exec:high\r\n$1\r\n*\r\n"
	    "$4\r\nitem\r\n$0\r\n\r\n") },
	{ "XDEL", CALL_ITEM_DEL, .a = "q:exec:ctl", .b = "1700000000000-0",
	    ONE,
	    WIRE("*3\r\n$4\r\nXDEL\r\n$10\r\nq:exec:ctl\r\n"
	    "$15\r\n1700000000000-0\r\n") },
	{ "DEL a private reply queue", CALL_REPLY_DEL, .a = "r-01ABC",
	    .reply = ":2\r\n", .type = REDIS_REPLY_INTEGER,
	    WIRE("*3\r\n$3\r\nDEL\r\n$16\r\nq:r-01ABC:normal\r\n"
	    "$14\r\nq:r-01ABC:high\r\n") },
	{ "XREVRANGE", CALL_STREAM_LAST, .a = "execq:out:s-1", EMPTY,
	    WIRE("*6\r\n$9\r\nXREVRANGE\r\n$13\r\nexecq:out:s-1\r\n"
	    "$1\r\n+\r\n$1\r\n-\r\n$5\r\nCOUNT\r\n$1\r\n1\r\n") },
	{ "XRANGE after 0: all", CALL_STREAM_AFTER, .a = "execq:out:s-1",
	    .b = "0", EMPTY,
	    WIRE("*4\r\n$6\r\nXRANGE\r\n$13\r\nexecq:out:s-1\r\n"
	    "$1\r\n-\r\n$1\r\n+\r\n") },
	{ "XRANGE after an id: (id", CALL_STREAM_AFTER,
	    .a = "execq:out:s-1", .b = "1700000000000-3",
	    .reply = "*1\r\n*2\r\n$15\r\n1700000000000-4\r\n"
	    "*2\r\n$4\r\ndata\r\n$2\r\nhi\r\n", .type = REDIS_REPLY_ARRAY,
	    WIRE("*4\r\n$6\r\nXRANGE\r\n$13\r\nexecq:out:s-1\r\n"
	    "$16\r\n(1700000000000-3\r\n$1\r\n+\r\n") },
	{ "XREAD, block_ms < 0: no BLOCK", CALL_XREAD, .num = 100,
	    .block = -1, .n = 1, .streams = { "execq:out:s-1" },
	    .ids = { "0" }, NIL_ARRAY,
	    WIRE("*6\r\n$5\r\nXREAD\r\n$5\r\nCOUNT\r\n$3\r\n100\r\n"
	    "$7\r\nSTREAMS\r\n$13\r\nexecq:out:s-1\r\n$1\r\n0\r\n") },
	{ "XREAD BLOCK, three streams", CALL_XREAD, .num = 64,
	    .block = 5000, .n = 3, .streams = { "q:r-01ABC:normal",
	    "q:r-01ABC:high", "execq:out:job-1" },
	    .ids = { "0-0", "1700000000000-0", "$" }, NIL_ARRAY,
	    WIRE("*12\r\n$5\r\nXREAD\r\n$5\r\nCOUNT\r\n$2\r\n64\r\n"
	    "$5\r\nBLOCK\r\n$4\r\n5000\r\n$7\r\nSTREAMS\r\n"
	    "$16\r\nq:r-01ABC:normal\r\n$14\r\nq:r-01ABC:high\r\n"
	    "$15\r\nexecq:out:job-1\r\n"
	    "$3\r\n0-0\r\n$15\r\n1700000000000-0\r\n$1\r\n$\r\n") },
	{ "XREAD BLOCK 0 is sent as is", CALL_XREAD, .num = 1, .block = 0,
	    .n = 1, .streams = { "q:r-01ABC:high" }, .ids = { "0" },
	    NIL_ARRAY,
	    WIRE("*8\r\n$5\r\nXREAD\r\n$5\r\nCOUNT\r\n$1\r\n1\r\n"
	    "$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n"
	    "$14\r\nq:r-01ABC:high\r\n$1\r\n0\r\n") },
	{ "EXISTS", CALL_EXISTS, .a = "execq:out:s-1", ZERO,
	    WIRE("*2\r\n$6\r\nEXISTS\r\n$13\r\nexecq:out:s-1\r\n") },

	/* Sessions. */
	{ "HGETALL a session", CALL_SESSION_GET, .a = "s-01",
	    .reply = "*2\r\n$6\r\nstatus\r\n$7\r\nrunning\r\n",
	    .type = REDIS_REPLY_ARRAY,
	    WIRE("*2\r\n$7\r\nHGETALL\r\n$18\r\nexecq:session:s-01\r\n") },
	{ "HGETALL an empty session id", CALL_SESSION_GET, .a = "", EMPTY,
	    WIRE("*2\r\n$7\r\nHGETALL\r\n$14\r\nexecq:session:\r\n") },
	{ "ZREVRANGE the newest 100", CALL_SESSIONS_NEWEST, .num = 100,
	    .reply = "*1\r\n$4\r\ns-01\r\n", .type = REDIS_REPLY_ARRAY,
	    WIRE("*4\r\n$9\r\nZREVRANGE\r\n$14\r\nexecq:sessions\r\n"
	    "$1\r\n0\r\n$2\r\n99\r\n") },
	{ "ZREVRANGE the newest 1", CALL_SESSIONS_NEWEST, .num = 1, EMPTY,
	    WIRE("*4\r\n$9\r\nZREVRANGE\r\n$14\r\nexecq:sessions\r\n"
	    "$1\r\n0\r\n$1\r\n0\r\n") },

	/* Workers. */
	{ "HGETALL the registry", CALL_WORKERS_GET, EMPTY,
	    WIRE("*2\r\n$7\r\nHGETALL\r\n$13\r\nexecq:workers\r\n") },
	{ "EXISTS a lease", CALL_WORKER_ALIVE, .a = "vm-5658", ONE,
	    WIRE("*2\r\n$6\r\nEXISTS\r\n$20\r\nexecq:worker:vm-5658\r\n") },
	{ "HDEL from the registry", CALL_WORKERS_DEL, .a = "vm-5658", ONE,
	    WIRE("*3\r\n$4\r\nHDEL\r\n$13\r\nexecq:workers\r\n"
	    "$7\r\nvm-5658\r\n") },
	{ "ZREM from the beats", CALL_WORKERS_BEAT_DEL, .a = "vm-5658", ONE,
	    WIRE("*3\r\n$4\r\nZREM\r\n$18\r\nexecq:workers:beat\r\n"
	    "$7\r\nvm-5658\r\n") },

	/* Approvals. */
	{ "GET a request", CALL_APPROVAL_GET, .a = "req-1", NIL,
	    WIRE("*2\r\n$3\r\nGET\r\n$20\r\nexecq:approval:req-1\r\n") },
	{ "ZRANGEBYSCORE the pending", CALL_APPROVALS_PENDING,
	    .num = 1795618261505LL,
	    .reply = "*1\r\n$5\r\nreq-1\r\n", .type = REDIS_REPLY_ARRAY,
	    WIRE("*4\r\n$13\r\nZRANGEBYSCORE\r\n"
	    "$23\r\nexecq:approvals:pending\r\n$13\r\n1795618261505\r\n"
	    "$4\r\n+inf\r\n") },
	{ "XADD a decision, UTF-8", CALL_DECISION_ADD, .b = DECISION_JSON,
	    .len = sizeof DECISION_JSON - 1, ENTRY_ID,
	    WIRE("*8\r\n$4\r\nXADD\r\n$15\r\nexecq:decisions\r\n"
	    "$6\r\nMAXLEN\r\n$1\r\n~\r\n$5\r\n10000\r\n$1\r\n*\r\n"
	    "$4\r\nitem\r\n$70\r\n" DECISION_JSON "\r\n") },
	{ "XADD a decision with a NUL, by its length", CALL_DECISION_ADD,
	    .b = "a\0b", .len = 3, ENTRY_ID,
	    WIRE("*8\r\n$4\r\nXADD\r\n$15\r\nexecq:decisions\r\n"
	    "$6\r\nMAXLEN\r\n$1\r\n~\r\n$5\r\n10000\r\n$1\r\n*\r\n"
	    "$4\r\nitem\r\n$3\r\na\0b\r\n") },

	/* On a cluster: each key tagged with its queue, execq: with "exec". */
	{ "XADD an item to a tagged lane", CALL_ITEM_ADD, .cluster = 1,
	    .a = "q:{exec}:normal", .b = "{}", .len = 2, ENTRY_ID,
	    WIRE("*5\r\n$4\r\nXADD\r\n$15\r\nq:{exec}:normal\r\n"
	    "$1\r\n*\r\n$4\r\nitem\r\n$2\r\n{}\r\n") },
	{ "DEL a private reply queue, tagged with it", CALL_REPLY_DEL,
	    .cluster = 1, .a = "cli.h.1.x", ONE,
	    WIRE("*3\r\n$3\r\nDEL\r\n$20\r\nq:{cli.h.1.x}:normal\r\n"
	    "$18\r\nq:{cli.h.1.x}:high\r\n") },
	{ "HGETALL a session, tagged", CALL_SESSION_GET, .cluster = 1,
	    .a = "s-01", EMPTY,
	    WIRE("*2\r\n$7\r\nHGETALL\r\n$25\r\nexecq:{exec}:session:s-01"
	    "\r\n") },
	{ "ZREVRANGE the newest, tagged", CALL_SESSIONS_NEWEST, .cluster = 1,
	    .num = 10, EMPTY,
	    WIRE("*4\r\n$9\r\nZREVRANGE\r\n$21\r\nexecq:{exec}:sessions\r\n"
	    "$1\r\n0\r\n$1\r\n9\r\n") },
	{ "ZREM from the beats, tagged", CALL_WORKERS_BEAT_DEL, .cluster = 1,
	    .a = "vm-1", ONE,
	    WIRE("*3\r\n$4\r\nZREM\r\n$25\r\nexecq:{exec}:workers:beat"
	    "\r\n$4\r\nvm-1\r\n") },
	{ "XADD a decision, tagged", CALL_DECISION_ADD, .cluster = 1,
	    .b = "{}", .len = 2, ENTRY_ID,
	    WIRE("*8\r\n$4\r\nXADD\r\n$22\r\nexecq:{exec}:decisions\r\n"
	    "$6\r\nMAXLEN\r\n$1\r\n~\r\n$5\r\n10000\r\n$1\r\n*\r\n"
	    "$4\r\nitem\r\n$2\r\n{}\r\n") },
	{ "EXISTS a lease, tagged, appended", CALL_WORKER_ALIVE_APPEND,
	    .cluster = 1, .a = "vm-1", .len = 4, ZERO,
	    WIRE("*2\r\n$6\r\nEXISTS\r\n$24\r\nexecq:{exec}:worker:vm-1"
	    "\r\n") },

	/* The pipelines, one command each (test_client_pipeline: more). */
	{ "HGETALL a session, appended", CALL_SESSION_GET_APPEND,
	    .a = "s-01", .len = 4, EMPTY,
	    WIRE("*2\r\n$7\r\nHGETALL\r\n$18\r\nexecq:session:s-01\r\n") },
	{ "HGETALL a session id with a NUL, appended",
	    CALL_SESSION_GET_APPEND, .a = "s\0x", .len = 3, EMPTY,
	    WIRE("*2\r\n$7\r\nHGETALL\r\n$17\r\nexecq:session:s\0x\r\n") },
	{ "EXISTS a lease, appended", CALL_WORKER_ALIVE_APPEND,
	    .a = "vm-1", .len = 4, ZERO,
	    WIRE("*2\r\n$6\r\nEXISTS\r\n$17\r\nexecq:worker:vm-1\r\n") },
	{ "EXISTS a lease by its length, appended",
	    CALL_WORKER_ALIVE_APPEND, .a = "vm-5658-extra", .len = 7, ONE,
	    WIRE("*2\r\n$6\r\nEXISTS\r\n$20\r\nexecq:worker:vm-5658\r\n") },
};

/*
 * Makes the row's call on cl, or on c, its first connection (the login):
 * the reply, or NULL (client_errstr, or rconn_errstr, says why).
 */
static redisReply *
wire_call(struct rconn *c, struct client *cl, const struct wire_row *w)
{
	switch (w->call) {
	case CALL_AUTH:
		return (client_auth(c, w->a, w->b));
	case CALL_SELECT:
		return (client_select(c, (int)w->num));
	case CALL_WHOAMI:
		return (client_whoami(cl));
	case CALL_ITEM_ADD:
		return (client_item_add(cl, w->a, w->b, w->len));
	case CALL_ITEM_DEL:
		return (client_item_del(cl, w->a, w->b));
	case CALL_REPLY_DEL:
		return (client_reply_del(cl, w->a));
	case CALL_STREAM_LAST:
		return (client_stream_last(cl, w->a));
	case CALL_STREAM_AFTER:
		return (client_stream_after(cl, w->a, w->b));
	case CALL_XREAD:
		return (client_xread(cl, (long)w->num, w->block, w->n,
		    w->streams, w->ids));
	case CALL_EXISTS:
		return (client_exists(cl, w->a));
	case CALL_SESSION_GET:
		return (client_session_get(cl, w->a));
	case CALL_SESSIONS_NEWEST:
		return (client_sessions_newest(cl, (long)w->num));
	case CALL_WORKERS_GET:
		return (client_workers_get(cl));
	case CALL_WORKER_ALIVE:
		return (client_worker_alive(cl, w->a));
	case CALL_WORKERS_DEL:
		return (client_workers_del(cl, w->a));
	case CALL_WORKERS_BEAT_DEL:
		return (client_workers_beat_del(cl, w->a));
	case CALL_APPROVAL_GET:
		return (client_approval_get(cl, w->a));
	case CALL_APPROVALS_PENDING:
		return (client_approvals_pending(cl, w->num));
	case CALL_DECISION_ADD:
		return (client_decision_add(cl, w->b, w->len));
	case CALL_SESSION_GET_APPEND:
		if (client_session_get_append(cl, w->a, w->len) != 0)
			return (NULL);
		return (client_next_reply(cl));
	case CALL_WORKER_ALIVE_APPEND:
		if (client_worker_alive_append(cl, w->a, w->len) != 0)
			return (NULL);
		return (client_next_reply(cl));
	}
	fail_msg("%s: no such call %d", w->name, (int)w->call);
	return (NULL);
}

/*
 * A synchronous rconn on one end of a socketpair (non-blocking, as rconn
 * wants it); *peer is the other end, Redis's. reply (may be "") is
 * written there first, then the peer stops writing: a call reads that
 * reply, or EOF, and never waits.
 */
static struct rconn *
wire_open(const char *reply, int *peer)
{
	struct rconn	*c;
	size_t		 len = strlen(reply), off = 0;
	ssize_t		 n;
	int		 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		fail_msg("socketpair: %s", strerror(errno));
	if (fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK) == -1)
		fail_msg("fcntl: %s", strerror(errno));
	if ((c = rconn_open_fd(NULL, sv[0], NULL, NULL, NULL, NULL)) ==
	    NULL) {
		close(sv[1]);
		fail_msg("rconn_open_fd: %s", strerror(errno));
	}
	while (off < len) {
		if ((n = write(sv[1], reply + off, len - off)) == -1) {
			rconn_free(c);
			close(sv[1]);
			fail_msg("write: %s", strerror(errno));
		}
		off += (size_t)n;
	}
	if (shutdown(sv[1], SHUT_WR) == -1) {
		rconn_free(c);
		close(sv[1]);
		fail_msg("shutdown: %s", strerror(errno));
	}
	*peer = sv[1];
	return (c);
}

/*
 * Everything the client wrote to peer, which is all there: a call sends
 * its whole command before it reads. -1 if buf is too small or recv
 * failed.
 */
static ssize_t
wire_read(int peer, char *buf, size_t size)
{
	size_t	off = 0;
	ssize_t	n;

	for (;;) {
		if (off == size)
			return (-1);
		n = recv(peer, buf + off, size - off, MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return ((ssize_t)off);
		if (n <= 0)
			return (n == 0 ? (ssize_t)off : -1);
		off += (size_t)n;
	}
}

/* s (len bytes) as a C literal would spell it, in out. */
static void
wire_escape(const char *s, size_t len, char *out, size_t size)
{
	size_t	i, o = 0;
	int	c;

	for (i = 0; i < len && o + 5 < size; i++) {
		c = (unsigned char)s[i];
		if (c == '\r')
			o += (size_t)snprintf(out + o, size - o, "\\r");
		else if (c == '\n')
			o += (size_t)snprintf(out + o, size - o, "\\n");
		else if (c == '\\' || c == '"')
			o += (size_t)snprintf(out + o, size - o, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(out + o, size - o, "\\%03o", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
}

/* Fails, naming the row, unless got (n bytes) is the row's bytes. */
static void
wire_check(const char *name, const char *got, ssize_t n, const char *want,
    size_t want_len)
{
	char	g[4096 * 4 + 1], w[4096 * 4 + 1];

	if (n < 0)
		fail_msg("%s: could not read what the client sent", name);
	if ((size_t)n == want_len && memcmp(got, want, want_len) == 0)
		return;
	wire_escape(got, (size_t)n, g, sizeof g);
	wire_escape(want, want_len, w, sizeof w);
	fail_msg("%s: sent\n  \"%s\"\nwanted\n  \"%s\"", name, g, w);
}

/* Runs one row: the call, its bytes, its reply's type. */
static void
wire_run(const struct wire_row *w)
{
	struct rconn	*c;
	struct client	*cl;
	redisReply	*r;
	char		 got[4096], err[128] = "";
	ssize_t		 n;
	int		 peer, type = -1;

	c = wire_open(w->reply, &peer);
	cl = client_create(c, NULL, 0, w->cluster, "exec", NULL, NULL);
	r = wire_call(c, cl, w);
	n = wire_read(peer, got, sizeof got);
	if (r != NULL) {
		type = r->type;
		freeReplyObject(r);
	} else
		snprintf(err, sizeof err, "%s", *client_errstr(cl) != '\0' ?
		    client_errstr(cl) : rconn_errstr(c));
	client_free(cl);		/* and c */
	close(peer);
	wire_check(w->name, got, n, w->want, w->want_len);
	if (type == -1)
		fail_msg("%s: no reply: %s", w->name, err);
	if (type != w->type)
		fail_msg("%s: reply type %d, wanted %d", w->name, type,
		    w->type);
}

static void
test_client_rows(void **state)
{
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
		wire_run(&rows[i]);
}

/* Every call the enum names has a row (a new client_* needs both). */
static void
test_client_rows_cover_every_call(void **state)
{
	int	seen[CALL_WORKER_ALIVE_APPEND + 1] = { 0 };
	size_t	i;
	int	k;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
		seen[rows[i].call] = 1;
	for (k = 0; k <= CALL_WORKER_ALIVE_APPEND; k++)
		if (!seen[k])
			fail_msg("no row calls enum wire_call %d", k);
}

/* Two appended commands go out together; their replies come in order. */
static void
test_client_pipeline(void **state)
{
	struct client	*cl;
	redisReply	*r1, *r2, *r3;
	char		 got[4096];
	ssize_t		 n;
	int		 peer, t1, t2, rc1, rc2;
	static const char want[] =
	    "*2\r\n$7\r\nHGETALL\r\n$18\r\nexecq:session:s-01\r\n"
	    "*2\r\n$6\r\nEXISTS\r\n$20\r\nexecq:worker:vm-5658\r\n";

	(void)state;
	cl = client_create(wire_open("*2\r\n$6\r\nstatus\r\n$7\r\nrunning"
	    "\r\n:1\r\n", &peer), NULL, 0, 0, "exec", NULL, NULL);
	rc1 = client_session_get_append(cl, "s-01", 4);
	rc2 = client_worker_alive_append(cl, "vm-5658", 7);
	/* Appending sends nothing yet. */
	n = wire_read(peer, got, sizeof got);
	assert_int_equal(n, 0);
	r1 = client_next_reply(cl);
	r2 = client_next_reply(cl);
	r3 = client_next_reply(cl);	/* none asked: NULL, said */
	n = wire_read(peer, got, sizeof got);
	t1 = r1 != NULL ? r1->type : -1;
	t2 = r2 != NULL ? r2->type : -1;
	freeReplyObject(r1);
	freeReplyObject(r2);
	assert_null(r3);
	assert_string_equal(client_errstr(cl), "no command waits for a reply");
	client_free(cl);
	close(peer);
	assert_int_equal(rc1, 0);
	assert_int_equal(rc2, 0);
	wire_check("pipeline", got, n, want, sizeof want - 1);
	assert_int_equal(t1, REDIS_REPLY_ARRAY);
	assert_int_equal(t2, REDIS_REPLY_INTEGER);
}

/* Redis gone before it answered: NULL, down for good, the command sent. */
static void
test_client_connection_lost(void **state)
{
	struct rconn	*c;
	struct client	*cl;
	redisReply	*r;
	char		 got[4096], err[128];
	ssize_t		 n;
	int		 peer, st;
	static const char want[] =
	    "*2\r\n$6\r\nEXISTS\r\n$13\r\nexecq:out:s-1\r\n";

	(void)state;
	c = wire_open("", &peer);
	cl = client_create(c, NULL, 0, 0, "exec", NULL, NULL);
	r = client_exists(cl, "execq:out:s-1");
	n = wire_read(peer, got, sizeof got);
	st = rconn_state(c);
	snprintf(err, sizeof err, "%s", client_errstr(cl));
	freeReplyObject(r);
	client_free(cl);		/* and c */
	close(peer);
	assert_null(r);
	assert_int_equal(st, RCONN_DOWN);
	assert_string_equal(err, "connection closed by the server");
	wire_check("connection lost", got, n, want, sizeof want - 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client_rows),
		cmocka_unit_test(test_client_rows_cover_every_call),
		cmocka_unit_test(test_client_pipeline),
		cmocka_unit_test(test_client_connection_lost),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
