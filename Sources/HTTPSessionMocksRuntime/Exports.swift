// A file that imports HTTPSessionMocksRuntime (an app, a preview, a server) sees everything its
// doubles speak in: HTTPSessionKit's `HTTPSession` and `HTTPDataTask`, and Foundation's
// `URLRequest`, `URLSession` and `URLError` (on Linux those live in FoundationNetworking). One
// import, on every platform.
@_exported import Foundation
@_exported import HTTPSessionKit

#if canImport(FoundationNetworking)
  @_exported import FoundationNetworking
#endif
