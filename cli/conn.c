/*
 * execq: the conversation with Redis: finding and reaching the server
 * (plain, unix or TLS, on a synchronous rconn), sending an item, waiting
 * for its answer on a reply stream.
 */

#include <sys/socket.h>
#include <sys/time.h>

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cli/cli.h"
#include "logs/clock.h"
#include "logs/xmalloc.h"
#include "queue/client.h"
#include "queue/keyspace.h"
#include "queue/rconn.h"
#include "queue/rurl.h"

/*
 * r (a reply of queue/client.c), or NULL (said, "Redis at URL: WHAT: why")
 * when the connection failed or Redis answered with an error.
 */
redisReply *
execq_reply(struct execq_session *s, const char *what, redisReply *r)
{
	if (r == NULL) {
		execq_error("Redis at %s: %s: %s", s->display, what,
		    client_errstr(s->c));
		return (NULL);
	}
	if (r->type == REDIS_REPLY_ERROR) {
		execq_error("Redis at %s: %s: %s", s->display, what, r->str);
		freeReplyObject(r);
		return (NULL);
	}
	return (r);
}

/* c once it is up (timeouts set), else NULL with *why; c is freed. */
static struct rconn *
execq_connect_wait(struct rconn *c, int connect_ms, int reply_ms,
    char **why)
{
	if (c == NULL) {
		xasprintf(why, "%s", strerror(errno));
		return (NULL);
	}
	rconn_set_timeout(c, connect_ms, reply_ms);
	if (rconn_wait_up(c) == 0)
		return (c);
	xasprintf(why, "%s", rconn_errstr(c));
	rconn_free(c);
	return (NULL);
}

/*
 * A synchronous connection to path (a unix socket), or to host:port,
 * each address of host in turn until one is up: TLS if ctx, host being
 * the name sent (SNI) and checked in the certificate, unless
 * $EXECQ_REDIS_TLS_SERVER_NAME (or redis_tls_server_name in the config
 * file) names another, as the worker's setting does. NULL with *why
 * (allocated: the last address's failure) if none came up.
 */
static struct rconn *
execq_connect(const char *host, int port, const char *path, SSL_CTX *ctx,
    int connect_ms, int reply_ms, char **why)
{
	struct addrinfo	 hints, *res, *ai;
	struct rconn	*c = NULL;
	char		 serv[16], *name = NULL;
	int		 rc;

	*why = NULL;
	if (path != NULL)
		return (execq_connect_wait(rconn_connect_unix(NULL, path, NULL,
		    NULL), connect_ms, reply_ms, why));
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(serv, sizeof serv, "%d", port);
	if ((rc = getaddrinfo(host, serv, &hints, &res)) != 0) {
		xasprintf(why, "%s: %s", host, gai_strerror(rc));
		return (NULL);
	}
	if (ctx != NULL)
		name = execq_conf_setting("EXECQ_REDIS_TLS_SERVER_NAME",
		    "redis_tls_server_name");
	for (ai = res; ai != NULL && c == NULL; ai = ai->ai_next) {
		free(*why);
		*why = NULL;
		c = execq_connect_wait(rconn_connect(NULL, ai->ai_addr,
		    ai->ai_addrlen, ctx, ctx == NULL ? NULL : name != NULL ?
		    name : host, NULL, NULL), connect_ms, reply_ms, why);
	}
	free(name);
	freeaddrinfo(res);
	if (c == NULL && *why == NULL)
		xasprintf(why, "%s: no address", host);
	return (c);
}

/*
 * The TLS context of a rediss:// URL, from the settings (cli/clientconf.c:
 * $EXECQ_REDIS_TLS_CA, _CERT, _KEY, else the config file): verified
 * against the CA (else the system's). NULL with *cause (allocated).
 */
static SSL_CTX *
execq_tls_open(char **cause)
{
	struct rconn_tls	 t;
	SSL_CTX			*ctx;
	char			*ca, *cert, *key;

	ca = execq_conf_setting("EXECQ_REDIS_TLS_CA", "redis_tls_ca");
	cert = execq_conf_setting("EXECQ_REDIS_TLS_CERT", "redis_tls_cert");
	key = execq_conf_setting("EXECQ_REDIS_TLS_KEY", "redis_tls_key");
	memset(&t, 0, sizeof t);
	t.ca_file = ca;
	t.cert_file = cert;
	t.key_file = key;
	ctx = rconn_tls_ctx(&t, cause);
	free(ca);
	free(cert);
	free(key);
	return (ctx);
}

