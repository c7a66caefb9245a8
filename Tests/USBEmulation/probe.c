/*
 * probe.c - drive the emulated DWM3001CDK (or a real one) with plain libusb-1.0.
 *
 *   probe [MODE...]   modes: info silent nodtr garbage deny unplug idle reopen bench arrive
 *                     misc usbfs (default: info)
 *
 * Prints what it sees as key=value lines plus "PASS ..." / "FAIL ..." lines for the checks it
 * makes; exits 1 if any check failed. Modes other than info and silent need the emulator's
 * control socket in $EMULATED_BOARD_CONTROL (emulated_board.py --control sets it).
 *
 * Build: gcc -O2 -Wall -o probe probe.c $(pkg-config --cflags --libs libusb-1.0)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <libusb.h>
#include <linux/usbdevice_fs.h>
#include <sys/ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NORDIC_VID 0x1915
#define CDC_SET_LINE_CODING 0x20
#define CDC_GET_LINE_CODING 0x21
#define CDC_SET_CONTROL_LINE_STATE 0x22

static libusb_context *ctx;
static int failures;

struct board {
    libusb_device_handle *h;
    uint8_t address;
    int comm_if, data_if;
    uint8_t ep_notify, ep_in, ep_out;
    uint16_t in_max_packet;
};

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
    va_list ap;
    printf("%s ", ok ? "PASS" : "FAIL");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (!ok)
        failures++;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static const char *status_name(enum libusb_transfer_status s)
{
    switch (s) {
    case LIBUSB_TRANSFER_COMPLETED: return "COMPLETED";
    case LIBUSB_TRANSFER_ERROR: return "ERROR";
    case LIBUSB_TRANSFER_TIMED_OUT: return "TIMED_OUT";
    case LIBUSB_TRANSFER_CANCELLED: return "CANCELLED";
    case LIBUSB_TRANSFER_STALL: return "STALL";
    case LIBUSB_TRANSFER_NO_DEVICE: return "NO_DEVICE";
    case LIBUSB_TRANSFER_OVERFLOW: return "OVERFLOW";
    }
    return "?";
}

static const char *err(int r)
{
    return r >= 0 ? "ok" : libusb_error_name(r);
}

static void hex(const char *label, const uint8_t *p, int n)
{
    printf("%s=", label);
    for (int i = 0; i < n; i++)
        printf("%s%02x", i ? " " : "", p[i]);
    printf("\n");
    fflush(stdout);
}

/* ---------------------------------------------------------------- emulator control socket */

static int ctl(const char *cmd)
{
    const char *path = getenv("EMULATED_BOARD_CONTROL");
    char reply[512];
    size_t got = 0;
    if (!path) {
        check(0, "ctl '%s': $EMULATED_BOARD_CONTROL not set (run under emulated_board.py --control)", cmd);
        return -1;
    }
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
        check(0, "ctl '%s': connect %s: %s", cmd, path, strerror(errno));
        if (s >= 0)
            close(s);
        return -1;
    }
    dprintf(s, "%s\n", cmd);
    while (got < sizeof reply - 1) {
        ssize_t r = read(s, reply + got, sizeof reply - 1 - got);
        if (r <= 0)
            break;
        got += r;
        if (memchr(reply, '\n', got))
            break;
    }
    close(s);
    reply[got] = 0;
    reply[strcspn(reply, "\n")] = 0;
    printf("ctl %s -> %s\n", cmd, reply);
    fflush(stdout);
    return strncmp(reply, "ok", 2) == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- finding and opening */

static libusb_device *find_board(void)
{
    libusb_device **list;
    libusb_device *found = NULL;
    ssize_t n = libusb_get_device_list(ctx, &list);
    for (ssize_t i = 0; i < n; i++) {
        struct libusb_device_descriptor d;
        if (libusb_get_device_descriptor(list[i], &d) == 0 && d.idVendor == NORDIC_VID) {
            found = libusb_ref_device(list[i]);
            break;
        }
    }
    if (n >= 0)
        libusb_free_device_list(list, 1);
    return found;
}

