# Convenience targets; the scripts are the source of truth.
.PHONY: test hall sanitize rig ble-bump rig-attack rig-att rig-dbus-gatt rig-phone rig-android rig-kernel-race vm-selftest e2e-repeat fuzz-long wireshark-uci package soak flood

test:          ## everything CI runs (Swift tests, TSan, fuzzing, end-to-end checks, emulated USB, VM rigs)
	scripts/test

MINUTES ?= 60
soak:          ## one rig for MINUTES (60) among 100 visitors coming and going; RSS, descriptors, threads sampled each minute must stay flat (not in CI)
	scripts/soak $(MINUTES)

SECONDS_PER_RUN ?= 40
RATE ?= 2
flood:         ## a keyed rig beside 50 and 200 attacker nodes of each kind (RATE (2) attempts/s each, SECONDS_PER_RUN (40) a run; FLOOD_OPEN=1: an open event): bump delay, CPU, RSS, events, SIGTERM (not in CI)
	scripts/flood $(SECONDS_PER_RUN) $(RATE)

RIGS ?= 10,30,100,200
hall:          ## crowded halls of RIGS (10,30,100,200) rigs on the shared UWB and BLE air: adaptive and fixed scheduling and private air side by side (docs/PROXIMITY.md, Shared air; about an hour; not in CI)
	swift build -c release --product proximity-eval && .build/release/proximity-eval --hall $(RIGS)

fuzz-long:     ## every libFuzzer target to 10^6 executions (about 25 min); corpus kept in .build-fuzz/corpus
	scripts/fuzz long 1000000

wireshark-uci: ## every uci.pcap under CAPTURE=DIR (a --capture directory) through Wireshark 4.4's UCI dissector (a Debian 13 chroot in .build-vm)
	scripts/wireshark-uci $(or $(CAPTURE),$(error set CAPTURE=DIR, a --capture directory or a uci.pcap))

package:       ## dist/nearby-bridge_<version>-1_<arch>.deb for this machine (arm64 on a Pi); scripts/test-package DEB checks it
	scripts/package

sanitize:      ## the Swift suites under ThreadSanitizer (in test) and AddressSanitizer (not in test)
	scripts/sanitize

rig:           ## two bridges on a real kernel: USB boards on dummy_hcd, Bumble-backed adapters, bluetoothd, faults
	scripts/bootstrap --python
	Tests/VMRig/two-rigs.sh .venv/bin/python3

ble-bump:      ## two bridges on kernel Bluetooth adapters (UWB over TCP)
	scripts/bootstrap --python
	Tests/VMRig/ble-bump.sh .venv/bin/python3

rig-attack:    ## two keyed bridges on kernel Bluetooth adapters bump while Bumble attackers replay adverts and handshakes, send garbage and hold links
	scripts/bootstrap --python
	Tests/VMRig/ble-attack.sh .venv/bin/python3

rig-att:       ## the kernel-socket GATT backend serves the GATT database on a real kernel's LE ATT channel, without and beside bluetoothd (~1 min, not in CI)
	swift build --build-tests
	Tests/VMRig/att-kernel.sh
	Tests/VMRig/att-kernel.sh --bluetoothd

rig-dbus-gatt: ## the D-Bus GATT backend registered with Debian's bluetoothd on a real kernel, a kernel ATT client on another adapter (~1 min)
	swift build --build-tests
	Tests/VMRig/dbus-gatt.sh

rig-phone:     ## an iPhone (a Bumble host running Apple's accessory flow) ranges with `run`'s rig beside bluetoothd and without it (~1.5 min)
	scripts/bootstrap --python
	Tests/VMRig/phone.sh .venv/bin/python3
	Tests/VMRig/phone.sh .venv/bin/python3 --no-bluetoothd

rig-android:   ## an Android phone (a Bumble host running the ranging OOB exchange, v3 and v1) ranges with `run`'s rig beside bluetoothd and without it (~1.5 min)
	scripts/bootstrap --python
	Tests/VMRig/phone.sh .venv/bin/python3 --android
	Tests/VMRig/phone.sh .venv/bin/python3 --no-bluetoothd --android

rig-kernel-race: ## the Debian 12 kernel BUG a closed connecting L2CAP socket hits, reproduced, and a way around it (~7 min)
	Tests/VMRig/kernel-race.sh

vm-selftest:   ## the VM rig itself, without the project's code
	Tests/VMRig/selftest.sh

N ?= 20
e2e-repeat:    ## each end-to-end script N times in a row (default 20), stopping at the first failure
	scripts/bootstrap --python
	swift build
	for i in $$(seq $(N)); do echo "== bridge-e2e $$i/$(N)" >&2; Tests/USBEmulation/bridge-e2e.sh .build/debug/nearby-bridge .venv/bin/python3 || exit 1; done
	for i in $$(seq $(N)); do echo "== ble-bump $$i/$(N)" >&2; Tests/VMRig/ble-bump.sh .venv/bin/python3 || exit 1; done
	for i in $$(seq $(N)); do echo "== two-rigs $$i/$(N)" >&2; Tests/VMRig/two-rigs.sh .venv/bin/python3 || exit 1; done
