/*
 * The Lua scripts the queue runs with EVAL, every one execq has: no other
 * file holds Lua. Key and field names come from queue/keyspace.h. Beside
 * each script, its KEYS and ARGV in order: the C that builds its EVAL
 * appends its arguments in that order (queue/outbox.c, queue/store.c).
 */

#include "queue/item.h"
#include "queue/keyspace.h"
#include "queue/queue_int.h"

/*
 * The idempotency key, as a Lua function both scripts below define:
 * claim(claim key, answer key, consumer, ttl, redelivered, retries,
 * entry, life). Returns {1} run, {2, answer}, {3} running, {4} lost. The
 * claim's value is "<consumer>|<runs>|<entry>@<life>" ("-" once
 * released: the id may run again; a claim made before lives were
 * recorded has no "@<life>"). life is the worker process's own mark, new
 * at every start: a claim resent after a lost reply is recognised as
 * ours (same consumer, entry and life) and runs; one of the same consumer
 * and entry but another life was made by a previous run of a worker of
 * this name, dead since (two live workers never share a name), so it
 * counts as taken over from a dead worker: answered worker_lost, or run
 * again if retries allow. The same holds for an entry this life ran
 * already and sees again (its answer lost in a failover that kept the
 * claim): the worker claims it with the mark "<life>!<n>" (queue_claim),
 * another life's as far as this function can tell, so the run counts.
 * retries nil (the fetch script, which does not
 * read args) leaves that case undecided: {3}, and the worker claims again
 * with the item's retries.
 *
 * forget(claim key, answer key): an entry a dead letter was requeued as
 * (its field "requeue", and its id marked in q:<queue>:requeued by the
 * requeue script: a field alone, which an agent can write in its own
 * lane, does nothing) runs again as a first attempt: the id's claim and
 * stored answer go, unless a run of the id holds the claim now (then the
 * claim says so, {3}). The mark is used once.
 */
#define QUEUE_CLAIM_FN \
    "local function claim(ck, ak, c0, ttl, redelivered, retries, entry, " \
    " life) " \
    " local tail = '|' .. entry .. '@' .. life " \
    " local c = redis.call('GET', ck) " \
    " if not c or c == '-' then " \
    "  redis.call('SET', ck, c0 .. '|1' .. tail, 'EX', ttl) " \
    "  return {1} end " \
    " local who, n, e, l = " \
    "  string.match(c, '^(.+)|(%d+)|([^|@]*)@?([^|@]*)$') " \
    " if who == c0 and e == entry then " \
    "  if l == life then return {1} end " \
    "  redelivered = '1' end " \
    " local a = redis.call('GET', ak) " \
    " if a then return {2, a} end " \
    " if redelivered ~= '1' or not retries then return {3} end " \
    " n = tonumber(n) or 1 " \
    " if n <= tonumber(retries) then " \
    "  redis.call('SET', ck, c0 .. '|' .. (n + 1) .. tail, 'EX', ttl) " \
    "  return {1} end " \
    " return {4} end " \
    "local function forget(ck, ak) " \
    " local c = redis.call('GET', ck) " \
    " if not c or c == '-' or redis.call('EXISTS', ak) == 1 then " \
    "  redis.call('DEL', ck, ak) end end "

/*
 * The name of an execq:* key the script makes itself, as the C names
 * those it passes (cluster_tag): in cluster mode KEYS[1] carries the
 * queue's hash tag, and so must every key the script touches (one slot);
 * on one Redis there is no tag and K changes nothing.
 */
#define QUEUE_K_FN \
    "local T = string.match(KEYS[1], '^[^{]*({[^}]*})') " \
    "local function K(k) if not T then return k end " \
    " return 'execq:' .. T .. ':' .. string.sub(k, 7) end "

