/*
 * The metrics store and the Prometheus text it writes, the status
 * renderings (/healthz, the fleet entry, the gauges) and the side door's
 * address parser: pure code, checked against text built here.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>

#include "worker/http.h"
#include "worker/metrics.h"
#include "worker/status.h"

/* What writer(arg) writes, as a string (the caller frees it). */
static char *
render(void (*writer)(FILE *, const void *), const void *arg)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f;

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	writer(f, arg);
	assert_int_equal(fclose(f), 0);
	return (buf);
}

static void
write_metrics(FILE *f, const void *m)
{
	metrics_write(m, f);
}

/* The value of one exact sample line, or -1 if it is not there. */
static double
sample(const char *text, const char *series)
{
	const char	*p = text;
	size_t		 n = strlen(series);

	while ((p = strstr(p, series)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return (strtod(p + n + 1, NULL));
		p += n;
	}
	return (-1);
}

/* Counters add up per label set; empty families still say HELP/TYPE. */
static void
test_metrics_counters(void **state)
{
	struct metrics	*m = metrics_create();
	char		*t;

	(void)state;
	metrics_add(m, METRICS_ANSWERED, 1, "EXEC", "ok");
	metrics_add(m, METRICS_ANSWERED, 2, "EXEC", "ok");
	metrics_add(m, METRICS_ANSWERED, 1, "EXEC", "bad_env");
	metrics_add(m, METRICS_CALLBACKS, 4, "ignored", "too");
	assert_int_equal(metrics_value(m, METRICS_ANSWERED, "EXEC", "ok"), 3);
	assert_int_equal(metrics_value(m, METRICS_ANSWERED, "EXEC", "nope"),
	    0);
	t = render(write_metrics, m);
	assert_true(sample(t, "execq_items_answered_total{type=\"EXEC\","
	    "code=\"ok\"}") == 3);
	assert_true(sample(t, "execq_items_answered_total{type=\"EXEC\","
	    "code=\"bad_env\"}") == 1);
	assert_true(sample(t, "execq_callbacks_total") == 4);
	assert_non_null(strstr(t, "# TYPE execq_items_received_total "
	    "counter\n"));
	assert_non_null(strstr(t, "# HELP execq_approvals_total "));
	free(t);
	metrics_free(m);
}

/* Histogram buckets are cumulative, +Inf is the count, sum adds up. */
static void
test_metrics_histogram(void **state)
{
	struct metrics	*m = metrics_create();
	char		*t;

	(void)state;
	metrics_observe(m, METRICS_SPAWN, 0.0004);
	metrics_observe(m, METRICS_SPAWN, 0.003);
	metrics_observe(m, METRICS_SPAWN, 0.003);
	metrics_observe(m, METRICS_SPAWN, 120);		/* past every bound */
	metrics_observe(m, METRICS_SPAWN, -1);		/* a clock step: 0 */
	t = render(write_metrics, m);
	assert_true(sample(t, "execq_spawn_latency_seconds_bucket{le=\"0.0005\"}")
	    == 2);
	assert_true(sample(t, "execq_spawn_latency_seconds_bucket{le=\"0.0025\"}")
	    == 2);
	assert_true(sample(t, "execq_spawn_latency_seconds_bucket{le=\"0.005\"}")
	    == 4);
	assert_true(sample(t, "execq_spawn_latency_seconds_bucket{le=\"60\"}")
	    == 4);
	assert_true(sample(t, "execq_spawn_latency_seconds_bucket{le=\"+Inf\"}")
	    == 5);
	assert_true(sample(t, "execq_spawn_latency_seconds_count") == 5);
	assert_true(sample(t, "execq_spawn_latency_seconds_sum") > 120.006 -
	    1e-9 && sample(t, "execq_spawn_latency_seconds_sum") < 120.0064 +
	    1e-9);
	assert_true(sample(t, "execq_answer_latency_seconds_count") == 0);
	assert_non_null(strstr(t, "# TYPE execq_spawn_latency_seconds "
	    "histogram\n"));
	free(t);
	metrics_free(m);
}

/* Label values are escaped; past the series cap, counts go to "other". */
static void
test_metrics_escape_and_cap(void **state)
{
	struct metrics	*m = metrics_create();
	char		 name[32], *t;
	int		 i;

	(void)state;
	metrics_add(m, METRICS_SESSIONS_ENDED, 1, "a\"b\\c\nd", NULL);
	for (i = 0; i < METRICS_SERIES_MAX + 10; i++) {
		snprintf(name, sizeof name, "s%d", i);
		metrics_add(m, METRICS_RECEIVED, 1, name, NULL);
	}
	t = render(write_metrics, m);
	assert_true(sample(t, "execq_sessions_ended_total{status="
	    "\"a\\\"b\\\\c\\nd\"}") == 1);
	assert_true(sample(t, "execq_items_received_total{type=\"s0\"}") == 1);
	assert_true(sample(t, "execq_items_received_total{type=\"other\"}") ==
	    11);
	assert_true(sample(t, "execq_items_received_total{type=\"s300\"}") ==
	    -1);
	free(t);
	metrics_free(m);
}

/* A status as the worker fills it. */
static void
fill(struct worker_status *st)
{
	memset(st, 0, sizeof *st);
	st->consumer = "w\"1";
	st->queue = "exec";
	st->host = "h";
	st->version = "9.9";
	st->pid = 42;
	st->started_ms = 1000;
	st->now_ms = 5000;
	st->slots_total = 4;
	st->slots_used = 5;		/* sessions can overfill */
	st->redis_up = 1;
	st->logs_ok = 1;
	st->tier = "confined";
	st->layers[0].name = "landlock";
	st->layers[0].ok = 1;
	st->layers[1].name = "seccomp";
	st->nlayers = 2;
}

static void
write_gauges(FILE *f, const void *st)
{
	status_write_metrics(st, f);
}

/* Gauges: slots free never below 0, layers one by one, labels escaped. */
static void
test_status_gauges(void **state)
{
	struct worker_status	 st;
	char			*t;

	(void)state;
	fill(&st);
	t = render(write_gauges, &st);
	assert_true(sample(t, "execq_slots_free") == 0);
	assert_true(sample(t, "execq_slots") == 4);
	assert_true(sample(t, "execq_confinement_layer{layer=\"landlock\"}") ==
	    1);
	assert_true(sample(t, "execq_confinement_layer{layer=\"seccomp\"}") ==
	    0);
	assert_true(sample(t, "execq_worker_info{version=\"9.9\",queue=\"exec\","
	    "consumer=\"w\\\"1\",tier=\"confined\"}") == 1);
	assert_true(sample(t, "process_start_time_seconds") == 1);
	assert_non_null(strstr(t, "# TYPE execq_redis_reconnects_total "
	    "counter\n"));
	free(t);
}

/* /healthz: ok, or unavailable with every reason. */
static void
test_status_health(void **state)
{
	struct worker_status	 st;
	char			*buf = NULL;
	size_t			 len = 0;
	FILE			*f;
	json_t			*o;

	(void)state;
	fill(&st);
	f = open_memstream(&buf, &len);
	assert_int_equal(status_write_health(&st, f), 1);
	fclose(f);
	o = json_loads(buf, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(o, "status")),
	    "ok");
	assert_int_equal(json_array_size(json_object_get(o, "reasons")), 0);
	json_decref(o);
	free(buf);
	st.redis_up = 0;
	st.logs_ok = 0;
	st.stopping = 1;
	f = open_memstream(&buf, &len);
	assert_int_equal(status_write_health(&st, f), 0);
	fclose(f);
	o = json_loads(buf, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(o, "status")),
	    "unavailable");
	assert_string_equal(json_string_value(json_array_get(json_object_get(o,
	    "reasons"), 0)), "redis");
	assert_string_equal(json_string_value(json_array_get(json_object_get(o,
	    "reasons"), 1)), "logs");
	assert_string_equal(json_string_value(json_array_get(json_object_get(o,
	    "reasons"), 2)), "stopping");
	json_decref(o);
	free(buf);
}

