# Convenience targets; the scripts are the source of truth.
.PHONY: test sanitize rig ble-bump vm-selftest

test:          ## everything CI runs (Swift tests, end-to-end checks, emulated USB, VM rigs)
	scripts/test

sanitize:      ## the Swift suites under ThreadSanitizer and AddressSanitizer (part of test)
	scripts/sanitize

rig:           ## two bridges on a real kernel: USB boards on dummy_hcd, Bumble-backed adapters, faults
	scripts/bootstrap --python
	Tests/VMRig/two-rigs.sh .venv/bin/python3

ble-bump:      ## two bridges on kernel Bluetooth adapters (UWB over TCP)
	scripts/bootstrap --python
	Tests/VMRig/ble-bump.sh .venv/bin/python3

vm-selftest:   ## the VM rig itself, without the project's code
	Tests/VMRig/selftest.sh
