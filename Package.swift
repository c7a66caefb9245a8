// swift-tools-version: 6.1
import PackageDescription

import class Foundation.ProcessInfo

/// The tree mirrors the data flow (see docs and ../shared/DESIGN.md):
/// radios -> transports -> pure codecs -> hosts -> peer sessions -> proximity -> events -> stdout.
let package = Package(
    name: "NearbyBridge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "nearby-bridge", targets: ["NearbyBridgeCLI"]),
        .executable(name: "proximity-eval", targets: ["ProximityEvalCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // C libraries, imported through pkg-config.
        .systemLibrary(
            name: "CLibUSB", pkgConfig: "libusb-1.0",
            providers: [.apt(["libusb-1.0-0-dev"])]),
        .systemLibrary(
            name: "CBlueZ", pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(
            name: "CMosquitto", pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(
            name: "CSystemd", pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]),
        // Linux headers the Glibc module leaves out (eventfd); nothing to link.
        .systemLibrary(name: "CLinux"),

        // Pure codecs: bytes in, values out; no I/O, no clocks.
        .target(name: "ByteCoding"),
        .target(name: "UCI", dependencies: ["ByteCoding"]),
        .target(name: "PeerProtocol", dependencies: ["ByteCoding", "BLE"]),
        .target(name: "BlueZMgmt", dependencies: ["ByteCoding"]),
        // Apple's Nearby Interaction accessory protocol: the phone's and the accessory's messages,
        // their configuration blobs, and the FiRa session a shareable configuration implies.
        .target(name: "NearbyInteractionAccessory", dependencies: ["ByteCoding", "UCI"]),
        // Android's ranging out-of-band exchange (issue 31): the published spec's messages, and
        // a phone's UWB configuration checked against what the rig's board offers.
        .target(name: "AndroidRangingOOB", dependencies: ["ByteCoding", "UCI"]),
        // The GATT database a rig offers a phone (Qorvo's NI service, Nordic UART, the attendee
        // token) and a pure ATT server over it: the core of both GATT backends (issue 33).
        .target(name: "GATTServer", dependencies: ["ByteCoding"]),
        // The peer protocol's v2 security: event key schedule, private adverts, the Noise
        // handshake and sealed frames. Pure: keys and randomness come in as arguments.
        .target(
            name: "PeerSecurity",
            dependencies: [
                "BLE", "ByteCoding", "PeerProtocol", .product(name: "Crypto", package: "swift-crypto"),
                // AES-128 on one block, for resolvable private addresses (`ResolvablePrivateAddress`).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]),

        // I/O and protocol state.
        // Byte streams on descriptors (TCP, tty), the queue that hands their bytes to async code,
        // and IOThread, the one way to start a thread of our own.
        .target(name: "StreamIO", dependencies: ["CLinux", .product(name: "SystemPackage", package: "swift-system")]),
        .target(
            name: "UCIHost",
            dependencies: [
                "UCI", "StreamIO",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]),
        .target(
            name: "UCIUSB",
            dependencies: ["CLibUSB", "StreamIO", "UCIHost"]),
        .target(name: "BLE"),
        .target(
            name: "BLEBlueZ",
            dependencies: [
                "CBlueZ", "BLE", "BlueZMgmt", "GATTServer", "StreamIO",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]),

        // The GATT backend beside bluetoothd (issue 33): the GATT database exported as a BlueZ
        // GATT application over D-Bus (sd-bus), registered with GattManager1.
        .target(
            name: "GATTDBus",
            dependencies: [
                "CSystemd", "CLinux", "GATTServer", "StreamIO",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // Per-peer logic and output.
        .target(name: "Proximity"),
        .target(
            name: "Events",
            dependencies: ["StreamIO", .product(name: "SystemPackage", package: "swift-system")]),
        .target(
            name: "Bridge",
            dependencies: [
                "UCI", "UCIHost", "StreamIO", "PeerProtocol", "PeerSecurity", "BLE", "Proximity", "Events", "GATTServer",
                "NearbyInteractionAccessory", "AndroidRangingOOB", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]),

        // Publishing the event stream to an MQTT broker, with an on-disk spool for outages.
        .target(
            name: "MQTTOutput",
            dependencies: [
                "CMosquitto", "Events", "StreamIO",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]),

        // Recording what the radios did, and views derived from recordings.
        .target(name: "Capture", dependencies: ["ByteCoding", "UCI", "UCIHost", "BLE", "Events", "GATTServer"]),
        .target(name: "Plot"),
        .target(
            name: "Replay",
            dependencies: [
                "BLE", "Bridge", "Capture", "Events", "GATTServer", "PeerProtocol", "PeerSecurity", "Proximity", "StreamIO", "UCI", "UCIHost",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // Diagnostics: what a rig needs and what is missing.
        .target(
            name: "Doctor",
            dependencies: [
                "BLE", "BLEBlueZ", "BlueZMgmt", "Proximity", "StreamIO", "UCI", "UCIHost", "UCIUSB",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // The virtual world: the embedded default and the test stand-in for both radios.
        .target(
            name: "Simulation",
            dependencies: [
                "UCI", "StreamIO", "UCIHost", "PeerProtocol", "PeerSecurity", "BLE", "Bridge", "Events", "GATTServer", "Proximity",
                .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Scenarios")]),

        .executableTarget(
            name: "NearbyBridgeCLI",
            dependencies: [
                "StreamIO", "UCIHost", "UCIUSB", "BLE", "BLEBlueZ", "ByteCoding", "Bridge", "Capture", "Doctor", "Events", "Plot", "Proximity", "Replay",
                "Simulation", "Watch", "WebView", "PeerSecurity", "MQTTOutput", "GATTServer", "GATTDBus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]),

        // The live view of event streams (`watch`): a pure model and its screens.
        .target(name: "Watch", dependencies: ["Events"]),
        // The web view: the page, its event stream and the peer table over HTTP (FlyingFox).
        .target(
            name: "WebView",
            dependencies: [
                "Events", "Proximity", "Watch", .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "Metrics", package: "swift-metrics"), .product(name: "Prometheus", package: "swift-prometheus"),
            ]),

        // Proximity quality: trace generator, evaluator, and the two-sided handshake over a lossy air.
        .target(
            name: "ProximityEvaluation",
            dependencies: [
                "Proximity", "Bridge", "Simulation", "Events",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "ProximityEvalCLI",
            dependencies: [
                "ProximityEvaluation", "Proximity", "Bridge",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        .testTarget(name: "ByteCodingTests", dependencies: ["ByteCoding"]),
        .testTarget(name: "UCITests", dependencies: ["UCI"]),
        .testTarget(name: "MQTTOutputTests", dependencies: ["MQTTOutput"]),
        .testTarget(name: "PeerProtocolTests", dependencies: ["PeerProtocol"]),
        .testTarget(name: "NearbyInteractionAccessoryTests", dependencies: ["NearbyInteractionAccessory", "UCI", "Bridge"]),
        .testTarget(name: "AndroidRangingOOBTests", dependencies: ["AndroidRangingOOB", "UCI", "Bridge"]),
        .testTarget(
            name: "GATTServerTests",
            dependencies: [
                "GATTServer", "GATTDBus", "BLE", "BLEBlueZ", "BlueZMgmt", "CBlueZ", "StreamIO",
                .product(name: "Logging", package: "swift-log"), .product(name: "SystemPackage", package: "swift-system"),
            ],
            exclude: ["bumble_client.py"]),
        .testTarget(
            name: "GATTDBusTests",
            dependencies: ["GATTDBus", "GATTServer", .product(name: "Logging", package: "swift-log")],
            exclude: ["gatt_manager_standin.py"]),
        .testTarget(
            name: "PeerSecurityTests", dependencies: ["BLE", "PeerSecurity", "PeerProtocol"], exclude: ["make-vectors.py"],
            resources: [.copy("Vectors")]),
        .testTarget(name: "StreamIOTests", dependencies: ["StreamIO", .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "UCIHostTests", dependencies: ["UCI", "StreamIO", "UCIHost"]),
        .testTarget(name: "DoctorTests", dependencies: ["Doctor", "BLEBlueZ", "BlueZMgmt", "CLibUSB", "StreamIO", "UCI", "UCIHost", "UCIUSB"]),
        .testTarget(name: "ProximityTests", dependencies: ["Proximity", "Bridge", "PeerProtocol"]),
        .testTarget(name: "ProximityEvaluationTests", dependencies: ["ProximityEvaluation", "Proximity", "Bridge", "Simulation"]),
        .testTarget(name: "UCIUSBTests", dependencies: ["UCIUSB"]),
        .testTarget(name: "PlotTests", dependencies: ["Plot"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "Events", "UCI", "UCIHost", "BLE", "Replay", "GATTServer"]),
        .testTarget(
            name: "BlueZMgmtTests", dependencies: ["BLE", "BlueZMgmt", "BLEBlueZ", "ByteCoding", "PeerProtocol", "PeerSecurity"],
            resources: [.copy("Fixtures")]),
        .testTarget(name: "EventsTests", dependencies: ["Events"]),
        .testTarget(name: "WatchTests", dependencies: ["Watch", "Events"]),
        .testTarget(name: "WebViewTests", dependencies: ["WebView"]),
        .testTarget(name: "NearbyBridgeCLITests", dependencies: ["NearbyBridgeCLI", "Bridge", "MQTTOutput", "Simulation"]),
        .testTarget(
            name: "BridgeTests",
            dependencies: [
                "Bridge", "Simulation", "Events", "UCI", "StreamIO", "UCIHost", "PeerProtocol", "PeerSecurity", "GATTServer", "AndroidRangingOOB",
            ],
            resources: [.copy("Golden")]),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer's entry point for every parser: only in `scripts/fuzz`'s builds, which compile it
// with -sanitize=fuzzer and -parse-as-library (libFuzzer has the `main`; no other build could
// link it).
if ProcessInfo.processInfo.environment["NEARBY_BRIDGE_FUZZ"] == "1" {
    package.targets.append(
        .executableTarget(
            name: "NearbyBridgeFuzz",
            dependencies: [
                "AndroidRangingOOB", "BLE", "Bridge", "BlueZMgmt", "Capture", "GATTServer", "NearbyInteractionAccessory", "PeerProtocol", "PeerSecurity", "Replay",
                "Simulation", "UCI", "UCIHost", .product(name: "Logging", package: "swift-log"),
            ]))
}

// The benchmarks (docs/PERFORMANCE.md): `NEARBY_BRIDGE_BENCHMARKS=1 swift package benchmark`. In
// this package, so that `package` access reaches them and nothing needs to be `public`; only with
// the variable set, so that package-benchmark never enters the other builds (CI, releases).
if ProcessInfo.processInfo.environment["NEARBY_BRIDGE_BENCHMARKS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]))
    // Its allocation hook counts one thread's allocations (`node: allocations per range notification`).
    package.dependencies.append(.package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"))
    package.targets.append(
        .executableTarget(
            name: "BridgeBenchmarks",
            dependencies: [
                "BLE", "Bridge", "CLinux", "Events", "MQTTOutput", "PeerProtocol", "PeerSecurity", "Proximity", "Simulation", "StreamIO", "UCI",
                "UCIHost", "WebView", .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/BridgeBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]))
}
