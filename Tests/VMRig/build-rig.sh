#!/bin/bash
# Prepares everything the VM rig needs, cached in .build-vm/ at the repository root.
# Idempotent: a second run does nothing but check (well under a second).
#
#   Tests/VMRig/build-rig.sh [--quiet]
#
# Environment:
#   RIG_CACHE=DIR              cache directory (default: <repo>/.build-vm)
#   RIG_KERNEL_VERSION=V       kernel package linux-image-V (default: the one linux-image-amd64
#                              depends on today; once a kernel is cached it is kept)
#   RIG_FULL_KERNEL=1          extract every module (default: only net, crypto, lib, arch and
#                              the bluetooth, usb, tty, char and leds drivers: 72 MB, not 400)
#
# Installs with apt-get when missing: qemu-system-x86 (qemu-system-x86_64), busybox-static,
# gcc + libc6-dev (static libc), kmod (depmod), python3-venv, bluez (bluetoothd, bluetoothctl and,
# through its dependency on dbus, dbus-daemon and dbus-send: run-vm.sh --bluetoothd). Downloads and extracts the
# Debian kernel package, runs depmod, extracts an uncompressed vmlinux from the vmlinuz (qemu
# boots it through its PVH entry, twice as fast under TCG), creates the Bumble venv
# (bumble==$BUMBLE_VERSION, noiseprotocol) and builds the static guest programs hci_uart_attach and
# mgmt_probe. Writes the paths to $RIG_CACHE/rig.env (sourced by run-vm.sh) and prints them.
# uwb_gadget and udev_relay are static guest programs too (USB boards on dummy_hcd), and
# l2cap_close_race (kernel-race.sh).
# Time on a fresh machine: ~10 s of apt plus ~20 s; cache ~200 MB.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${RIG_CACHE:-$ROOT/.build-vm}
BUMBLE_VERSION=0.0.236
QUIET=0
[ "${1:-}" = "--quiet" ] && QUIET=1
say() { [ "$QUIET" = 1 ] || echo "build-rig: $*" >&2; }
START=$(date +%s)
mkdir -p "$CACHE"

# ------------------------------------------------------------------ Debian packages
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
# busybox must be the static one (package busybox-static) to run in the initramfs
if [ ! -x /bin/busybox ] || LC_ALL=C ldd /bin/busybox 2>&1 | grep -q '=>'; then need+=(busybox-static); fi
command -v gcc >/dev/null || need+=(gcc)
[ -e /usr/lib/x86_64-linux-gnu/libc.a ] || need+=(libc6-dev)
[ -x /sbin/depmod ] || [ -x /usr/sbin/depmod ] || need+=(kmod)
[ -x /usr/bin/python3 ] || need+=(python3)
/usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
# Debian's BlueZ daemon for the VM (run-vm.sh --bluetoothd copies the host's programs)
if [ ! -x /usr/libexec/bluetooth/bluetoothd ] || [ ! -x /usr/bin/bluetoothctl ] || [ ! -x /usr/bin/dbus-daemon ] \
    || [ ! -x /usr/bin/dbus-send ]; then need+=(bluez); fi
