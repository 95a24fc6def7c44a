/* spawn.c -- run a program once under the shim, with its output in files.
 *
 * fork, then in the child: the settings into the environment, stdout and stderr
 * into their files, execvp.  A child that cannot exec tells the parent its errno
 * through a close-on-exec pipe, so "cannot run" is never mistaken for the
 * program's own exit status.  Wall time: from before fork to the reaped child.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int redirect(const char *path, int fd)
{
    int f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (f < 0)
        return -1;
    if (f != fd && (dup2(f, fd) < 0 || close(f) < 0))
        return -1;
    return 0;
}

/* In the child: never returns. */
static void child(char *const argv[], const struct settings *s, const char *lib,
                  const char *out_path, const char *err_path, int report_fd)
{
    int err = 0;
    if (settings_apply(s, lib) != 0 || redirect(out_path, STDOUT_FILENO) != 0 ||
        redirect(err_path, STDERR_FILENO) != 0)
        err = errno ? errno : EINVAL;
    else
        execvp(argv[0], argv);
    if (err == 0)
        err = errno;
    if (write(report_fd, &err, sizeof err) < 0) {
        /* the parent sees an empty pipe and status 127 */
    }
    _exit(127);
}

static int reap(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return 128;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int spawn_program(char *const argv[], const struct settings *s, const char *lib,
                  const char *out_path, const char *err_path, struct spawned *r)
{
    int pipefd[2], err = 0;
    double t0 = now_s();
    pid_t pid;
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return fail(EXIT_RUN, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return fail(EXIT_RUN, "fork: %s", strerror(errno));
    if (pid == 0)
        child(argv, s, lib, out_path, err_path, pipefd[1]);
    close(pipefd[1]);
    while (read(pipefd[0], &err, sizeof err) < 0 && errno == EINTR)
        continue;
    close(pipefd[0]);
    r->status = reap(pid);
    r->wall_s = now_s() - t0;
    if (err != 0)
        return fail(EXIT_RUN, "cannot run %s: %s", argv[0], strerror(err));
    return 0;
}

/* The start of the last `lines` lines of buf[0..n) */
static size_t last_lines(const char *buf, size_t n, int lines)
{
    size_t i = n > 0 && buf[n - 1] == '\n' ? n - 1 : n;
    while (i > 0) {
        if (buf[i - 1] == '\n' && --lines == 0)
            return i;
        i--;
    }
    return 0;
}

void show_tail(const char *path, int lines)
{
    char buf[8192];
    FILE *f = fopen(path, "r");
    size_t n;
    if (f == NULL)
        return;
    if (fseek(f, -(long)(sizeof buf - 1), SEEK_END) != 0)
        rewind(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    for (char *line = strtok(buf + last_lines(buf, n, lines), "\n"); line;
         line = strtok(NULL, "\n"))
        fprintf(stderr, "  | %s\n", line);
}
