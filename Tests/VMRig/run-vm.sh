#!/bin/bash
# Boots the Debian kernel in a qemu VM (TCG) with N Bluetooth adapters, each an H4 UART backed
# by a Bumble virtual controller on the host (all on one simulated air), runs a script in the
# VM as root and exits with its status.
#
#   Tests/VMRig/run-vm.sh [options] -- VM-SCRIPT [ARGS...]
#
# Options:
#   --adapters N           Bluetooth adapters hci0..hci(N-1) (default 2; 0 = none; max 7)
#   --timeout S            whole run, boot included (default 240); on expiry exit 124
#   --file HOST[:VM]       copy HOST (file or directory) into the VM at VM (default
#                          /opt/rig/<basename>; a VM path ending in / is a directory). For
#                          dynamically linked ELF files their libraries (ldd) and the dynamic
#                          loader are copied too. Repeatable.
#   --module NAME          also load kernel module NAME (and its dependencies). Repeatable.
#   --no-ext-adv           controllers do not claim LE Extended Advertising (legacy commands)
#   --hci-log FILE         log every HCI packet between the kernel and the controllers to FILE
#   --bumble-arg ARG       extra argument for bumble_controllers.py. Repeatable.
#   --bluetoothd           also bring the host's BlueZ daemon and D-Bus (Debian's bluez and dbus
#                          packages): bluetoothd, bluetoothctl, dbus-daemon, dbus-send, their
#                          configuration (main.conf defaults, the D-Bus system bus policy) and
#                          users; the VM script starts them (see README.md, "bluetoothd")
#   --append ARGS          extra kernel command line (e.g. "loglevel=7" to see kernel info)
#   --smp N, --mem MB      VM CPUs (default 1) and memory (default 1024)
#   --keep                 keep the work directory (initramfs, console log, Bumble log)
#
# In the VM: busybox (ash) runs /init, which mounts proc, sys, dev, devpts, tmp, run and
# debugfs, loads the modules, brings lo up, attaches /dev/ttyS1.. as H4 UARTs with
# hci_uart_attach (ttySn+1 -> hci n), waits until mgmt lists all N adapters and runs
# `sh VM-SCRIPT ARGS` in /tmp with RIG_ADAPTERS=N and RIG_DIR=/opt/rig in the environment
# (static guest tools: /opt/rig/hci_uart_attach, /opt/rig/mgmt_probe). Then it prints
# "VMRIG-EXIT <status>" and powers off. If the script fails, the last kernel messages are
# printed too.
#
# Host-side faults from inside the VM: a line "VMRIG-CTL <command>" printed on the console
# (stdout of the VM script) is passed to the Bumble control socket, e.g.
#   echo "VMRIG-CTL drop 0 2"     # adapter 0's UART goes dead for 2 s, then reconnects
#   echo "VMRIG-CTL hwerror 1"    # adapter 1 reports a hardware error (kernel resets it)
# (see bumble_controllers.py). The reply goes to the host log only: the guest should poll for
# the effect it expects. The console is a serial line: expect a delay of a few 100 ms.
#
# Exit status: the VM script's; 4 when the script passed but the kernel logged a BUG, WARNING,
# Oops or list corruption (printed as "VMRIG-KERNEL| " lines; the one known Debian 6.1 BUG in
# hci_chan_del is printed as "VMRIG-KERNEL-KNOWN| " and fails nothing, see README.md "Kernel bug
# seen"); 124 on timeout; 125 when the VM died without reporting one (kernel panic, crash); 2 on
# bad usage; 3 when the rig could not start.
#
# Environment: RIG_CACHE (default <repo>/.build-vm), RIG_KERNEL_IMAGE (kernel to boot instead
# of the cached uncompressed vmlinux, e.g. its vmlinuz). See README.md.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

ADAPTERS=2
TIMEOUT=240
FILES=()
MODULES=()
BUMBLE_ARGS=()
HCI_LOG=
APPEND=
SMP=1
MEM=1024
KEEP=0
BLUETOOTHD=0
usage() { sed -n '2,46p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --adapters) ADAPTERS=$2; shift 2 ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        --file) FILES+=("$2"); shift 2 ;;
        --module) MODULES+=("$2"); shift 2 ;;
        --no-ext-adv) BUMBLE_ARGS+=(--no-ext-adv); shift ;;
        --hci-log) HCI_LOG=$2; shift 2 ;;
        --bumble-arg) BUMBLE_ARGS+=("$2"); shift 2 ;;
        --append) APPEND=$2; shift 2 ;;
        --smp) SMP=$2; shift 2 ;;
        --mem) MEM=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --bluetoothd) BLUETOOTHD=1; shift ;;
        --) shift; break ;;
        -h|--help) usage ;;
        -*) echo "run-vm: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "run-vm: no VM script given" >&2; usage; }
