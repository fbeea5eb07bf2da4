/*
 * execq-bench: foreground commands through Redis and the worker, next to
 * the machine's floor (a bare posix_spawn loop of the same command at the
 * same concurrency), measured in the same run.
 *
 *   execq-bench floor -n N -c C [-- CMD]
 *   execq-bench queue -n N -c C --redis URL --queue Q [--label L] [-- CMD]
 *   execq-bench backlog -n N --redis URL --queue Q [--label L] [-- CMD]
 *   execq-bench confine -n N [--dir TMPDIR]
 *   execq-bench callback -n N --redis URL --queue Q
 *   execq-bench waiting -n N --redis URL --queue Q
 *   execq-bench throughput --mb M --redis URL --queue Q --dir TMPDIR
 *   execq-bench idle -n N --redis URL --queue Q --pid WORKER_PID
 *   execq-bench redis --redis URL
 *   execq-bench proxy -n N --mb M
 *   execq-bench cluster -n N --redis URL [--label L] QUEUE/REPLY...
 *
 * Each prints one line of figures (confine, proxy: three; cluster: two
 * and one a node, then a line of JSON).
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "exec/cgroup.h"
#include "exec/confine.h"
#include "exec/spawn.h"
#include "queue/cluster.h"
#include "queue/item.h"
#include "queue/keyspace.h"
#include "worker/proxy.h"

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
	printf("%-10s c=%d  %8.0f items/s  p50 %6.3f ms  p99 %6.3f ms\n",
	    mode, c, n / (total_ns / 1e9), lat[n / 2] / 1e6,
	    lat[(n * 99) / 100] / 1e6);
}

/* Microseconds of a struct timeval. */
static int64_t
bench_tv_us(const struct timeval *tv)
{
	return ((int64_t)tv->tv_sec * 1000000 + tv->tv_usec);
}

/* This process's CPU and that of its reaped children, in microseconds. */
static void
bench_rusage(int64_t us[2])
{
	struct rusage	ru;

	getrusage(RUSAGE_SELF, &ru);
	us[0] = bench_tv_us(&ru.ru_utime) + bench_tv_us(&ru.ru_stime);
	getrusage(RUSAGE_CHILDREN, &ru);
	us[1] = bench_tv_us(&ru.ru_utime) + bench_tv_us(&ru.ru_stime);
}

/*
 * The summary line, then the CPU per item since ru0 (bench_rusage): this
 * process's (posix_spawn, waitpid) and its children's (the whole of
 * `sh -c CMD`, as the kernel accounts it when they are reaped).
 */
static void
bench_report_cpu(const char *mode, int c, int n, int64_t total_ns,
    int64_t *lat, const int64_t ru0[2])
{
	int64_t	ru1[2];

	bench_rusage(ru1);
	qsort(lat, n, sizeof *lat, bench_cmp);
	printf("%-10s c=%d  %8.0f items/s  p50 %6.3f ms  p99 %6.3f ms  "
	    "cpu/item %.1f us self %.1f us children\n", mode, c,
	    n / (total_ns / 1e9), lat[n / 2] / 1e6, lat[(n * 99) / 100] / 1e6,
	    (double)(ru1[0] - ru0[0]) / n, (double)(ru1[1] - ru0[1]) / n);
}

/* The floor: keep c children of `sh -c CMD` running until n have ended. */
static int
bench_floor(int n, int c, const char *cmd)
{
	char	*argv[] = { (char *)"sh", (char *)"-c", (char *)cmd, NULL };
	pid_t	*pids;
	int64_t	*start, *lat, t0, ru0[2];
	int	 started = 0, done = 0, i, st;
	pid_t	 pid;

	pids = calloc(c, sizeof *pids);
	start = calloc(c, sizeof *start);
	lat = calloc(n, sizeof *lat);
	bench_rusage(ru0);
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
	bench_report_cpu("floor", c, n, bench_now() - t0, lat, ru0);
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

/*
 * An answer entry [id, ["item", json]]: its id goes to last (the next
 * XREAD's cursor). 0 if it is an EXEC_RESULT; a refusal or an error is
 * fast too, and only results count, so anything else is printed, -1.
 */
static int
bench_result(const redisReply *e, char *last, size_t size)
{
	snprintf(last, size, "%s", e->element[0]->str);
	if (strstr(e->element[1]->element[1]->str,
	    "\"type\":\"EXEC_RESULT\"") != NULL)
		return (0);
	fprintf(stderr, "execq-bench: %s\n", e->element[1]->element[1]->str);
	return (-1);
}

/* One client: submit, wait for the answer, n times; latencies into lat. */
static int
bench_client(const char *url, const char *queue, const char *cmd, int id,
    int n, int64_t *lat)
{
	redisContext	*rc;
	redisReply	*r, *e;
	char		 item[1024], reply[64], last[64] = "$", stream[128];
	int64_t		 t;
	int		 i;

	if ((rc = bench_connect(url)) == NULL || rc->err)
		return (1);
	snprintf(reply, sizeof reply, "bench-%d-%d", (int)getpid(), id);
	snprintf(stream, sizeof stream, KS_QUEUE "%s:" KS_LANE_NORMAL, reply);
	for (i = 0; i < n; i++) {
		snprintf(item, sizeof item, "{\"id\":\"b%d-%d-%d\",\"type\":"
		    "\"EXEC\",\"reply_to\":\"%s\",\"args\":{\"command\":\"%s\"}}",
		    (int)getpid(), id, i, reply, cmd);
		t = bench_now();
		r = redisCommand(rc, "XADD " KS_QUEUE "%s:" KS_LANE_NORMAL
		    " * item %s", queue, item);
		if (r == NULL || r->type == REDIS_REPLY_ERROR)
			return (1);
		freeReplyObject(r);
		r = redisCommand(rc, "XREAD BLOCK 10000 STREAMS %s %s", stream,
		    strcmp(last, "$") == 0 ? "0" : last);
		if (r == NULL || r->type != REDIS_REPLY_ARRAY)
			return (1);
		lat[i] = bench_now() - t;
		e = r->element[0]->element[1]->element[0];
		if (bench_result(e, last, sizeof last) == -1)
			return (1);
		freeReplyObject(r);
	}
	redisCommand(rc, "DEL %s", stream);
	redisFree(rc);
	return (0);
}

/* c client processes, n items in all, through the queue. */
static int
bench_queue(int n, int c, const char *url, const char *queue,
    const char *cmd, const char *label)
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
	bench_report(label, c, per * c, bench_now() - t0, lat);
	return (0);
}

/*
 * A backlog, as batch automation makes one: n items sent at once (one
 * pipeline), then every answer read. items/s from the first send to the
 * last answer; whatever the worker's concurrency, it always finds the
 * next item waiting.
 */
static int
bench_backlog(int n, const char *url, const char *queue, const char *cmd,
    const char *label)
{
	redisContext	*rc;
	redisReply	*r;
	char		 item[1024], reply[64], stream[128], last[64] = "0";
	int64_t		 t0;
	int		 i, got = 0, reads = 0;
	size_t		 j;

	if ((rc = bench_connect(url)) == NULL || rc->err)
		return (1);
	snprintf(reply, sizeof reply, "bench-%d-backlog", (int)getpid());
	snprintf(stream, sizeof stream, KS_QUEUE "%s:" KS_LANE_NORMAL, reply);
	t0 = bench_now();
	for (i = 0; i < n; i++) {
		snprintf(item, sizeof item, "{\"id\":\"bl%d-%d\",\"type\":"
		    "\"EXEC\",\"reply_to\":\"%s\",\"args\":{\"command\":"
		    "\"%s\"}}", (int)getpid(), i, reply, cmd);
		redisAppendCommand(rc, "XADD " KS_QUEUE "%s:" KS_LANE_NORMAL
		    " * item %s", queue, item);
	}
	for (i = 0; i < n; i++) {
		if (redisGetReply(rc, (void **)&r) != REDIS_OK || r == NULL ||
		    r->type == REDIS_REPLY_ERROR)
			return (1);
		freeReplyObject(r);
	}
	while (got < n) {
		r = redisCommand(rc, "XREAD COUNT 1000 BLOCK 10000 STREAMS %s %s",
		    stream, last);
		reads++;
		if (r == NULL || r->type != REDIS_REPLY_ARRAY)
			return (1);
		for (j = 0; j < r->element[0]->element[1]->elements; j++) {
			if (bench_result(r->element[0]->element[1]->element[j],
			    last, sizeof last) == -1)
				return (1);
			got++;
		}
		freeReplyObject(r);
	}
	/* Its own commands, for the Redis counters around it. */
	printf("%-10s backlog  %8.0f items/s  (n=%d, sent at once; client "
	    "commands %d)\n", label, n / ((bench_now() - t0) / 1e9), n,
	    n + reads + 1);
	redisCommand(rc, "DEL %s", stream);
	redisFree(rc);
	return (0);
}

/* A server's counters at one time (bench_redis_stats). */
struct bench_stats {
	long long	calls;		/* every command (a script's own too) */
	long long	scripts;	/* EVAL, EVALSHA */
	double		cpu_us;		/* used_cpu_sys + used_cpu_user */
};

/*
 * The counters of the server rc is connected to, by two INFO calls
 * (counted by the next snapshot, not this one): 0, or -1.
 */
static int
bench_redis_stats(redisContext *rc, struct bench_stats *st)
{
	redisReply	*r;
	const char	*p;
	long long	 v;
	double		 sys = 0, user = 0;
	char		 name[64];

	memset(st, 0, sizeof *st);
	if ((r = redisCommand(rc, "INFO commandstats")) == NULL ||
	    r->type != REDIS_REPLY_STRING)
		goto fail;
	for (p = r->str; (p = strstr(p, "cmdstat_")) != NULL; p++) {
		if (sscanf(p, "cmdstat_%63[^:]:calls=%lld", name, &v) != 2)
			continue;
		st->calls += v;
		if (strcmp(name, "eval") == 0 || strcmp(name, "evalsha") == 0)
			st->scripts += v;
	}
	freeReplyObject(r);
	if ((r = redisCommand(rc, "INFO cpu")) == NULL ||
	    r->type != REDIS_REPLY_STRING)
		goto fail;
	if ((p = strstr(r->str, "used_cpu_sys:")) != NULL)
		sys = strtod(p + 13, NULL);
	if ((p = strstr(r->str, "used_cpu_user:")) != NULL)
		user = strtod(p + 14, NULL);
	freeReplyObject(r);
	st->cpu_us = (sys + user) * 1e6;
	return (0);
fail:
	if (r != NULL)
		freeReplyObject(r);
	return (-1);
}

