import ArgumentParser
import Doctor
import Events
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals
import WebView

/// The process's exit statuses (also in the commands' --help and README "Exit codes").
enum ExitStatus {
    /// Stopped by SIGINT/SIGTERM or the scenario/capture ended, every event written.
    static let stopped: Int32 = 0
    /// An error: a radio or file that could not be opened, a failure while starting.
    static let failure: Int32 = 1
    /// stdout failed (closed, broken pipe, disk full) or its reader did not take the last lines
    /// within a second of the stop; the radios were still shut down properly first.
    static let outputFailed: Int32 = 3

    /// What --help says, in every command that writes events.
    static let help = """
        Exit status: 0 stopped (SIGINT, SIGTERM, end of the scenario or capture) with every \
        event written; 1 an error, e.g. a radio that cannot be opened or fails while starting; \
        3 stdout failed (closed, broken pipe, disk full) or its reader did not take the last \
        lines within 1 s of the stop, after the same clean shutdown; 64 invalid options or \
        settings. A second SIGINT/SIGTERM during the shutdown exits at once (130/143).
        """
}
