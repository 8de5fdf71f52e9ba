"""Two Python threads take turns at the GIL while the main one times a computation on the
program's clock (docs/reliability.md, finding 15). In `--cpu-time model` computing costs no
simulated time, and neither may waiting for the GIL: the waiter's 5 ms switch-interval timeouts
only ask the holder to let go. Prints the main thread's elapsed time in ns and how many times
it saw the other thread's counter move (each a GIL hand-over)."""
import threading
import time

spins = 0
stop = False


def spin():
    global spins
    while not stop:
        spins += 1


other = threading.Thread(target=spin)
other.start()
while spins == 0:  # the other thread has the GIL at least once before the timing starts
    pass
start = time.monotonic_ns()
turns, seen = 0, spins
real_start = time.thread_time_ns()
while time.thread_time_ns() - real_start < 300_000_000:  # 0.3 s of this thread's CPU time
    if spins != seen:
        turns, seen = turns + 1, spins
elapsed = time.monotonic_ns() - start
stop = True
other.join()
print(f"elapsed_ns {elapsed} turns {turns}", flush=True)
