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
# commandstats and INFO cpu), the CPU per item of the worker and of its
# children next to the floor's; at c=1 the system calls by kind (strace -f,
# when installed) of the worker, of its children before and after execve,
# and of the floor; the child's CPU before execve (confinement cost); Redis
# and worker CPU of 8 idle workers. The last line is JSON.
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
wprocs=
wlast=
trap 'for p in $wpids; do kill "$p" 2>/dev/null || :; done; rm -rf "$tmp"' \
    EXIT

# Starts a worker on queue $1 with $2 slots and the rest as options.
# The process started is the holder (hold_sessions, the default): wpids
# gets it, to stop; wprocs and wlast get the worker, its child, whose
# CPU, memory and system calls are measured.
bench_worker() {
	q=$1
	slots=$2
	shift 2
	ENABLE_EXECUTE=1 "$build/execq-worker" --redis "$url" --queue "$q" \
	    --max-procs "$slots" --workspace "$tmp/ws" --log-dir "$tmp/logs" \
	    --state-dir "$tmp/state" "$@" 2>"$tmp/worker-$q.log" &
	wpids="$wpids $!"
	wlast=$(bench_child "$!")
	wprocs="$wprocs $wlast"
}

# The holder $1's worker child (within 10 s), else $1 itself.
bench_child() {
	k=0
	while [ $k -lt 200 ]; do
		for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
			if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = \
			    execq-worker ]; then
				echo "$c"
				return
			fi
		done
		sleep 0.05
		k=$((k + 1))
	done
	echo "$1"
}

# Stops every worker started so far.
bench_stop() {
	for p in $wpids; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" || true
	done
	wpids=
	wprocs=
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

# Redis's commands and CPU so far: "calls cpu_us".
bench_redis_cpu() {
	"$build/execq-bench" redis --redis "$url" | awk '{ print $2, $6 }'
}

# CPU of process $1 so far, in clock ticks: "own children" (utime+stime
# of all its threads; cutime+cstime of the children it reaped).
bench_cpu() {
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13, $14 + $15 }'
}

# CPU of the threads of processes $@ so far, in ns (precise, for idle).
bench_sched() {
	for p in "$@"; do
		cat /proc/"$p"/task/*/schedstat
	done | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# System calls in strace -f output $1 over $2 items, labelled $3: the
# parent's (the first pid and every pid that never calls execve; from its
# first clone on), the children's before their execve (it included) and
# after. Prints a human line each and appends "label": {kind: per item}
# to $tmp/syscalls.json.
bench_syscalls() {
	awk -v n="$2" -v label="$3" -v js="$tmp/syscalls.json" '
	function name(l) { sub(/\(.*/, "", l); return l }
	NR == FNR {
		if (first == "")
			first = $1
		if ($2 ~ /^execve\(/ && $1 != first)
			child[$1] = 1
		next
	}
	$2 ~ /^(<\.\.\.|---|\+\+\+)/ { next }
	{
		k = name($2)
		if (!($1 in child)) {
			if (k ~ /^(clone|clone3|vfork)$/)
				on = 1
			if (on) { c["w", k]++; t["w"]++ }
		} else if ($1 in done) {
			c["a", k]++; t["a"]++
		} else {
			c["b", k]++; t["b"]++
			if (k == "execve")
				done[$1] = 1
		}
	}
	function show(g, what, key,    i, j, m, ks, kk, sp, sep, more, line,
	    obj) {
		m = 0
		for (kk in c) {
			split(kk, sp, SUBSEP)
			if (sp[1] == g)
				ks[++m] = sp[2]
		}
		for (i = 1; i <= m; i++)	# by count, most first
			for (j = i + 1; j <= m; j++)
				if (c[g, ks[j]] > c[g, ks[i]]) {
					kk = ks[i]; ks[i] = ks[j]; ks[j] = kk
				}
		line = ""; obj = sprintf("\"total\":%.1f", t[g] / n)
		for (i = 1; i <= m; i++) {
			sep = i > 1 ? "," : ""
			if (i <= 10)
				line = line sprintf("%s %s %.1f", sep, ks[i],
				    c[g, ks[i]] / n)
			obj = obj sprintf(",\"%s\":%.2f", ks[i],
			    c[g, ks[i]] / n)
		}
		more = m > 10 ? ", ..." : ""
		printf "syscalls %s  %.1f per item:%s%s\n", what, t[g] / n,
		    line, more
		printf ",\"%s\":{%s}", key, obj >> js
	}
	END {
		pre = label == "worker" ? "" : label "_"
		show("w", label, pre "syscalls_per_item")
		show("b", label "'"'"'s children before execve",
		    pre "child_syscalls_before_exec")
		show("a", label "'"'"'s children after (sh -c true)",
		    pre "child_syscalls_after_exec")
	}' "$1" "$1"
}

