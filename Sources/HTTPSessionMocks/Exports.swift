// A test file that imports HTTPSessionMocks sees the whole mock (HTTPSessionMocksRuntime) and
// everything its doubles speak in: HTTPSessionKit's `HTTPSession` and `HTTPDataTask`, and
// Foundation's `URLRequest`, `URLSession` and `URLError` (on Linux those live in
// FoundationNetworking). One import, on every platform.
@_exported import Foundation
@_exported import HTTPSessionKit
@_exported import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  @_exported import FoundationNetworking
#endif
