@testable import Bridge
import PeerProtocol
import Testing

// Discovery, negotiation and one gesture over an air that loses (or repeats) frames: every drop
// ends with one bump on each side or none on either (docs/PROTOCOL.md, "Profile drop").
@Suite struct NodeCoreLossTests {
    typealias Pair = CorePair

    enum LossPattern: String, CaseIterable, Sendable {
        case none
        case everySecondMessage
        case everyThirdMessage
        case firstThreeOfEveryKind
        case controllerCardsForTwoSeconds
        case controleeCardsForTwoSeconds
        case allAcksForTwoAndAHalfSeconds
        case decisionLostFiveTimes
        case controllerSilentForFiveSeconds
        case controleeSilentAfterContact
        case controllerSilentForever
        /// Not in the old suite: every frame twice.
        case everyMessageTwice

        func copies(_ packet: Packet) -> Int {
            let afterContact = packet.sinceContact ?? -1
            switch self {
            case .none: return 1
            case .everySecondMessage: return packet.index % 2 == 1 ? 0 : 1
            case .everyThirdMessage: return packet.index % 3 == 2 ? 0 : 1
            case .firstThreeOfEveryKind: return packet.kindIndex < 3 ? 0 : 1
            case .controllerCardsForTwoSeconds: return packet.from == .c && packet.kind == .card && afterContact < 2_000 ? 0 : 1
            case .controleeCardsForTwoSeconds: return packet.from == .r && packet.kind == .card && afterContact < 2_000 ? 0 : 1
            case .allAcksForTwoAndAHalfSeconds: return packet.kind == .cardAck && afterContact < 2_500 ? 0 : 1
            case .decisionLostFiveTimes: return packet.from == .c && packet.kind == .cardAck && packet.kindIndex < 5 ? 0 : 1
            case .controllerSilentForFiveSeconds: return packet.from == .c && afterContact >= 0 && afterContact < 5_000 ? 0 : 1
            case .controleeSilentAfterContact: return packet.from == .r && afterContact >= 0 ? 0 : 1
            case .controllerSilentForever: return packet.from == .c && afterContact >= 0 ? 0 : 1
            case .everyMessageTwice: return 2
            }
        }
    }

    /// Runs discovery, negotiation and one gesture (seen by C, or by both in the same round)
    /// over a lossy air, with adverts all along; returns the pair 20 s after the contact.
    static func lossyRun(_ network: @escaping (Packet) -> Int, bothSeeContact: Bool, delay: @escaping (Packet) -> Int64 = { _ in 0 }) -> Pair {
        let pair = Pair()
        pair.network = network
        pair.delay = delay
        pair.run(20_000, adverts: true, until: { pair.isRanging(.c) && pair.isRanging(.r) })
        pair.touch(bothSeeContact ? [.c, .r] : [.c], expectContact: false)
        pair.run(20_000, adverts: true)
        return pair
    }

    static func expectAgreement(_ pair: Pair, sourceLocation: SourceLocation = #_sourceLocation) {
        let (c, r) = (pair.bumps(.c), pair.bumps(.r))
        #expect(c.count <= 1 && r.count <= 1, "more than one bump: C \(c), R \(r)", sourceLocation: sourceLocation)
        #expect(c.map(\.bumpID) == r.map(\.bumpID), "C bumped \(c.map(\.bumpID)), R \(r.map(\.bumpID))", sourceLocation: sourceLocation)
        if let c = c.first, let r = r.first {
            #expect(c.cardJSON == Pair.card(.r).json && r.cardJSON == Pair.card(.c).json, sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: LossPattern.allCases, [false, true]) func lossyExchangesEndWithOneBumpOnEachSideOrNone(
        pattern: LossPattern, bothSeeContact: Bool
    ) {
        let pair = Self.lossyRun(pattern.copies, bothSeeContact: bothSeeContact)
        Self.expectAgreement(pair)
        // Every second frame lost takes each of C's repeated proposals (C sends hello and
        // parameters in pairs, R nothing in between): C never ranges, so never sees the gesture.
        if pattern != .everySecondMessage { #expect(pair.contactAt != nil, "the gesture was seen") }
        let bumped = !pair.bumps(.c).isEmpty
        switch pattern {
        case .controleeSilentAfterContact, .controllerSilentForever, .controllerSilentForFiveSeconds:
            #expect(!bumped, "C cannot complete without hearing R in time")
        case .everySecondMessage:
            // (See above: C never ranges, so no drop completes; and once ranging, R's card and
            // ack back to back can lose every ack.) Both sides agree on no bump (checked
            // above), which is all the protocol promises.
            break
        default:
            #expect(bumped, "the loss was recoverable")
        }
    }

    /// Frames that arrive late (each of one side's, in turn), so that answers cross repeats.
    @Test(arguments: Side.allCases, [150 as Int64, 450]) func lateFramesStillEndWithOneBumpOnEachSide(late: Side, milliseconds: Int64) {
        let pair = Self.lossyRun({ _ in 1 }, bothSeeContact: false, delay: { $0.from == late && $0.index % 2 == 0 ? milliseconds : 0 })
        Self.expectAgreement(pair)
        #expect(pair.bumps(.c).count == 1)
    }

    @Test(arguments: [20, 50]) func randomLossNeverSplitsADrop(lossPercent: Int) {
        var bumped = 0
        for seed in 1...30 as ClosedRange<UInt64> {
            var random = SplitMix64(seed: seed)
            let pair = Self.lossyRun({ _ in Int.random(in: 0..<100, using: &random) < lossPercent ? 0 : 1 }, bothSeeContact: seed % 2 == 0)
            Self.expectAgreement(pair)
            bumped += pair.bumps(.c).count
        }
        #expect(bumped >= 25, "only \(bumped) of 30 gestures bumped")
    }
}
