/// The stall watchdog's limit for the virtual clocks of tests that wait on real I/O (a socket, a
/// child process, URL loading's queues) before they advance the clock.
///
/// `VirtualClock()` reports a stall when nothing advanced it for 5 s of real time, which suits
/// a test of code that only the clock drives. A test that first waits for a real client to send,
/// or for an event to cross URL loading, can take longer than that on a loaded machine: under
/// the thread sanitizer, with every suite at once on two cores, a test's waits stretch to tens
/// of seconds, and the watchdog would end the work the test was about to release. Sixty seconds
/// still reports a real hang, well inside each test's time limit and CI's budget.
public let patientStallTimeout: Duration = .seconds(60)
