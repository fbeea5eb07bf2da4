/*
 * execq-bench: foreground commands through Redis and the worker, next to
 * the machine's floor (a bare posix_spawn loop of the same command at the
 * same concurrency), measured in the same run.
 *
 *   execq-bench floor -n N -c C [-- CMD]
 *   execq-bench queue -n N -c C --redis unix:///path --queue Q [-- CMD]
 *
 * Prints one line: mode, concurrency, items/s, p50 ms, p99 ms.
 */
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <getopt.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

extern char **environ;

/* Monotonic nanoseconds. */
static int64_t
bench_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

/* qsort order for latencies. */
static int
bench_cmp(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y ? -1 : x > y);
}

/* Prints the summary line. */
static void
bench_report(const char *mode, int c, int n, int64_t total_ns, int64_t *lat)
{
	qsort(lat, n, sizeof *lat, bench_cmp);
	printf("%-6s c=%d  %8.0f items/s  p50 %6.3f ms  p99 %6.3f ms\n",
	    mode, c, n / (total_ns / 1e9), lat[n / 2] / 1e6,
	    lat[(n * 99) / 100] / 1e6);
}

/* The floor: keep c children of `sh -c CMD` running until n have ended. */
static int
bench_floor(int n, int c, const char *cmd)
{
	char	*argv[] = { (char *)"sh", (char *)"-c", (char *)cmd, NULL };
	pid_t	*pids;
	int64_t	*start, *lat, t0;
	int	 started = 0, done = 0, i, st;
	pid_t	 pid;

	pids = calloc(c, sizeof *pids);
	start = calloc(c, sizeof *start);
	lat = calloc(n, sizeof *lat);
	t0 = bench_now();
	for (i = 0; i < c && started < n; i++, started++) {
		start[i] = bench_now();
		if (posix_spawn(&pids[i], "/bin/sh", NULL, NULL, argv,
		    environ) != 0)
			return (1);
	}
	while (done < n) {
		if ((pid = waitpid(-1, &st, 0)) == -1)
			return (1);
		for (i = 0; i < c && pids[i] != pid; i++)
			;
		lat[done++] = bench_now() - start[i];
		if (started < n) {
			start[i] = bench_now();
			posix_spawn(&pids[i], "/bin/sh", NULL, NULL, argv,
			    environ);
			started++;
		}
	}
	bench_report("floor", c, n, bench_now() - t0, lat);
	return (0);
}

/* Connects to a unix:// or redis://host:port URL. */
static redisContext *
bench_connect(const char *url)
{
	char	host[256];
	int	port = 6379;

	if (strncmp(url, "unix://", 7) == 0)
		return (redisConnectUnix(url + 7));
	if (sscanf(url, "redis://%255[^:/]:%d", host, &port) < 1)
		return (NULL);
	return (redisConnect(host, port));
}

/* One client: submit, wait for the answer, n times; latencies into lat. */
static int
bench_client(const char *url, const char *queue, const char *cmd, int id,
    int n, int64_t *lat)
{
	redisContext	*rc;
	redisReply	*r;
	char		 item[1024], reply[64], last[64] = "$", stream[128];
	int64_t		 t;
	int		 i;

	if ((rc = bench_connect(url)) == NULL || rc->err)
		return (1);
	snprintf(reply, sizeof reply, "bench-%d-%d", (int)getpid(), id);
	snprintf(stream, sizeof stream, "q:%s:normal", reply);
	for (i = 0; i < n; i++) {
		snprintf(item, sizeof item, "{\"id\":\"b%d-%d-%d\",\"type\":"
		    "\"EXEC\",\"reply_to\":\"%s\",\"args\":{\"command\":\"%s\"}}",
		    (int)getpid(), id, i, reply, cmd);
		t = bench_now();
		r = redisCommand(rc, "XADD q:%s:normal * item %s", queue, item);
		if (r == NULL || r->type == REDIS_REPLY_ERROR)
			return (1);
		freeReplyObject(r);
		r = redisCommand(rc, "XREAD BLOCK 10000 STREAMS %s %s", stream,
		    strcmp(last, "$") == 0 ? "0" : last);
		if (r == NULL || r->type != REDIS_REPLY_ARRAY)
			return (1);
		lat[i] = bench_now() - t;
		snprintf(last, sizeof last, "%s",
		    r->element[0]->element[1]->element[0]->element[0]->str);
		freeReplyObject(r);
	}
	redisCommand(rc, "DEL %s", stream);
	redisFree(rc);
	return (0);
}

/* c client processes, n items in all, through the queue. */
static int
bench_queue(int n, int c, const char *url, const char *queue,
    const char *cmd)
{
	int64_t	*lat, t0;
	pid_t	 pid;
	int	 i, st, per = n / c, rc = 0;

	lat = mmap(NULL, n * sizeof *lat, PROT_READ|PROT_WRITE,
	    MAP_SHARED|MAP_ANONYMOUS, -1, 0);
	t0 = bench_now();
	for (i = 0; i < c; i++) {
		if ((pid = fork()) == 0)
			_exit(bench_client(url, queue, cmd, i, per,
			    lat + i * per));
	}
	for (i = 0; i < c; i++) {
		if (wait(&st) == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc = 1;
	}
	if (rc != 0) {
		fprintf(stderr, "execq-bench: a client failed\n");
		return (1);
	}
	bench_report("execq", c, per * c, bench_now() - t0, lat);
	return (0);
}

int
main(int argc, char **argv)
{
	static struct option	 longopts[] = {
		{ "redis", required_argument, NULL, 'r' },
		{ "queue", required_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char		*url = NULL, *queue = "exec", *cmd = "true";
	int			 n = 2000, c = 1, ch;

	while ((ch = getopt_long(argc, argv, "n:c:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n': n = atoi(optarg); break;
		case 'c': c = atoi(optarg); break;
		case 'r': url = optarg; break;
		case 'q': queue = optarg; break;
		default:
			printf("usage: execq-bench floor|queue [-n N] [-c C] "
			    "[--redis URL] [--queue Q] [-- CMD]\n");
			return (ch == 'h' ? 0 : 2);
		}
	}
	if (optind >= argc || n < 1 || c < 1 || c > n)
		return (2);
	if (optind + 1 < argc)
		cmd = argv[optind + 1];
	if (strcmp(argv[optind], "floor") == 0)
		return (bench_floor(n, c, cmd));
	if (strcmp(argv[optind], "queue") == 0 && url != NULL)
		return (bench_queue(n, c, url, queue, cmd));
	return (2);
}
