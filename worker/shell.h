#ifndef EXECQ_SHELL_H
#define EXECQ_SHELL_H

/*
 * A shell session's commands (args.shell): one persistent shell (bash,
 * with job control, reading its commands from a pipe) that keeps its cwd
 * and variables from one command to the next. exec writes a command in,
 * wrapped so that its end and exit code come back as a marker line the
 * shell prints with a secret of this command's (its output cannot forge
 * it); interrupt sends SIGINT to the command's process group; a command
 * past its timeout is interrupted (then killed after the grace) and the
 * shell goes on. Owned by its session (worker/session.c), which feeds it
 * the session's output; it answers exec through a callback of the
 * sessions_answer_cb shape.
 */

#include <stddef.h>
#include <stdint.h>

#include "logs/errcode.h"

struct event_base;
struct exec;
struct shell;

typedef void (*shell_answer_cb)(enum errcode, const char *json, size_t len,
    void *arg);

/*
 * The command a shell session starts with (static): bash when the host
 * has it, else the worker's shell, reading commands from stdin.
 */
const char	*shell_command(const char *worker_shell);
/* The program it runs (static or worker_shell): its commands' dialect. */
const char	*shell_program(const char *worker_shell);
/*
 * A shell for the running session ex; its set-up is written in now, then
 * the session's own command (args.command: cd, exports...), unmarked.
 * command NULL: a shell an earlier worker set up (worker/holder.h), idle.
 */
struct shell	*shell_create(struct event_base *, struct exec *ex,
		    const char *session_id, size_t output_cap,
		    unsigned default_timeout_ms, unsigned kill_grace_ms,
		    const char *command);
/* The shell process ended: a command under way is answered, so. */
void		 shell_ended(struct shell *);
/* Frees it; a command under way is not answered (the worker ends). */
void		 shell_free(struct shell *);		/* NULL ok */
/* The session's output (fd 1 or 2), in order. */
void		 shell_output(struct shell *, int fd, const char *buf,
		    size_t len);
/* 1 while a command runs. */
int		 shell_busy(const struct shell *);
/*
 * Runs command (timeout_ms 0: the default) and answers item_id's exec
 * with a PROCESS_RESULT (exit_code, stdout, stderr, truncated,
 * timed_out, duration_ms, cwd, log_from, log_to) when it ends; 0, or -1
 * with *code and *cause (allocated): busy, or the shell gone.
 */
int		 shell_exec(struct shell *, const char *item_id,
		    const char *command, long timeout_ms, shell_answer_cb,
		    void *arg, enum errcode *code, char **cause);
/* SIGINT to the running command's process groups: how many. */
int		 shell_interrupt(struct shell *);
/* The shell's cwd now (allocated), or NULL. */
char		*shell_cwd(const struct shell *);

#endif