static int read_endpoints(libusb_device *dev, struct board *b)
{
    struct libusb_config_descriptor *cfg;
    int r = libusb_get_active_config_descriptor(dev, &cfg);
    if (r) {
        check(0, "libusb_get_active_config_descriptor: %s", libusb_error_name(r));
        return r;
    }
    b->comm_if = b->data_if = -1;
    for (int i = 0; i < cfg->bNumInterfaces; i++) {
        const struct libusb_interface_descriptor *alt = &cfg->interface[i].altsetting[0];
        for (int e = 0; e < alt->bNumEndpoints; e++) {
            const struct libusb_endpoint_descriptor *ep = &alt->endpoint[e];
            int type = ep->bmAttributes & 3;
            if (alt->bInterfaceClass == 0x02 && type == LIBUSB_TRANSFER_TYPE_INTERRUPT)
                b->ep_notify = ep->bEndpointAddress;
            if (alt->bInterfaceClass == 0x0A && type == LIBUSB_TRANSFER_TYPE_BULK) {
                if (ep->bEndpointAddress & 0x80) {
                    b->ep_in = ep->bEndpointAddress;
                    b->in_max_packet = ep->wMaxPacketSize;
                } else {
                    b->ep_out = ep->bEndpointAddress;
                }
            }
        }
        if (alt->bInterfaceClass == 0x02 && b->comm_if < 0)
            b->comm_if = alt->bInterfaceNumber;
        if (alt->bInterfaceClass == 0x0A && b->data_if < 0)
            b->data_if = alt->bInterfaceNumber;
    }
    libusb_free_config_descriptor(cfg);
    printf("endpoints comm_if=%d notify=0x%02x data_if=%d bulk_in=0x%02x bulk_out=0x%02x max_packet=%u\n",
           b->comm_if, b->ep_notify, b->data_if, b->ep_in, b->ep_out, b->in_max_packet);
    check(b->comm_if >= 0 && b->data_if >= 0 && b->ep_in && b->ep_out,
          "CDC-ACM interfaces and bulk endpoints found in the descriptors");
    return 0;
}

static int set_line_state(struct board *b, int dtr)
{
    uint8_t coding[7] = { 0x00, 0xC2, 0x01, 0x00, 0, 0, 8 }; /* 115200 8N1 */
    uint8_t back[7] = { 0 };
    int r = libusb_control_transfer(b->h, 0x21, CDC_SET_LINE_CODING, 0, b->comm_if, coding, 7, 1000);
    check(r == 7, "SET_LINE_CODING 115200 8N1 (%s)", r < 0 ? libusb_error_name(r) : "ok");
    r = libusb_control_transfer(b->h, 0xA1, CDC_GET_LINE_CODING, 0, b->comm_if, back, 7, 1000);
    check(r == 7 && !memcmp(coding, back, 7), "GET_LINE_CODING reads it back");
    r = libusb_control_transfer(b->h, 0x21, CDC_SET_CONTROL_LINE_STATE, dtr ? 0x0003 : 0, b->comm_if,
                                NULL, 0, 1000);
    check(r == 0, "SET_CONTROL_LINE_STATE DTR=%d RTS=%d (%s)", dtr, dtr, r < 0 ? libusb_error_name(r) : "ok");
    return r;
}

static int open_board(libusb_device *dev, struct board *b, int dtr)
{
    struct libusb_device_descriptor d;
    unsigned char text[256];
    uint8_t ports[8];
    int r;

    memset(b, 0, sizeof *b);
    if (read_endpoints(dev, b))
        return -1;
    libusb_get_device_descriptor(dev, &d);
    b->address = libusb_get_device_address(dev);
    int depth = libusb_get_port_numbers(dev, ports, sizeof ports);
    printf("device %04x:%04x bus=%u address=%u port=%d speed=%d\n", d.idVendor, d.idProduct,
           libusb_get_bus_number(dev), b->address, depth > 0 ? ports[depth - 1] : -1,
           libusb_get_device_speed(dev));
    r = libusb_open(dev, &b->h);
    if (r) {
        printf("open=%s\n", libusb_error_name(r));
        return r;
    }
    if (libusb_get_string_descriptor_ascii(b->h, d.iManufacturer, text, sizeof text) > 0)
        printf("manufacturer=%s\n", text);
    if (libusb_get_string_descriptor_ascii(b->h, d.iProduct, text, sizeof text) > 0)
        printf("product=%s\n", text);
    if (libusb_get_string_descriptor_ascii(b->h, d.iSerialNumber, text, sizeof text) > 0)
        printf("serial=%s\n", text);

    r = libusb_kernel_driver_active(b->h, b->data_if);
    printf("kernel_driver_active_if%d=%d\n", b->data_if, r);
    r = libusb_detach_kernel_driver(b->h, b->data_if);
    printf("detach_if%d=%s\n", b->data_if, r ? libusb_error_name(r) : "ok");
    r = libusb_kernel_driver_active(b->h, b->comm_if);
    printf("kernel_driver_active_if%d=%d (cdc_acm lets go of both interfaces at once)\n", b->comm_if, r);
    r = libusb_detach_kernel_driver(b->h, b->comm_if);
    printf("detach_if%d=%s\n", b->comm_if, r ? libusb_error_name(r) : "ok");
    int rc = libusb_claim_interface(b->h, b->comm_if);
    int rd = libusb_claim_interface(b->h, b->data_if);
    check(rc == 0 && rd == 0, "claim interfaces %d and %d (%s, %s)", b->comm_if, b->data_if,
          err(rc), err(rd));
    if (rc || rd)
        return -1;
    if (dtr && set_line_state(b, 1))
        return -1;
    return 0;
}

