"""Imported first by the scripts that set bgfast beside gnubg: gnubg's
bear-off databases cover the home boards (its one-sided database has 6
points), so bgfast values races with its 6-point table too, the same
bear-off handling, unless ``$BGFAST_RACE_POINTS`` says otherwise.  Its
default race table (10 points) values more races exactly; the docs report
what it changes beside these equal-settings figures."""
import os

os.environ.setdefault("BGFAST_RACE_POINTS", "6")
