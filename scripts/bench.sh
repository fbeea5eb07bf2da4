#!/bin/sh
# make bench: foreground `true` through Redis and the worker at concurrency
# 1 and 2, next to a bare posix_spawn loop of /bin/sh -c true measured in
# the same run (N=2000 by default: BENCH_N); then sessions: exit-to-callback
# latency, 200 MB through a session log next to a shell redirect, and the
# worker's memory and CPU with 1000 idle PTY sessions.
set -eu
build=${BUILD:-build}
n=${BENCH_N:-2000}
exec scripts/with-redis.sh sh -c '
set -eu
build=$1; n=$2
tmp=$(mktemp -d)
wpid=
trap "[ -n \"\$wpid\" ] && kill \$wpid 2>/dev/null; rm -rf $tmp" EXIT
echo "execq bench: N=$n foreground \`true\`, $(nproc) cores, $(uname -r)"
for c in 1 2; do
	ENABLE_EXECUTE=1 "$build/execq-worker" --redis "$EXECQ_TEST_REDIS_URL" \
	    --queue bench$c --max-procs $c --workspace "$tmp" \
	    --log-dir "$tmp/logs" 2>"$tmp/worker$c.log" &
	wpid=$!
	sleep 0.3
	"$build/execq-bench" queue -n 200 -c $c --redis "$EXECQ_TEST_REDIS_URL" --queue bench$c >/dev/null
	floor=$("$build/execq-bench" floor -n "$n" -c $c)
	q=$("$build/execq-bench" queue -n "$n" -c $c --redis "$EXECQ_TEST_REDIS_URL" --queue bench$c)
	rss=$(awk "/VmHWM/ {print \$2}" /proc/$wpid/status)
	kill -TERM $wpid; wait $wpid || true
	wpid=
	echo "$floor"
	echo "$q"
	fr=$(echo "$floor" | awk "{print \$3}")
	qr=$(echo "$q" | awk "{print \$3}")
	awk -v a="$qr" -v b="$fr" -v c=$c -v r="$rss" \
	    "BEGIN { printf \"ratio  c=%d  %.2f of the floor; worker peak RSS %d KiB\n\", c, a / b, r }"
done
echo "sessions:"
ENABLE_EXECUTE=1 "$build/execq-worker" --redis "$EXECQ_TEST_REDIS_URL" \
    --queue benchs --max-procs 1100 --workspace "$tmp" \
    --log-dir "$tmp/logs" 2>"$tmp/workers.log" &
wpid=$!
sleep 1
"$build/execq-bench" callback -n 200 --redis "$EXECQ_TEST_REDIS_URL" --queue benchs
"$build/execq-bench" throughput --mb 200 --redis "$EXECQ_TEST_REDIS_URL" --queue benchs --dir "$tmp"
"$build/execq-bench" idle -n 1000 --redis "$EXECQ_TEST_REDIS_URL" --queue benchs --pid $wpid
kill -TERM $wpid; wait $wpid || true
wpid=
echo "policy:"
i=0
while [ $i -lt 250 ]; do
	printf "%s\n" "\"ls -la src/$i && git status\"" "\"rm -rf build/$i\"" \
	    "\"sudo rm -rf --no-preserve-root /\"" \
	    "\"find . -name \\\"*.c\\\" -exec grep -l foo {} +\"" \
	    "\"cat /etc/passwd | awk -F: \\\"{print NR}\\\" > users.txt\"" \
	    "\"sh -c \\\"timeout 5 make test 2>&1 | tail -n 20\\\"\"" \
	    "\"for f in *.log; do gzip -k f; done\"" \
	    "\"git log --oneline -n 5 | sed -n 1,3p\""
	i=$((i + 1))
done > "$tmp/commands.jsonl"
lines=$(wc -l < "$tmp/commands.jsonl")
start=$(date +%s%N)
"$build/execq" classify --workspace "$tmp" --batch < "$tmp/commands.jsonl" > "$tmp/verdicts.jsonl"
end=$(date +%s%N)
bad=$(grep -c "\"error\"" "$tmp/verdicts.jsonl" || true)
awk -v n="$lines" -v ns=$((end - start)) -v bad="$bad" \
    "BEGIN { printf \"classify --batch  %d commands in %.1f ms: %.0f commands/s (%d unreadable lines)\n\", n, ns / 1e6, n / (ns / 1e9), bad }"
' bench "$build" "$n"
