/// One fact about the display a surface is on, for reports and logs.
public struct EnvironmentEntry: Sendable, Hashable {
    /// A fact's value. Its `description` is the value alone, as a person reads it: `weston`,
    /// `60.0`, `true`, `[wp_presentation 2, xdg_wm_base 6]`, `unknown`.
    public enum Value: Sendable, Hashable, CustomStringConvertible {
        /// A name or text (e.g. the compositor's name).
        case string(String)
        /// A count (e.g. flips submitted).
        case int(Int)
        /// A measure (e.g. the refresh rate in Hz).
        case number(Double)
        /// A yes or no (e.g. whether swaps take damage).
        case bool(Bool)
        /// A list of names (e.g. the timing protocols in use).
        case list([String])
        /// Not known (e.g. no presentation clock without `wp_presentation`).
        case unknown

        /// The value alone, as a person reads it.
        public var description: String {
            switch self {
            case .string(let text): text
            case .int(let value): String(value)
            case .number(let value): String(value)
            case .bool(let value): String(value)
            case .list(let names): "[" + names.joined(separator: ", ") + "]"
            case .unknown: "unknown"
            }
        }
    }

    /// The fact's name, in snake case (e.g. `presentation_clock`): a report's field name.
    public var key: String
    /// What it is.
    public var value: Value

    /// A fact named `key` with `value`.
    public init(_ key: String, _ value: Value) {
        self.key = key
        self.value = value
    }
}