# The worker's system calls over 200 items at c=1 (strace -f -p $1 on
# queue $2: it slows every call, so counts only), then the floor's.
# strace is not one of scripts/install-deps' packages: a debugging tool
# that needs ptrace (refused in many containers) should not be installed
# for every build; without it this part says so and the rest runs.
bench_strace() {
	if ! command -v strace >/dev/null 2>&1; then
		echo "syscalls: not counted: strace is not installed (and" \
		    "perf is not used either); install strace to count them"
		return 0
	fi
	strace -f -qq -o "$tmp/strace.worker" -p "$1" &
	sp=$!
	sleep 1			# attached to every thread
	if ! kill -0 "$sp" 2>/dev/null; then
		echo "syscalls: not counted: strace -p failed (ptrace refused?)"
		return 0
	fi
	bench_queue "$2" 200 confined-strace >/dev/null
	kill -INT "$sp"
	wait "$sp" || true
	strace -f -qq -o "$tmp/strace.floor" "$build/execq-bench" floor \
	    -n 200 -c 1 >/dev/null || :
	echo "syscalls (strace -f, 200 items at c=1, confined; the worker" \
	    "from its first clone on):"
	bench_syscalls "$tmp/strace.worker" 200 worker ||
	    echo "syscalls: the worker's not counted (see above)"
	bench_syscalls "$tmp/strace.floor" 200 floor ||
	    echo "syscalls: the floor's not counted (see above)"
}

if [ "${BENCH_FLEET:-0}" = 1 ]; then
	. scripts/bench-fleet.sh
	exit 0
fi

