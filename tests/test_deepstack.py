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
