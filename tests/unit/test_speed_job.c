/* test_speed_job.c -- the job whose ranks share the speed guard's trials
 * (shim/match_speed_job.c): its name from AUTOGRAPH_GUARD_JOB or the launchers'
 * variables, and the shared record, which two mappings (two ranks) see alike and
 * which a process unlinks at its exit.
 */
#include "check.h"
#include "match_speed.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const *fake_env;   /* NAME, VALUE, ..., NULL */

static const char *fake_get(const char *name)
{
    for (const char *const *e = fake_env; e && *e; e += 2)
        if (strcmp(e[0], name) == 0)
            return e[1];
    return NULL;
}

/* The job's name with this environment ("" when alone). */
static const char *name_with(const char *const *env)
{
    static char buf[512];
    const char *own;
    fake_env = env;
    own = fake_get("AUTOGRAPH_GUARD_JOB");
    return ag_speed_job_name(own, fake_get, buf, sizeof buf) ? buf : "";
}

static void test_names(void)
{
    const char *torchrun[] = { "TORCHELASTIC_RUN_ID", "f00d", "MASTER_ADDR", "h",
                               "MASTER_PORT", "29500", NULL };
    const char *run_id[] = { "TORCHELASTIC_RUN_ID", "f00d", NULL };
    const char *no_run_id[] = { "TORCHELASTIC_RUN_ID", "none", "SLURM_JOB_ID", "7", NULL };
    const char *env_rdzv[] = { "MASTER_ADDR", "10.0.0.1", "MASTER_PORT", "29500",
                               "SLURM_JOB_ID", "7", NULL };
    const char *slurm[] = { "SLURM_JOB_ID", "7", "SLURM_STEP_ID", "2", NULL };
    const char *own[] = { "AUTOGRAPH_GUARD_JOB", "mine", "TORCHELASTIC_RUN_ID", "f00d",
                          NULL };
    const char *off[] = { "AUTOGRAPH_GUARD_JOB", "none", "TORCHELASTIC_RUN_ID", "f00d",
                          NULL };
    const char *empty[] = { "TORCHELASTIC_RUN_ID", "", "PMIX_NAMESPACE", "ns1", NULL };
    const char *alone[] = { "HOME", "/root", NULL };
    CHECK(strcmp(name_with(torchrun), "MASTER_ADDR=h MASTER_PORT=29500") == 0);
    CHECK(strcmp(name_with(torchrun + 4), "") == 0);    /* a port is no address */
    CHECK(strcmp(name_with(run_id), "TORCHELASTIC_RUN_ID=f00d") == 0);
    CHECK(strcmp(name_with(no_run_id), "SLURM_JOB_ID=7") == 0);
    CHECK(strcmp(name_with(env_rdzv), "MASTER_ADDR=10.0.0.1 MASTER_PORT=29500") == 0);
    CHECK(strcmp(name_with(slurm), "SLURM_JOB_ID=7 SLURM_STEP_ID=2") == 0);
    CHECK(strcmp(name_with(own), "AUTOGRAPH_GUARD_JOB=mine") == 0);
    CHECK(strcmp(name_with(off), "") == 0);
    CHECK(strcmp(name_with(empty), "PMIX_NAMESPACE=ns1") == 0);
    CHECK(strcmp(name_with(alone), "") == 0);
}

/* Shared memory objects of the guard's name in /dev/shm. */
static int objects(void)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, "autograph-guard-", 16) == 0;
    if (d)
        closedir(d);
    return n;
}

static void test_shared_record(void)
{
    char job[64];
    struct ag_speed_job *a, *b;
    int before = objects(), status;
    pid_t child;
    snprintf(job, sizeof job, "test_speed_job-%d", (int)getpid());
    a = ag_speed_job_map(job);
    b = ag_speed_job_map(job);           /* a second rank's mapping */
    CHECK(a && b && a != b);
    if (!a || !b)
        return;
    CHECK(objects() == before + 1);
    __atomic_store_n(&a->trial_at, 12345, __ATOMIC_RELEASE);
    CHECK(__atomic_load_n(&b->trial_at, __ATOMIC_ACQUIRE) == 12345);
    /* another process of the job sees it, writes, and unlinks the object at exit */
    child = fork();
    if (child == 0) {
        struct ag_speed_job *c = ag_speed_job_map(job);
        if (c == NULL || __atomic_load_n(&c->trial_at, __ATOMIC_ACQUIRE) != 12345)
            _exit(1);
        __atomic_store_n(&c->trial_at, 777, __ATOMIC_RELEASE);
        exit(0);
    }
    CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    CHECK(__atomic_load_n(&a->trial_at, __ATOMIC_ACQUIRE) == 777);
    CHECK(objects() == before);          /* unlinked; the mappings stay */
}

int main(void)
{
    test_names();
    test_shared_record();
    return check_finish("test_speed_job");
}