/* 1 if any TLS setting is given (the environment or the config file). */
static int
execq_tls_asked(void)
{
	static const char *const env[] = { "EXECQ_REDIS_TLS_CA",
	    "EXECQ_REDIS_TLS_CERT", "EXECQ_REDIS_TLS_KEY",
	    "EXECQ_REDIS_TLS_SERVER_NAME" };
	static const char *const key[] = { "redis_tls_ca", "redis_tls_cert",
	    "redis_tls_key", "redis_tls_server_name" };
	char	*v;
	size_t	 i;

	for (i = 0; i < sizeof env / sizeof env[0]; i++) {
		if ((v = execq_conf_setting(env[i], key[i])) != NULL) {
			free(v);
			return (1);
		}
	}
	return (0);
}

/* r of a login's command on c, or NULL (said) if it failed. */
static redisReply *
execq_login_reply(const struct execq_session *s, struct rconn *c,
    const char *what, redisReply *r)
{
	if (r == NULL || r->type == REDIS_REPLY_ERROR) {
		execq_error("Redis at %s: %s: %s", s->display, what,
		    r == NULL ? rconn_errstr(c) : r->str);
		if (r != NULL)
			freeReplyObject(r);
		return (NULL);
	}
	return (r);
}

/* AUTH and SELECT as the URL asks, on c; -1 (said) if refused. */
static int
execq_login(const struct execq_session *s, struct rconn *c,
    const struct rurl *u)
{
	redisReply	*r;

	if (u->password != NULL) {
		r = execq_login_reply(s, c, "AUTH", client_auth(c, u->user,
		    u->password));
		if (r == NULL)
			return (-1);
		freeReplyObject(r);
	}
	if (u->db == 0)
		return (0);
	if ((r = execq_login_reply(s, c, "SELECT", client_select(c,
	    u->db))) == NULL)
		return (-1);
	freeReplyObject(r);
	return (0);
}

/*
 * A Redis Cluster's node, for the client (queue/client.h's connect
 * callback): connected as the first (TLS with the same settings, the
 * same timeouts) and logged in with the URL's AUTH; no SELECT on a
 * cluster. NULL with *why.
 */
static struct rconn *
execq_node_connect(const char *host, int port, char **why, void *arg)
{
	struct execq_session	*s = arg;
	struct rconn		*c;
	redisReply		*r;

	c = execq_connect(host, port, NULL, s->tls, EXECQ_CONNECT_S * 1000,
	    EXECQ_COMMAND_S * 1000, why);
	if (c == NULL || s->auth_password == NULL)
		return (c);
	r = client_auth(c, s->auth_user, s->auth_password);
	if (r != NULL && r->type != REDIS_REPLY_ERROR) {
		freeReplyObject(r);
		return (c);
	}
	xasprintf(why, "AUTH: %s", r != NULL ? r->str : rconn_errstr(c));
	if (r != NULL)
		freeReplyObject(r);
	rconn_free(c);
	return (NULL);
}

#define EXECQ_SENTINEL_TRIES	25	/* a failover under way: 5 s */
#define EXECQ_SENTINEL_PAUSE_MS	200
#define EXECQ_SENTINEL_MS	1000	/* connect and reply, per sentinel */

/*
 * Asks u's sentinels in turn where the primary is: 0 with *host (to
 * free) and *port, or -1 with *why (to free) when none knew.
 */
static int
execq_sentinel_ask(const struct rurl *u, SSL_CTX *ctx, char **host,
    int *port, char **why)
{
	struct rconn	*c;
	redisReply	*r;
	char		*cause;
	int		 i;

	*why = NULL;
	for (i = 0; i < u->nsentinels; i++) {
		free(*why);
		c = execq_connect(u->sentinels[i].host, u->sentinels[i].port,
		    NULL, ctx, EXECQ_SENTINEL_MS, EXECQ_SENTINEL_MS, &cause);
		if (c == NULL) {
			xasprintf(why, "sentinel %s:%d: %s",
			    u->sentinels[i].host, u->sentinels[i].port, cause);
			free(cause);
			continue;
		}
		r = NULL;
		if (u->sentinel_password != NULL)
			r = client_auth(c, u->sentinel_user,
			    u->sentinel_password);
		if (r == NULL || r->type != REDIS_REPLY_ERROR) {
			freeReplyObject(r);
			r = client_sentinel_master(c, u->master);
		}
		if (r != NULL && r->type == REDIS_REPLY_ARRAY &&
		    r->elements == 2 &&
		    r->element[0]->type == REDIS_REPLY_STRING &&
		    r->element[1]->type == REDIS_REPLY_STRING) {
			*why = NULL;
			*host = xstrdup(r->element[0]->str);
			*port = atoi(r->element[1]->str);
			freeReplyObject(r);
			rconn_free(c);
			return (0);
		}
		xasprintf(why, "sentinel %s:%d: %s", u->sentinels[i].host,
		    u->sentinels[i].port, r == NULL ? rconn_errstr(c) :
		    r->type == REDIS_REPLY_ERROR ? r->str :
		    "does not know the master");
		freeReplyObject(r);
		rconn_free(c);
	}
	return (-1);
}

