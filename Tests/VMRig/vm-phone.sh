#!/bin/sh
# Runs inside the VM (Tests/VMRig/phone.sh): a rig on hci0 serving phones (`phoneServices`),
# with --capture, and rig-b on hci1, which walks up to it and bumps it at 16-19 s of the world's
# scenario, both boards a world server's; the phone is a Bumble host on the host's air
# (bumble_iphone.py, or bumble_android.py with phone.sh --android). MODE `bluetoothd`: the system bus and bluetoothd run first, as on a Pi, so
# `run` registers the services with bluetoothd (the D-Bus backend); `kernel`: no bluetoothd, so
# `run` serves them on the kernel's ATT channel. The rigs run until the phone's session has ended
# (peer.lost) and both have bumped, or 240 s; then the rig's events (A|), stderr (E|), capture
# (U| uci.pcap, H| ble.pcap, in base64), rig-b's events (B|) and bluetoothd's log (BTD|) go to
# the console for the host to check.
set -u
R=/opt/rig
cd /tmp
MODE=${1:-bluetoothd}
if [ "$MODE" = bluetoothd ]; then
  mkdir -p /run/dbus
  dbus-daemon --system --fork
  /usr/libexec/bluetooth/bluetoothd -n >btd.log 2>&1 &
  tries=0
  until [ "$(bluetoothctl list 2>/dev/null | grep -c Controller)" -ge 2 ]; do
    tries=$((tries + 1))
    [ $tries -lt 40 ] || { echo "VM: bluetoothd does not list both adapters"; cat btd.log; exit 1; }
    sleep 0.5
  done
  echo "VM: bluetoothd $(/usr/libexec/bluetooth/bluetoothd --version) running"
fi
$R/nearby-bridge world --scenario $R/phone-rig.json --uwb-port 7000 --air-port 7100 --log-level notice >world.jsonl 2>world.err &
W=$!
waited=0
until grep -q "rig: nearby-bridge run" world.err 2>/dev/null; do
  sleep 1; waited=$((waited + 1))
  [ $waited -ge 60 ] && { echo "VM: world server did not start"; cat world.err; exit 1; }
done
$R/nearby-bridge run --uwb tcp:127.0.0.1:7000 --ble hci0 --name rig --config $R/phone-config.json --capture /tmp/cap --log-level info >a.jsonl 2>a.err &
A=$!
$R/nearby-bridge run --uwb tcp:127.0.0.1:7001 --ble hci1 --name rig-b --log-level info >b.jsonl 2>b.err &
B=$!
waited=0
phone=
lost=
until [ -n "$lost" ] && grep -q '"type":"bump"' a.jsonl && grep -q '"type":"bump"' b.jsonl; do
  sleep 1; waited=$((waited + 1))
  [ -z "$phone" ] && phone=$(sed -n 's/.*"type":"peer.found".*"peer":"\([0-9a-f]*\)".*"kind":"phone".*/\1/p' a.jsonl | head -1)
  [ -n "$phone" ] && [ -z "$lost" ] && grep -q "\"type\":\"peer.lost\".*\"peer\":\"$phone\"" a.jsonl && lost=$waited
  [ $waited -ge 240 ] && break
done
echo "VM: phone ${phone:-none} after ${lost:-never}s"
echo "VM: rigs and phone done after ${waited}s"
kill -TERM $A $B; wait $A; echo "VM: rig exit status $?"; wait $B; echo "VM: rig-b exit status $?"
kill -TERM $W; wait $W
sed 's/^/A| /' a.jsonl
sed 's/^/E| /' a.err
base64 /tmp/cap/rig/uci.pcap | sed 's/^/U| /'
base64 /tmp/cap/rig/ble.pcap | sed 's/^/H| /'
sed 's/^/B| /' b.jsonl
[ "$MODE" = bluetoothd ] && sed 's/^/BTD| /' btd.log
exit 0
