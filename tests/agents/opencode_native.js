// The "native" side of tests/agents/test_opencode.py: opencode has no command hooks, so
// this hand-written plugin runs Claude Code-style command hooks the way Claude Code would,
// with no hookd in between — the baseline hookd's own plugin is compared with.
//
// Its hooks come from $OPENCODE_NATIVE_HOOKS (a JSON file): {"<opencode hook>":
// [{"matcher": regex on opencode's tool name, "hooks": [{"command": ...}]}]}, e.g.
// "tool.execute.before" with matcher "bash". Each matching hook runs through /bin/sh, one
// after another, with Claude Code's input on stdin (hook_event_name, session_id, cwd,
// tool_name as opencode names it, tool_input, prompt); its answer is read with Claude
// Code's rules: exit 2 blocks with `[<command>]: <stderr>`, a JSON deny or
// `decision: "block"` blocks with its reason, `updatedInput` rewrites the arguments,
// `additionalContext` (and a UserPromptSubmit hook's plain stdout) is context. A block
// throws, a rewrite changes the arguments in place, context joins the message or the result.

import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"

const EVENTS = {
  "tool.execute.before": "PreToolUse",
  "tool.execute.after": "PostToolUse",
  "chat.message": "UserPromptSubmit",
}

function run(command, payload, cwd) {
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", command], { cwd, env: process.env })
    const out = []
    const err = []
    child.stdout.on("data", (d) => out.push(d))
    child.stderr.on("data", (d) => err.push(d))
    child.on("close", (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }),
    )
    child.stdin.end(JSON.stringify(payload))
  })
}

async function fire(hook, fields, tool, cwd) {
  const config = JSON.parse(readFileSync(process.env.OPENCODE_NATIVE_HOOKS, "utf8"))
  const said = { context: [] }
  for (const group of config[hook] ?? []) {
    if (group.matcher && tool !== undefined && !new RegExp(`^(?:${group.matcher})$`).test(tool)) continue
    for (const handler of group.hooks) {
      const payload = { hook_event_name: EVENTS[hook], cwd, ...fields }
      const done = await run(handler.command, payload, cwd)
      if (done.code === 2) {
        said.block ??= `[${handler.command}]: ${done.stderr.trim() || "No stderr output"}`
        continue
      }
      if (done.code !== 0) continue
      const text = done.stdout.trim()
      if (!text.startsWith("{")) {
        if (text && hook === "chat.message") said.context.push(text)
        continue
      }
      const answer = JSON.parse(text)
      const specific = answer.hookSpecificOutput ?? {}
      if (specific.permissionDecision === "deny") said.block ??= specific.permissionDecisionReason ?? ""
      if (answer.decision === "block") said.block ??= answer.reason ?? ""
      if (answer.continue === false) said.block ??= answer.stopReason ?? ""
      if (specific.updatedInput) said.args = specific.updatedInput
      if (specific.additionalContext) said.context.push(specific.additionalContext)
    }
  }
  return said
}

function append(output, text) {
  if (typeof output.output === "string") output.output = output.output ? `${output.output}\n\n${text}` : text
  else if (Array.isArray(output.content)) output.content.push({ type: "text", text })
}

export const NativeHooks = async ({ directory }) => ({
  "chat.message": async (input, output) => {
    const prompt = output.parts.filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("\n")
    const said = await fire("chat.message", { session_id: input.sessionID, prompt }, undefined, directory)
    if (said.block !== undefined) throw new Error(said.block)
    const first = output.parts[0]
    if (said.context.length && first) {
      output.parts.push({
        id: `${first.id}hookd`,
        messageID: first.messageID,
        sessionID: first.sessionID,
        type: "text",
        text: said.context.join("\n"),
        synthetic: true,
      })
    }
  },
  "tool.execute.before": async (input, output) => {
    const fields = { session_id: input.sessionID, tool_name: input.tool, tool_input: output.args }
    const said = await fire("tool.execute.before", fields, input.tool, directory)
    if (said.block !== undefined) throw new Error(said.block)
    if (said.args) {
      for (const key of Object.keys(output.args)) delete output.args[key]
      Object.assign(output.args, said.args)
    }
  },
  "tool.execute.after": async (input, output) => {
    const fields = { session_id: input.sessionID, tool_name: input.tool, tool_input: input.args, tool_response: output }
    const said = await fire("tool.execute.after", fields, input.tool, directory)
    for (const text of [said.block, said.context.join("\n")]) if (text) append(output, text)
  },
})
