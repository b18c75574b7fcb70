#!/bin/sh
# Makes the shipped net, bgfast/data/net/bgfast-net.npz (docs/training.md#the-contact-net),
# in two rounds of training the contact net towards 2-ply values:
#   0. the net of tools/race-net.sh (the TD-trained contact net, the race net
#      trained towards its 1-ply values);
#   1. its contact net widened with the five feature groups and trained
#      towards that net's 2-ply values on the 200,000 training positions and
#      the 200,000 self-play positions of data/training/selfplay-1.bgtd;
#   2. that net trained again, with the 2-ply values of round 1's net on the
#      positions of its own self-play (data/training/selfplay-2.bgtd) added.
# The race net is that of step 0.  Deterministic (the same bits every run
# with the same build; the shipped file is that of the build in
# docs/training.md#reproducing-the-shipped-file): about 75 minutes on two
# free cores.  Each step's output stays in WORK, and
# a step whose output exists is skipped, so an interrupted run goes on where
# it stopped when run again with the same WORK.
# Usage: tools/contact-net.sh [OUT [WORK]]
#   (default: contact-net.npz and the directory contact-net.work in the current directory)
set -e
OUT="$(realpath -m "${1:-contact-net.npz}")"
WORK="$(realpath -m "${2:-contact-net.work}")"
cd "$(dirname "$0")/.."
mkdir -p "$WORK"
FEATURES="contain,contact,anchors,hits,mobility"
FIT="--class contact --class crashed --epochs 100 --patience 8 --quiet"

# values DIR POSITIONS: the 2-ply values of $BGFAST_NET, resumed if interrupted
values() {
    if [ ! -f "$1.done" ]; then
        RESUME=""
        [ -d "$1" ] && RESUME="--resume"
        python -m bgfast data values "$2" -o "$1" --plies 2 $RESUME
        touch "$1.done"
    fi
}

if [ ! -f "$WORK/base.done" ]; then
    sh tools/race-net.sh "$WORK/base.npz"
    touch "$WORK/base.done"
fi

export BGFAST_NET="$WORK/base.npz"
values "$WORK/v1-training" data/training/positions.bgtd
values "$WORK/v1-selfplay-1" data/training/selfplay-1.bgtd
if [ ! -f "$WORK/round1.done" ]; then
    python -m bgfast train supervised "$WORK/v1-training" "$WORK/v1-selfplay-1" \
        -o "$WORK/round1.npz" --init "$WORK/base.npz" --features "$FEATURES" --lr 1e-3 $FIT --resume
    touch "$WORK/round1.done"
fi

export BGFAST_NET="$WORK/round1.npz"
values "$WORK/v2-selfplay-2" data/training/selfplay-2.bgtd
python -m bgfast train supervised "$WORK/v2-selfplay-2" "$WORK/v1-training" "$WORK/v1-selfplay-1" \
    -o "$WORK/round2.npz" --init "$WORK/round1.npz" --lr 3e-4 $FIT --resume
cp "$WORK/round2.npz" "$OUT"
