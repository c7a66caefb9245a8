import BLE
import Events
import PeerProtocol

// Exactly one bump on each side per gesture, or none on either, over a link that loses messages
// (docs/PROTOCOL.md). The UWB controller decides every drop: it acknowledges the controlee's
// card only once it holds the ack of its own (then it reports the bump), or declines the drop
// when its deadline passes. The controlee never gives up on its own while the controller can
// still be heard; it repeats its card until the decision reaches it. Every message may arrive
// twice, so every answer is idempotent. A drop lives on its link (`OpenLink.exchange`); which
// drop ended last lives on the machine, since it outlasts links.
extension PeerMachine {
    /// Proximity saw a contact in this peer's ranges: start a profile drop, unless one is under way.
    mutating func startDrop(distance: Double, on link: inout OpenLink) -> [DropAction] {
        guard link.exchange == nil else { return [] }
        let bumpID = lastBumpID &+ 1
        link.exchange = Exchange(bumpID: bumpID, startedAt: now, distance: distance, cardSentAt: now)
        return [
            .log(LogLine(.info, "profile drop started", ["bump": "\(bumpID)"])),
            .send(.card(bumpID: bumpID, cardJSON: identity.card.json), on: link.id),
        ]
    }

    mutating func receivedCard(bumpID: UInt32, json: String, proximity: ProximityView, on link: inout OpenLink) -> [DropAction] {
        if let last = lastDrop, bumpID <= last.bumpID {
            // The peer repeats a drop that has ended here: our answer was lost. Answer again.
            guard bumpID == last.bumpID else { return [] }
            return [.send(last.completed ? .cardAck(bumpID: bumpID) : .cardDecline(bumpID: bumpID), on: link.id)]
        }
        if let current = link.exchange, bumpID < current.bumpID { return [] }  // the peer will follow our higher id
        let card: ProfileCard
        do {
            card = try ProfileCard(json: json)
        } catch {
            // A card we could not show ends the drop on both sides without a bump, at once: the
            // decline tells the peer, which would otherwise repeat it until its timer gives up.
            link.exchange = nil
            lastDrop = (bumpID, false)
            return [
                .log(LogLine(.warning, "declining a profile drop with an invalid card", ["bump": "\(bumpID)", "error": "\(error)"])),
                .send(.cardDecline(bumpID: bumpID), on: link.id),
            ]
        }
        var actions: [DropAction] = []
        if var current = link.exchange {
            if bumpID > current.bumpID {
                // Both started; the higher id wins and both converge on it.
                current = Exchange(bumpID: bumpID, startedAt: current.startedAt, distance: current.distance, cardSentAt: now)
                actions.append(.send(.card(bumpID: bumpID, cardJSON: identity.card.json), on: link.id))
            }
            current.peerCard = card.json
            link.exchange = current
        } else {
            // The peer saw the contact first. Join, unless this gesture already had its bump.
            guard proximity.contactArmed else {
                lastDrop = (bumpID, false)
                return [
                    .log(LogLine(.info, "declining a second profile drop in one gesture", ["bump": "\(bumpID)"])),
                    .send(.cardDecline(bumpID: bumpID), on: link.id),
                ]
            }
            link.exchange = Exchange(bumpID: bumpID, startedAt: now, peerCard: card.json, distance: proximity.filtered, cardSentAt: now)
            actions += [
                .consumeContact,
                .log(LogLine(.info, "profile drop joined", ["bump": "\(bumpID)"])),
                .send(.card(bumpID: bumpID, cardJSON: identity.card.json), on: link.id),
            ]
        }
        // The controlee acknowledges at once: the controller learns that we hold its card. The
        // controller's acknowledgement is its decision, sent when the drop completes.
        if !decides { actions.append(.send(.cardAck(bumpID: bumpID), on: link.id)) }
        return actions + completeDropIfDone(on: &link)
    }

    mutating func receivedCardAck(bumpID: UInt32, on link: inout OpenLink) -> [DropAction] {
        guard link.exchange?.bumpID == bumpID else { return [] }
        link.exchange?.ownCardAcked = true
        return completeDropIfDone(on: &link)
    }

    mutating func receivedCardDecline(bumpID: UInt32, on link: inout OpenLink) -> [DropAction] {
        if let current = link.exchange, current.bumpID == bumpID { return [endDrop(current, on: &link, reason: "the peer declined it")] }
        // A drop we never joined: keep bump ids in step.
        if bumpID > lastBumpID { lastDrop = (bumpID, false) }
        return []
    }

    /// The drop's deadlines and repeats, on each tick.
    mutating func dropTimers(on link: inout OpenLink) -> [DropAction] {
        guard let current = link.exchange else { return [] }
        if decides, now - current.startedAt > config.exchangeTimeoutMilliseconds {
            let end = endDrop(current, on: &link, reason: "no answer before the deadline")
            return [end, .send(.cardDecline(bumpID: current.bumpID), on: link.id)]
        }
        if !decides, now - max(lastMessageAt, current.startedAt) > 4 * config.exchangeTimeoutMilliseconds {
            // The controller decides within its deadline and answers every card after it; this
            // long a silence means the link is gone. Tell it, in case it still can hear us.
            let end = endDrop(current, on: &link, reason: "the peer fell silent")
            return [end, .send(.cardDecline(bumpID: current.bumpID), on: link.id)]
        }
        guard !decides || !current.ownCardAcked, now - current.cardSentAt >= config.retransmitMilliseconds else { return [] }
        link.exchange?.cardSentAt = now
        return [.send(.card(bumpID: current.bumpID, cardJSON: identity.card.json), on: link.id)]
    }

    private mutating func completeDropIfDone(on link: inout OpenLink) -> [DropAction] {
        guard let current = link.exchange, let card = current.peerCard, current.ownCardAcked else { return [] }
        link.exchange = nil
        lastDrop = (current.bumpID, true)
        let bump = DropAction.bump(.init(peer: peer.description, bumpID: current.bumpID, distance: current.distance, cardJSON: card))
        return decides ? [bump, .send(.cardAck(bumpID: current.bumpID), on: link.id)] : [bump]
    }

    private mutating func endDrop(_ current: Exchange, on link: inout OpenLink, reason: String) -> DropAction {
        link.exchange = nil
        lastDrop = (current.bumpID, false)
        return .log(
            LogLine(.warning, "profile drop ended without a bump", ["bump": "\(current.bumpID)", "reason": "\(reason)"]))
    }
}