/*
 * A snapshot of the server's counters: every command it ran (commands a
 * script runs included), the scripts among them, and its CPU time in
 * microseconds. The difference of two is what ran in between (this
 * snapshot's own INFO calls: 2).
 */
static int
bench_redis(const char *url)
{
	redisContext		*rc;
	struct bench_stats	 st;
	int			 rc2;

	if ((rc = bench_connect(url)) == NULL || rc->err)
		return (1);
	rc2 = bench_redis_stats(rc, &st);
	redisFree(rc);
	if (rc2 == -1)
		return (1);
	printf("calls %lld scripts %lld cpu_us %.0f\n", st.calls, st.scripts,
	    st.cpu_us);
	return (0);
}

#define BENCH_CL_MAX	8	/* queues, and nodes */

/* A queue of the cluster mode: its stream, its replies', their nodes. */
struct bench_clq {
	const char	*name;
	const char	*reply;		/* the reply_to queue */
	char		 key[256];	/* q:{name}:normal (q:name:normal) */
	char		 stream[256];	/* the reply stream, likewise */
	int		 node;		/* index in bench_cl's nodes */
	int		 rnode;		/* the reply stream's */
};

/* One run of the cluster mode: the primaries and the queues. */
struct bench_cl {
	char			 url[BENCH_CL_MAX][300];	/* the nodes */
	int			 nnodes;
	struct bench_clq	 q[BENCH_CL_MAX];
	int			 nq;
	int			 cluster;	/* 0: one plain Redis */
};

/*
 * The lane stream of queue in key: q:{queue}:normal in cluster mode
 * (the queue its hash tag, as the worker names it), q:queue:normal
 * otherwise.
 */
static void
bench_cl_key(const struct bench_cl *b, const char *queue, char *key,
    size_t size)
{
	char	*tagged;

	snprintf(key, size, KS_QUEUE_FMT, queue, KS_LANE_NORMAL);
	if (!b->cluster)
		return;
	tagged = cluster_tag(key, queue);
	snprintf(key, size, "%s", tagged);
	free(tagged);
}

/* The index of the primary serving key's slot, or -1. */
static int
bench_cl_owner(const struct cluster_map *map, const char *key)
{
	unsigned	slot = cluster_keyslot(key, strlen(key));

	return (cluster_map_node(map, slot) == NULL ? -1 : map->slot[slot]);
}

/*
 * The nodes, from the server at url: every primary of its CLUSTER SLOTS
 * if it is a cluster node, else url alone; each queue's node and its
 * reply stream's. 0, or -1 (printed).
 */
static int
bench_cl_map(struct bench_cl *b, const char *url)
{
	struct cluster_map	 map;
	redisContext		*rc;
	redisReply		*r;
	char			 host[CLUSTER_HOST_MAX] = "127.0.0.1";
	int			 i, rc2 = -1;

	memset(&map, 0, sizeof map);
	if ((rc = bench_connect(url)) == NULL || rc->err) {
		fprintf(stderr, "execq-bench: %s: no connection\n", url);
		goto out;
	}
	r = redisCommand(rc, "INFO cluster");
	b->cluster = cluster_info_enabled(r);
	if (r != NULL)
		freeReplyObject(r);
	for (i = 0; i < b->nq; i++) {
		bench_cl_key(b, b->q[i].name, b->q[i].key, sizeof b->q[i].key);
		bench_cl_key(b, b->q[i].reply, b->q[i].stream,
		    sizeof b->q[i].stream);
	}
	if (!b->cluster) {
		snprintf(b->url[0], sizeof b->url[0], "%s", url);
		b->nnodes = 1;
		rc2 = 0;
		goto out;
	}
	sscanf(url, "redis://%255[^:/]", host);
	r = redisCommand(rc, "CLUSTER SLOTS");
	i = cluster_map_parse(&map, r, host);
	if (r != NULL)
		freeReplyObject(r);
	if (i == -1 || map.nnodes > BENCH_CL_MAX) {
		fprintf(stderr, "execq-bench: CLUSTER SLOTS: no map\n");
		goto out;
	}
	for (i = 0; i < (int)map.nnodes; i++)
		snprintf(b->url[i], sizeof b->url[i], "redis://%s:%d",
		    map.nodes[i].host, map.nodes[i].port);
	b->nnodes = (int)map.nnodes;
	for (i = 0; i < b->nq; i++) {
		b->q[i].node = bench_cl_owner(&map, b->q[i].key);
		b->q[i].rnode = bench_cl_owner(&map, b->q[i].stream);
		if (b->q[i].node == -1 || b->q[i].rnode == -1) {
			fprintf(stderr, "execq-bench: no node serves %s\n",
			    b->q[i].name);
			goto out;
		}
	}
	rc2 = 0;
out:
	cluster_map_release(&map);
	if (rc != NULL)
		redisFree(rc);
	return (rc2);
}

/*
 * A reader (run in a child): the answers of q's n items from its reply
 * stream, on the reply's node, until all came; the time of the last in
 * *done, the XREADs it took in *reads. 0, or 1 (printed).
 */
static int
bench_cl_read(const struct bench_cl *b, const struct bench_clq *q, int n,
    int64_t *done, int *reads)
{
	redisContext	*rc;
	redisReply	*r = NULL, *es;
	char		 last[64] = "0";
	int		 got = 0, rc2 = 1;
	size_t		 j;

	if ((rc = bench_connect(b->url[q->rnode])) == NULL || rc->err)
		goto out;
	while (got < n) {
		r = redisCommand(rc, "XREAD COUNT 1000 BLOCK 30000 STREAMS "
		    "%s %s", q->stream, last);
		(*reads)++;
		if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
			fprintf(stderr, "execq-bench: %s: %d answers of %d "
			    "within 30 s\n", q->stream, got, n);
			goto out;
		}
		es = r->element[0]->element[1];
		for (j = 0; j < es->elements; j++, got++)
			if (bench_result(es->element[j], last,
			    sizeof last) == -1)
				goto out;
		freeReplyObject(r);
		r = NULL;
	}
	*done = bench_now();
	rc2 = 0;
out:
	if (r != NULL)
		freeReplyObject(r);
	if (rc != NULL)
		redisFree(rc);
	return (rc2);
}

/*
 * n `true` items to every queue at once: each queue's XADDs appended on
 * a connection to its node (rc[i]), all of them written before any
 * reply is read. 0, or -1 (printed).
 */
static int
bench_cl_send(const struct bench_cl *b, redisContext **rc, int n)
{
	redisReply	*r;
	char		 item[512];
	int		 i, k, done;

	for (i = 0; i < b->nq; i++)
		for (k = 0; k < n; k++) {
			snprintf(item, sizeof item, "{\"id\":\"cl%d-%d-%d\","
			    "\"type\":\"EXEC\",\"reply_to\":\"%s\",\"args\":"
			    "{\"command\":\"true\"}}", (int)getpid(), i, k,
			    b->q[i].reply);
			redisAppendCommand(rc[i], "XADD %s * item %s",
			    b->q[i].key, item);
		}
	for (i = 0; i < b->nq; i++)
		for (done = 0; !done;)
			if (redisBufferWrite(rc[i], &done) == REDIS_ERR)
				return (-1);
	for (i = 0; i < b->nq; i++)
		for (k = 0; k < n; k++) {
			if (redisGetReply(rc[i], (void **)&r) != REDIS_OK ||
			    r == NULL)
				return (-1);
			if (r->type == REDIS_REPLY_ERROR) {
				fprintf(stderr, "execq-bench: XADD %s: %s\n",
				    b->q[i].key, r->str);
				freeReplyObject(r);
				return (-1);
			}
			freeReplyObject(r);
		}
	return (0);
}

/*
 * The readers, one child each queue, then the items sent: the answers'
 * times in done[] (shared), from t0 (*t0). 0, or -1 (printed).
 */