static void close_board(struct board *b)
{
    if (!b->h)
        return;
    int r1 = libusb_release_interface(b->h, b->data_if);
    int r0 = libusb_release_interface(b->h, b->comm_if);
    printf("release=%s,%s\n", err(r1), err(r0));
    if (r0 == 0) {
        int r = libusb_attach_kernel_driver(b->h, b->comm_if);
        printf("reattach_cdc_acm=%s\n", r ? libusb_error_name(r) : "ok");
    }
    libusb_close(b->h);
    b->h = NULL;
}

/* ---------------------------------------------------------------- UCI over the bulk endpoints */

static const uint8_t GET_DEVICE_INFO[] = { 0x20, 0x02, 0x00, 0x00 };

/* Sends cmd on bulk OUT, then reads bulk IN transfers until a UCI response (MT 2) with the
 * same GID/OID arrives; returns its length (copied to resp) or a libusb error. */
static int uci_exchange(struct board *b, const uint8_t *cmd, int len, uint8_t *resp, int max,
                        int timeout_ms, int *chunks)
{
    uint8_t buf[4096];
    int done = 0, r;
    r = libusb_bulk_transfer(b->h, b->ep_out, (uint8_t *)cmd, len, &done, 1000);
    printf("bulk_out=%s sent=%d\n", r ? libusb_error_name(r) : "ok", done);
    if (r)
        return r;
    double deadline = now_ms() + timeout_ms;
    *chunks = 0;
    while (now_ms() < deadline) {
        int got = 0;
        r = libusb_bulk_transfer(b->h, b->ep_in, buf, sizeof buf, &got, (unsigned)(deadline - now_ms()) + 1);
        if (r && r != LIBUSB_ERROR_TIMEOUT)
            return r;
        if (got <= 0)
            break;
        (*chunks)++;
        printf("bulk_in len=%d ", got);
        hex("data", buf, got);
        if (got >= 4 && (buf[0] >> 5) == 2 && (buf[0] & 0x0F) == (cmd[0] & 0x0F) &&
            (buf[1] & 0x3F) == (cmd[1] & 0x3F)) {
            int n = got < max ? got : max;
            memcpy(resp, buf, n);
            return n;
        }
    }
    return LIBUSB_ERROR_TIMEOUT;
}

static int get_device_info(struct board *b, const char *label)
{
    uint8_t resp[512];
    int chunks;
    int n = uci_exchange(b, GET_DEVICE_INFO, sizeof GET_DEVICE_INFO, resp, sizeof resp, 2000, &chunks);
    if (n < 0) {
        check(0, "%s: CORE_GET_DEVICE_INFO answered (%s)", label, libusb_error_name(n));
        return n;
    }
    hex("response", resp, n);
    int ok = n >= 5 + 8 && resp[0] == 0x40 && resp[1] == 0x02 && resp[3] == n - 4 && resp[4] == 0x00;
    check(ok, "%s: CORE_GET_DEVICE_INFO_RSP, status OK, UCI version %u.%u", label,
          n > 5 ? resp[5] : 0, n > 6 ? resp[6] >> 4 : 0);
    return ok ? 0 : -1;
}

/* ---------------------------------------------------------------- hotplug and async helpers */

static int hp_arrived, hp_left;

static int LIBUSB_CALL on_hotplug(libusb_context *c, libusb_device *dev, libusb_hotplug_event ev, void *u)
{
    (void)c; (void)u;
    if (ev == LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED)
        hp_arrived++;
    else
        hp_left++;
    printf("hotplug %s address=%u\n", ev == LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED ? "ARRIVED" : "LEFT",
           libusb_get_device_address(dev));
    fflush(stdout);
    return 0;
}

/* Handles events until *flag becomes nonzero (if flag) or ms pass. */
static void run_events(int ms, volatile int *flag)
{
    double deadline = now_ms() + ms;
    while ((!flag || !*flag) && now_ms() < deadline) {
        struct timeval tv = { 0, 100000 };
        libusb_handle_events_timeout_completed(ctx, &tv, (int *)flag);
    }
}

