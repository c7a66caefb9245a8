#!/bin/sh
# Runs inside the VM (Tests/VMRig/run-vm.sh): a world server for the UWB side, and two
# nearby-bridge processes, each on its own kernel Bluetooth adapter (hci0, hci1) backed by a
# Bumble controller on the host; all Bluetooth traffic goes through the kernel's mgmt channel and
# L2CAP sockets. Prints both event streams (prefixed A| and B|) for the host to check.
# Phase 1: they find each other, range, and bump. Phase 2: rig-b comes back for a second bump
# and is killed (SIGKILL) the moment either side starts that profile drop; rig-a must report it
# lost (timeout), not hang, and keep running. rig-b's kernel keeps its advert on the air until
# the instance's timeout, renewed by every connection to it that ends (extended advertising):
# rig-a runs on for 30 s so that the host can see the dead rig leave the air while rig-a runs.
set -u
R=/opt/rig
cd /tmp
# peer_id FILE: the peer id a rig logged at start (16 hex digits), once it has.
peer_id() {
  waited=0
  until grep -q "peer id [0-9a-f]*," "$1" 2>/dev/null; do
    usleep 100000; waited=$((waited + 1))
    [ $waited -ge 300 ] && { echo "VM: no peer id in $1 after 30 s; it says:" >&2; tail -n 15 "$1" | sed 's/^/VM-ERR| /' >&2; return; }
  done
  sed -n 's/.*peer id \([0-9a-f]*\),.*/\1/p' "$1" | head -1
}
# Peer ids are random per run and the lower one connects. rig-a must be the one that connects,
# to the rig that is killed, whatever the draw: when rig-b's id is the lower, everything starts
# again, the world too. Redrawing rig-b alone would be a draw against rig-a's id (one near the
# top rarely loses), and each start under TCG costs seconds of the world's scripted approach
# (rig-b touches rig-a at 16-19 s): the restarted world's clock starts over.
starts=0
while :; do
  starts=$((starts + 1))
  # The parent removes the last draw's logs: the children's own truncation can come after the
  # greps below, which would then read the dead world's "listening" line or a dead rig's id.
  rm -f world.jsonl world.err a.jsonl a.err b.jsonl b.err
  $R/nearby-bridge world --scenario $R/two-rigs.json --uwb-port 7000 --air-port 7100 --log-level notice >world.jsonl 2>world.err &
  W=$!
  # TCG is slow: wait until the world listens before the bridges connect.
  waited=0
  until grep -q "rig-b: nearby-bridge run" world.err 2>/dev/null; do
    sleep 1; waited=$((waited + 1))
    [ $waited -ge 60 ] && { echo "VM: world server did not start"; cat world.err; exit 1; }
  done
  $R/nearby-bridge run --uwb tcp:127.0.0.1:7000 --ble hci0 --name rig-a --profile $R/card-a.json --log-level info >a.jsonl 2>a.err &
  A=$!
  $R/nearby-bridge run --uwb tcp:127.0.0.1:7001 --ble hci1 --name rig-b --profile $R/card-b.json --log-level info >b.jsonl 2>b.err &
  B=$!
  ida=$(peer_id a.err); idb=$(peer_id b.err)
  [ -n "$ida" ] && [ -n "$idb" ] || { echo "VM: a rig did not start (world: $(tail -n 3 world.err | tr '\n' ' '))"; break; }
  expr "x$ida" \< "x$idb" >/dev/null && break
  [ $starts -ge 12 ] && { echo "VM: rig-b never drew a peer id above rig-a's"; break; }
  kill -TERM $A $B $W; wait $A $B $W
done
echo "VM: started $starts time(s) until rig-b's peer id ($idb) was above rig-a's ($ida): rig-a connects"

waited=0
until grep -q '"type":"bump"' a.jsonl 2>/dev/null && grep -q '"type":"bump"' b.jsonl 2>/dev/null; do
  sleep 1; waited=$((waited + 1))
  [ $waited -ge 90 ] && break
done
echo "VM: phase 1 done after ${waited}s"
grep -q "advertising=legacy.*Bluetooth adapter ready" a.err && echo "VM: rig-a advertising: legacy"
grep -q "advertising with LE extended advertising commands" b.err && echo "VM: rig-b advertising: extended"
sleep 3   # let any duplicate bump show up, if there were one

# Phase 2: the second approach; kill rig-b as soon as its profile drop starts on either side.
waited=0
until grep -q 'bump=2 .*profile drop' a.err b.err 2>/dev/null; do
  usleep 50000; waited=$((waited + 1))
  [ $waited -ge 1800 ] && { echo "VM: the second profile drop never started"; break; }
done
kill -9 $B
killed_at=$(wc -l <a.err)
echo "VM: rig-b killed mid-exchange: $(grep -h 'bump=2 .*profile drop' a.err b.err | sed 's/.*\(node=[^ ]*\).*\(profile drop [a-z]*\)/\2 on \1/' | head -2 | tr '\n' ' ')"
waited=0
until grep -q "\"type\":\"peer.lost\".*\"peer\":\"$idb\"" a.jsonl 2>/dev/null; do
  sleep 1; waited=$((waited + 1))
  [ $waited -ge 30 ] && break
done
echo "VM: phase 2 done after ${waited}s"
sleep 30
# rig-a's connects to the dead rig, all refused by its kernel: the log's lines and the counts the
# log's rate limiter folded into "(repeated N more times)".
tail -n +$((killed_at + 1)) a.err >a.after
shown=$(grep "L2CAP connect failed" a.after | grep -vc "repeated")
folded=$(sed -n 's/.*L2CAP connect failed (repeated \([0-9]*\) more times.*/\1/p' a.after | awk '{s += $1} END {print s + 0}')
echo "VM: rig-a refused connects after the kill: $((shown + folded))"
echo "VM: rig-a stopping"
kill -0 $A 2>/dev/null && echo "VM: rig-a still running" || echo "VM: rig-a DIED"
kill -TERM $A
waited=0
while kill -0 $A 2>/dev/null && [ $waited -lt 20 ]; do sleep 1; waited=$((waited + 1)); done
if kill -0 $A 2>/dev/null; then
  echo "VM: rig-a did not exit within 20 s of SIGTERM"; kill -9 $A
fi
wait $A; echo "VM: rig-a exit status $?"

for f in a b; do sed "s/^/$(echo $f | tr ab AB)| /" $f.jsonl; done
echo "--- stderr of rig-a"; tail -n 25 a.err
echo "--- stderr of rig-b"; tail -n 25 b.err
echo "--- stderr of world"; tail -n 10 world.err
