// Codex's way of running a command hook, in std only (crates.io is not reachable here):
// std::process::Command for `/bin/sh -c CMD`, piped stdin/stdout/stderr, the event JSON + "\n"
// written to stdin, both outputs read to EOF, the child reaped.  Stays up, so the program's
// own start-up is not counted: for each line "CMD1\tCMD2…" read on stdin it starts every
// command at once (all spawned, then all fed, then each collected — both pipes read together,
// std's `wait_with_output` — while the others run) and answers "ok <exit codes>\n" once all
// are done.
//
//   rustc -O -o spawn_rust bench/spawn_rust.rs && ./spawn_rust STDIN_FILE
use std::io::{BufRead, Write};
use std::process::{Command, Stdio};

fn main() {
    let path = std::env::args().nth(1).expect("usage: spawn_rust STDIN_FILE");
    let input = std::fs::read(path).expect("read the event file");
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line.expect("read a request");
        let children: Vec<_> = line
            .split('\t')
            .map(|cmd| {
                Command::new("/bin/sh")
                    .arg("-c")
                    .arg(cmd)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        let codes: Vec<String> = children
            .into_iter()
            .map(|mut child| {
                if let Some(mut w) = child.stdin.take() {
                    let _ = w.write_all(&input); // EPIPE: the hook did not read
                }
                child
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|child| {
                // Both pipes read to EOF together (std's read2: poll), then reaped.
                let done = child.wait_with_output().expect("wait");
                done.status.code().unwrap_or(-1).to_string()
            })
            .collect();
        writeln!(out, "ok {}", codes.join(" ")).unwrap();
        out.flush().unwrap();
    }
}
