/* help.c -- the manual: `autograph --help`, `autograph help [CMD]`, `autograph CMD
 * --help`.  One text per command, in man-page order (synopsis, description, options,
 * environment, files, exit status, examples); run's lists the switch names from
 * shim/switches.def.
 */
#include "cli.h"

#include <string.h>

static const char overview[] =
"autograph -- run CUDA programs under libautograph, and measure what graphing gains\n"
"\n"
"SYNOPSIS\n"
"  autograph run [OPTIONS] -- PROGRAM [ARGS]\n"
"  autograph compare [OPTIONS] -- PROGRAM [ARGS]\n"
"  autograph report [ARGS]\n"
"  autograph help [COMMAND]\n"
"\n"
"DESCRIPTION\n"
"  libautograph is an LD_PRELOAD shim that records the repeating CUDA launch sequences\n"
"  of an unmodified program and replays them as CUDA graphs.\n"
"    run      runs PROGRAM with the library preloaded; options set its AUTOGRAPH_* switches\n"
"    compare  runs PROGRAM N times with graphing off and N times with it on, alternately,\n"
"             and reports wall time, per-window latency percentiles, the speedup, the\n"
"             share of launches graphed; writes an SVG figure (and JSON)\n"
"    report   runs the dependency analyzer, autograph-analyze, on a trace\n"
"    help     prints this text, or a command's\n"
"  `autograph help COMMAND` or `autograph COMMAND --help` gives a command's manual.\n"
"\n"
"FILES\n"
"  The library: --lib PATH, else DIR/../lib/libautograph.so (installed: PREFIX/bin and\n"
"  PREFIX/lib), else DIR/libautograph.so (the build tree), where DIR holds the autograph\n"
"  executable.\n"
"\n"
"EXIT STATUS\n"
"  0 success; 1 usage error (one line on stderr); 2 the program, the library or the\n"
"  analyzer could not be run, a run failed, or a file could not be written or read;\n"
"  3 (compare) the two sides printed different output.  run exits with PROGRAM's own\n"
"  status (it becomes PROGRAM).\n"
"\n"
"EXAMPLES\n"
"  autograph run --summary -- ./train --steps 100\n"
"  autograph compare -n 5 --json result.json -- python3 infer.py\n"
"  autograph run --trace run.json -- ./app && autograph report run.json\n";

static const char run_text[] =
"autograph run -- run a program under libautograph\n"
"\n"
"SYNOPSIS\n"
"  autograph run [OPTIONS] [--] PROGRAM [ARGS]\n"
"\n"
"DESCRIPTION\n"
"  Puts the library first in LD_PRELOAD (before whatever LD_PRELOAD already holds),\n"
"  turns the options into AUTOGRAPH_* environment variables, and executes PROGRAM with\n"
"  ARGS in place of the autograph process.  The first word that is not an option, or\n"
"  the word after `--`, is PROGRAM.  AUTOGRAPH_* variables already in the environment\n"
"  are kept; an option overrides the variable it sets.\n"
"\n"
"OPTIONS\n"
"  --off                 AUTOGRAPH=off: intercept and count, never graph\n"
"  --explain             AUTOGRAPH_EXPLAIN=1: say on stderr why windows were not graphed\n"
"  --summary             AUTOGRAPH_SUMMARY=1: the exit summary on stderr\n"
"  --summary-file FILE   AUTOGRAPH_SUMMARY_FILE=FILE (%p: the pid)\n"
"  --trace FILE          AUTOGRAPH_TRACE=FILE: a Chrome trace of the GPU work (CUPTI)\n"
"  --timing FILE         AUTOGRAPH_TIMING=FILE: the latency of every window (%p: the pid)\n"
"  --liveness MODE       AUTOGRAPH_CHECK_LIVENESS=off|warn|error: dead-pointer checks\n"
"  --set NAME=VALUE      any switch of the library (its value is the library's to check)\n"
"  --lib PATH            the library to preload (see FILES)\n"
"  -h, --help            this text\n"
"  Options take their value as `--opt VALUE` or `--opt=VALUE`.\n"
"\n"
"ENVIRONMENT\n"
"  LD_PRELOAD            the library is prepended to it\n"
"  AUTOGRAPH_*           passed on; libautograph(7) says what each does\n";

