/*
 * uwb_gadget: (guest) an emulated UWB board on the VM's real USB stack.
 *
 * Builds a configfs USB gadget with one FunctionFS function, writes CDC-ACM-like descriptors
 * resembling a Qorvo DWM3001CDK (nRF52833 native USB), binds the gadget to a dummy_hcd UDC and
 * then *is* the board: the host side of dummy_hcd enumerates it like any USB device (usbcore,
 * usbfs, libusb), and this program serves its endpoints.
 *
 *   uwb_gadget --name NAME --udc UDC --serial SERIAL --uci HOST:PORT [--product P] [-v]
 *
 * Data path, like the board's firmware (see Tests/USBEmulation/README.md): bulk OUT bytes go to
 * a TCP connection to a UWBS (the world server's raw UCI port for one body), bytes from that
 * connection go out on bulk IN one UCI packet per transfer. Nothing moves before the host sets
 * DTR (CDC SET_CONTROL_LINE_STATE): until then OUT transfers are not read (NAK) and UWBS bytes
 * are held. SET_LINE_CODING / GET_LINE_CODING are answered, other class requests stall.
 *
 * Plug and unplug: writing "" to /sys/kernel/config/usb_gadget/NAME/UDC unbinds the gadget (the
 * host sees a disconnect), writing the UDC name again binds it (a new device). An unbind ends
 * the UWBS connection and the next enable opens a new one: a replugged board is a power-cycled
 * board, fresh from the UWBS's point of view (the world server treats each connection as a new
 * board). A plain disable/enable (USB reset, set configuration) keeps the connection.
 *
 * Descriptors (FunctionFS accepts no CDC functional descriptors, and the bridge needs none):
 *   IAD (interfaces 0-1, class 02/02/01)
 *   interface 0: class 02/02/01 (CDC communication, ACM), interrupt IN (never sends)
 *   interface 1: class 0a/00/00 (CDC data), bulk IN + bulk OUT (64 B full speed, 512 B high speed)
 * Endpoint addresses are assigned by the UDC: the host reads them from the descriptors.
 *
 * Prints one line per lifecycle event on stderr ("uwb_gadget NAME: ..."). Runs until killed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/usb/ch9.h>
#include <linux/usb/functionfs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *name = "uwb";
static int verbose;

static void say(const char *fmt, ...) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    va_list ap;
    va_start(ap, fmt);
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[%5ld.%03ld] uwb_gadget %s: %s\n", (long)ts.tv_sec, ts.tv_nsec / 1000000, name, line);
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    say("FATAL %s", line);
    exit(1);
}

/* ------------------------------------------------------------------ configfs */

static int write_file(const char *path, const char *value) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = write(fd, value, strlen(value));
    int saved = errno;
    close(fd);
    errno = saved;
    return n == (ssize_t)strlen(value) ? 0 : -1;
}

static void put(const char *dir, const char *file, const char *value) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (write_file(path, value) < 0) die("write %s: %s", path, strerror(errno));
}

static void make_dir(const char *path) {
    if (mkdir(path, 0755) < 0 && errno != EEXIST) die("mkdir %s: %s", path, strerror(errno));
}

/* ------------------------------------------------------------------ descriptors */

struct __attribute__((packed)) iad {
    uint8_t bLength, bDescriptorType, bFirstInterface, bInterfaceCount;
    uint8_t bFunctionClass, bFunctionSubClass, bFunctionProtocol, iFunction;
};

struct __attribute__((packed)) speed_descs {
    struct iad iad;
    struct usb_interface_descriptor comm;
    struct usb_endpoint_descriptor_no_audio notify;
    struct usb_interface_descriptor data;
    struct usb_endpoint_descriptor_no_audio bulk_in;
    struct usb_endpoint_descriptor_no_audio bulk_out;
};

