/* Unit tests for worker/metrics.c's Redis memory budget: parse, rate, warn. */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "worker/metrics.h"

#define MB	(1024ULL * 1024)
#define DAY	86400

/* An excerpt of Redis 7.0's INFO memory, as it comes. */
static const char info_text[] =
    "# Memory\r\n"
    "used_memory:1048576\r\n"
    "used_memory_human:1.00M\r\n"
    "used_memory_rss:9000000\r\n"
    "used_memory_peak:2000000\r\n"
    "maxmemory:104857600\r\n"
    "maxmemory_human:100.00M\r\n"
    "maxmemory_policy:noeviction\r\n";

static void
test_redismem_parse(void **state)
{
	unsigned long long	used = 0, max = 0;

	(void)state;
	assert_int_equal(metrics_redis_mem_parse(info_text, &used, &max), 0);
	assert_int_equal(used, 1048576);	/* not used_memory_rss */
	assert_int_equal(max, 104857600);	/* not maxmemory_human */
	assert_int_equal(metrics_redis_mem_parse("# Memory\r\n"
	    "used_memory_rss:5\r\nmaxmemory:0\r\n", &used, &max), -1);
	assert_int_equal(metrics_redis_mem_parse("used_memory:5\r\n",
	    &used, &max), -1);
	assert_int_equal(metrics_redis_mem_parse("used_memory:x\r\n"
	    "maxmemory:0\r\n", &used, &max), -1);
	assert_int_equal(metrics_redis_mem_parse("", &used, &max), -1);
}

/* A steady growth: the rate is found, the time left follows. */
static void
test_redismem_rate_and_eta(void **state)
{
	struct metrics_redis_mem	rm;

	(void)state;
	memset(&rm, 0, sizeof rm);
	/* 1 MB/s toward 1000 MB: far beyond a 60 s horizon. */
	assert_int_equal(metrics_redis_mem_update(&rm, 0, 100 * MB,
	    1000 * MB, 60), 0);
	assert_int_equal(rm.rated, 0);
	assert_int_equal(rm.eta_s, -1);		/* one sample: no rate */
	assert_int_equal(metrics_redis_mem_update(&rm, 10000, 110 * MB,
	    1000 * MB, 60), 0);
	assert_true(rm.rated);
	assert_true(rm.rate > MB - 1 && rm.rate < MB + 1);
	assert_int_equal(rm.eta_s, 890);
	/* Shrinking: never full. */
	assert_int_equal(metrics_redis_mem_update(&rm, 20000, 50 * MB,
	    1000 * MB, 60), 0);
	assert_true(rm.rate < 0);
	assert_int_equal(rm.eta_s, -1);
}

/* Warned once when within the horizon, again only after it passed. */
static void
test_redismem_warns_once(void **state)
{
	struct metrics_redis_mem	rm;
	unsigned long long		used = 100 * MB;
	long long			t = 0;
	int				warnings = 0, i;
	char				msg[512];

	(void)state;
	memset(&rm, 0, sizeof rm);
	/* 10 MB each 10 s toward 1000 MB: 900 s left, inside a day. */
	for (i = 0; i < 20; i++, t += 10000, used += 10 * MB)
		warnings += metrics_redis_mem_update(&rm, t, used, 1000 * MB,
		    DAY);
	assert_int_equal(warnings, 1);
	assert_true(rm.warned);
	metrics_redis_mem_warning(&rm, DAY, msg, sizeof msg);
	assert_non_null(strstr(msg, "answer_ttl_s 86400"));
	assert_non_null(strstr(msg, "maxmemory"));
	/* Answers expire, memory falls: the danger is over. */
	for (i = 0; i < 20; i++, t += 10000, used -= 5 * MB)
		warnings += metrics_redis_mem_update(&rm, t, used, 1000 * MB,
		    DAY);
	assert_int_equal(warnings, 1);
	assert_false(rm.warned);
	/* It grows again: a second warning. */
	for (i = 0; i < 20; i++, t += 10000, used += 10 * MB)
		warnings += metrics_redis_mem_update(&rm, t, used, 1000 * MB,
		    DAY);
	assert_int_equal(warnings, 2);
}

/* No maxmemory: never full, never a warning; full already: 0 s. */
static void
test_redismem_no_limit_and_full(void **state)
{
	struct metrics_redis_mem	rm;
	int				i, warnings = 0;

	(void)state;
	memset(&rm, 0, sizeof rm);
	for (i = 0; i < 10; i++)
		warnings += metrics_redis_mem_update(&rm, i * 10000LL,
		    (unsigned long long)(i + 1) * 100 * MB, 0, DAY);
	assert_int_equal(warnings, 0);
	assert_int_equal(rm.eta_s, -1);
	memset(&rm, 0, sizeof rm);
	assert_int_equal(metrics_redis_mem_update(&rm, 0, 100 * MB, 100 * MB,
	    DAY), 1);
	assert_int_equal(rm.eta_s, 0);
	/* Two samples at the same instant: no division by zero. */
	assert_int_equal(metrics_redis_mem_update(&rm, 0, 100 * MB, 100 * MB,
	    DAY), 0);
	assert_false(rm.rated);
}

/* The gauges appear in /metrics once there are samples. */
static void
test_redismem_gauges(void **state)
{
	struct metrics			*m;
	struct metrics_redis_mem	*rm;
	char				*text = NULL;
	size_t				 len = 0;
	FILE				*f;

	(void)state;
	m = metrics_create();
	rm = metrics_redis_mem(m);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	metrics_write(m, f);
	fflush(f);
	assert_null(strstr(text, "execq_redis_used_memory_bytes"));
	metrics_redis_mem_update(rm, 0, 100 * MB, 1000 * MB, DAY);
	metrics_redis_mem_update(rm, 10000, 110 * MB, 1000 * MB, DAY);
	rewind(f);
	metrics_write(m, f);
	fclose(f);
	assert_non_null(strstr(text, "\nexecq_redis_used_memory_bytes "
	    "115343360\n"));
	assert_non_null(strstr(text, "\nexecq_redis_maxmemory_bytes "
	    "1048576000\n"));
	assert_non_null(strstr(text, "\nexecq_redis_memory_full_eta_seconds "
	    "890\n"));
	assert_non_null(strstr(text, "# TYPE "
	    "execq_redis_memory_growth_bytes_per_second gauge\n"));
	free(text);
	metrics_free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redismem_parse),
		cmocka_unit_test(test_redismem_rate_and_eta),
		cmocka_unit_test(test_redismem_warns_once),
		cmocka_unit_test(test_redismem_no_limit_and_full),
		cmocka_unit_test(test_redismem_gauges),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
