/* The egress proxy tests' world: a child with the proxy, and its pipe. */

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "queue/item.h"
#include "tests/integration/harness.h"
#include "tests/integration/proxy_world.h"
#include "worker/proxy.h"

pid_t
proxy_world_fork(struct harness *h, void (*child)(int, void *), void *arg,
    FILE **out)
{
	int	fds[2];
	pid_t	pid;

	if (pipe(fds) == -1)
		harness_fail(h, "pipe: %s", strerror(errno));
	if ((pid = fork()) == 0) {
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGTERM);	/* a dead test's too */
		child(fds[1], arg);
		_exit(1);
	}
	close(fds[1]);
	if (pid == -1)
		harness_fail(h, "fork: %s", strerror(errno));
	*out = fdopen(fds[0], "r");
	return (pid);
}

char *
proxy_world_line(FILE *f)
{
	char	*line = NULL;
	size_t	 cap = 0;
	ssize_t	 n;

	if ((n = getline(&line, &cap, f)) <= 0) {
		free(line);
		return (NULL);
	}
	if (line[n - 1] == '\n')
		line[n - 1] = '\0';
	return (line);
}

void
proxy_world_stop(pid_t pid)
{
	int	status;

	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int
proxy_world_dial(struct harness *h, const char *url, int timeout_ms)
{
	struct sockaddr_in	sin;
	struct timeval		tv;
	int			fd;

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)atoi(strrchr(url, ':') + 1));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof sin) == -1)
		harness_fail(h, "connect to the proxy: %s", strerror(errno));
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return (fd);
}

char *
proxy_world_cred(const char *url)
{
	const char	*at = strchr(url + 7, '@');

	return (item_base64_encode(url + 7, (size_t)(at - url - 7), NULL));
}

struct proxy *
proxy_world_proxy(struct event_base *base, const struct proxy_config *cfg,
    const char *id3, const char *host3, char *urls[PROXY_WORLD_NURLS])
{
	static const char *const local[] = { "localhost", NULL };
	static const char *const other[] = { "example.invalid", NULL };
	const char		*third[] = { host3, NULL };
	struct proxy_config	 pc;
	struct proxy		*p;

	memset(&pc, 0, sizeof pc);
	if (cfg != NULL)
		pc = *cfg;
	pc.netns_fd = -1;
	pc.private_hosts = local;
	if ((p = proxy_create(base, &pc)) == NULL)
		_exit(3);
	urls[PROXY_WORLD_LOCAL] = proxy_grant(p, "item-local", local);
	urls[PROXY_WORLD_OTHER] = proxy_grant(p, "item-other", other);
	urls[PROXY_WORLD_THIRD] = proxy_grant(p, id3, third);
	return (p);
}

/* SIGTERM: the loop ends. */
static void
proxy_world_stop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

void
proxy_world_run(struct event_base *base)
{
	struct event	*stop;

	stop = evsignal_new(base, SIGTERM, proxy_world_stop_cb, base);
	event_add(stop, NULL);
	event_base_dispatch(base);
	event_free(stop);
}
