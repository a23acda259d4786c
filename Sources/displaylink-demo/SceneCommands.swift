import ArgumentParser

struct QuadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quad",
        abstract: "One square moving by deltaTime: the smallest client (used by the pacing benchmark)."
    )
    @OptionGroup var options: RunOptions

    func run() throws {
        let options = self.options
        MainActor.assumeIsolated {
            DemoRunner.launch(options: options) { QuadScene() }
        }
    }
}