static int
bench_cl_run(const struct bench_cl *b, redisContext **rc, int n,
    int64_t *t0, int64_t *done, int *reads)
{
	pid_t	pid;
	int	i, st, rc2 = 0, forked = 0;

	for (i = 0; i < b->nq && rc2 == 0; i++)
		if ((pid = fork()) == 0)
			_exit(bench_cl_read(b, &b->q[i], n, &done[i],
			    &reads[i]));
		else if (pid == -1)
			rc2 = -1;
		else
			forked++;
	*t0 = bench_now();
	if (rc2 == 0)
		rc2 = bench_cl_send(b, rc, n);
	for (i = 0; i < forked; i++)
		if (wait(&st) == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc2 = -1;
	if (rc2 == -1)
		fprintf(stderr, "execq-bench: the cluster run failed\n");
	return (rc2);
}

/*
 * Node i's share, per item of the run (all of them): us of Redis CPU
 * into us[i], commands from the workers into cmds[i] (the client's own,
 * the XADDs and XREADs it sent there, and the first snapshot's two INFO
 * calls taken off).
 */
static void
bench_cl_share(const struct bench_cl *b, int i, int n,
    const struct bench_stats st[2][BENCH_CL_MAX], const int *reads,
    double *us, double *cmds)
{
	long long	own = 2;
	int		k;

	for (k = 0; k < b->nq; k++) {
		if (b->q[k].node == i)
			own += n;
		if (b->q[k].rnode == i)
			own += reads[k];
	}
	*us = (st[1][i].cpu_us - st[0][i].cpu_us) / ((double)n * b->nq);
	*cmds = (st[1][i].calls - st[0][i].calls - own) /
	    ((double)n * b->nq);
}

/*
 * The queues node i serves and the reply queues it takes, as "queues q1
 * q2; replies r1".
 */
static void
bench_cl_names(const struct bench_cl *b, int i, char *buf, size_t size)
{
	FILE	*f;
	int	 k;

	if ((f = fmemopen(buf, size, "w")) == NULL) {
		buf[0] = '\0';
		return;
	}
	fprintf(f, "queues");
	for (k = 0; k < b->nq; k++)
		if (b->q[k].node == i)
			fprintf(f, " %s", b->q[k].name);
	fprintf(f, "; replies");
	for (k = 0; k < b->nq; k++)
		if (b->q[k].rnode == i)
			fprintf(f, " %s", b->q[k].reply);
	fclose(f);
}

/*
 * The figures: items/s in all and per queue, then each node's Redis CPU
 * and commands per item, the most loaded node's and their sum; the last
 * line JSON.
 */
static void
bench_cl_report(const struct bench_cl *b, const char *label, int n,
    int64_t t0, const int64_t *done,
    const struct bench_stats st[2][BENCH_CL_MAX], const int *reads)
{
	double	us[BENCH_CL_MAX], cmds[BENCH_CL_MAX], rate[BENCH_CL_MAX];
	double	all, mus = 0, mcmds = 0, sus = 0, scmds = 0, wall;
	char	names[600];
	int64_t	end = t0;
	int	i;

	for (i = 0; i < b->nq; i++) {
		rate[i] = n / ((done[i] - t0) / 1e9);
		end = done[i] > end ? done[i] : end;
	}
	wall = (end - t0) / 1e3;
	all = (double)n * b->nq / (wall / 1e6);
	printf("%-8s %d queue(s) on %d node(s): %.0f items/s (n=%d, %d a "
	    "queue, sent at once); per queue:", label, b->nq, b->nnodes, all,
	    n * b->nq, n);
	for (i = 0; i < b->nq; i++)
		printf(" %s %.0f", b->q[i].name, rate[i]);
	printf(" items/s\n");
	for (i = 0; i < b->nnodes; i++) {
		bench_cl_share(b, i, n, st, reads, &us[i], &cmds[i]);
		bench_cl_names(b, i, names, sizeof names);
		printf("%-8s node %s (%s): %.1f us of Redis CPU, %.2f "
		    "commands from the workers per item of the %d; busy "
		    "%.0f%% of the run\n", label, b->url[i], names, us[i],
		    cmds[i], n * b->nq,
		    100 * (st[1][i].cpu_us - st[0][i].cpu_us) / wall);
		mus = us[i] > mus ? us[i] : mus;
		mcmds = cmds[i] > mcmds ? cmds[i] : mcmds;
		sus += us[i];
		scmds += cmds[i];
	}
	printf("%-8s the busiest node %.1f us, %.2f commands per item; all "
	    "nodes %.1f us, %.2f commands per item\n", label, mus, mcmds, sus,
	    scmds);
	printf("{\"items_per_s\":%.0f,\"queue_items_per_s\":[", all);
	for (i = 0; i < b->nq; i++)
		printf("%s%.0f", i > 0 ? "," : "", rate[i]);
	printf("],\"shard_redis_us_per_item\":[");
	for (i = 0; i < b->nnodes; i++)
		printf("%s%.1f", i > 0 ? "," : "", us[i]);
	printf("],\"shard_cmds_per_item\":[");
	for (i = 0; i < b->nnodes; i++)
		printf("%s%.2f", i > 0 ? "," : "", cmds[i]);
	printf("],\"max_shard_redis_us_per_item\":%.1f,"
	    "\"max_shard_cmds_per_item\":%.2f,\"redis_us_per_item\":%.1f,"
	    "\"cmds_per_item\":%.2f,\"items\":%d}\n", mus, mcmds, sus, scmds,
	    n * b->nq);
}

/* The queue/reply pairs of the command line into b; 0, or -1. */
static int
bench_cl_queues(struct bench_cl *b, char **pairs, int npairs)
{
	char	*slash;
	int	 i;

	if (npairs < 1 || npairs > BENCH_CL_MAX)
		return (-1);
	for (i = 0; i < npairs; i++) {
		if ((slash = strchr(pairs[i], '/')) == NULL ||
		    slash == pairs[i] || slash[1] == '\0')
			return (-1);
		*slash = '\0';
		b->q[i].name = pairs[i];
		b->q[i].reply = slash + 1;
	}
	b->nq = npairs;
	return (0);
}

/*
 * A backlog on a Redis Cluster (or one plain Redis, to compare): n
 * `true` items to each queue at once, each on its queue's node, every
 * answer read from its reply queue's node; items/s in all and per
 * queue, and each node's Redis CPU and commands per item (INFO cpu and
 * commandstats around the run). pairs: "QUEUE/REPLY_QUEUE" each.
 */
static int
bench_cluster(int n, const char *url, char **pairs, int npairs,
    const char *label)
{
	struct bench_cl		 b;
	struct bench_stats	 st[2][BENCH_CL_MAX];
	redisContext		*rc[BENCH_CL_MAX], *nc[BENCH_CL_MAX];
	redisReply		*r;
	int64_t			*done, t0;
	int			*reads, i, ok = 1, rc2 = 1;

	memset(&b, 0, sizeof b);
	memset(rc, 0, sizeof rc);
	memset(nc, 0, sizeof nc);
	if (bench_cl_queues(&b, pairs, npairs) == -1) {
		fprintf(stderr, "execq-bench cluster: QUEUE/REPLY ... (at most "
		    "%d)\n", BENCH_CL_MAX);
		return (2);
	}
	if (bench_cl_map(&b, url) == -1)
		return (1);
	done = mmap(NULL, BENCH_CL_MAX * (sizeof *done + sizeof *reads),
	    PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS, -1, 0);
	if (done == MAP_FAILED)
		return (1);
	reads = (int *)(done + BENCH_CL_MAX);
	for (i = 0; i < b.nnodes; i++)
		ok &= (nc[i] = bench_connect(b.url[i])) != NULL && !nc[i]->err;
	for (i = 0; i < b.nq; i++)
		ok &= (rc[i] = bench_connect(b.url[b.q[i].node])) != NULL &&
		    !rc[i]->err;
	for (i = 0; ok && i < b.nnodes; i++)
		ok = bench_redis_stats(nc[i], &st[0][i]) == 0;
	if (ok && bench_cl_run(&b, rc, n, &t0, done, reads) == 0) {
		for (i = 0; ok && i < b.nnodes; i++)
			ok = bench_redis_stats(nc[i], &st[1][i]) == 0;
		if (ok) {
			bench_cl_report(&b, label, n, t0, done, st, reads);
			rc2 = 0;
		}
	}
	for (i = 0; i < b.nq; i++)
		if (nc[b.q[i].rnode] != NULL && !nc[b.q[i].rnode]->err &&
		    (r = redisCommand(nc[b.q[i].rnode], "DEL %s",
		    b.q[i].stream)) != NULL)
			freeReplyObject(r);
	for (i = 0; i < BENCH_CL_MAX; i++) {
		if (rc[i] != NULL)
			redisFree(rc[i]);
		if (nc[i] != NULL)
			redisFree(nc[i]);
	}
	munmap(done, BENCH_CL_MAX * (sizeof *done + sizeof *reads));
	return (rc2);
}

/* Wall-clock nanoseconds. */
static int64_t
bench_wall(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

/*
 * Waits for the next entry on stream after *last; returns its parsed item
 * (caller decrefs) and moves *last, or NULL after 30 s.
 */
static json_t *
bench_next(redisContext *rc, const char *stream, char *last, size_t size)
{
	redisReply	*r, *e;
	json_t		*o;

	r = redisCommand(rc, "XREAD COUNT 1 BLOCK 30000 STREAMS %s %s", stream,
	    last);
	if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
		if (r != NULL)
			freeReplyObject(r);
		return (NULL);
	}
	e = r->element[0]->element[1]->element[0];
	snprintf(last, size, "%s", e->element[0]->str);
	o = json_loads(e->element[1]->element[1]->str, 0, NULL);
	freeReplyObject(r);
	return (o);
}

/* Submits a background item; returns 0 or -1. */
static int
bench_spawn(redisContext *rc, const char *queue, const char *id,
    const char *reply, const char *cmd, int pty)
{
	redisReply	*r;
	json_t		*o;
	char		*text;
	int		 rc2;

	o = json_pack("{s:s, s:s, s:s, s:{s:s, s:b, s:b}}", "id", id, "type",
	    "EXEC", "reply_to", reply, "args", "command", cmd, "background", 1,
	    "pty", pty);
	text = json_dumps(o, JSON_COMPACT);
	r = redisCommand(rc, "XADD " KS_QUEUE "%s:" KS_LANE_NORMAL " * item %s", queue, text);
	rc2 = r != NULL && r->type != REDIS_REPLY_ERROR ? 0 : -1;
	if (r != NULL)
		freeReplyObject(r);
	free(text);
	json_decref(o);
	return (rc2);
}

/*
 * Exit to callback: each command prints its own time (date +%s%N) as it
 * exits; the callback's tail carries it back.
 */
static int
bench_callback(int n, const char *url, const char *queue)
{
	redisContext	*rc;
	json_t		*cb;
	int64_t		*lat, ts;
	char		 id[64], reply[64], stream[128], last[64] = "0";
	int		 i;

	if ((rc = bench_connect(url)) == NULL || rc->err)
		return (1);
	lat = calloc(n, sizeof *lat);
	snprintf(reply, sizeof reply, "bench-cb-%d", (int)getpid());
	snprintf(stream, sizeof stream, KS_QUEUE "%s:" KS_LANE_HIGH, reply);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "cb%d-%d", (int)getpid(), i);
		if (bench_spawn(rc, queue, id, reply, "date +%s%N", 0) == -1 ||
		    (cb = bench_next(rc, stream, last, sizeof last)) == NULL)
			return (1);
		ts = json_array_size(json_object_get(cb, "tail")) > 0 ?
		    atoll(json_string_value(json_array_get(json_object_get(cb,
		    "tail"), 0))) : 0;
		lat[i] = bench_wall() - ts;
		json_decref(cb);
	}
	qsort(lat, n, sizeof *lat, bench_cmp);
	printf("exit -> EXEC_CALLBACK readable: p50 %.3f ms  p99 %.3f ms "
	    "(n=%d)\n", lat[n / 2] / 1e6, lat[(n * 99) / 100] / 1e6, n);
	redisFree(rc);
	return (0);
}

/* XADDs item (stolen) to q:<queue>:<lane>; 0 or -1. */
static int
bench_add(redisContext *rc, const char *queue, const char *lane, json_t *item)
{
	redisReply	*r;
	char		*text = json_dumps(item, JSON_COMPACT);
	int		 rc2;

	r = redisCommand(rc, "XADD " KS_QUEUE "%s:%s * item %s", queue, lane,
	    text);
	rc2 = r != NULL && r->type != REDIS_REPLY_ERROR ? 0 : -1;
	if (r != NULL)
		freeReplyObject(r);
	free(text);
	json_decref(item);
	return (rc2);
}

