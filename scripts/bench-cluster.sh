#!/bin/sh
# make bench-cluster: the worker on a Redis Cluster (issue 25, item 5)
# next to one plain Redis, in the same run. A private three-primary
# cluster on 127.0.0.1 in a temp dir; three queues whose slots are on
# three different primaries, each answering to a reply queue on another
# primary; a worker per queue (as bench.sh's: ENABLE_EXECUTE=1,
# --max-procs 8), each pointed at a node that is not its queue's. Then
# `execq-bench cluster`: N `true` items to each queue at once (BENCH_N,
# 2000 by default), every answer read from its reply queue's node:
# items/s in all and per queue, and each primary's Redis CPU and
# commands per item (INFO cpu, INFO commandstats). Next to it the same
# 3N items through one worker queue on one plain redis-server
# (scripts/with-redis.sh, on TCP as the cluster's nodes are), measured
# the same way. The last line is JSON. Everything started here is
# stopped, and the temp dir removed, however the script ends.
set -eu
build=${BUILD:-build}
n=${BENCH_N:-2000}
if [ "${1:-}" != --inside-redis ]; then
	exec scripts/with-redis.sh "$0" --inside-redis
fi
single="redis://127.0.0.1:$EXECQ_TEST_REDIS_PORT"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/execq-bench-cluster.XXXXXX")
mkdir "$tmp/ws"		# tmp_dir must be outside the workspace
wpids=

# Stops the workers (TERM, KILL after 10 s) and the nodes, by their
# pids, then removes the temp dir.
bench_cleanup() {
	for p in $wpids; do
		kill -TERM "$p" 2>/dev/null || :
	done
	for p in $wpids; do
		k=0
		while kill -0 "$p" 2>/dev/null && [ $k -lt 200 ]; do
			sleep 0.05
			k=$((k + 1))
		done
		kill -KILL "$p" 2>/dev/null || :
		wait "$p" 2>/dev/null || :
	done
	for f in "$tmp"/node*/pid; do
		[ -f "$f" ] || continue
		p=$(cat "$f")
		kill -TERM "$p" 2>/dev/null || :
		k=0
		while kill -0 "$p" 2>/dev/null && [ $k -lt 200 ]; do
			sleep 0.05
			k=$((k + 1))
		done
		kill -KILL "$p" 2>/dev/null || :
	done
	rm -rf "$tmp"
}
trap bench_cleanup EXIT
trap 'exit 1' INT TERM HUP

# Three ports on 127.0.0.1 that are free, their cluster bus ports
# (10000 above) free too.
bench_ports() {
	python3 -c 'import os, socket
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        return True
    except OSError:
        return False
    finally:
        s.close()
got, p = [], 20000 + os.getpid() % 5000 * 5
while len(got) < 3 and p < 55000:
    if free(p) and free(p + 10000):
        got.append(p)
    p += 1
print(*got)'
}

# Starts a cluster node on port $1, its files in $tmp/node$1.
bench_node() {
	mkdir "$tmp/node$1"
	redis-server --port "$1" --bind 127.0.0.1 --dir "$tmp/node$1" \
	    --cluster-enabled yes --save '' --appendonly no --daemonize yes \
	    --pidfile "$tmp/node$1/pid" --logfile redis.log
}

# Waits (at most 30 s) until redis-cli -p $1 $2... prints a line that
# matches the extended regex in $want.
bench_until() {
	k=0
	until redis-cli -p "$@" 2>/dev/null | grep -Eq "$want"; do
		k=$((k + 1))
		if [ $k -gt 600 ]; then
			echo "bench-cluster: node $1: no /$want/ after 30 s" >&2
			return 1
		fi
		sleep 0.05
	done
}

# The port of the primary serving slot $1 (from $tmp/nodes, CLUSTER
# NODES: "id host:port@bus flags ... slot-ranges").
bench_slot_port() {
	awk -v s="$1" '$3 ~ /master/ {
		split($2, a, "[:@]")
		for (i = 9; i <= NF; i++) {
			k = split($i, r, "-")
			if ($i !~ /^\[/ && s >= r[1] + 0 && s <= r[k] + 0)
				print a[2]
		}
	}' "$tmp/nodes"
}

