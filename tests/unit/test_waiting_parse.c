/*
 * Unit tests for worker/waiting.c's pure part: /proc/<pid>/syscall and
 * stat text, what a blocked call waits on, the fds of a poll or select,
 * and the decision over a group's threads. The texts are what Linux
 * 6.x on x86_64 showed for the cases named.
 */

#include <sys/select.h>
#include <sys/syscall.h>

#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "worker/waiting.h"

/* A syscall line for call nr with args, as the kernel prints it. */
static void
line(char *buf, size_t size, long nr, unsigned long long a0,
    unsigned long long a1, unsigned long long a2, unsigned long long a3,
    unsigned long long a4)
{
	snprintf(buf, size, "%ld 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x0 "
	    "0x7ffead7f9078 0x7f2d9bd7c2ad\n", nr, a0, a1, a2, a3, a4);
}

/* The kernel's forms: running, blocked outside a call, in a call. */
static void
test_waiting_call_parse(void **state)
{
	struct waiting_call	c;

	(void)state;
	assert_int_equal(waiting_call_parse("running\n", &c), -1);
	assert_int_equal(waiting_call_parse("", &c), -1);
	assert_int_equal(waiting_call_parse("0 0x0 0x1\n", &c), -1);
	assert_int_equal(waiting_call_parse("-1 0x7ffc 0x7f00\n", &c), 0);
	assert_int_equal(c.nr, -1);
	/* bash's read -p, blocked in read(0, buf, 4096) */
	assert_int_equal(waiting_call_parse("0 0x0 0x5574bc486f40 0x1000 "
	    "0x1000 0x7f2d9be57c68 0x0 0x7ffead7f9078 0x7f2d9bd7c2ad\n", &c),
	    0);
	assert_int_equal(c.nr, 0);
	assert_true(c.arg[0] == 0 && c.arg[1] == 0x5574bc486f40ULL &&
	    c.arg[2] == 0x1000);
	assert_true(c.sp == 0x7ffead7f9078ULL && c.pc == 0x7f2d9bd7c2adULL);
}

/* read on any fd is a read; which fd is the input is /proc's to say. */
static void
test_waiting_kind_read(void **state)
{
	struct waiting_call	c;
	struct waiting_where	w;
	char			buf[256];

	(void)state;
	line(buf, sizeof buf, SYS_read, 0, 0x1000, 1, 0, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_READ);
	assert_int_equal(w.fd, 0);
	line(buf, sizeof buf, SYS_read, 7, 0x1000, 1, 0, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_READ);
	assert_int_equal(w.fd, 7);
	/* sleep, wait4, a socket's recvfrom: not a read of input. */
	line(buf, sizeof buf, SYS_nanosleep, 0x7ffc, 0, 0, 0, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_OTHER);
	line(buf, sizeof buf, SYS_wait4, (unsigned long long)-1, 0x7ffc, 0,
	    0, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_OTHER);
	line(buf, sizeof buf, SYS_recvfrom, 3, 0x7ffc, 100, 0, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_OTHER);
}

/*
 * epoll_pwait, with or without a timeout: its epoll fd, the set is read
 * from fdinfo (waiting_epoll_fds).
 */
static void
test_waiting_kind_epoll(void **state)
{
	struct waiting_call	c;
	struct waiting_where	w;
	char			buf[256];
	int			fds[4];
	const char		*info = "pos:\t0\nflags:\t02000002\n"
				    "mnt_id:\t17\nino:\t1038\n"
				    "tfd:       21 events:       19 data: 15 "
				    "pos:0 ino:3 sdev:1a\n"
				    "tfd:       17 events:       19 data: 11 "
				    "pos:0 ino:40e sdev:10\n"
				    "tfd:       15 events:       19 data: f "
				    "pos:0 ino:d7d5b7 sdev:f\n";

	(void)state;
	line(buf, sizeof buf, SYS_epoll_pwait, 14, 0x7ffd, 0x400, 8095, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_EPOLL);
	assert_int_equal(w.fd, 14);
	line(buf, sizeof buf, SYS_epoll_pwait, 9, 0x7ffd, 0x400,
	    0xffffffff, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_EPOLL);
	assert_int_equal(waiting_epoll_fds(info, fds, 4), 3);
	assert_int_equal(fds[0], 21);
	assert_int_equal(fds[1], 17);
	assert_int_equal(fds[2], 15);
	assert_int_equal(waiting_epoll_fds(info, fds, 2), -1);
	assert_int_equal(waiting_epoll_fds("pos:\t0\n", fds, 4), 0);
}

