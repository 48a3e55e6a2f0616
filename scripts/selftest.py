"""The self-tests of the tree-checking scripts (check-layers.py, check-architecture.py): a
planted case's verdict in cmocka's words, which scripts/run-tests.sh counts."""
import tempfile


def captured(run, *args, **kwargs):
    """Calls run(*args, out=<file>, **kwargs); returns its exit code and what it wrote."""
    with tempfile.TemporaryFile("w+") as out:
        rc = run(*args, out=out, **kwargs)
        out.seek(0)
        return rc, out.read()


class Tally:
    """Counts verdicts, printing each as cmocka does."""

    def __init__(self):
        self.passed = self.failed = 0

    def verdict(self, name, ok, detail=""):
        """Prints the verdict of test `name` (and `detail` when it failed) and counts it."""
        print(f"[ {'     OK' if ok else ' FAILED'} ] {name}")
        if not ok and detail:
            print(detail)
        self.passed, self.failed = self.passed + bool(ok), self.failed + (not ok)

    def case(self, name, rc, text, want_rc, want_text):
        """The verdict of a planted case: exit code want_rc, and want_text in its output."""
        ok = rc == want_rc and (want_text is None or want_text in text)
        self.verdict(name, ok, f"exit {rc}, wanted {want_rc}; output:\n{text}")

    def done(self):
        """Prints the counts; returns the exit code (1 when a test failed)."""
        print(f"[  PASSED  ] {self.passed} test(s).")
        if self.failed:
            print(f"[  FAILED  ] {self.failed} test(s), listed above.")
        return 1 if self.failed else 0
