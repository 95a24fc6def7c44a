/* match_speed_job.c -- match: the job whose ranks share the speed guard's trials.
 *
 * The ranks of a data-parallel job wait on each other's collectives, so each rank's
 * step lasts as long as the slowest rank's, and the speed guard can only time the
 * job's pace when every rank tries the same steps eager (match_speed.h).  Ranks on one
 * host share the time of the job's next trial through a small POSIX shared memory
 * object named from the job: AUTOGRAPH_GUARD_JOB when set ("none": share nothing),
 * else what the launcher set for every rank: MASTER_ADDR and MASTER_PORT (torchrun,
 * torch.distributed's env:// rendezvous: Lightning, DeepSpeed, Accelerate);
 * torchrun's TORCHELASTIC_RUN_ID; Slurm's job and step; PMIx's namespace; Open MPI's
 * job.  A process with none of them runs its trials alone, when due, off the grid.
 * The object holds one time on the host's monotonic clock; each process unlinks it at
 * exit (the others keep their mapping), so none is left behind but by a crash.
 * match_speed.c uses what ag_speed_job_map returns; nothing here knows CUDA.
 */
#include "match_speed.h"

#include "config.h"
#include "log.h"
#include "op.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The launchers' variables, in order: the first pair with its first variable set
 * names the job (the second, when there is one, is added to it).  The rendezvous
 * address first: two jobs on one host cannot share it, while torchrun's run id is
 * "none" for every job not given --rdzv-id. */
static const char *const job_vars[][2] = {
    { "MASTER_ADDR", "MASTER_PORT" },
    { "TORCHELASTIC_RUN_ID", NULL },
    { "SLURM_JOB_ID", "SLURM_STEP_ID" },
    { "PMIX_NAMESPACE", NULL },
    { "OMPI_MCA_ess_base_jobid", NULL },
};

int ag_speed_job_name(const char *own, const char *(*get)(const char *), char *buf,
                      size_t size)
{
    if (own && *own)
        return strcmp(own, "none") != 0 &&
               snprintf(buf, size, "AUTOGRAPH_GUARD_JOB=%s", own) < (int)size;
    for (size_t i = 0; i < sizeof job_vars / sizeof job_vars[0]; i++) {
        const char *a = get(job_vars[i][0]);
        const char *b = job_vars[i][1] ? get(job_vars[i][1]) : NULL;
        if (a == NULL || *a == '\0' || strcmp(a, "none") == 0)
            continue;
        return snprintf(buf, size, "%s=%s%s%s%s%s", job_vars[i][0], a, b ? " " : "",
                        b ? job_vars[i][1] : "", b ? "=" : "", b ? b : "") < (int)size;
    }
    return 0;
}

static char object_name[64];

static void unlink_at_exit(void)
{
    shm_unlink(object_name);
}

/* The object's name: the user's id and a 64-bit hash of the job's name. */
static void name_object(const char *job)
{
    snprintf(object_name, sizeof object_name, "/autograph-guard-%u-%016llx",
             (unsigned)getuid(), (unsigned long long)ag_hash_bytes(0, job, strlen(job)));
}

struct ag_speed_job *ag_speed_job_map(const char *own)
{
    char job[512];
    struct ag_speed_job *p;
    int fd;
    if (!ag_speed_job_name(own, ag_config_getenv, job, sizeof job))
        return NULL;
    name_object(job);
    fd = shm_open(object_name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, sizeof *p) != 0) {
        ag_log(AG_LOG_INFO, "speed guard: trials not shared with the job's ranks: %s %s: %m",
               fd < 0 ? "shm_open" : "ftruncate", object_name);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    p = mmap(NULL, sizeof *p, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        ag_log(AG_LOG_INFO, "speed guard: trials not shared with the job's ranks: mmap: %m");
        return NULL;
    }
    atexit(unlink_at_exit);
    ag_log(AG_LOG_INFO, "speed guard: trials shared with the job's ranks on this host (%s)",
           job);
    return p;
}
