/* execq-worker: the options, the event loop, the exit code; nothing else. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "logs/log.h"
#include "worker/config.h"
#include "worker/holder.h"
#include "worker/worker.h"

/* execq-worker: config, event loop, exit code; nothing else. */
int
main(int argc, char **argv, char **envp)
{
	struct config		 cfg;
	struct event_base	*base;
	struct event_config	*ecfg;
	struct worker		*w;
	char			*cause;
	int			 rc;

	log_init("execq-worker", LOG_LEVEL_INFO);
	rc = config_load(&cfg, argc, argv, envp, &cause);
	if (rc == 1)
		return (0);
	if (rc == -1) {
		fprintf(stderr, "execq-worker: %s\n"
		    "Try 'execq-worker --help'.\n", cause);
		free(cause);
		return (2);
	}
	log_init("execq-worker", cfg.verbose ? LOG_LEVEL_DEBUG :
	    LOG_LEVEL_INFO);
	if (cfg.check_confinement) {
		rc = worker_check_confinement(&cfg, stdout);
		config_release(&cfg);
		return (rc);
	}
	if (cfg.log_file[0] != '\0' && log_open(cfg.log_file) != 0) {
		fprintf(stderr, "execq-worker: log file %s: %s\n", cfg.log_file,
		    strerror(errno));
		config_release(&cfg);
		return (1);
	}
	/* The process started becomes the holder; its child, the worker. */
	if (cfg.hold_sessions && getenv("EXECQ_HOLDER") == NULL) {
		config_release(&cfg);
		return (holder_main(argv));
	}
	signal(SIGPIPE, SIG_IGN);
	/* Coalesce epoll_ctl calls: events come and go on every command. */
	if ((ecfg = event_config_new()) == NULL)
		fatal("cannot create the event loop");
	event_config_set_flag(ecfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	base = event_base_new_with_config(ecfg);
	event_config_free(ecfg);
	if (base == NULL)
		fatal("cannot create the event loop");
	if ((w = worker_create(base, &cfg)) == NULL) {
		event_base_free(base);
		config_release(&cfg);
		return (1);
	}
	event_base_dispatch(base);
	worker_free(w);
	event_base_free(base);
	config_release(&cfg);
	log_info("stopped");
	return (0);
}