SCRIPT=$1; shift
SCRIPT_ARGS=("$@")
[ -f "$SCRIPT" ] || { echo "run-vm: $SCRIPT: no such file" >&2; exit 2; }
case "$ADAPTERS" in ''|*[!0-9]*) echo "run-vm: bad --adapters" >&2; exit 2 ;; esac
[ "$ADAPTERS" -le 7 ] || { echo "run-vm: at most 7 adapters" >&2; exit 2; }
[ -n "$HCI_LOG" ] && HCI_LOG=$(realpath -m "$HCI_LOG")

T0=$(date +%s.%N)
elapsed() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
log() { echo "run-vm: $*" >&2; }

"$HERE/build-rig.sh" --quiet || { log "build-rig.sh failed"; exit 3; }
CACHE=${RIG_CACHE:-$ROOT/.build-vm}
KERNEL_OVERRIDE=${RIG_KERNEL_IMAGE:-}
# shellcheck disable=SC1091
. "$CACHE/rig.env"
[ -n "$KERNEL_OVERRIDE" ] && RIG_KERNEL_IMAGE=$KERNEL_OVERRIDE   # e.g. the compressed vmlinuz

WORK=$(mktemp -d /tmp/vmrig.XXXXXX)
QEMU_PID=
BUMBLE_PID=
cleanup() {
    trap - EXIT INT TERM HUP
    [ -n "$QEMU_PID" ] && kill "$QEMU_PID" 2>/dev/null
    [ -n "$BUMBLE_PID" ] && kill "$BUMBLE_PID" 2>/dev/null
    [ -n "$QEMU_PID" ] && wait "$QEMU_PID" 2>/dev/null
    [ -n "$BUMBLE_PID" ] && wait "$BUMBLE_PID" 2>/dev/null
    if [ "$KEEP" = 1 ]; then log "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# ------------------------------------------------------------------ initramfs
R=$WORK/root
mkdir -p "$R"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,opt/rig,usr/lib,usr/lib64,usr/bin,usr/sbin}
# mirror the host's merged-/usr layout so ldd's paths are valid in the VM
for d in lib lib64; do
    if [ -L "/$d" ]; then ln -s "usr/$d" "$R/$d"; else mkdir -p "$R/$d"; fi
done
cp "$RIG_BUSYBOX" "$R/bin/busybox"
for applet in $("$R/bin/busybox" --list); do
    [ -e "$R/bin/$applet" ] || ln -s busybox "$R/bin/$applet"
done
for applet in modprobe insmod rmmod lsmod poweroff reboot halt; do ln -sf ../bin/busybox "$R/sbin/$applet"; done

copy_libs() {  # copy the shared libraries and loader of a dynamic ELF file
    local f=$1 line lib
    LC_ALL=C ldd "$f" 2>/dev/null | while read -r line; do
        case "$line" in
            *"=> not found"*) log "warning: $f: ${line%% *} not found on the host"; lib= ;;
            *"=> /"*) lib=${line#*=> }; lib=${lib%% (*} ;;
            /*) lib=${line%% (*} ;;
            *) lib= ;;
        esac
        [ -n "${lib:-}" ] || continue
        [ -e "$R$lib" ] && continue
        mkdir -p "$R$(dirname "$lib")"
        cp -L "$lib" "$R$lib"
    done
}
add_file() {  # add_file HOST VM
    local src=$1 dst=$2 f
    case "$dst" in */) dst=$dst$(basename "$src") ;; esac
    mkdir -p "$R$(dirname "$dst")"
    cp -RLp "$src" "$R$dst" || return 1
    if [ -d "$src" ]; then
        while IFS= read -r -d '' f; do
            [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] && copy_libs "$f"
        done < <(find "$src" -type f -print0)
    elif [ "$(head -c4 "$src" | od -An -c | tr -d ' ')" = '177ELF' ]; then
        copy_libs "$src"
    fi
    return 0
}
add_file "$RIG_HCI_UART_ATTACH" /opt/rig/hci_uart_attach
[ -x "$RIG_MGMT_PROBE" ] && add_file "$RIG_MGMT_PROBE" /opt/rig/mgmt_probe
[ -x "${RIG_UWB_GADGET:-}" ] && add_file "$RIG_UWB_GADGET" /opt/rig/uwb_gadget
[ -x "${RIG_UDEV_RELAY:-}" ] && add_file "$RIG_UDEV_RELAY" /opt/rig/udev_relay
if [ "$BLUETOOTHD" = 1 ]; then
    # BlueZ as Debian installs it (build-rig.sh installs bluez and dbus): the programs at their
    # paths, main.conf untouched (defaults), the system bus's configuration and bluetoothd's
    # policy, and the users and groups the policy and dbus-daemon name
    for f in /usr/libexec/bluetooth/bluetoothd /usr/bin/bluetoothctl /usr/bin/dbus-daemon /usr/bin/dbus-send \
             /usr/share/dbus-1/system.conf /etc/dbus-1/system.d/bluetooth.conf /etc/bluetooth/main.conf; do
        [ -e "$f" ] || { log "--bluetoothd: $f is missing (apt-get install bluez dbus)"; exit 3; }
        add_file "$f" "$f" || { log "cannot copy $f"; exit 3; }
    done
    printf 'root:x:0:0:root:/root:/bin/sh\nmessagebus:x:100:102::/nonexistent:/bin/false\n' >"$R/etc/passwd"
    printf 'root:x:0:\nmessagebus:x:102:\nbluetooth:x:112:\n' >"$R/etc/group"
    mkdir -p "$R/var/lib/bluetooth" "$R/usr/share/dbus-1/system.d" "$R/usr/share/dbus-1/system-services"
    chmod 700 "$R/var/lib/bluetooth"
    # libdbus needs a machine id; systemd would have written one at first boot
    od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$R/etc/machine-id"; echo >>"$R/etc/machine-id"
