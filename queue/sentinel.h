#ifndef EXECQ_SENTINEL_H
#define EXECQ_SENTINEL_H

/*
 * Redis Sentinel for the worker (queue/sentinel.c): where the primary of
 * a redis-sentinel:// URL is, and the sentinels' word when it moves.
 * Used by queue/conn.c only; the client asks synchronously (cli/conn.c).
 * Every callback comes from an event of its own, never on the stack of
 * a queue/rconn.c callback.
 */

struct event_base;
struct rurl;
struct sentinel_ask;
struct sentinel_watch;

/*
 * The primary's address (host borrowed for the call), or host NULL and
 * why (borrowed) when no sentinel knew. The ask is freed after the call:
 * cb must not free it.
 */
typedef void (*sentinel_found_cb)(const char *host, int port,
    const char *why, void *arg);
/* A +switch-master for url's master: the new primary (borrowed). */
typedef void (*sentinel_switch_cb)(const char *host, int port, void *arg);

/*
 * Asks url's sentinels (borrowed: it must outlive the ask), from index
 * first on, each in turn until one answers (a second each at most),
 * SENTINEL GET-MASTER-ADDR-BY-NAME <master>.
 */
struct sentinel_ask	*sentinel_ask(struct event_base *, const struct rurl *,
			    int first, sentinel_found_cb, void *arg);
/* Cancels an ask under way (no callback); NULL ok. */
void			 sentinel_ask_free(struct sentinel_ask *);
/*
 * Subscribes to +switch-master on one of url's sentinels, moving to the
 * next when it is lost, until freed.
 */
struct sentinel_watch	*sentinel_watch(struct event_base *,
			    const struct rurl *, sentinel_switch_cb, void *arg);
void			 sentinel_watch_free(struct sentinel_watch *);

#endif
