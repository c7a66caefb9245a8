// swift-tools-version: 6.1
import PackageDescription

import struct Foundation.URL

/// SwiftPM names a path dependency after its directory, which is whatever the clone is called.
let mainPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

/// nearby-bridge's benchmarks (docs/PERFORMANCE.md): `swift package benchmark` in this directory.
/// A package of its own so that package-benchmark and its dependencies never enter the main
/// package's builds (CI, releases).
let package = Package(
    name: "NearbyBridgeBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // The same version the main package resolves; for the security benchmarks' X25519 keys and baseline.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // The main package's logging, for the MQTT output's logger.
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        .executableTarget(
            name: "BridgeBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "NearbyBridgeCore", package: mainPackage),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/BridgeBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
    ],
    swiftLanguageModes: [.v6]
)
