#!/bin/sh
# Config async hook: finish later and hand back context (delivered at the next request).
# $1: the context text; $2: seconds to sleep first.
cat >/dev/null
sleep "${2:-0}"
printf '{"systemMessage":"SYS-%s","hookSpecificOutput":{"hookEventName":"%s","additionalContext":"%s"}}\n' "$1" "$HOOK_EVENT" "$1"