echo "execq bench: N=$n foreground \`true\`, $(nproc) cores, $(uname -r)"
: > "$tmp/summary"
: > "$tmp/syscalls.json"
tck=$(getconf CLK_TCK)
for c in 1 2 8; do
	bench_worker "benchoff$c" "$c" --confine off
	off=$wlast
	port=$(bench_port)
	bench_worker "benchon$c" "$c" --tmp-dir "$tmp/cmdtmp" \
	    --http "127.0.0.1:$port"
	on=$wlast
	sleep 0.5
	bench_queue "benchoff$c" 200 unconfined >/dev/null
	bench_queue "benchon$c" 200 confined >/dev/null
	: > "$tmp/rows"
	for round in 1 2; do
		"$build/execq-bench" floor -n "$n" -c "$c" | tee -a "$tmp/rows"
		cpu0=$(bench_cpu "$off")
		bench_queue "benchoff$c" "$n" unconfined | tee -a "$tmp/rows"
		echo "$cpu0 $(bench_cpu "$off")" >> "$tmp/cpuoff$c"
		st0=$(bench_stages "$port")
		cpu0=$(bench_cpu "$on")
		bench_redis_around "$n" bench_queue "benchon$c" "$n" confined \
		    > "$tmp/out"
		echo "$cpu0 $(bench_cpu "$on")" >> "$tmp/cpu$c"
		st1=$(bench_stages "$port")
		head -1 "$tmp/out" | tee -a "$tmp/rows"
		tail -1 "$tmp/out" > "$tmp/redis$c"
		echo "$st0 $st1 $(head -1 "$tmp/out")" >> "$tmp/stages$c"
		# /bin/true: plain words, exec'd without the shell (issue
		# 25, item 3), next to `true` (a builtin: through it).
		if [ "$c" = 1 ]; then
			"$build/execq-bench" queue -n "$n" -c 1 --redis "$url" \
			    --queue "benchon$c" --label direct /bin/true |
			    tee -a "$tmp/rows"
			"$build/execq-bench" queue -n "$n" -c 1 --redis "$url" \
			    --queue "benchon$c" --label shell-bin "'/bin/true'" |
			    tee -a "$tmp/rows"
		fi
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
	# CPU per item in the same rounds (means of both): the worker's own
	# threads and the children it reaped (the whole `sh -c true`, its
	# setup before execve included), next to the floor's own and its
	# children's. The child over the floor's is the spawn's share in it.
	awk -v c="$c" -v n="$n" -v t="$tck" -v out="$tmp/cpu$c.sum" '
	FNR == 1 { file++ }
	file == 1 { w += $3 - $1; ch += $4 - $2; k++ }
	file == 2 { wo += $3 - $1; ko++ }
	file == 3 && $1 == "floor" { fs += $12; fc += $15; f++ }
	END {
		w = w / k / n * 1e6 / t; ch = ch / k / n * 1e6 / t
		wo = wo / ko / n * 1e6 / t; fs /= f; fc /= f
		printf "cpu    c=%d  per item: worker %.0f us confined (%.0f " \
		    "unconfined), its children %.0f us; floor %.0f us own, " \
		    "%.0f us children: the child %+.0f us over the " \
		    "floor'"'"'s\n", c, w, wo, ch, fs, fc, ch - fc
		printf "%.1f %.1f %.1f %.1f %.1f\n", w, wo, ch, fs, fc > out
	}' "$tmp/cpu$c" "$tmp/cpuoff$c" "$tmp/rows"
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
	if [ "$c" = 1 ]; then
		bench_strace "$on" "benchon$c"
		# One client on a worker with room to spare (16 slots, as
		# fleets run them): no read after an item finds its lanes
		# full, so the blocking read alone takes them.
		bench_worker benchwide1 16 --tmp-dir "$tmp/cmdtmp"
		sleep 0.5
		bench_queue benchwide1 200 confined >/dev/null
		bench_redis_around "$n" bench_queue benchwide1 "$n" \
		    "16-slots" > "$tmp/out"
		head -1 "$tmp/out"
		tail -1 "$tmp/out" > "$tmp/out.wide"
		read -r wcmds wscripts wus < "$tmp/out.wide"
		echo "redis  c=1 on 16 slots  per item: $wcmds commands from" \
		    "the worker, $wscripts scripts, $wus us of Redis CPU"
		echo "$wus" > "$tmp/wide"
	fi
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
		if (k["direct"] > 0) {
			printf "direct c=%d  /bin/true without the shell: " \
			    "%.2f of the floor, %.2f of '"'"'/bin/true'"'"' " \
			    "through it, %.2f of `true` (a builtin)\n", c,
			    rate["direct"] / rate["floor"],
			    rate["direct"] / rate["shell-bin"],
			    rate["direct"] / rate["confined"]
			printf "%.3f\n", rate["direct"] / rate["floor"] > \
			    "'"$tmp/direct"'"
		}
		printf "ratio  c=%d  %.2f of the floor unconfined, %.2f " \
		    "confined; worker peak RSS %d KiB, %d KiB confined\n", c,
		    rate["unconfined"] / rate["floor"],
		    rate["confined"] / rate["floor"], ro, rc
		getline cpu < "'"$tmp/cpu$c.sum"'"
		printf "%d %.3f %.3f %.3f %.3f %s %s %s\n", c,
		    rate["confined"] / rate["floor"],
		    rate["unconfined"] / rate["floor"], p50["confined"],
		    p50["floor"], cmds, us, cpu >> summary
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
"$build/execq-bench" confine -n "$n" --dir "$tmp" > "$tmp/confine" ||
    echo "(not measured: see above)"
cat "$tmp/confine"
# The child's CPU before execve: confined less bare (the same `sh -c true`).
setup=$(awk '$1 == "child" && $2 == "cpu" { print $11 }' "$tmp/confine")
# Redis alone (its own timers) for idle_s before and after, 8 idle
# workers for idle_s in between: their share, per worker and second.
idle_s=${BENCH_IDLE_S:-10}
r0=$(bench_redis_cpu)
sleep "$idle_s"
r1=$(bench_redis_cpu)
i=0
while [ $i -lt 8 ]; do
	bench_worker benchidle 1 --tmp-dir "$tmp/cmdtmp" --consumer "idle-$i"
	i=$((i + 1))