struct async_in {
    struct libusb_transfer *t;
    uint8_t buf[4096];
    volatile int done;
};

static void LIBUSB_CALL on_async_done(struct libusb_transfer *t)
{
    struct async_in *a = t->user_data;
    a->done = 1;
}

static int submit_in(struct board *b, struct async_in *a)
{
    a->done = 0;
    a->t = libusb_alloc_transfer(0);
    libusb_fill_bulk_transfer(a->t, b->h, b->ep_in, a->buf, sizeof a->buf, on_async_done, a, 0);
    int r = libusb_submit_transfer(a->t);
    check(r == 0, "submit async bulk IN transfer (4096 bytes, no timeout)");
    return r;
}

/* ---------------------------------------------------------------- modes */

static int mode_info(void)
{
    struct board b;
    libusb_device *dev = find_board();
    check(dev != NULL, "a device with VID 0x%04x is listed", NORDIC_VID);
    if (!dev)
        return -1;
    int r = open_board(dev, &b, 1);
    if (r == 0)
        get_device_info(&b, "info");
    close_board(&b);
    libusb_unref_device(dev);
    return r;
}

static int mode_silent(void)
{
    struct board b;
    uint8_t buf[4096];
    int got = 0, sent = 0;
    libusb_device *dev = find_board();
    check(dev != NULL, "the silent board is listed");
    if (!dev || open_board(dev, &b, 1))
        return -1;
    int r = libusb_bulk_transfer(b.h, b.ep_out, (uint8_t *)GET_DEVICE_INFO, 4, &sent, 1000);
    check(r == 0 && sent == 4, "a silent board still accepts bulk OUT (%s)", err(r));
    r = libusb_bulk_transfer(b.h, b.ep_in, buf, sizeof buf, &got, 500);
    check(r == LIBUSB_ERROR_TIMEOUT && got == 0, "and never answers (%s)", libusb_error_name(r));
    close_board(&b);
    libusb_unref_device(dev);
    return 0;
}

static int mode_nodtr(void)
{
    struct board b;
    uint8_t buf[4096];
    int got = 0, sent = 0, r;
    static const uint8_t status_ntf[] = { 0x60, 0x01, 0x00, 0x01, 0x01 };
    libusb_device *dev = find_board();
    if (!dev || open_board(dev, &b, 0))
        return -1;
    ctl("inject 6001000101");
    r = libusb_bulk_transfer(b.h, b.ep_in, buf, sizeof buf, &got, 300);
    check(r == LIBUSB_ERROR_TIMEOUT && got == 0, "before DTR the board sends nothing on bulk IN (%s)",
          libusb_error_name(r));
    r = libusb_bulk_transfer(b.h, b.ep_out, (uint8_t *)GET_DEVICE_INFO, 4, &sent, 300);
    check(r == LIBUSB_ERROR_TIMEOUT && sent == 0, "before DTR bulk OUT is not accepted (%s, sent %d)",
          libusb_error_name(r), sent);
    set_line_state(&b, 1);
    r = libusb_bulk_transfer(b.h, b.ep_in, buf, sizeof buf, &got, 1000);
    if (r == 0)
        hex("held_in", buf, got);
    check(r == 0 && got == 5 && !memcmp(buf, status_ntf, 5),
          "after DTR the held bytes arrive as one transfer (%s)", err(r));
    get_device_info(&b, "nodtr");
    set_line_state(&b, 0);
    close_board(&b);
    libusb_unref_device(dev);
    return 0;
}

static int mode_garbage(void)
{
    struct board b;
    uint8_t resp[512];
    int chunks = 0;
    libusb_device *dev = find_board();
    if (!dev || open_board(dev, &b, 1))
        return -1;
    ctl("garbage 7");
    int n = uci_exchange(&b, GET_DEVICE_INFO, 4, resp, sizeof resp, 2000, &chunks);
    check(n > 0 && chunks == 2, "7 garbage bytes came as their own transfer before the response "
          "(%d transfers)", chunks);
    ctl("inject 6001000101");
    get_device_info(&b, "after garbage");
    close_board(&b);
    libusb_unref_device(dev);
    return 0;
}

static int mode_deny(void)
{
    libusb_device_handle *h = NULL;
    libusb_device *dev = find_board();
    if (!dev)
        return -1;
    ctl("deny");
    int r = libusb_open(dev, &h);
    check(r == LIBUSB_ERROR_ACCESS, "denied node: libusb_open -> %s", libusb_error_name(r));
    if (r == 0)
        libusb_close(h);
    ctl("allow");
    r = libusb_open(dev, &h);
    check(r == 0, "allowed again: libusb_open -> %s", r ? libusb_error_name(r) : "ok");
    if (r == 0)
        libusb_close(h);
    libusb_unref_device(dev);
    return 0;
}

