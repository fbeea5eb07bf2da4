#!/bin/sh
# make bench: foreground `true` through Redis and the worker at concurrency
# 1 and 2, unconfined (--confine off) and confined (the default), next to a
# bare posix_spawn loop of /bin/sh -c true, interleaved in the same run (two
# rounds of N each, N=2000 by default: BENCH_N); the per-command cost of
# confinement without Redis; then sessions: exit-to-callback latency,
# prompt-to-EXEC_WAITING latency (a PTY session that reads), 200 MB
# through a session log next to a shell redirect, and the worker's memory
# and CPU with 1000 idle PTY sessions; then the egress proxy next to a
# direct connection on 127.0.0.1 (connect latency, GETs, MB/s through a
# tunnel); a tool call through execq mcp next to the item it becomes;
# then classify --batch. Concurrency 1, 2 and 8; around each
# confined round, the Redis commands and Redis CPU per item (INFO
# commandstats and INFO cpu). The last line is JSON.
#
# BENCH_FLEET=1 (make bench-fleet) measures one Redis serving 8 workers
# on this host instead: items/s and Redis CPU per item under load, and
# Redis CPU per idle worker (docs/SCALING.md).
set -eu
build=${BUILD:-build}
n=${BENCH_N:-2000}
if [ "${1:-}" != --inside-redis ]; then
	exec scripts/with-redis.sh "$0" --inside-redis
fi
url=$EXECQ_TEST_REDIS_URL
tmp=$(mktemp -d)
mkdir "$tmp/ws"		# tmp_dir must be outside the workspace
wpids=
trap 'for p in $wpids; do kill "$p" 2>/dev/null || :; done; rm -rf "$tmp"' \
    EXIT

# Starts a worker on queue $1 with $2 slots and the rest as options.
bench_worker() {
	q=$1
	slots=$2
	shift 2
	ENABLE_EXECUTE=1 "$build/execq-worker" --redis "$url" --queue "$q" \
	    --max-procs "$slots" --workspace "$tmp/ws" --log-dir "$tmp/logs" \
	    --state-dir "$tmp/state" "$@" 2>"$tmp/worker-$q.log" &
	wpids="$wpids $!"
}

# Stops every worker started so far.
bench_stop() {
	for p in $wpids; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" || true
	done
	wpids=
}

# A free TCP port on the loopback, for a worker's side door.
bench_port() {
	python3 -c 'import socket; s = socket.socket(); \
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The worker's own stage latencies so far, from its /metrics on port $1:
# "spawn_sum spawn_count answer_sum answer_count" (seconds).
bench_stages() {
	python3 -c 'import sys, urllib.request
m = {}
for l in urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1]):
    f = l.decode().split()
    if len(f) == 2: m[f[0]] = f[1]
print(*[m.get("execq_%s_latency_seconds_%s" % (a, b), "0")
    for a in ("spawn", "answer") for b in ("sum", "count")])' "$1"
}

# Foreground `true` items through queue $1, $2 of them, labelled $3.
bench_queue() {
	"$build/execq-bench" queue -n "$2" -c "$c" --redis "$url" \
	    --queue "$1" --label "$3"
}

# Redis counters before and after the rest of the command line: prints
# "cmds/item scripts/item us/item" of that run, n items ($1), less the
# client's own two commands an item (XADD, XREAD).
bench_redis_around() {
	items=$1
	shift
	before=$("$build/execq-bench" redis --redis "$url")
	"$@"
	after=$("$build/execq-bench" redis --redis "$url")
	echo "$before $after" | awk -v n="$items" '{
		printf "%.2f %.2f %.1f\n", ($8 - $2 - 2) / n - 2,
		    ($10 - $4) / n, ($12 - $6) / n }'
}

if [ "${BENCH_FLEET:-0}" = 1 ]; then
	. scripts/bench-fleet.sh
	exit 0
fi

