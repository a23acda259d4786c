import DisplaySurface
import Testing

@Suite("Environment values read as plain values")
struct EnvironmentValueTests {
    @Test("each kind of value prints as the value alone")
    func descriptions() {
        let values: [EnvironmentEntry.Value] = [.string("weston"), .int(3), .number(60), .bool(true), .list(["a", "b"]), .unknown]
        #expect(values.map(\.description) == ["weston", "3", "60.0", "true", "[a, b]", "unknown"])
        #expect("\(EnvironmentEntry.Value.string("weston"))" == "weston")
    }
}
