#ifndef EXECQ_SCRIPTS_H
#define EXECQ_SCRIPTS_H

/*
 * The Lua scripts queue/scripts.c holds, for EVAL: the worker's queue
 * (queue_int.h includes this) and the client (queue/client.c) send them;
 * scripts.c says what each takes and returns.
 */

extern const char queue_fetch_lua[];
extern const char queue_forward_lua[];
extern const char queue_claim_lua[];
extern const char queue_release_lua[];
extern const char queue_answer_lua[];
extern const char queue_lost_lua[];
extern const char queue_promote_lua[];
extern const char queue_requeue_lua[];
extern const char queue_cancel_lua[];
extern const char queue_limit_lua[];
extern const char queue_limit_renew_lua[];
extern const char queue_status_lua[];
extern const char queue_deliver_lua[];
extern const char queue_fence_lua[];

#endif
