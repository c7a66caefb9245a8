import BLE
import Events
import Glibc
import Synchronization
import UCIHost

/// Appends lines to the rotating file; a batch goes in one write, into one file.
struct EventsFile: EventOutput {
    let file: RotatingLineFile

    func write(line: String) throws {
        file.append(line)
    }

    func write(lines: [String]) throws {
        file.append(lines.count == 1 ? lines[0] : lines.joined())
    }
}