/*
 * New entries in lane order: up to 64 from each of the first ARGV[4]
 * (control) lanes, then up to ARGV[3] from the work lanes, high first:
 * exact count, exact order. ARGV[5] is the id read from the work lanes:
 * ">" for new entries, "0" for this consumer's own pending ones (after
 * Redis refused claims: those entries are ours but not being worked on).
 * A field over ARGV[6] bytes stays in Redis: only its first 64 KiB come
 * back, with its size as the entry's fourth element.
 *
 * An EXEC item of a work lane with a well-formed id is claimed as it is
 * read (ARGV[7]: the answer ttl), unless the lane is an agent's
 * (ARGV[9]<agent>.<lane>) and the id is not in the agent's own namespace
 * ("<agent>."): the worker refuses that one. The fifth element is the claim's
 * outcome (0: not claimed), the sixth the stored answer or "". One round
 * trip takes an item; the worker releases the claim of an item it then
 * refuses or cannot take now. Its XREADGROUP would let the claim's SET
 * through when Redis is out of memory (a script may go on writing once
 * it wrote), so the script carries the flags line, and Redis refuses it
 * whole then, as it refuses a plain XREADGROUP.
 *   KEYS: the lanes in order, control lanes first
 *   ARGV: 1 group, 2 consumer, 3 count, 4 control lanes, 5 id (">" or
 *         "0"), 6 max item bytes, 7 answer ttl, 8 life, 9 the lanes'
 *         prefix, q:<queue>:
 */
const char queue_fetch_lua[] =
    "#!lua\n"	/* flagged: refused whole while Redis is out of memory */
    QUEUE_K_FN
    QUEUE_CLAIM_FN
    "local function take(id, f, k) "
    " local body, requeued for j = 1, #f - 1, 2 do "
    "  if f[j] == 'item' then body = f[j + 1] end "
    "  if f[j] == 'requeue' then requeued = true end end "
    " if not body then return 0, '', '' end "
    " local ok, it = pcall(cjson.decode, body) "
    " if not ok or type(it) ~= 'table' or it.type ~= 'EXEC' or "
    "  type(it.id) ~= 'string' or #it.id > " ITEM_ID_MAX_S " or "
    "  not string.find(it.id, '^[%w_:%-][%w_.:%-]*$') then "
    "  return 0, '', '' end "
    " local o = string.match(string.sub(k, #ARGV[9] + 1), '^([^.]+)%.') "
    " if o and string.sub(it.id, 1, #o + 1) ~= o .. '.' then "
    "  return 0, '', '' end "
    " if requeued and redis.call('HDEL', ARGV[9] .. '" KS_REQUEUED "', "
    "  it.id) == 1 then "
    "  forget(K('" KS_CLAIM "' .. it.id), K('" KS_ANSWER "' .. it.id)) end "
    " local r = claim(K('" KS_CLAIM "' .. it.id), K('" KS_ANSWER "' .. it.id), "
    "  ARGV[2], ARGV[7], '0', nil, id, ARGV[8]) "
    " return r[1], r[2] or '', it.id end "
    "local out = {} local want = tonumber(ARGV[3]) "
    "local nctl = tonumber(ARGV[4]) "
    "for i, k in ipairs(KEYS) do "
    " local n, id = want, ARGV[5] "
    " if i <= nctl then n, id = 64, '>' end "
    " if n > 0 then "
    "  local r = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], "
    "   'COUNT', n, 'STREAMS', k, id) "
    "  if r then for _, e in ipairs(r[1][2]) do "
    "   local f, size, c, a, cid = e[2] or {}, 0, 0, '', '' "
    "   for j = 2, #f, 2 do if #f[j] > tonumber(ARGV[6]) then "
    "    size = #f[j] f[j] = string.sub(f[j], 1, 65536) end end "
    "   if i > nctl and size == 0 then c, a, cid = take(e[1], f, k) end "
    "   out[#out + 1] = {k, e[1], f, size, c, a, cid} "
    "   if i > nctl then want = want - 1 end end end "
    " end "
    "end return out";

/*
 * Hands a PROCESS item to the worker that owns its session: the one its
 * session hash names, else the one that ran the id, as its claim still
 * records it ("<consumer>|<runs>|<entry>", kept answer_ttl_s after the
 * answer): a foreground item, whose log is on that worker's host, has no
 * session hash. Returns 1 forwarded (and acknowledged), 0 not owned by
 * another worker, -1 owned by a worker that is gone.
 *   KEYS: 1 the session hash, 2 the stream the item came from, 3 the
 *         id's claim
 *   ARGV: 1 me (consumer), 2 group, 3 entry, 4 item, 5 the queue's
 *         lanes' prefix (q:<queue>:), 6 the agent whose item it is ("":
 *         a shared lane's), kept with it
 * The inbox is not capped: it holds every agent's items, and a cap would
 * let one agent's flood push out another's before the owner read them.
 * It holds only what is not answered yet (the answer deletes the entry),
 * and gets nothing once its worker's lease is gone.
 */