static const char run_tail[] =
"\n"
"FILES\n"
"  The library: --lib PATH, else DIR/../lib/libautograph.so, else DIR/libautograph.so,\n"
"  DIR being the folder of the autograph executable.\n"
"\n"
"EXIT STATUS\n"
"  PROGRAM's own; 1 usage error; 2 the library was not found or PROGRAM could not be\n"
"  executed (one line on stderr says which).\n"
"\n"
"EXAMPLES\n"
"  autograph run --summary -- ./app              graph, print the exit summary\n"
"  autograph run --off --timing t.%p -- ./app    time every window without graphing\n"
"  autograph run --set AUTOGRAPH_WARMUP=3 --explain -- python3 train.py\n";

static const char compare_text[] =
"autograph compare -- measure what graphing gains on a program\n"
"\n"
"SYNOPSIS\n"
"  autograph compare [-n N] [--warmup W] [--svg FILE|none] [--json FILE] [--keep DIR]\n"
"                    [--check REGEX] [--set NAME=VALUE] [--lib PATH] [--] PROGRAM [ARGS]\n"
"\n"
"DESCRIPTION\n"
"  Runs PROGRAM N times with graphing off (AUTOGRAPH=off) and N times with it on\n"
"  (AUTOGRAPH=on), alternately: pair i runs off first when i is odd, on first when it is\n"
"  even.  Both sides are intercepted and timed the same way (AUTOGRAPH_TIMING): per\n"
"  thread, a window runs from the first call that submits work to a stream (kernel\n"
"  launch, async copy or memset, event record, stream wait, graph launch, ...) to the\n"
"  return of the call with which the host then waited for the device (stream, event or\n"
"  context synchronize, a synchronous copy to or from host memory;\n"
"  docs/tracing-and-analyzer.md has the exact list).  A window's counts (submits,\n"
"  time inside launch calls) are those of every thread since the previous window\n"
"  ended: a thread that launches but never waits (PyTorch's autograd thread) is\n"
"  counted in the window of the thread that waits.\n"
"  PROGRAM's stdout and stderr go to files; its stdout is compared between runs (with\n"
"  --check, only its lines that match REGEX).\n"
"\n"
"  The report (stdout), per side: wall time of the program (median, min..max over its\n"
"  runs); windows measured; window latency p50, p90, p99 (pooled over the runs, the\n"
"  first W windows of each run and process left out); submits per window; the share\n"
"  of submits the engine held back to run inside graphs; the median time per window\n"
"  spent inside the driver's launch functions, and spent by the shim on its own work\n"
"  in those calls (recording, matching; with graphing on, the graph launches and\n"
"  patches of the calls it held).  Then: the speedup off/on at p50 and\n"
"  p90, with a spread: p25..p75 of the per-run ratios (run i off over run i on, of\n"
"  each run's own median, or p90); the share of kernel launches graphed\n"
"  (launches_graphed / kernel_launches of the exit summaries); the off side's time\n"
"  inside launch calls per window, the most graphing can remove, its share of the p50\n"
"  window and the speedup at p50 were all of it gone (the program's own host work and\n"
"  the GPU's stay); the share of it recovered, (p50 off - p50 on) / that time; where\n"
"  the runs with graphing on made a speed guard trial (AUTOGRAPH_GUARD_MS), the median\n"
"  of their verdicts (eager time over graphed time, timed in blocks of each run) and\n"
"  how many runs it paused graphing in.  A window still open at exit (no synchronization\n"
"  after its work) is not measured; where no window is left after the first W of each\n"
"  run, a line says so and the wall times stand alone.\n"
"\n"
"OPTIONS\n"
"  -n N              runs per side (default 5; 1..1000)\n"
"  --warmup W        windows left out at the start of each run (default 2)\n"
"  --svg FILE        the figure (default compare.svg; `none`: no figure): the empirical\n"
"                    CDF of the window latency of both sides on a log time axis, p50,\n"
"                    p90 and p99 marked\n"
"  --json FILE       the same figures as JSON (format \"autograph compare v1\")\n"
"  --keep DIR        keep every run's files in DIR/off-I/ and DIR/on-I/ (stdout, stderr,\n"
"                    timing.PID, summary.PID); default: a temporary folder, removed\n"
"  --check REGEX     compare only the lines of stdout that match REGEX (POSIX extended,\n"
"                    e.g. '^sha256 ' when the program also prints its timings); no\n"
"                    matching line in the first run is exit status 2\n"
"  --set NAME=VALUE  a library switch for both sides (not AUTOGRAPH, AUTOGRAPH_TIMING,\n"
"                    AUTOGRAPH_SUMMARY_FILE: compare sets those)\n"
"  --lib PATH        the library to preload\n"
"  -h, --help        this text\n"
"\n"
"ENVIRONMENT\n"
"  TMPDIR            where the temporary folder goes (default /tmp)\n"
"  AUTOGRAPH_*       passed on to both sides, but for the three compare sets\n"
"  LD_PRELOAD        the library is prepended to it\n"
"\n"
"EXIT STATUS\n"
"  0 success; 1 usage error; 2 PROGRAM or the library could not be run, a run exited\n"
"  non-zero (the end of its stderr is shown), no run recorded a window, a file could\n"
"  not be written, or no line of stdout matched --check; 3 a run with graphing on\n"
"  printed a different stdout (or --check lines) than the runs with graphing off\n"
"  (which agreed with each other: a program whose output changes from run to run is\n"
"  reported as not compared, status 0).\n"
"\n"
"EXAMPLES\n"
"  autograph compare -- ./bench --iters 1000\n"
"  autograph compare -n 9 --warmup 20 --svg lat.svg --json lat.json -- python3 infer.py\n"
"  autograph compare --check '^sha256 ' -- python3 train.py --steps 200\n"
"  autograph compare --keep runs/ --set AUTOGRAPH_WARMUP=3 -- ./app\n";