static int mode_unplug(void)
{
    struct board b;
    struct async_in a;
    libusb_hotplug_callback_handle cb;
    uint8_t out[4] = { 0x20, 0x02, 0x00, 0x00 };
    int sent = 0, r, has_hotplug = libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG);

    printf("has_hotplug=%d\n", has_hotplug);
    hp_arrived = hp_left = 0;
    if (has_hotplug) {
        r = libusb_hotplug_register_callback(ctx, LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED |
                                             LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT, 0, NORDIC_VID,
                                             LIBUSB_HOTPLUG_MATCH_ANY, LIBUSB_HOTPLUG_MATCH_ANY,
                                             on_hotplug, NULL, &cb);
        check(r == 0, "hotplug callback registered");
    }
    libusb_device *dev = find_board();
    if (!dev || open_board(dev, &b, 1))
        return -1;
    get_device_info(&b, "before unplug");
    uint8_t old_address = b.address;

    submit_in(&b, &a);
    double t0 = now_ms();
    ctl("unplug");
    run_events(3000, &a.done);
    printf("pending_in_ended_after_ms=%.0f\n", now_ms() - t0);
    check(a.done && a.t->status == LIBUSB_TRANSFER_NO_DEVICE,
          "the pending bulk IN transfer ends with %s", a.done ? status_name(a.t->status) : "(still pending)");
    if (a.done)
        libusb_free_transfer(a.t);
    run_events(1000, &hp_left);
    printf("hotplug_left=%d\n", hp_left);
    if (has_hotplug)
        check(hp_left == 1, "hotplug LEFT callback fired (%d)", hp_left);
    r = libusb_bulk_transfer(b.h, b.ep_out, out, 4, &sent, 1000);
    check(r == LIBUSB_ERROR_NO_DEVICE, "bulk OUT on the unplugged handle -> %s", libusb_error_name(r));
    r = libusb_claim_interface(b.h, b.comm_if); /* already claimed: libusb answers from its cache */
    close_board(&b);
    libusb_unref_device(dev);

    dev = find_board();
    check(dev == NULL, "the board is no longer listed");
    if (dev)
        libusb_unref_device(dev);

    t0 = now_ms();
    ctl("replug");
    if (has_hotplug)
        run_events(3000, &hp_arrived);
    dev = NULL;
    while (!dev && now_ms() - t0 < 3000) {
        dev = find_board();
        if (!dev)
            usleep(50000);
    }
    printf("hotplug_arrived=%d relisted_after_ms=%.0f\n", hp_arrived, now_ms() - t0);
    if (has_hotplug)
        check(hp_arrived == 1, "hotplug ARRIVED callback fired (%d)", hp_arrived);
    check(dev != NULL, "the board is listed again");
    if (!dev)
        return -1;
    if (open_board(dev, &b, 1) == 0) {
        check(b.address != old_address, "new device address %u (was %u)", b.address, old_address);
        get_device_info(&b, "after replug");
    }
    close_board(&b);
    libusb_unref_device(dev);
    if (has_hotplug)
        libusb_hotplug_deregister_callback(ctx, cb);
    return 0;
}

/* Started with no board (emulated_board.py --start-unplugged): it appears later. */
static int mode_arrive(void)
{
    struct board b;
    libusb_hotplug_callback_handle cb;
    int has_hotplug = libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG);
    hp_arrived = hp_left = 0;
    libusb_device *dev = find_board();
    check(dev == NULL, "no board listed at start");
    if (has_hotplug)
        libusb_hotplug_register_callback(ctx, LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED, 0, NORDIC_VID,
                                         LIBUSB_HOTPLUG_MATCH_ANY, LIBUSB_HOTPLUG_MATCH_ANY,
                                         on_hotplug, NULL, &cb);
    double t0 = now_ms();
    ctl("plug");
    if (has_hotplug) {
        run_events(3000, &hp_arrived);
        check(hp_arrived == 1, "hotplug ARRIVED after %.0f ms", now_ms() - t0);
        libusb_hotplug_deregister_callback(ctx, cb);
    }
    dev = find_board();
    check(dev != NULL, "the board is listed after plug");
    if (!dev || open_board(dev, &b, 1))
        return -1;
    get_device_info(&b, "arrived");
    close_board(&b);
    libusb_unref_device(dev);
    return 0;
}