const char queue_forward_lua[] =
    QUEUE_K_FN
    "local owner = redis.call('HGET', KEYS[1], '" KS_SF_WORKER "') "
    "if not owner then local c = redis.call('GET', KEYS[3]) "
    " if c then owner = string.match(c, '^(.+)|%d+|[^|]*$') end end "
    "if not owner or owner == ARGV[1] then return 0 end "
    "if redis.call('EXISTS', K('" KS_WORKER "' .. owner)) == 0 then "
    " return -1 end "
    "if redis.call('XACK', KEYS[2], ARGV[2], ARGV[3]) == 0 then return 1 end "
    "redis.call('XDEL', KEYS[2], ARGV[3]) "
    "local inbox = ARGV[5] .. '" KS_LANE_CTL ":' .. owner "
    "if ARGV[6] ~= '' then redis.call('XADD', inbox, '*', 'item', ARGV[4], "
    " 'owner', ARGV[6]) "
    "else redis.call('XADD', inbox, '*', 'item', ARGV[4]) end "
    "return 1";

/*
 * The idempotency key (QUEUE_CLAIM_FN) of an item not claimed as it was
 * read (a blocking read, a takeover).
 *   KEYS: 1 claim, 2 answer, 3 the queue's requeued marks
 *   ARGV: 1 consumer, 2 ttl, 3 redelivered ("1" or "0"), 4 retries,
 *         5 entry, 6 life, 7 "1": a requeued dead letter (forget, if
 *         the requeue script marked its id)
 */
const char queue_claim_lua[] =
    QUEUE_K_FN
    QUEUE_CLAIM_FN
    "if ARGV[7] == '1' and redis.call('HDEL', KEYS[3], "
    " string.sub(KEYS[1], #K('" KS_CLAIM "') + 1)) == 1 then "
    " forget(KEYS[1], KEYS[2]) end "
    "return claim(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], "
    " ARGV[5], ARGV[6])";

/*
 * Lets go of a claim made as the entry was read, for an item the worker
 * cannot take now: it is taken again later, and runs then. Only our
 * claim of that entry, made in this life, is released (a mark
 * "<life>!<n>", a claim of an entry this life ran before, is this life's).
 *   KEYS: 1 claim
 *   ARGV: 1 consumer, 2 "<entry>@<life>", 3 ttl
 */
const char queue_release_lua[] =
    "local c = redis.call('GET', KEYS[1]) "
    "if c then c = string.gsub(c, '!%d+$', '') end "
    "if c and string.sub(c, 1, #ARGV[1] + 1) == ARGV[1] .. '|' and "
    " string.sub(c, -#ARGV[2] - 1) == '|' .. ARGV[2] then "
    " redis.call('SET', KEYS[1], '-', 'EX', ARGV[3]) return 1 end "
    "return 0";

