//! A build step run as a child process: bounded in time, its output kept
//! (the last lines, for the error) and forwarded as it comes when asked.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{PluginCliError, STDERR_TAIL_LINES};

fn keep_tail(
    stream: impl Read + Send + 'static,
    tail: Arc<Mutex<VecDeque<String>>>,
    echo: bool,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if echo {
                eprintln!("{line}");
            }
            let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    })
}

/// Runs `command` (the step called `step` in errors) to its end, or kills it
/// after `limit`.
pub fn run_tool(
    command: &mut Command,
    step: &str,
    limit: Duration,
    echo: bool,
) -> Result<(), PluginCliError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| {
            PluginCliError::MissingTool(format!("{step}: could not run {program}: {error}"))
        })?;
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let readers = [
        keep_tail(
            child.stdout.take().expect("piped stdout"),
            tail.clone(),
            echo,
        ),
        keep_tail(
            child.stderr.take().expect("piped stderr"),
            tail.clone(),
            echo,
        ),
    ];
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(PluginCliError::StepFailed {
                    step: step.to_string(),
                    status: format!("stopped after {} s", limit.as_secs()),
                    output_tail: String::new(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(error) => {
                return Err(PluginCliError::MissingTool(format!(
                    "{step}: waiting for {program}: {error}"
                )));
            }
        }
    };
    for reader in readers {
        let _ = reader.join();
    }
    if status.success() {
        return Ok(());
    }
    let output_tail = tail
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    Err(PluginCliError::StepFailed {
        step: step.to_string(),
        status: status.to_string(),
        output_tail,
    })
}
