#!/usr/bin/env bash
# The MQTT output against Debian's Mosquitto broker on a loopback port, checked by Mosquitto's
# own mosquitto_sub (not our code):
#   1. two rigs (`run` against a `world` with rig-a and rig-b) publish to one broker; a
#      persistent-session subscriber (QoS 1) records everything; mid-run the broker is stopped
#      for 20 s and started again (it keeps its sessions on disk, as a real one would);
#      afterwards every non-range event each rig wrote to stdout arrived over MQTT, once after
#      deduplication by node + seq, in order, identical but for `seq`; repeats are counted
#      (QoS 1 is at least once); each rig's spool is empty at the end; `tail --mqtt` shows both
#      rigs merged; the retained status says offline after a clean stop.
#   2. a broker that refuses the credentials: a clear error on stderr, stdout goes on.
#
#   Tests/MQTT/mqtt-e2e.sh PATH/TO/nearby-bridge
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(realpath "$1")
work=$(mktemp -d /tmp/nb-mqtt.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; [ -n "${MQTT_KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL  $1" >&2; for f in "${@:2}"; do echo "--- $f" >&2; tail -n 20 "$f" >&2; done; exit 1; }
pass() { echo "ok    $1" >&2; }
wait_for() {
  local deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.2; done
  return 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

port=$(free_port)
mkdir -p "$work/broker"
# `user`: a broker started by root would drop to the mosquitto user, which may not read $work.
cat >"$work/broker/mosquitto.conf" <<EOF
user $(id -un)
listener $port 127.0.0.1
allow_anonymous true
persistence true
persistence_location $work/broker/
max_queued_messages 100000
EOF
start_broker() {
  mosquitto -c "$work/broker/mosquitto.conf" >>"$work/broker/log" 2>&1 &
  broker=$!
  for _ in $(seq 50); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0; sleep 0.1; done
  fail "mosquitto did not start" "$work/broker/log"
}
start_broker
url=mqtt://127.0.0.1:$port

# The subscribers first (mosquitto_sub with a persistent session; our tail and watch): what is
# published while they reconnect waits for them on the broker.
mosquitto_sub -h 127.0.0.1 -p "$port" -i nb-checker -c -q 1 -t 'nearby/1/+/+' -v >"$work/sub.txt" 2>"$work/sub.err" &
sub=$!
"$bin" tail --mqtt "$url" --group 1 >"$work/tail.jsonl" 2>"$work/tail.err" &
tail_pid=$!
"$bin" watch --mqtt "$url" --group 1 --plain >"$work/watch.txt" 2>"$work/watch.err" &
watch_pid=$!
wait_for "$work/tail.err" "subscribed" 10 && wait_for "$work/watch.err" "subscribed" 10 || fail "tail or watch did not subscribe" "$work/tail.err"
sleep 0.5

"$bin" world --scenario "$ROOT/Tests/VMRig/scenarios/two-rigs.json" --speed 2 --uwb-port 0 --air-port 0 --log-level info \
  >"$work/world.jsonl" 2>"$work/world.err" &
wait_for "$work/world.err" "rig-b: nearby-bridge run" 30 || fail "world did not start" "$work/world.err"
pids=()
for rig in rig-a rig-b; do
  command=$(grep -o "$rig: nearby-bridge run .*" "$work/world.err" | head -1)
  uwb=$(echo "$command" | grep -o "tcp:[0-9.]*:[0-9]*")
  ble=$(echo "$command" | grep -o "world:[^ ]*")
  XDG_STATE_HOME="$work/state-$rig" "$bin" run --uwb "$uwb" --ble "$ble" --name "$rig" --mqtt "$url" --log-level info \
    >"$work/$rig.jsonl" 2>"$work/$rig.err" &
  pids+=($!)
done

wait_for "$work/rig-a.jsonl" '"type":"peer.found"' 30 || fail "rig-a found nobody" "$work/rig-a.err"
sleep 2
kill -TERM "$broker"; wait "$broker" 2>/dev/null || true
echo "broker stopped for 20 s" >&2
sleep 20
wait_for "$work/rig-a.err" "lost the MQTT broker" 1 || fail "rig-a did not notice the broker going away" "$work/rig-a.err"
start_broker
wait_for "$work/rig-a.jsonl" '"type":"bump"' 40 || fail "rig-a: no bump" "$work/rig-a.err"
# Each rig reconnects (back-off: at most 10 s) and drains its spool.
deadline=$((SECONDS + 30))
for rig in rig-a rig-b; do
  until [ "$(grep -c "connected to the MQTT broker" "$work/$rig.err")" -ge 2 ]; do
    ((SECONDS < deadline)) || fail "$rig did not reconnect" "$work/$rig.err"
    sleep 0.2
  done
done
# The outage was real: events waited in the spool and went out on reconnection.
grep "connected to the MQTT broker" "$work/rig-a.err" | tail -1 | grep -q "pending=[1-9]" ||
  fail "rig-a had nothing spooled when it reconnected" "$work/rig-a.err"
# The second touch, well after the broker is back: live for every subscriber.
for rig in rig-a rig-b; do wait_for "$work/$rig.jsonl" '"bump_id":2' 40 || fail "$rig: no second bump" "$work/$rig.err"; done
sleep 3
for pid in "${pids[@]}"; do kill -INT "$pid"; done
for pid in "${pids[@]}"; do wait "$pid" || fail "a rig did not exit cleanly" "$work/rig-a.err" "$work/rig-b.err"; done
sleep 1
kill "$sub" "$tail_pid" "$watch_pid" 2>/dev/null || true
wait "$sub" "$tail_pid" "$watch_pid" 2>/dev/null || true

grep -q "connected to the MQTT broker" "$work/rig-a.err" || fail "rig-a never connected" "$work/rig-a.err"
[ "$(grep -c "connected to the MQTT broker" "$work/rig-a.err")" -ge 2 ] || fail "rig-a did not reconnect" "$work/rig-a.err"
python3 - "$work" <<'PY' || fail "MQTT stream differs from stdout" "$work/sub.txt"
import json, sys, collections
work = sys.argv[1]
received = collections.defaultdict(list)
raw = collections.Counter()
for line in open(f"{work}/sub.txt"):
    topic, _, payload = line.rstrip("\n").partition(" ")
    if topic.endswith("/status"):
        continue
    event = json.loads(payload)
    assert topic == f"nearby/1/{event['node']}/{event['type']}", topic
    raw[event["node"]] += 1
    received[event["node"]].append(event)
for rig in ("rig-a", "rig-b"):
    stdout = [json.loads(l) for l in open(f"{work}/{rig}.jsonl")]
    node = stdout[0]["node"]
    seen, mqtt = set(), []
    for event in received[node]:
        if event["seq"] in seen:
            continue
        seen.add(event["seq"])
        mqtt.append(event)
    duplicates = raw[node] - len(mqtt)
    non_range = [e for e in mqtt if e["type"] != "range"]
    seqs = [e["seq"] for e in non_range]
    assert seqs == sorted(seqs), f"{rig}: events out of order over MQTT"
    strip = lambda e: {k: v for k, v in e.items() if k != "seq"}
    want = [strip(e) for e in stdout]
    got = [strip(e) for e in non_range]
    if want != got:
        missing = [e for e in want if e not in got]
        extra = [e for e in got if e not in want]
        sys.exit(f"{rig}: {len(want)} events on stdout, {len(got)} over MQTT; missing {missing[:3]}, extra {extra[:3]}")
    ranges = len(mqtt) - len(non_range)
    print(f"{rig}: {len(got)} non-range events over MQTT, all of stdout's, in order; {ranges} range events; "
          f"{duplicates} repeats removed", file=sys.stderr)
PY
pass "two rigs, broker away 20 s: every non-range event arrived once (after dedup by node+seq), in order, as on stdout"
for rig in rig-a rig-b; do
  spool="$work/state-$rig/nearby-bridge/mqtt-spool/spool.log"
  [ -f "$spool" ] && [ ! -s "$spool" ] || fail "$rig: the spool was not drained ($(stat -c %s "$spool" 2>/dev/null) bytes)" "$work/$rig.err"
done
pass "both spools drained"
nodes=$(jq -r .node "$work/tail.jsonl" | sort -u | wc -l)
[ "$nodes" -eq 2 ] || fail "tail --mqtt showed $nodes rigs, not 2" "$work/tail.jsonl" "$work/tail.err"
for rig in rig-a rig-b; do
  node=$(head -1 "$work/$rig.jsonl" | jq -r .node)
  shown=$(jq -c "select(.node == \"$node\" and .type != \"range\")" "$work/tail.jsonl" | wc -l)
  [ "$shown" -eq "$(wc -l <"$work/$rig.jsonl")" ] || fail "tail --mqtt showed $shown of $rig's $(wc -l <"$work/$rig.jsonl") events" "$work/tail.err"
done
pass "tail --mqtt: both rigs merged, every non-range event once, valid JSON lines"
# watch keeps its session on the broker (MQTT 5 session expiry): what the rigs sent while it
# was reconnecting, the first bump included, waited for it there.
for n in 1 2; do
  [ "$(grep -c "BUMP #$n " "$work/watch.txt")" -eq 2 ] || fail "watch --mqtt did not show both rigs' bump $n once each" "$work/watch.txt" "$work/watch.err"
done
pass "watch --mqtt: both rigs' bumps, each once, the one made during the outage too"
status=$(mosquitto_sub -h 127.0.0.1 -p "$port" -t 'nearby/1/+/status' -W 2 -v 2>/dev/null || true)
[ "$(echo "$status" | grep -c '{"state":"offline"}')" -eq 2 ] || fail "retained status after a clean stop: $status"
pass "retained status: offline for both rigs after their clean stop"
kill "$broker" 2>/dev/null; wait "$broker" 2>/dev/null || true

# 2. Credentials refused.
port2=$(free_port)
mkdir -p "$work/locked"
touch "$work/locked/passwd"
mosquitto_passwd -b "$work/locked/passwd" rig right-password
printf 'user %s\nlistener %s 127.0.0.1\nallow_anonymous false\npassword_file %s\n' "$(id -un)" "$port2" "$work/locked/passwd" \
  >"$work/locked/mosquitto.conf"
mosquitto -c "$work/locked/mosquitto.conf" >"$work/locked/log" 2>&1 &
locked=$!
sleep 0.5
"$bin" world --scenario "$ROOT/Tests/Scenarios/alice-touches.json" --speed 4 --uwb-port 0 --air-port 0 --log-level info \
  >"$work/world2.jsonl" 2>"$work/world2.err" &
wait_for "$work/world2.err" "nearby-bridge run" 30 || fail "world did not start" "$work/world2.err"
command=$(grep -o "nearby-bridge run .*" "$work/world2.err" | head -1)
XDG_STATE_HOME="$work/state-locked" "$bin" run --uwb "$(echo "$command" | grep -o "tcp:[0-9.]*:[0-9]*")" \
  --ble "$(echo "$command" | grep -o "world:[^ ]*")" --mqtt "mqtt://rig:wrong-password@127.0.0.1:$port2" \
  >"$work/locked.jsonl" 2>"$work/locked.err" &
locked_run=$!
wait_for "$work/locked.err" "refused the connection" 15 || fail "no error for refused credentials" "$work/locked.err"
# A bump written after the refusal: stdout goes on whatever the broker does.
lines=$(wc -l <"$work/locked.jsonl")
deadline=$((SECONDS + 30))
until tail -n +"$((lines + 1))" "$work/locked.jsonl" | grep -q '"type":"bump"'; do
  ((SECONDS < deadline)) || fail "stdout stopped with a refusing broker" "$work/locked.err"
  sleep 0.2
done
kill -INT "$locked_run"; wait "$locked_run" || fail "run did not exit cleanly" "$work/locked.err"
grep -q "the MQTT broker refused the connection: .*not authorised" "$work/locked.err" || fail "no clear error for refused credentials" "$work/locked.err"
[ "$(grep -c "refused the connection" "$work/locked.err")" -eq 1 ] || fail "the refusal was logged more than once" "$work/locked.err"
pass "credentials refused: one clear error on stderr, stdout went on (bump reported)"
