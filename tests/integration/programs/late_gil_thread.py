"""Ends the interpreter while a thread made in C++ asks for the GIL (docs/reliability.md,
finding 14). Usage: late_gil_thread.py <path of liblate_gil_thread.so>.

Before 3.14 CPython ends such a thread with pthread_exit, whose unwind meets a noexcept frame:
std::terminate aborts the process after its work is done. Under `phantora run` the thread must
hang instead, and the process end with status 0."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])  # a CDLL call lets go of the GIL while it runs
api = ctypes.pythonapi
finalizing = getattr(api, "Py_IsFinalizing", None) or api._Py_IsFinalizing
lib.start_late_thread(ctypes.cast(api.PyGILState_Ensure, ctypes.c_void_p),
                      ctypes.cast(finalizing, ctypes.c_void_p))


class WaitsForTheLateThread:
    """Deleted while the interpreter finalises (its module's globals are cleared): waits, with
    the GIL let go, for the late thread to ask for it, and reports what became of the thread."""

    def __init__(self):
        self.wait = lib.wait_for_late_thread
        self.answered = lib.late_thread_answered
        self.write = sys.stdout.write
        self.flush = sys.stdout.flush

    def __del__(self):
        state = self.wait(300, 20000)
        self.write(f"late thread: state {chr(state) if state else 'gone'}, "
                   f"answered {self.answered()}\n")
        self.flush()


keeper = WaitsForTheLateThread()
print("work done", flush=True)
