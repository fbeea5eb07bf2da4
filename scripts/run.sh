#!/usr/bin/env bash
# make run: a private redis-server on .tmp/run/redis.sock and a worker with
# execution enabled on the demo workspace .tmp/run/workspace, in the
# foreground, with its metrics on http://127.0.0.1:9464 (the next free
# port if that one is taken). Ctrl-C stops both. build/execq finds this
# Redis by itself when run in this directory or below it.
#
# Redis lets nobody in without a password: its users are the lines of
# docs/acl/execq.acl (worker, agent, operator; the default user is off),
# each with a password made once and kept in .tmp/run/redis-<user>.pass
# (mode 0600; the aclfile .tmp/run/users.acl holds their SHA-256 only).
# The worker logs in as worker; build/execq as agent, or as operator for
# what reads everything or decides (execq --help).
#
# scripts/run.sh --redis-only: only that Redis, left running (scripts/
# doccheck sets its world up so).
set -eu
top=$(pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
run="$top/.tmp/run"
build=${BUILD:-build}
mkdir -p "$run/workspace/sub/dir"
sock="$run/redis.sock"
started_redis=0
# The users' passwords, made once; the aclfile, made every time.
(
	umask 077
	sed_args=(-e '/^#/d')
	for user in worker agent operator; do
		pass="$run/redis-$user.pass"
		if [ ! -s "$pass" ]; then
			od -An -tx1 -N24 /dev/urandom | tr -d ' \n' > "$pass"
			echo >> "$pass"
		fi
		hash=$(head -n1 "$pass" | tr -d '\n' | sha256sum | cut -c1-64)
		upper=$(echo "$user" | tr a-z A-Z)
		sed_args+=(-e "s/>${upper}_PASSWORD/#$hash/")
	done
	sed "${sed_args[@]}" "$here/docs/acl/execq.acl" > "$run/users.acl"
)
# What answers on the socket: PONG (no password: a make run of before the
# ACL users), NOAUTH (ours), or nothing.
answer=$(redis-cli -s "$sock" ping 2>&1 || true)
case "$answer" in
PONG*)
	echo "a Redis without a password answers on $sock (an older make run):" \
	    "stop it (redis-cli -s $sock shutdown nosave) and run this again" >&2
	exit 1 ;;
NOAUTH*) ;;
*)
	rm -f "$sock"
	redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 \
	    --aclfile "$run/users.acl" \
	    --dir "$run" --save '' --appendonly no --daemonize yes \
	    --pidfile "$run/redis.pid" --logfile "$run/redis.log"
	i=0
	until redis-cli -s "$sock" ping 2>&1 | grep -q NOAUTH; do
		i=$((i + 1))
		[ $i -gt 100 ] && { echo "redis-server did not start; see $run/redis.log" >&2; exit 1; }
		sleep 0.05
	done
	started_redis=1 ;;
esac
[ "${1:-}" = --redis-only ] && exit 0
stop() {
	if [ "$started_redis" = 1 ] && [ -f "$run/redis.pid" ]; then
		kill "$(cat "$run/redis.pid")" 2>/dev/null || true
	fi
}
trap stop EXIT
trap 'exit 130' INT TERM
# The first port from 9464 that nothing listens on.
port=9464
while [ $port -lt 9564 ] && (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do
	port=$((port + 1))
done
cat <<MSG

  execq is running: redis on $sock, worker below (Ctrl-C stops both).
  Workspace: $run/workspace    Logs: $top/.tmp/exec/
  Metrics: http://127.0.0.1:$port/metrics    Health: http://127.0.0.1:$port/healthz

  From a second terminal, in $top:

    $build/execq run -- echo hello
    $build/execq run -- sh -c 'echo oops >&2; exit 3'; echo "exit=\$?"
    $build/execq run --timeout 2 -- sleep 60; echo "exit=\$?"
    $build/execq run --cwd sub/dir --env K=V -- sh -c 'pwd; echo \$K'
    $build/execq submit --raw '{not json'

  A session (see README.md, "Sessions"):

    S=\$($build/execq spawn --pty -- sh -c 'while read -r l; do echo "you said: \$l"; done')
    $build/execq keys \$S hello Enter; $build/execq logs \$S
    $build/execq kill \$S; $build/execq callbacks --count 1 --from-start

  The workers on this Redis: $build/execq workers

  Redis wants a password: its users are worker, agent and operator, with
  their passwords in $run/redis-<user>.pass
  (execq finds them here). From another directory:
    EXECQ_REDIS_URL=unix://$sock EXECQ_REDIS_USER=agent
    EXECQ_REDIS_PASSWORD_FILE=$run/redis-agent.pass
  or redis_url, redis_user and redis_password_file in
  ~/.config/execq/config (see 'execq --help').

MSG
ENABLE_EXECUTE=1 EXECQ_REDIS_USER=worker EXECQ_AGENTS="agent operator" \
    EXECQ_REDIS_PASSWORD_FILE="$run/redis-worker.pass" \
    "$build/execq-worker" --redis "unix://$sock" \
    --workspace "$run/workspace" --log-dir "$top/.tmp/exec" \
    --http "127.0.0.1:$port" "$@" &
wpid=$!
trap 'kill -TERM $wpid 2>/dev/null; wait $wpid; exit 130' INT TERM
wait $wpid
