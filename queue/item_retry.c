/*
 * args.retry, args.delay_ms and args.not_before_ms: read, and the pure
 * decisions they lead to (does an outcome count, how long to wait before
 * the next attempt). docs/PROTOCOL.md section 4 is the wire format.
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "logs/xmalloc.h"
#include "queue/item.h"
#include "queue/item_int.h"

/* The outcome words of args.retry.on, by bit. */
static const struct {
	const char	*name;
	unsigned	 bit;
} item_retry_words[] = {
	{ "exit",		ITEM_RETRY_EXIT },
	{ "timeout",		ITEM_RETRY_TIMEOUT },
	{ "signal",		ITEM_RETRY_SIGNAL },
	{ "spawn_failed",	ITEM_RETRY_SPAWN },
};

/* One element of on: a word or an exit code. */
static int
item_retry_on_one(json_t *v, struct item_retry *r, struct item_error *err)
{
	size_t	i;

	if (json_is_integer(v)) {
		if (json_integer_value(v) < 1 || json_integer_value(v) > 255)
			return (item_fail_got(err, ERR_BAD_ARGS, v, "an exit "
			    "code in args.retry.on is 1 to 255"));
		if (r->ncodes == ITEM_RETRY_CODES_MAX)
			return (item_fail(err, ERR_BAD_ARGS, "args.retry.on "
			    "lists at most %d exit codes",
			    ITEM_RETRY_CODES_MAX));
		r->codes[r->ncodes++] = (int)json_integer_value(v);
		return (0);
	}
	for (i = 0; json_is_string(v) && i < sizeof item_retry_words /
	    sizeof item_retry_words[0]; i++)
		if (strcmp(json_string_value(v), item_retry_words[i].name) ==
		    0) {
			r->on |= item_retry_words[i].bit;
			return (0);
		}
	return (item_fail_got(err, ERR_BAD_ARGS, v, "args.retry.on takes "
	    "\"exit\", \"timeout\", \"signal\", \"spawn_failed\" and exit "
	    "codes"));
}

/* A positive number of ms in [min, max] from member key, or def. */
static int
item_retry_ms(json_t *o, const char *key, long def, long min, long max,
    long *out, struct item_error *err)
{
	json_t	*v = json_object_get(o, key);

	*out = def;
	if (v == NULL || json_is_null(v))
		return (0);
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		return (item_fail_got(err, ERR_BAD_ARGS, v, "args.retry.%s "
		    "must be an integer from %ld to %ld", key, min, max));
	*out = (long)json_integer_value(v);
	return (0);
}

struct item_retry *
item_retry_parse(json_t *v, struct item_error *err)
{
	struct item_retry	*r;
	json_t			*on, *e, *f;
	size_t			 i;
	long			 n;
	const char		*key;

	if (!json_is_object(v)) {
		item_fail_got(err, ERR_BAD_ARGS, v, "args.retry must be an "
		    "object ({\"max_attempts\": 3, \"on\": [\"exit\"]}) or "
		    "false");
		return (NULL);
	}
	json_object_foreach(v, key, e) {
		if (strcmp(key, "on") != 0 && strcmp(key, "max_attempts") &&
		    strcmp(key, "initial_ms") && strcmp(key, "factor") &&
		    strcmp(key, "max_ms")) {
			item_fail(err, ERR_BAD_ARGS, "args.retry has no member "
			    "\"%.*s\" (on, max_attempts, initial_ms, factor, "
			    "max_ms)", ITEM_BRIEF_MAX, key);
			return (NULL);
		}
	}
	r = xcalloc(1, sizeof *r);
	on = json_object_get(v, "on");
	if (on == NULL || json_is_null(on))
		r->on = ITEM_RETRY_EXIT | ITEM_RETRY_TIMEOUT |
		    ITEM_RETRY_SIGNAL | ITEM_RETRY_SPAWN;
	else if (json_is_array(on) && json_array_size(on) > 0) {
		json_array_foreach(on, i, e)
			if (item_retry_on_one(e, r, err) == -1)
				goto fail;
	} else if (!json_is_array(on)) {
		if (item_retry_on_one(on, r, err) == -1)
			goto fail;
	} else {
		item_fail(err, ERR_BAD_ARGS, "args.retry.on is empty");
		goto fail;
	}
	if (item_retry_ms(v, "max_attempts", ITEM_RETRY_ATTEMPTS_DEF, 1,
	    ITEM_RETRY_ATTEMPTS_MAX, &n, err) == -1 ||
	    item_retry_ms(v, "initial_ms", ITEM_RETRY_INITIAL_DEF, 1,
	    ITEM_RETRY_WAIT_MAX, &r->initial_ms, err) == -1 ||
	    item_retry_ms(v, "max_ms", ITEM_RETRY_MAX_DEF, 1,
	    ITEM_RETRY_WAIT_MAX, &r->max_ms, err) == -1)
		goto fail;
	r->max_attempts = (unsigned)n;
	r->factor = 2;
	f = json_object_get(v, "factor");
	if (f != NULL && !json_is_null(f)) {
		if (!json_is_number(f) || !(json_number_value(f) >= 1) ||
		    json_number_value(f) > 10) {
			item_fail_got(err, ERR_BAD_ARGS, f, "args.retry.factor "
			    "must be a number from 1 to 10");
			goto fail;
		}
		r->factor = json_number_value(f);
	}
	if (r->max_ms < r->initial_ms)
		r->max_ms = r->initial_ms;
	return (r);
fail:
	free(r);
	return (NULL);
}

