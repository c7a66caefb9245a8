// Linux interfaces that Swift's Glibc module does not bring in.
#include <sys/eventfd.h>
