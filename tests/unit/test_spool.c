/*
 * Unit tests for queue/spool.c: the record format (round trip, torn and
 * malformed records), and a spool written, partly confirmed, abandoned
 * and adopted in a private temp dir.
 */

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "logs/log.h"
#include "queue/spool.h"

/* What a replay handed over: the first argument of each command. */
struct seen {
	char		*first[16];
	size_t		 lastlen;
	unsigned	 n;
	struct spool_ref refs[16];
};

static void
seen_cb(int argc, const char **argv, const size_t *len,
    const struct spool_ref *ref, void *arg)
{
	struct seen	*s = arg;

	assert_true(argc >= 1);
	assert_true(s->n < 16);
	s->first[s->n] = strndup(argv[0], len[0]);
	s->lastlen = len[argc - 1];
	s->refs[s->n] = *ref;
	s->n++;
}

static void
seen_release(struct seen *s)
{
	unsigned	i;

	for (i = 0; i < s->n; i++)
		free(s->first[i]);
	memset(s, 0, sizeof *s);
}

/* Spool files in dir. */
static int
count_files(const char *dir)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "spool-", 6) == 0)
			n++;
	closedir(d);
	return (n);
}

static void
rm_dir(const char *dir)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[512];

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* Encode then decode gives back every argument, binary ones included. */
static void
test_spool_record_round_trip(void **state)
{
	const char	*argv[3] = { "EVAL", "a\0b", "" };
	size_t		 len[3] = { 4, 3, 0 };
	struct spool_rec r;
	char		*buf;
	size_t		 n;
	ssize_t		 used;

	(void)state;
	n = spool_encode(NULL, 'R', 7, 3, argv, len);
	assert_int_equal(n, 13 + 4 + 4 + 4 + 3 + 4 + 0);
	buf = malloc(n);
	assert_int_equal(spool_encode(buf, 'R', 7, 3, argv, len), n);
	used = spool_decode(buf, n, &r);
	assert_int_equal(used, (ssize_t)n);
	assert_int_equal(r.type, 'R');
	assert_int_equal(r.seq, 7);
	assert_int_equal(r.argc, 3);
	assert_memory_equal(r.argv[0], "EVAL", 4);
	assert_int_equal(r.len[1], 3);
	assert_memory_equal(r.argv[1], "a\0b", 3);
	assert_int_equal(r.len[2], 0);
	spool_rec_release(&r);
	free(buf);
}

/* Every prefix of a record is torn; bad types and counts are refused. */
static void
test_spool_record_torn_and_malformed(void **state)
{
	const char	*argv[2] = { "XADD", "payload" };
	size_t		 len[2] = { 4, 7 };
	struct spool_rec r;
	char		 buf[64];
	size_t		 n, cut;

	(void)state;
	n = spool_encode(buf, 'R', 1, 2, argv, len);
	for (cut = 0; cut < n; cut++)
		assert_int_equal(spool_decode(buf, cut, &r), -1);
	buf[4] = 'X';
	assert_int_equal(spool_decode(buf, n, &r), -1);
	buf[4] = 'D';			/* a done mark has no arguments */
	assert_int_equal(spool_decode(buf, n, &r), -1);
	n = spool_encode(buf, 'R', 1, 2, argv, len);
	buf[9] = (char)200;		/* more arguments than there are */
	assert_int_equal(spool_decode(buf, n, &r), -1);
	n = spool_encode(buf, 'D', 5, 0, NULL, NULL);
	assert_int_equal(spool_decode(buf, n, &r), (ssize_t)n);
	assert_int_equal(r.type, 'D');
	assert_int_equal(r.seq, 5);
	spool_rec_release(&r);
}

/*
 * A worker spools three commands, Redis confirms the second, the worker
 * stops: the next one adopts the file and gets the first and third, in
 * order; when they are done the file is gone, and a third worker finds
 * nothing.
 */