int
item_parse_schedule(json_t *args, struct item *it, struct item_error *err)
{
	json_t	*v = json_object_get(args, "retry");
	long	 n;

	if (v != NULL && json_is_false(v))
		it->no_retry = 1;
	else if (v != NULL && !json_is_null(v) &&
	    (it->retry = item_retry_parse(v, err)) == NULL)
		return (-1);
	if (it->retry != NULL && it->background)
		return (item_fail(err, ERR_BAD_ARGS, "args.retry is for "
		    "foreground commands: a session is its agent's to "
		    "start again"));
	if (item_get_int(args, "delay_ms", 0, ITEM_DELAY_MAX, &n, err) == -1)
		return (-1);
	it->delay_ms = n;
	v = json_object_get(args, "not_before_ms");
	if (v != NULL && !json_is_null(v)) {
		if (it->delay_ms > 0)
			return (item_fail(err, ERR_BAD_ARGS, "args.delay_ms "
			    "and args.not_before_ms: give one"));
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > ITEM_NOT_BEFORE_MAX)
			return (item_fail_got(err, ERR_BAD_ARGS, v,
			    "args.not_before_ms must be ms since the epoch, "
			    "before 2100"));
		it->not_before_ms = (int64_t)json_integer_value(v);
	}
	return (0);
}

int
item_retry_counts(const struct item_retry *r, int spawn_failed,
    int timed_out, int signal, int exit_code)
{
	size_t	i;

	if (spawn_failed)
		return ((r->on & ITEM_RETRY_SPAWN) != 0);
	if (timed_out)
		return ((r->on & ITEM_RETRY_TIMEOUT) != 0);
	if (signal != 0)
		return ((r->on & ITEM_RETRY_SIGNAL) != 0);
	if (exit_code == 0)
		return (0);
	if (r->on & ITEM_RETRY_EXIT)
		return (1);
	for (i = 0; i < r->ncodes; i++)
		if (r->codes[i] == exit_code)
			return (1);
	return (0);
}

long
item_retry_delay(const struct item_retry *r, unsigned attempt,
    uint32_t rnd)
{
	double	cap = (double)r->initial_ms;
	unsigned	i;

	for (i = 1; i < attempt && cap < (double)r->max_ms; i++)
		cap *= r->factor;
	if (cap > (double)r->max_ms)
		cap = (double)r->max_ms;
	/* Full jitter: anywhere from 0 to the cap, so a crowd spreads out. */
	return ((long)(rnd % ((uint32_t)cap + 1)));
}

struct item_retry *
item_retry_dup(const struct item_retry *r)
{
	struct item_retry	*d;

	if (r == NULL)
		return (NULL);
	d = xmalloc(sizeof *d);
	memcpy(d, r, sizeof *d);
	return (d);
}
