#!/bin/sh
# Config async hook that waits for a go file ($1), records its pid in $2 (if given),
# then prints context $3.
cat >/dev/null
[ -n "$2" ] && echo $$ >> "$2"
while [ ! -e "$1" ]; do sleep 0.02; done
printf '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"%s"}}\n' "$HOOK_EVENT" "${3:-GO}"
