#!/usr/bin/env bash
# make run: a private redis-server on .tmp/run/redis.sock and a worker with
# execution enabled on the demo workspace .tmp/run/workspace, in the
# foreground, with its metrics on http://127.0.0.1:9464 (the next free
# port if that one is taken). Ctrl-C stops both. build/execq finds this
# Redis by itself when run in this directory or below it.
set -eu
top=$(pwd)
run="$top/.tmp/run"
build=${BUILD:-build}
mkdir -p "$run/workspace/sub/dir"
sock="$run/redis.sock"
started_redis=0
if ! redis-cli -s "$sock" ping >/dev/null 2>&1; then
	rm -f "$sock"
	redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 \
	    --dir "$run" --save '' --appendonly no --daemonize yes \
	    --pidfile "$run/redis.pid" --logfile "$run/redis.log"
	i=0
	until redis-cli -s "$sock" ping >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 100 ] && { echo "redis-server did not start; see $run/redis.log" >&2; exit 1; }
		sleep 0.05
	done
	started_redis=1
fi
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

  From another directory: EXECQ_REDIS_URL=unix://$sock, or the line
    redis_url = unix://$sock
  in ~/.config/execq/config (see 'execq --help').

MSG
ENABLE_EXECUTE=1 "$build/execq-worker" --redis "unix://$sock" \
    --workspace "$run/workspace" --log-dir "$top/.tmp/exec" \
    --http "127.0.0.1:$port" "$@" &
wpid=$!
trap 'kill -TERM $wpid 2>/dev/null; wait $wpid; exit 130' INT TERM
wait $wpid