static int mode_idle(void)
{
    struct board b;
    struct async_in a;
    libusb_device *dev = find_board();
    if (!dev || open_board(dev, &b, 1))
        return -1;
    submit_in(&b, &a);
    double c0 = cpu_ms(), t0 = now_ms();
    run_events(2000, NULL);
    double used = cpu_ms() - c0, wall = now_ms() - t0;
    printf("idle_wall_ms=%.0f idle_cpu_ms=%.1f\n", wall, used);
    check(used < 200, "waiting 2 s on a pending transfer costs little CPU (%.1f ms)", used);
    check(!a.done, "the pending transfer is still pending");
    libusb_cancel_transfer(a.t);
    run_events(1000, &a.done);
    check(a.done && a.t->status == LIBUSB_TRANSFER_CANCELLED, "cancelled transfer reaped as %s",
          a.done ? status_name(a.t->status) : "(still pending)");
    if (a.done)
        libusb_free_transfer(a.t);
    get_device_info(&b, "after cancel");
    close_board(&b);
    libusb_unref_device(dev);
    return 0;
}

/* Two handles on one board: the second cannot claim what the first holds; closing the first
 * (without releasing, as a crashing process would) frees the interfaces at once. */
static int mode_reopen(void)
{
    struct board b;
    libusb_device_handle *h2 = NULL;
    libusb_device *dev = find_board();
    if (!dev || open_board(dev, &b, 1))
        return -1;
    int r = libusb_open(dev, &h2);
    check(r == 0, "second handle opened (%s)", err(r));
    if (r)
        return -1;
    r = libusb_claim_interface(h2, b.data_if);
    check(r == LIBUSB_ERROR_BUSY, "second handle cannot claim the data interface (%s)", err(r));
    libusb_close(b.h); /* no release */
    b.h = NULL;
    r = libusb_claim_interface(h2, b.data_if);
    check(r == 0, "after the first handle is closed, the second claims it at once (%s)", err(r));
    r = libusb_claim_interface(h2, b.comm_if);
    check(r == 0, "and the communication interface (%s)", err(r));
    b.h = h2;
    get_device_info(&b, "second handle");
    close_board(&b);
    libusb_unref_device(dev);
    return 0;
}

/* Round trips per second through the emulator (and the UWBS). */
static int mode_bench(void)
{
    struct board b;
    uint8_t resp[512];
    int chunks, n = 0, count = 200;
    libusb_device *dev = find_board();
    if (!dev || open_board(dev, &b, 1))
        return -1;
    double t0 = now_ms(), c0 = cpu_ms();
    for (int i = 0; i < count; i++) {
        int saved = dup(1), devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1); /* keep the per-transfer lines quiet */
        int r = uci_exchange(&b, GET_DEVICE_INFO, 4, resp, sizeof resp, 2000, &chunks);
        fflush(stdout);
        dup2(saved, 1);
        close(saved);
        close(devnull);
        if (r > 0)
            n++;
    }
    double wall = now_ms() - t0;
    printf("bench exchanges=%d ok=%d wall_ms=%.0f per_exchange_ms=%.2f probe_cpu_ms=%.0f\n", count, n,
           wall, wall / count, cpu_ms() - c0);
    check(n == count, "%d/%d CORE_GET_DEVICE_INFO round trips", n, count);
    close_board(&b);
    libusb_unref_device(dev);
    return 0;
}

/* The less common libusb calls: auto-detach, alternate settings, halts, a stalled request,
 * set_configuration while claimed, a USB reset. */
