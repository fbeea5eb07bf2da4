# Sourced by scripts/bench.sh with BENCH_FLEET=1 (make bench-fleet): one
# Redis, 8 workers on this host (2 slots each, confined) on one queue,
# 16 clients. Prints items/s and Redis CPU per item under load, then the
# Redis CPU 8 idle workers cost (heartbeats, blocking reads), per worker.
workers=8
idle_s=${BENCH_IDLE_S:-20}
echo "execq bench (fleet): $workers workers x 2 slots, one Redis, N=$n," \
    "$(nproc) cores"
i=0
while [ $i -lt $workers ]; do
	bench_worker fleet 2 --tmp-dir "$tmp/cmdtmp" --consumer "fleet-$i"
	i=$((i + 1))
done
sleep 1
c=16
bench_queue fleet 320 fleet >/dev/null
bench_redis_around "$n" bench_queue fleet "$n" fleet > "$tmp/out"
head -1 "$tmp/out"
tail -1 "$tmp/out" > "$tmp/r"
read -r cmds scripts us < "$tmp/r"
echo "redis  fleet  per item: $cmds commands from the workers, $scripts" \
    "scripts, $us us of Redis CPU"
before=$("$build/execq-bench" redis --redis "$url")
sleep "$idle_s"
after=$("$build/execq-bench" redis --redis "$url")
echo "$before $after" | awk -v w="$workers" -v s="$idle_s" '{
	printf "redis  idle   %d workers for %d s: %.1f commands/s and %.0f " \
	    "us/s of Redis CPU per worker\n", w, s, ($8 - $2 - 2) / w / s,
	    ($12 - $6) / w / s }'
bench_stop