if [ ${#need[@]} -gt 0 ]; then
    say "apt-get install ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -qq --no-install-recommends "${need[@]}" >"$CACHE/apt.log" 2>&1; then
        apt-get update -qq >>"$CACHE/apt.log" 2>&1
        apt-get install -y -qq --no-install-recommends "${need[@]}" >>"$CACHE/apt.log" 2>&1 \
            || { cat "$CACHE/apt.log" >&2; exit 1; }
    fi
fi
DEPMOD=$(command -v depmod || echo /sbin/depmod)

# ------------------------------------------------------------------ kernel
KVER=${RIG_KERNEL_VERSION:-}
if [ -z "$KVER" ]; then
    # keep a cached kernel: the rig should not change under a test because Debian moved on
    for d in "$CACHE"/kernel/*/; do
        [ -e "$d/.complete" ] && KVER=$(basename "$d")
    done
fi
if [ -z "$KVER" ]; then
    resolve() { apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*-amd64\)$/\1/p' | head -1; }
    KVER=$(resolve)
    if [ -z "$KVER" ]; then apt-get update -qq >/dev/null 2>&1 || true; KVER=$(resolve); fi
    [ -n "$KVER" ] || { echo "build-rig: cannot resolve the current linux-image-*-amd64 (apt-cache depends linux-image-amd64)" >&2; exit 1; }
fi
KROOT=$CACHE/kernel/$KVER
# configfs (for USB gadgets) joined the extracted set later: a cache without it is re-extracted
if [ -e "$KROOT/.complete" ] && [ -z "$(find "$KROOT/lib/modules/$KVER/kernel/fs/configfs" -name 'configfs.ko*' 2>/dev/null)" ]; then
    say "cached kernel lacks fs/configfs: extracting it again"
    rm -f "$KROOT/.complete"
fi
if [ ! -e "$KROOT/.complete" ]; then
    say "downloading linux-image-$KVER"
    rm -rf "$KROOT" "$CACHE/dl"
    mkdir -p "$CACHE/dl" "$KROOT"
    ( cd "$CACHE/dl" && apt-get download "linux-image-$KVER" >/dev/null 2>"$CACHE/dl/apt.err" ) || {
        apt-get update -qq >/dev/null 2>&1 || true
        ( cd "$CACHE/dl" && apt-get download "linux-image-$KVER" 2>&1 ) || exit 1
    }
    DEB=$(ls "$CACHE"/dl/linux-image-"$KVER"_*.deb)
    say "extracting $(basename "$DEB")"
    if [ "${RIG_FULL_KERNEL:-0}" = 1 ]; then
        dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$KROOT"
    else
        M="./lib/modules/$KVER"
        dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$KROOT" --wildcards \
            "./boot/vmlinuz-$KVER" "./boot/config-$KVER" \
            "$M/modules.order" "$M/modules.builtin" "$M/modules.builtin.modinfo" \
            "$M/kernel/net" "$M/kernel/crypto" "$M/kernel/lib" "$M/kernel/arch" \
            "$M/kernel/drivers/bluetooth" "$M/kernel/drivers/usb" "$M/kernel/drivers/tty" \
            "$M/kernel/drivers/char" "$M/kernel/drivers/leds" "$M/kernel/fs/configfs"
    fi
    "$DEPMOD" -b "$KROOT" "$KVER"
    rm -rf "$CACHE/dl"
    touch "$KROOT/.complete"
fi
VMLINUZ=$KROOT/boot/vmlinuz-$KVER
# An uncompressed vmlinux boots directly through its PVH entry point (CONFIG_PVH): no
# decompression under TCG, which halves the boot time (~6 s instead of ~11 s from start to exit).
VMLINUX=$KROOT/boot/vmlinux-$KVER
if [ ! -e "$VMLINUX" ] && [ ! -e "$VMLINUX.none" ]; then
    if grep -qx 'CONFIG_PVH=y' "$KROOT/boot/config-$KVER" && /usr/bin/python3 - "$VMLINUZ" "$VMLINUX" <<'PY'
import lzma, sys
data = open(sys.argv[1], "rb").read()
off = data.find(b"\xfd7zXZ\x00")          # CONFIG_KERNEL_XZ payload of the bzImage
if off < 0:
    sys.exit(1)
out = lzma.LZMADecompressor().decompress(data[off:])
if out[:4] != b"\x7fELF":
    sys.exit(1)
open(sys.argv[2] + ".tmp", "wb").write(out)
PY
    then
        mv "$VMLINUX.tmp" "$VMLINUX"
    else
        rm -f "$VMLINUX.tmp"; touch "$VMLINUX.none"
        say "no PVH-bootable vmlinux could be extracted; booting the compressed vmlinuz"
    fi
fi
[ -e "$VMLINUX" ] && KERNEL_IMAGE=$VMLINUX || KERNEL_IMAGE=$VMLINUZ

# ------------------------------------------------------------------ Bumble venv
# noiseprotocol: the attackers' handshake message 1 (bumble_attackers.py, ble-attack.sh)
VENV=$CACHE/venv
if [ ! -e "$VENV/.bumble-$BUMBLE_VERSION+noise" ]; then
    say "creating $VENV with bumble==$BUMBLE_VERSION and noiseprotocol"
    rm -rf "$VENV"
    /usr/bin/python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "bumble==$BUMBLE_VERSION" "noiseprotocol==0.3.1"
    touch "$VENV/.bumble-$BUMBLE_VERSION+noise"
fi

# ------------------------------------------------------------------ static guest programs
mkdir -p "$CACHE/bin"
for prog in hci_uart_attach mgmt_probe uwb_gadget udev_relay l2cap_close_race; do
    src=$HERE/$prog.c out=$CACHE/bin/$prog
    [ -e "$src" ] || continue
    if [ ! -x "$out" ] || [ "$src" -nt "$out" ]; then
        say "compiling $prog"
        gcc -static -O2 -Wall -Wextra -pthread -o "$out.tmp" "$src"
        mv "$out.tmp" "$out"
    fi
done

{
    printf 'RIG_CACHE=%q\n' "$CACHE"
    printf 'RIG_KVER=%q\n' "$KVER"
    printf 'RIG_KROOT=%q\n' "$KROOT"
    printf 'RIG_VMLINUZ=%q\n' "$VMLINUZ"
    printf 'RIG_KERNEL_IMAGE=%q\n' "$KERNEL_IMAGE"
    printf 'RIG_PYTHON=%q\n' "$VENV/bin/python"
    printf 'RIG_BUSYBOX=%q\n' /bin/busybox
    printf 'RIG_HCI_UART_ATTACH=%q\n' "$CACHE/bin/hci_uart_attach"
    printf 'RIG_MGMT_PROBE=%q\n' "$CACHE/bin/mgmt_probe"
    printf 'RIG_UWB_GADGET=%q\n' "$CACHE/bin/uwb_gadget"
    printf 'RIG_UDEV_RELAY=%q\n' "$CACHE/bin/udev_relay"
} >"$CACHE/rig.env.tmp"
mv "$CACHE/rig.env.tmp" "$CACHE/rig.env"
[ "$QUIET" = 1 ] || { cat "$CACHE/rig.env"; say "done in $(( $(date +%s) - START )) s"; }