static struct speed_descs descs_for(uint16_t bulk, uint8_t notify_interval) {
    struct speed_descs d = {
        .iad = {sizeof(struct iad), USB_DT_INTERFACE_ASSOCIATION, 0, 2, 0x02, 0x02, 0x01, 0},
        .comm = {USB_DT_INTERFACE_SIZE, USB_DT_INTERFACE, 0, 0, 1, 0x02, 0x02, 0x01, 0},
        .notify = {USB_DT_ENDPOINT_SIZE, USB_DT_ENDPOINT, 1 | USB_DIR_IN, USB_ENDPOINT_XFER_INT, htole16(16), notify_interval},
        .data = {USB_DT_INTERFACE_SIZE, USB_DT_INTERFACE, 1, 0, 2, 0x0a, 0x00, 0x00, 0},
        .bulk_in = {USB_DT_ENDPOINT_SIZE, USB_DT_ENDPOINT, 2 | USB_DIR_IN, USB_ENDPOINT_XFER_BULK, htole16(bulk), 0},
        .bulk_out = {USB_DT_ENDPOINT_SIZE, USB_DT_ENDPOINT, 3 | USB_DIR_OUT, USB_ENDPOINT_XFER_BULK, htole16(bulk), 0},
    };
    return d;
}

static void write_descriptors(int ep0) {
    struct __attribute__((packed)) {
        struct usb_functionfs_descs_head_v2 head;
        uint32_t fs_count, hs_count;
        struct speed_descs fs, hs;
    } d = {
        .head = {htole32(FUNCTIONFS_DESCRIPTORS_MAGIC_V2), htole32(sizeof d),
                 htole32(FUNCTIONFS_HAS_FS_DESC | FUNCTIONFS_HAS_HS_DESC)},
        .fs_count = htole32(6),
        .hs_count = htole32(6),
        .fs = descs_for(64, 16),
        .hs = descs_for(512, 8), /* 2^(8-1) microframes = 16 ms */
    };
    if (write(ep0, &d, sizeof d) != (ssize_t)sizeof d) die("write descriptors to ep0: %s", strerror(errno));
    struct usb_functionfs_strings_head s = {htole32(FUNCTIONFS_STRINGS_MAGIC), htole32(sizeof s), 0, 0};
    if (write(ep0, &s, sizeof s) != (ssize_t)sizeof s) die("write strings to ep0: %s", strerror(errno));
}

/* ------------------------------------------------------------------ state */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int enabled;     /* the host configured us (FUNCTIONFS_ENABLE) */
static int dtr;         /* the host set DTR */
static unsigned plugin; /* bumped at every unbind: the next enable is a new board */
static int uwbs = -1;   /* the UWBS connection of the current plug-in, or -1 */
static uint8_t line_coding[7] = {0x00, 0xc2, 0x01, 0x00, 0x00, 0x00, 0x08}; /* 115200 8N1 */
static struct sockaddr_in uwbs_addr;
static int ep_in = -1, ep_out = -1;
static unsigned long to_uwbs, from_uwbs;

static void wake(void) { pthread_cond_broadcast(&changed); }

/* ------------------------------------------------------------------ UWBS -> bulk IN */

/* Length of the UCI packet at the start of buf (0 if incomplete): control packets carry an
 * 8-bit payload length in octet 3, data packets (MT 0) a 16-bit one in octets 2-3. */
static size_t uci_packet_length(const uint8_t *buf, size_t have) {
    if (have < 4) return 0;
    size_t payload = (buf[0] >> 5) == 0 ? (size_t)buf[2] | (size_t)buf[3] << 8 : buf[3];
    return have >= 4 + payload ? 4 + payload : 0;
}