done
sleep 2				# started, first reads sent
# shellcheck disable=SC2086
w0=$(bench_sched $wprocs)
r2=$(bench_redis_cpu)
sleep "$idle_s"
r3=$(bench_redis_cpu)
# shellcheck disable=SC2086
w1=$(bench_sched $wprocs)
bench_stop
r4=$(bench_redis_cpu)
sleep "$idle_s"
r5=$(bench_redis_cpu)
# Each snapshot: "calls cpu_us", its own 2 commands counted in calls.
echo "$r0 $r1 $r2 $r3 $r4 $r5 $w0 $w1" | awk -v s="$idle_s" '{
	base = ($4 - $2 + $12 - $10) / 2 / s
	all = ($8 - $6) / s
	per = (all - base) / 8
	cmds = ($7 - $5 - 2) / s / 8
	wk = ($14 - $13) / 1e3 / s / 8
	printf "idle   8 workers for %d s: %.1f commands/s and %.0f us/s of " \
	    "Redis CPU per worker (Redis %.0f us/s with them, %.0f us/s " \
	    "alone before and after, taken off); each worker %.0f us/s " \
	    "of its own CPU\n", s, cmds, per, all, base, wk
	printf "%.1f %.1f %.1f %.1f\n", per, base, cmds, wk
}' > "$tmp/idle"
head -1 "$tmp/idle"
read -r idle_redis idle_base idle_cmds idle_worker <<EOF
$(tail -1 "$tmp/idle")
EOF
echo "sessions:"
bench_worker benchs 1100 --max-sessions 1100 --tmp-dir "$tmp/cmdtmp"
wpid=$wlast
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
# default), latency at c=1, Redis's work per item at c=1 (and its CPU at
# c=2, c=8; and at c=1 on a 16-slot worker), CPU per item of the worker
# and its children next to the
# floor's, the child's setup from the confinement cost, Redis per idle
# worker, and the system calls by kind. c1_direct_ratio: as c1_ratio, of
# /bin/true (exec'd without the shell) at c=1: its items/s over the
# floor's (sh -c true).
direct=$(cat "$tmp/direct" 2>/dev/null)
wide=$(cat "$tmp/wide" 2>/dev/null)
awk -v setup="${setup:-null}" -v ir="$idle_redis" -v ib="$idle_base" \
    -v direct="${direct:-null}" -v wide="${wide:-null}" \
    -v ic="$idle_cmds" -v iw="$idle_worker" -v sys="$tmp/syscalls.json" '
{ r[$1] = $2; u[$1] = $3; p[$1] = $4; f[$1] = $5; cm[$1] = $6;
    us[$1] = $7; w[$1] = $8; wo[$1] = $9; ch[$1] = $10; fs[$1] = $11;
    fc[$1] = $12 }
END {
	getline calls < sys
	printf "{\"c1_ratio\":%.3f,\"c2_ratio\":%.3f,\"c8_ratio\":%.3f," \
	    "\"c1_ratio_unconfined\":%.3f,\"p50_ms\":%.3f," \
	    "\"floor_p50_ms\":%.3f,\"redis_cmds_per_item\":%.2f," \
	    "\"redis_us_per_item\":%.1f,\"redis_us_per_item_c2\":%.1f," \
	    "\"redis_us_per_item_c8\":%.1f,\"redis_us_per_item_16slots\":%s,",
	    r[1], r[2], r[8], u[1], p[1], f[1], cm[1], us[1], us[2], us[8],
	    wide
	printf "\"worker_us_per_item\":%.1f,\"worker_us_per_item_c2\":%.1f," \
	    "\"worker_us_per_item_c8\":%.1f," \
	    "\"worker_us_per_item_unconfined\":%.1f," \
	    "\"child_us_per_item\":%.1f,\"floor_us_per_item\":%.1f," \
	    "\"floor_child_us_per_item\":%.1f,\"child_setup_us\":%s,",
	    w[1], w[2], w[8], wo[1], ch[1], fs[1], fc[1], setup
	printf "\"redis_idle_us_per_s\":%s,\"redis_alone_us_per_s\":%s," \
	    "\"redis_idle_cmds_per_s\":%s,\"worker_idle_us_per_s\":%s," \
	    "\"c1_direct_ratio\":%s%s}\n", ir, ib, ic, iw, direct,
	    calls != "" ? calls : ",\"syscalls_per_item\":null"
}' "$tmp/summary"