fi
SCRIPT_VM=/opt/rig/$(basename "$SCRIPT")
for spec in "${FILES[@]+"${FILES[@]}"}"; do
    src=${spec%%:*}
    if [ "$src" = "$spec" ]; then dst=/opt/rig/$(basename "$src"); else dst=${spec#*:}; fi
    [ -e "$src" ] || { log "--file $src: no such file"; exit 2; }
    add_file "$src" "$dst" || { log "cannot copy $src"; exit 3; }
done
cp "$SCRIPT" "$R$SCRIPT_VM"

# kernel modules: the closure of what is needed, then depmod so that busybox modprobe (also
# the kernel's request_module) can load them by name or alias
# sha512, ctr and drbg first: ecdh_generic (needed by bluetooth for LE Secure
# Connections) generates keys with the default RNG; without it its self-test fails (EFAULT)
MODS=(sha512_generic ctr drbg hci_uart cmac ecb ccm "${MODULES[@]+"${MODULES[@]}"}")
KMOD_DIR=$RIG_KROOT/lib/modules/$RIG_KVER
mkdir -p "$R/lib/modules/$RIG_KVER"
for f in modules.order modules.builtin modules.builtin.modinfo; do
    cp "$KMOD_DIR/$f" "$R/lib/modules/$RIG_KVER/"
done
for m in "${MODS[@]}"; do
    path=$(/sbin/modprobe -d "$RIG_KROOT" -S "$RIG_KVER" --show-depends "$m" 2>/dev/null | awk '$1=="insmod"{print $2}')
    if [ -z "$path" ]; then
        if grep -q "/${m//_/[_-]}.ko" "$KMOD_DIR/modules.builtin"; then continue; fi
        log "kernel module $m not found in $KMOD_DIR"; exit 2
    fi
    for p in $path; do
        rel=${p#"$RIG_KROOT"}
        mkdir -p "$R$(dirname "$rel")"
        cp "$p" "$R$rel"
    done
done
/sbin/depmod -b "$R" "$RIG_KVER" || { log "depmod failed"; exit 3; }

TTYS=()
for ((i = 0; i < ADAPTERS; i++)); do
    TTYS+=("ttyS$((i + 1))")   # ISA COM2..COM4, then the ports of a pci-serial-4x (ttyS4..)
done
cat >"$R/etc/rig.conf" <<EOF
RIG_ADAPTERS=$ADAPTERS
RIG_TTYS="${TTYS[*]+"${TTYS[*]}"}"
RIG_MODULES="${MODS[*]}"
RIG_SCRIPT=$SCRIPT_VM
EOF
{
    printf 'set --'
    for a in "${SCRIPT_ARGS[@]+"${SCRIPT_ARGS[@]}"}"; do printf " '%s'" "${a//\'/\'\\\'\'}"; done
    printf '\n'
} >"$R/etc/rig.args"
cp "$HERE/vm-init.sh" "$R/init"
chmod 755 "$R/init" "$R$SCRIPT_VM"
(cd "$R" && find . | LC_ALL=C sort | "$R/bin/busybox" cpio -o -H newc -R 0:0 2>/dev/null) | gzip -1 >"$WORK/initramfs.gz"
log "initramfs $(du -k "$WORK/initramfs.gz" | cut -f1) KiB ready at $(elapsed) s"

# ------------------------------------------------------------------ controllers
if [ "$ADAPTERS" -gt 0 ]; then
    HCI_ARGS=()
    [ -n "$HCI_LOG" ] && HCI_ARGS=(--log-hci "$HCI_LOG")
    "$RIG_PYTHON" "$HERE/bumble_controllers.py" --count "$ADAPTERS" --ports-file "$WORK/ports" \
        --control "$WORK/bumble.ctl" -v "${HCI_ARGS[@]+"${HCI_ARGS[@]}"}" \
        "${BUMBLE_ARGS[@]+"${BUMBLE_ARGS[@]}"}" 2>"$WORK/bumble.log" &
    BUMBLE_PID=$!
    for _ in $(seq 150); do
        [ -s "$WORK/ports" ] && break
        kill -0 "$BUMBLE_PID" 2>/dev/null || break
        sleep 0.1
    done
    [ -s "$WORK/ports" ] || { log "Bumble controllers did not start:"; cat "$WORK/bumble.log" >&2; exit 3; }
    read -r -a PORTS <"$WORK/ports"
    log "Bumble controllers on ports ${PORTS[*]} at $(elapsed) s"
fi

# ------------------------------------------------------------------ qemu
QEMU=(qemu-system-x86_64 -nographic -no-reboot -accel tcg -smp "$SMP" -m "$MEM" -net none
      -kernel "${RIG_KERNEL_IMAGE:-$RIG_VMLINUZ}" -initrd "$WORK/initramfs.gz"
      -append "console=ttyS0 quiet panic=-1 8250.nr_uarts=$((ADAPTERS > 3 ? ADAPTERS + 1 : 4)) ${APPEND}"
      -chardev stdio,id=con,signal=off -serial chardev:con -monitor none)
PCI_SERIAL=()
for ((i = 0; i < ADAPTERS; i++)); do
    QEMU+=(-chardev "socket,id=bt$i,host=127.0.0.1,port=${PORTS[$i]},reconnect=1")
    if [ "$i" -lt 3 ]; then QEMU+=(-serial "chardev:bt$i"); else PCI_SERIAL+=("bt$i"); fi
done
if [ ${#PCI_SERIAL[@]} -gt 0 ]; then
    dev=pci-serial-4x
    for ((j = 0; j < ${#PCI_SERIAL[@]}; j++)); do dev+=",chardev$((j + 1))=${PCI_SERIAL[$j]}"; done
    QEMU+=(-device "$dev")
fi
CONSOLE=$WORK/console.log
: >"$CONSOLE"
"${QEMU[@]}" </dev/null > >(LC_ALL=C sed -u -e 's/\r$//' -e 's/\x1bc//g' -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' | tee "$CONSOLE") 2>&1 &
QEMU_PID=$!
log "qemu started at $(elapsed) s"

# ------------------------------------------------------------------ wait
DEADLINE=$(( $(date +%s) + TIMEOUT ))
CTL_DONE=0
STATUS=
READY_AT=
while kill -0 "$QEMU_PID" 2>/dev/null; do
    if [ -e "$WORK/bumble.ctl" ]; then
        n=0
        while IFS= read -r line; do
            n=$((n + 1))
            [ "$n" -le "$CTL_DONE" ] && continue
            CTL_DONE=$n
            cmd=${line#VMRIG-CTL }
            reply=$("$RIG_PYTHON" "$HERE/bumble_controllers.py" ctl "$WORK/bumble.ctl" "$cmd" 2>&1)
            log "VMRIG-CTL $cmd -> $reply"
        done < <(grep -a '^VMRIG-CTL ' "$CONSOLE")
    fi
    if grep -aq '^VMRIG-EXIT [0-9]' "$CONSOLE"; then
        STATUS=$(grep -a '^VMRIG-EXIT [0-9]' "$CONSOLE" | tail -1 | awk '{print $2}')
        READY_AT=$(elapsed)
        # give the guest a moment to power off by itself
        for _ in $(seq 50); do kill -0 "$QEMU_PID" 2>/dev/null || break; sleep 0.1; done
        break
    fi
    if [ "$(date +%s)" -ge "$DEADLINE" ]; then
        log "timeout after $TIMEOUT s"
        STATUS=124
        break
    fi
    sleep 0.2
done
[ -n "$STATUS" ] || STATUS=$(grep -a '^VMRIG-EXIT [0-9]' "$CONSOLE" | tail -1 | awk '{print $2}')
if [ -z "$STATUS" ]; then log "the VM stopped without reporting a status"; STATUS=125; fi
if [ "$STATUS" != 0 ] && [ -s "$WORK/bumble.log" ]; then
    log "Bumble log (last 20 lines):"; tail -20 "$WORK/bumble.log" | sed 's/^/  | /' >&2
fi
log "exit status $STATUS after $(elapsed) s${READY_AT:+ (script done at $READY_AT s)}"
exit "$STATUS"