/*
 * An answer, stored and acknowledged atomically.
 *   KEYS: 1 reply stream, 2 answer key (for a callback: the session
 *         hash), 3 source stream, 4 claim key
 *   ARGV: 1 maxlen, 2 json, 3 store (1: keep it as the item's answer,
 *         2: release the claim so the id may run again, 3: a session's
 *         callback, 0: none of these), 4 ttl, 5 entry ("": none),
 *         6 group, 7 what to keep as the answer when it is not the json
 *         sent ("": the json; a session's token is sent once, never kept)
 * The acknowledged entry is deleted from its
 * work stream, so work streams hold only what is waiting or running.
 * An entry that is acknowledged already (this answer resent after a lost
 * reply, or the entry answered by a worker that took it over: either way
 * the item's claim or answer is there) gets no second answer: exactly one
 * per entry. An entry that is gone with no claim and no answer was lost by
 * Redis (a restart without persistence): the answer is still published.
 * The XACK may fail only with NOGROUP (the group went with a Redis
 * restart: the entry is gone); any other error (READONLY: this node is a
 * replica now) is the script's, before it wrote anything, so the answer
 * stays in the outbox and goes to the primary.
 * A session's callback goes out once: the first of the worker and the
 * lost-session sweep marks the session hash and the other stays silent.
 * A reply stream nobody reads any more expires ttl after its last answer.
 *
 * ARGV[8] "dead": the entry's item (and owner: the fields a worker
 * reads; any other a writer added is left, so no entry can make the
 * script unpack thousands of values, and none can pose as the letter's
 * own "id", "lane" or "answer") goes to
 * the dead letters with its id, lane and this answer as kept (ARGV[7]:
 * a session token is sent once, never kept). "sched": it waits
 * in the delayed set instead (KEYS[6] scored by when it is due, KEYS[7]
 * id -> {s = lane, a = attempt, f = fields}), due at ARGV[9] (ms, Redis's
 * clock) or ARGV[10] ms from now, to come back as attempt ARGV[11]; its
 * claim becomes "@sched" (a copy sent meanwhile is a duplicate, and the
 * promote script lets go of it), and the answer's "due_ms":-1 says when.
 * Both act only as the entry is acknowledged: a resent answer does
 * neither again.
 *   KEYS: 5 dead letters, 6 delayed set, 7 delayed items
 *   ARGV: 8 "", "dead" or "sched", 9 due (ms) or "", 10 delay (ms),
 *         11 attempt, 12 the item id ("": none)
 * In cluster mode (queue_req_pend, queue/outbox.c) KEYS[1] is the
 * queue's pending replies: the reply goes there under the mark ARGV[13],
 * with its stream ARGV[14], and queue/shard.c delivers it.
 */
#define QUEUE_ANSWER_AFTER \
    "local function after(stream, entry) " \
    " local e = redis.call('XRANGE', stream, entry, entry) " \
    " local f, keep = e[1] and e[1][2] or {}, {} " \
    " for j = 1, #f - 1, 2 do " \
    "  if (f[j] == 'item' or f[j] == 'owner') and #keep < 4 then " \
    "  keep[#keep + 1] = f[j] keep[#keep + 1] = f[j + 1] end end " \
    " if ARGV[8] == 'dead' then " \
    "  local kept = ARGV[2] " \
    "  if ARGV[7] and ARGV[7] ~= '' then kept = ARGV[7] end " \
    "  redis.call('XADD', KEYS[5], '*', 'id', ARGV[12], 'lane', stream, " \
    "   'answer', kept, unpack(keep)) return ARGV[2] end " \
    " local t = redis.call('TIME') " \
    " local due = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) " \
    "  + tonumber(ARGV[10]) " \
    " if ARGV[9] ~= '' then due = tonumber(ARGV[9]) end " \
    " redis.call('ZADD', KEYS[6], due, ARGV[12]) " \
    " redis.call('HSET', KEYS[7], ARGV[12], cjson.encode({s = stream, " \
    "  a = ARGV[11], f = keep})) " \
    " redis.call('SET', KEYS[4], '@sched', 'PX', " \
    "  math.max(due - tonumber(t[1]) * 1000, 0) + ARGV[4] * 1000) " \
    " return (string.gsub(ARGV[2], '\"due_ms\":%-1', " \
    "  '\"due_ms\":' .. string.format('%d', due), 1)) end "

