// Claude Code's way of running a command hook: spawn(cmd, {shell: true}), JSON + "\n" on
// stdin, then end(); wait for exit with stdout collected.  Run by node or bun.
//
//   node bench/spawn_node.js COMMAND RUNS BUDGET_S STDIN_FILE
//     one hook after another; prints one JSON line of per-call latencies in seconds.
//   node bench/spawn_node.js --serve STDIN_FILE
//     stays up (so node's own start-up is not counted) and, for each line "CMD1\tCMD2…"
//     read on stdin, spawns every command at once, as the agents start an event's hooks
//     (Promise.all), and answers "ok <exit codes>\n" once all have closed.
const { spawn } = require("child_process");
const fs = require("fs");
const readline = require("readline");

function once(cmd, input) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(cmd, [], { shell: true, stdio: ["pipe", "pipe", "pipe"] });
    const out = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", () => {});
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ seconds: Number(process.hrtime.bigint() - start) / 1e9, code }),
    );
    child.stdin.on("error", () => {}); // a hook that exits without reading: EPIPE
    child.stdin.write(input);
    child.stdin.end();
  });
}

async function timed(cmd, runs, budget, input) {
  const samples = [];
  const deadline = process.hrtime.bigint() + BigInt(Math.round(Number(budget) * 1e9));
  for (let i = 0; i < 10; i++) await once(cmd, input);
  for (let i = 0; i < Number(runs); i++) {
    samples.push((await once(cmd, input)).seconds);
    if (process.hrtime.bigint() > deadline) break;
  }
  process.stdout.write(JSON.stringify(samples) + "\n");
}

function serve(input) {
  const lines = readline.createInterface({ input: process.stdin });
  lines.on("line", async (line) => {
    const results = await Promise.all(line.split("\t").map((cmd) => once(cmd, input)));
    process.stdout.write("ok " + results.map((r) => r.code).join(" ") + "\n");
  });
}

if (process.argv[2] === "--serve") {
  serve(fs.readFileSync(process.argv[3]));
} else {
  const [cmd, runs, budget, stdinFile] = process.argv.slice(2);
  timed(cmd, runs, budget, fs.readFileSync(stdinFile));
}
