import Foundation
import HTTPSessionServer
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The signal that wakes the server's threads runs inside the test process, so a wake must
/// never raise SIGPIPE there, whatever happened to the reading end.
@Suite struct WakeSignalTests {
  @Test func aWakeIsSeenByPollAndDrainedAway() throws {
    let signal = try WakeSignal()
    defer { signal.close() }
    var entry = pollfd(fd: signal.readDescriptor, events: Int16(POLLIN), revents: 0)
    #expect(poll(&entry, 1, 0) == 0)
    #expect(signal.wake())
    #expect(signal.wake())
    #expect(poll(&entry, 1, 0) == 1)
    signal.drain()
    entry.revents = 0
    #expect(poll(&entry, 1, 0) == 0)
  }

  /// A descriptor closed twice elsewhere in the process (a test helper's double `close`) can
  /// close a server's reading end while the server still wakes the other: with a pipe and
  /// `write`, that raised SIGPIPE and killed the whole test run.
  @Test func aWakeAfterTheReadingEndWasClosedElsewhereFailsQuietly() throws {
    let signal = try WakeSignal()
    // What a stray close does to the server's reading end.
    #expect(close(signal.readDescriptor) == 0)
    #expect(signal.wake() == false)
    #expect(signal.wake() == false)
    // The reading end is closed already: close the other alone, never the same number twice.
    #expect(close(signal.writeDescriptor) == 0)
  }
}
