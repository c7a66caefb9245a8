#!/bin/sh
# Runs inside the VM (Tests/VMRig/run-vm.sh), for ble-attack.sh: a world server for the UWB side
# and two keyed nearby-bridge processes on kernel adapters hci0 and hci1, while Bumble attackers
# on the host work the same air (bumble_attackers.py). For their first 12 s the rigs do not hear
# each other (their controllers drop each other's adverts; the attackers hear both): a rig hears
# of its peer only from the replayer's copies of the peer's advert, which come from the
# replayer's address and are dropped (address binding; before it, the rig that connects tried
# the replayer first). Waits for both bumps (rig-b touches rig-a at 30-33 s of the world's
# time), lets the attack go on 10 s more, then stops each rig with SIGTERM and says how long it
# took. Prints both event streams (prefixed A| and B|) and how many links each closed as failed, for the host.
set -u
R=/opt/rig
cd /tmp
echo "VM: world starts at $(date +%s)"
$R/nearby-bridge world --scenario $R/attack-rigs.json --uwb-port 7000 --air-port 7100 --log-level notice >world.jsonl 2>world.err &
waited=0
until grep -q "rig-b: nearby-bridge run" world.err 2>/dev/null; do
  sleep 1; waited=$((waited + 1))
  [ $waited -ge 60 ] && { echo "VM: world server did not start"; cat world.err; exit 1; }
done
echo "VMRIG-CTL rssi 0 1 off"
echo "VMRIG-CTL rssi 1 0 off"
sleep 1   # the console is a serial line
$R/nearby-bridge run --config $R/event.json --uwb tcp:127.0.0.1:7000 --ble hci0 --name rig-a --profile $R/card-a.json --log-level info >a.jsonl 2>a.err &
A=$!
$R/nearby-bridge run --config $R/event.json --uwb tcp:127.0.0.1:7001 --ble hci1 --name rig-b --profile $R/card-b.json --log-level info >b.jsonl 2>b.err &
B=$!
sleep 12
echo "VMRIG-CTL rssi 0 1 -50"
echo "VMRIG-CTL rssi 1 0 -50"
echo "VM: the rigs hear each other"

waited=0
until grep -q '"type":"bump"' a.jsonl 2>/dev/null && grep -q '"type":"bump"' b.jsonl 2>/dev/null; do
  sleep 1; waited=$((waited + 1))
  [ $waited -ge 90 ] && break
done
echo "VM: bumps after ${waited}s"
sleep 10
for rig in a b; do
  pid=$A; [ $rig = b ] && pid=$B
  kill -0 $pid 2>/dev/null && echo "VM: rig-$rig still running" || echo "VM: rig-$rig DIED"
  echo "VM: rig-$rig cpu ticks $(awk '{print $14 + $15}' /proc/$pid/stat 2>/dev/null), peak rss $(awk '/^VmHWM/ {print $2}' /proc/$pid/status 2>/dev/null) kB"
  kill -TERM $pid
  tenths=0
  while kill -0 $pid 2>/dev/null && [ $tenths -lt 200 ]; do usleep 100000; tenths=$((tenths + 1)); done
  kill -0 $pid 2>/dev/null && { echo "VM: rig-$rig did not exit within 20 s of SIGTERM"; kill -9 $pid; }
  wait $pid; echo "VM: rig-$rig exit status $? after ${tenths}00 ms"
done

for f in a b; do sed "s/^/$(echo $f | tr ab AB)| /" $f.jsonl; done
for f in a b; do
  echo "VM: rig-$f links closed as failed: $(grep -c 'closing link' $f.err)"
done
echo "--- stderr of rig-a"; tail -n 30 a.err
echo "--- stderr of rig-b"; tail -n 30 b.err
