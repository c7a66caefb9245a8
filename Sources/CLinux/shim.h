// Linux interfaces that Swift's Glibc module does not bring in.
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

// A GNU extension: Glibc's module is built without _GNU_SOURCE, so <pthread.h> does not declare
// it there. Names are at most 15 bytes (16 with the NUL); longer ones fail with ERANGE.
extern int pthread_setname_np(pthread_t thread, const char *name);