/* 1 if the node is the primary (or may not be asked: NOPERM), else 0. */
static int
execq_is_primary(struct rconn *c)
{
	redisReply	*r;
	int		 yes;

	if ((r = client_role(c)) == NULL)
		return (0);
	yes = (r->type == REDIS_REPLY_ERROR &&
	    strncmp(r->str, "NOPERM", 6) == 0) ||
	    (r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
	    r->element[0]->type == REDIS_REPLY_STRING &&
	    strcmp(r->element[0]->str, "master") == 0);
	freeReplyObject(r);
	return (yes);
}

/*
 * A Sentinel URL: the primary the sentinels name, logged in, ROLE
 * master; asked again while a failover is under way (a node that is
 * not the primary is left). 0 with *c and *at (its host, to free), or
 * an exit code (said).
 */
static int
execq_sentinel_open(struct execq_session *s, const struct rurl *u,
    struct rconn **c, char **at, int *atport)
{
	char		*host = NULL, *why = NULL, *cause;
	int		 port, try;

	for (try = 0; try < EXECQ_SENTINEL_TRIES; try++) {
		if (try > 0)
			usleep(EXECQ_SENTINEL_PAUSE_MS * 1000);
		free(why);
		why = NULL;
		if (execq_sentinel_ask(u, s->tls, &host, &port, &why) == -1)
			continue;
		*c = execq_connect(host, port, NULL, s->tls,
		    EXECQ_CONNECT_S * 1000, EXECQ_COMMAND_S * 1000, &cause);
		if (*c == NULL) {
			xasprintf(&why, "the primary %s:%d: %s", host, port,
			    cause);
			free(cause);
		} else {
			if (execq_login(s, *c, u) == -1) {
				free(host);
				return (EXECQ_EXIT_FAIL);
			}
			if (execq_is_primary(*c)) {
				*at = host;
				*atport = port;
				return (0);
			}
			xasprintf(&why, "%s:%d is not the primary (a failover "
			    "under way?)", host, port);
		}
		free(host);
		host = NULL;
		rconn_free(*c);
		*c = NULL;
	}
	execq_error("cannot reach the primary of %s: %s", s->display,
	    why != NULL ? why : "no answer");
	free(why);
	return (EXECQ_EXIT_FAIL);
}

/*
 * The first connection, up and logged in: to u, or to the primary its
 * sentinels name. 0 with *c and *host (to free; NULL on a unix socket)
 * and *port, or an exit code (said).
 */
static int
execq_first_open(struct execq_session *s, const struct rurl *u,
    const char *from, struct rconn **c, char **host, int *port)
{
	char	*cause = NULL;

	*c = NULL;
	*host = NULL;
	if (u->master != NULL)
		return (execq_sentinel_open(s, u, c, host, port));
	*c = execq_connect(u->host, u->port, u->path, s->tls,
	    EXECQ_CONNECT_S * 1000, EXECQ_COMMAND_S * 1000, &cause);
	if (*c == NULL && u->tls && strstr(cause, "TLS") != NULL) {
		/* Reached, and refused: no address to blame. */
		execq_error("Redis at %s: %s", s->display, cause);
		free(cause);
		return (EXECQ_EXIT_FAIL);
	}
	if (*c == NULL) {
		execq_error("cannot reach Redis at %s: %s", s->display, cause);
		execq_error("that address is %s; start a Redis with 'make "
		    "run', or point the client at one (see 'execq --help')",
		    from);
		free(cause);
		return (EXECQ_EXIT_FAIL);
	}
	if (execq_login(s, *c, u) == -1) {
		rconn_free(*c);
		*c = NULL;
		return (EXECQ_EXIT_FAIL);
	}
	*host = u->path != NULL ? NULL : xstrdup(u->host);
	*port = u->port;
	return (0);
}

