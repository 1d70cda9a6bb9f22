"""Handler kinds: each module turns an Invocation into a HandlerResult."""
