#!/usr/bin/env bash
# The one-time study of the fgraph walk's cost against the thread count
# (not in the test command; about 15-25 minutes under TCG): the lab's guest
# (run_lab.sh, scenario S) times one function_graph enable with N fresh idle
# tasks for N = 8k, 16k, 32k, 64k, 128k, with the tasks as threads of one
# process and spread over processes of 8 tasks; study_fit.awk prints the
# table, the constant and cliff models fitted to it, and both models
# calibrated at the two smallest N against the larger ones.
#   run_study.sh [--out DIR]
# Environment: TRACEHEALTH_STUDY_NS (8192,16384,32768,65536,131072),
# TRACEHEALTH_STUDY_LAYOUTS (one,many), TRACEHEALTH_STUDY_CHASE (0: no
# user-space walk; else its stride, e.g. 10240, beside each enable),
# TRACEHEALTH_STUDY_PER (8), TRACEHEALTH_STUDY_REPS (1: enables per N and
# layout, the shortest kept), TRACEHEALTH_STUDY_MEM (12G),
# TRACEHEALTH_STUDY_LIMIT (5400 s), and run_lab.sh's TRACEHEALTH_LAB_*.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TRACEHEALTH_LAB_SCENARIOS=S exec bash "$here/run_lab.sh" "$@"
