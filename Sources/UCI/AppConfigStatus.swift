/// One entry of SESSION_SET_APP_CONFIG_RSP: which parameter the UWBS refused and why.
package struct AppConfigStatus: Hashable, Sendable {
    package var id: AppConfigID
    package var status: StatusCode

    package init(id: AppConfigID, status: StatusCode) {
        self.id = id
        self.status = status
    }
}
