import ArgumentParser
import Glibc

@main
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "displaylink-demo",
        abstract: "Runs a display link and prints or reports its frame timing.",
        subcommands: [
            BounceCommand.self, ImagesCommand.self, StrokeCommand.self, ScrollCommand.self, QuadCommand.self, FollowCommand.self,
            MockCommand.self
        ]
    )

    /// Bad arguments exit with status 2 and a message saying what is wrong; everything else
    /// (help, errors from running) keeps ArgumentParser's behaviour.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                let message = fullMessage(for: error) + "\n"
                _ = message.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
                Glibc.exit(2)
            }
            exit(withError: error)
        }
    }
}
