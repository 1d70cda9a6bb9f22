// Claude Code's way of running a command hook: spawn(cmd, {shell: true}), JSON + "\n" on
// stdin, then end(); wait for exit with stdout collected.  Prints one JSON line of
// per-call latencies in seconds.  Run by node or bun:
//   node bench/spawn_node.js COMMAND RUNS BUDGET_S STDIN_FILE
const { spawn } = require("child_process");
const fs = require("fs");
const [cmd, runs, budget, stdinFile] = process.argv.slice(2);
const input = fs.readFileSync(stdinFile);
const samples = [];
const deadline = process.hrtime.bigint() + BigInt(Math.round(Number(budget) * 1e9));

function once() {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(cmd, [], { shell: true, stdio: ["pipe", "pipe", "pipe"] });
    const out = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", () => {});
    child.on("error", reject);
    child.on("close", () => resolve(Number(process.hrtime.bigint() - start) / 1e9));
    child.stdin.write(input);
    child.stdin.end();
  });
}

(async () => {
  for (let i = 0; i < 10; i++) await once();
  for (let i = 0; i < Number(runs); i++) {
    samples.push(await once());
    if (process.hrtime.bigint() > deadline) break;
  }
  process.stdout.write(JSON.stringify(samples) + "\n");
})();