static void
test_spool_adopt_replays_what_is_not_done(void **state)
{
	char		 dir[] = "/tmp/test_spool.XXXXXX";
	const char	*a[2] = { "one", "x" }, *b[2] = { "two", "y" },
			*c[2] = { "three", "zz" };
	size_t		 len1[2] = { 3, 1 }, len2[2] = { 3, 1 },
			 len3[2] = { 5, 2 };
	struct spool_ref r1, r2, r3;
	struct spool	*sp, *sp2, *sp3;
	struct seen	 seen;
	char		*cause = NULL;
	unsigned	 i;

	(void)state;
	memset(&seen, 0, sizeof seen);
	assert_non_null(mkdtemp(dir));
	assert_non_null(sp = spool_open(dir, "w1", NULL, &cause));
	assert_int_equal(spool_append(sp, 2, a, len1, &r1), 0);
	assert_int_equal(spool_append(sp, 2, b, len2, &r2), 0);
	assert_int_equal(spool_append(sp, 2, c, len3, &r3), 0);
	assert_int_equal(spool_pending(sp), 3);
	spool_done(sp, &r2);
	assert_int_equal(spool_pending(sp), 2);

	/* While w1 holds it, nobody adopts it. */
	assert_non_null(sp2 = spool_open(dir, "w2", NULL, &cause));
	assert_int_equal(spool_adopt(sp2, seen_cb, &seen), 0);
	spool_close(sp);
	assert_int_equal(count_files(dir), 1);

	assert_int_equal(spool_adopt(sp2, seen_cb, &seen), 2);
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.first[0], "one");
	assert_string_equal(seen.first[1], "three");
	assert_int_equal(seen.lastlen, 2);
	assert_int_equal(spool_pending(sp2), 2);
	for (i = 0; i < seen.n; i++)
		spool_done(sp2, &seen.refs[i]);
	assert_int_equal(spool_pending(sp2), 0);
	assert_int_equal(count_files(dir), 0);
	seen_release(&seen);

	assert_non_null(sp3 = spool_open(dir, "w3", NULL, &cause));
	assert_int_equal(spool_adopt(sp3, seen_cb, &seen), 0);
	spool_close(sp2);
	spool_close(sp3);
	rm_dir(dir);
}

/* A file that is partly done, adopted, partly done again, then adopted. */
static void
test_spool_adopt_twice(void **state)
{
	char		 dir[] = "/tmp/test_spool.XXXXXX";
	const char	*a[1] = { "one" }, *b[1] = { "two" };
	size_t		 l[1] = { 3 };
	struct spool_ref r1, r2;
	struct spool	*sp;
	struct seen	 seen;
	char		*cause = NULL;

	(void)state;
	memset(&seen, 0, sizeof seen);
	assert_non_null(mkdtemp(dir));
	assert_non_null(sp = spool_open(dir, "w1", NULL, &cause));
	assert_int_equal(spool_append(sp, 1, a, l, &r1), 0);
	assert_int_equal(spool_append(sp, 1, b, l, &r2), 0);
	spool_close(sp);

	assert_non_null(sp = spool_open(dir, "w2", NULL, &cause));
	assert_int_equal(spool_adopt(sp, seen_cb, &seen), 2);
	spool_done(sp, &seen.refs[0]);		/* "one" arrived */
	spool_close(sp);			/* "two" did not */
	seen_release(&seen);

	assert_non_null(sp = spool_open(dir, "w3", NULL, &cause));
	assert_int_equal(spool_adopt(sp, seen_cb, &seen), 1);
	assert_string_equal(seen.first[0], "two");
	spool_done(sp, &seen.refs[0]);
	assert_int_equal(count_files(dir), 0);
	seen_release(&seen);
	spool_close(sp);
	rm_dir(dir);
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_spool_record_round_trip),
		cmocka_unit_test(test_spool_record_torn_and_malformed),
		cmocka_unit_test(test_spool_adopt_replays_what_is_not_done),
		cmocka_unit_test(test_spool_adopt_twice),
	};

	log_init("test_spool", LOG_LEVEL_QUIET);
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
