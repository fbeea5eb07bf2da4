#!/bin/sh
# Runs a command next to a private redis-server: in a temp dir, on a unix
# socket and a free port on 127.0.0.1, no persistence unless asked. The
# command gets EXECQ_TEST_REDIS_URL (the unix socket), EXECQ_TEST_REDIS_PORT,
# EXECQ_TEST_REDIS_DIR and EXECQ_TEST_REDIS_CONF (to restart the server the
# same way). The server is stopped however the command ends.
set -eu
dir=$(mktemp -d "${TMPDIR:-/tmp}/execq-redis.XXXXXX")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
    shuf -i 20000-60000 -n 1)
cat > "$dir/redis.conf" <<CONF
bind 127.0.0.1
port $port
unixsocket $dir/redis.sock
unixsocketperm 700
dir $dir
save ""
appendonly no
daemonize yes
pidfile $dir/redis.pid
logfile $dir/redis.log
CONF
cleanup() {
	if [ -f "$dir/redis.pid" ]; then
		kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
	fi
	sleep 0.1
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
redis-server "$dir/redis.conf"
i=0
until redis-cli -s "$dir/redis.sock" ping >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 100 ]; then
		echo "with-redis: redis-server did not start" >&2
		cat "$dir/redis.log" >&2
		exit 1
	fi
	sleep 0.05
done
EXECQ_TEST_REDIS_URL="unix://$dir/redis.sock"
EXECQ_TEST_REDIS_PORT=$port
EXECQ_TEST_REDIS_DIR=$dir
EXECQ_TEST_REDIS_CONF=$dir/redis.conf
export EXECQ_TEST_REDIS_URL EXECQ_TEST_REDIS_PORT EXECQ_TEST_REDIS_DIR \
    EXECQ_TEST_REDIS_CONF
"$@"