# A queue name "<prefix><k>" whose slot (of its hash tag: the name) the
# node on port $2 serves.
bench_queue_on() {
	k=0
	while [ $k -lt 1000 ]; do
		slot=$(redis-cli -p "$p1" cluster keyslot "$1$k")
		if [ "$(bench_slot_port "$slot")" = "$2" ]; then
			echo "$1$k"
			return 0
		fi
		k=$((k + 1))
	done
	echo "bench-cluster: no queue name for port $2" >&2
	return 1
}

# Starts a worker on Redis $1, queue $2, as bench.sh's bench_worker does.
bench_worker() {
	ENABLE_EXECUTE=1 "$build/execq-worker" --redis "$1" --queue "$2" \
	    --max-procs 8 --workspace "$tmp/ws" --log-dir "$tmp/logs" \
	    --state-dir "$tmp/state" --tmp-dir "$tmp/cmdtmp" \
	    --consumer "bench-$2" 2>"$tmp/worker-$2.log" &
	wpids="$wpids $!"
}

echo "execq bench (cluster): three primaries on 127.0.0.1 next to one" \
    "plain Redis, N=$n a queue, $(nproc) cores, $(uname -r)"
read -r p1 p2 p3 <<EOF
$(bench_ports)
EOF
if [ -z "$p3" ]; then
	echo "bench-cluster: no three free port pairs" >&2
	exit 1
fi
for p in "$p1" "$p2" "$p3"; do
	bench_node "$p"
done
for p in "$p1" "$p2" "$p3"; do
	want=PONG bench_until "$p" ping
done
redis-cli --cluster create "127.0.0.1:$p1" "127.0.0.1:$p2" \
    "127.0.0.1:$p3" --cluster-replicas 0 --cluster-yes > "$tmp/create.log"
for p in "$p1" "$p2" "$p3"; do
	want=cluster_state:ok bench_until "$p" cluster info
done
redis-cli -p "$p1" cluster nodes > "$tmp/nodes"
# Queue i on the node on port i, its reply queue on the next one, its
# worker given the URL of the one after (it finds its queue's itself).
set -- "$p1" "$p2" "$p3" "$p1" "$p2"
pairs=
i=0
while [ $i -lt 3 ]; do
	q=$(bench_queue_on bcq "$1")
	r=$(bench_queue_on bcr "$2")
	pairs="$pairs $q/$r"
	bench_worker "redis://127.0.0.1:$3" "$q"
	shift
	i=$((i + 1))
done
bench_worker "$single" bcsingle
echo "cluster: ports $p1 $p2 $p3; queue/reply:$pairs; single: $single" \
    "(queue bcsingle)"
# Warm-up (every worker up and answering), then the rounds, each with
# the other side idle.
# shellcheck disable=SC2086
"$build/execq-bench" cluster -n 100 --redis "redis://127.0.0.1:$p1" \
    --label warm-up $pairs > /dev/null
"$build/execq-bench" cluster -n 300 --redis "$single" --label warm-up \
    bcsingle/bcsreply > /dev/null
# shellcheck disable=SC2086
"$build/execq-bench" cluster -n "$n" --redis "redis://127.0.0.1:$p1" \
    --label cluster $pairs > "$tmp/cluster.out"
sed '$d' "$tmp/cluster.out"
"$build/execq-bench" cluster -n $((3 * n)) --redis "$single" \
    --label single bcsingle/bcsreply > "$tmp/single.out"
sed '$d' "$tmp/single.out"
# The last line: the cluster's figures as they are (items_per_s named
# cluster_items_per_s), the single Redis's prefixed single_.
python3 -c 'import json, sys
c = json.loads(open(sys.argv[1]).read().splitlines()[-1])
s = json.loads(open(sys.argv[2]).read().splitlines()[-1])
out = {"cluster_items_per_s": c.pop("items_per_s"),
    "single_items_per_s": s.pop("items_per_s")}
out.update(c)
out.update(("single_" + k, v) for k, v in s.items())
out["cluster_over_single"] = round(out["cluster_items_per_s"] /
    out["single_items_per_s"], 3)
print(json.dumps(out, separators=(",", ":")))' "$tmp/cluster.out" \
    "$tmp/single.out"