/* readline's pselect6 counts; with a timeout or a write set it does not. */
static void
test_waiting_kind_select(void **state)
{
	struct waiting_call	c;
	struct waiting_where	w;
	char			buf[256];

	(void)state;
#ifdef __x86_64__
	/* bash -i and python3 -i: pselect6(1, &rfds, NULL, NULL, NULL, ..) */
	assert_int_equal(waiting_call_parse("270 0x1 0x7ffe5e5f4ac0 0x0 0x0 "
	    "0x0 0x7ffe5e5f49f0 0x7ffe5e5f49b0 0x7fd87850eaec\n", &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_SELECT);
	assert_true(w.addr == 0x7ffe5e5f4ac0ULL && w.n == 1);
#endif
	line(buf, sizeof buf, SYS_pselect6, 1, 0x7ffe, 0, 0, 0x7ff0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_OTHER);
	line(buf, sizeof buf, SYS_pselect6, 5, 0x7ffe, 0x7ffd, 0, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_OTHER);
#ifdef SYS_select
	line(buf, sizeof buf, SYS_select, 1, 0x7ffe, 0, 0, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_SELECT);
#endif
}

/* poll without a timeout counts (its set is read later); with one not. */
static void
test_waiting_kind_poll(void **state)
{
	struct waiting_call	c;
	struct waiting_where	w;
	char			buf[256];

	(void)state;
#if defined(SYS_poll) && defined(__x86_64__)
	/* script(1), a relay: poll(fds, 3, -1) */
	assert_int_equal(waiting_call_parse("7 0x7ffc2f9c26a0 0x3 0xffffffff "
	    "0x8 0x12 0x19 0x7ffc2f9c2668 0x7f5671679230\n", &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_POLL);
	assert_true(w.addr == 0x7ffc2f9c26a0ULL && w.n == 3);
	line(buf, sizeof buf, SYS_poll, 0x7ffc, 1, 1500, 0, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_OTHER);
#endif
	line(buf, sizeof buf, SYS_ppoll, 0x7ffc, 1, 0, 0, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_POLL);
	line(buf, sizeof buf, SYS_ppoll, 0x7ffc, 1, 0x7ff0, 0, 0);
	assert_int_equal(waiting_call_parse(buf, &c), 0);
	assert_int_equal(waiting_call_kind(&c, &w), WAITING_OTHER);
}

/* A poll's fds to read; one for writing makes it something else. */
static void
test_waiting_poll_fds(void **state)
{
	struct pollfd	p[3];
	int		fds[4];

	(void)state;
	memset(p, 0, sizeof p);
	p[0].fd = 0;
	p[0].events = POLLIN;
	p[1].fd = -1;			/* ignored by poll */
	p[1].events = POLLOUT;
	p[2].fd = 5;
	p[2].events = POLLIN|POLLPRI;
	assert_int_equal(waiting_poll_fds(p, 3, fds, 4), 2);
	assert_int_equal(fds[0], 0);
	assert_int_equal(fds[1], 5);
	assert_int_equal(waiting_poll_fds(p, 3, fds, 1), -1);
	p[2].events = POLLIN|POLLOUT;
	assert_int_equal(waiting_poll_fds(p, 3, fds, 4), -1);
	p[2].events = 0;
	assert_int_equal(waiting_poll_fds(p, 3, fds, 4), -1);
}

/* A select's read set. */
static void
test_waiting_select_fds(void **state)
{
	fd_set	set;
	int	fds[4];

	(void)state;
	FD_ZERO(&set);
	FD_SET(0, &set);
	assert_int_equal(waiting_select_fds(&set, 1, fds, 4), 1);
	assert_int_equal(fds[0], 0);
	FD_SET(3, &set);
	FD_SET(70, &set);
	assert_int_equal(waiting_select_fds(&set, 71, fds, 4), 3);
	assert_int_equal(fds[2], 70);
	assert_int_equal(waiting_select_fds(&set, 4, fds, 4), 2);
	assert_int_equal(waiting_select_fds(&set, 71, fds, 2), -1);
}

/* stat: a name with ") (" in it; the state, group and session after. */
static void
test_waiting_stat_parse(void **state)
{
	char	st;
	pid_t	g, s;

	(void)state;
	assert_int_equal(waiting_stat_parse("2078 (bash) S 2076 2078 2078 "
	    "34816 2078 4194304 ...", &st, &g, &s), 0);
	assert_int_equal(st, 'S');
	assert_int_equal(g, 2078);
	assert_int_equal(s, 2078);
	assert_int_equal(waiting_stat_parse("9 (a) (b) R) R 1 12 11 0", &st,
	    &g, &s), 0);
	assert_int_equal(st, 'R');
	assert_int_equal(g, 12);
	assert_int_equal(s, 11);
	assert_int_equal(waiting_stat_parse("9 no paren", &st, &g, &s), -1);
	assert_int_equal(waiting_stat_parse("9 (x)", &st, &g, &s), -1);
}

/* The decision: a reader, and nobody at work. */
static void
test_waiting_decide(void **state)
{
	struct waiting_task	t[4];

	(void)state;
	memset(t, 0, sizeof t);
	assert_int_equal(waiting_decide(t, 0), -1);
	/* sh waiting for its child, the child reading: waits. */
	t[0].state = 'S';
	t[1].state = 'S';
	t[1].reads_input = 1;
	assert_int_equal(waiting_decide(t, 2), 1);
	/* A zombie does not count. */
	t[2].state = 'Z';
	assert_int_equal(waiting_decide(t, 3), 1);
	/* A thread at work: not waiting, whoever reads. */
	t[3].state = 'R';
	assert_int_equal(waiting_decide(t, 4), -1);
	t[3].state = 'D';
	assert_int_equal(waiting_decide(t, 4), -1);
	t[3].state = 'T';
	assert_int_equal(waiting_decide(t, 4), -1);
	/* All asleep but none reading (sleep 3, wait4): not waiting. */
	t[1].reads_input = 0;
	t[3].state = 'S';
	assert_int_equal(waiting_decide(t, 4), -1);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_waiting_call_parse),
		cmocka_unit_test(test_waiting_kind_read),
		cmocka_unit_test(test_waiting_kind_select),
		cmocka_unit_test(test_waiting_kind_poll),
		cmocka_unit_test(test_waiting_kind_epoll),
		cmocka_unit_test(test_waiting_poll_fds),
		cmocka_unit_test(test_waiting_select_fds),
		cmocka_unit_test(test_waiting_stat_parse),
		cmocka_unit_test(test_waiting_decide),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
