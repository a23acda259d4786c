/// Why a backend could not open, draw or present: which backend, and its own typed error.
///
/// A backend throws its own error type (`OffscreenError`, `EGLError`, …) wrapped in this, so that
/// one protocol serves backends whose failures differ. `DisplaySurface` reports an `EGLError` as
/// a graphics failure, one of its own errors (what its built-in backends wrap) as it is, and any
/// other as a backend failure with this value, whose ``description`` says what to change.
public struct SurfaceBackendError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The backend that failed, e.g. `offscreen`.
    public var backend: String
    /// The backend's own error (cast it to the backend's type to tell the cases apart).
    public var error: any Error & Sendable
    /// The error's message: what happened and which option to change.
    public var description: String

    /// Wraps `error`, a failure of `backend`.
    public init(backend: String, _ error: some Error & Sendable & CustomStringConvertible) {
        self.backend = backend
        self.error = error
        self.description = error.description
    }

    /// Equal when the same backend failed with the same message (the wrapped errors' types need
    /// not be `Equatable`).
    public static func == (a: SurfaceBackendError, b: SurfaceBackendError) -> Bool {
        a.backend == b.backend && a.description == b.description
    }
}
