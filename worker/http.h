#ifndef EXECQ_HTTP_H
#define EXECQ_HTTP_H

/*
 * The worker's HTTP side door (libevent's evhttp): GET /metrics and GET
 * /healthz, nothing else. It only reads the worker's state through the
 * two callbacks; no request can reach the queue or run anything. Other
 * paths get 404, other methods 405, requests evhttp cannot parse 400.
 */

#include <stdio.h>

struct event_base;
struct metrics;
struct http;

struct http_handlers {
	/* Writes the Prometheus text of /metrics to f. */
	void	(*metrics)(FILE *f, void *arg);
	/*
	 * NULL, or asked before each /metrics: 1 when it may be written
	 * now; 0 when what it shows is being read (the backlog, from
	 * Redis): the request waits until the owner calls
	 * http_metrics_wake(), which it must do once the read is over,
	 * failed or not.
	 */
	int	(*metrics_ready)(void *arg);
	/*
	 * Writes the JSON of /healthz to f; returns 1 when the worker
	 * takes items (200), 0 when it does not (503).
	 */
	int	(*health)(FILE *f, void *arg);
	void	*arg;
};

/*
 * Listens on addr ("HOST:PORT", "[V6]:PORT"; port 0: any free one, as the
 * log says). Requests are counted in m (borrowed, may be NULL). NULL with
 * an allocated *cause when the address is bad or cannot be bound.
 */
struct http	*http_create(struct event_base *, const char *addr,
		    const struct http_handlers *, struct metrics *m,
		    char **cause);
/* NULL ok; requests still waiting for /metrics get 503. */
void		 http_free(struct http *);
/* Answers every /metrics request that waits (metrics_ready said 0). */
void		 http_metrics_wake(struct http *);
/* The port bound (useful with port 0). */
unsigned	 http_port(const struct http *);
/*
 * Splits "HOST:PORT" or "[V6]:PORT" into an allocated *host and *port.
 * 0, or -1 with an allocated *cause.
 */
int		 http_parse_addr(const char *addr, char **host,
		    unsigned *port, char **cause);

#endif
