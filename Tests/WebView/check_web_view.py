#!/usr/bin/env python3
"""The web view end to end, with clients that are not ours: `/state` and `/events` read with
Python's standard library (resume with Last-Event-ID; the lines must be stdout's, byte for
byte), the token rule when bound beyond loopback, a client that never reads (stdout must not
change), and the page in a real browser (headless Chromium: its DOM must show the peers and a
bump; a screenshot is kept for people to look at).

    Tests/WebView/check_web_view.py PATH/TO/nearby-bridge SCREENSHOT.png
"""
import base64
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

binary, screenshot = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp()


def fail(message):
    sys.exit(f"FAIL  {message}")


def start(*args):
    """Starts `binary args` with stdout and stderr in files; returns (process, port, token)."""
    out = open(f"{work}/{len(args)}-{time.time()}.jsonl", "w")
    err_path = out.name + ".err"
    process = subprocess.Popen([binary, *args], stdout=out, stderr=open(err_path, "w"))
    for _ in range(200):
        match = re.search(r"web view on http://[0-9.]+:(\d+)/(?:\?token=([0-9a-f]+))?", open(err_path).read())
        if match:
            return process, int(match.group(1)), match.group(2), out.name
        time.sleep(0.05)
    process.kill()
    fail(f"no 'web view on' line: {open(err_path).read()}")


