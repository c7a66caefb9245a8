/*
 * mgmt_probe: checks, step by step, that two kernel Bluetooth adapters work through the mgmt
 * control channel and L2CAP LE credit-based sockets, and reports what the kernel does.
 * Runs inside the VM rig (built with gcc -static -O2); needs no BlueZ user space.
 *
 *   mgmt_probe [--adv N] [--scan N] [--psm P] [--sdu BYTES] [--observe SECONDS]
 *              [--adv-before-power] [--skip-l2cap] [--skip-ext-params] [-v]
 *   mgmt_probe --wait-indexes N     (rig helper: wait up to 30 s until mgmt lists N controllers)
 *   mgmt_probe --power-on           (rig helper: Set Low Energy + Set Powered on every adapter)
 *   mgmt_probe --monitor SECONDS    (rig helper: print every mgmt event; 0 = forever)
 *   mgmt_probe --advertise N        (rig helper: power hciN on, Add Advertising instance 1)
 *   mgmt_probe --power N 0|1        (rig helper: Set Powered off/on on hciN)
 *   mgmt_probe --discover N SECONDS (rig helper: discover on hciN, print Device Found; exit 1 if none)
 *
 * Steps: mgmt socket; Read Version; Read Controller Index List; Read Controller Info of each;
 * Set Low Energy; Set Powered; Read Advertising Features; Add Advertising (instance 1,
 * connectable + discoverable, manufacturer data) on the advertiser (default hci0); Start
 * Discovery (LE) on the scanner (default hci1) until a Device Found carries the advert, then
 * counts Device Found events for --observe seconds; Stop Discovery; L2CAP LE CoC: listener
 * (BDADDR_ANY, PSM, BT_SECURITY low, BT_RCVMTU 512) and a client bound to the scanner
 * connecting to the advertiser, one SDU each way; disconnect; Add Ext Adv Params + Data with a
 * 100 ms interval; non-connectable advertising with a scan response; Remove Advertising.
 *
 * Output: "PASS step: detail", "FAIL step: detail", "INFO ..." (facts), "EVENT ..." (mgmt
 * events with time since start). Exit status: number of failed steps (0 = all passed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define AF_BLUETOOTH_ 31
#define BTPROTO_HCI_ 1
#define BTPROTO_L2CAP_ 0
#define HCI_CHANNEL_CONTROL_ 3
#define SOL_BLUETOOTH_ 274
#define BT_SECURITY_ 4
#define BT_SNDMTU_ 12
#define BT_RCVMTU_ 13
#define BDADDR_LE_PUBLIC_ 1
#define MGMT_INDEX_NONE 0xFFFF

struct __attribute__((packed)) sockaddr_hci_ { uint16_t family, dev, channel; };
struct __attribute__((packed)) sockaddr_l2_ {
    uint16_t family; uint16_t psm; uint8_t bdaddr[6]; uint16_t cid; uint8_t bdaddr_type;
};

/* ------------------------------------------------------------------ output */
static struct timespec t_start;
static int verbose, failures;
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t_start.tv_sec) + (t.tv_nsec - t_start.tv_nsec) / 1e9;
}
static void out(const char *kind, const char *step, const char *fmt, ...)
{
    va_list ap;
    printf("%-5s %s: ", kind, step);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (!strcmp(kind, "FAIL")) failures++;
}
#define PASS(step, ...) out("PASS", step, __VA_ARGS__)
#define FAIL(step, ...) out("FAIL", step, __VA_ARGS__)
#define INFO(step, ...) out("INFO", step, __VA_ARGS__)

