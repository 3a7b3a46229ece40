//! A lane: one std thread that owns one SQLite connection and runs jobs sent
//! to it in order. The async side sends a closure and awaits a oneshot, so a
//! blocking statement (an fsync, a busy wait) never blocks the runtime.

use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc;
use std::thread;

use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::error::{Error, Failure, Result};

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

enum Command {
    Run(Job),
    /// Finish the jobs queued before this one, close the connection, answer.
    Close(oneshot::Sender<()>),
}

pub(crate) struct Lane {
    name: &'static str,
    commands: mpsc::Sender<Command>,
}

impl Lane {
    /// Starts the thread. It ends when the last `Lane` handle is dropped or on
    /// `close`; either way it drops (closes) the connection.
    pub(crate) fn spawn(name: &'static str, conn: Connection) -> std::io::Result<Lane> {
        let (commands, receiver) = mpsc::channel::<Command>();
        thread::Builder::new()
            .name(format!("wabp-history-{name}"))
            .spawn(move || serve(name, conn, receiver))?;
        Ok(Lane { name, commands })
    }

    /// Runs `job` on the lane's thread and returns its answer. If the caller's
    /// future is dropped the job still runs to completion (a recorded action is
    /// committed even if nobody waits for the answer).
    pub(crate) async fn run<T, F>(&self, operation: &'static str, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, Failure> + Send + 'static,
    {
        let (answer, answered) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            let _ = answer.send(job(conn).map_err(|failure| failure.into_error(operation)));
        });
        self.commands
            .send(Command::Run(job))
            .map_err(|_| Error::Closed { thread: self.name })?;
        answered
            .await
            .map_err(|_| Error::Interrupted { thread: self.name })?
    }

    /// Closes the connection after the jobs already queued; later calls fail
    /// with [`Error::Closed`].
    pub(crate) async fn close(&self) -> Result<()> {
        let (done, closed) = oneshot::channel();
        if self.commands.send(Command::Close(done)).is_err() {
            return Ok(()); // already stopped
        }
        let _ = closed.await;
        Ok(())
    }
}

fn serve(name: &'static str, mut conn: Connection, receiver: mpsc::Receiver<Command>) {
    loop {
        let Ok(command) = receiver.recv() else {
            return; // every handle is gone
        };
        match command {
            Command::Run(job) => {
                // A failed statement is an `Err` answer, not a panic; this only
                // guards against a bug so that one bad job does not stop the
                // lane. Its caller gets `Error::Interrupted`.
                if panic::catch_unwind(AssertUnwindSafe(|| job(&mut conn))).is_err() {
                    tracing::error!(lane = name, "history job panicked; lane continues");
                    if !conn.is_autocommit() {
                        let _ = conn.execute_batch("ROLLBACK");
                    }
                }
            }
            Command::Close(done) => {
                // Refuse new jobs before answering, so a call made after
                // `close` returned fails with `Closed` rather than being
                // queued and dropped.
                drop(receiver);
                drop(conn);
                let _ = done.send(());
                return;
            }
        }
    }
}
