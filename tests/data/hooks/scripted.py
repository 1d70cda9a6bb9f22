"""A scripted hook: behaves as the test vector says, and records what it was given.

Usage: ``python3 -I -S scripted.py KEY``.  The behaviour of KEY is read from the
JSON file named by ``$SCRIPTED_BEHAVIOURS`` (``{KEY: {...}}``):

* ``sleep`` (seconds, before anything else),
* ``stdout`` (a string, printed as is; or a JSON value, printed compactly),
* ``stdout_lines`` (a list; each item printed on its own line, JSON if not a string),
* ``stdout_repeat`` (``[text, count]``: text printed count times, for floods),
* ``stderr`` (a string), ``exit`` (the exit code, default 0),
* ``append_to_command``: answer PreToolUse with an ``updatedInput`` whose
  ``command`` is the received one plus this suffix (tests chained rewrites).

With ``$SCRIPTED_RECORD_DIR`` set it writes ``KEY-<pid>.json`` there first:
argv, cwd, the exact stdin bytes (latin-1 so any byte survives), the
environment and the bytes of ``$HOOK_INPUT_FILE``, so tests can count runs
and check what each hook received.
"""

import json
import os
import sys
import time


def _read_input_file() -> str | None:
    """The bytes of $HOOK_INPUT_FILE (latin-1), read now: hookd deletes it afterwards."""
    path = os.environ.get("HOOK_INPUT_FILE")
    if not path:
        return None
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("latin-1")
    except OSError as exc:
        return f"<unreadable: {exc}>"


def main() -> int:
    key = sys.argv[1] if len(sys.argv) > 1 else "default"
    data = sys.stdin.buffer.read()
    record_dir = os.environ.get("SCRIPTED_RECORD_DIR")
    if record_dir:
        record = {
            "key": key,
            "argv": sys.argv,
            "cwd": os.getcwd(),
            "stdin": data.decode("latin-1"),
            "env": dict(os.environ),
            "input_file": _read_input_file(),
            "pid": os.getpid(),
            "start": time.time(),
        }
        path = os.path.join(record_dir, f"{key}-{os.getpid()}.json")
        with open(path + ".tmp", "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        os.replace(path + ".tmp", path)
    behaviours_file = os.environ.get("SCRIPTED_BEHAVIOURS")
    behaviour = {}
    if behaviours_file:
        with open(behaviours_file, encoding="utf-8") as fh:
            behaviour = json.load(fh).get(key, {})
    if behaviour.get("sleep"):
        time.sleep(behaviour["sleep"])
    out = sys.stdout
    if "stdout" in behaviour:
        value = behaviour["stdout"]
        out.write(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    for line in behaviour.get("stdout_lines", []):
        out.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    if "stdout_repeat" in behaviour:
        text, count = behaviour["stdout_repeat"]
        for _ in range(count):
            out.write(text)
    suffix = behaviour.get("append_to_command")
    if suffix is not None:
        received = json.loads(data)
        tool_input = dict(received.get("tool_input") or {})
        tool_input["command"] = str(tool_input.get("command", "")) + suffix
        answer = {
            "hookSpecificOutput": {
                "hookEventName": received["hook_event_name"],
                "updatedInput": tool_input,
            }
        }
        out.write(json.dumps(answer))
    out.flush()
    if "stderr" in behaviour:
        sys.stderr.write(behaviour["stderr"])
        sys.stderr.flush()
    return int(behaviour.get("exit", 0))


sys.exit(main())
