//! The engine's side of its connections to the browser: chromiumoxide's
//! CDP socket and the navigator's own. Used by the browser launcher and the
//! navigator alike, so neither needs the other.

/// Turns Nagle's algorithm off on this process's connections to the
/// browser's DevTools endpoint `ws_url`. With it on, a command written while
/// the one before is unacknowledged waits in the kernel until the browser's
/// answer carries the acknowledgement: commands the engine sends together
/// (a freeze's clock order and animation rate, then its script swap) reached
/// the browser one renderer round trip apart, 2-5 ms per action.
/// chromiumoxide opens its socket and keeps it to itself, so it is found
/// among the process's descriptors by its peer address. Returns how many
/// sockets were changed.
pub fn send_commands_unbatched(ws_url: &str) -> usize {
    // Addresses only, no name lookup (it would block): the endpoint of a
    // launched browser is an IP literal; `localhost` is either loopback.
    let Some((host, port)) = url::Url::parse(ws_url)
        .ok()
        .and_then(|u| Some((u.host()?.to_owned(), u.port_or_known_default()?)))
    else {
        return 0;
    };
    let peer: Vec<std::net::SocketAddr> = match host {
        url::Host::Ipv4(ip) => vec![(ip, port).into()],
        url::Host::Ipv6(ip) => vec![(ip, port).into()],
        url::Host::Domain(name) if name.eq_ignore_ascii_case("localhost") => vec![
            (std::net::Ipv4Addr::LOCALHOST, port).into(),
            (std::net::Ipv6Addr::LOCALHOST, port).into(),
        ],
        url::Host::Domain(_) => return 0,
    };
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return 0;
    };
    let mut changed = 0;
    for entry in entries.flatten() {
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<std::os::fd::RawFd>().ok())
        else {
            continue;
        };
        let is_socket = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"));
        if !is_socket {
            continue;
        }
        // SAFETY: the descriptor was listed open just now and is borrowed
        // for two system calls only, while the sockets it may be (the
        // browser's connections) stay open with the browser handle.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let socket = socket2::SockRef::from(&fd);
        let connected_to_browser = socket
            .peer_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .is_some_and(|a| peer.contains(&a));
        if connected_to_browser && socket.set_tcp_nodelay(true).is_ok() {
            changed += 1;
        }
    }
    tracing::debug!("TCP_NODELAY on {changed} connection(s) to the browser");
    changed
}

#[cfg(test)]
mod tests {
    #[test]
    fn connections_to_the_browser_send_at_once_and_others_are_left_alone() {
        let browser = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let to_browser = std::net::TcpStream::connect(browser.local_addr().unwrap()).unwrap();
        let to_other = std::net::TcpStream::connect(other.local_addr().unwrap()).unwrap();
        assert!(!to_browser.nodelay().unwrap() && !to_other.nodelay().unwrap());
        let port = browser.local_addr().unwrap().port();
        let changed =
            super::send_commands_unbatched(&format!("ws://127.0.0.1:{port}/devtools/browser/x"));
        assert!(changed >= 1, "{changed}");
        assert!(to_browser.nodelay().unwrap());
        assert!(!to_other.nodelay().unwrap());
        // No name is looked up, and nothing else is touched.
        assert_eq!(
            super::send_commands_unbatched("ws://browser.example:9222/x"),
            0
        );
        assert_eq!(super::send_commands_unbatched("not a url"), 0);
    }
}
