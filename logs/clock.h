#ifndef EXECQ_CLOCK_H
#define EXECQ_CLOCK_H

/*
 * The clocks, in one place. Monotonic time measures durations and
 * deadlines (it never jumps); wall time is what goes into answers, files
 * and Redis (started_ms, ended_ms, the registry's beat) and is compared
 * with other hosts' only with a tolerance.
 */

#include <stddef.h>
#include <stdint.h>

int64_t	clock_mono_us(void);	/* CLOCK_MONOTONIC, microseconds */
int64_t	clock_mono_ms(void);	/* ... milliseconds */
int64_t	clock_wall_ms(void);	/* CLOCK_REALTIME, ms since the epoch */
/*
 * The wall time as UTC ISO 8601 with milliseconds, 2026-11-26T07:01:02.345Z
 * (24 bytes and the NUL): the time of the diagnostics and the audit log.
 */
#define CLOCK_ISO_LEN	25
void	clock_wall_iso(char *buf, size_t len);

#endif