/* The fleet entry has what execq workers shows. */
static void
test_status_fleet_entry(void **state)
{
	struct worker_status	 st;
	json_t			*o;

	(void)state;
	fill(&st);
	o = status_to_json(&st);
	assert_int_equal(json_integer_value(json_object_get(o, "pid")), 42);
	assert_int_equal(json_integer_value(json_object_get(o, "beat_ms")),
	    5000);
	assert_string_equal(json_string_value(json_object_get(o, "state")),
	    "running");
	assert_true(json_is_true(json_object_get(json_object_get(o,
	    "confinement"), "landlock")));
	assert_true(json_is_false(json_object_get(json_object_get(o,
	    "confinement"), "seccomp")));
	json_decref(o);
}

/* HOST:PORT and [V6]:PORT; everything else is refused with a reason. */
static void
test_http_parse_addr(void **state)
{
	static const char *const bad[] = { "", "9464", ":9464", "host:",
	    "host:65536", "host:-1", "host:+1", "host:12x", "::1:9464",
	    "[::1]9464", "[::1", "a:b:c", NULL };
	char		*host, *cause;
	unsigned	 port;
	size_t		 i;

	(void)state;
	assert_int_equal(http_parse_addr("127.0.0.1:9464", &host, &port,
	    &cause), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 9464);
	free(host);
	assert_int_equal(http_parse_addr("[::1]:0", &host, &port, &cause), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 0);
	free(host);
	for (i = 0; bad[i] != NULL; i++) {
		host = NULL;
		if (http_parse_addr(bad[i], &host, &port, &cause) != -1)
			fail_msg("'%s' was accepted", bad[i]);
		assert_null(host);
		assert_non_null(strstr(cause, "HOST:PORT"));
		free(cause);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_counters),
		cmocka_unit_test(test_metrics_histogram),
		cmocka_unit_test(test_metrics_escape_and_cap),
		cmocka_unit_test(test_status_gauges),
		cmocka_unit_test(test_status_health),
		cmocka_unit_test(test_status_fleet_entry),
		cmocka_unit_test(test_http_parse_addr),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