/*
 * Connects (2 s to be up, TLS included; 10 s for each reply), logs in
 * and makes the client (on a Redis Cluster, it reaches the other nodes
 * itself, logged in the same way); 0, or an exit code (said). Never in
 * the clear what was asked over TLS: rediss:// without its settings
 * right is an error, not a fallback.
 */
int
execq_session_open(struct execq_session *s, const struct execq_opts *o)
{
	struct rurl	 u;
	struct rconn	*c;
	char		*cause = NULL, *from = NULL, *host = NULL, *lane;
	int		 rc = EXECQ_EXIT_FAIL, port = 0;

	memset(s, 0, sizeof *s);
	if (execq_redis_url(o->redis, &u, &from, &cause) == -1) {
		execq_error("%s: %s", from, cause);
		free(cause);
		free(from);
		return (EXECQ_EXIT_USAGE);
	}
	s->display = rurl_display(&u);
	/* TLS settings with a URL that is not rediss://: say so, as the
	   worker does, rather than send a password in the clear. */
	if (!u.tls && execq_tls_asked()) {
		execq_error("Redis at %s: TLS settings are given "
		    "(EXECQ_REDIS_TLS_* or redis_tls_*), but the URL is not "
		    "rediss://; nothing was sent", s->display);
		goto out;
	}
	if (u.tls && (s->tls = execq_tls_open(&cause)) == NULL) {
		execq_error("Redis at %s: %s", s->display, cause);
		free(cause);
		goto out;
	}
	if (u.user != NULL && strcmp(u.user, "default") != 0)
		s->user = xstrdup(u.user);
	s->queue = xstrdup(o->queue);
	if ((rc = execq_first_open(s, &u, from, &c, &host, &port)) != 0)
		goto out;
	if (u.password != NULL) {
		s->auth_user = u.user != NULL ? xstrdup(u.user) : NULL;
		s->auth_password = xstrdup(u.password);
	}
	/* A user without +info: not a cluster. */
	s->c = client_create(c, host, port, client_cluster_node(c), o->queue,
	    execq_node_connect, s);
	s->item_key = client_lane_key(s->c, o->queue, o->lane);
	if (s->user != NULL) {
		xasprintf(&lane, "%s.%s", s->user, o->lane);
		s->own_key = client_lane_key(s->c, o->queue, lane);
		free(lane);
	}
out:
	free(host);
	free(from);
	rurl_release(&u);
	return (rc);
}

/* Deletes the private reply streams, disconnects and frees. */
void
execq_session_close(struct execq_session *s)
{
	redisReply	*r;

	if (s->c != NULL && client_up(s->c) && s->reply != NULL &&
	    (r = execq_reply(s, "DEL", client_reply_del(s->c, s->reply))) !=
	    NULL)
		freeReplyObject(r);
	client_free(s->c);
	rconn_tls_ctx_free(s->tls);
	free(s->display);
	free(s->user);
	free(s->auth_user);
	if (s->auth_password != NULL)
		explicit_bzero(s->auth_password, strlen(s->auth_password));
	free(s->auth_password);
	free(s->queue);
	free(s->item_key);
	free(s->own_key);
	free(s->reply);
	free(s->answer_key);
	free(s->cursor);
	free(s->notice_key);
	free(s->notice_cursor);
	free(s->live_key);
	free(s->live_cursor);
	memset(s, 0, sizeof *s);
}

/*
 * Answers go to a new private queue, read from its start: with a Redis
 * user, <user>.cli.<host>.<pid>.<random>, which its ACL may confine it
 * to (docs/acl/execq.acl).
 */
void
execq_session_private_reply(struct execq_session *s)
{
	char	*name;

	s->reply = execq_reply_name();
	if (s->user != NULL) {
		xasprintf(&name, "%s.%s", s->user, s->reply);
		if (execq_name_valid(name)) {
			free(s->reply);
			s->reply = name;
		} else
			free(name);
	}
	s->answer_key = client_lane_key(s->c, s->reply, KS_LANE_NORMAL);
	s->cursor = xstrdup("0");
	s->notice_key = client_lane_key(s->c, s->reply, KS_LANE_HIGH);
	s->notice_cursor = xstrdup("0");
}

/* The newest entry id of a stream, "0" if it has none; NULL (said). */
char *
execq_stream_last_id(struct execq_session *s, const char *key)
{
	redisReply	*r, *e;
	char		*id;

	r = execq_reply(s, "XREVRANGE", client_stream_last(s->c, key));
	if (r == NULL)
		return (NULL);
	if (r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
	    (e = r->element[0])->type == REDIS_REPLY_ARRAY &&
	    e->elements > 0 && e->element[0]->type == REDIS_REPLY_STRING)
		id = xstrdup(e->element[0]->str);
	else
		id = xstrdup("0");
	freeReplyObject(r);
	return (id);
}

