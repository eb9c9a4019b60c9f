"""Progress of long Python-side work (Suite.evaluate): tqdm's bar when tqdm is installed, otherwise
one plain line on stderr rewritten in place ("evaluate my-gru: 3/12 rows"), ended by a newline."""
import sys


class Progress:
    """progress(done, total) updates the display; close() ends it. `enabled` None: on when stderr
    is a terminal."""

    def __init__(self, desc, unit, enabled=None, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else bool(enabled)
        self.desc, self.unit, self.bar, self.done = desc, unit, None, 0
        if self.enabled:
            try:
                from tqdm import tqdm
                self.bar = tqdm(desc=desc, unit=unit, file=self.stream, leave=True)
            except ImportError:
                self.bar = None

    def __call__(self, done, total):
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.total = total
            self.bar.update(done - self.done)
        else:
            self.stream.write(f"\r{self.desc}: {done}/{total} {self.unit}")
            self.stream.flush()
        self.done = done

    def close(self):
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.close()
        elif self.done:
            self.stream.write("\n")
            self.stream.flush()