static int mode_misc(void)
{
    struct board b;
    int r, config = -1;
    libusb_device *dev = find_board();
    memset(&b, 0, sizeof b);
    if (!dev || read_endpoints(dev, &b))
        return -1;
    r = libusb_open(dev, &b.h);
    check(r == 0, "open (%s)", err(r));
    if (r)
        return -1;
    r = libusb_get_configuration(b.h, &config);
    check(r == 0 && config == 1, "libusb_get_configuration -> %d", config);
    libusb_set_auto_detach_kernel_driver(b.h, 1);
    r = libusb_claim_interface(b.h, b.comm_if);
    int r2 = libusb_claim_interface(b.h, b.data_if);
    check(r == 0 && r2 == 0, "auto-detach claims of both interfaces (%s, %s)", err(r), err(r2));
    r = libusb_kernel_driver_active(b.h, b.data_if);
    check(r == 0, "no kernel driver on the claimed interface (%d)", r);
    r = libusb_set_interface_alt_setting(b.h, b.data_if, 0);
    check(r == 0, "set_interface_alt_setting(data, 0) (%s)", err(r));
    r = libusb_set_interface_alt_setting(b.h, b.data_if, 1);
    check(r == LIBUSB_ERROR_NOT_FOUND, "set_interface_alt_setting(data, 1) -> %s", err(r));
    r = libusb_clear_halt(b.h, b.ep_in);
    check(r == 0, "clear_halt(bulk IN) (%s)", err(r));
    r = libusb_set_configuration(b.h, 1);
    check(r == LIBUSB_ERROR_BUSY, "set_configuration while interfaces are claimed -> %s", err(r));
    r = libusb_control_transfer(b.h, 0x21, 0x23 /* SEND_BREAK */, 0, b.comm_if, NULL, 0, 1000);
    check(r == LIBUSB_ERROR_PIPE, "unsupported class request stalls -> %s", err(r));
    r = libusb_reset_device(b.h);
    check(r == 0, "libusb_reset_device (%s)", err(r));
    set_line_state(&b, 1);
    get_device_info(&b, "after reset");
    r = libusb_release_interface(b.h, b.data_if);
    r2 = libusb_release_interface(b.h, b.comm_if);
    check(r == 0 && r2 == 0, "release with auto-detach (%s, %s)", err(r), err(r2));
    r = libusb_kernel_driver_active(b.h, b.comm_if);
    printf("kernel_driver_active_if%d_after_auto_reattach=%d\n", b.comm_if, r);
    libusb_close(b.h);
    libusb_unref_device(dev);
    return 0;
}

/* The synchronous and blocking usbfs ioctls libusb does not use (USBDEVFS_CONTROL, _BULK,
 * _REAPURB) and read() of the descriptors, straight on the device node. */
