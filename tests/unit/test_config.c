/* test_config.c -- AUTOGRAPH_* parsing: accepted words, safe defaults, complaints. */
#include "check.h"
#include "../../shim/config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *fake_env[16][2];

static const char *fake_get(const char *name)
{
    for (int i = 0; fake_env[i][0]; i++)
        if (strcmp(fake_env[i][0], name) == 0)
            return fake_env[i][1];
    return NULL;
}

static void set_env(const char *a, const char *av, const char *b, const char *bv)
{
    memset(fake_env, 0, sizeof fake_env);
    fake_env[0][0] = a; fake_env[0][1] = av;
    fake_env[1][0] = b; fake_env[1][1] = bv;
}

/* Parses with stderr captured into `err`. */
static void parse(struct ag_config *cfg, char **environment, char *err, size_t size)
{
    int pipefd[2], saved = dup(STDERR_FILENO);
    ssize_t n;
    if (pipe(pipefd) != 0)
        abort();
    dup2(pipefd[1], STDERR_FILENO);
    ag_config_parse(cfg, fake_get, environment);
    dup2(saved, STDERR_FILENO);
    close(pipefd[1]);
    n = read(pipefd[0], err, size - 1);
    err[n > 0 ? n : 0] = '\0';
    close(pipefd[0]);
    close(saved);
}