const char queue_answer_lua[] =
    QUEUE_ANSWER_AFTER
    "if ARGV[5] ~= '' then "
    " local n = redis.pcall('XACK', KEYS[3], ARGV[6], ARGV[5]) "
    " if type(n) == 'table' and n.err then "
    "  if string.sub(n.err, 1, 7) ~= 'NOGROUP' then "
    "   return redis.error_reply(n.err) end "
    "  n = 0 end "
    " if n == 1 and ARGV[8] ~= '' then ARGV[2] = after(KEYS[3], ARGV[5]) end "
    " if n == 1 then redis.call('XDEL', KEYS[3], ARGV[5]) "
    " elseif ARGV[3] ~= '3' and (redis.call('EXISTS', KEYS[4]) == 1 or "
    "  redis.call('EXISTS', KEYS[2]) == 1) then return 0 end "
    "end "
    "if ARGV[3] == '3' then "
    " if redis.call('HSETNX', KEYS[2], '" KS_SF_CALLBACK "', '1') == 0 then "
    "  return 0 end "
    " if redis.call('TTL', KEYS[2]) < 0 then "
    "  redis.call('EXPIRE', KEYS[2], ARGV[4]) end "
    "end "
    "if ARGV[13] then "
    " redis.call('HSET', KEYS[1], ARGV[13], ARGV[14] .. '\\n' .. ARGV[2]) "
    "else "
    " redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'item', "
    "  ARGV[2]) "
    " redis.call('EXPIRE', KEYS[1], ARGV[4]) end "
    "if ARGV[3] == '1' then local keep = ARGV[2] "
    " if ARGV[7] and ARGV[7] ~= '' then keep = ARGV[7] end "
    " redis.call('SET', KEYS[2], keep, 'EX', ARGV[4]) "
    " redis.call('EXPIRE', KEYS[4], ARGV[4]) "
    "elseif ARGV[3] == '2' then redis.call('SET', KEYS[4], '-', 'EX', "
    " ARGV[4]) end "
    "return 1";

/*
 * Items of the delayed set that are due go back to their lanes, at most
 * ARGV[2] of them, with their attempt (an entry field), in one step:
 * whichever worker's beat runs it, each moves once. Their claims are let
 * go of, so they run. Returns {how many moved, how many are still
 * delayed}: none, and the worker looks less often.
 *   KEYS: 1 delayed set, 2 delayed items
 *   ARGV: 1 the claim keys' prefix, 2 count, 3 ttl
 */
const char queue_promote_lua[] =
    "local t = redis.call('TIME') "
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
    "local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, "
    " 'LIMIT', 0, tonumber(ARGV[2])) "
    "for _, id in ipairs(ids) do "
    " local p = redis.call('HGET', KEYS[2], id) "
    " local ok, d = pcall(cjson.decode, p or '') "
    " if ok and type(d) == 'table' and type(d.s) == 'string' then "
    "  local f = d.f or {} "
    "  f[#f + 1] = 'attempt' f[#f + 1] = tostring(d.a or 1) "
    "  if redis.call('GET', ARGV[1] .. id) == '@sched' then "
    "   redis.call('SET', ARGV[1] .. id, '-', 'EX', ARGV[3]) end "
    "  redis.call('XADD', d.s, '*', unpack(f)) end "
    " redis.call('ZREM', KEYS[1], id) redis.call('HDEL', KEYS[2], id) "
    "end return {#ids, redis.call('ZCARD', KEYS[1])}";

/*
 * The queue's limits, for one item about to start: a place among the
 * ARGV[2] running at once (0: no such limit; the places of items whose
 * lease ran out, their worker dead, go first) and a token of the bucket
 * that refills ARGV[3] a second up to ARGV[3], or up to one when the
 * rate is less (0.5: a start every two seconds; a bucket of half a token
 * would never hold one) (0: none). Returns 0 (the
 * item holds a place till ARGV[4] ms from now, renewed, and took a
 * token), or the ms to wait before asking again.
 *   KEYS: 1 the running set, 2 the bucket
 *   ARGV: 1 the item id, 2 max running, 3 max per second, 4 lease (ms)
 */
const char queue_limit_lua[] =
    "local t = redis.call('TIME') "
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
    "local maxr, rate = tonumber(ARGV[2]), tonumber(ARGV[3]) "
    "local cap = math.max(rate, 1) "
    "if maxr > 0 then "
    " redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) "
    " if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false and "
    "  redis.call('ZCARD', KEYS[1]) >= maxr then "
    "  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES') "
    "  return math.min(250, math.max(10, tonumber(first[2]) - now)) end "
    "end "
    "if rate > 0 then "
    " local b = redis.call('HMGET', KEYS[2], 'tokens', 'ts') "
    " local tok, ts = tonumber(b[1]) or cap, tonumber(b[2]) or now "
    " tok = math.min(cap, tok + (now - ts) * rate / 1000) "
    " if tok < 1 then "
    "  redis.call('HSET', KEYS[2], 'tokens', tostring(tok), 'ts', now) "
    "  return math.max(1, math.ceil((1 - tok) * 1000 / rate)) end "
    " redis.call('HSET', KEYS[2], 'tokens', tostring(tok - 1), 'ts', now) "
    " redis.call('PEXPIRE', KEYS[2], 60000) "
    "end "
    "if maxr > 0 then "
    " redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1]) end "
    "return 0";