def events(port, last_id=None, count=20, timeout=20):
    """Reads `count` events from /events (resuming after `last_id`): [(id, data)]."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/events")
    if last_id is not None:
        request.add_header("Last-Event-ID", str(last_id))
    got, event_id = [], None
    with urllib.request.urlopen(request, timeout=timeout) as response:
        if response.headers.get("Content-Type") != "text/event-stream":
            fail(f"/events is {response.headers.get('Content-Type')}")
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("data: "):
                got.append((event_id, line[6:]))
                if len(got) == count:
                    return got
    fail("the event stream ended early")


# 1. /state, /events, resume: the lines are stdout's own (same seq, same bytes).
demo, port, _, stdout_path = start("demo", "--speed", "2", "--ranges", "--http", "127.0.0.1:0")
state = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/state", timeout=10))
if state.get("near") != 1.0 or state.get("far") != 1.5 or not state.get("rigs"):
    fail(f"/state: {json.dumps(state)[:300]}")
first = events(port, count=30)
last_id = first[-1][0]
time.sleep(1.0)  # the browser is away; lines go on
resumed = events(port, last_id=last_id, count=40)
from prometheus_client.parser import text_string_to_metric_families  # PyPI: prometheus_client
metrics = {}
for family in text_string_to_metric_families(urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()):
    for sample in family.samples:
        metrics[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
if resumed[0][0] != last_id + 1 or [i for i, _ in resumed] != list(range(last_id + 1, last_id + 41)):
    fail(f"resume after {last_id} gave ids {[i for i, _ in resumed][:5]}…")
if demo.wait(timeout=120) != 0:
    fail(f"the demo with the web view exited {demo.returncode}")
stdout = {json.loads(line)["seq"]: line.rstrip("\n") for line in open(stdout_path)}
for event_id, data in first + resumed:
    if stdout.get(event_id) != data:
        fail(f"event {event_id} differs from stdout's line {event_id}:\n  web:    {data}\n  stdout: {stdout.get(event_id)}")
print(f"ok    /state, /events and a resume after {last_id}: {len(first) + len(resumed)} lines, each exactly stdout's")
# /metrics, parsed by the Prometheus client's own parser: the events it counted up to its
# `nearby_event_seq` are exactly stdout's lines up to that seq, type by type.
seq = int(metrics[("nearby_event_seq", ())])
written = {}
for number, line in stdout.items():
    if number <= seq:
        kind = json.loads(line)["type"]
        written[kind] = written.get(kind, 0) + 1
counted = {dict(labels)["type"]: int(value) for (name, labels), value in metrics.items() if name == "nearby_events_total"}
if seq < 100 or counted != written:
    fail(f"/metrics counted {counted} up to seq {seq}, stdout has {written}")
if metrics.get(("nearby_uci_command_duration_seconds_count", (("command", "SESSION_START"),)), 0) < 1:
    fail("/metrics has no SESSION_START latency")
if not any(name == "nearby_radio_up" and value == 1 for (name, _), value in metrics.items()):
    fail("/metrics says no radio is up")
if not any(name == "nearby_ble_links" and value >= 1 for (name, _), value in metrics.items()):
    fail("/metrics counts no open Bluetooth link while peers range")
print(f"ok    /metrics parses (prometheus_client); its event counts up to seq {seq} match stdout's, type by type")

# 2. Bound beyond loopback: a token is required.
demo, port, token, _ = start("demo", "--speed", "1", "--duration", "20", "--http", "0.0.0.0:0")
if not token:
    fail("no token printed for 0.0.0.0")
try:
    urllib.request.urlopen(f"http://127.0.0.1:{port}/state", timeout=5)
    fail("/state without the token was served")
except urllib.error.HTTPError as error:
    if error.code != 403:
        fail(f"/state without the token: HTTP {error.code}")
json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/state?token={token}", timeout=5))
demo.terminate()
demo.wait(timeout=30)
print("ok    bound to 0.0.0.0: 403 without the token, served with it")

# 3. A client that connects to /events and never reads changes nothing on stdout.
def demo_stdout(*extra, stall=False):
    process, port, _, path = start("demo", "--speed", "0", "--ranges", "--seed", "3", "--http", "127.0.0.1:0", *extra) if extra or stall \
        else (subprocess.Popen([binary, "demo", "--speed", "0", "--ranges", "--seed", "3"], stdout=open(f"{work}/plain.jsonl", "w"),
                               stderr=subprocess.DEVNULL), None, None, f"{work}/plain.jsonl")
    if stall:
        stalled = socket.create_connection(("127.0.0.1", port))
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")  # and never reads
    if process.wait(timeout=300) != 0:
        fail("the demo did not end cleanly with a stalled web client")
    return [json.dumps({k: v for k, v in json.loads(line).items() if k != "ts"}) for line in open(path)]
plain, stalled = demo_stdout(), demo_stdout(stall=True)
if plain != stalled:
    fail(f"stdout changed with a stalled web client: {len(plain)} vs {len(stalled)} lines")
print(f"ok    a web client that never reads: stdout the same {len(plain)} lines (timestamps aside)")

# 4. The page in a real browser: Chromium, headless, driven over its DevTools protocol; after a
# few seconds of live events its DOM must show the peers and a bump, and the page must say it
# is live (the EventSource connected). The screenshot is for people to look at.
import websocket  # websocket-client, from PyPI (scripts/bootstrap --python)

demo, port, _, _ = start("demo", "--speed", "2", "--duration", "240", "--http", "127.0.0.1:0")
deadline = time.time() + 60
while time.time() < deadline and '"lastBump"' not in urllib.request.urlopen(f"http://127.0.0.1:{port}/state").read().decode():
    time.sleep(0.5)
chrome = subprocess.Popen(
    ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0", f"--user-data-dir={work}/chromium",
     "--window-size=1000,900", f"http://127.0.0.1:{port}/"],
    stdout=subprocess.DEVNULL, stderr=open(f"{work}/chromium.err", "w"))
try:
    debugger = None
    for _ in range(200):
        match = re.search(r"DevTools listening on (ws://\S+)", open(f"{work}/chromium.err").read())
        if match:
            debugger = match.group(1)
            break
        time.sleep(0.1)
    if not debugger:
        fail("Chromium did not start its DevTools endpoint")
    devtools_port = re.search(r":(\d+)/", debugger).group(1)
    page = next(t for t in json.load(urllib.request.urlopen(f"http://127.0.0.1:{devtools_port}/json")) if t["type"] == "page")
    connection = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30)
    calls = 0

    def call(method, **params):
        global calls
        calls += 1
        connection.send(json.dumps({"id": calls, "method": method, "params": params}))
        while True:
            reply = json.loads(connection.recv())
            if reply.get("id") == calls:
                return reply.get("result", {})

    def evaluate(expression):
        return call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    status = None
    for _ in range(100):  # live within 10 s
        status = evaluate("document.getElementById('status').textContent")
        if status == "live":
            break
        time.sleep(0.1)
    else:
        fail(f"the page never went live: {status}")
    time.sleep(2)  # a few renders of live events
    dom = evaluate("document.documentElement.outerHTML")
    with open(screenshot, "wb") as file:
        file.write(base64.b64decode(call("Page.captureScreenshot", format="png")["data"]))
    connection.close()
finally:
    chrome.terminate()
    chrome.wait(timeout=30)
    demo.terminate()
    demo.wait(timeout=30)
rows = re.findall(r'<tr class="peer[^"]*" data-peer="[0-9a-f]{16}"><td>(\w+) [0-9a-f]{8}</td>', dom)
if not {"alice", "bob", "rig"} <= set(rows):
    fail(f"the page shows peers {sorted(set(rows))}")
if not re.search(r'<td class="bumpcell">#1 \d+s (Alice|Booth rig)</td>', dom):
    fail("the page shows no bump")
print(f"ok    headless Chromium over DevTools: live, {len(rows)} peer rows and a bump in the DOM; screenshot {screenshot}")
