#!/bin/sh
# A fileSuggestion script: prints project files whose name contains the query.
query=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["query"])')
find . -type f -name "*${query}*" | sed 's|^\./||' | sort
printf '\n'
