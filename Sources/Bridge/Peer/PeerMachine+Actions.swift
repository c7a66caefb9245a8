import BLE
import Events
import Logging
import PeerProtocol

// Each input's handler answers in its own small vocabulary, so its type says what that input can
// set off (a grant can only connect, a lost board only drops a route). `receive` flattens the
// answers, in order, into the `PeerAction`s `NodeCore` carries out.

/// An answer of one input's handler, flattened into `PeerAction`s.
protocol PeerActionConvertible {
    func append(to actions: inout [PeerAction])
}

extension Array: PeerActionConvertible where Element: PeerActionConvertible {
    func append(to actions: inout [PeerAction]) {
        for element in self { element.append(to: &actions) }
    }
}

extension Optional: PeerActionConvertible where Wrapped: PeerActionConvertible {
    func append(to actions: inout [PeerAction]) {
        self?.append(to: &actions)
    }
}

extension PeerMachine {
    /// A log line: the machine does no logging of its own.
    struct LogLine: PeerActionConvertible {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata

        init(_ level: Logger.Level, _ message: String, _ metadata: Logger.Metadata = [:]) {
            self.level = level
            self.message = message
            self.metadata = metadata
        }

        func append(to actions: inout [PeerAction]) { actions.append(.log(level, message, metadata)) }
    }

    /// Ending our side of a link, in the order it must happen.
    struct LinkEnd: PeerActionConvertible {
        var link: LinkID
        /// `goodbye` or `busy`: the last frame, before the link closes.
        var farewell: PeerMessage?
        /// False when the adapter already reported the link closed.
        var disconnect: Bool
        /// The drop the link took with it, ended without a bump.
        var abandonedDrop: UInt32?
        /// The running session's route goes.
        var unroute = false
        /// What we held on the board (a session, one starting, a reserved place) is given up.
        var releaseUWB = false

        func append(to actions: inout [PeerAction]) {
            if let farewell { actions.append(.send(farewell, on: link)) }
            if disconnect { actions.append(.disconnect(link)) }
            actions.append(.unbindLink(link))
            if let abandonedDrop {
                LogLine(.warning, "profile drop ended without a bump", ["bump": "\(abandonedDrop)", "reason": "the link closed"])
                    .append(to: &actions)
            }
            if unroute { actions.append(.route(nil)) }
            if releaseUWB { actions.append(.closeUWB) }
        }
    }

    /// The initiator's `hello` and ranging parameters, sent together until accepted.
    struct Proposal: PeerActionConvertible {
        var link: LinkID
        var hello: PeerMessage.Hello
        var parameters: PeerMessage.RangingParameters

        func append(to actions: inout [PeerAction]) {
            actions.append(.send(.hello(hello), on: link))
            actions.append(.send(.rangingParameters(parameters), on: link))
        }
    }

