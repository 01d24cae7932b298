// swift-tools-version: 6.0
import PackageDescription

let settings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
  name: "HTTPSessionKit",
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
  products: [
    .library(name: "HTTPSessionKit", targets: ["HTTPSessionKit"]),
    // What tests import: the mock, and its reports to XCTest and Swift Testing.
    .library(name: "HTTPSessionMocks", targets: ["HTTPSessionMocks"]),
    // What an app, a preview or a server links: the same mock, with no test framework.
    .library(name: "HTTPSessionMocksRuntime", targets: ["HTTPSessionMocksRuntime"]),
    .library(name: "HTTPSessionServer", targets: ["HTTPSessionServer"]),
    .library(name: "SampleClient", targets: ["SampleClient"]),
    .executable(name: "sample-client", targets: ["sample-client"]),
    .executable(name: "sample-app", targets: ["sample-app"]),
    .executable(name: "stub-server", targets: ["stub-server"]),
  ],
  targets: [
    .target(name: "HTTPSessionKit", swiftSettings: settings),
    .target(
      name: "HTTPSessionMocksRuntime", dependencies: ["HTTPSessionKit"], swiftSettings: settings),
    .target(
      name: "HTTPSessionMocks", dependencies: ["HTTPSessionMocksRuntime"], swiftSettings: settings),
    .target(
      name: "HTTPSessionServer", dependencies: ["HTTPSessionMocksRuntime"],
      swiftSettings: settings),
    .target(
      name: "SampleClient", dependencies: ["HTTPSessionKit"], path: "SampleClient/SampleClient",
      swiftSettings: settings),
    .executableTarget(
      name: "sample-client", dependencies: ["SampleClient", "HTTPSessionMocksRuntime"],
      path: "SampleClient/sample-client", swiftSettings: settings),
    .executableTarget(
      name: "sample-app",
      dependencies: ["SampleClient", "HTTPSessionKit", "HTTPSessionMocksRuntime"],
      path: "SampleClient/sample-app", swiftSettings: settings),
    .executableTarget(
      name: "stub-server", dependencies: ["HTTPSessionMocksRuntime", "HTTPSessionServer"],
      swiftSettings: settings),
    .testTarget(
      name: "HTTPSessionKitTests", dependencies: ["HTTPSessionKit", "TestSupport"],
      swiftSettings: settings),
    .executableTarget(
      name: "benchmarks",
      dependencies: ["HTTPSessionKit", "HTTPSessionMocksRuntime", "HTTPSessionServer"],
      path: "Benchmarks",
      exclude: ["README.md", "admin-scale", "callgrind-per-request", "pattern-stall"],
      swiftSettings: settings),
    .testTarget(
      name: "HTTPSessionMocksTests",
      dependencies: [
        "HTTPSessionKit", "HTTPSessionMocks", "HTTPSessionMocksRuntime", "TestSupport",
      ],
      resources: [.copy("Fixtures")], swiftSettings: settings),
    .testTarget(
      name: "HTTPSessionServerTests",
      dependencies: ["HTTPSessionKit", "HTTPSessionMocks", "HTTPSessionServer", "TestSupport"],
      swiftSettings: settings),
    .testTarget(
      name: "SampleClientTests",
      dependencies: ["SampleClient", "HTTPSessionMocks", "HTTPSessionServer", "TestSupport"],
      swiftSettings: settings),
    // What the test targets share (not a product): a locked box, child processes, folders.
    .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: settings),
  ],
  swiftLanguageModes: [.v6]
)
