import ArgumentParser

/// `--hall 10,30,100`: how many rigs each hall holds, two at least and at most 400.
struct HallSizes: ExpressibleByArgument {
    var rigs: [Int]

    init?(argument: String) {
        let sizes = argument.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !sizes.isEmpty, sizes.allSatisfy({ $0.map { (2...400).contains($0) } == true }) else { return nil }
        rigs = sizes.compactMap { $0 }
    }

    static var defaultCompletionKind: CompletionKind { .list(["10,30,100,200"]) }
}
