"""A hook for the end-to-end tests: behaves as ``../behaviours.json`` says for KEY.

Usage: ``python3 -I -S e2e_hook.py KEY``.  Keys of a behaviour:

* ``when``: ``{field: value}`` checked against the hook input; if any differs
  the hook prints nothing and exits 0 (e.g. a Stop hook that blocks only
  while ``stop_hook_active`` is false, i.e. once);
* ``sleep`` (seconds), ``stdout`` (a string, or a JSON value printed compactly),
  ``stderr`` (a string), ``exit`` (default 0);
* ``touch``: a file name created in the hook's cwd (proves the hook ran).

The same command string is used natively and through hookd, so the two runs
differ only in who runs the hook.
"""

import json
import os
import sys
import time


def main() -> int:
    key = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "behaviours.json"), encoding="utf-8") as fh:
        behaviour = json.load(fh)[key]
    received = json.loads(sys.stdin.buffer.read() or b"{}")
    for field, value in behaviour.get("when", {}).items():
        if received.get(field) != value:
            return 0
    if behaviour.get("sleep"):
        time.sleep(behaviour["sleep"])
    if behaviour.get("touch"):
        with open(behaviour["touch"], "w", encoding="utf-8") as fh:
            fh.write(key + "\n")
    if "stdout" in behaviour:
        value = behaviour["stdout"]
        sys.stdout.write(value if isinstance(value, str) else json.dumps(value))
        sys.stdout.flush()
    if "stderr" in behaviour:
        sys.stderr.write(behaviour["stderr"])
        sys.stderr.flush()
    return int(behaviour.get("exit", 0))


sys.exit(main())