/* The entries of a one-stream XREAD reply; NULL if NIL or misshapen. */
const redisReply *
execq_xread_entries(const redisReply *r)
{
	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->element[0]->type != REDIS_REPLY_ARRAY ||
	    r->element[0]->elements != 2 ||
	    r->element[0]->element[1]->type != REDIS_REPLY_ARRAY)
		return (NULL);
	return (r->element[0]->element[1]);
}

/* An entry's id, or NULL if the entry is not [id, [field, value...]]. */
const char *
execq_entry_id(const redisReply *e)
{
	if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
	    e->element[0]->type != REDIS_REPLY_STRING)
		return (NULL);
	return (e->element[0]->str);
}

/* The value of an entry's field name, or NULL (absent, or deleted). */
const redisReply *
execq_entry_field(const redisReply *e, const char *name)
{
	const redisReply	*f;
	size_t			 j;

	if (execq_entry_id(e) == NULL ||
	    (f = e->element[1])->type != REDIS_REPLY_ARRAY)
		return (NULL);
	for (j = 0; j + 1 < f->elements; j += 2) {
		if (f->element[j]->type == REDIS_REPLY_STRING &&
		    strcmp(f->element[j]->str, name) == 0 &&
		    f->element[j + 1]->type == REDIS_REPLY_STRING)
			return (f->element[j + 1]);
	}
	return (NULL);
}

/* Ctrl-C ends a follower at once: nothing is buffered, nothing to say. */
static void
execq_sigint(int sig)
{
	(void)sig;
	_exit(EXECQ_EXIT_INTERRUPTED);
}

