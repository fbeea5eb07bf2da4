#ifndef EXECQ_CLOCK_H
#define EXECQ_CLOCK_H

/*
 * The clocks, in one place. Monotonic time measures durations and
 * deadlines (it never jumps); wall time is what goes into answers, files
 * and Redis (started_ms, ended_ms, the registry's beat) and is compared
 * with other hosts' only with a tolerance.
 */

#include <stdint.h>

int64_t	clock_mono_us(void);	/* CLOCK_MONOTONIC, microseconds */
int64_t	clock_mono_ms(void);	/* ... milliseconds */
int64_t	clock_wall_ms(void);	/* CLOCK_REALTIME, ms since the epoch */

#endif