static void *uwbs_to_host(void *arg) {
    (void)arg;
    static uint8_t buf[70000];
    for (;;) {
        pthread_mutex_lock(&lock);
        while (!enabled || uwbs >= 0) pthread_cond_wait(&changed, &lock);
        unsigned mine = plugin;
        pthread_mutex_unlock(&lock);

        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) die("socket: %s", strerror(errno));
        if (connect(fd, (struct sockaddr *)&uwbs_addr, sizeof uwbs_addr) < 0) {
            say("UWBS %s:%d: %s; retrying", inet_ntoa(uwbs_addr.sin_addr), ntohs(uwbs_addr.sin_port), strerror(errno));
            close(fd);
            usleep(500000);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_mutex_lock(&lock);
        if (mine != plugin || !enabled) { pthread_mutex_unlock(&lock); close(fd); continue; }
        uwbs = fd;
        wake();
        pthread_mutex_unlock(&lock);
        say("UWBS connected (a fresh board)");

        size_t have = 0;
        int gone = 0;
        while (!gone) {
            ssize_t n = recv(fd, buf + have, sizeof buf - have, 0);
            if (n <= 0) break;
            have += (size_t)n;
            size_t len;
            while (!gone && (len = uci_packet_length(buf, have)) > 0) {
                /* Like the firmware: hold UWBS bytes until the host sets DTR. */
                pthread_mutex_lock(&lock);
                while (mine == plugin && !(enabled && dtr)) pthread_cond_wait(&changed, &lock);
                gone = mine != plugin;
                pthread_mutex_unlock(&lock);
                if (gone) break;
                ssize_t w = write(ep_in, buf, len);
                if (w < 0) {
                    if (verbose) say("bulk IN write: %s (packet dropped)", strerror(errno));
                } else {
                    from_uwbs += len;
                    /* A transfer that is a multiple of the packet size needs a zero-length
                     * packet to end it on the host. */
                    if (len % 64 == 0 && write(ep_in, buf, 0) < 0 && verbose) say("ZLP: %s", strerror(errno));
                    if (verbose > 1) say("IN %zu bytes", len);
                }
                memmove(buf, buf + len, have - len);
                have -= len;
            }
            if (have == sizeof buf) have = 0; /* garbage that never frames: drop it */
        }
        pthread_mutex_lock(&lock);
        if (uwbs == fd) uwbs = -1;
        int same = mine == plugin;
        pthread_mutex_unlock(&lock);
        close(fd);
        say("UWBS connection closed%s", same ? " by the UWBS" : " (unplugged)");
        if (same) {
            /* The UWBS went away while plugged in: a dead board until the next replug. */
            pthread_mutex_lock(&lock);
            while (mine == plugin) pthread_cond_wait(&changed, &lock);
            pthread_mutex_unlock(&lock);
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ bulk OUT -> UWBS */

static void *host_to_uwbs(void *arg) {
    (void)arg;
    static uint8_t buf[4096];
    for (;;) {
        /* Before DTR the firmware does not read: OUT transfers stay pending (NAK). */
        pthread_mutex_lock(&lock);
        while (!(enabled && dtr && uwbs >= 0)) pthread_cond_wait(&changed, &lock);
        pthread_mutex_unlock(&lock);
        ssize_t n = read(ep_out, buf, sizeof buf);
        if (n < 0) {
            if (verbose) say("bulk OUT read: %s", strerror(errno));
            usleep(10000);
            continue;
        }
        pthread_mutex_lock(&lock);
        int fd = uwbs;
        pthread_mutex_unlock(&lock);
        if (n > 0 && fd >= 0) {
            if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) == n) to_uwbs += (unsigned long)n;
            if (verbose > 1) say("OUT %zd bytes", n);
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ ep0 */

static void stall(int ep0, const struct usb_ctrlrequest *r) {
    /* FunctionFS: I/O in the wrong direction stalls the request. */
    if (r->bRequestType & USB_DIR_IN) {
        if (read(ep0, NULL, 0) < 0 && errno != EL2HLT) say("stall: %s", strerror(errno));
    } else {
        if (write(ep0, NULL, 0) < 0 && errno != EL2HLT) say("stall: %s", strerror(errno));
    }
}

static void setup(int ep0, const struct usb_ctrlrequest *r) {
    uint16_t value = le16toh(r->wValue), length = le16toh(r->wLength);
    int type = r->bRequestType & (USB_TYPE_MASK | USB_RECIP_MASK);
    if (verbose) say("setup %02x %02x value %04x index %04x length %u", r->bRequestType, r->bRequest, value, le16toh(r->wIndex), length);
    if (type != (USB_TYPE_CLASS | USB_RECIP_INTERFACE)) { stall(ep0, r); return; }
    switch (r->bRequest) {
    case 0x20: { /* SET_LINE_CODING */
        uint8_t coding[64];
        ssize_t n = read(ep0, coding, length < sizeof coding ? length : sizeof coding);
        if (n == 7) memcpy(line_coding, coding, 7);
        return;
    }
    case 0x21: /* GET_LINE_CODING */
        if (write(ep0, line_coding, length < 7 ? length : 7) < 0) say("GET_LINE_CODING: %s", strerror(errno));
        return;
    case 0x22: /* SET_CONTROL_LINE_STATE: bit 0 DTR, bit 1 RTS */
        if (read(ep0, NULL, 0) < 0) say("SET_CONTROL_LINE_STATE ack: %s", strerror(errno));
        pthread_mutex_lock(&lock);
        if (dtr != (value & 1)) say("DTR %s", value & 1 ? "on" : "off");
        dtr = value & 1;
        wake();
        pthread_mutex_unlock(&lock);
        return;
    default:
        stall(ep0, r);
    }
}

static void event(int ep0, const struct usb_functionfs_event *e) {
    switch (e->type) {
    case FUNCTIONFS_BIND:
        say("bound (plugged in)");
        break;
    case FUNCTIONFS_UNBIND:
        pthread_mutex_lock(&lock);
        enabled = 0;
        dtr = 0;
        plugin++;
        if (uwbs >= 0) shutdown(uwbs, SHUT_RDWR);
        wake();
        pthread_mutex_unlock(&lock);
        say("unbound (unplugged; %lu bytes to the UWBS, %lu from it so far)", to_uwbs, from_uwbs);
        break;
    case FUNCTIONFS_ENABLE:
        pthread_mutex_lock(&lock);
        enabled = 1;
        wake();
        pthread_mutex_unlock(&lock);
        say("enabled (configured by the host)");
        break;
    case FUNCTIONFS_DISABLE:
        pthread_mutex_lock(&lock);
        enabled = 0;
        dtr = 0;
        wake();
        pthread_mutex_unlock(&lock);
        say("disabled");
        break;
    case FUNCTIONFS_SETUP:
        setup(ep0, &e->u.setup);
        break;
    case FUNCTIONFS_SUSPEND:
    case FUNCTIONFS_RESUME:
        if (verbose) say("%s", e->type == FUNCTIONFS_SUSPEND ? "suspend" : "resume");
        break;
    }
}

/* ------------------------------------------------------------------ main */

static void usage(void) {
    fprintf(stderr, "usage: uwb_gadget --name NAME --udc UDC --serial SERIAL --uci HOST:PORT [--product P] [-v]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *udc = NULL, *serial = NULL, *uci = NULL, *product = "nRF52 USB Product";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-v")) verbose++;
        else if (!strcmp(a, "-vv")) verbose += 2;
        else if (i + 1 >= argc) usage();
        else if (!strcmp(a, "--name")) name = argv[++i];
        else if (!strcmp(a, "--udc")) udc = argv[++i];
        else if (!strcmp(a, "--serial")) serial = argv[++i];
        else if (!strcmp(a, "--uci")) uci = argv[++i];
        else if (!strcmp(a, "--product")) product = argv[++i];
        else usage();
    }
    if (!udc || !serial || !uci) usage();
    signal(SIGPIPE, SIG_IGN);

    char host[64];
    const char *colon = strrchr(uci, ':');
    if (!colon || (size_t)(colon - uci) >= sizeof host) die("bad --uci %s", uci);
    memcpy(host, uci, (size_t)(colon - uci));
    host[colon - uci] = 0;
    uwbs_addr.sin_family = AF_INET;
    uwbs_addr.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &uwbs_addr.sin_addr) != 1) die("bad --uci host %s", host);

    /* The gadget in configfs. */
    const char *cfs = "/sys/kernel/config";
    struct stat st;
    if (stat("/sys/kernel/config/usb_gadget", &st) < 0) {
        if (mount("none", cfs, "configfs", 0, NULL) < 0 && errno != EBUSY) die("mount configfs: %s", strerror(errno));
        if (stat("/sys/kernel/config/usb_gadget", &st) < 0) die("no usb_gadget in configfs (libcomposite loaded?)");
    }
    char g[256], path[512];
    snprintf(g, sizeof g, "%s/usb_gadget/%s", cfs, name);
    make_dir(g);
    put(g, "idVendor", "0x1915");
    put(g, "idProduct", "0x520f");
    put(g, "bcdDevice", "0x0100");
    put(g, "bcdUSB", "0x0200");
    /* Interface association: class EF/02/01, as composite CDC devices announce it. */
    put(g, "bDeviceClass", "0xef");
    put(g, "bDeviceSubClass", "0x02");
    put(g, "bDeviceProtocol", "0x01");
    snprintf(path, sizeof path, "%s/strings/0x409", g);
    make_dir(path);
    put(path, "manufacturer", "Nordic Semiconductor");
    put(path, "product", product);
    put(path, "serialnumber", serial);
    snprintf(path, sizeof path, "%s/configs/c.1", g);
    make_dir(path);
    put(path, "MaxPower", "100");
    put(path, "bmAttributes", "0xc0");
    char func[512];
    snprintf(func, sizeof func, "%s/functions/ffs.%s", g, name);
    make_dir(func);
    snprintf(path, sizeof path, "%s/configs/c.1/ffs.%s", g, name);
    if (symlink(func, path) < 0 && errno != EEXIST) die("link %s: %s", path, strerror(errno));

    /* FunctionFS: descriptors on ep0, then the endpoint files appear. */
    char ffs[256];
    mkdir("/run/ffs", 0755);
    snprintf(ffs, sizeof ffs, "/run/ffs/%s", name);
    make_dir(ffs);
    if (mount(name, ffs, "functionfs", 0, NULL) < 0 && errno != EBUSY) die("mount functionfs %s: %s", ffs, strerror(errno));
    snprintf(path, sizeof path, "%s/ep0", ffs);
    int ep0 = open(path, O_RDWR | O_CLOEXEC);
    if (ep0 < 0) die("open %s: %s", path, strerror(errno));
    write_descriptors(ep0);
    /* ep1 = interrupt IN (never used), ep2 = bulk IN, ep3 = bulk OUT: descriptor order. */
    snprintf(path, sizeof path, "%s/ep2", ffs);
    ep_in = open(path, O_RDWR | O_CLOEXEC);
    if (ep_in < 0) die("open %s: %s", path, strerror(errno));
    snprintf(path, sizeof path, "%s/ep3", ffs);
    ep_out = open(path, O_RDWR | O_CLOEXEC);
    if (ep_out < 0) die("open %s: %s", path, strerror(errno));

    pthread_t t1, t2;
    pthread_create(&t1, NULL, uwbs_to_host, NULL);
    pthread_create(&t2, NULL, host_to_uwbs, NULL);

    snprintf(path, sizeof path, "%s/UDC", g);
    if (write_file(path, udc) < 0) die("bind to %s: %s", udc, strerror(errno));
    say("serial %s on %s, UWBS %s (unplug: echo > %s; replug: echo %s > %s)", serial, udc, uci, path, udc, path);

    for (;;) {
        struct usb_functionfs_event events[8];
        ssize_t n = read(ep0, events, sizeof events);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("read ep0: %s", strerror(errno));
        }
        for (size_t i = 0; i < (size_t)n / sizeof events[0]; i++) event(ep0, &events[i]);
    }
}
