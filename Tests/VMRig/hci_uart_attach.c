/*
 * hci_uart_attach: attach a serial port to the kernel's Bluetooth stack as an H4 UART.
 *
 *   hci_uart_attach [-f] [-q] [-s SPEED] [-F FLAGS] TTY
 *
 * Opens TTY raw (8N1, no flow control, default 115200 baud), switches it to the N_HCI line
 * discipline and selects the H4 protocol. The kernel then registers a new hciN that talks
 * to whatever is at the other end of the serial line (in the VM rig: a Bumble controller on
 * the host, reached through a qemu serial port). Prints "TTY hciN" on stdout.
 *
 * The adapter exists only while the tty stays open, so the program keeps running: by default
 * it forks, the parent prints and exits, the child holds the tty (kill it to "unplug" the
 * adapter). -f stays in the foreground. SIGTERM/SIGINT close the tty cleanly.
 *
 * Built static (gcc -static -O2) so it runs in the busybox initramfs of the VM rig.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#ifndef N_HCI
#define N_HCI 15
#endif

/* From the kernel's drivers/bluetooth/hci_uart.h (not exported to user space). */
#define HCIUARTSETPROTO  _IOW('U', 200, int)
#define HCIUARTGETPROTO  _IOR('U', 201, int)
#define HCIUARTGETDEVICE _IOR('U', 202, int)
#define HCIUARTSETFLAGS  _IOW('U', 203, int)
#define HCIUARTGETFLAGS  _IOR('U', 204, int)
#define HCI_UART_H4 0

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) { (void)sig; stop_requested = 1; }

static speed_t speed_constant(long baud)
{
    switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    case 230400: return B230400;
    case 460800: return B460800;
    case 921600: return B921600;
    case 1000000: return B1000000;
    case 3000000: return B3000000;
    default: return 0;
    }
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [-f] [-q] [-s SPEED] [-F FLAGS] TTY\n"
                    "  -f        stay in the foreground (default: fork, parent exits)\n"
                    "  -q        do not print the hciN name\n"
                    "  -s SPEED  baud rate (default 115200)\n"
                    "  -F FLAGS  HCIUARTSETFLAGS value (default: not set)\n", argv0);
}

int main(int argc, char **argv)
{
    int foreground = 0, quiet = 0, opt;
    long baud = 115200, flags = -1;

    while ((opt = getopt(argc, argv, "fqs:F:h")) != -1) {
        switch (opt) {
        case 'f': foreground = 1; break;
        case 'q': quiet = 1; break;
        case 's': baud = strtol(optarg, NULL, 0); break;
        case 'F': flags = strtol(optarg, NULL, 0); break;
        default: usage(argv[0]); return 2;
        }
    }
    if (optind + 1 != argc) { usage(argv[0]); return 2; }
    const char *path = argv[optind];
    speed_t speed = speed_constant(baud);
    if (!speed) { fprintf(stderr, "hci_uart_attach: unsupported speed %ld\n", baud); return 2; }

    int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) { fprintf(stderr, "hci_uart_attach: open %s: %s\n", path, strerror(errno)); return 1; }

    struct termios ti;
    if (tcgetattr(fd, &ti) < 0) { fprintf(stderr, "hci_uart_attach: tcgetattr: %s\n", strerror(errno)); return 1; }
    cfmakeraw(&ti);
    ti.c_cflag |= CLOCAL | CREAD;
    ti.c_cflag &= ~CRTSCTS;
    cfsetispeed(&ti, speed);
    cfsetospeed(&ti, speed);
    if (tcsetattr(fd, TCSANOW, &ti) < 0) { fprintf(stderr, "hci_uart_attach: tcsetattr: %s\n", strerror(errno)); return 1; }
    tcflush(fd, TCIOFLUSH);

    int ldisc = N_HCI;
    if (ioctl(fd, TIOCSETD, &ldisc) < 0) {
        fprintf(stderr, "hci_uart_attach: TIOCSETD N_HCI: %s (is hci_uart loaded?)\n", strerror(errno));
        return 1;
    }
    if (flags >= 0 && ioctl(fd, HCIUARTSETFLAGS, (unsigned long)flags) < 0) {
        fprintf(stderr, "hci_uart_attach: HCIUARTSETFLAGS: %s\n", strerror(errno));
        return 1;
    }
    if (ioctl(fd, HCIUARTSETPROTO, (unsigned long)HCI_UART_H4) < 0) {
        fprintf(stderr, "hci_uart_attach: HCIUARTSETPROTO H4: %s\n", strerror(errno));
        return 1;
    }
    int dev = ioctl(fd, HCIUARTGETDEVICE, 0);
    if (!quiet) {
        if (dev >= 0) printf("%s hci%d\n", path, dev);
        else printf("%s hci?\n", path);
        fflush(stdout);
    }

    if (!foreground) {
        pid_t pid = fork();
        if (pid < 0) { fprintf(stderr, "hci_uart_attach: fork: %s\n", strerror(errno)); return 1; }
        if (pid > 0) _exit(0);          /* the child keeps the tty open */
        setsid();
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) { dup2(null, 0); dup2(null, 1); if (null > 2) close(null); }
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    while (!stop_requested) pause();

    /* Back to N_TTY first: the kernel unregisters hciN when the HCI line discipline closes. */
    ldisc = 0;
    ioctl(fd, TIOCSETD, &ldisc);
    close(fd);
    return 0;
}