echo "execq bench: N=$n foreground \`true\`, $(nproc) cores, $(uname -r)"
: > "$tmp/summary"
for c in 1 2 8; do
	bench_worker "benchoff$c" "$c" --confine off
	off=$!
	port=$(bench_port)
	bench_worker "benchon$c" "$c" --tmp-dir "$tmp/cmdtmp" \
	    --http "127.0.0.1:$port"
	on=$!
	sleep 0.5
	bench_queue "benchoff$c" 200 unconfined >/dev/null
	bench_queue "benchon$c" 200 confined >/dev/null
	: > "$tmp/rows"
	for round in 1 2; do
		"$build/execq-bench" floor -n "$n" -c "$c" | tee -a "$tmp/rows"
		bench_queue "benchoff$c" "$n" unconfined | tee -a "$tmp/rows"
		st0=$(bench_stages "$port")
		bench_redis_around "$n" bench_queue "benchon$c" "$n" confined \
		    > "$tmp/out"
		st1=$(bench_stages "$port")
		head -1 "$tmp/out" | tee -a "$tmp/rows"
		tail -1 "$tmp/out" > "$tmp/redis$c"
		echo "$st0 $st1 $(head -1 "$tmp/out")" >> "$tmp/stages$c"
	done
	# Where an item's time goes (confined, means of both rounds): from
	# delivery to the worker until the command runs, from then until
	# its answer is queued (the command, its exit, the <id>.json), and
	# the rest of what the client waited (its XADD, Redis, the reads).
	awk -v c="$c" '{
		sp += ($5 - $1) / ($6 - $2); an += ($7 - $3) / ($8 - $4)
		wait += c / $11; k++ }
	END {
		sp = sp / k * 1e3; an = an / k * 1e3; wait = wait / k * 1e3
		printf "stages c=%d  per item (mean): delivery -> running " \
		    "%.3f ms, running -> answer queued %.3f ms, Redis and " \
		    "client %.3f ms, of %.3f ms\n", c, sp, an - sp, wait - an,
		    wait
	}' "$tmp/stages$c"
	read -r cmds scripts us < "$tmp/redis$c"
	echo "redis  c=$c  per item: $cmds commands from the worker (a" \
	    "script's own calls counted), $scripts scripts, $us us of Redis CPU"
	# A backlog, as batch automation sends one: all n at once, so the
	# worker always finds the next item waiting (claimed as it is read).
	bench_redis_around "$n" "$build/execq-bench" backlog -n "$n" \
	    --redis "$url" --queue "benchon$c" --label confined > "$tmp/out"
	tail -1 "$tmp/out" > "$tmp/out.redis"
	read -r bcmds bscripts bus < "$tmp/out.redis"
	# bench_redis_around took 2 client commands an item; the backlog
	# client says how many it sent (the last field, with the DEL).
	awk -v c="$c" -v n="$n" -v cm="$bcmds" -v sc="$bscripts" -v us="$bus" '
	$1 == "floor" { f += $3; k++ }
	END {
		getline line < "'"$tmp/out"'"
		split(line, w)
		own = w[split(line, w)]
		sub(/\)$/, "", own)
		printf "backlog c=%d  %d items/s sent at once, %.2f of the " \
		    "floor; per item %.2f commands from the worker, %s " \
		    "scripts, %s us of Redis CPU\n", c, w[3], w[3] / (f / k),
		    cm + 2 - own / n, sc, us
	}' "$tmp/rows"
	rss_off=$(awk '/VmHWM/ {print $2}' "/proc/$off/status")
	rss_on=$(awk '/VmHWM/ {print $2}' "/proc/$on/status")
	bench_stop
	# Rows: label c=C RATE items/s p50 MS ms p99 MS ms; means of the rounds.
	awk -v c="$c" -v ro="$rss_off" -v rc="$rss_on" -v cmds="$cmds" \
	    -v us="$us" -v summary="$tmp/summary" '
	{ rate[$1] += $3; p50[$1] += $6; k[$1]++ }
	$1 == "unconfined" { uo[k[$1]] = $3; po[k[$1]] = $6 }
	$1 == "confined" { uc[k[$1]] = $3; pc[k[$1]] = $6 }
	END {
		for (l in rate) { rate[l] /= k[l]; p50[l] /= k[l] }
		printf "ratio  c=%d  %.2f of the floor unconfined, %.2f " \
		    "confined; worker peak RSS %d KiB, %d KiB confined\n", c,
		    rate["unconfined"] / rate["floor"],
		    rate["confined"] / rate["floor"], ro, rc
		printf "%d %.3f %.3f %.3f %.3f %s %s\n", c,
		    rate["confined"] / rate["floor"],
		    rate["unconfined"] / rate["floor"], p50["confined"],
		    p50["floor"], cmds, us >> summary
		printf "confined/unconfined  c=%d  throughput %.2f, p50 " \
		    "%+.3f ms (rounds:", c,
		    rate["confined"] / rate["unconfined"],
		    p50["confined"] - p50["unconfined"]
		for (i = 1; i <= k["confined"]; i++)
			printf " %.2f %+.3f ms%s", uc[i] / uo[i], pc[i] - po[i],
			    i < k["confined"] ? "," : ")\n"
	}' "$tmp/rows"
