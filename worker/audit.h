#ifndef EXECQ_AUDIT_H
#define EXECQ_AUDIT_H

/*
 * The audit log, <log_dir>/audit.log: one JSON line per policy decision
 * (docs/PROTOCOL.md, "Audit log"). Lines are appended with one write(2)
 * on an O_APPEND descriptor, so workers sharing a log dir do not tear
 * each other's lines.
 */

struct audit;

/* What happened to one command; NULL members are left out. */
struct audit_event {
	const char	*event;		/* run, held, approved, rejected,
					   refused, expired, cancelled */
	const char	*id;		/* the item id */
	const char	*request;	/* the approval request id */
	const char	*command, *cwd;
	const char	*risk, *rule, *reason;
	const char	*tier;
	const char	*by;		/* approver */
	const char	*queue, *worker;
};

/*
 * Opens (creates) <state_dir>/audit.log, never through a link; NULL and
 * errno.
 */
struct audit	*audit_open(const char *state_dir);
void		 audit_close(struct audit *);		/* NULL ok */
/*
 * Opens the file again (after logrotate moved it away); on failure the
 * old descriptor is kept: -1 and errno.
 */
int		 audit_reopen(struct audit *);
/*
 * Appends one line: 0, or -1 and errno when it could not be written (a
 * short write counts as one), logged once until a line goes in again.
 * A NULL audit takes nothing: 0.
 */
int		 audit_write(struct audit *, const struct audit_event *);
/* The errno of the last line that could not be written; 0 after one was. */
int		 audit_error(const struct audit *);
/* Its path, for a probe off the loop (borrowed). */
const char	*audit_path(const struct audit *);
/*
 * A probe found the file writable again (opened for appending, in a
 * dir that takes writes): the error is forgotten until the next line.
 */
void		 audit_writable(struct audit *);

#endif
