/*
 * udev_relay: (guest) the part of systemd-udevd that libusb needs, for a VM without udevd.
 *
 * libusb on Debian is built with udev support: it learns about USB devices coming and going
 * only from udevd's netlink messages (group 2, "libudev" header), never from the kernel's own
 * uevents (group 1), and with hotplug support libusb_get_device_list() returns the device list
 * those messages maintain. Without udevd a replugged board would therefore never reappear. This
 * program listens to the kernel's uevents and re-sends each one as udevd does after processing
 * it (no rules run, no database written; the properties are the kernel's):
 *
 *   header: "libudev\0", magic 0xfeedcafe, header size, properties offset/length,
 *           MurmurHash2 of SUBSYSTEM and DEVTYPE (big-endian, for the receivers' BPF filters),
 *           tag bloom filter (0: no tags)
 *   body:   the kernel's KEY=VALUE\0 properties
 *
 *   udev_relay [-v]      runs until killed; -v prints every event relayed
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define GROUP_KERNEL 1
#define GROUP_UDEV 2

struct relay_header {
    char prefix[8];
    uint32_t magic;
    uint32_t header_size;
    uint32_t properties_off;
    uint32_t properties_len;
    uint32_t subsystem_hash;
    uint32_t devtype_hash;
    uint32_t tag_bloom_hi;
    uint32_t tag_bloom_lo;
};

/* MurmurHash2, 32-bit, seed 0: the hash udev's filters use. */
static uint32_t murmur2(const char *s) {
    const uint32_t m = 0x5bd1e995;
    size_t len = strlen(s);
    uint32_t h = (uint32_t)len;
    const unsigned char *p = (const unsigned char *)s;
    for (; len >= 4; len -= 4, p += 4) {
        uint32_t k = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        k *= m;
        k ^= k >> 24;
        k *= m;
        h = h * m ^ k;
    }
    switch (len) {
    case 3: h ^= (uint32_t)p[2] << 16; /* fall through */
    case 2: h ^= (uint32_t)p[1] << 8;  /* fall through */
    case 1: h ^= p[0]; h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

static const char *property(const char *props, size_t len, const char *key) {
    size_t klen = strlen(key);
    for (size_t i = 0; i < len; i += strlen(props + i) + 1)
        if (!strncmp(props + i, key, klen) && props[i + klen] == '=') return props + i + klen + 1;
    return NULL;
}

int main(int argc, char **argv) {
    int verbose = argc > 1 && !strcmp(argv[1], "-v");
    int in = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
    int out = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
    if (in < 0 || out < 0) { perror("udev_relay: socket"); return 1; }
    struct sockaddr_nl listen_addr = {.nl_family = AF_NETLINK, .nl_groups = GROUP_KERNEL};
    if (bind(in, (struct sockaddr *)&listen_addr, sizeof listen_addr) < 0) { perror("udev_relay: bind"); return 1; }
    int size = 1 << 20;
    setsockopt(in, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
    struct sockaddr_nl send_addr = {.nl_family = AF_NETLINK};
    if (bind(out, (struct sockaddr *)&send_addr, sizeof send_addr) < 0) { perror("udev_relay: bind"); return 1; }
    fprintf(stderr, "udev_relay: relaying kernel uevents to udev listeners\n");

    static char buf[16384];
    for (;;) {
        ssize_t n = recv(in, buf, sizeof buf - 1, 0);
        if (n < 0) {
            if (errno == EINTR || errno == ENOBUFS) continue;
            perror("udev_relay: recv");
            return 1;
        }
        buf[n] = 0;
        /* "ACTION@DEVPATH\0KEY=VALUE\0..." */
        size_t head = strlen(buf) + 1;
        if (head >= (size_t)n || !strstr(buf, "@/")) continue;
        const char *props = buf + head;
        size_t plen = (size_t)n - head;
        const char *subsystem = property(props, plen, "SUBSYSTEM");
        const char *devtype = property(props, plen, "DEVTYPE");
        if (!subsystem) continue;
        struct relay_header h = {
            .prefix = "libudev",
            .magic = htobe32(0xfeedcafe),
            .header_size = sizeof h,
            .properties_off = sizeof h,
            .properties_len = (uint32_t)plen,
            .subsystem_hash = htobe32(murmur2(subsystem)),
            .devtype_hash = devtype ? htobe32(murmur2(devtype)) : 0,
        };
        struct iovec iov[2] = {{&h, sizeof h}, {(void *)props, plen}};
        struct sockaddr_nl to = {.nl_family = AF_NETLINK, .nl_groups = GROUP_UDEV};
        struct msghdr msg = {.msg_name = &to, .msg_namelen = sizeof to, .msg_iov = iov, .msg_iovlen = 2};
        /* ECONNREFUSED: nobody listens right now, which is fine. */
        if (sendmsg(out, &msg, 0) < 0 && errno != ECONNREFUSED) perror("udev_relay: sendmsg");
        if (verbose) fprintf(stderr, "udev_relay: %s\n", buf);
    }
}