/*
 * A command in a shell session (PROCESS exec) next to the same command
 * as a foreground item, each answered before the next is sent: the time
 * from the XADD to the answer readable, p50 and p99 of n each.
 */
static int
bench_shell(int n, const char *url, const char *queue)
{
	redisContext	*rc;
	json_t		*a;
	int64_t		*lat[2], t0;
	char		 id[64], sid[64], reply[64], stream[128], last[64] = "0";
	char		 tok[64];
	int		 i, k;

	if ((rc = bench_connect(url)) == NULL || rc->err)
		return (1);
	snprintf(reply, sizeof reply, "bench-sh-%d", (int)getpid());
	snprintf(stream, sizeof stream, KS_QUEUE "%s:" KS_LANE_NORMAL, reply);
	snprintf(sid, sizeof sid, "sh%d", (int)getpid());
	if (bench_add(rc, queue, KS_LANE_NORMAL, json_pack("{s:s, s:s, s:s, "
	    "s:{s:s, s:b, s:b}}", "id", sid, "type", "EXEC", "reply_to", reply,
	    "args", "command", ":", "background", 1, "shell", 1)) == -1 ||
	    (a = bench_next(rc, stream, last, sizeof last)) == NULL ||
	    json_string_value(json_object_get(a, "session_token")) == NULL)
		return (1);
	snprintf(tok, sizeof tok, "%s", json_string_value(json_object_get(a,
	    "session_token")));
	json_decref(a);
	lat[0] = calloc(n, sizeof *lat[0]);
	lat[1] = calloc(n, sizeof *lat[1]);
	for (i = 0; i < 2 * n; i++) {
		k = i % 2;	/* interleaved: the same load for both */
		snprintf(id, sizeof id, "shx%d-%d", (int)getpid(), i);
		t0 = bench_now();
		if (k == 0 && bench_add(rc, queue, KS_LANE_CTL, json_pack("{s:s,"
		    " s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "id", id, "type",
		    "PROCESS", "reply_to", reply, "args", "action", "exec",
		    "session_id", sid, "command", "true",
		    "token", tok)) == -1)
			return (1);
		if (k == 1 && bench_add(rc, queue, KS_LANE_NORMAL, json_pack(
		    "{s:s, s:s, s:s, s:{s:s}}", "id", id, "type", "EXEC",
		    "reply_to", reply, "args", "command", "true")) == -1)
			return (1);
		if ((a = bench_next(rc, stream, last, sizeof last)) == NULL)
			return (1);
		if (json_integer_value(json_object_get(a, "exit_code")) != 0 ||
		    json_object_get(a, "exit_code") == NULL) {
			fprintf(stderr, "bench shell: not exit 0: %s\n",
			    json_string_value(json_object_get(a, "type")));
			return (1);
		}
		lat[k][i / 2] = bench_now() - t0;
		json_decref(a);
	}
	qsort(lat[0], n, sizeof *lat[0], bench_cmp);
	qsort(lat[1], n, sizeof *lat[1], bench_cmp);
	printf("shell exec (true): p50 %.3f ms  p99 %.3f ms; a foreground "
	    "item: p50 %.3f ms  p99 %.3f ms; %.1fx faster at the median "
	    "(n=%d)\n", lat[0][n / 2] / 1e6, lat[0][(n * 99) / 100] / 1e6,
	    lat[1][n / 2] / 1e6, lat[1][(n * 99) / 100] / 1e6,
	    (double)lat[1][n / 2] / lat[0][n / 2], n);
	free(lat[0]);
	free(lat[1]);
	redisFree(rc);
	return (0);
}

/*
 * Prompt to EXEC_WAITING: each PTY session prints its own time (date
 * +%s%N) and reads its terminal; the EXEC_WAITING's tail carries the time
 * back. The look comes WAITING_QUIET_MS after the last output, so that
 * much is by design. Each session ends by its timeout (1 s); its callback
 * is skipped.
 */
static int
bench_waiting(int n, const char *url, const char *queue)
{
	redisContext	*rc;
	redisReply	*r;
	json_t		*o, *tail;
	int64_t		*lat, ts;
	char		 id[64], reply[64], stream[128], last[64] = "0", *text;
	const char	*type, *got;
	int		 i;

	if ((rc = bench_connect(url)) == NULL || rc->err)
		return (1);
	lat = calloc(n, sizeof *lat);
	snprintf(reply, sizeof reply, "bench-wait-%d", (int)getpid());
	snprintf(stream, sizeof stream, KS_QUEUE "%s:" KS_LANE_HIGH, reply);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "wt%d-%d", (int)getpid(), i);
		o = json_pack("{s:s, s:s, s:s, s:{s:s, s:b, s:b, s:i}}", "id",
		    id, "type", "EXEC", "reply_to", reply, "args", "command",
		    "date +%s%N; read x", "background", 1, "pty", 1,
		    "timeout_s", 1);
		text = json_dumps(o, JSON_COMPACT);
		r = redisCommand(rc, "XADD " KS_QUEUE "%s:" KS_LANE_NORMAL
		    " * item %s", queue, text);
		free(text);
		json_decref(o);
		if (r == NULL || r->type == REDIS_REPLY_ERROR)
			return (1);
		freeReplyObject(r);
		for (;;) {
			if ((o = bench_next(rc, stream, last, sizeof last)) ==
			    NULL)
				return (1);
			type = json_string_value(json_object_get(o, "type"));
			got = json_string_value(json_object_get(o, "id"));
			if (type != NULL && strcmp(type, "EXEC_WAITING") == 0 &&
			    got != NULL && strcmp(got, id) == 0)
				break;
			json_decref(o);
		}
		ts = 0;
		tail = json_object_get(o, "tail");
		if (json_array_size(tail) > 0)
			ts = atoll(json_string_value(json_array_get(tail, 0)));
		lat[i] = bench_wall() - ts;
		json_decref(o);
	}
	qsort(lat, n, sizeof *lat, bench_cmp);
	printf("prompt -> EXEC_WAITING readable: p50 %.3f ms  p99 %.3f ms "
	    "(n=%d; the first look is 200 ms after the last output)\n",
	    lat[n / 2] / 1e6, lat[(n * 99) / 100] / 1e6, n);
	free(lat);
	redisFree(rc);
	return (0);
}

/* Runs argv to the end; returns the seconds it took. */
static double
bench_run(char **argv)
{
	int64_t	t0 = bench_now();
	pid_t	pid;

	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		return (-1);
	waitpid(pid, NULL, 0);
	return ((bench_now() - t0) / 1e9);
}

/* mb MB through a session into its log, next to a shell redirect. */
static int
bench_throughput(int mb, const char *url, const char *queue,
    const char *dir)
{
	redisContext	*rc;
	json_t		*cb;
	char		 cmd[256], redirect[512], id[64], reply[64],
			 stream[128], last[64] = "0";
	char		*argv[] = { (char *)"/bin/sh", (char *)"-c", redirect,
			    NULL };
	double		 floor_s, t;
	int64_t		 t0;

	snprintf(cmd, sizeof cmd, "head -c %d /dev/zero", mb << 20);
	snprintf(redirect, sizeof redirect, "%s > %s/redirect.out && sync "
	    "-f %s/redirect.out", cmd, dir, dir);
	floor_s = bench_run(argv);
	if ((rc = bench_connect(url)) == NULL || rc->err)
		return (1);
	snprintf(reply, sizeof reply, "bench-tp-%d", (int)getpid());
	snprintf(stream, sizeof stream, KS_QUEUE "%s:" KS_LANE_HIGH, reply);
	snprintf(id, sizeof id, "tp%d", (int)getpid());
	t0 = bench_now();
	if (bench_spawn(rc, queue, id, reply, cmd, 0) == -1 ||
	    (cb = bench_next(rc, stream, last, sizeof last)) == NULL)
		return (1);
	t = (bench_now() - t0) / 1e9;
	printf("%d MB into a session log: %.0f MB/s; shell redirect + fsync: "
	    "%.0f MB/s; ratio %.2f\n", mb, mb / t, mb / floor_s, floor_s / t);
	json_decref(cb);
	redisFree(rc);
	return (0);
}

/* utime + stime of pid, in clock ticks. */
static long
bench_cpu_ticks(pid_t pid)
{
	char	 path[64], buf[1024], *p;
	long	 ut = 0, st = 0;
	FILE	*f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	if (fgets(buf, sizeof buf, f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL)
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
		    "%ld %ld", &ut, &st);
	fclose(f);
	return (ut + st);
}

/* A line of /proc/<pid>/status, in kB. */
static long
bench_status_kb(pid_t pid, const char *field)
{
	char	 path[64], line[256];
	long	 kb = -1;
	FILE	*f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, field, strlen(field)) == 0)
			kb = atol(line + strlen(field) + 1);
	fclose(f);
	return (kb);
}

/* The worker's memory and CPU with n idle PTY sessions. */
static int
bench_idle(int n, const char *url, const char *queue, pid_t worker)
{
	redisContext	*rc;
	json_t		*a;
	char		 id[64], reply[64], stream[128], last[64] = "0";
	long		 rss0, rss, t0, t1;
	int		 i;

	if ((rc = bench_connect(url)) == NULL || rc->err)
		return (1);
	rss0 = bench_status_kb(worker, "VmRSS:");
	snprintf(reply, sizeof reply, "bench-idle-%d", (int)getpid());
	snprintf(stream, sizeof stream, KS_QUEUE "%s:" KS_LANE_NORMAL, reply);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "idle%d-%d", (int)getpid(), i);
		if (bench_spawn(rc, queue, id, reply, "sleep 3600", 1) == -1)
			return (1);
	}
	for (i = 0; i < n; i++) {
		if ((a = bench_next(rc, stream, last, sizeof last)) == NULL)
			return (1);
		if (strcmp(json_string_value(json_object_get(a, "type")),
		    "EXEC_STARTED") != 0) {
			fprintf(stderr, "execq-bench: %s\n",
			    json_dumps(a, JSON_COMPACT));
			return (1);
		}
		json_decref(a);
	}
	sleep(1);
	rss = bench_status_kb(worker, "VmRSS:");
	t0 = bench_cpu_ticks(worker);
	sleep(5);
	t1 = bench_cpu_ticks(worker);
	printf("%d idle PTY sessions: worker RSS %ld KiB (%ld before, %.1f "
	    "KiB each); CPU while idle %.2f%% over 5 s\n", n, rss, rss0,
	    (double)(rss - rss0) / n,
	    100.0 * (t1 - t0) / sysconf(_SC_CLK_TCK) / 5.0);
	redisFree(rc);
	return (0);
}

