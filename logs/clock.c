/* The clocks: monotonic for durations, wall for what others read. */

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
