import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `--exit-with-parent`: runs `stop` when the process that started this one ends, so that a
/// server started by a test never outlives the test process, even one that crashed.
///
/// The parent keeps the write end of this process's standard input open and never writes:
/// when the parent ends, for whatever reason, the kernel closes it and reading standard input
/// reaches its end. On Linux, the parent's death also sends SIGUSR1 (`PR_SET_PDEATHSIG`), for a
/// parent whose pipe was inherited by some other process that keeps it open. Linux sends that
/// signal when the *thread* that started this process ends, too, so it counts only once the
/// parent process is gone (this process has a new parent then).
///
/// Returns what must stay alive for the watch to work (the signal source).
func watchParent(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
  var sources: [any DispatchSourceSignal] = []
  #if os(Linux)
    let parent = getppid()
    let queue = DispatchQueue(label: "stub-server.parent")
    let registered = DispatchGroup()
    signal(SIGUSR1, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: queue)
    registered.enter()
    source.setRegistrationHandler { registered.leave() }
    source.setEventHandler {
      if getppid() != parent { stop() }
    }
    source.resume()
    registered.wait()
    sources.append(source)
    if let prctl = linuxPrctl() {
      // PR_SET_PDEATHSIG is 1 in <linux/prctl.h>.
      _ = prctl(1, UInt(SIGUSR1), 0, 0, 0)
    }
    // The parent may have ended before the request was made.
    if getppid() != parent { stop() }
  #endif
  let reader = Thread {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(0, &buffer, buffer.count)
      if count > 0 { continue }
      if count < 0, errno == EINTR { continue }
      break
    }
    stop()
  }
  reader.name = "stub-server.parent"
  reader.start()
  return sources
}

#if os(Linux)
  /// Glibc's `prctl`, which Swift does not import (it is variadic and its header is not in the
  /// module): looked up by name and called with its five `unsigned long` arguments, as the
  /// system call takes them.
  private func linuxPrctl() -> (@convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32)? {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "prctl") else { return nil }
    return unsafeBitCast(
      symbol, to: (@convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32).self)
  }
#endif
