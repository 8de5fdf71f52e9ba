"""The warm-rank server's entry point (phantora_warm.py): `python phantora_warm_server.py FD`,
FD the pipe that learns when it listens. Kept apart from phantora_warm.py so that the ranks it
forks can have a __main__ module of their own."""
import sys

import phantora_warm

phantora_warm.serve(int(sys.argv[1]))