/* Makes SIGINT exit 130 without a word (logs -f, callbacks). */
void
execq_quiet_sigint(void)
{
	struct sigaction	sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = execq_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

/* Reads answers from a shared queue, after its newest entry; -1 (said). */
int
execq_session_shared_reply(struct execq_session *s, const char *name)
{
	s->answer_key = client_lane_key(s->c, name, KS_LANE_NORMAL);
	s->cursor = execq_stream_last_id(s, s->answer_key);
	if (s->cursor == NULL)
		return (-1);
	/* An APPROVAL_REQUEST for our item would come here. */
	s->notice_key = client_lane_key(s->c, name, KS_LANE_HIGH);
	s->notice_cursor = execq_stream_last_id(s, s->notice_key);
	return (s->notice_cursor != NULL ? 0 : -1);
}

/* Frees an answer; NULL members ok. */
void
execq_answer_release(struct execq_answer *a)
{
	json_decref(a->root);
	free(a->text);
	memset(a, 0, sizeof *a);
}

/* 1 if the answer's type is one w wants. */
static int
execq_answer_type_ok(const json_t *root, const struct execq_want *w)
{
	const char		*type;
	const char * const	*t;

	if ((type = json_string_value(json_object_get(root, "type"))) == NULL)
		return (w->types == NULL);
	if (w->types == NULL)	/* any answer; a notice is not one */
		return (strcmp(type, "EXEC_SCHEDULED") != 0);
	for (t = w->types; *t != NULL; t++) {
		if (strcmp(type, *t) == 0)
			return (1);
	}
	return (0);
}

/*
 * Takes one "item" value if it is the answer we wait for: its id equals
 * w->id, or is null or absent and w->null_id says that a worker that
 * could not read the id answered us; and its type is one of w->types.
 * 1 if taken into *a.
 */
static int
execq_answer_take(const redisReply *v, const struct execq_want *w,
    struct execq_answer *a)
{
	json_t		*root, *id;

	if (v->type != REDIS_REPLY_STRING)
		return (0);
	root = json_loadb(v->str, v->len, JSON_ALLOW_NUL, NULL);
	if (!json_is_object(root))
		goto skip;
	id = json_object_get(root, "id");
	if (id == NULL || json_is_null(id)) {
		if (!w->null_id)
			goto skip;
	} else if (w->id == NULL || !json_is_string(id) ||
	    strcmp(json_string_value(id), w->id) != 0)
		goto skip;
	if (!execq_answer_type_ok(root, w))
		goto skip;
	a->root = root;
	a->text = xmalloc(v->len + 1);
	memcpy(a->text, v->str, v->len);
	a->text[v->len] = '\0';
	a->len = v->len;
	return (1);

skip:
	json_decref(root);
	return (0);
}

/* Entries of one stream of an XREAD reply, or NULL. */
static const redisReply *
execq_xread_stream(const redisReply *r, size_t k, const char **name)
{
	const redisReply	*st;

	if (r->type != REDIS_REPLY_ARRAY || k >= r->elements ||
	    (st = r->element[k])->type != REDIS_REPLY_ARRAY ||
	    st->elements != 2 || st->element[0]->type != REDIS_REPLY_STRING ||
	    st->element[1]->type != REDIS_REPLY_ARRAY)
		return (NULL);
	*name = st->element[0]->str;
	return (st->element[1]);
}

/*
 * An APPROVAL_REQUEST for our item: says so on stderr, once, and moves
 * the deadline to the request's expiry (plus slack).
 */
static void
execq_notice(const redisReply *v, const struct execq_want *w,
    long long *deadline)
{
	json_t		*o;
	const char	*type, *id, *req;
	long long	 left;

	if ((o = json_loadb(v->str, v->len, 0, NULL)) == NULL)
		return;
	type = json_string_value(json_object_get(o, "type"));
	id = json_string_value(json_object_get(o, "id"));
	req = json_string_value(json_object_get(o, "request"));
	if (type != NULL && strcmp(type, "APPROVAL_REQUEST") == 0 &&
	    id != NULL && w->id != NULL && strcmp(id, w->id) == 0 &&
	    req != NULL) {
		left = json_integer_value(json_object_get(o, "expires_ms")) -
		    clock_wall_ms();
		execq_error("held for approval (%s): %s",
		    json_string_value(json_object_get(o, "rule")),
		    json_string_value(json_object_get(o, "reason")));
		execq_error("waiting up to %lld s; approve with 'execq approve "
		    "%s', or 'execq reject %s --reason ...'", left / 1000, req,
		    req);
		if (clock_mono_ms() + left + EXECQ_SLACK_MS > *deadline)
			*deadline = clock_mono_ms() + left + EXECQ_SLACK_MS;
	}
	/* It waits in Redis: for its delay, then another run. */
	if (type != NULL && strcmp(type, "EXEC_SCHEDULED") == 0 &&
	    id != NULL && w->id != NULL && strcmp(id, w->id) == 0) {
		left = json_integer_value(json_object_get(o, "delay_ms"));
		execq_error("%s: attempt %lld in %.1f s%s", json_string_value(
		    json_object_get(o, "reason")),
		    json_integer_value(json_object_get(o, "attempt")),
		    left / 1000.0, json_object_get(o, "last") != NULL ?
		    " (the last one failed)" : "");
		*deadline = clock_mono_ms() + left + w->run_ms;
	}
	json_decref(o);
}

/*
 * Looks through one stream's entries, moving its cursor; 1 if *a was
 * taken (answers), or notices read (the high lane).
 */
static int
execq_answer_scan(char **cursor, const redisReply *entries,
    const struct execq_want *w, struct execq_answer *a, long long *deadline)
{
	const redisReply	*e, *f;
	size_t			 i, j;

	for (i = 0; i < entries->elements; i++) {
		e = entries->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING)
			continue;
		free(*cursor);
		*cursor = xstrdup(e->element[0]->str);
		if ((f = e->element[1])->type != REDIS_REPLY_ARRAY)
			continue;	/* a deleted entry */
		for (j = 0; j + 1 < f->elements; j += 2) {
			if (f->element[j]->type != REDIS_REPLY_STRING ||
			    strcmp(f->element[j]->str, "item") != 0)
				continue;
			if (a != NULL &&
			    execq_answer_take(f->element[j + 1], w, a))
				return (1);
			execq_notice(f->element[j + 1], w, deadline);
		}
	}
	return (0);
}

/* Entries of the live output stream, to live_cb; moves its cursor. */
static void
execq_live_scan(struct execq_session *s, const redisReply *entries)
{
	const redisReply	*e;
	size_t			 i;

	for (i = 0; i < entries->elements; i++) {
		e = entries->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING)
			continue;
		free(s->live_cursor);
		s->live_cursor = xstrdup(e->element[0]->str);
		if (e->element[1]->type == REDIS_REPLY_ARRAY)
			s->live_cb(e->element[1], s->live_arg);
	}
}

