import equal_settings  # noqa: F401 -- gnubg's bear-off handling, before bgfast
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