done
echo "confinement cost:"
"$build/execq-bench" confine -n "$n" --dir "$tmp" ||
    echo "(not measured: see above)"
echo "sessions:"
bench_worker benchs 1100 --max-sessions 1100 --tmp-dir "$tmp/cmdtmp"
wpid=$!
sleep 1
"$build/execq-bench" callback -n 200 --redis "$url" --queue benchs
"$build/execq-bench" waiting -n 50 --redis "$url" --queue benchs
"$build/execq-bench" throughput --mb 200 --redis "$url" --queue benchs \
    --dir "$tmp"
"$build/execq-bench" idle -n 1000 --redis "$url" --queue benchs --pid "$wpid"
bench_stop
echo "mcp (a tool call through execq mcp, next to the item it becomes):"
bench_worker benchm 1
sleep 1
"$build/execq-bench" mcp -n 500 --redis "$url" --queue benchm \
    --execq "$build/execq" || echo "(not measured: see above)"
bench_stop
echo "shell sessions (a command in one, next to a foreground item):"
bench_worker benchsh 2
sleep 1
"$build/execq-bench" shell -n 300 --redis "$url" --queue benchsh ||
    echo "(not measured: see above)"
bench_stop
echo "proxy (worker/proxy.c and a sink on 127.0.0.1, each in a process):"
"$build/execq-bench" proxy -n "$n" --mb 256 || echo "(not measured: see above)"
echo "policy:"
i=0
while [ $i -lt 2500 ]; do
	printf '%s\n' "\"ls -la src/$i && git status\"" "\"rm -rf build/$i\"" \
	    '"sudo rm -rf --no-preserve-root /"' \
	    '"find . -name \"*.c\" -exec grep -l foo {} +"' \
	    '"cat /etc/passwd | awk -F: \"{print NR}\" > users.txt"' \
	    '"sh -c \"timeout 5 make test 2>&1 | tail -n 20\""' \
	    '"for f in *.log; do gzip -k f; done"' \
	    '"git log --oneline -n 5 | sed -n 1,3p"'
	i=$((i + 1))
done > "$tmp/commands.jsonl"
lines=$(wc -l < "$tmp/commands.jsonl")
# Start-up (config, realpaths) apart: it is paid once per process.
start=$(date +%s%N)
"$build/execq" classify --workspace "$tmp" --batch < /dev/null > /dev/null
end=$(date +%s%N)
startup=$((end - start))
start=$(date +%s%N)
"$build/execq" classify --workspace "$tmp" --batch < "$tmp/commands.jsonl" \
    > "$tmp/verdicts.jsonl"
end=$(date +%s%N)
bad=$(grep -c '"error"' "$tmp/verdicts.jsonl" || true)
awk -v n="$lines" -v ns=$((end - start)) -v bad="$bad" -v su="$startup" \
    'BEGIN {
	printf "classify --batch  %d commands in %.1f ms: %.0f commands/s " \
	    "(%d unreadable lines; start-up %.1f ms of it, %.0f commands/s " \
	    "without)\n", n, ns / 1e6, n / (ns / 1e9), bad, su / 1e6,
	    n / ((ns - su) / 1e9)
}'
# The last line, for scripts: the ratios to the floor (confined, the
# default), latency at c=1 and Redis's work per item at c=1.
awk '{ r[$1] = $2; u[$1] = $3; p[$1] = $4; f[$1] = $5; cm[$1] = $6;
    us[$1] = $7 }
END {
	printf "{\"c1_ratio\":%.3f,\"c2_ratio\":%.3f,\"c8_ratio\":%.3f," \
	    "\"c1_ratio_unconfined\":%.3f,\"p50_ms\":%.3f," \
	    "\"floor_p50_ms\":%.3f,\"redis_cmds_per_item\":%.2f," \
	    "\"redis_us_per_item\":%.1f}\n", r[1], r[2], r[8], u[1], p[1],
	    f[1], cm[1], us[1]
}' "$tmp/summary"