int
execq_live_drain(struct execq_session *s)
{
	redisReply	*r;

	if (s->live_key == NULL)
		return (0);
	r = execq_reply(s, "XRANGE", client_stream_after(s->c, s->live_key,
	    s->live_cursor));
	if (r == NULL)
		return (-1);
	if (r->type == REDIS_REPLY_ARRAY)
		execq_live_scan(s, r);
	freeReplyObject(r);
	return (0);
}

/* One XREAD reply: answers and, on a private queue, notices. */
static int
execq_answer_read(struct execq_session *s, const redisReply *r,
    const struct execq_want *w, struct execq_answer *a, long long *deadline)
{
	const redisReply	*entries;
	const char		*name;
	size_t			 k;
	int			 found = 0;

	for (k = 0; (entries = execq_xread_stream(r, k, &name)) != NULL;
	    k++) {
		if (s->live_key != NULL && strcmp(name, s->live_key) == 0)
			execq_live_scan(s, entries);
		else if (s->notice_key != NULL &&
		    strcmp(name, s->notice_key) == 0)
			execq_answer_scan(&s->notice_cursor, entries, w, NULL,
			    deadline);
		else if (!found)
			found = execq_answer_scan(&s->cursor, entries, w, a,
			    deadline);
	}
	return (found);
}

/*
 * XREAD on the answers, and the notices and live output if any; the live
 * output not on a cluster, where it lies in another slot (the queue's,
 * not the reply queue's): execq_answer_wait polls it apart.
 */
static redisReply *
execq_xread(struct execq_session *s, long long block_ms)
{
	const char	*keys[3], *ids[3];
	int		 n = 0;

	keys[n] = s->answer_key;
	ids[n++] = s->cursor;
	if (s->notice_key != NULL) {
		keys[n] = s->notice_key;
		ids[n++] = s->notice_cursor;
	}
	if (s->live_key != NULL && !client_cluster(s->c)) {
		keys[n] = s->live_key;
		ids[n++] = s->live_cursor;
	}
	return (execq_reply(s, "XREAD", client_xread(s->c, 64, block_ms, n,
	    keys, ids)));
}

/*
 * Waits up to wait_ms for the answer, blocking at most EXECQ_BLOCK_MS at a
 * time. 1 with *a filled, 0 at the deadline, -1 (said) on a Redis error.
 *
 * On a Redis Cluster one XREAD may not name keys of two slots
 * (CROSSSLOT), and the live output (the queue's slot) is not where the
 * answers are (the reply queue's): the blocking read stays on the
 * answers and notices, so that the answer is taken the moment it comes,
 * and the live output is read without BLOCK before each of them, which
 * then blocks at most EXECQ_LIVE_POLL_MS: output shows at most that late,
 * and costs two round trips that often only while it streams.
 */
int
execq_answer_wait(struct execq_session *s, const struct execq_want *w,
    long long wait_ms, struct execq_answer *a)
{
	struct execq_want	 ww = *w;
	redisReply		*r;
	long long		 deadline, left, block;
	int			 found;

	ww.run_ms = wait_ms;
	w = &ww;
	deadline = clock_mono_ms() + wait_ms;
	for (;;) {
		if ((left = deadline - clock_mono_ms()) <= 0)
			return (0);
		/* BLOCK 0 would mean forever. */
		block = left > EXECQ_BLOCK_MS ? EXECQ_BLOCK_MS : left;
		if (s->live_key != NULL && client_cluster(s->c)) {
			if (execq_live_drain(s) == -1)
				return (-1);
			if (block > EXECQ_LIVE_POLL_MS)
				block = EXECQ_LIVE_POLL_MS;
		}
		r = execq_xread(s, block);
		if (r == NULL)
			return (-1);
		found = (r->type != REDIS_REPLY_NIL &&
		    execq_answer_read(s, r, w, a, &deadline));
		freeReplyObject(r);
		if (found)
			return (1);
	}
}

/* Says that nobody answered in time and that the item is still queued. */
static void
execq_no_answer(const struct execq_session *s, const struct execq_opts *o,
    const char *id)
{
	execq_error("no answer from a worker on queue '%s' within %g s "
	    "(is execq-worker running with this Redis and queue?)",
	    o->queue, o->wait_s);
	execq_error("the item%s%s stays on %s: a worker may still run it "
	    "later", id != NULL ? " " : "", id != NULL ? id : "",
	    s->item_key);
}

/*
 * The new entry's id of an XADD's reply r (freed), or NULL (said); own:
 * r is of the XADD to our own lane, where nil means that no worker reads
 * that lane (none made it), also NULL, unsaid.
 */
