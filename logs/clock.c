/* The clocks: monotonic for durations, wall for what others read. */

#include <stdio.h>
#include <time.h>

#include "logs/clock.h"

int64_t
clock_mono_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

int64_t
clock_mono_ms(void)
{
	return (clock_mono_us() / 1000);
}

int64_t
clock_wall_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

void
clock_wall_iso(char *buf, size_t len)
{
	struct timespec	ts;
	struct tm	tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}