/*
 * A running item's place among the limit's: its lease renewed, if it is
 * still there.
 *   KEYS: 1 the running set
 *   ARGV: 1 the item id, 2 lease (ms)
 */
const char queue_limit_renew_lua[] =
    "local t = redis.call('TIME') "
    "return redis.call('ZADD', KEYS[1], 'XX', tonumber(t[1]) * 1000 + "
    " math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2]), ARGV[1])";

/*
 * Cancels an item before it runs (queue_cancel says what each outcome
 * means): {1, the delayed entry}, {2}, {3, the worker of its session
 * hash or ""}, {4}. The mark is a claim no worker makes ("cancelled|0|")
 * with the ERROR as its answer: the claim function answers with it.
 *   KEYS: 1 delayed set, 2 delayed items, 3 claim, 4 answer, 5 the
 *         session hash
 *   ARGV: 1 the item id, 2 ttl, 3 the ERROR cancelled
 */
const char queue_cancel_lua[] =
    "if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then "
    " local p = redis.call('HGET', KEYS[2], ARGV[1]) or '' "
    " redis.call('HDEL', KEYS[2], ARGV[1]) return {1, p} end "
    "local c = redis.call('GET', KEYS[3]) "
    "if c and c ~= '-' then "
    " if redis.call('EXISTS', KEYS[4]) == 1 then return {2} end "
    " return {3, redis.call('HGET', KEYS[5], '" KS_SF_WORKER "') or ''} end "
    "redis.call('SET', KEYS[3], 'cancelled|0|-@-', 'EX', ARGV[2]) "
    "redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[2]) "
    "return {4}";

/*
 * A dead letter sent again (execq dead requeue): its item (the entry's
 * fields but id, lane and answer) goes back to its lane with a field
 * "requeue" (the letter's id), which makes the worker forget the id's
 * claim and answer as it takes it (forget, above), and the letter goes.
 * Its id is marked in KEYS[2] (kept 30 days), which only workers and
 * operators can write: the worker forgets only a marked id's claim.
 * Returns 1; 0: no such letter; -1: it holds no item to send again. Only
 * q:* keys: an operator's ACL allows it, and gives no claim or answer.
 *   KEYS: 1 the dead letters, 2 the requeued marks
 *   ARGV: 1 the letter's entry id
 */
const char queue_requeue_lua[] =
    "local e = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) "
    "if not e[1] then return 0 end "
    "local f, lane, keep, id = e[1][2], nil, {}, '' "
    "for j = 1, #f - 1, 2 do "
    " if f[j] == 'id' and id == '' then id = f[j + 1] end "
    " if f[j] == 'lane' then lane = lane or f[j + 1] "
    " elseif f[j] ~= 'answer' and f[j] ~= 'id' and f[j] ~= 'requeue' then "
    "  keep[#keep + 1] = f[j] keep[#keep + 1] = f[j + 1] end end "
    "if not lane or #keep == 0 then return -1 end "
    "keep[#keep + 1] = 'requeue' keep[#keep + 1] = ARGV[1] "
    "if id ~= '' then redis.call('HSET', KEYS[2], id, ARGV[1]) "
    " redis.call('EXPIRE', KEYS[2], 2592000) end "
    "redis.call('XADD', lane, '*', unpack(keep)) "
    "redis.call('XDEL', KEYS[1], ARGV[1]) "
    "return 1";

/*
 * Sessions whose worker is gone (no heartbeat for claim_idle) end as
 * "lost", with their one EXEC_CALLBACK, sent by whichever worker sees it
 * first (the script is atomic). The callback's template comes from
 * item_lost_template(): queue/item_json.c writes the wire format, the
 * script only fills in what Redis knows.
 *   KEYS: 1 the running set
 *   ARGV: 1 now (ms), 2 ttl, 3 the callback's template
 */
