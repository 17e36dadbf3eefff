#!/usr/bin/env bash
# Time from launching `heedful` in a real terminal (tmux) until the first screen is drawn, i.e. the
# header's context gauge shows a count. Usage: tests/benchmarks/startup_tmux.sh [runs] [heedful]
# (tests/benchmarks/first_paint.py times the first frame, before the gauge is counted, against Elia.)
set -euo pipefail
runs=${1:-5}
heedful=${2:-.venv/bin/heedful}
# What counts as drawn: by default the header gauge with a count (the whole first screen, filled in).
ready=${READY_PATTERN:-context [0-9≈]}
scratch=$(mktemp -d)
# A tmux server of its own, kept up between runs: other tmux users can't stop it mid-run.
socket=heedful-startup-$$
tmux -L "$socket" new-session -d -s keep "sleep 3600"
trap 'tmux -L "$socket" kill-server 2>/dev/null || true; rm -rf "$scratch"' EXIT
for run in $(seq "$runs"); do
    start=$(date +%s.%N)
    tmux -L "$socket" new-session -d -s heedful-startup -x 100 -y 30 \
        "HEEDFUL_DATA_DIR=$scratch/data HEEDFUL_CONFIG=$scratch/config.toml $heedful"
    until tmux -L "$socket" capture-pane -p -t heedful-startup 2>/dev/null | grep -q "$ready"; do
        sleep 0.01
    done
    end=$(date +%s.%N)
    tmux -L "$socket" kill-session -t heedful-startup
    awk -v run="$run" -v a="$start" -v b="$end" 'BEGIN { printf "run %d: %.3f s\n", run, b - a }'
done
