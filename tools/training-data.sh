#!/bin/sh
# Builds, or resumes, the training data of docs/training-data.md in
# data/training/: 200,000 positions of seeded self-play, each labelled by a
# rollout of the net.  Run from anywhere; stop with Ctrl-C (the shard being
# filled is written first) and run again to go on.
set -e
cd "$(dirname "$0")/.."
# the net that made these data (their shards record its checksum)
export BGFAST_NET=data/net/td-net.npz
# the shipped data and nets were made with the 6-point race table: the net valued
# the races outside the home boards (docs/bearoff.md#the-race-table)
export BGFAST_RACE_POINTS=6
mkdir -p data/training
if [ ! -f data/training/positions.bgtd ]; then
    nice -n 19 python -m bgfast data positions -n 200000 --seed 1 -o data/training/positions.bgtd
fi
RESUME=""
[ -d data/training/labels ] && RESUME="--resume"
BGFAST_PROGRESS=1 TQDM_MININTERVAL=300 nice -n 19 python -m bgfast data label \
    data/training/positions.bgtd -o data/training/labels \
    --trials 72 --truncate 11 --seed 1 --jobs 2 $RESUME
