import PeerProtocol

enum MessageKind: Hashable, Sendable {
    case hello, rangingParameters, parametersAccepted, card, cardAck, goodbye, cardDecline, busy
}

extension PeerMessage {
    var kind: MessageKind {
        switch self {
        case .hello: .hello
        case .rangingParameters: .rangingParameters
        case .parametersAccepted: .parametersAccepted
        case .card: .card
        case .cardAck: .cardAck
        case .goodbye: .goodbye
        case .cardDecline: .cardDecline
        case .busy: .busy
        }
    }
}
