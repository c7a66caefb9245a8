/*
 * l2cap_close_race: reproduces the Debian 12 (6.1.192) kernel BUG that closing a connecting L2CAP
 * LE socket can hit, and shows a way around it (issue 34, item 2; Tests/VMRig/README.md).
 * Runs inside the VM rig (static, like mgmt_probe), with hci0 advertising and hci1 connecting:
 *
 *   l2cap_close_race close|wait ATTEMPTS [GAP_MS]
 *
 * Each attempt connects (non-blocking) from hci1 to hci0 on PSM 0x85 and gives up after a delay
 * (50, 100, ... 700 ms in turn). "close" closes the socket at once if the connect is still in
 * progress; "wait" keeps polling until the kernel ends the connect (connected or failed, at most
 * 45 s) and closes only then. The next attempt follows GAP_MS later (default 300, plus up to
 * 222 ms), as a rig tries the same peer again at its next advert: with the kernel still tearing
 * down the abandoned connection, the close is what meets the BUG. With GAP_MS 4500 each attempt
 * makes a new LE link (in "wait" mode then every connect is still in progress at the give-up).
 *
 * After every attempt it reads the kernel log; on a BUG, WARNING, Oops or list corruption it
 * prints "RACE kernel complained after attempt N" and exits 1 (often it is killed first: the BUG
 * kills the closing thread). Otherwise: "RACE N attempts, no complaint: ..." and exit 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define AF_BLUETOOTH_ 31
#define BTPROTO_HCI_ 1
#define SOL_BLUETOOTH_ 274
#define BT_SECURITY_ 4
#define BDADDR_LE_PUBLIC_ 1
#define PSM 0x85
#define HCIGETDEVINFO_ _IOR('H', 211, int)

struct __attribute__((packed)) sockaddr_l2_ {
    uint16_t family; uint16_t psm; uint8_t bdaddr[6]; uint16_t cid; uint8_t bdaddr_type;
};

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* The adapter's address (struct hci_dev_info: dev_id u16, name[8], then bdaddr). */
static void adapter_address(int index, uint8_t out[6]) {
    uint8_t info[128] = {0};
    int fd = socket(AF_BLUETOOTH_, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI_);
    info[0] = (uint8_t)index;
    if (fd < 0 || ioctl(fd, HCIGETDEVINFO_, info) < 0) { perror("HCIGETDEVINFO"); exit(2); }
    memcpy(out, info + 10, 6);
    close(fd);
}

/* An L2CAP LE socket bound to `local` (NULL: any adapter) and `psm`, security low. */
static int l2cap_socket(const uint8_t *local, uint16_t psm) {
    struct sockaddr_l2_ a = {.family = AF_BLUETOOTH_, .psm = psm, .bdaddr_type = BDADDR_LE_PUBLIC_};
    uint8_t security[2] = {1, 0};
    int fd = socket(AF_BLUETOOTH_, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (local) memcpy(a.bdaddr, local, 6);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0) { perror("bind"); exit(2); }
    setsockopt(fd, SOL_BLUETOOTH_, BT_SECURITY_, security, sizeof security);
    return fd;
}

static int kernel_complained(void) {
    static char log[1 << 20];
    int n = klogctl(3, log, sizeof log - 1);   /* SYSLOG_ACTION_READ_ALL */
    if (n <= 0) return 0;
    log[n] = 0;
    return strstr(log, "BUG") || strstr(log, "WARNING") || strstr(log, "Oops") ||
           strstr(log, "list_del corruption") || strstr(log, "general protection");
}

/* 0 while in progress, 1 connected, 2 failed. */
static int connect_state(int fd, int wait_ms) {
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int error = 0;
    socklen_t length = sizeof error;
    if (poll(&p, 1, wait_ms) <= 0) return 0;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    return error ? 2 : 1;
}

int main(int argc, char **argv) {
    if (argc < 3 || (strcmp(argv[1], "close") && strcmp(argv[1], "wait"))) {
        fprintf(stderr, "usage: %s close|wait ATTEMPTS [GAP_MS]\n", argv[0]);
        return 2;
    }
    int wait_out = !strcmp(argv[1], "wait");
    int attempts = atoi(argv[2]);
    int gap_ms = argc > 3 ? atoi(argv[3]) : 300;
    uint8_t advertiser[6], connector[6];
    adapter_address(0, advertiser);
    adapter_address(1, connector);
    int listener = l2cap_socket(NULL, PSM);
    if (listen(listener, 16) < 0) { perror("listen"); return 2; }
    fcntl(listener, F_SETFL, O_NONBLOCK);

    int closed_pending = 0, waited = 0, connected_first = 0;
    for (int i = 0; i < attempts; i++) {
        int delay_ms = 50 * (1 + i % 14);
        int fd = l2cap_socket(connector, 0);
        struct sockaddr_l2_ to = {.family = AF_BLUETOOTH_, .psm = PSM, .bdaddr_type = BDADDR_LE_PUBLIC_};
        memcpy(to.bdaddr, advertiser, 6);
        fcntl(fd, F_SETFL, O_NONBLOCK);
        int state = 0;
        if (connect(fd, (struct sockaddr *)&to, sizeof to) == 0) state = 1;
        else if (errno != EINPROGRESS) state = 2;
        double start = now_s();
        while (state == 0 && (now_s() - start) * 1000 < delay_ms) state = connect_state(fd, 5);
        if (state != 0) {
            connected_first++;
        } else if (wait_out) {
            double given_up = now_s();
            while (state == 0 && now_s() - given_up < 45) state = connect_state(fd, 50);
            waited++;
        } else {
            closed_pending++;
        }
        close(fd);
        int accepted;
        while ((accepted = accept(listener, NULL, NULL)) >= 0) close(accepted);
        usleep((useconds_t)(gap_ms + (i % 7) * 37) * 1000);
        if (kernel_complained()) {
            printf("RACE kernel complained after attempt %d (given up at %d ms, %s)\n", i + 1, delay_ms,
                   wait_out ? "waited out" : "closed while connecting");
            return 1;
        }
    }
    printf("RACE %d attempts, no complaint: %d closed while connecting, %d waited out, %d ended before the give-up\n",
           attempts, closed_pending, waited, connected_first);
    return 0;
}
