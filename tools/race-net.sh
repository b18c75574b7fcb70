#!/bin/sh
# Makes the shipped net's race net, and the net that tools/contact-net.sh
# starts from, from the TD-trained net data/net/td-net.npz
# (docs/evaluation.md): its race net trained towards its own 1-ply values on
# the race positions of data/race/positions.bgtd and
# data/training/positions.bgtd (docs/training.md#the-race-net); its contact
# net is the TD net's.  About two minutes on two cores; deterministic (the
# same bits every run).
# Usage: tools/race-net.sh [OUT]   (default: race-net.npz in the current directory)
set -e
OUT="$(realpath -m "${1:-race-net.npz}")"
cd "$(dirname "$0")/.."
TMP="$(mktemp -d "${TMPDIR:-/tmp}/bgfast-race-net.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
export BGFAST_NET=data/net/td-net.npz
# the shipped data and nets were made with the 6-point race table: the net valued
# the races outside the home boards (docs/bearoff.md#the-race-table)
export BGFAST_RACE_POINTS=6
python -m bgfast data values data/race/positions.bgtd -o "$TMP/race" --plies 1
python -m bgfast data values data/training/positions.bgtd -o "$TMP/training" --plies 1
python -m bgfast train supervised "$TMP/race" "$TMP/training" -o "$OUT" --init data/net/td-net.npz \
    --class race --lr 3e-4 --epochs 30 --quiet