static const char *hex(const uint8_t *p, size_t n)
{
    static char buf[4][1024];
    static int which;
    char *b = buf[which++ & 3];
    size_t i;
    for (i = 0; i < n && i < 500; i++) sprintf(b + 2 * i, "%02x", p[i]);
    b[2 * i] = 0;
    return b;
}
static const char *addrstr(const uint8_t *a)
{
    static char buf[4][18];
    static int which;
    char *b = buf[which++ & 3];
    sprintf(b, "%02X:%02X:%02X:%02X:%02X:%02X", a[5], a[4], a[3], a[2], a[1], a[0]);
    return b;
}
static uint16_t le16(const uint8_t *p) { return p[0] | p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

static const char *status_name(int s)
{
    static const char *names[] = {"Success", "Unknown Command", "Not Connected", "Failed",
        "Connect Failed", "Authentication Failed", "Not Paired", "No Resources", "Timeout",
        "Already Connected", "Busy", "Rejected", "Not Supported", "Invalid Parameters",
        "Disconnected", "Not Powered", "Cancelled", "Invalid Index", "RFKilled",
        "Already Paired", "Permission Denied"};
    return s >= 0 && s < (int)(sizeof names / sizeof *names) ? names[s] : "?";
}

static const char *settings_str(uint32_t s)
{
    static char buf[512];
    static const char *bits[] = {"powered", "connectable", "fast-connectable", "discoverable",
        "bondable", "link-security", "ssp", "br/edr", "hs", "le", "advertising",
        "secure-conn", "debug-keys", "privacy", "configuration", "static-addr", "phy-config",
        "wide-band-speech", "cis-central", "cis-peripheral", "iso-broadcaster",
        "sync-receiver", "ll-privacy"};
    buf[0] = 0;
    for (unsigned i = 0; i < 32; i++) {
        if (!(s & (1u << i))) continue;
        if (buf[0]) strcat(buf, ",");
        if (i < sizeof bits / sizeof *bits) strcat(buf, bits[i]);
        else sprintf(buf + strlen(buf), "bit%u", i);
    }
    return buf;
}

/* ------------------------------------------------------------------ mgmt */
static int mgmt_fd = -1;

struct reply { int done; int status; int is_status_event; uint8_t params[1024]; size_t len; };
static struct { uint16_t op, index; struct reply *r; } pending;

/* Device Found bookkeeping for the advertiser's address */
static uint8_t watch_addr[6];
static int watch_active;
static struct {
    int count;              /* Device Found events for watch_addr */
    double first, last;
    int8_t rssi;
    uint8_t addr_type;
    uint32_t flags;
    uint8_t eir[512];
    size_t eir_len;
    int other;              /* Device Found events for other addresses */
} found;

static struct { int connected[8]; int disconnected[8]; double t_connected[8], t_disconnected[8]; } conn_ev;

static void handle_event(const uint8_t *b, size_t n)
{
    if (n < 6) return;
    uint16_t ev = le16(b), index = le16(b + 2), plen = le16(b + 4);
    const uint8_t *p = b + 6;
    if (plen > n - 6) plen = n - 6;
    double t = now_s();
    switch (ev) {
    case 0x0001: case 0x0002: {
        if (plen < 3) break;
        uint16_t op = le16(p);
        if (pending.r && op == pending.op && index == pending.index) {
            pending.r->done = 1;
            pending.r->status = p[2];
            pending.r->is_status_event = ev == 0x0002;
            pending.r->len = plen - 3;
            memcpy(pending.r->params, p + 3, plen - 3);
        } else if (verbose) {
            printf("EVENT %7.3f hci%u unexpected reply to 0x%04x status %u\n", t, index, op, p[2]);
        }
        break;
    }
    case 0x0004: printf("EVENT %7.3f Index Added hci%u\n", t, index); break;
    case 0x0005: printf("EVENT %7.3f Index Removed hci%u\n", t, index); break;
    case 0x0006:
        if (plen >= 4) printf("EVENT %7.3f hci%u New Settings 0x%08x %s\n", t, index, le32(p), settings_str(le32(p)));
        break;
    case 0x000B:
        if (plen >= 13) {
            printf("EVENT %7.3f hci%u Device Connected %s type %u flags 0x%x eir %s\n", t, index,
                   addrstr(p), p[6], le32(p + 7), hex(p + 13, plen - 13));
            if (index < 8) { conn_ev.connected[index]++; conn_ev.t_connected[index] = t; }
        }
        break;
    case 0x000C:
        if (plen >= 8) {
            printf("EVENT %7.3f hci%u Device Disconnected %s type %u reason %u\n", t, index, addrstr(p), p[6], p[7]);
            if (index < 8) { conn_ev.disconnected[index]++; conn_ev.t_disconnected[index] = t; }
        }
        break;
    case 0x000D:
        if (plen >= 8) printf("EVENT %7.3f hci%u Connect Failed %s type %u status %u\n", t, index, addrstr(p), p[6], p[7]);
        break;
    case 0x0012:
        if (plen >= 14) {
            uint16_t eir_len = le16(p + 12);
            if (eir_len > plen - 14) eir_len = plen - 14;
            if (watch_active && !memcmp(p, watch_addr, 6)) {
                if (found.count == 0) found.first = t;
                found.count++;
                found.last = t;
                found.addr_type = p[6];
                found.rssi = (int8_t)p[7];
                found.flags = le32(p + 8);
                found.eir_len = eir_len;
                memcpy(found.eir, p + 14, eir_len);
                if (found.count <= 3 || verbose)
                    printf("EVENT %7.3f hci%u Device Found %s type %u rssi %d flags 0x%x eir %s\n", t, index,
                           addrstr(p), p[6], (int8_t)p[7], le32(p + 8), hex(p + 14, eir_len));
            } else {
                found.other++;
                if (verbose || found.other <= 3)
                    printf("EVENT %7.3f hci%u Device Found (other) %s type %u rssi %d flags 0x%x eir %s\n", t, index,
                           addrstr(p), p[6], (int8_t)p[7], le32(p + 8), hex(p + 14, eir_len));
            }
        }
        break;
    case 0x0013:
        if (plen >= 2) printf("EVENT %7.3f hci%u Discovering type 0x%02x %s\n", t, index, p[0], p[1] ? "on" : "off");
        break;
    case 0x0023: if (plen >= 1) printf("EVENT %7.3f hci%u Advertising Added %u\n", t, index, p[0]); break;
    case 0x0024: if (plen >= 1) printf("EVENT %7.3f hci%u Advertising Removed %u\n", t, index, p[0]); break;
    default:
        if (verbose) printf("EVENT %7.3f hci%u event 0x%04x %s\n", t, index, ev, hex(p, plen));
    }
    fflush(stdout);
}

/* read and handle mgmt events for up to `timeout` seconds, or until *stop becomes true */
static void pump(double timeout, const int *stop)
{
    double end = now_s() + timeout;
    uint8_t buf[4096];
    while (!(stop && *stop)) {
        double left = end - now_s();
        if (left <= 0) break;
        struct pollfd pfd = {mgmt_fd, POLLIN, 0};
        int r = poll(&pfd, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR) { perror("poll"); return; }
        if (r <= 0) continue;
        ssize_t n = read(mgmt_fd, buf, sizeof buf);
        if (n < 0) { if (errno == EINTR || errno == EAGAIN) continue; perror("read mgmt"); return; }
        handle_event(buf, (size_t)n);
    }
}

/* send a command and wait for its Command Complete/Status; returns the status, -1 on timeout */
static int mgmt_cmd(uint16_t op, uint16_t index, const void *params, size_t len, struct reply *r, double timeout)
{
    uint8_t buf[1024];
    buf[0] = op & 0xff; buf[1] = op >> 8;
    buf[2] = index & 0xff; buf[3] = index >> 8;
    buf[4] = len & 0xff; buf[5] = len >> 8;
    if (len) memcpy(buf + 6, params, len);
    memset(r, 0, sizeof *r);
    pending.op = op; pending.index = index; pending.r = r;
    if (write(mgmt_fd, buf, 6 + len) != (ssize_t)(6 + len)) {
        pending.r = NULL;
        return -2;
    }
    pump(timeout, &r->done);
    pending.r = NULL;
    return r->done ? r->status : -1;
}

static int cmd_u8(uint16_t op, uint16_t index, uint8_t v, struct reply *r)
{
    return mgmt_cmd(op, index, &v, 1, r, 10);
}

/* ------------------------------------------------------------------ L2CAP */
static int l2cap_socket(const uint8_t *bind_addr, uint16_t psm, int rcvmtu, const char *step)
{
    int fd = socket(AF_BLUETOOTH_, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, BTPROTO_L2CAP_);
    if (fd < 0) { FAIL(step, "socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP): %s", strerror(errno)); return -1; }
    struct sockaddr_l2_ a;
    memset(&a, 0, sizeof a);
    a.family = AF_BLUETOOTH_;
    a.psm = psm;    /* little-endian on x86 */
    if (bind_addr) memcpy(a.bdaddr, bind_addr, 6);
    a.bdaddr_type = BDADDR_LE_PUBLIC_;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        FAIL(step, "bind(psm 0x%04x, %s): %s", psm, bind_addr ? addrstr(bind_addr) : "BDADDR_ANY", strerror(errno));
        close(fd);
        return -1;
    }
    uint8_t sec[2] = {1, 0};    /* BT_SECURITY_LOW, key size 0 */
    if (setsockopt(fd, SOL_BLUETOOTH_, BT_SECURITY_, sec, sizeof sec) < 0) {
        FAIL(step, "setsockopt BT_SECURITY low: %s", strerror(errno));
        close(fd);
        return -1;
    }
    uint16_t mtu = (uint16_t)rcvmtu;
    if (setsockopt(fd, SOL_BLUETOOTH_, BT_RCVMTU_, &mtu, sizeof mtu) < 0) {
        FAIL(step, "setsockopt BT_RCVMTU %d: %s", rcvmtu, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static void mtus(int fd, int *snd, int *rcv)
{
    uint16_t v = 0;
    socklen_t l = sizeof v;
    *snd = getsockopt(fd, SOL_BLUETOOTH_, BT_SNDMTU_, &v, &l) == 0 ? v : -errno;
    v = 0; l = sizeof v;
    *rcv = getsockopt(fd, SOL_BLUETOOTH_, BT_RCVMTU_, &v, &l) == 0 ? v : -errno;
}

/* wait for fd to become ready for `events`, pumping mgmt events meanwhile */
static int wait_fd(int fd, short events, double timeout)
{
    double end = now_s() + timeout;
    uint8_t buf[4096];
    for (;;) {
        double left = end - now_s();
        if (left <= 0) return 0;
        struct pollfd p[2] = {{fd, events, 0}, {mgmt_fd, POLLIN, 0}};
        int r = poll(p, 2, left > 1 ? 1000 : (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR) return -1;
        if (r <= 0) continue;
        if (p[1].revents & POLLIN) {
            ssize_t n = read(mgmt_fd, buf, sizeof buf);
            if (n > 0) handle_event(buf, (size_t)n);
        }
        if (p[0].revents) return p[0].revents;
    }
}

/* ------------------------------------------------------------------ main */
static void usage(void)
{
    fprintf(stderr, "usage: mgmt_probe [--adv N] [--scan N] [--psm P] [--sdu BYTES] [--observe S]\n"
                    "                  [--adv-before-power] [--skip-l2cap] [--skip-ext-params] [-v]\n"
                    "       mgmt_probe --wait-indexes N | --power-on | --monitor SECONDS | --advertise N\n"
                    "       mgmt_probe --discover N SECONDS | --power N 0|1\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int adv = 0, scan = 1, sdu = 320, adv_before_power = 0, skip_l2cap = 0, skip_ext = 0, wait_indexes = -1;
    int power_on = 0, advertise = -1, discover = -1, power_idx = -1, power_val = 0;
    double monitor = -1, discover_s = 0;
    unsigned psm = 0x85;
    double observe = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--adv") && i + 1 < argc) adv = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--scan") && i + 1 < argc) scan = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--psm") && i + 1 < argc) psm = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--sdu") && i + 1 < argc) sdu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--observe") && i + 1 < argc) observe = atof(argv[++i]);
        else if (!strcmp(argv[i], "--adv-before-power")) adv_before_power = 1;
        else if (!strcmp(argv[i], "--skip-l2cap")) skip_l2cap = 1;
        else if (!strcmp(argv[i], "--skip-ext-params")) skip_ext = 1;
        else if (!strcmp(argv[i], "--wait-indexes") && i + 1 < argc) wait_indexes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--power-on")) power_on = 1;
        else if (!strcmp(argv[i], "--advertise") && i + 1 < argc) advertise = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--power") && i + 2 < argc) { power_idx = atoi(argv[++i]); power_val = atoi(argv[++i]); }
        else if (!strcmp(argv[i], "--discover") && i + 2 < argc) { discover = atoi(argv[++i]); discover_s = atof(argv[++i]); }
        else if (!strcmp(argv[i], "--monitor") && i + 1 < argc) monitor = atof(argv[++i]);
        else if (!strcmp(argv[i], "-v")) verbose = 1;
        else usage();
    }
    if (sdu < 1 || sdu > 4000) usage();
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    struct reply r;
    int st;

    /* 1. control socket */
    mgmt_fd = socket(AF_BLUETOOTH_, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI_);
    if (mgmt_fd < 0) { FAIL("mgmt-socket", "socket: %s", strerror(errno)); return 1; }
    struct sockaddr_hci_ ha = {AF_BLUETOOTH_, MGMT_INDEX_NONE, HCI_CHANNEL_CONTROL_};
    if (bind(mgmt_fd, (struct sockaddr *)&ha, sizeof ha) < 0) { FAIL("mgmt-socket", "bind: %s", strerror(errno)); return 1; }
    if (wait_indexes >= 0) {
        /* rig helper: wait until mgmt lists N controllers (an hciN is listed only once its
         * setup, the HCI init sequence through the driver, is over) */
        for (;;) {
            st = mgmt_cmd(0x0003, MGMT_INDEX_NONE, NULL, 0, &r, 5);
            int n = st == 0 && r.len >= 2 ? le16(r.params) : -1;
            if (n >= wait_indexes) { printf("mgmt lists %d controllers after %.2f s\n", n, now_s()); return 0; }
            if (now_s() > 30) { printf("mgmt lists %d controllers, wanted %d\n", n, wait_indexes); return 1; }
            usleep(50000);
        }
    }
    /* advertising data: manufacturer specific, company 0xFFFF (testing), "NBTEST", counter */
    uint8_t adv_data[31];
    size_t adv_len = 0;
    const uint8_t mfr[] = {0xFF, 0xFF, 'N', 'B', 'T', 'E', 'S', 'T', 0x01, 0x02, 0x03, 0x04};
    adv_data[adv_len++] = 1 + sizeof mfr;
    adv_data[adv_len++] = 0xFF;
    memcpy(adv_data + adv_len, mfr, sizeof mfr);
    adv_len += sizeof mfr;
    uint8_t add_adv[11 + 31];
    memset(add_adv, 0, sizeof add_adv);
    add_adv[0] = 1;                              /* instance */
    add_adv[1] = 0x03;                           /* flags: connectable | discoverable */
    /* duration 0, timeout 0 */
    add_adv[9] = (uint8_t)adv_len;               /* adv_data_len */
    add_adv[10] = 0;                             /* scan_rsp_len */
    memcpy(add_adv + 11, adv_data, adv_len);

    if (advertise >= 0) {
        /* rig helper: LE + power on, Add Advertising instance 1 (flags 0x3, the probe's data) */
        int a = cmd_u8(0x000D, advertise, 1, &r), b = cmd_u8(0x0005, advertise, 1, &r);
        int c = mgmt_cmd(0x003E, advertise, add_adv, 11 + adv_len, &r, 10);
        printf("hci%d: set-le %d set-powered %d add-advertising %d\n", advertise, a, b, c);
        return a || b || c;
    }
    if (discover >= 0) {
        /* rig helper: LE + power on, Start Discovery for some seconds, print every Device Found */
        cmd_u8(0x000D, discover, 1, &r);
        int b = cmd_u8(0x0005, discover, 1, &r);
        verbose = 1;
        st = cmd_u8(0x0023, discover, 0x06, &r);
        printf("hci%d: set-powered %d start-discovery %d\n", discover, b, st);
        pump(discover_s, NULL);
        cmd_u8(0x0024, discover, 0x06, &r);
        printf("hci%d: %d Device Found\n", discover, found.other);
        return found.other > 0 ? 0 : 1;
    }
    if (power_on) {
        /* rig helper: Set Low Energy + Set Powered on every adapter */
        st = mgmt_cmd(0x0003, MGMT_INDEX_NONE, NULL, 0, &r, 5);
        int n = st == 0 && r.len >= 2 ? le16(r.params) : 0, bad = 0;
        uint16_t idx[64];
        for (int i = 0; i < n && i < 64; i++) idx[i] = le16(r.params + 2 + 2 * i);
        for (int i = 0; i < n && i < 64; i++) {
            int a = cmd_u8(0x000D, idx[i], 1, &r), b = cmd_u8(0x0005, idx[i], 1, &r);
            printf("hci%u: set-le %d set-powered %d\n", idx[i], a, b);
            bad |= a != 0 || b != 0;
        }
        return bad;
    }
    if (power_idx >= 0) {
        /* rig helper: Set Powered on or off */
        st = cmd_u8(0x0005, power_idx, power_val ? 1 : 0, &r);
        printf("hci%d: set-powered %d -> status %d settings %s\n", power_idx, power_val, st,
               r.len >= 4 ? settings_str(le32(r.params)) : "?");
        return st != 0;
    }
    if (monitor >= 0) {
        /* rig helper: print every mgmt event for `monitor` seconds (0: forever) */
        verbose = 1;
        watch_active = 0;
        pump(monitor > 0 ? monitor : 1e9, NULL);
        return 0;
    }
    PASS("mgmt-socket", "bound to HCI_CHANNEL_CONTROL");

    st = mgmt_cmd(0x0001, MGMT_INDEX_NONE, NULL, 0, &r, 5);
    if (st == 0 && r.len >= 3) PASS("read-version", "mgmt %u.%u", r.params[0], le16(r.params + 1));
    else FAIL("read-version", "status %d", st);

    /* 2. index list */
    st = mgmt_cmd(0x0003, MGMT_INDEX_NONE, NULL, 0, &r, 5);
    int nidx = st == 0 && r.len >= 2 ? le16(r.params) : -1;
    if (nidx < 0) { FAIL("index-list", "status %d", st); return 1; }
    char list[256] = "";
    uint16_t idx[16];
    int have_adv = 0, have_scan = 0;
    for (int i = 0; i < nidx && i < 16; i++) {
        idx[i] = le16(r.params + 2 + 2 * i);
        sprintf(list + strlen(list), " hci%u", idx[i]);
        have_adv |= idx[i] == adv;
        have_scan |= idx[i] == scan;
    }
    if (adv < 0 || adv > 7 || scan < 0 || scan > 7 || adv == scan) { FAIL("index-list", "--adv/--scan must differ and be 0..7"); return 1; }
    if (!have_adv || !have_scan) { FAIL("index-list", "controllers:%s; hci%d or hci%d missing", list, adv, scan); return 1; }
    if (nidx >= 2) PASS("index-list", "%d controllers:%s", nidx, list);
    else { FAIL("index-list", "%d controllers:%s (need 2)", nidx, list); return 1; }

    /* 3. controller info */
    uint8_t addr[8][6];
    memset(addr, 0, sizeof addr);
    for (int k = 0; k < nidx && k < 16; k++) {
        int i = idx[k];
        if (i > 7) continue;
        char step[32];
        sprintf(step, "controller-info hci%d", i);
        st = mgmt_cmd(0x0004, i, NULL, 0, &r, 5);
        if (st != 0 || r.len < 280) { FAIL(step, "status %d len %zu", st, r.len); continue; }
        memcpy(addr[i], r.params, 6);
        char name[250];
        memcpy(name, r.params + 20, 249); name[249] = 0;
        PASS(step, "address %s bt_version %u manufacturer 0x%04x name '%s'", addrstr(r.params), r.params[6],
             le16(r.params + 7), name);
        INFO(step, "supported settings 0x%08x %s", le32(r.params + 9), settings_str(le32(r.params + 9)));
        INFO(step, "current settings 0x%08x %s", le32(r.params + 13), settings_str(le32(r.params + 13)));
        if (!memcmp(r.params, "\0\0\0\0\0\0", 6)) FAIL(step, "address is 00:00:00:00:00:00");
    }

    if (adv_before_power) {
        st = mgmt_cmd(0x003E, adv, add_adv, 11 + adv_len, &r, 5);
        if (st == 0) PASS("add-advertising-unpowered", "hci%d instance %u added while powered off", adv, r.len ? r.params[0] : 0);
        else FAIL("add-advertising-unpowered", "hci%d status %d (%s)", adv, st, status_name(st));
    }

    /* 4. LE on, power on */
    for (int i = 0; i < 2; i++) {
        int idx = i == 0 ? adv : scan;
        char step[32];
        sprintf(step, "set-le hci%d", idx);
        double t0 = now_s();
        st = cmd_u8(0x000D, idx, 1, &r);
        if (st == 0) PASS(step, "settings %s (%.0f ms)", r.len >= 4 ? settings_str(le32(r.params)) : "?", (now_s() - t0) * 1000);
        else FAIL(step, "status %d (%s)", st, status_name(st));
        sprintf(step, "set-powered hci%d", idx);
        t0 = now_s();
        st = cmd_u8(0x0005, idx, 1, &r);
        if (st == 0) PASS(step, "settings %s (%.0f ms)", r.len >= 4 ? settings_str(le32(r.params)) : "?", (now_s() - t0) * 1000);
        else FAIL(step, "status %d (%s)", st, status_name(st));
    }

    /* 5. advertising */
    st = mgmt_cmd(0x003D, adv, NULL, 0, &r, 5);
    if (st == 0 && r.len >= 8)
        PASS("read-adv-features", "hci%d supported flags 0x%08x max_adv_len %u max_scan_rsp_len %u max_instances %u active %u",
             adv, le32(r.params), r.params[4], r.params[5], r.params[6], r.params[7]);
    else FAIL("read-adv-features", "status %d", st);
    {
        uint8_t q[5] = {1, 0x03, 0, 0, 0};
        st = mgmt_cmd(0x0040, adv, q, 5, &r, 5);
        if (st == 0 && r.len >= 7) INFO("adv-size-info", "flags 0x3: max_adv_len %u max_scan_rsp_len %u", r.params[5], r.params[6]);
        else INFO("adv-size-info", "status %d", st);
    }
    if (!adv_before_power) {
        double t0 = now_s();
        st = mgmt_cmd(0x003E, adv, add_adv, 11 + adv_len, &r, 5);
        if (st == 0) PASS("add-advertising", "hci%d instance %u flags 0x3 data %s (%.0f ms)", adv, r.len ? r.params[0] : 0,
                          hex(adv_data, adv_len), (now_s() - t0) * 1000);
        else FAIL("add-advertising", "hci%d status %d (%s)", adv, st, status_name(st));
    }
    st = mgmt_cmd(0x0004, adv, NULL, 0, &r, 5);
    if (st == 0 && r.len >= 17) INFO("advertiser-settings", "hci%d current settings %s", adv, settings_str(le32(r.params + 13)));

    /* 6. discovery */
    memcpy(watch_addr, addr[adv], 6);
    watch_active = 1;
    double t_disc = now_s();
    st = cmd_u8(0x0023, scan, 0x06, &r);
    if (st == 0) PASS("start-discovery", "hci%d type 0x06 (%.0f ms)", scan, (now_s() - t_disc) * 1000);
    else FAIL("start-discovery", "hci%d status %d (%s)", scan, st, status_name(st));
    double disc_end = now_s() + 15;
    while (now_s() < disc_end && !found.count) pump(0.1, NULL);
    if (found.count) {
        PASS("device-found", "hci%d saw %s (addr type %u) %.2f s after Start Discovery; rssi %d flags 0x%x eir %s", scan,
             addrstr(watch_addr), found.addr_type, found.first - t_disc, found.rssi, found.flags, hex(found.eir, found.eir_len));
        /* does the advert's manufacturer data come through intact? */
        int ok = 0;
        for (size_t i = 0; i + adv_len <= found.eir_len; i++)
            if (!memcmp(found.eir + i, adv_data, adv_len)) { ok = 1; break; }
        if (ok) PASS("device-found-data", "manufacturer data present in EIR");
        else FAIL("device-found-data", "manufacturer data %s not in EIR %s", hex(adv_data, adv_len), hex(found.eir, found.eir_len));
        int c0 = found.count;
        double t0 = now_s();
        pump(observe, NULL);
        double dt = now_s() - t0;
        INFO("device-found-rate", "%d more Device Found for %s in %.1f s (%.2f/s); %d for other addresses so far",
             found.count - c0, addrstr(watch_addr), dt, (found.count - c0) / dt, found.other);
    } else {
        FAIL("device-found", "no Device Found for %s within 15 s (%d for other addresses)", addrstr(watch_addr), found.other);
    }
    st = cmd_u8(0x0024, scan, 0x06, &r);
    if (st == 0) PASS("stop-discovery", "hci%d", scan);
    else FAIL("stop-discovery", "hci%d status %d (%s)", scan, st, status_name(st));
    watch_active = 0;
    pump(0.3, NULL);

    /* 7. L2CAP LE CoC */
    if (!skip_l2cap) {
        int lfd = l2cap_socket(NULL, (uint16_t)psm, 512, "l2cap-listen");
        int cfd = -1, afd = -1;
        if (lfd >= 0 && listen(lfd, 4) < 0) { FAIL("l2cap-listen", "listen: %s", strerror(errno)); close(lfd); lfd = -1; }
        if (lfd >= 0) PASS("l2cap-listen", "PSM 0x%04x on BDADDR_ANY, BT_SECURITY low, BT_RCVMTU 512", psm);
        if (lfd >= 0) cfd = l2cap_socket(addr[scan], 0, 512, "l2cap-connect");
        double t0 = now_s();
        if (cfd >= 0) {
            struct sockaddr_l2_ a;
            memset(&a, 0, sizeof a);
            a.family = AF_BLUETOOTH_;
            a.psm = (uint16_t)psm;
            memcpy(a.bdaddr, addr[adv], 6);
            a.bdaddr_type = found.count ? found.addr_type : BDADDR_LE_PUBLIC_;
            int rc = connect(cfd, (struct sockaddr *)&a, sizeof a);
            if (rc < 0 && errno != EINPROGRESS) { FAIL("l2cap-connect", "connect: %s", strerror(errno)); close(cfd); cfd = -1; }
        }
        if (cfd >= 0) {
            /* wait for both: the client's connect to complete and the listener to accept */
            int connected = 0;
            double end = now_s() + 30;
            while (now_s() < end && (!connected || afd < 0)) {
                struct pollfd p[3] = {{cfd, connected ? 0 : POLLOUT, 0}, {lfd, afd < 0 ? POLLIN : 0, 0}, {mgmt_fd, POLLIN, 0}};
                int n = poll(p, 3, 200);
                if (n <= 0) continue;
                if (p[2].revents & POLLIN) {
                    uint8_t buf[4096];
                    ssize_t k = read(mgmt_fd, buf, sizeof buf);
                    if (k > 0) handle_event(buf, (size_t)k);
                }
                if (!connected && p[0].revents) {
                    int err = 0;
                    socklen_t l = sizeof err;
                    getsockopt(cfd, SOL_SOCKET, SO_ERROR, &err, &l);
                    if (err) { FAIL("l2cap-connect", "connect completed with error: %s (after %.2f s)", strerror(err), now_s() - t0); break; }
                    connected = 1;
                    PASS("l2cap-connect", "hci%d -> %s PSM 0x%04x connected after %.2f s", scan, addrstr(addr[adv]), psm, now_s() - t0);
                }
                if (afd < 0 && (p[1].revents & POLLIN)) {
                    struct sockaddr_l2_ peer;
                    socklen_t pl = sizeof peer;
                    afd = accept4(lfd, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC | SOCK_NONBLOCK);
                    if (afd < 0) FAIL("l2cap-accept", "accept: %s", strerror(errno));
                    else PASS("l2cap-accept", "from %s type %u after %.2f s", addrstr(peer.bdaddr), peer.bdaddr_type, now_s() - t0);
                }
            }
            if (!connected || afd < 0) FAIL("l2cap-connect", "not connected/accepted within 30 s (connected %d, accepted %d)", connected, afd >= 0);
            if (connected && afd >= 0) {
                int s1, r1, s2, r2;
                mtus(cfd, &s1, &r1);
                mtus(afd, &s2, &r2);
                INFO("l2cap-mtu", "client BT_SNDMTU %d BT_RCVMTU %d; accepted BT_SNDMTU %d BT_RCVMTU %d", s1, r1, s2, r2);
                /* client -> server */
                uint8_t *msg = malloc(sdu), *got = malloc(sdu + 16);
                for (int i = 0; i < sdu; i++) msg[i] = (uint8_t)(i * 7 + 3);
                double ts = now_s();
                ssize_t w = send(cfd, msg, sdu, 0);
                if (w != sdu) FAIL("l2cap-send", "send %d bytes: %zd (%s)", sdu, w, w < 0 ? strerror(errno) : "short");
                ssize_t g = -1;
                if (wait_fd(afd, POLLIN, 10) > 0) g = recv(afd, got, sdu + 16, 0);
                if (g == sdu && !memcmp(got, msg, sdu)) PASS("l2cap-client-to-server", "one %d-byte SDU intact in %.0f ms", sdu, (now_s() - ts) * 1000);
                else FAIL("l2cap-client-to-server", "received %zd bytes%s", g, g == sdu ? " (corrupt)" : "");
                /* server -> client */
                for (int i = 0; i < sdu; i++) msg[i] = (uint8_t)(255 - i);
                ts = now_s();
                w = send(afd, msg, sdu, 0);
                g = -1;
                if (wait_fd(cfd, POLLIN, 10) > 0) g = recv(cfd, got, sdu + 16, 0);
                if (w == sdu && g == sdu && !memcmp(got, msg, sdu)) PASS("l2cap-server-to-client", "one %d-byte SDU intact in %.0f ms", sdu, (now_s() - ts) * 1000);
                else FAIL("l2cap-server-to-client", "sent %zd received %zd", w, g);
                free(msg); free(got);
                pump(0.3, NULL);
                INFO("l2cap-mgmt-events", "Device Connected events: hci%d %d, hci%d %d", adv, conn_ev.connected[adv], scan, conn_ev.connected[scan]);
                /* is the advertiser still visible while it is connected? */
                {
                    memset(&found, 0, sizeof found);
                    watch_active = 1;
                    double tw = now_s();
                    st = cmd_u8(0x0023, scan, 0x06, &r);
                    while (st == 0 && now_s() < tw + 4 && !found.count) pump(0.1, NULL);
                    if (found.count) INFO("adv-while-connected", "hci%d still advertising while connected: seen %.2f s after Start Discovery", adv, found.first - tw);
                    else INFO("adv-while-connected", "hci%d not seen within 4 s while connected (start discovery status %d)", adv, st);
                    if (!found.count && st == 0) {
                        /* does adding the instance again bring the advert back during the connection? */
                        uint8_t rm1 = 1;
                        tw = now_s();
                        int st1 = mgmt_cmd(0x003F, adv, &rm1, 1, &r, 5);
                        int st2 = mgmt_cmd(0x003E, adv, add_adv, 11 + adv_len, &r, 5);
                        while (now_s() < tw + 4 && !found.count) pump(0.1, NULL);
                        if (found.count) INFO("adv-while-connected", "after Remove Advertising(1) + Add Advertising(1) (status %d/%d) the advert is back %.2f s after the Remove", st1, st2, found.first - tw);
                        else INFO("adv-while-connected", "still not seen 4 s after Remove + Add Advertising (status %d/%d)", st1, st2);
                    }
                    if (st == 0) cmd_u8(0x0024, scan, 0x06, &r);
                    watch_active = 0;
                }
                /* disconnect from the client side: the server should see EOF */
                double td = now_s();
                close(cfd); cfd = -1;
                int rv = wait_fd(afd, POLLIN | POLLHUP, 10);
                ssize_t e = rv > 0 ? recv(afd, got = malloc(16), 16, 0) : -2;
                if (rv > 0 && e <= 0) PASS("l2cap-disconnect", "server side saw %s %.0f ms after client close", e == 0 ? "EOF" : strerror(errno), (now_s() - td) * 1000);
                else FAIL("l2cap-disconnect", "server side: poll %d recv %zd", rv, e);
                /* the ACL link goes away after the kernel's idle timeout */
                int dc_before = conn_ev.disconnected[scan];
                double end2 = now_s() + 10;
                while (now_s() < end2 && conn_ev.disconnected[scan] == dc_before) pump(0.1, NULL);
                if (conn_ev.disconnected[scan] > dc_before) INFO("acl-disconnect", "Device Disconnected on hci%d %.2f s after the socket closed", scan, conn_ev.t_disconnected[scan] - td);
                else INFO("acl-disconnect", "no Device Disconnected on hci%d within 10 s of the socket closing", scan);
            }
        }
        if (afd >= 0) close(afd);
        if (cfd >= 0) close(cfd);
        if (lfd >= 0) close(lfd);
        pump(0.3, NULL);
        st = mgmt_cmd(0x0004, adv, NULL, 0, &r, 5);
        if (st == 0 && r.len >= 17) INFO("advertiser-settings-after-l2cap", "hci%d current settings %s", adv, settings_str(le32(r.params + 13)));
    }

    /* 8. still advertising after the connection? (re-discover) */
    {
        memset(&found, 0, sizeof found);
        watch_active = 1;
        double t0 = now_s();
        st = cmd_u8(0x0023, scan, 0x06, &r);
        while (st == 0 && now_s() < t0 + 10 && !found.count) pump(0.1, NULL);
        if (found.count) PASS("rediscover", "advert seen again %.2f s after Start Discovery", found.first - t0);
        else FAIL("rediscover", "advert not seen within 10 s (start discovery status %d)", st);
        cmd_u8(0x0024, scan, 0x06, &r);
        watch_active = 0;
    }

    /* 9. Add Ext Adv Params + Data, 100 ms interval (mgmt 1.19+) */
    if (!skip_ext) {
        uint8_t rm = 0;
        mgmt_cmd(0x003F, adv, &rm, 1, &r, 5);
        uint8_t pp[18];
        memset(pp, 0, sizeof pp);
        pp[0] = 2;                                  /* instance */
        uint32_t flags = 0x03 | (1u << 14) | (1u << 15);  /* connectable, discoverable, intervals, tx power */
        pp[1] = flags; pp[2] = flags >> 8; pp[3] = flags >> 16; pp[4] = flags >> 24;
        /* duration 0, timeout 0 at 5..8 */
        uint32_t iv = 160;                          /* 100 ms */
        memcpy(pp + 9, &iv, 4);
        memcpy(pp + 13, &iv, 4);
        pp[17] = 0;                                 /* tx power 0 dBm */
        st = mgmt_cmd(0x0054, adv, pp, sizeof pp, &r, 5);
        if (st == 0 && r.len >= 4) PASS("add-ext-adv-params", "instance %u tx_power %d max_adv_len %u max_scan_rsp_len %u",
                                        r.params[0], (int8_t)r.params[1], r.params[2], r.params[3]);
        else FAIL("add-ext-adv-params", "status %d (%s)", st, status_name(st));
        uint8_t dd[3 + 31];
        dd[0] = 2; dd[1] = (uint8_t)adv_len; dd[2] = 0;
        adv_data[adv_len - 1] = 0x42;   /* distinguish it from instance 1 */
        memcpy(dd + 3, adv_data, adv_len);
        st = mgmt_cmd(0x0055, adv, dd, 3 + adv_len, &r, 5);
        if (st == 0) PASS("add-ext-adv-data", "instance %u", r.len ? r.params[0] : 0);
        else FAIL("add-ext-adv-data", "status %d (%s)", st, status_name(st));
        memset(&found, 0, sizeof found);
        watch_active = 1;
        double t0 = now_s();
        st = cmd_u8(0x0023, scan, 0x06, &r);
        int seen = 0;
        while (st == 0 && now_s() < t0 + 10 && !seen) {
            pump(0.1, NULL);
            for (size_t i = 0; found.count && i + adv_len <= found.eir_len; i++)
                if (!memcmp(found.eir + i, adv_data, adv_len)) { seen = 1; break; }
        }
        if (seen) {
            double t1 = now_s();
            int c0 = found.count;
            pump(3, NULL);
            PASS("ext-adv-discovered", "new data seen %.2f s after Start Discovery; then %.1f Device Found/s",
                 found.first - t0, (found.count - c0) / (now_s() - t1));
        } else FAIL("ext-adv-discovered", "not seen within 10 s (start discovery status %d, %d Device Found)", st, found.count);
        cmd_u8(0x0024, scan, 0x06, &r);
        watch_active = 0;
    }

    /* 10. non-connectable advertising with a scan response (name) */
    if (!skip_ext) {
        uint8_t rm = 0;
        mgmt_cmd(0x003F, adv, &rm, 1, &r, 5);
        const char nm[] = "rig-probe";
        uint8_t scan_rsp[31];
        size_t sr_len = 0;
        scan_rsp[sr_len++] = 1 + sizeof nm - 1;
        scan_rsp[sr_len++] = 0x09;
        memcpy(scan_rsp + sr_len, nm, sizeof nm - 1);
        sr_len += sizeof nm - 1;
        uint8_t a3[11 + 62];
        memset(a3, 0, sizeof a3);
        a3[0] = 3;
        a3[1] = 0x02;                 /* discoverable, not connectable */
        a3[9] = (uint8_t)adv_len;
        a3[10] = (uint8_t)sr_len;
        memcpy(a3 + 11, adv_data, adv_len);
        memcpy(a3 + 11 + adv_len, scan_rsp, sr_len);
        st = mgmt_cmd(0x003E, adv, a3, 11 + adv_len + sr_len, &r, 5);
        if (st == 0) PASS("add-advertising-nonconn", "instance 3 flags 0x2 with scan response %s", hex(scan_rsp, sr_len));
        else FAIL("add-advertising-nonconn", "status %d (%s)", st, status_name(st));
        /* a non-connectable advert uses a non-resolvable random address: watch any address */
        memset(&found, 0, sizeof found);
        double t0 = now_s();
        int seen = 0;
        uint8_t want_flags = 0;
        st = cmd_u8(0x0023, scan, 0x06, &r);
        watch_active = 0;
        uint8_t buf[4096];
        while (st == 0 && now_s() < t0 + 8 && !seen) {
            struct pollfd pfd = {mgmt_fd, POLLIN, 0};
            if (poll(&pfd, 1, 100) <= 0) continue;
            ssize_t n = read(mgmt_fd, buf, sizeof buf);
            if (n < 6) continue;
            if (le16(buf) == 0x0012 && n >= 20) {
                const uint8_t *p = buf + 6;
                uint16_t el = le16(p + 12);
                int has_adv = 0, has_rsp = 0;
                for (size_t i = 0; i + adv_len <= el; i++) if (!memcmp(p + 14 + i, adv_data, adv_len)) has_adv = 1;
                for (size_t i = 0; i + sr_len <= el; i++) if (!memcmp(p + 14 + i, scan_rsp, sr_len)) has_rsp = 1;
                if (has_adv) {
                    seen = 1;
                    want_flags = (uint8_t)le32(p + 8);
                    INFO("nonconn-device-found", "%s type %u flags 0x%x (bit 2 = not connectable) scan response %s; eir %s",
                         addrstr(p), p[6], le32(p + 8), has_rsp ? "merged into EIR" : "ABSENT", hex(p + 14, el));
                    if (has_rsp) PASS("scan-response", "name from the scan response delivered in Device Found");
                    else FAIL("scan-response", "scan response not in Device Found");
                    if (want_flags & 0x04) PASS("nonconn-flag", "Device Found flags has NOT_CONNECTABLE");
                    else FAIL("nonconn-flag", "Device Found flags 0x%x lack NOT_CONNECTABLE (0x4)", want_flags);
                }
            } else handle_event(buf, (size_t)n);
        }
        if (!seen) FAIL("nonconn-device-found", "non-connectable advert not seen within 8 s");
        cmd_u8(0x0024, scan, 0x06, &r);
    }

    /* 11. clean up */
    {
        uint8_t rm = 0;
        st = mgmt_cmd(0x003F, adv, &rm, 1, &r, 5);
        if (st == 0) PASS("remove-advertising", "all instances on hci%d", adv);
        else FAIL("remove-advertising", "status %d (%s)", st, status_name(st));
    }
    pump(0.2, NULL);
    printf("SUMMARY %d failed\n", failures);
    return failures > 100 ? 100 : failures;
}