int main(void)
{
    struct ag_config cfg;
    char err[2048];
    char *no_env[] = { NULL };
    char *odd_env[] = { "AUTOGRAPH_SUMARY=1", "PATH=/bin", "AUTOGRAPH_LOG=info", NULL };

    set_env(NULL, NULL, NULL, NULL);
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.mode == AG_MODE_ON && cfg.summary_stderr == 0);
    CHECK(cfg.summary_file == NULL && cfg.log_level == AG_LOG_WARN);
    CHECK(cfg.warmup == 2 && cfg.min_ops == 4 && cfg.chunk_first == 8 && cfg.chunk_max == 256);
    CHECK(cfg.max_variants == 4 && cfg.period_min == 32 && cfg.explain == 0);
    CHECK(cfg.light_after == 3 && cfg.launch_thread == AG_LAUNCH_THREAD_AUTO);
    CHECK(cfg.launch_spin_us == 1000 && cfg.launch_poll_us == 0);
    CHECK(cfg.chunk_tune == AG_CHUNK_TUNE_AUTO);
    CHECK(err[0] == '\0');

    /* AUTOGRAPH_CHUNK_TUNE: auto (the default), or replays per plan */
    set_env("AUTOGRAPH_CHUNK_TUNE", "0", NULL, NULL);
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.chunk_tune == 0 && err[0] == '\0');
    set_env("AUTOGRAPH_CHUNK_TUNE", "Auto", NULL, NULL);
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.chunk_tune == AG_CHUNK_TUNE_AUTO && err[0] == '\0');
    set_env("AUTOGRAPH_CHUNK_TUNE", "-1", NULL, NULL);
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.chunk_tune == AG_CHUNK_TUNE_AUTO);
    CHECK(strstr(err, "AUTOGRAPH_CHUNK_TUNE=\"-1\" is not valid (accepted: auto, or an "
                      "integer from 0 to 10000); using \"auto\"\n") != NULL);

    /* AUTOGRAPH_LAUNCH_THREAD: auto (the default), or a boolean */
    set_env("AUTOGRAPH_LAUNCH_THREAD", "on", NULL, NULL);
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.launch_thread == AG_LAUNCH_THREAD_ON && err[0] == '\0');
    set_env("AUTOGRAPH_LAUNCH_THREAD", "0", NULL, NULL);
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.launch_thread == AG_LAUNCH_THREAD_OFF && err[0] == '\0');
    set_env("AUTOGRAPH_LAUNCH_THREAD", "AUTO", "AUTOGRAPH_LAUNCH_POLL_US", "20");
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.launch_thread == AG_LAUNCH_THREAD_AUTO && cfg.launch_poll_us == 20);
    CHECK(err[0] == '\0');
    set_env("AUTOGRAPH_LAUNCH_THREAD", "2", NULL, NULL);
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.launch_thread == AG_LAUNCH_THREAD_AUTO);
    CHECK(strstr(err, "AUTOGRAPH_LAUNCH_THREAD=\"2\" is not valid (accepted: 0, off, no, "
                      "false, 1, on, yes, true, auto); using \"auto\"\n") != NULL);

    set_env("AUTOGRAPH_SUMMARY", "YES", "AUTOGRAPH_LOG", "debug");
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.summary_stderr == 1 && cfg.log_level == AG_LOG_DEBUG && err[0] == '\0');

    set_env("AUTOGRAPH_SUMMARY", "maybe", "AUTOGRAPH_LOG", "loud");
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.summary_stderr == 0 && cfg.log_level == AG_LOG_WARN);
    CHECK(strstr(err, "AUTOGRAPH_SUMMARY=\"maybe\" is not valid (accepted: 0, off, no, "
                      "false, 1, on, yes, true); using \"0\"\n") != NULL);
    CHECK(strstr(err, "AUTOGRAPH_LOG=\"loud\" is not valid (accepted: error, warn, "
                      "info, debug); using \"warn\"\n") != NULL);

    set_env("AUTOGRAPH", "graphs-please", "AUTOGRAPH_SUMMARY_FILE", "/tmp/s.%p");
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.mode == AG_MODE_OFF && strcmp(cfg.summary_file, "/tmp/s.%p") == 0);
    CHECK(strstr(err, "AUTOGRAPH=\"graphs-please\" is not valid (accepted: on, off); "
                      "using \"off\"") != NULL);

    set_env("AUTOGRAPH_WARMUP", "3", "AUTOGRAPH_VARIANTS", "0");
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.warmup == 3 && cfg.max_variants == 4);
    CHECK(strstr(err, "AUTOGRAPH_VARIANTS=\"0\" is not valid (accepted: an integer from 1 "
                      "to 64); using \"4\"\n") != NULL);

    set_env("AUTOGRAPH_CHUNK", "8x", "AUTOGRAPH", "on");
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.chunk_first == 8 && cfg.mode == AG_MODE_ON);
    CHECK(strstr(err, "AUTOGRAPH_CHUNK=\"8x\" is not valid") != NULL);

    set_env("AUTOGRAPH_SUMMARY_FILE", "", NULL, NULL);
    parse(&cfg, odd_env, err, sizeof err);
    CHECK(cfg.summary_file == NULL);
    CHECK(strstr(err, "unknown variable AUTOGRAPH_SUMARY (known:") != NULL);
    CHECK(strstr(err, "AUTOGRAPH_LOG (known") == NULL);

    set_env("AUTOGRAPH_TRACE", "/tmp/t.%p.json", NULL, NULL);
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.trace && strcmp(cfg.trace, "/tmp/t.%p.json") == 0 && err[0] == '\0');
    set_env("AUTOGRAPH_TRACE", "", NULL, NULL);
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.trace == NULL && err[0] == '\0');

    set_env("AUTOGRAPH_COLLECTIVE_PREFIXES", "nvshmem,mscclpp", NULL, NULL);
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.collective_prefixes && strcmp(cfg.collective_prefixes, "nvshmem,mscclpp") == 0);
    CHECK(err[0] == '\0');
    set_env("AUTOGRAPH_COLLECTIVE_PREFIXES", "", NULL, NULL);
    parse(&cfg, no_env, err, sizeof err);
    CHECK(cfg.collective_prefixes == NULL && err[0] == '\0');

    {
        char path[64], want[64];
        ag_expand_pid(path, sizeof path, "a.%p.%p.json");
        snprintf(want, sizeof want, "a.%ld.%ld.json", (long)getpid(), (long)getpid());
        CHECK(strcmp(path, want) == 0);
        ag_expand_pid(path, 8, "abcdefghijkl");      /* cut to the size */
        CHECK(strcmp(path, "abcdefg") == 0);
    }

    return check_finish("test_config");
}