static char *
execq_item_added(struct execq_session *s, redisReply *r, int own)
{
	char	*entry = NULL;

	if (r == NULL)
		return (NULL);
	if (r->type == REDIS_REPLY_STRING)
		entry = xstrdup(r->str);
	else if (!own || r->type != REDIS_REPLY_NIL)
		execq_error("Redis at %s: XADD: unexpected reply", s->display);
	freeReplyObject(r);
	return (entry);
}

char *
execq_item_add(struct execq_session *s, const char *text)
{
	redisReply	*r;
	char		*entry;

	if (s->own_key != NULL) {
		r = execq_reply(s, "XADD", client_item_add_existing(s->c,
		    s->own_key, text, strlen(text)));
		if (r == NULL)
			return (NULL);
		if ((entry = execq_item_added(s, r, 1)) != NULL) {
			free(s->item_key);	/* withdrawn from there */
			s->item_key = xstrdup(s->own_key);
			return (entry);
		}
	}
	r = client_item_add(s->c, s->item_key, text, strlen(text));
	if (s->own_key != NULL && r != NULL && r->type == REDIS_REPLY_ERROR &&
	    strncmp(r->str, "NOPERM", 6) == 0) {
		execq_error("no worker reads %s, the lane of Redis user '%s' "
		    "(name the user in the workers' 'agents' setting), and "
		    "this user may not write the shared lane %s; nothing was "
		    "sent", s->own_key, s->user, s->item_key);
		freeReplyObject(r);
		return (NULL);
	}
	return (execq_item_added(s, execq_reply(s, "XADD", r), 0));
}

/* XADDs text as the item and waits for the answer: 0, or an exit code. */
int
execq_exchange(struct execq_session *s, const struct execq_opts *o,
    const char *text, const struct execq_want *w, struct execq_answer *a)
{
	char	*entry;

	if ((entry = execq_item_add(s, text)) == NULL)
		return (EXECQ_EXIT_FAIL);
	free(entry);
	switch (execq_answer_wait(s, w, (long long)(o->wait_s * 1000 + 0.5),
	    a)) {
	case 1:
		return (0);
	case 0:
		execq_no_answer(s, o, w->id);
		return (EXECQ_EXIT_FAIL);
	default:
		return (EXECQ_EXIT_FAIL);
	}
}

/*
 * 1 if our Redis user may read the live output stream; if its ACL says
 * no (an agent's: live output is an operator's to read), the answer
 * alone shows the output, and s reads no live stream.
 */
static int
execq_live_allowed(struct execq_session *s)
{
	redisReply	*r;
	int		 ok;

	if ((r = client_exists(s->c, s->live_key)) == NULL)
		return (1);	/* the next command says what failed */
	ok = r->type != REDIS_REPLY_ERROR || strncmp(r->str, "NOPERM", 6) != 0;
	freeReplyObject(r);
	if (!ok) {
		free(s->live_key);
		free(s->live_cursor);
		s->live_key = s->live_cursor = NULL;
	}
	return (ok);
}

/*
 * Builds the EXEC item for o->command and sends it: 0, or an exit code.
 * A foreground item is answered on a new private queue. A session's
 * reply_to must outlive us, since its EXEC_CALLBACK comes much later: it
 * is --reply-to or execq.<user>, shared, so EXEC_STARTED is read from
 * its newest entry before the XADD on, and only with our id.
 */
int
execq_exchange_exec(struct execq_session *s, const struct execq_opts *o,
    const char * const *types, struct execq_answer *a)
{
	struct execq_want	 w;
	struct execq_opts	 lo;
	char			*id, *reply, *text = NULL;
	int			 rc = EXECQ_EXIT_FAIL;

	if (s->live_key != NULL && !execq_live_allowed(s)) {
		lo = *o;
		lo.stream = 0;		/* nobody could read it */
		o = &lo;
	}
	id = (o->id != NULL) ? xstrdup(o->id) : execq_make_id(s);
	w.id = id;
	w.types = types;
	w.null_id = !o->background;
	if (!o->background) {
		execq_session_private_reply(s);
		reply = xstrdup(s->reply);
	} else {
		reply = (o->reply_to != NULL) ? xstrdup(o->reply_to) :
		    execq_user_reply(o->redis);
		if (execq_session_shared_reply(s, reply) == -1)
			goto out;
	}
	if ((text = execq_item_json(o, id, reply)) == NULL)
		rc = EXECQ_EXIT_USAGE;
	else
		rc = execq_exchange(s, o, text, &w, a);
out:
	free(text);
	free(reply);
	free(id);
	return (rc);
}