/* The confinement benchmark's three ways to run `sh -c true`. */
#define BENCH_CONF_OFF	0	/* spawn_start in the leaf, unconfined */
#define BENCH_CONF_ON	1	/* spawn_start in the leaf, confined */
#define BENCH_CONF_BARE	2	/* posix_spawn, as the floor */
#define BENCH_CONF_MODES 3

/* What the confinement benchmark sets up once. */
struct bench_conf {
	char			 root[PATH_MAX];	/* removed at the end */
	char			 ws[PATH_MAX + 16];	/* the workspace, cwd */
	char			 tmp_dir[PATH_MAX + 16];
	struct cgroup_pool	*pool;			/* NULL: no cgroups */
	int			 limits;		/* v1 limits are on */
	struct confine		*confine;
	int			 null_fd;		/* stdin, out, err */
	int			 seq;			/* command ids */
	int64_t			 parent_ns;		/* confined, parent */
};

/* The directories, a cgroup leaf with its v1 limits, the confinement. */
static int
bench_conf_setup(struct bench_conf *b, const char *dir)
{
	static const char *const	 read_paths[] = { "/usr", "/bin",
					    "/lib", "/lib64", "/etc", "/dev",
					    "/proc", NULL };
	struct confine_config		 cc;
	char				 tmpl[PATH_MAX], *cause;

	memset(b, 0, sizeof *b);
	b->null_fd = -1;
	snprintf(tmpl, sizeof tmpl, "%s/confine.XXXXXX", dir);
	if (mkdtemp(tmpl) == NULL) {
		fprintf(stderr, "execq-bench: %s: %s\n", tmpl, strerror(errno));
		return (-1);
	}
	if (realpath(tmpl, b->root) == NULL) {	/* the workspace is real */
		fprintf(stderr, "execq-bench: %s: %s\n", tmpl, strerror(errno));
		rmdir(tmpl);
		return (-1);
	}
	snprintf(b->ws, sizeof b->ws, "%s/workspace", b->root);
	snprintf(b->tmp_dir, sizeof b->tmp_dir, "%s/cmdtmp", b->root);
	if (mkdir(b->ws, 0700) == -1 ||
	    (b->null_fd = open("/dev/null", O_RDWR|O_CLOEXEC)) == -1) {
		fprintf(stderr, "execq-bench: %s: %s\n", b->ws,
		    strerror(errno));
		return (-1);
	}
	if ((b->pool = cgroup_pool_create("auto", 1, 0, &cause)) == NULL) {
		fprintf(stderr, "execq-bench: no cgroup leaf, both run "
		    "without one: %s\n", cause != NULL ? cause : "off");
		free(cause);
	} else if (cgroup_pool_limit(b->pool, 512, 2ULL << 30, &cause) == -1) {
		fprintf(stderr, "execq-bench: no cgroup v1 limits: %s\n",
		    cause);
		free(cause);
	} else
		b->limits = 1;
	memset(&cc, 0, sizeof cc);
	cc.mode = CONFINE_AUTO;
	cc.workspace = b->ws;
	cc.tmp_dir = b->tmp_dir;
	cc.read_paths = read_paths;
	if ((b->confine = confine_create(&cc, &cause)) == NULL) {
		fprintf(stderr, "execq-bench: confinement: %s\n",
		    cause != NULL ? cause : "off");
		free(cause);
		return (-1);
	}
	return (0);
}

/* nftw callback: one entry, children first. */
static int
bench_rm_cb(const char *path, const struct stat *st, int type,
    struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((type == FTW_DP ? rmdir(path) : unlink(path)) == -1)
		fprintf(stderr, "execq-bench: remove %s: %s\n", path,
		    strerror(errno));
	return (0);
}

/* rm -rf of the bench's own temp dir. */
static void
bench_rm_tree(const char *path)
{
	nftw(path, bench_rm_cb, 16, FTW_DEPTH|FTW_PHYS);
}

/* Undoes bench_conf_setup, whatever part of it was done. */
static void
bench_conf_teardown(struct bench_conf *b)
{
	confine_free(b->confine);
	cgroup_pool_free(b->pool);
	if (b->null_fd != -1)
		close(b->null_fd);
	if (b->root[0] != '\0')
		bench_rm_tree(b->root);
}

/*
 * The confined part of a spawn, as the worker does it: the command's tmp
 * dir and Landlock ruleset, the leaf's v1 limits. 0, or -1 (printed).
 */
static int
bench_conf_prepare(struct bench_conf *b, struct cgroup *cg, const char *id,
    struct spawn_confine *sc, char **tmp)
{
	char	*cause;
	int64_t	 t0 = bench_now();

	if (confine_prepare(b->confine, id, 0, 0, -1, NULL, sc, tmp,
	    &cause) == -1) {
		fprintf(stderr, "execq-bench: confine %s: %s\n", id, cause);
		free(cause);
		return (-1);
	}
	if (cg != NULL)
		cgroup_v1_fds(cg, sc->cgroup_v1_fds);	/* -1s without */
	b->parent_ns += bench_now() - t0;
	return (0);
}

/*
 * The floor's way, for the child's CPU without the worker's spawn: a bare
 * posix_spawn of `sh -c true` with the same stdio, cwd and environment,
 * outside the cgroup leaf. Its pid, or -1 (printed).
 */
static pid_t
bench_conf_bare(struct bench_conf *b, char *const envp[])
{
	char *const			 argv[] = { (char *)"sh",
					    (char *)"-c", (char *)"true",
					    NULL };
	posix_spawn_file_actions_t	 fa;
	pid_t				 pid;
	int				 i, rc;

	posix_spawn_file_actions_init(&fa);
	for (i = 0; i < 3; i++)
		posix_spawn_file_actions_adddup2(&fa, b->null_fd, i);
	posix_spawn_file_actions_addchdir_np(&fa, b->ws);
	rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		fprintf(stderr, "execq-bench: posix_spawn: %s\n",
		    strerror(rc));
		return (-1);
	}
	return (pid);
}

/*
 * One `sh -c true`: in the cgroup leaf, confined or not, from taking the
 * leaf to giving it back, or bare (BENCH_CONF_BARE). Its duration in *lat,
 * the child's CPU (its rusage when reaped) added to *child_us. 0, or -1
 * (printed).
 */
static int
bench_conf_one(struct bench_conf *b, int mode, int64_t *lat,
    int64_t *child_us)
{
	char *const		 envp[] = { (char *)"PATH=/usr/bin:/bin",
				    NULL };
	struct spawn_opts	 o;
	struct spawn_confine	 sc;
	struct rusage		 ru;
	struct cgroup		*cg = NULL;
	char			 id[32], *tmp = NULL;
	int64_t			 t0, t1;
	int			 confined = mode == BENCH_CONF_ON;
	pid_t			 pid = -1;
	int			 st = -1;

	memset(&sc, 0, sizeof sc);
	sc.cgroup_v1_fds[0] = sc.cgroup_v1_fds[1] = -1;
	sc.ruleset_fd = sc.mntns_fd = sc.netns_fd = -1;
	memset(&o, 0, sizeof o);
	o.shell = "/bin/sh";
	o.command = "true";
	o.cwd = b->ws;
	o.envp = envp;
	o.stdin_fd = o.stdout_fd = o.stderr_fd = b->null_fd;
	o.pty_fd = -1;
	snprintf(id, sizeof id, "bench-%d", b->seq++);
	t0 = bench_now();
	if (mode == BENCH_CONF_BARE)
		pid = bench_conf_bare(b, envp);
	else {
		cg = cgroup_take(b->pool, b);
		o.cgroup_fd = cg != NULL ? cgroup_fd(cg) : -1;
	}
	if (mode != BENCH_CONF_BARE &&
	    (!confined || bench_conf_prepare(b, cg, id, &sc, &tmp) == 0)) {
		o.confine = confined ? &sc : NULL;
		if ((pid = spawn_start(&o, NULL)) == -1)
			fprintf(stderr, "execq-bench: spawn: %s: %s\n",
			    spawn_failed_step(), strerror(errno));
		confine_spawned(&sc);
	}
	memset(&ru, 0, sizeof ru);
	while (pid != -1 && wait4(pid, &st, 0, &ru) == -1 && errno == EINTR)
		;
	*child_us += bench_tv_us(&ru.ru_utime) + bench_tv_us(&ru.ru_stime);
	t1 = bench_now();
	confine_remove_tmp(b->confine, tmp);
	free(tmp);
	if (confined)
		b->parent_ns += bench_now() - t1;
	if (cg != NULL)
		cgroup_put(cg);
	*lat = bench_now() - t0;
	if (pid != -1 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
		fprintf(stderr, "execq-bench: sh -c true: status %d\n", st);
	return (pid != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1);
}

/* The layers on, for the confined row: "landlock ABI 7, seccomp, ...". */
static void
bench_conf_layers(const struct bench_conf *b, char *buf, size_t size)
{
	const struct confine_layer	*l = confine_layers(b->confine);
	size_t				 len = 0;
	int				 i;

	buf[0] = '\0';
	for (i = 0; i < CONFINE_NLAYERS && len < size; i++) {
		if (!l[i].ok)
			continue;
		len += snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
		    l[i].name);
		if (strcmp(l[i].name, "landlock") == 0 && len < size)
			len += snprintf(buf + len, size - len, " ABI %d",
			    confine_landlock_abi(b->confine));
	}
	if (b->limits && len < size)
		snprintf(buf + len, size - len, "%scgroup v1 limits",
		    len ? ", " : "");
}

/* One row: mean, p50 and p99 of n latencies, in microseconds. */
static void
bench_conf_row(const char *what, int n, int64_t total, int64_t *lat,
    const char *note)
{
	qsort(lat, n, sizeof *lat, bench_cmp);
	printf("%-10s %8.1f us/command  p50 %8.1f us  p99 %8.1f us  (%s)\n",
	    what, total / 1e3 / n, lat[n / 2] / 1e3,
	    lat[(n * 99) / 100] / 1e3, note);
}