static int mode_usbfs(void)
{
    char path[64];
    uint8_t buf[512];
    libusb_device *dev = find_board();
    if (!dev)
        return -1;
    snprintf(path, sizeof path, "/dev/bus/usb/%03u/%03u", libusb_get_bus_number(dev),
             libusb_get_device_address(dev));
    libusb_unref_device(dev);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    check(fd >= 0, "open %s (%s)", path, fd < 0 ? strerror(errno) : "ok");
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf);
    check(n == 18 + 75 && buf[0] == 18 && buf[1] == 1 && buf[18 + 1] == 2,
          "read() returns the device and configuration descriptors (%zd bytes)", n);
    struct usbdevfs_ctrltransfer ct = { .bRequestType = 0x80, .bRequest = 6, .wValue = 0x0100,
                                        .wIndex = 0, .wLength = 18, .timeout = 1000, .data = buf };
    int r = ioctl(fd, USBDEVFS_CONTROL, &ct);
    check(r == 18 && buf[0] == 18 && buf[8] == 0x15 && buf[9] == 0x19,
          "USBDEVFS_CONTROL GET_DESCRIPTOR(device) -> %d", r);
    unsigned int ifno = 1;
    r = ioctl(fd, USBDEVFS_CLAIMINTERFACE, &ifno);
    check(r < 0 && errno == EBUSY, "USBDEVFS_CLAIMINTERFACE while cdc_acm is bound -> %s",
          r < 0 ? strerror(errno) : "ok");
    struct usbdevfs_ioctl cmd = { .ifno = 1, .ioctl_code = USBDEVFS_DISCONNECT, .data = NULL };
    r = ioctl(fd, USBDEVFS_IOCTL, &cmd);
    check(r == 0, "USBDEVFS_IOCTL(DISCONNECT) interface 1 (%s)", r < 0 ? strerror(errno) : "ok");
    r = ioctl(fd, USBDEVFS_CLAIMINTERFACE, &ifno);
    check(r == 0, "claim interface 1 (%s)", r < 0 ? strerror(errno) : "ok");
    ct = (struct usbdevfs_ctrltransfer){ .bRequestType = 0x21, .bRequest = CDC_SET_CONTROL_LINE_STATE,
                                         .wValue = 1, .wIndex = 0, .wLength = 0, .timeout = 1000 };
    r = ioctl(fd, USBDEVFS_CONTROL, &ct);
    check(r == 0, "USBDEVFS_CONTROL SET_CONTROL_LINE_STATE DTR (auto-claims interface 0) (%s)",
          r < 0 ? strerror(errno) : "ok");
    struct usbdevfs_bulktransfer bt = { .ep = 0x01, .len = 4, .timeout = 1000, .data = (void *)GET_DEVICE_INFO };
    r = ioctl(fd, USBDEVFS_BULK, &bt);
    check(r == 4, "USBDEVFS_BULK OUT -> %d", r);
    bt = (struct usbdevfs_bulktransfer){ .ep = 0x81, .len = sizeof buf, .timeout = 1000, .data = buf };
    r = ioctl(fd, USBDEVFS_BULK, &bt);
    check(r > 4 && buf[0] == 0x40 && buf[1] == 0x02, "USBDEVFS_BULK IN -> %d bytes of response", r);
    bt.timeout = 200;
    double t0 = now_ms();
    r = ioctl(fd, USBDEVFS_BULK, &bt);
    check(r < 0 && errno == ETIMEDOUT, "USBDEVFS_BULK IN with nothing to read -> %s after %.0f ms",
          r < 0 ? strerror(errno) : "data", now_ms() - t0);
    struct usbdevfs_urb urb = { .type = USBDEVFS_URB_TYPE_BULK, .endpoint = 0x81, .buffer = buf,
                                .buffer_length = sizeof buf };
    struct usbdevfs_urb out = { .type = USBDEVFS_URB_TYPE_BULK, .endpoint = 0x01,
                                .buffer = (void *)GET_DEVICE_INFO, .buffer_length = 4 };
    void *reaped = NULL;
    r = ioctl(fd, USBDEVFS_SUBMITURB, &urb);
    int r2 = ioctl(fd, USBDEVFS_SUBMITURB, &out);
    check(r == 0 && r2 == 0, "two URBs submitted");
    int got_in = 0, got_out = 0;
    for (int i = 0; i < 2; i++) {
        r = ioctl(fd, USBDEVFS_REAPURB, &reaped);
        if (r == 0 && reaped == &urb && urb.status == 0 && urb.actual_length > 4)
            got_in = 1;
        if (r == 0 && reaped == &out && out.status == 0 && out.actual_length == 4)
            got_out = 1;
    }
    check(got_in && got_out, "USBDEVFS_REAPURB (blocking) returns both, IN with %d bytes", urb.actual_length);
    r = ioctl(fd, USBDEVFS_REAPURBNDELAY, &reaped);
    check(r < 0 && errno == EAGAIN, "REAPURBNDELAY with nothing completed -> %s", r < 0 ? strerror(errno) : "ok");
    r = ioctl(fd, USBDEVFS_SUBMITURB, &urb);
    r2 = ioctl(fd, USBDEVFS_DISCARDURB, &urb);
    r = ioctl(fd, USBDEVFS_REAPURB, &reaped);
    check(r2 == 0 && r == 0 && reaped == &urb && urb.status == -ENOENT,
          "DISCARDURB: the URB is reaped with status %d (-ENOENT)", urb.status);
    r = ioctl(fd, USBDEVFS_DISCARDURB, &urb);
    check(r < 0 && errno == EINVAL, "DISCARDURB of a reaped URB -> %s", r < 0 ? strerror(errno) : "ok");
    r = ioctl(fd, TCGETS, buf);
    check(r < 0 && errno == ENOTTY, "a tty ioctl -> %s (isatty() is false)", r < 0 ? strerror(errno) : "ok");
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    const struct libusb_version *v = libusb_get_version();
    setvbuf(stdout, NULL, _IOLBF, 0);
    int r = libusb_init(&ctx);
    if (r) {
        fprintf(stderr, "libusb_init: %s\n", libusb_error_name(r));
        return 2;
    }
    printf("libusb %u.%u.%u\n", v->major, v->minor, v->micro);
    if (argc < 2) {
        mode_info();
    }
    for (int i = 1; i < argc; i++) {
        printf("== mode %s\n", argv[i]);
        if (!strcmp(argv[i], "info")) mode_info();
        else if (!strcmp(argv[i], "silent")) mode_silent();
        else if (!strcmp(argv[i], "nodtr")) mode_nodtr();
        else if (!strcmp(argv[i], "garbage")) mode_garbage();
        else if (!strcmp(argv[i], "deny")) mode_deny();
        else if (!strcmp(argv[i], "unplug")) mode_unplug();
        else if (!strcmp(argv[i], "idle")) mode_idle();
        else if (!strcmp(argv[i], "reopen")) mode_reopen();
        else if (!strcmp(argv[i], "bench")) mode_bench();
        else if (!strcmp(argv[i], "arrive")) mode_arrive();
        else if (!strcmp(argv[i], "misc")) mode_misc();
        else if (!strcmp(argv[i], "usbfs")) mode_usbfs();
        else {
            fprintf(stderr, "unknown mode %s (info silent nodtr garbage deny unplug idle reopen bench arrive misc usbfs)\n", argv[i]);
            failures++;
        }
    }
    libusb_exit(ctx);
    printf("failures=%d\n", failures);
    return failures ? 1 : 0;
}
