// Tests that import HTTPSessionMocks also see HTTPSessionKit's `HTTPSession` and `HTTPDataTask`,
// so that a test target needs one import (and one product) whatever it calls on a task.
@_exported import HTTPSessionKit
