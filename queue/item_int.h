#ifndef EXECQ_ITEM_INT_H
#define EXECQ_ITEM_INT_H

/*
 * The item module's insides (queue/item.h is its interface), shared by
 * its files and nothing else:
 *
 *   item.c          EXEC items: parsing, checks, the limits below
 *   item_process.c  PROCESS items: actions and their arguments, base64
 *   item_json.c     answers and other JSON the worker writes, UTF-8
 *                   sanitizing, approval decisions
 *   item_retry.c    args.retry and the delays, and their decisions
 *   item_field.c    what they share, below them all: errors (item_fail)
 *                   and the readers of optional members, declared here
 *
 * item.c calls item_process.c for a PROCESS item's args, and item_json.c
 * calls its base64 encoder; nothing calls item.c back, and item_field.c
 * calls none of them.
 */

#include <stddef.h>

#include <jansson.h>

#include "queue/item.h"

#define ITEM_ID_RULE		"1 to 128 of [A-Za-z0-9_.:-], not starting " \
			    "with '.'"
#define ITEM_TIMEOUT_MAX_S	604800		/* a week */
#define ITEM_ENV_MAX		256		/* entries */
#define ITEM_ENV_NAME_MAX	256
#define ITEM_SIZE_MAX		1000		/* PTY rows, cols */
#define ITEM_RETRIES_MAX	10
#define ITEM_TOKENS_MAX		1024		/* list: the caller's tokens */
#define ITEM_BRIEF_MAX		64		/* quoted values in messages */

/*
 * The kernel's limits on what execve(2) takes: one string (the command
 * given to sh -c, or one NAME=value) at most MAX_ARG_STRLEN (32 pages)
 * with its NUL, and all of them together at most a quarter of the stack
 * limit; ITEM_ARGS_MAX keeps well inside that of an 8 MiB stack.
 */
#define ITEM_ARG_STRLEN_MAX	(131072 - 1)
#define ITEM_ARGS_MAX		(1024 * 1024)

/* item_field.c: sets err's code and message (printf); returns -1. */
int	item_fail(struct item_error *err, enum errcode code, const char *fmt,
	    ...)
	    __attribute__((format(printf, 3, 4)));
/* The same, with the offending value shown briefly after it. */
int	item_fail_got(struct item_error *err, enum errcode code, json_t *v,
	    const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
/* 1 if the JSON string v holds a NUL. */
int	item_has_nul(json_t *v);
/* An optional string member: 1 with *out, 0 if absent, or -1 (err). */
int	item_get_string(json_t *obj, const char *key, const char *name,
	    const char **out, struct item_error *err);
/* An optional boolean member: 0, or -1 (err). */
int	item_get_bool(json_t *args, const char *key, int *out,
	    struct item_error *err);
/* An optional integer member in [min, max]: 0, or -1 (err). */
int	item_get_int(json_t *args, const char *key, long min, long max,
	    long *out, struct item_error *err);
/* item_retry.c: args.retry, delay_ms, not_before_ms: 0, or -1 (err). */
int	item_parse_schedule(json_t *args, struct item *it,
	    struct item_error *err);
/* item_process.c: the args of a PROCESS item into it: 0, or -1 (err). */
int	item_parse_process(json_t *args, struct item *it,
	    struct item_error *err);

#endif
