/// The release, printed by `nearby-bridge --version`. The one place it is written: scripts/package
/// reads it from this line to name the Debian package (upstream version, before the Debian
/// revision), so a build from any checkout, with or without git history or tags, says the same.
let nearbyBridgeVersion = "0.1.0"