static const char report_text[] =
"autograph report -- the dependency analyzer on a trace\n"
"\n"
"SYNOPSIS\n"
"  autograph report [--] [ARGS]\n"
"\n"
"DESCRIPTION\n"
"  Runs autograph-analyze with ARGS (a leading `--` is dropped: `autograph report --\n"
"  --help` shows the analyzer's own options).  It reads a Chrome trace (AUTOGRAPH_TRACE,\n"
"  `autograph run --trace FILE`, or the PyTorch profiler's) and the graphs it replays,\n"
"  and says which serializations of graph nodes were true dependencies and which false\n"
"  ones (independent branches on one hardware channel).\n"
"\n"
"FILES\n"
"  DIR/autograph-analyze, DIR being the folder of the autograph executable, else\n"
"  autograph-analyze in PATH.\n"
"\n"
"EXIT STATUS\n"
"  The analyzer's own (0 success, 1 bad input, 2 usage error); 2 when it cannot be found.\n"
"\n"
"EXAMPLES\n"
"  autograph run --trace run.json -- ./app\n"
"  autograph report --svg graphs.svg run.json\n";

static const char help_text[] =
"autograph help -- the manual\n"
"\n"
"SYNOPSIS\n"
"  autograph help [COMMAND]\n"
"  autograph --help\n"
"  autograph COMMAND --help\n"
"\n"
"DESCRIPTION\n"
"  Without COMMAND, the overview; with one of run, compare, report, help, its manual.\n"
"\n"
"EXIT STATUS\n"
"  0; 1 for an unknown COMMAND.\n";

static const struct { const char *name, *text; } pages[] = {
    { "run", run_text }, { "compare", compare_text }, { "report", report_text },
    { "help", help_text },
};

int print_help(FILE *out, const char *cmd)
{
    if (cmd == NULL) {
        fputs(overview, out);
        return 0;
    }
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
        if (strcmp(cmd, pages[i].name) == 0) {
            fputs(pages[i].text, out);
            if (pages[i].text == run_text) {
                fputs("\nSWITCHES (--set NAME=VALUE)\n", out);
                settings_list(out, "  ", 3);
                fputs(run_tail, out);
            }
            return 0;
        }
    return -1;
}

int cmd_help(int argc, char **argv)
{
    if (argc > 2)
        return usage_error("help", "takes at most one COMMAND");
    if (argc == 2 && is_help(argv[1]))
        return print_help(stdout, "help"), EXIT_OK;
    if (print_help(stdout, argc == 2 ? argv[1] : NULL) != 0)
        return usage_error("help", "no command '%s' (commands: run, compare, report, help)",
                           argv[1]);
    return EXIT_OK;
}
