import BLE
@testable import Bridge
import Events
import PeerProtocol
import Testing
import UCI

extension CorePair {
    static func cardMessage(_ side: Side, _ bumpID: UInt32) -> PeerMessage { .card(bumpID: bumpID, cardJSON: card(side).json) }

    /// The filtered distance of the last `range` event `side` wrote.
    func lastFiltered(_ side: Side) -> Double? {
        events(side).last { if case .range = $0 { true } else { false } }.flatMap { body -> Double? in
            if case .range(let range) = body { range.filtered } else { nil }
        }
    }
}

// Profile drops (docs/PROTOCOL.md, "Profile drop"): a contact seen by the real proximity engine
// in the rounds a board reports starts one; exactly one bump on each side, or none on either.
@Suite struct NodeCoreDropTests {
    typealias Pair = CorePair
    static let retransmit = BridgeConfig().retransmitMilliseconds
    static let exchangeTimeout = BridgeConfig().exchangeTimeoutMilliseconds

    static func card(_ side: Side, _ bumpID: UInt32) -> PeerMessage { Pair.cardMessage(side, bumpID) }
    static func frame(_ message: PeerMessage) -> [UInt8] { message.encoded() }

    @Test func happyPath() throws {
        let pair = Pair.ranging()
        let cLink = try #require(pair.link(.c))
        // R's board reports each round a little after C's: C sees the contact first.
        pair.touch([.c], lagging: [.r])
        let (cDistance, rDistance) = (try #require(pair.lastFiltered(.c)), try #require(pair.lastFiltered(.r)))
        #expect(pair.bumps(.c) == [.init(peer: Pair.id(.r).description, bumpID: 1, distance: cDistance, cardJSON: Pair.card(.r).json)])
        #expect(pair.bumps(.r) == [.init(peer: Pair.id(.c).description, bumpID: 1, distance: rDistance, cardJSON: Pair.card(.c).json)])
        #expect(cDistance < 0.1)
        #expect(pair.sent(.c).suffix(2).map(\.message) == [Self.card(.c, 1), .cardAck(bumpID: 1)])
        #expect(pair.sent(.r).suffix(2).map(\.message) == [Self.card(.r, 1), .cardAck(bumpID: 1)])
        let (cBump, rBump) = (try #require(pair.bumps(.c).first), try #require(pair.bumps(.r).first))
        #expect(
            pair.effects(.c).suffix(2) == [
                .emit([Event(node: Pair.id(.c).description, body: .bump(cBump))]), .send(Self.frame(.cardAck(bumpID: 1)), on: cLink),
            ])
        #expect(pair.effects(.r).last == .emit([Event(node: Pair.id(.r).description, body: .bump(rBump))]))
        // Decided: nothing goes again. And R took the gesture's contact when it joined (the old
        // test saw `.consumeContact`): its own rounds of the same touch start no second drop.
        let mark = pair.mark
        pair.hold([.r], centimetres: 0, rounds: 10)
        pair.run(5_000)
        #expect(pair.sent(.c, since: mark).isEmpty && pair.sent(.r, since: mark).isEmpty)
        #expect(pair.bumps(.c).count == 1 && pair.bumps(.r).count == 1)
    }

    @Test func bothSeeingTheContactInTheSameRoundBumpOnce() {
        let pair = Pair.ranging()
        pair.touch([.c, .r])
        #expect(pair.sent(.c, .card).first?.at == pair.sent(.r, .card).first?.at, "the same round")
        #expect(pair.bumps(.c).map(\.bumpID) == [1])
        #expect(pair.bumps(.r).map(\.bumpID) == [1])
        #expect(pair.bumps(.r).first?.distance == pair.lastFiltered(.r))
    }

    @Test func theBumpIDIsTheLastDropsPlusOne() {
        let pair = Pair.ranging()
        pair.touch([.c])  // drop 1: R joins, which takes its contact
        pair.touch([.c])  // drop 2: R, which measured nothing since, declines it
        pair.separate([.c])  // C's detector re-arms
        pair.touch([.r])  // drop 3, from R this time
        #expect(pair.sent(.c, .card).map(\.message) == [Self.card(.c, 1), Self.card(.c, 2), Self.card(.c, 3)])
        #expect(pair.sent(.r, .cardDecline).map(\.message) == [.cardDecline(bumpID: 2)])
        #expect(pair.bumps(.c).map(\.bumpID) == [1, 3])
        #expect(pair.bumps(.r).map(\.bumpID) == [1, 3])
    }

    /// A side that receives a card for a new drop joins if its gesture's contact is armed (and
    /// takes it), and declines it otherwise; the starter then ends the drop without a bump. A
    /// contact is disarmed here by joining an earlier drop (the old test set the view).
    @Test(arguments: Side.allCases, [true, false]) func aNewDropIsJoinedOnlyWithAnArmedContact(receiver: Side, armed: Bool) throws {
        let pair = Pair.ranging()
        let link = try #require(pair.link(receiver))
        if !armed { pair.touch([receiver.other]) }  // drop 1, joined
        let id: UInt32 = armed ? 1 : 2
        let mark = pair.mark
        pair.touch([receiver.other])
        let answer = Array(pair.radio(receiver, since: mark).prefix(receiver == .r ? 2 : 1))
        if armed {
            let joined: [NodeEffect] = [.send(Self.frame(Self.card(receiver, id)), on: link)]
            #expect(answer == joined + (receiver == .r ? [.send(Self.frame(.cardAck(bumpID: id)), on: link)] : []))
            #expect(pair.bumps(.c).map(\.bumpID) == [id] && pair.bumps(.r).map(\.bumpID) == [id])
            // The receiver's contact was taken: its own rounds of this touch start nothing.
            let after = pair.mark
            pair.hold([receiver], centimetres: 0, rounds: 10)
            #expect(pair.sent(receiver, .card, since: after).isEmpty)
        } else {
            #expect(answer.first == .send(Self.frame(.cardDecline(bumpID: id)), on: link))
            pair.run(5_000)
            #expect(pair.bumps(.c).map(\.bumpID) == [1] && pair.bumps(.r).map(\.bumpID) == [1])
            #expect(pair.sent(receiver.other, .card, since: mark).count == 1)  // the starter stopped at the decline
        }
    }

    /// Both start at once with different ids (one side had a drop the other never heard of): the
    /// higher id wins and both bump once with it.
    @Test(arguments: Side.allCases) func concurrentDropsConvergeOnTheHigherID(ahead: Side) throws {
        let pair = Pair.ranging()
        // A drop only `ahead` knows of: its frames are lost until it gives up on its own.
        pair.network = { $0.from == ahead ? 0 : 1 }
        pair.touch([ahead])
        pair.run(ahead == .c ? Self.exchangeTimeout + 100 : 4 * Self.exchangeTimeout + 100, adverts: true)
        #expect(pair.sent(ahead, .cardDecline).map(\.message) == [.cardDecline(bumpID: 1)])
        pair.network = { _ in 1 }
        pair.touch([.c, .r])
        try #require(pair.sent(.c, .card).last?.at == pair.sent(.r, .card).last?.at, "both saw the contact in the same round")
        #expect(pair.bumps(.c).map(\.bumpID) == [2])
        #expect(pair.bumps(.r).map(\.bumpID) == [2])
        #expect(pair.bumps(.c).first?.cardJSON == Pair.card(.r).json)
        #expect(pair.bumps(.r).first?.cardJSON == Pair.card(.c).json)
    }

    @Test func theControleeAcknowledgesEveryCardFromTheController() throws {
        let pair = Pair.ranging()
        // Every card of C's arrives three times; C never gets R's card, so it cannot decide.
        pair.network = { $0.kind != .card ? 1 : $0.from == .c ? 3 : 0 }
        let mark = pair.mark
        pair.touch([.c])
        pair.run(1_000)
        // Three copies of C's one card (R's ack stops C repeating it), each answered.
        #expect(pair.sent(.c, .card, since: mark).count == 1)
        #expect(pair.sent(.r, .cardAck, since: mark).count == 3)
        // R, still waiting for the decision, answers a later copy too.
        let before = pair.sent(.r, .cardAck).count
        pair.inject(Self.card(.c, 1), to: .r)
        #expect(pair.sent(.r, .cardAck).count == before + 1)
        #expect(pair.bumps(.c).isEmpty && pair.bumps(.r).isEmpty)  // C never held R's card
        // Once the drop ended with a bump, a late copy is still acknowledged.
        pair.network = { _ in 1 }
        pair.run(Self.retransmit)
        #expect(pair.bumps(.c).count == 1 && pair.bumps(.r).count == 1)
        let link = try #require(pair.link(.r))
        #expect(pair.inject(Self.card(.c, 1), to: .r) == [.send(Self.frame(.cardAck(bumpID: 1)), on: link)])
    }

    /// C acknowledges R's card (its decision) only once it holds R's card and R's ack of its own.
    @Test(arguments: [MessageKind.card, .cardAck]) func theControllerDecidesOnlyWithTheCardAndTheAck(firstLost: MessageKind) throws {
        let pair = Pair.ranging()
        pair.network = { $0.from == .r && $0.kind == firstLost && $0.kindIndex == 0 ? 0 : 1 }
        pair.touch([.c])
        let contact = try #require(pair.contactAt)
        #expect(pair.sent(.c, .cardAck).isEmpty)
        #expect(pair.bumps(.c).isEmpty && pair.bumps(.r).isEmpty)
        pair.run(Self.retransmit)
        #expect(pair.bumps(.c).map(\.bumpID) == [1])
        #expect(pair.bumps(.r).map(\.bumpID) == [1])
        #expect(pair.sent(.c, .cardAck).map(\.at) == [contact + Self.retransmit])
    }

    @Test func afterItsDecisionTheControllerRepeatsNothingButAnswersEveryCardWithAnAck() throws {
        let pair = Pair.ranging()
        pair.network = { $0.from == .c && $0.kind == .cardAck && $0.kindIndex < 3 ? 0 : 1 }
        pair.touch([.c])
        let contact = try #require(pair.contactAt)
        #expect(pair.bumps(.c).count == 1 && pair.bumps(.r).isEmpty)
        pair.run(5_000)
        // R repeated its card at 200, 400 and 600 ms; each copy got the decision again, and the fourth reached R.
        #expect(pair.sent(.r, .card).map(\.at) == [0, 200, 400, 600].map { contact + $0 })
        #expect(pair.sent(.c, .cardAck).map(\.at) == [0, 200, 400, 600].map { contact + $0 })
        #expect(pair.sent(.c, .card).count == 1)
        #expect(pair.bumps(.c).count == 1 && pair.bumps(.r).map(\.bumpID) == [1])
    }

    @Test func theControllerDeclinesAfterTheExchangeTimeout() throws {
        let pair = Pair.ranging()
        pair.network = { $0.from == .r ? 0 : 1 }
        pair.touch([.c])
        let contact = try #require(pair.contactAt)
        pair.run(Self.exchangeTimeout)
        #expect(pair.sent(.c, .cardDecline).isEmpty)  // not yet at exactly 3 s
        pair.run(50)
        #expect(pair.sent(.c, .cardDecline).map(\.at) == [contact + Self.exchangeTimeout + 50])
        #expect(pair.sent(.c, .cardDecline).map(\.message) == [.cardDecline(bumpID: 1)])
        // Until then C repeated its card every 200 ms.
        let cardTimes = stride(from: contact, through: contact + Self.exchangeTimeout, by: Int(Self.retransmit)).map { $0 }
        #expect(pair.sent(.c, .card).map(\.at) == cardTimes)
        // R dropped the exchange on the decline: it repeats nothing.
        let mark = pair.mark
        pair.run(2_000)
        #expect(pair.sent(.r, since: mark).isEmpty && pair.sent(.c, since: mark).isEmpty)
        #expect(pair.bumps(.c).isEmpty && pair.bumps(.r).isEmpty)
        // A late copy of R's card gets the decline again.
        let cLink = try #require(pair.link(.c))
        #expect(pair.inject(Self.card(.r, 1), to: .c) == [.send(Self.frame(.cardDecline(bumpID: 1)), on: cLink)])
    }

    /// C decided to bump, and every answer to R's card is lost: R gives up after 12 s without a
    /// message from C (the one documented way the sides can disagree), not before. (Adverts keep
    /// each side from timing the other out meanwhile.)
    @Test func theControleeGivesUpAfterTwelveSilentSeconds() throws {
        let pair = Pair.ranging()
        pair.network = { $0.from == .c && $0.kind != .card ? 0 : 1 }
        pair.touch([.c])
        let contact = try #require(pair.contactAt)
        #expect(pair.bumps(.c).count == 1)
        pair.run(4 * Self.exchangeTimeout, adverts: true)
        #expect(pair.sent(.r, .cardDecline).isEmpty)
        #expect(pair.sent(.r, .card).last?.at == contact + 4 * Self.exchangeTimeout)  // still repeating
        pair.run(50, adverts: true)
        #expect(pair.sent(.r, .cardDecline).map(\.message) == [.cardDecline(bumpID: 1)])
        #expect(pair.sent(.r, .cardDecline).map(\.at) == [contact + 4 * Self.exchangeTimeout + 50])
        #expect(pair.bumps(.r).isEmpty)
        let mark = pair.mark
        pair.run(1_000, adverts: true)
        #expect(pair.sent(.r, since: mark).isEmpty)
    }

    /// R's only timer is silence: while C is heard (here, a repeated `hello` every 5 s) R keeps
    /// its undecided drop for as long as it takes.
    @Test func theControleeNeverGivesUpWhileTheControllerIsHeard() {
        let pair = Pair.ranging()
        pair.network = { $0.from == .c ? 0 : 1 }
        pair.touch([.r])
        for _ in 0..<6 {
            pair.run(5_000, adverts: true)
            pair.inject(Pair.hello(.c), to: .r)
        }
        let lastHeard = pair.now
        #expect(pair.sent(.r, .cardDecline).isEmpty)
        pair.run(4 * Self.exchangeTimeout, adverts: true)
        #expect(pair.sent(.r, .cardDecline).isEmpty)
        pair.run(50, adverts: true)
        #expect(pair.sent(.r, .cardDecline).map(\.at) == [lastHeard + 4 * Self.exchangeTimeout + 50])
    }

    @Test func bothSidesRepeatTheirCardUntilDecided() throws {
        let pair = Pair.ranging()
        pair.network = { $0.from == .r && ($0.sinceContact ?? .max) < 1_000 ? 0 : 1 }
        pair.touch([.c])
        let contact = try #require(pair.contactAt)
        pair.run(3_000)
        let times = [0, 200, 400, 600, 800, 1_000].map { contact + $0 }
        #expect(pair.sent(.c, .card).map(\.at) == times)
        #expect(pair.sent(.r, .card).map(\.at) == times)
        #expect(pair.bumps(.c).count == 1 && pair.bumps(.r).count == 1)
    }

    /// Each side remembers how its last drop ended and answers a repeated card for it the same
    /// way. A declined drop here is the second one, after a touch both saw (the old test set the
    /// other side's view unarmed).
    @Test(arguments: Side.allCases, [true, false]) func aRepeatedCardForTheLastDropGetsTheSameAnswer(side: Side, bumped: Bool) throws {
        let pair = Pair.ranging()
        if !bumped { pair.touch([.c, .r]) }  // drop 1, bumped: both contacts taken
        let id: UInt32 = bumped ? 1 : 2
        pair.touch([side])
        #expect(pair.bumps(side).map(\.bumpID) == [1])
        pair.advance(10_000)
        let link = try #require(pair.link(side))
        let answer: PeerMessage = bumped ? .cardAck(bumpID: id) : .cardDecline(bumpID: id)
        #expect(pair.inject(Self.card(side.other, id), to: side) == [.send(Self.frame(answer), on: link)])
        #expect(pair.inject(Self.card(side.other, id), to: side) == [.send(Self.frame(answer), on: link)])
    }

    @Test(arguments: Side.allCases) func staleCardsAreIgnored(side: Side) throws {
        let pair = Pair.ranging()
        pair.touch([.c])
        pair.separate([.c])
        pair.touch([.r])
        #expect(pair.bumps(side).map(\.bumpID) == [1, 2])
        let link = try #require(pair.link(side))
        #expect(pair.inject(Self.card(side.other, 1), to: side) == [])
        #expect(pair.inject(.cardAck(bumpID: 1), to: side) == [])
        #expect(pair.inject(Self.card(side.other, 2), to: side) == [.send(Self.frame(.cardAck(bumpID: 2)), on: link)])
        #expect(pair.bumps(side).count == 2)
    }

    /// A card that is not a JSON object ends its drop on both sides at once, without a bump:
    /// declined (and declined again when repeated); the link stays and the next drop bumps.
    @Test(arguments: Side.allCases) func anInvalidCardIsDeclined(side: Side) throws {
        let pair = Pair.ranging()
        let link = try #require(pair.link(side))
        for (offset, text) in ["not json", "[1, 2]", "\"a string\"", "{\"unterminated\": "].enumerated() {
            let id = UInt32(offset + 1)
            #expect(pair.inject(.card(bumpID: id, cardJSON: text), to: side) == [.send(Self.frame(.cardDecline(bumpID: id)), on: link)])
            #expect(pair.inject(.card(bumpID: id, cardJSON: text), to: side) == [.send(Self.frame(.cardDecline(bumpID: id)), on: link)])
        }
        #expect(pair.link(side) == link && pair.bumps(side).isEmpty)
        pair.touch([side.other])
        #expect(pair.bumps(.c).map(\.bumpID) == [5] && pair.bumps(.r).map(\.bumpID) == [5])
    }

    /// A closed link abandons an undecided drop on both sides; the next drop takes the next id.
    @Test func aClosedLinkAbandonsAnUndecidedDrop() throws {
        let pair = Pair.ranging()
        pair.network = { $0.kind == .cardAck ? 0 : 1 }
        pair.touch([.c])
        let mark = pair.mark
        pair.breakLink()
        #expect(pair.radio(.c, since: mark) == [.closeUWB(Pair.id(.r))])
        #expect(pair.radio(.r, since: mark) == [.closeUWB(Pair.id(.c))])
        pair.network = { _ in 1 }
        pair.run(5_000, adverts: true)
        #expect(pair.bumps(.c).isEmpty && pair.bumps(.r).isEmpty)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        pair.separate([.r])  // R's contact, taken by drop 1, re-arms
        pair.touch([.c])
        #expect(pair.bumps(.c).map(\.bumpID) == [2] && pair.bumps(.r).map(\.bumpID) == [2])
    }
}
