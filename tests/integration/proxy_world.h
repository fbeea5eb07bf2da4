#ifndef EXECQ_TEST_PROXY_WORLD_H
#define EXECQ_TEST_PROXY_WORLD_H

/*
 * The world of the egress proxy's tests (test_proxy.c, test_proxy_hostile.c):
 * a child process runs worker/proxy.c and the test's stand-in hosts on an
 * event loop of its own until SIGTERM, and tells the test what it made
 * (ports, the proxy URLs) a line at a time through a pipe. Each test
 * writes its child; this file holds what the two children and the two
 * test sides share. Failures fail the running test (harness_fail), or
 * end the child with an exit code the test side sees as not 0.
 */

#include <sys/types.h>

#include <stdio.h>

struct event_base;
struct harness;
struct proxy;
struct proxy_config;

/* The grants every world's proxy makes, and where their URLs go. */
enum {
	PROXY_WORLD_LOCAL = 0,	/* "item-local": "localhost" */
	PROXY_WORLD_OTHER,	/* "item-other": "example.invalid" */
	PROXY_WORLD_THIRD,	/* the test's own */
	PROXY_WORLD_NURLS
};

/* The test's side. */

/*
 * Forks child(fd, arg), which writes its lines to fd and must not
 * return (_exit); it gets SIGTERM if the test dies. The child's pid; the
 * read end of the pipe in *out (the caller fcloses it).
 */
pid_t	 proxy_world_fork(struct harness *, void (*child)(int fd, void *arg),
	    void *arg, FILE **out);
/* The next line the child said, its newline cut (caller frees); NULL. */
char	*proxy_world_line(FILE *);
/* The child (pid > 0; else nothing) sent SIGTERM and reaped: exit 0. */
void	 proxy_world_stop(pid_t);
/*
 * A connection to the proxy of url (http://user:token@127.0.0.1:port),
 * with reads that stall timeout_ms failing. The fd is the caller's.
 */
int	 proxy_world_dial(struct harness *, const char *url, int timeout_ms);
/* base64 of url's credential, for Proxy-Authorization (caller frees). */
char	*proxy_world_cred(const char *url);

/* The child's side. */

/*
 * The proxy on base: cfg's refused and audit (cfg NULL: none), listening
 * here, "localhost" the one name that may resolve to private addresses,
 * the three grants made (id3 granted host3) and their URLs put in urls
 * (the caller frees them and the proxy). If it cannot be made, _exit(3).
 */
struct proxy	*proxy_world_proxy(struct event_base *,
		    const struct proxy_config *cfg, const char *id3,
		    const char *host3, char *urls[PROXY_WORLD_NURLS]);
/* Runs base until SIGTERM. */
void		 proxy_world_run(struct event_base *);

#endif
