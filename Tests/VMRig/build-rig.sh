#!/bin/bash
# Prepares everything the VM rig needs, cached in .build-vm/ at the repository root.
# Idempotent: a second run does nothing but check (well under a second).
#
#   Tests/VMRig/build-rig.sh [--quiet]
#
# Environment:
#   RIG_CACHE=DIR              cache directory (default: <repo>/.build-vm)
#   RIG_KERNEL_VERSION=V       kernel package linux-image-V (default: the one linux-image-amd64
#                              depends on today; once a kernel is cached it is kept). A Debian 13
#                              kernel (V = 6.12.117+deb13-amd64, or `trixie` for the newest) comes
#                              from trixie's package index: 6.12, the series Raspberry Pi OS runs.
#   RIG_FULL_KERNEL=1          extract every module (default: only net, crypto, lib, arch and
#                              the bluetooth, usb, tty, char and leds drivers: 72 MB, not 400)
#
# Installs with apt-get when missing: qemu-system-x86 (qemu-system-x86_64), busybox-static,
# gcc + libc6-dev (static libc), kmod (depmod), curl, xz-utils, zstd, python3-venv, bluez (bluetoothd, bluetoothctl and,
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
# the Debian 13 kernel package: fetched with curl, its modules unpacked with xz
command -v curl >/dev/null || need+=(curl)
command -v xz >/dev/null || need+=(xz-utils)
command -v zstd >/dev/null || need+=(zstd)
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
# Debian 13's kernel packages are not in this machine's (Debian 12's) apt sources: they come from
# trixie's package index on deb.debian.org, checked against its SHA256.
TRIXIE=http://deb.debian.org/debian
trixie_kernel() {   # prints "version filename sha256" of linux-image-$1 (default: the newest)
    curl -fsS "$TRIXIE/dists/trixie/main/binary-amd64/Packages.xz" | /usr/bin/python3 -c '
import lzma, re, sys
want = sys.argv[1]
found = []
for stanza in lzma.decompress(sys.stdin.buffer.read()).decode().split("\n\n"):
    fields = dict(re.findall(r"^([A-Za-z0-9-]+): (.*)$", stanza, re.M))
    m = re.fullmatch(r"linux-image-(\d+)\.(\d+)\.(\d+)\+deb13-amd64", fields.get("Package", ""))
    if m and (not want or fields["Package"] == "linux-image-" + want):
        found.append((tuple(map(int, m.groups())), fields["Package"][len("linux-image-"):], fields["Filename"], fields["SHA256"]))
if not found:
    sys.exit("no such kernel package in trixie: " + (want or "linux-image-*+deb13-amd64"))
print(*max(found)[1:])
' "${1:-}"
}
KVER=${RIG_KERNEL_VERSION:-}
if [ "$KVER" = trixie ]; then
    KVER=$(trixie_kernel | cut -d' ' -f1)
    [ -n "$KVER" ] || { echo "build-rig: cannot find Debian 13's current kernel in $TRIXIE" >&2; exit 1; }
fi
if [ -z "$KVER" ]; then
    # keep a cached kernel of the default series: the rig should not change under a test because
    # Debian moved on (a Debian 13 kernel in the cache is used only when named)
    for d in "$CACHE"/kernel/*/; do
        [[ $d == *+deb13-amd64/ ]] && continue
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
    if [[ $KVER == *+deb13-amd64 ]]; then
        read -r _ file sha < <(trixie_kernel "$KVER")
        curl -fsS -o "$CACHE/dl/$(basename "$file")" "$TRIXIE/$file" || exit 1
        echo "$sha  $CACHE/dl/$(basename "$file")" | sha256sum -c --quiet - || { echo "build-rig: $file: wrong SHA256" >&2; exit 1; }
    else
        ( cd "$CACHE/dl" && apt-get download "linux-image-$KVER" >/dev/null 2>"$CACHE/dl/apt.err" ) || {
            apt-get update -qq >/dev/null 2>&1 || true
            ( cd "$CACHE/dl" && apt-get download "linux-image-$KVER" 2>&1 ) || exit 1
        }
    fi
    DEB=$(ls "$CACHE"/dl/linux-image-"$KVER"_*.deb)
    say "extracting $(basename "$DEB")"
    # Debian 13 keeps modules under /usr/lib/modules (merged /usr), xz-compressed
    M="./lib/modules/$KVER"
    dpkg-deb -c "$DEB" >"$CACHE/dl/contents"
    grep -q " \./usr/lib/modules/$KVER/" "$CACHE/dl/contents" && M="./usr/lib/modules/$KVER"
    if [ "${RIG_FULL_KERNEL:-0}" = 1 ]; then
        dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$KROOT"
    else
        dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$KROOT" --wildcards \
            "./boot/vmlinuz-$KVER" "./boot/config-$KVER" \
            "$M/modules.order" "$M/modules.builtin" "$M/modules.builtin.modinfo" \
            "$M/kernel/net" "$M/kernel/crypto" "$M/kernel/lib" "$M/kernel/arch" \
            "$M/kernel/drivers/bluetooth" "$M/kernel/drivers/usb" "$M/kernel/drivers/tty" \
            "$M/kernel/drivers/char" "$M/kernel/drivers/leds" "$M/kernel/fs/configfs"
    fi
    if [ "$M" = "./usr/lib/modules/$KVER" ]; then
        mkdir -p "$KROOT/lib/modules"
        mv "$KROOT/usr/lib/modules/$KVER" "$KROOT/lib/modules/"
        rm -rf "$KROOT/usr"
    fi
    # busybox modprobe in the initramfs loads plain .ko files
    find "$KROOT/lib/modules/$KVER" -name '*.ko.xz' -exec xz -d {} +
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
import lzma, subprocess, sys
data = open(sys.argv[1], "rb").read()
xz, zstd = data.find(b"\xfd7zXZ\x00"), data.find(b"\x28\xb5\x2f\xfd")
if xz >= 0:                                 # CONFIG_KERNEL_XZ payload of the bzImage (Debian 12)
    out = lzma.LZMADecompressor().decompress(data[xz:])
elif zstd >= 0:                             # CONFIG_KERNEL_ZSTD (Debian 13): the CLI, which
    # complains about the size word after the frame but writes the whole kernel
    out = subprocess.run(["zstd", "-dc"], input=data[zstd:], capture_output=True).stdout
else:
    sys.exit(1)
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
