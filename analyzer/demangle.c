/* demangle.c -- mangled kernel names (graph data, CUPTI-based traces) demangled with
 * libstdc++'s __cxa_demangle: the function the PyTorch profiler (Kineto) prints its
 * kernel names with, so both sides read alike.  C11 cannot include <cxxabi.h>; the
 * function has C linkage and this signature (the Itanium C++ ABI's).
 *
 * Back-references let a short mangled name stand for an exponentially long one
 * (nested templates of templates): __cxa_demangle has no bound, so a hostile name of
 * a few hundred bytes would take seconds and gigabytes.  The names are therefore
 * demangled in a child process that sends each result back through a pipe; a name
 * whose answer does not come within DEMANGLE_TIMEOUT_MS is given up on (the child is
 * killed and another one goes on with the next name), and after DEMANGLE_GIVE_UP
 * such names the rest stay as written. */
#include "demangle.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define DEMANGLE_TIMEOUT_MS 2000
#define DEMANGLE_GIVE_UP 4
#define NO_ANSWER UINT32_MAX    /* a length that says "not demangled" */

static int mangled(const char *s)
{
    return s[0] == '_' && s[1] == 'Z';
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The child: per name from first on, its length (NO_ANSWER: none) and bytes. */
static void child(int fd, const char *const *names, size_t first, size_t n, size_t max_len)
{
    for (size_t i = first; i < n; i++) {
        int status = -1;
        char *d = __cxa_demangle(names[i], NULL, NULL, &status);
        uint32_t len = d != NULL && status == 0 ? (uint32_t)strnlen(d, max_len) : NO_ANSWER;
        if (write_all(fd, &len, sizeof len) != 0
            || (len != NO_ANSWER && write_all(fd, d, len) != 0))
            _exit(1);
        free(d);
    }
    _exit(0);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* n bytes from fd before the deadline: 0, or -1 (ended, failed or late). */
static int read_by(int fd, void *p, size_t n, int64_t deadline)
{
    char *c = p;
    while (n > 0) {
        struct pollfd pf = { fd, POLLIN, 0 };
        int64_t left = deadline - now_ms();
        int r = left > 0 ? poll(&pf, 1, (int)left) : 0;
        ssize_t k;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || (k = read(fd, c, n)) <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* One answer: 1 (*out set, NULL when not demangled), 0 when none came in time. */
static int read_answer(int fd, size_t max_len, char **out)
{
    int64_t deadline = now_ms() + DEMANGLE_TIMEOUT_MS;
    uint32_t len;
    *out = NULL;
    if (read_by(fd, &len, sizeof len, deadline) != 0)
        return 0;
    if (len == NO_ANSWER)
        return 1;
    if (len > max_len || (*out = malloc((size_t)len + 1)) == NULL)
        return 0;
    if (read_by(fd, *out, len, deadline) != 0) {
        free(*out);
        *out = NULL;
        return 0;
    }
    (*out)[len] = '\0';
    return 1;
}

/* A child for names[first..n): its pid and the pipe's reading end, or -1. */
static pid_t start_child(const char *const *names, size_t first, size_t n, size_t max_len,
                         int *fd)
{
    int p[2];
    pid_t pid;
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    if ((pid = fork()) == 0) {
        close(p[0]);
        child(p[1], names, first, n, max_len);
    }
    close(p[1]);
    if (pid < 0)
        close(p[0]);
    *fd = p[0];
    return pid;
}

static void stop_child(pid_t pid, int fd)
{
    close(fd);
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* names[0..n), all mangled: answers in out, children started as needed. */
static long demangle_mangled(const char *const *names, size_t n, size_t max_len, char **out)
{
    long given_up = 0;
    size_t i = 0;
    while (i < n && given_up < DEMANGLE_GIVE_UP) {
        int fd;
        pid_t pid = start_child(names, i, n, max_len, &fd);
        if (pid < 0)
            break;
        while (i < n && read_answer(fd, max_len, &out[i]))
            i++;
        stop_child(pid, fd);
        if (i < n)
            given_up++, i++;
    }
    return given_up + (long)(n - i);
}

long demangle_all(const char *const *names, size_t n, size_t max_len, char **out)
{
    const char **m = malloc((n + 1) * sizeof *m);
    char **got = malloc((n + 1) * sizeof *got);
    size_t k = 0;
    long rc;
    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    for (size_t i = 0; got != NULL && i < n; i++)
        got[i] = NULL;
    if (m == NULL || got == NULL) {
        free(m);
        free(got);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (mangled(names[i]))
            m[k++] = names[i];
    rc = k == 0 ? 0 : demangle_mangled(m, k, max_len, got);
    for (size_t i = 0, j = 0; i < n && rc >= 0; i++)
        if (mangled(names[i]))
            out[i] = got[j++];
    free(m);
    free(got);
    return rc;
}