/* Runs commands [from, to) in mode, adding up latencies and child CPU. */
static int
bench_conf_block(struct bench_conf *b, int mode, int from, int to,
    int64_t *lat, int64_t *total, int64_t *child_us)
{
	int	i;

	for (i = from; i < to; i++) {
		if (bench_conf_one(b, mode, &lat[i], child_us) == -1)
			return (-1);
		*total += lat[i];
	}
	return (0);
}

/*
 * The per-command cost of confinement, without Redis: n `sh -c true`
 * spawned unconfined, n confined, both in the cgroup v2 leaf as the
 * worker runs them (with --confine off too), and n bare as the floor
 * spawns them, in rotating blocks of 50. Then the child's own CPU (its
 * rusage) in each way: what the leaf and the boundary cost in the child,
 * before its execve and in the filter on the shell's own calls.
 */
static int
bench_confine(int n, const char *dir)
{
	struct bench_conf	 b;
	int64_t			*lat[BENCH_CONF_MODES] = { NULL };
	int64_t			 total[BENCH_CONF_MODES] = { 0, 0, 0 };
	int64_t			 child[BENCH_CONF_MODES] = { 0, 0, 0 };
	int64_t			 t, p50[2], warm = 0;
	char			 layers[256], note[64];
	int			 i, k, mode, to, rc = 1, block = 50;
	double			 cu[BENCH_CONF_MODES];

	if (bench_conf_setup(&b, dir) == -1)
		goto out;
	for (k = 0; k < BENCH_CONF_MODES; k++)
		if ((lat[k] = calloc(n, sizeof *lat[k])) == NULL)
			goto out;
	for (i = 0; i < 30; i++)		/* warm the caches */
		if (bench_conf_one(&b, i % BENCH_CONF_MODES, &t, &warm) == -1)
			goto out;
	b.parent_ns = 0;
	for (i = 0; i < n; i += block) {
		to = i + block < n ? i + block : n;
		for (k = 0; k < BENCH_CONF_MODES; k++) {
			mode = (i / block + k) % BENCH_CONF_MODES;
			if (bench_conf_block(&b, mode, i, to, lat[mode],
			    &total[mode], &child[mode]) == -1)
				goto out;
		}
	}
	bench_conf_layers(&b, layers, sizeof layers);
	snprintf(note, sizeof note, "n=%d, /bin/sh -c true, cgroup v2 leaf%s",
	    n, b.pool != NULL ? "" : " off");
	bench_conf_row("bare", n, total[BENCH_CONF_BARE], lat[BENCH_CONF_BARE],
	    "posix_spawn, as the floor, no leaf");
	bench_conf_row("unconfined", n, total[0], lat[0], note);
	bench_conf_row("confined", n, total[1], lat[1], layers);
	p50[0] = lat[0][n / 2];
	p50[1] = lat[1][n / 2];
	printf("difference %+8.1f us/command  p50 %+8.1f us  (%+.0f%%; %.1f us "
	    "of it in the parent: tmp dir, ruleset, removal)\n",
	    (total[1] - total[0]) / 1e3 / n, (p50[1] - p50[0]) / 1e3,
	    100.0 * (total[1] - total[0]) / total[0], b.parent_ns / 1e3 / n);
	for (k = 0; k < BENCH_CONF_MODES; k++)
		cu[k] = (double)child[k] / n;
	printf("child cpu  bare %.1f  leaf %.1f  confined %.1f us/command; "
	    "child_setup %.1f us (confined - bare: %.1f the leaf, %.1f the "
	    "boundary)\n", cu[BENCH_CONF_BARE], cu[BENCH_CONF_OFF],
	    cu[BENCH_CONF_ON], cu[BENCH_CONF_ON] - cu[BENCH_CONF_BARE],
	    cu[BENCH_CONF_OFF] - cu[BENCH_CONF_BARE],
	    cu[BENCH_CONF_ON] - cu[BENCH_CONF_OFF]);
	rc = 0;
out:
	bench_conf_teardown(&b);
	for (k = 0; k < BENCH_CONF_MODES; k++)
		free(lat[k]);
	return (rc);
}

/*
 * The egress proxy's cost (worker/proxy.c), on 127.0.0.1 only: a sink
 * server and the proxy each run in a child process of their own, and
 * this process, the client, reaches the sink directly and through the
 * proxy in turn. The sink serves one connection at a time, which is all
 * the client ever opens to it.
 */
#define BENCH_PX_CHUNK	(128 * 1024)	/* one read or write */
#define BENCH_PX_HEAD	4096		/* a request's first bytes */
#define BENCH_PX_BLOCK	100		/* connections of one kind in a row */

/* The two children, and what the client needs to reach them. */
struct bench_px {
	pid_t	 sink_pid, proxy_pid;	/* -1: not started */
	int	 sink_port, proxy_port;
	char	*auth;			/* "execq:<token>" in base64 */
	char	*buf;			/* BENCH_PX_CHUNK, the client's */
};

/*
 * A TCP connection to 127.0.0.1:port, or -1 (printed). A read or write
 * that waits 10 s fails, so that a stuck proxy ends the bench.
 */
static int
bench_px_dial(int port)
{
	struct timeval		tv = { 10, 0 };
	struct sockaddr_in	sin;
	int			fd;

	if ((fd = socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, 0)) == -1) {
		fprintf(stderr, "execq-bench: socket: %s\n", strerror(errno));
		return (-1);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof sin) == -1) {
		fprintf(stderr, "execq-bench: connect 127.0.0.1:%d: %s\n", port,
		    strerror(errno));
		close(fd);
		return (-1);
	}
	return (fd);
}

