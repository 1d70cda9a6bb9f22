// hookd's opencode plugin: README.md beside its template (hookd/doors/opencode_plugin) says
// why it is built this way. `hookctl agents install opencode` wrote this file; `hookctl
// agents uninstall opencode` takes it away again. Edit hookd's config, not this file.
//
// opencode has no command hooks: its hooks are functions of in-process plugins. This one
// runs hookd's relay (`hookd-relay --agent opencode <hook>`, the command line below, per
// hook) with the hook's input and output as JSON on stdin, and applies the answer the
// relay prints (hookd/agents/opencode.py encodes it): {"block": reason} throws (the tool
// call, or the prompt, does not go ahead), {"args": {...}} rewrites the tool's arguments,
// {"context": text} reaches the model (a part of the user's message; appended to the
// tool's result). The relay fails open when the daemon does not answer, or exits 2 with
// the reason on stderr where a hook of the event has onFailure "block" (a block here).

import { spawn } from "node:child_process"

const COMMANDS = {} // hookd:commands

function relay(hook, payload, cwd) {
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", COMMANDS[hook]], { cwd, env: process.env })
    const out = []
    const err = []
    child.stdout.on("data", (d) => out.push(d))
    child.stderr.on("data", (d) => err.push(d))
    child.on("error", (e) => resolve({ code: -1, stdout: "", stderr: String(e) }))
    child.on("close", (code) => {
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() })
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(payload))
  })
}

async function answer(hook, payload, cwd) {
  if (!COMMANDS[hook]) return {}
  const done = await relay(hook, payload, cwd)
  if (done.code === 2) return { block: done.stderr.trim() || "hookd: blocked" }
  // Failing open (hookd not running, …): the relay says why on stderr; say it on ours.
  if (done.stderr.trim()) console.error(`hookd: ${done.stderr.trim()}`)
  const text = done.stdout.trim()
  if (done.code !== 0 || !text) return {}
  try {
    return JSON.parse(text)
  } catch (e) {
    console.error(`hookd: the relay's answer is not JSON: ${text.slice(0, 200)}`)
    return {}
  }
}

function append(output, text) {
  if (typeof output.output === "string") output.output = output.output ? `${output.output}\n\n${text}` : text
  else if (Array.isArray(output.content)) output.content.push({ type: "text", text })
}

export const HookdPlugin = async ({ directory, worktree }) => {
  // The MCP servers' names, from the merged config: they say where a tool's name
  // (`<server>_<tool>`) splits, so hookd names it `mcp__<server>__<tool>` exactly.
  let servers = []
  const base = (input) => ({ directory, worktree, mcp_servers: servers, input })
  return {
    config: async (cfg) => {
      servers = Object.keys(cfg?.mcp ?? {})
    },
    "chat.message": async (input, output) => {
      const said = await answer("chat.message", { ...base(input), output }, directory)
      if (said.block !== undefined) throw new Error(said.block)
      const first = output.parts[0]
      if (said.context && first) {
        output.parts.push({
          id: `${first.id}hookd`,
          messageID: first.messageID,
          sessionID: first.sessionID,
          type: "text",
          text: said.context,
          synthetic: true,
        })
      }
    },
    "tool.execute.before": async (input, output) => {
      const said = await answer("tool.execute.before", { ...base(input), output }, directory)
      if (said.block !== undefined) throw new Error(said.block)
      if (said.args) {
        // opencode runs the tool with this very object: rewrite it in place.
        for (const key of Object.keys(output.args)) delete output.args[key]
        Object.assign(output.args, said.args)
      }
    },
    "tool.execute.after": async (input, output) => {
      const said = await answer("tool.execute.after", { ...base(input), output }, directory)
      for (const text of [said.block, said.context]) if (text) append(output, text)
    },
  }
}
