#!/bin/sh
# A status line script: reads the session JSON, prints two lines (only the first counts).
input=$(cat)
model=$(printf '%s' "$input" | python3 -c 'import json,sys; print(json.load(sys.stdin)["model"]["display_name"])')
printf '\033[1m[%s]\033[0m %s  \n' "$model" "$(basename "$PWD")"
echo "second line is ignored"