/* All len bytes of buf to fd: 0, or -1. */
static int
bench_px_write(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

/*
 * Reads fd into buf (NUL-terminated) until it holds what ends a head
 * ("\r\n\r\n"; "\n" for the sink's own lines, which start with U or D):
 * the bytes read, or -1 at the end of the stream or of buf.
 */
static ssize_t
bench_px_head(int fd, char *buf, size_t size)
{
	size_t	len = 0;
	ssize_t	n;

	buf[0] = '\0';
	while (len < size - 1) {
		if ((n = read(fd, buf + len, size - 1 - len)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		len += (size_t)n;
		buf[len] = '\0';
		if (buf[0] == 'U' || buf[0] == 'D' ?
		    memchr(buf, '\n', len) != NULL :
		    strstr(buf, "\r\n\r\n") != NULL)
			return ((ssize_t)len);
	}
	return (-1);
}

/*
 * One connection to the sink: "GET ..." gets a small answer; "U <len>\n"
 * len bytes read, then "k"; "D <len>\n" len bytes written; nothing (a
 * connect alone) just the close.
 */
static void
bench_px_sink_conn(int fd, char *buf)
{
	static const char	 answer[] = "HTTP/1.1 200 OK\r\n"
				    "Content-Type: text/plain\r\n"
				    "Content-Length: 64\r\nConnection: close"
				    "\r\n\r\n"
				    "0123456789abcdef0123456789abcdef"
				    "0123456789abcdef0123456789abcde\n";
	long long		 len, done;
	ssize_t			 n;
	char			*eol, dir;

	if ((n = bench_px_head(fd, buf, BENCH_PX_HEAD)) == -1)
		return;
	if ((dir = buf[0]) != 'U' && dir != 'D') {
		bench_px_write(fd, answer, sizeof answer - 1);
		return;
	}
	eol = memchr(buf, '\n', (size_t)n);
	len = atoll(buf + 1);
	done = dir == 'U' ? n - (eol + 1 - buf) : 0;
	if (dir == 'D')
		memset(buf, 0, BENCH_PX_CHUNK);
	while (done < len) {
		n = len - done < BENCH_PX_CHUNK ? len - done : BENCH_PX_CHUNK;
		n = dir == 'U' ? read(fd, buf, BENCH_PX_CHUNK) :
		    write(fd, buf, (size_t)n);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		done += n;
	}
	if (dir == 'U')
		bench_px_write(fd, "k", 1);
}

/* The sink: one connection after another, until SIGTERM. */
static void __attribute__((noreturn))
bench_px_sink(int lfd)
{
	char	*buf = malloc(BENCH_PX_CHUNK);
	int	 fd;

	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			_exit(1);
		}
		bench_px_sink_conn(fd, buf);
		close(fd);
	}
}

static void
bench_px_stop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/*
 * The proxy, as the worker runs it (its event loop made as worker/main.c
 * makes it) but on the host's loopback: the name "localhost" granted and
 * let be private (the sink stands in for the internet); its URL goes to
 * out. Until SIGTERM.
 */
static void __attribute__((noreturn))
bench_px_proxy(int out)
{
	static const char *const	 local[] = { "localhost", NULL };
	struct proxy_config		 cfg;
	struct event_config		*ecfg;
	struct event_base		*base = NULL;
	struct proxy			*p = NULL;
	struct event			*stop;
	char				*url;

	signal(SIGPIPE, SIG_IGN);
	memset(&cfg, 0, sizeof cfg);
	cfg.netns_fd = -1;
	cfg.private_hosts = local;
	if ((ecfg = event_config_new()) != NULL) {
		event_config_set_flag(ecfg,
		    EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
		base = event_base_new_with_config(ecfg);
		event_config_free(ecfg);
	}
	if (base == NULL || (p = proxy_create(base, &cfg)) == NULL) {
		fprintf(stderr, "execq-bench: proxy: %s\n", strerror(errno));
		_exit(1);
	}
	url = proxy_grant(p, "bench", local);
	dprintf(out, "%s\n", url);
	close(out);
	stop = evsignal_new(base, SIGTERM, bench_px_stop_cb, base);
	event_add(stop, NULL);
	event_base_dispatch(base);
	proxy_free(p);
	event_free(stop);
	event_base_free(base);
	free(url);
	_exit(0);
}

/* The sink's listening socket on 127.0.0.1; its port in *port. */
static int
bench_px_listen(int *port)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof sin;
	int			fd;

	if ((fd = socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) == -1 ||
	    listen(fd, 4096) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1) {
		close(fd);
		return (-1);
	}
	*port = ntohs(sin.sin_port);
	return (fd);
}

/* Stops the children, frees the rest; whatever part was started. */
static void
bench_px_stop(struct bench_px *b)
{
	if (b->proxy_pid > 0)
		kill(b->proxy_pid, SIGTERM);
	if (b->sink_pid > 0)
		kill(b->sink_pid, SIGTERM);
	if (b->proxy_pid > 0)
		waitpid(b->proxy_pid, NULL, 0);
	if (b->sink_pid > 0)
		waitpid(b->sink_pid, NULL, 0);
	free(b->auth);
	free(b->buf);
}

/* The credential in the proxy URL http://execq:<token>@127.0.0.1:<port>. */
static int
bench_px_url(struct bench_px *b, const char *url)
{
	const char	*cred, *at, *colon;

	if (strncmp(url, "http://", 7) != 0 ||
	    (at = strchr(url, '@')) == NULL ||
	    (colon = strrchr(at, ':')) == NULL)
		return (-1);
	cred = url + 7;
	b->auth = item_base64_encode(cred, (size_t)(at - cred), NULL);
	b->proxy_port = atoi(colon + 1);
	return (0);
}

/* The sink and the proxy running; 0, or -1 (printed). */
static int
bench_px_start(struct bench_px *b)
{
	char	*line = NULL;
	size_t	 cap = 0;
	FILE	*f;
	int	 lfd, fds[2], rc;

	b->buf = calloc(1, BENCH_PX_CHUNK);
	if ((lfd = bench_px_listen(&b->sink_port)) == -1 ||
	    pipe2(fds, O_CLOEXEC) == -1) {
		fprintf(stderr, "execq-bench: sink: %s\n", strerror(errno));
		if (lfd != -1)
			close(lfd);
		return (-1);
	}
	if ((b->sink_pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		close(fds[0]);
		close(fds[1]);
		bench_px_sink(lfd);
	}
	close(lfd);
	if ((b->proxy_pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		close(fds[0]);
		bench_px_proxy(fds[1]);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	rc = f != NULL && getline(&line, &cap, f) > 0 &&
	    bench_px_url(b, line) == 0 ? 0 : -1;
	if (f != NULL)
		fclose(f);
	else
		close(fds[0]);
	free(line);
	if (rc == -1 || b->sink_pid == -1 || b->proxy_pid == -1) {
		fprintf(stderr, "execq-bench: the proxy did not start\n");
		return (-1);
	}
	return (0);
}

/*
 * A CONNECT tunnel through the proxy to the sink, from socket() to its
 * "200 Connection established" read: the fd, or -1 (printed).
 */
static int
bench_px_tunnel(const struct bench_px *b)
{
	char	req[512], head[512];
	int	fd, len;

	if ((fd = bench_px_dial(b->proxy_port)) == -1)
		return (-1);
	len = snprintf(req, sizeof req, "CONNECT localhost:%d HTTP/1.1\r\n"
	    "Host: localhost:%d\r\nProxy-Authorization: Basic %s\r\n\r\n",
	    b->sink_port, b->sink_port, b->auth);
	if (bench_px_write(fd, req, (size_t)len) == -1 ||
	    bench_px_head(fd, head, sizeof head) == -1 ||
	    strncmp(head, "HTTP/1.1 200 ", 13) != 0) {
		fprintf(stderr, "execq-bench: CONNECT: %s\n", head);
		close(fd);
		return (-1);
	}
	return (fd);
}

/* One connection to the sink, directly (proxied 0) or tunnelled. */
static int
bench_px_open(const struct bench_px *b, int proxied)
{
	return (proxied ? bench_px_tunnel(b) : bench_px_dial(b->sink_port));
}

/*
 * One GET of the sink's small answer on a connection of its own,
 * directly or as a plain HTTP request to the proxy; 0, or -1 (printed).
 */
static int
bench_px_get(const struct bench_px *b, int proxied)
{
	char	req[512], *buf = b->buf;
	size_t	len = 0;
	ssize_t	n;
	int	fd;

	if ((fd = bench_px_dial(proxied ? b->proxy_port : b->sink_port)) == -1)
		return (-1);
	if (proxied)
		n = snprintf(req, sizeof req, "GET http://localhost:%d/bench "
		    "HTTP/1.1\r\nHost: localhost:%d\r\nProxy-Authorization: "
		    "Basic %s\r\n\r\n", b->sink_port, b->sink_port, b->auth);
	else
		n = snprintf(req, sizeof req, "GET /bench HTTP/1.1\r\nHost: "
		    "localhost:%d\r\nConnection: close\r\n\r\n", b->sink_port);
	n = bench_px_write(fd, req, (size_t)n);
	while (n != -1 && len < BENCH_PX_CHUNK - 1) {
		if ((n = read(fd, buf + len, BENCH_PX_CHUNK - 1 - len)) > 0)
			len += (size_t)n;
		else if (n == 0 || errno != EINTR)
			break;
	}
	close(fd);
	buf[len] = '\0';
	if (strncmp(buf, "HTTP/1.1 200 ", 13) != 0) {
		fprintf(stderr, "execq-bench: GET: %s\n", buf);
		return (-1);
	}
	return (0);
}

/*
 * One connect alone ('c') or one GET ('g'), direct (way 0) or through
 * the proxy (way 1); its duration in *lat. 0, or -1 (printed).
 */
static int
bench_px_one(const struct bench_px *b, int what, int way, int64_t *lat)
{
	int64_t	t0 = bench_now();
	int	fd = -1, rc = 0;

	if (what == 'g')
		rc = bench_px_get(b, way);
	else if ((fd = bench_px_open(b, way)) == -1)
		rc = -1;
	*lat = bench_now() - t0;
	if (fd != -1)
		close(fd);
	return (rc);
}

/*
 * n of one thing each way, direct (lat[0]) and proxied (lat[1]), in
 * alternating blocks (each pair of blocks starting with the other way),
 * after 20 of each to warm up.
 */
static int
bench_px_rounds(const struct bench_px *b, int what, int n, int64_t **lat)
{
	int64_t	t;
	int	i, j, k, to, way;

	for (j = 0; j < 20; j++)
		if (bench_px_one(b, what, 0, &t) == -1 ||
		    bench_px_one(b, what, 1, &t) == -1)
			return (-1);
	for (i = 0; i < n; i += BENCH_PX_BLOCK) {
		to = i + BENCH_PX_BLOCK < n ? i + BENCH_PX_BLOCK : n;
		for (k = 0; k < 2; k++) {
			way = (i / BENCH_PX_BLOCK + k) & 1;
			for (j = i; j < to; j++)
				if (bench_px_one(b, what, way,
				    &lat[way][j]) == -1)
					return (-1);
		}
	}
	return (0);
}

/* CPU time of every thread of pid so far, in ns (schedstat), or 0. */
static int64_t
bench_px_cpu(pid_t pid)
{
	char		 path[64], sub[400];
	struct dirent	*d;
	DIR		*dir;
	FILE		*f;
	long long	 ns;
	int64_t		 sum = 0;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return (0);
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s/schedstat", path, d->d_name);
		if ((f = fopen(sub, "r")) == NULL)
			continue;
		if (fscanf(f, "%lld", &ns) == 1)
			sum += ns;
		fclose(f);
	}
	closedir(dir);
	return (sum);
}

/*
 * len bytes one way over fd, 'U' to the sink (until its "k" says all
 * came) or 'D' from it: the seconds it took, or -1 (printed).
 */
static double
bench_px_push(const struct bench_px *b, int fd, int dir, long long len)
{
	char		 head[64];
	long long	 done = 0;
	int64_t		 t0 = bench_now();
	ssize_t		 n;

	n = snprintf(head, sizeof head, "%c %lld\n", dir, len);
	if (bench_px_write(fd, head, (size_t)n) == -1)
		goto fail;
	while (done < len) {
		n = len - done < BENCH_PX_CHUNK ? len - done : BENCH_PX_CHUNK;
		n = dir == 'U' ? write(fd, b->buf, (size_t)n) :
		    read(fd, b->buf, BENCH_PX_CHUNK);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		done += n;
	}
	if (dir == 'U' && (read(fd, head, 1) != 1 || head[0] != 'k'))
		goto fail;
	return ((bench_now() - t0) / 1e9);
fail:
	fprintf(stderr, "execq-bench: %s %lld bytes: stopped at %lld: %s\n",
	    dir == 'U' ? "sending" : "receiving", len, done, strerror(errno));
	return (-1);
}

/*
 * mb MiB up and down, directly and through a tunnel, rounds times
 * each, alternating: the best MiB/s of each in mbs[up/down][way], the
 * proxy's CPU seconds per GiB it piped in *cpu.
 */
static int
bench_px_tunnels(const struct bench_px *b, int mb, double mbs[2][2],
    double *cpu)
{
	const int	 rounds = 3;
	long long	 len = (long long)mb << 20;
	int64_t		 c0, cpu_ns = 0;
	double		 s;
	int		 r, d, k, way, fd;

	memset(mbs, 0, 4 * sizeof mbs[0][0]);
	for (r = 0; r < rounds; r++)
		for (d = 0; d < 2; d++)
			for (k = 0; k < 2; k++) {
				way = (r + k) & 1;
				if ((fd = bench_px_open(b, way)) == -1)
					return (-1);
				c0 = bench_px_cpu(b->proxy_pid);
				s = bench_px_push(b, fd, d ? 'D' : 'U', len);
				if (way)
					cpu_ns += bench_px_cpu(b->proxy_pid) -
					    c0;
				close(fd);
				if (s < 0)
					return (-1);
				if (mb / s > mbs[d][way])
					mbs[d][way] = mb / s;
			}
	*cpu = cpu_ns / 1e9 / (rounds * 2.0 * mb / 1024);
	return (0);
}

/* Prints "p50 X us  p99 Y us" of n latencies (sorted here) into buf. */
static void
bench_px_pct(char *buf, size_t size, int64_t *lat, int n)
{
	qsort(lat, n, sizeof *lat, bench_cmp);
	snprintf(buf, size, "p50 %.0f us  p99 %.0f us", lat[n / 2] / 1e3,
	    lat[(n * 99) / 100] / 1e3);
}

/* Sum of n latencies, in seconds. */
static double
bench_px_sum(const int64_t *lat, int n)
{
	int64_t	sum = 0;
	int	i;

	for (i = 0; i < n; i++)
		sum += lat[i];
	return (sum / 1e9);
}

/*
 * The egress proxy against a direct connection: n connects, n GETs,
 * mb MiB each way, three lines of figures.
 */
static int
bench_proxy(int n, int mb)
{
	struct bench_px	 b;
	int64_t		*lat[2], c0, c1;
	double		 mbs[2][2], cpu, s[2];
	char		 p[2][64];
	int		 rc = -1;

	signal(SIGPIPE, SIG_IGN);
	memset(&b, 0, sizeof b);
	b.sink_pid = b.proxy_pid = -1;
	lat[0] = calloc(n, sizeof *lat[0]);
	lat[1] = calloc(n, sizeof *lat[1]);
	if (lat[0] == NULL || lat[1] == NULL || bench_px_start(&b) == -1)
		goto out;
	c0 = bench_px_cpu(b.proxy_pid);
	if (bench_px_rounds(&b, 'c', n, lat) == -1)
		goto out;
	c1 = bench_px_cpu(b.proxy_pid);
	bench_px_pct(p[0], sizeof p[0], lat[0], n);
	bench_px_pct(p[1], sizeof p[1], lat[1], n);
	printf("proxy connect  %s  (direct %s; n=%d, socket() to the "
	    "CONNECT's 200 read; proxy CPU %.0f us a connection)\n", p[1],
	    p[0], n, (c1 - c0) / 1e3 / (n + 20));
	c0 = bench_px_cpu(b.proxy_pid);
	if (bench_px_rounds(&b, 'g', n, lat) == -1)
		goto out;
	c1 = bench_px_cpu(b.proxy_pid);
	s[0] = bench_px_sum(lat[0], n);
	s[1] = bench_px_sum(lat[1], n);
	bench_px_pct(p[0], sizeof p[0], lat[0], n);
	bench_px_pct(p[1], sizeof p[1], lat[1], n);
	printf("proxy GET      %.0f requests/s  %s  (direct %.0f requests/s  "
	    "%s; a 64-byte body, a connection each; proxy CPU %.0f us a "
	    "request)\n", n / s[1], p[1], n / s[0], p[0],
	    (c1 - c0) / 1e3 / (n + 20));
	if (bench_px_tunnels(&b, mb, mbs, &cpu) == -1)
		goto out;
	printf("proxy tunnel   up %.0f MB/s  down %.0f MB/s  (direct up %.0f "
	    "MB/s  down %.0f MB/s; %d MB each way, best of 3; proxy CPU %.2f "
	    "s per GB piped)\n", mbs[0][1], mbs[1][1], mbs[0][0], mbs[1][0],
	    mb, cpu);
	rc = 0;
out:
	bench_px_stop(&b);
	free(lat[0]);
	free(lat[1]);
	return (rc);
}

/*
 * A line of the MCP server's with the answer to request id (others, such
 * as notifications, skipped): 0, or -1 at its end.
 */
static int
bench_mcp_answer(FILE *in, int id)
{
	char	*line = NULL, want[32];
	size_t	 cap = 0;
	int	 rc = -1;

	snprintf(want, sizeof want, "\"id\":%d,", id);
	while (getline(&line, &cap, in) > 0) {
		if (strstr(line, want) != NULL) {
			rc = strstr(line, "\"error\"") != NULL ? -1 : 0;
			break;
		}
	}
	free(line);
	return (rc);
}

/*
 * What a tool call costs over the item it becomes: n tools/call of exec
 * `true` through `execq mcp` (one server, one agent, as a model's client
 * keeps it), interleaved with n items sent straight to the queue by this
 * process, both answered by the same worker.
 */
static int
bench_mcp(int n, const char *url, const char *queue, const char *execq)
{
	redisContext	*rc;
	redisReply	*r, *e;
	FILE		*to, *from;
	int64_t		*mcp, *direct, t;
	char		 item[512], reply[64], stream[128], last[64] = "0";
	char		 env_url[1024], env_q[256];
	int		 in[2], out[2], i, st;
	pid_t		 pid;

	if ((rc = bench_connect(url)) == NULL || rc->err ||
	    pipe(in) == -1 || pipe(out) == -1)
		return (1);
	snprintf(env_url, sizeof env_url, "EXECQ_REDIS_URL=%s", url);
	snprintf(env_q, sizeof env_q, "EXECQ_QUEUE=%s", queue);
	if ((pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		putenv(env_url);
		putenv(env_q);
		execl(execq, "execq", "mcp", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to = fdopen(in[1], "w");
	from = fdopen(out[0], "r");
	fprintf(to, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\","
	    "\"version\":\"1\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}\n");
	fflush(to);
	if (bench_mcp_answer(from, 0) == -1) {
		fprintf(stderr, "execq-bench: execq mcp: no initialize\n");
		return (1);
	}
	mcp = calloc(n, sizeof *mcp);
	direct = calloc(n, sizeof *direct);
	snprintf(reply, sizeof reply, "bench-mcp-%d", (int)getpid());
	snprintf(stream, sizeof stream, KS_QUEUE "%s:" KS_LANE_NORMAL, reply);
	for (i = 0; i < n; i++) {
		t = bench_now();
		fprintf(to, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
		    "\"tools/call\",\"params\":{\"name\":\"exec\","
		    "\"arguments\":{\"command\":\"true\"}}}\n", i + 1);
		fflush(to);
		if (bench_mcp_answer(from, i + 1) == -1) {
			fprintf(stderr, "execq-bench: tools/call %d failed\n",
			    i + 1);
			return (1);
		}
		mcp[i] = bench_now() - t;
		snprintf(item, sizeof item, "{\"id\":\"bm%d-%d\",\"type\":"
		    "\"EXEC\",\"reply_to\":\"%s\",\"args\":{\"command\":"
		    "\"true\"}}", (int)getpid(), i, reply);
		t = bench_now();
		r = redisCommand(rc, "XADD " KS_QUEUE "%s:" KS_LANE_NORMAL
		    " * item %s", queue, item);
		if (r == NULL || r->type == REDIS_REPLY_ERROR)
			return (1);
		freeReplyObject(r);
		r = redisCommand(rc, "XREAD BLOCK 10000 STREAMS %s %s", stream,
		    last);
		if (r == NULL || r->type != REDIS_REPLY_ARRAY)
			return (1);
		direct[i] = bench_now() - t;
		e = r->element[0]->element[1]->element[0];
		if (bench_result(e, last, sizeof last) == -1)
			return (1);
		freeReplyObject(r);
	}
	fclose(to);		/* EOF: the server ends */
	fclose(from);
	waitpid(pid, &st, 0);
	freeReplyObject(redisCommand(rc, "DEL %s", stream));
	redisFree(rc);
	qsort(mcp, n, sizeof *mcp, bench_cmp);
	qsort(direct, n, sizeof *direct, bench_cmp);
	printf("mcp tools/call  p50 %.3f ms  p99 %.3f ms  (the same item sent "
	    "straight: p50 %.3f ms  p99 %.3f ms; extra p50 %+.3f ms; n=%d, "
	    "exec true, one server)\n", mcp[n / 2] / 1e6,
	    mcp[n * 99 / 100] / 1e6, direct[n / 2] / 1e6,
	    direct[n * 99 / 100] / 1e6, (mcp[n / 2] - direct[n / 2]) / 1e6, n);
	free(mcp);
	free(direct);
	return (WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1);
}

int
main(int argc, char **argv)
{
	static struct option	 longopts[] = {
		{ "redis", required_argument, NULL, 'r' },
		{ "queue", required_argument, NULL, 'q' },
		{ "mb", required_argument, NULL, 'm' },
		{ "dir", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "label", required_argument, NULL, 'l' },
		{ "execq", required_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char		*url = NULL, *queue = "exec", *cmd = "true";
	const char		*dir = "/tmp", *label = "execq";
	const char		*execq = "build/execq";
	int			 n = 2000, c = 1, ch, mb = 200;
	pid_t			 pid = 0;

	while ((ch = getopt_long(argc, argv, "n:c:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n': n = atoi(optarg); break;
		case 'c': c = atoi(optarg); break;
		case 'r': url = optarg; break;
		case 'q': queue = optarg; break;
		case 'm': mb = atoi(optarg); break;
		case 'd': dir = optarg; break;
		case 'p': pid = atoi(optarg); break;
		case 'l': label = optarg; break;
		case 'x': execq = optarg; break;
		default:
			printf("usage: execq-bench floor|queue|backlog|confine|"
			    "callback|waiting|throughput|idle|redis|proxy|mcp|"
			    "cluster "
			    "[-n N] [-c C] [--redis URL] [--queue Q] [--label L] "
			    "[--dir D] [--mb M] [--execq PATH] [-- CMD]\n");
			return (ch == 'h' ? 0 : 2);
		}
	}
	if (optind >= argc || n < 1 || c < 1 || c > n)
		return (2);
	if (optind + 1 < argc)
		cmd = argv[optind + 1];
	if (strcmp(argv[optind], "floor") == 0)
		return (bench_floor(n, c, cmd));
	if (strcmp(argv[optind], "confine") == 0)
		return (bench_confine(n, dir));
	if (strcmp(argv[optind], "proxy") == 0)
		return (bench_proxy(n, mb) == 0 ? 0 : 1);
	if (url == NULL)
		return (2);
	if (strcmp(argv[optind], "queue") == 0)
		return (bench_queue(n, c, url, queue, cmd, label));
	if (strcmp(argv[optind], "backlog") == 0)
		return (bench_backlog(n, url, queue, cmd, label));
	if (strcmp(argv[optind], "callback") == 0)
		return (bench_callback(n, url, queue));
	if (strcmp(argv[optind], "waiting") == 0)
		return (bench_waiting(n, url, queue));
	if (strcmp(argv[optind], "throughput") == 0)
		return (bench_throughput(mb, url, queue, dir));
	if (strcmp(argv[optind], "redis") == 0)
		return (bench_redis(url));
	if (strcmp(argv[optind], "mcp") == 0)
		return (bench_mcp(n, url, queue, execq));
	if (strcmp(argv[optind], "cluster") == 0)
		return (bench_cluster(n, url, argv + optind + 1,
		    argc - optind - 1, label));
	if (strcmp(argv[optind], "shell") == 0)
		return (bench_shell(n, url, queue));
	if (strcmp(argv[optind], "idle") == 0 && pid > 0)
		return (bench_idle(n, url, queue, pid));
	return (2);
}
