"""The analysis runs on a deep-stack thread: code that recurses through C past the main
thread's stack is a clean RecursionError (KD901), never a segmentation fault."""

import subprocess
import sys
import textwrap

import pytest

from keydrift.deepstack import RECURSION_LIMIT, call_with_deep_stack


def deep(n: int) -> int:
    # each level goes through a C call (map), as recursion through CPython's parser or builtins does
    return 0 if n == 0 else 1 + sum(map(deep, [n - 1]))


def test_recursion_through_c_deeper_than_the_main_stack_completes_in_a_subprocess() -> None:
    # 20,000 levels through map() overflow an 8 MiB main-thread stack; in a subprocess a
    # segmentation fault shows as a negative return code instead of killing the test run
    program = textwrap.dedent("""
        import keydrift.deepstack as deepstack
        def deep(n):
            return 0 if n == 0 else 1 + sum(map(deep, [n - 1]))
        deepstack.RECURSION_LIMIT = 20_100
        print(deepstack.call_with_deep_stack(lambda: deep(20_000)))
    """)
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert proc.stdout.strip() == "20000"


def test_past_the_limit_is_a_recursion_error_on_the_calling_thread() -> None:
    with pytest.raises(RecursionError):
        call_with_deep_stack(lambda: deep(RECURSION_LIMIT * 10))


def test_result_exceptions_and_limit_are_those_of_a_direct_call() -> None:
    before = sys.getrecursionlimit()
    assert call_with_deep_stack(lambda: deep(RECURSION_LIMIT - 200)) == RECURSION_LIMIT - 200
    with pytest.raises(KeyError, match="missing"):
        call_with_deep_stack(lambda: {}["missing"])
    assert sys.getrecursionlimit() == before


def test_nested_calls_run_on_the_same_thread() -> None:
    import threading

    names = call_with_deep_stack(lambda: (threading.current_thread().name,
                                          call_with_deep_stack(lambda: threading.current_thread().name)))
    assert names[0] == names[1] == "keydrift-analysis"


def _deep_thread() -> object:
    import threading

    return threading.current_thread()


def test_one_calling_thread_s_calls_run_on_one_deep_thread_that_lives_on() -> None:
    # starting a thread per call (its stack mapped, its pages faulted in afresh) cost more than
    # many a check; the thread is not kept busy between calls
    first, second = call_with_deep_stack(_deep_thread), call_with_deep_stack(_deep_thread)
    assert first is second and first.is_alive()


def test_a_call_s_objects_are_not_kept_alive_by_the_deep_thread_after_it() -> None:
    import weakref

    class Held:
        pass

    refs = []

    def call_holding_an_object():
        held = Held()
        refs.append(weakref.ref(held))
        return lambda: type(held).__name__

    function = call_holding_an_object()
    assert call_with_deep_stack(function) == "Held"
    del function
    assert refs[0]() is None


def test_after_running_out_of_recursion_the_next_call_has_a_fresh_thread() -> None:
    # the stack pages the deep recursion touched go with the thread that touched them
    before = call_with_deep_stack(_deep_thread)
    with pytest.raises(RecursionError):
        call_with_deep_stack(lambda: deep(RECURSION_LIMIT * 10))
    after = call_with_deep_stack(_deep_thread)
    before.join(timeout=10)
    assert after is not before and not before.is_alive()
    assert call_with_deep_stack(lambda: deep(100)) == 100


def test_the_call_after_a_recursion_error_is_not_handed_to_the_ending_thread(monkeypatch) -> None:
    # the thread that ran out of recursion may still be alive when the next call comes: handed
    # to it, that call would never be taken (a flake8 worker hung after a KD901 file)
    import threading
    import time

    from keydrift import deepstack

    real_serve = deepstack._serve

    def serve_then_linger(calls, outcomes) -> None:
        real_serve(calls, outcomes)
        time.sleep(1)  # alive a while after its last outcome

    monkeypatch.setattr(deepstack, "_serve", serve_then_linger)
    done = []

    def calls_in_a_fresh_thread() -> None:  # (its own deep thread, made with the lingering serve)
        with pytest.raises(RecursionError):
            call_with_deep_stack(lambda: deep(RECURSION_LIMIT * 10))
        done.append(call_with_deep_stack(lambda: deep(100)))

    caller = threading.Thread(target=calls_in_a_fresh_thread, daemon=True)
    caller.start()
    caller.join(timeout=30)
    assert done == [100]


def test_calling_threads_each_have_their_own_deep_thread() -> None:
    import threading

    found = {}

    def caller(name: str) -> None:
        found[name] = (call_with_deep_stack(_deep_thread), call_with_deep_stack(lambda: deep(500)))

    callers = [threading.Thread(target=caller, args=(name,)) for name in "ab"]
    for thread in callers:
        thread.start()
    for thread in callers:
        thread.join()
    assert found["a"][1] == found["b"][1] == 500
    assert found["a"][0] is not found["b"][0]


def test_a_caller_interrupted_while_waiting_lets_the_thread_go_and_the_next_call_starts_another() -> None:
    from keydrift import deepstack

    before = call_with_deep_stack(_deep_thread)

    class Interrupted:
        """The outcomes queue of a wait a KeyboardInterrupt breaks into."""

        def put(self, outcome):
            pass

        def get(self):
            raise KeyboardInterrupt

    deepstack._state.helper.outcomes = Interrupted()
    with pytest.raises(KeyboardInterrupt):
        call_with_deep_stack(lambda: 1)
    before.join(timeout=10)
    assert not before.is_alive()
    assert call_with_deep_stack(lambda: deep(50)) == 50


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_calls_on_a_deep_thread_of_its_own() -> None:
    # the parent's deep thread does not exist in the child (a flake8 worker, a forked helper)
    import os

    call_with_deep_stack(lambda: 0)  # the parent has its thread
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            result = call_with_deep_stack(lambda: deep(RECURSION_LIMIT - 200))
            os.write(write_end, str(result).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        written = pipe.read()
    os.waitpid(pid, 0)
    assert written == str(RECURSION_LIMIT - 200).encode()
