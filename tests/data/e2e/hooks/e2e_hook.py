"""A hook for the end-to-end tests: behaves as ``../behaviours.json`` says for KEY.

Usage: ``python3 -I -S e2e_hook.py KEY``.  Keys of a behaviour:

* ``when``: ``{field: value}`` checked against the hook input; if any differs
  the hook prints nothing and exits 0 (e.g. a Stop hook that blocks only
  while ``stop_hook_active`` is false, i.e. once);
* ``sleep`` (seconds), ``stdout`` (a string, or a JSON value printed compactly),
  ``stderr`` (a string), ``exit`` (default 0);
* ``touch``: a file name created in the hook's cwd (proves the hook ran);
* ``record_env``: a file name under ``$CLAUDE_PROJECT_DIR`` (else the cwd) to which
  one JSON line is appended: the event, the cwd and the environment variables
  Claude Code gives a hook (``CLAUDE_PID`` as whether it names a running
  ``claude`` process, since pids differ between runs);
* ``env_file``: text appended to ``$CLAUDE_ENV_FILE`` (which Claude Code sources
  before later Bash commands).

The same command string is used natively and through hookd, so the two runs
differ only in who runs the hook.
"""

import json
import os
import sys
import time

RECORDED = (
    "CLAUDECODE",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_SESSION_ATTENDED",
    "CLAUDE_EFFORT",
    "CLAUDE_ENV_FILE",
    "AI_AGENT",
    "COREPACK_ENABLE_AUTO_PIN",
    "NoDefaultCurrentDirectoryInExePath",
    "E2E_AGENT_VAR",
    "ANTHROPIC_API_KEY",
    "HOME",
    "PATH",
)


def _claude_pid(value: str | None) -> str | None:
    if value is None or not value.isdigit():
        return value
    try:
        with open(f"/proc/{value}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return "not-running"
    return "claude" if argv and argv[0].endswith(b"claude") else "not-claude"


def _record_env(name: str, received: dict[str, object]) -> None:
    env = os.environ
    line = {"event": received.get("hook_event_name"), "cwd": os.getcwd()}
    line.update({k: env.get(k) for k in RECORDED})
    line["CLAUDE_PID"] = _claude_pid(env.get("CLAUDE_PID"))
    base = env.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    with open(os.path.join(base, name), "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, sort_keys=True) + "\n")


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
    if behaviour.get("record_env"):
        _record_env(behaviour["record_env"], received)
    if behaviour.get("env_file"):
        with open(os.environ["CLAUDE_ENV_FILE"], "a", encoding="utf-8") as fh:
            fh.write(behaviour["env_file"])
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
