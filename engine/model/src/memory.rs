//! The memory bound (`--max-memory-mb`): what the engine and its browser
//! hold together, against a limit. Past it the engine takes no new tabs and
//! says it is not ready, so a balancer sends new sessions elsewhere before
//! the kernel has to kill anything.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// How long a measurement is reused: walking /proc costs a few ms.
const FRESH_FOR: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub struct MemoryBound {
    limit_bytes: u64,
    measured: Mutex<Option<(Instant, u64)>>,
}

impl MemoryBound {
    pub fn new(limit_bytes: u64) -> Self {
        MemoryBound {
            limit_bytes,
            measured: Mutex::new(None),
        }
    }

    pub fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    /// What the engine and every process under it (the browser, its
    /// renderers) hold now, measured at most once a second.
    pub fn used_bytes(&self) -> u64 {
        let mut measured = self.measured.lock();
        match *measured {
            Some((at, bytes)) if at.elapsed() < FRESH_FOR => bytes,
            _ => {
                let bytes = process_tree_bytes(std::process::id());
                *measured = Some((Instant::now(), bytes));
                bytes
            }
        }
    }

    /// Past the bound: why, in words.
    pub fn exceeded(&self) -> Option<String> {
        let used = self.used_bytes();
        (used > self.limit_bytes).then(|| {
            format!(
                "memory {} MB over the bound of {} MB",
                used >> 20,
                self.limit_bytes >> 20
            )
        })
    }
}

/// The default bound: 80% of the memory this machine (or this container's
/// cgroup, when it sets a lower limit) has.
pub fn default_limit_bytes() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(u64::MAX, |kb| kb * 1024);
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(u64::MAX);
    total.min(cgroup) / 5 * 4
}

/// Proportional set size (shared pages split among their users, so
/// Chromium's processes are not counted many times over) of `root` and its
/// descendants; resident size where PSS can't be read.
pub fn process_tree_bytes(root: u32) -> u64 {
    process_tree(root).into_iter().map(process_bytes).sum()
}

/// `root` and every process under it, now.
pub fn process_tree(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.filter_map(Result::ok) {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(parent) = parent_of(pid) {
                children.entry(parent).or_default().push(pid);
            }
        }
    }
    let mut tree = Vec::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        tree.push(pid);
        if let Some(kids) = children.get(&pid) {
            queue.extend(kids);
        }
    }
    tree
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

fn process_bytes(pid: u32) -> u64 {
    let pss = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("Pss:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
    match pss {
        Some(kb) => kb * 1024,
        None => std::fs::read_to_string(format!("/proc/{pid}/statm"))
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map_or(0, |pages| pages * 4096),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_this_process_and_its_children() {
        let alone = process_tree_bytes(std::process::id());
        assert!(alone > 1 << 20, "{alone}");
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let with_child = process_tree_bytes(std::process::id());
        assert!(process_tree(std::process::id()).contains(&child.id()));
        let _ = child.kill();
        let _ = child.wait();
        assert!(with_child > 0);
        assert_eq!(parent_of(child.id()), None, "reaped");
        assert!(default_limit_bytes() > 0);
        let tight = MemoryBound::new(1);
        assert!(tight.exceeded().unwrap().contains("over the bound"));
        assert!(MemoryBound::new(u64::MAX).exceeded().is_none());
    }
}