    /// What the profile drop does: on the link, in the log, and the bump.
    enum DropAction: PeerActionConvertible {
        case send(PeerMessage, on: LinkID)
        case log(LogLine)
        /// We joined the peer's drop with this gesture's contact.
        case consumeContact
        case bump(Event.Bump)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .send(let message, let link): actions.append(.send(message, on: link))
            case .log(let line): line.append(to: &actions)
            case .consumeContact: actions.append(.consumeContact)
            case .bump(let bump): actions.append(.emit(.bump(bump)))
            }
        }
    }

    enum HeardAction: PeerActionConvertible {
        /// Rough proximity of a peer without a ranging session.
        case rough(Event.Rough)
        case connect(BLEAddress)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .rough(let rough): actions.append(.emit(.rough(rough)))
            case .connect(let address): actions.append(.connect(address))
            }
        }
    }

    enum GrantedAction: PeerActionConvertible {
        case connect(BLEAddress)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .connect(let address): actions.append(.connect(address))
            }
        }
    }

    enum ConnectStartedAction: PeerActionConvertible {
        /// Our attempt: the link is the peer's from now on.
        case bind(LinkID)
        /// A connection we did not ask for (none was asked in this stage): closed.
        case refuse(LinkID)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .bind(let link): actions.append(.bindLink(link))
            case .refuse(let link):
                LogLine(.warning, "closing a connection nobody asked for", ["link": "\(link)"]).append(to: &actions)
                actions.append(.disconnect(link))
            }
        }
    }

    enum OutgoingLinkOpenedAction: PeerActionConvertible {
        /// One-to-many: a place in one of our sessions first, then the proposal.
        case reservePlace(controlee: UInt16)
        case propose(Proposal)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .reservePlace(let controlee): actions.append(.reserveSharedPlace(controlee: controlee))
            case .propose(let proposal): proposal.append(to: &actions)
            }
        }
    }

    enum SharedPlaceReservedAction: PeerActionConvertible {
        /// The link closed before the place came: give it back.
        case giveBack
        case propose(Proposal)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .giveBack: actions.append(.closeUWB)
            case .propose(let proposal): proposal.append(to: &actions)
            }
        }
    }

    enum IncomingHelloAction: PeerActionConvertible {
        /// The peer's new link replaces the one it had.
        case replace(LinkEnd)
        case named(Event.PeerNamed)
        case log(LogLine)
        case accept(LinkID, hello: PeerMessage.Hello)
        /// No ranging session for the peer now: `busy`, and the link closes.
        case refuse(LinkID, retryAfter: UInt16)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .replace(let end): end.append(to: &actions)
            case .named(let named): actions.append(.emit(.peerNamed(named)))
            case .log(let line): line.append(to: &actions)
            case .accept(let link, let hello):
                actions.append(.bindLink(link))
                actions.append(.send(.hello(hello), on: link))
            case .refuse(let link, let retryAfter):
                actions.append(.send(.busy(retryAfterMilliseconds: retryAfter), on: link))
                actions.append(.disconnect(link))
            }
        }
    }

    enum MessageAction: PeerActionConvertible {
        case named(Event.PeerNamed)
        /// The peer broke the protocol: the link closes, the peer stays.
        case violation(reason: String, LinkEnd)
        /// `busy`: the link closes and we wait.
        case leave(LinkEnd)
        /// A repeated proposal of the session we run: our acceptance was lost.
        case acceptAgain(sessionID: UInt32, on: LinkID)
        /// What we held on the board goes, for the session a new proposal replaces it with.
        case releaseSession(unroute: Bool)
        case startSession(UWBSessionRequest)
        case drop(DropAction)
        case peerEnded

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .named(let named): actions.append(.emit(.peerNamed(named)))
            case .violation(let reason, let end):
                LogLine(.warning, "closing link", ["link": "\(end.link)", "reason": "\(reason)"]).append(to: &actions)
                end.append(to: &actions)
            case .leave(let end): end.append(to: &actions)
            case .acceptAgain(let sessionID, let link): actions.append(.send(.parametersAccepted(sessionID: sessionID), on: link))
            case .releaseSession(let unroute):
                if unroute { actions.append(.route(nil)) }
                actions.append(.closeUWB)
            case .startSession(let request): actions.append(.openUWB(request))
            case .drop(let drop): drop.append(to: &actions)
            case .peerEnded: actions.append(.end(.peerEnded))
            }
        }
    }

    enum RevokedAction: PeerActionConvertible {
        case rough(Event.Rough)
        case leave(LinkEnd)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .rough(let rough): actions.append(.emit(.rough(rough)))
            case .leave(let end): end.append(to: &actions)
            }
        }
    }

    enum UWBStartedAction: PeerActionConvertible {
        case route(UWBRoute)
        case log(LogLine)
        /// The controlee's acceptance, once its session runs.
        case accept(sessionID: UInt32, on: LinkID)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .route(let route): actions.append(.route(route))
            case .log(let line): line.append(to: &actions)
            case .accept(let sessionID, let link): actions.append(.send(.parametersAccepted(sessionID: sessionID), on: link))
            }
        }
    }

    /// A session failed to start, or the board ended it.
    enum UWBEndedAction: PeerActionConvertible {
        case log(LogLine)
        /// Ranging cannot go on over this link: start over from discovery.
        case leave(LinkEnd)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .log(let line): line.append(to: &actions)
            case .leave(let end): end.append(to: &actions)
            }
        }
    }

    enum UWBLostAction: PeerActionConvertible {
        /// The running session went with the board.
        case unroute

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .unroute: actions.append(.route(nil))
            }
        }
    }

    enum UWBBackAction: PeerActionConvertible {
        /// The peer kept its side running: ours starts again without a new negotiation.
        case reopen(UWBSessionRequest)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .reopen(let request): actions.append(.openUWB(request))
            }
        }
    }

    enum TickAction: PeerActionConvertible {
        case log(LogLine)
        /// The connection attempt timed out.
        case abandon(LinkEnd)
        case propose(Proposal)
        case drop(DropAction)
        case report(SessionReport)

        func append(to actions: inout [PeerAction]) {
            switch self {
            case .log(let line): line.append(to: &actions)
            case .abandon(let end): end.append(to: &actions)
            case .propose(let proposal): proposal.append(to: &actions)
            case .drop(let drop): drop.append(to: &actions)
            case .report(let report): actions.append(.report(report))
            }
        }
    }
}