const char queue_lost_lua[] =
    QUEUE_K_FN
    "local n = 0 "
    "for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do "
    " local h = K('" KS_SESSION "' .. id) "
    " local st = redis.call('HMGET', h, '" KS_SF_STATUS "', "
    "'" KS_SF_WORKER "', '" KS_SF_REPLY_TO "', "
    "  '" KS_SF_LOG_PATH "', '" KS_SF_CALLBACK "') "
    " if st[1] ~= 'running' or st[5] then redis.call('SREM', KEYS[1], id) "
    " elseif st[2] and redis.call('EXISTS', K('" KS_WORKER "' .. st[2])) == 0 "
    " then "
    "  redis.call('SREM', KEYS[1], id) "
    "  redis.call('HSET', h, '" KS_SF_STATUS "', 'lost', "
    "'" KS_SF_ENDED "', ARGV[1], "
    "   '" KS_SF_CALLBACK "', '1') "
    "  redis.call('EXPIRE', h, ARGV[2]) "
    "  local cb = ARGV[3] "
    "  cb = string.gsub(cb, '" ITEM_LOST_ID "', "
    "   function() return cjson.encode(id) end) "
    "  cb = string.gsub(cb, '" ITEM_LOST_LOG "', "
    "   function() return cjson.encode(st[4] or '') end) "
    "  cb = string.gsub(cb, '" ITEM_LOST_WORKER "', "
    "   function() return cjson.encode(st[2]) end) "
    "  local rq = st[3] or 'replies' "
    "  if T then redis.call('HSET', K('" KS_REPLIES "'), 'c:' .. id, "
    "   '" KS_QUEUE "{' .. rq .. '}:" KS_LANE_HIGH "\\n' .. cb) "
    "  else redis.call('XADD', '" KS_QUEUE "' .. rq .. ':" KS_LANE_HIGH "', "
    "   'MAXLEN', '~', 10000, '*', 'item', cb) end "
    "  n = n + 1 "
    " end "
    "end return n";

/*
 * The fleet registry: this worker's status (JSON) in the hash
 * execq:workers, its beat time in the sorted set execq:workers:beat, and
 * entries not heard of for ARGV[4] ms removed. Every time is Redis's
 * (TIME), never a worker's: a worker whose clock is off by days neither
 * removes the others nor looks dead itself. ARGV[3], the worker's clock,
 * only measures how far off it is. Returns { removed, Redis's time less
 * ARGV[3] (ms) }.
 *   KEYS: 1 the hash, 2 the set
 *   ARGV: 1 consumer, 2 status, 3 the worker's clock (ms), 4 how long a
 *         silent worker's entry stays (ms)
 */
const char queue_status_lua[] =
    "local t = redis.call('TIME') "
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
    "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) "
    "redis.call('ZADD', KEYS[2], now, ARGV[1]) "
    "local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', "
    " '(' .. (now - tonumber(ARGV[4]))) "
    "for _, c in ipairs(old) do "
    " redis.call('HDEL', KEYS[1], c) redis.call('ZREM', KEYS[2], c) "
    "end return { #old, now - (tonumber(ARGV[3]) or now) }";

/*
 * The fence check of a session this worker runs, after its lease had
 * lapsed: the session's serial when another worker declared it lost
 * meanwhile (its callback went out), else 0.
 *   KEYS: 1 the session hash
 *   ARGV: 1 the session's serial
 */
const char queue_fence_lua[] =
    "if redis.call('HGET', KEYS[1], '" KS_SF_STATUS "') == 'lost' then "
    "return tonumber(ARGV[1]) end return 0";

/*
 * A reply of another shard's queue, from the pending replies
 * (queue/shard.c), added once: the first delivery leaves its mark
 * beside the stream, and any later one (the sweep after a crash, another
 * worker's) finds it and adds nothing. Returns 1 added, 0 had it.
 *   KEYS: 1 the reply stream, 2 its mark, q:{<queue>}:sent:<mark>
 *   ARGV: 1 maxlen, 2 json, 3 ttl (s)
 */
const char queue_deliver_lua[] =
    "if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[3]) then "
    " return 0 end "
    "redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'item', ARGV[2]) "
    "redis.call('EXPIRE', KEYS[1], ARGV[3]) "
    "return 1";
