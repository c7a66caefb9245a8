/// The one page the web view serves: no external assets, so it works offline on a phone joined
/// to the rig's Wi-Fi. It loads `/state`, then follows `/events` (the browser's EventSource
/// reconnects by itself with `Last-Event-ID`), and draws per rig its radios and a row per peer:
/// distance, zone, band, the last bump (highlighted for 5 s), a plot of the last 60 s of
/// distance with the near and far thresholds and bumps marked, and a radar where the board
/// measures direction.
enum WebPage {
    static let html = #"""
<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nearby-bridge</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 8px; background: #111; color: #eee; }
h1 { font-size: 16px; margin: 4px 0; } h2 { font-size: 14px; margin: 14px 0 4px; color: #9cf; }
table { border-collapse: collapse; width: 100%; } td, th { padding: 3px 6px; text-align: left; border-bottom: 1px solid #333; }
th { color: #999; font-weight: normal; } .near { color: #7f7; } .far { color: #aaa; } .lost { color: #f77; }
tr.bump { background: #553; } canvas { background: #1b1b1b; vertical-align: middle; }
#status { color: #999; }
</style></head>
<body>
<h1>nearby-bridge <span id="status">connecting…</span></h1>
<div id="rigs"></div>
<script>
"use strict";
const token = new URLSearchParams(location.search).get("token");
const q = token ? "?token=" + encodeURIComponent(token) : "";
const rigs = {};          // node -> {uwb, ble, peers: {id -> peer}}
let near = 1.0, far = 1.5, lines = 0;
const now = () => Date.now();
function rig(node) { return rigs[node] ||= { node, uwb: "?", ble: "?", peers: {} }; }
function peer(r, id) { return r.peers[id] ||= { id, name: null, distance: null, zone: "-", band: "-", ranged: false, bump: null, seen: now(), track: [], azimuth: null, lost: null }; }
function apply(e) {
  const r = rig(e.node), t = Date.parse(e.ts) || now();
  lines += 1;
  if (e.type === "device") { r[e.radio] = e.state + (e.backend ? " (" + e.backend + ")" : ""); return; }
  if (e.type === "stats") { if (e.round_failure_percent != null) r.air = { percent: e.round_failure_percent, full: e.air_full }; return; }
  if (!e.peer) return;
  const p = peer(r, e.peer); p.seen = t; p.lost = null;
  switch (e.type) {
    case "peer.found": case "peer.named": p.name = e.name; break;
    case "range": { const d = e.filtered ?? e.distance; if (d != null) { p.distance = d; p.ranged = true; p.track.push([t, d]); } if (e.azimuth != null) p.azimuth = e.azimuth; break; }
    case "near": case "far": p.zone = e.type; p.distance = e.distance; p.ranged = true; p.track.push([t, e.distance]); break;
    case "bump": p.bump = { id: e.bump_id, at: t, card: e.card && e.card.name }; if (e.distance != null) p.distance = e.distance; break;
    case "nearest": if (e.band) p.band = e.band; break;
    case "rough": p.band = e.band; break;
    case "peer.lost": p.lost = e.reason; break;
  }
  p.track = p.track.filter(([s]) => s > t - 60000);
}
function plot(p) {
  const c = document.createElement("canvas"); c.width = 240; c.height = 48;
  const g = c.getContext("2d"), end = Math.max(now(), p.seen), y = d => c.height - Math.min(d, 3) / 3 * c.height;
  const x = s => c.width - (end - s) / 60000 * c.width;
  g.strokeStyle = "#363"; g.beginPath(); g.moveTo(0, y(near)); g.lineTo(c.width, y(near)); g.stroke();
  g.strokeStyle = "#633"; g.beginPath(); g.moveTo(0, y(far)); g.lineTo(c.width, y(far)); g.stroke();
  g.strokeStyle = "#9cf"; g.beginPath(); p.track.forEach(([s, d], i) => i ? g.lineTo(x(s), y(d)) : g.moveTo(x(s), y(d))); g.stroke();
  if (p.bump) { g.fillStyle = "#fd5"; g.fillRect(x(p.bump.at) - 1, 0, 3, c.height); }
  return c;
}
function radar(p) {
  if (p.azimuth == null || p.distance == null) return document.createTextNode("");
  const c = document.createElement("canvas"); c.width = c.height = 48;
  const g = c.getContext("2d"), r = Math.min(p.distance, 3) / 3 * 22, a = p.azimuth * Math.PI / 180;
  g.strokeStyle = "#444"; g.beginPath(); g.arc(24, 24, 22, 0, 2 * Math.PI); g.stroke();
  g.fillStyle = "#9cf"; g.beginPath(); g.arc(24 + r * Math.sin(a), 24 - r * Math.cos(a), 3, 0, 2 * Math.PI); g.fill();
  return c;
}
function ago(t) { const s = Math.max(0, Math.round((now() - t) / 1000)); return s < 60 ? s + "s" : Math.round(s / 60) + "m"; }
function render() {
  const root = document.getElementById("rigs"); root.replaceChildren();
  for (const r of Object.values(rigs).sort((a, b) => a.node < b.node ? -1 : 1)) {
    const h = document.createElement("h2"); h.textContent = "rig " + r.node + " · uwb " + r.uwb + " · ble " + r.ble + (r.air ? " · air " + r.air.percent + " % of rounds failed" + (r.air.full ? ", full" : "") : ""); root.append(h);
    const table = document.createElement("table"); table.className = "peers"; table.dataset.rig = r.node;
    table.innerHTML = "<tr><th>peer</th><th>distance</th><th>zone</th><th>band</th><th>bump</th><th>seen</th><th>last 60 s</th><th></th></tr>";
    const peers = Object.values(r.peers).sort((a, b) => (a.lost ? 1 : 0) - (b.lost ? 1 : 0) || (a.distance ?? 1e9) - (b.distance ?? 1e9));
    for (const p of peers) {
      const tr = document.createElement("tr"); tr.className = "peer"; tr.dataset.peer = p.id;
      if (p.bump && now() - p.bump.at < 5000) tr.classList.add("bump");
      const cells = [(p.name ? p.name + " " : "") + p.id.slice(0, 8), p.distance == null ? "-" : p.distance.toFixed(2) + " m",
        p.lost ? "lost" : p.zone, p.band, p.bump ? "#" + p.bump.id + " " + ago(p.bump.at) + " " + (p.bump.card || "") : "-",
        p.lost ? "lost (" + p.lost + ")" : ago(p.seen)];
      cells.forEach((text, i) => { const td = document.createElement("td"); td.textContent = text; if (i === 2) td.className = p.lost ? "lost" : p.zone; if (i === 4 && p.bump) td.className = "bumpcell"; tr.append(td); });
      const plotCell = document.createElement("td"); plotCell.append(plot(p)); tr.append(plotCell);
      const radarCell = document.createElement("td"); radarCell.append(radar(p)); tr.append(radarCell);
      table.append(tr);
    }
    root.append(table);
  }
}
fetch("/state" + q).then(r => r.json()).then(s => {
  near = s.near; far = s.far;
  for (const r of s.rigs) {
    const x = rig(r.node); x.uwb = r.uwb || "?"; x.ble = r.ble || "?";
    if (r.roundFailurePercent != null) x.air = { percent: r.roundFailurePercent, full: r.airFull };
    for (const p of Object.values(r.peers)) Object.assign(peer(x, p.id), { name: p.name, distance: p.distance ?? null, zone: p.isNear ? "near" : (p.ranged ? "far" : "-"), band: p.band || "-", ranged: p.ranged, azimuth: p.azimuth ?? null, lost: p.lost ?? null, bump: p.lastBump ? { id: p.lastBump.id, at: p.lastBump.at, card: p.lastBump.card } : null, seen: p.lastHeard });
  }
  render();
}).finally(() => {
  const source = new EventSource("/events" + q);
  source.onopen = () => document.getElementById("status").textContent = "live";
  source.onerror = () => document.getElementById("status").textContent = "reconnecting…";
  source.onmessage = m => { try { apply(JSON.parse(m.data)); } catch (_) {} };
  setInterval(render, 500);
});
</script>
</body></html>
"""#
}
