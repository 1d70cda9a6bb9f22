// hookd's Claude Code mod: README.md beside this folder says why it is built this way.
//
// Each event it carries is posted to hookd's http API on the daemon's Unix socket
// ($HOOKD_HTTP_SOCKET, set by `hookctl claude install --transport mod`) as the settings
// hook's stdin would be, and hookd's answer (hookd/doors/mod_answer.py: `final`,
// `result`, `input`) is applied. Every other event is left to the settings hooks
// (hookd's relay). Fail-open like any failing hook, except for the events listed in
// $HOOKD_MOD_FAIL_CLOSED, which the .catch below blocks.

type Json = Record<string, any>

const CARRIED = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch"]

// What PreToolUse's envelope lacks and the other events carry: kept from the last one.
let base: Json = {}
// $HOOKD_HTTP_SOCKET, read once: the environment a session started with does not change.
let socketPath: string | undefined

function remember(e: Json): void {
  const kept: Json = {}
  for (const key of ["session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "effort"]) {
    if (e[key] !== undefined) kept[key] = e[key]
  }
  base = { ...base, ...kept }
}

function preToolUseInput(
  e: Json,
  sessionId: string,
  transcriptPath: string,
  cwd: string,
  promptId: string | undefined,
): Json {
  const { tool, tool_use_id, agentId, requestMeta, ...args } = e
  const input: Json = {
    session_id: sessionId,
    transcript_path: transcriptPath,
    cwd: cwd,
  }
  if (promptId !== undefined) input.prompt_id = promptId
  if (base.permission_mode !== undefined) input.permission_mode = base.permission_mode
  if (agentId !== undefined) input.agent_id = agentId
  if (base.effort !== undefined) input.effort = base.effort
  input.hook_event_name = "PreToolUse"
  input.tool_name = tool
  input.tool_input = args
  input.tool_use_id = tool_use_id
  return input
}

function rebuilt(e: Json, tool_input: Json): Json {
  const out: Json = { tool: e.tool, tool_use_id: e.tool_use_id }
  if (e.agentId !== undefined) out.agentId = e.agentId
  return { ...out, ...tool_input }
}

function laid(beneath: Json | undefined, answer: Json): Json {
  const result: Json = { ...(beneath || {}) }
  for (const [key, value] of Object.entries(answer.result || {}) as [string, any][]) {
    if (key === "additionalContext") {
      result.additionalContext = [...value, ...(result.additionalContext || [])]
    } else if (key === "allow") {
      if (result.deny === undefined && result.ask === undefined) result.allow = true
    } else {
      result[key] = value
    }
  }
  return result
}

async function hookd($: any, e: any, next: any): Promise<any> {
  const event = next.event.slice("classic.".length)
  if (event !== "PreToolUse") remember(e)
  if (!CARRIED.includes(event)) return next(e)
  if (socketPath === undefined) socketPath = (await $.env.get("HOOKD_HTTP_SOCKET")) || ""
  if (!socketPath) return next(e)
  let input = e
  if (event === "PreToolUse") {
    // The session's id, transcript and prompt come with every other event (SessionStart
    // and UserPromptSubmit precede any tool call); only the cwd moves with each command.
    const cwd = await $.session.cwd()
    if (base.session_id === undefined || base.transcript_path === undefined) {
      const [sessionId, info] = await Promise.all([$.session.id(), $.session.info()])
      input = preToolUseInput(e, sessionId, info.transcriptPath, cwd, info.promptId)
    } else {
      input = preToolUseInput(e, base.session_id, base.transcript_path, cwd, base.prompt_id)
    }
  }
  const reply = await $.http.fetch(`http://hookd/mod/${event}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(input),
    socketPath: socketPath,
  })
  if (!reply.ok) throw new Error(`hookd answered ${reply.status}: ${reply.text}`)
  if (!reply.text) return next(e)
  const answer = JSON.parse(reply.text)
  if (answer.final) return answer.result
  const beneath = await next(answer.input ? rebuilt(e, answer.input) : e)
  return laid(beneath, answer)
}

async function failClosed($: any, e: any, next: any): Promise<any> {
  if (next.called) return next(e)
  const event = next.event.slice("classic.".length)
  const listed = (await $.env.get("HOOKD_MOD_FAIL_CLOSED")) || ""
  if (!listed.split(",").includes(event)) return next(e)
  const why = "hookd did not answer (its mod failed closed: a hook of this event has onFailure \"block\")"
  return event === "PreToolUse" ? { deny: `PreToolUse:${e.tool} hook error: ${why}` } : { block: why }
}

export function register(on: any): void {
  on("classic.*", hookd).catch(failClosed)
}
