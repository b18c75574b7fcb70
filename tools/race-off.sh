#!/bin/sh
# Gives a net's race net the borne-off thermometer (the feature group off,
# which the kernel folds into its per-slot tables: no cost per evaluation)
# and trains it, with its hidden units kept (--keep-shape), in three steps,
# each towards the 2-ply values of the net before it on the race positions of
# ten files, the races of the 10-point race table valued by the table
# (docs/training.md#the-race-net-with-the-borne-off-thermometer).  Round 10
# of tools/contact-net.sh; from its round 9 (the net shipped before) it makes
# the shipped net.  Deterministic (the same bits every run with the same
# build), about 40 minutes on two free cores.  Each step's output stays in
# WORK, and a step whose output exists is skipped, so an interrupted run goes
# on where it stopped when run again with the same WORK.
# Usage: tools/race-off.sh INIT [OUT [WORK]]
#   (default: race-off.npz and the directory race-off.work in the current directory)
set -e
[ -n "$1" ] || { echo "usage: tools/race-off.sh INIT [OUT [WORK]]" >&2; exit 2; }
INIT="$(realpath "$1")"
OUT="$(realpath -m "${2:-race-off.npz}")"
WORK="$(realpath -m "${3:-race-off.work}")"
cd "$(dirname "$0")/.."
mkdir -p "$WORK"

. tools/steps.sh

once "$WORK/os10.done" python -m bgfast bearoff build --one-sided 10 -o "$WORK/os10.bgb" --quiet
RACE="--class race --keep-shape --features off --epochs 20 --patience 4 --quiet --resume"
LAST="$INIT"
for step in 1 2 3; do
    export BGFAST_NET="$LAST"
    race_values "v$step"
    LR=3e-4
    [ "$step" = 1 ] && LR=1e-3
    once "$WORK/off$step.done" python -m bgfast train supervised $RV -o "$WORK/off$step.npz" \
        --init "$LAST" --lr "$LR" $RACE
    LAST="$WORK/off$step.npz"
done
cp "$LAST" "$OUT"
