//! Sessions by themselves: handles, reasons, the cap, the settings (spec 017). End to end (the
//! prefix, caches, tags) in `engine::tests` and test/python/test_sessions.py.
use super::*;
use crate::error::{AclError, SessionProblem, SessionReason};

fn principal() -> Principal {
    Principal::role("analyst")
}

fn open(s: &Sessions) -> (Handle, Arc<Session>) {
    s.open(principal(), i64::MAX / 2, Some("alice".into()), "https://idp".into(), "sql", 60).unwrap()
}

fn refused(r: Result<Arc<Session>>) -> SessionReason {
    match r {
        Err(AclError::SessionRefused { reason }) => reason,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_handle_is_128_random_bits_and_names_only_its_session() {
    let s = Sessions::default();
    let (h1, s1) = open(&s);
    let (h2, s2) = open(&s);
    assert_eq!(h1.expose().len(), 32);
    assert!(h1.expose().bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    assert_ne!(h1.expose(), h2.expose());
    assert_ne!(s1.id, s2.id);
    assert_eq!(s.enter(h1.expose(), 60).unwrap().id, s1.id);
    assert_eq!(s.enter(h2.expose(), 60).unwrap().id, s2.id);
    // the handle never shows: not in Debug, not in the owner digest, not as the id
    assert_eq!(format!("{h1:?}"), "Handle(…)");
    assert!(!format!("{s1:?}").contains(h1.expose()));
    assert_ne!(s1.owner, h1.expose());
    assert_ne!(s1.owner, s2.owner);
    assert_eq!(s1.owner.len(), 32);
}

#[test]
fn forged_guessed_and_respelled_handles_are_unknown() {
    let s = Sessions::default();
    let (h, _) = open(&s);
    let text = h.expose().to_string();
    let mut flipped = text.clone().into_bytes();
    flipped[31] = if flipped[31] == b'0' { b'1' } else { b'0' };
    let upper = text.to_ascii_uppercase();
    let cases = [
        String::from_utf8(flipped).unwrap(),
        upper,
        format!(" {text}"),
        format!("{text} "),
        text[..31].to_string(),
        format!("{text}0"),
        String::new(),
        "0".repeat(32),
        s.by_id.iter().next().unwrap().key().to_string(), // the operator id is not a handle
    ];
    for c in cases {
        assert_eq!(refused(s.enter(&c, 60)), SessionReason::Unknown, "{c:?}");
        assert_eq!(s.reason(&c, 60), Some(SessionReason::Unknown));
        assert!(!s.close(&c));
    }
    assert!(s.enter(&text, 60).is_ok(), "a wrong guess ends nothing");
}

#[test]
fn close_is_idempotent_and_a_closed_handle_stays_refused() {
    let s = Sessions::default();
    let (h, _) = open(&s);
    assert_eq!(s.reason(h.expose(), 60), None);
    assert!(s.close(h.expose()));
    assert!(!s.close(h.expose()));
    assert_eq!(refused(s.enter(h.expose(), 60)), SessionReason::Closed);
    assert_eq!(s.reason(h.expose(), 60), Some(SessionReason::Closed));
    assert_eq!(s.count(60), 0);
    // a handle closed is never live again: not by a kill, a sweep or a new open
    assert!(!s.kill(s.by_id.iter().next().unwrap().value().id));
    s.sweep(60);
    let _ = open(&s);
    assert_eq!(refused(s.enter(h.expose(), 60)), SessionReason::Closed);
}

#[test]
fn kill_ends_a_session_by_its_operator_id() {
    let s = Sessions::default();
    let (h, session) = open(&s);
    let (other, _) = open(&s);
    assert!(!s.kill(session.id + 1_000_000));
    assert!(s.kill(session.id));
    assert!(!s.kill(session.id));
    assert_eq!(refused(s.enter(h.expose(), 60)), SessionReason::Killed);
    assert!(s.enter(other.expose(), 60).is_ok());
    assert_eq!(s.list(60).iter().map(|l| l.session.id).collect::<Vec<_>>().len(), 1);
    assert_eq!(s.enter_id(session.id, 60), Err(AclError::SessionEnded { reason: SessionReason::Killed }));
}

#[test]
fn idle_sessions_end_and_use_keeps_one_alive() {
    let s = Sessions::default();
    s.set("acl_session_idle_timeout", "1").unwrap();
    let (idle, idle_s) = open(&s);
    let (busy, _) = open(&s);
    // pretend time passed: the idle session was last used 2 s ago, the busy one now
    idle_s.last_used_ms.store(now_ms() - 2_000, Ordering::Relaxed);
    assert!(s.enter(busy.expose(), 60).is_ok());
    assert_eq!(s.reason(idle.expose(), 60), Some(SessionReason::Idle), "read-only, yet it reads as ended");
    assert_eq!(s.count(60), 1);
    assert_eq!(refused(s.enter(idle.expose(), 60)), SessionReason::Idle);
    // 0: never idle
    s.set("acl_session_idle_timeout", "0").unwrap();
    let (h, rec) = open(&s);
    rec.last_used_ms.store(0, Ordering::Relaxed);
    assert!(s.enter(h.expose(), 60).is_ok());
}

#[test]
fn reason_is_read_only() {
    let s = Sessions::default();
    s.set("acl_session_idle_timeout", "1").unwrap();
    let (h, rec) = open(&s);
    let before = now_ms() - 900;
    rec.last_used_ms.store(before, Ordering::Relaxed);
    assert_eq!(s.reason(h.expose(), 60), None);
    assert_eq!(rec.last_used_ms(), before, "asking for the reason is no use of the session");
    assert_eq!(rec.ended(), None);
}

#[test]
fn every_use_ends_a_session_at_its_tokens_exp_and_connect_does_not() {
    let s = Sessions::default();
    let past = now_ms() / 1000 - 120;
    let (h, _) = s.open(principal(), past, None, "i".into(), "sql", 60).unwrap();
    assert!(s.enter(h.expose(), 60).is_ok(), "connect: exp judged at open only");
    s.set("acl_session_token_binding", "EVERY_USE").unwrap();
    assert!(s.every_use());
    assert!(s.enter(h.expose(), 600).is_ok(), "within the skew");
    assert_eq!(refused(s.enter(h.expose(), 60)), SessionReason::Expired);
    s.set("acl_session_token_binding", "connect").unwrap();
    assert_eq!(refused(s.enter(h.expose(), 60)), SessionReason::Expired, "an ended session stays ended");
}

#[test]
fn the_cap_refuses_a_new_session_and_never_evicts_a_live_one() {
    let s = Sessions::default();
    s.set("acl_max_sessions", "2").unwrap();
    let (a, _) = open(&s);
    let (b, _) = open(&s);
    let e = s.open(principal(), i64::MAX / 2, None, "i".into(), "sql", 60).unwrap_err();
    assert_eq!(e, SessionProblem::AtCap { max: 2 }.into());
    assert!(s.enter(a.expose(), 60).is_ok() && s.enter(b.expose(), 60).is_ok());
    assert!(s.close(a.expose()));
    let _ = open(&s);
    // an idle one is already over: it makes room
    s.set("acl_session_idle_timeout", "1").unwrap();
    s.by_key.iter().for_each(|e| e.value().last_used_ms.store(now_ms() - 5_000, Ordering::Relaxed));
    let _ = open(&s);
    assert_eq!(refused(s.enter(b.expose(), 60)), SessionReason::Idle);
    s.set("acl_max_sessions", "0").unwrap();
    s.set("acl_session_idle_timeout", "900").unwrap();
    for _ in 0..10 {
        let _ = open(&s);
    }
    assert_eq!(s.count(60), 11);
}

#[test]
fn the_cap_holds_under_concurrent_opens() {
    let s = Arc::new(Sessions::default());
    s.set("acl_max_sessions", "50").unwrap();
    let opened: usize = (0..8)
        .map(|_| {
            let s = Arc::clone(&s);
            std::thread::spawn(move || (0..20).filter(|_| s.open(principal(), i64::MAX / 2, None, "i".into(), "sql", 60).is_ok()).count())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .sum();
    assert_eq!(opened, 50);
    assert_eq!(s.count(60), 50);
}

#[test]
fn a_close_racing_statements_ends_it_once() {
    let s = Arc::new(Sessions::default());
    let (h, _) = open(&s);
    let h = Arc::new(h.expose().to_string());
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let (s, h) = (Arc::clone(&s), Arc::clone(&h));
            std::thread::spawn(move || {
                if i == 0 {
                    return u64::from(s.close(&h));
                }
                // statements run until the close is seen, then stay refused
                while s.enter(&h, 60).is_ok() {}
                assert_eq!(refused(s.enter(&h, 60)), SessionReason::Closed);
                0
            })
        })
        .collect();
    let closed: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(closed, 1);
    assert_eq!(s.count(60), 0);
    assert_eq!(s.live.load(Ordering::Acquire), 0, "ended once, counted out once");
}

#[test]
fn sweep_ends_what_ran_out_and_forgets_long_ended_sessions() {
    let s = Sessions::default();
    s.set("acl_session_idle_timeout", "1").unwrap();
    let (a, ra) = open(&s);
    let (b, _) = open(&s);
    ra.last_used_ms.store(now_ms() - 5_000, Ordering::Relaxed);
    assert_eq!(s.sweep(60), 1);
    assert_eq!(s.sweep(60), 0);
    assert_eq!(s.reason(a.expose(), 60), Some(SessionReason::Idle));
    assert!(s.close(b.expose()));
    // ended long ago: forgotten, then unknown
    ra.ended_ms.store(now_ms() - TOMBSTONE_MS - 1, Ordering::Relaxed);
    s.sweep(60);
    assert_eq!(s.reason(a.expose(), 60), Some(SessionReason::Unknown));
    assert_eq!(s.reason(b.expose(), 60), Some(SessionReason::Closed));
}

#[test]
fn settings_are_validated() {
    let s = Sessions::default();
    for (name, bad) in [
        ("acl_session_idle_timeout", "-1"),
        ("acl_session_idle_timeout", "99999999999"),
        ("acl_session_idle_timeout", "x"),
        ("acl_max_sessions", "-5"),
        ("acl_max_sessions", "1e3"),
        ("acl_max_sessions", "99999999999"),
        ("acl_session_token_binding", "always"),
        ("acl_session_token_binding", ""),
    ] {
        assert!(matches!(s.set(name, bad), Err(AclError::Session(SessionProblem::Setting { .. }))), "{name} = {bad}");
    }
    assert_eq!(s.idle_timeout(), DEFAULT_IDLE_TIMEOUT);
    assert!(!s.every_use());
    assert_eq!(s.set("acl_session_token_binding", " Every_Use ").unwrap(), "every_use");
    assert_eq!(s.set("acl_max_sessions", "0").unwrap(), "0");
    assert!(s.set("acl_other", "1").is_err());
}

#[test]
fn a_door_label_is_short_plain_text() {
    let s = Sessions::default();
    for bad in ["", "a b", "x'y", &"d".repeat(65), "é"] {
        let e = s.open(principal(), i64::MAX / 2, None, "i".into(), bad, 60).unwrap_err();
        assert_eq!(e, SessionProblem::Door.into(), "{bad:?}");
    }
    assert_eq!(s.count(60), 0, "a refused open counts nothing");
    assert!(s.open(principal(), i64::MAX / 2, None, "i".into(), "flight:127.0.0.1", 60).is_ok());
}

#[test]
fn two_nodes_do_not_share_sessions() {
    let (a, b) = (Sessions::default(), Sessions::default());
    let (h, rec) = open(&a);
    assert_eq!(refused(b.enter(h.expose(), 60)), SessionReason::Unknown);
    assert_eq!(b.enter_id(rec.id, 60), Err(AclError::SessionEnded { reason: SessionReason::Unknown }));
    assert!(!b.kill(rec.id) && !b.close(h.expose()));
    assert!(a.enter(h.expose(), 60).is_ok());
}

#[test]
fn the_prefixed_text_quotes_the_handle() {
    assert_eq!(prefixed("ab", "SELECT 1"), "ACL SESSION 'ab' SELECT 1");
    assert_eq!(prefixed("a'b", "SELECT 1"), "ACL SESSION 'a''b' SELECT 1");
}

#[test]
fn a_door_closes_its_own_sessions() {
    let s = Sessions::default();
    let flight = |s: &Sessions| s.open(principal(), i64::MAX / 2, None, "i".into(), "flight:a", 60).unwrap();
    let (f1, _) = flight(&s);
    let (f2, _) = flight(&s);
    let (other, _) = open(&s);
    assert!(s.close(f2.expose()));
    assert_eq!(s.close_door("flight:a"), 1, "the one still live");
    assert_eq!(s.close_door("flight:a"), 0);
    assert_eq!(refused(s.enter(f1.expose(), 60)), SessionReason::Closed);
    assert!(s.enter(other.expose(), 60).is_ok());
}

fn group(name: &str, max_sessions: Option<u64>) -> (String, ResourceGroup) {
    (name.into(), ResourceGroup { max_sessions, max_result_rows: Some(10), max_stream_bytes: None })
}

fn open_in(s: &Sessions, groups: &[(String, ResourceGroup)]) -> Result<(Handle, Arc<Session>)> {
    s.open_in(principal(), i64::MAX / 2, None, "i".into(), "sql", 60, groups, (String::new(), 0))
}

/// Resource groups at open (spec 017): a session counts in each of its groups; it is admitted
/// while one of them has room (the most generous wins), refused when all are full, and an ended
/// session frees its place. The node's cap still applies.
#[test]
fn resource_groups_cap_sessions_at_open_and_the_most_generous_group_admits() {
    let s = Sessions::default();
    let small = [group("small", Some(1))];
    let (h, first) = open_in(&s, &small).unwrap();
    assert_eq!(first.groups, ["small"]);
    assert_eq!((first.max_result_rows, first.max_stream_bytes), (Some(10), None));
    let full = open_in(&s, &small).unwrap_err();
    assert!(matches!(&full, AclError::Session(SessionProblem::GroupsFull { groups }) if groups == "\"small\""), "{full:?}");
    assert_eq!(s.count(60), 1, "a refused open counts nothing");
    assert_eq!(s.in_group("small"), 1);
    // a principal also in a group with room is admitted, and counted in both
    let both = [group("small", Some(1)), group("team", Some(2))];
    let (_, second) = open_in(&s, &both).unwrap();
    assert_eq!((s.in_group("small"), s.in_group("team")), (2, 1));
    let (_, _third) = open_in(&s, &both).unwrap();
    assert!(open_in(&s, &both).is_err(), "both groups full");
    // a group without max_sessions always admits; no groups at all: only the node's cap
    assert!(open_in(&s, &[group("small", Some(1)), group("open", None)]).is_ok());
    assert!(open_in(&s, &[]).is_ok());
    // an end frees the place in every group the session held
    assert!(s.close(h.expose()));
    assert!(s.kill(second.id));
    assert_eq!((s.in_group("small"), s.in_group("team")), (2, 1));
    assert!(open_in(&s, &small).is_err(), "small still holds two (the open group's and the third's)");
    assert!(open_in(&s, &both).is_ok(), "team has room again");
    // the node's cap refuses first, and a refusal there takes no group place
    s.set("acl_max_sessions", &s.count(60).to_string()).unwrap();
    assert!(matches!(open_in(&s, &[group("fresh", None)]), Err(AclError::Session(SessionProblem::AtCap { .. }))));
    assert_eq!(s.in_group("fresh"), 0);
}

/// Concurrent opens never pass a group's `max_sessions`.
#[test]
fn a_groups_cap_holds_under_concurrent_opens() {
    let s = Arc::new(Sessions::default());
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let s = Arc::clone(&s);
            std::thread::spawn(move || (0..20).filter(|_| open_in(&s, &[group("g", Some(5))]).is_ok()).count())
        })
        .collect();
    let opened: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(opened, 5);
    assert_eq!(s.in_group("g"), 5);
}

/// The node remembers at most 10 000 ended sessions at any moment, not only after a sweep: the
/// oldest is forgotten as another ends (spec 017, "Ends").
#[test]
fn ended_sessions_are_remembered_up_to_the_bound_at_every_moment() {
    let s = Sessions::default();
    let max = super::super::session_graves::MAX as usize;
    let (first, _) = open(&s);
    assert!(s.close(first.expose()));
    let mut last = None;
    for i in 0..max + 50 {
        let (h, _) = open(&s);
        assert!(s.close(h.expose()));
        assert!(s.by_id.len() <= max, "after {i} closes: {}", s.by_id.len());
        last = Some(h);
    }
    assert_eq!(s.reason(first.expose(), 60), Some(SessionReason::Unknown), "the oldest is forgotten");
    assert_eq!(s.reason(last.unwrap().expose(), 60), Some(SessionReason::Closed));
    assert_eq!(s.by_key.len(), s.by_id.len());
}

/// Ends from many threads at once: the bound holds, and every forgotten session leaves both maps.
#[test]
fn the_bound_holds_under_concurrent_ends() {
    let s = Arc::new(Sessions::default());
    s.set("acl_max_sessions", "0").unwrap();
    let max = super::super::session_graves::MAX as usize;
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let s = Arc::clone(&s);
            std::thread::spawn(move || {
                for _ in 0..1_500 {
                    let (h, rec) = open(&s);
                    // a close, then a kill: the session ends (and is buried) once
                    let (a, b) = (s.close(h.expose()), s.kill(rec.id));
                    assert!(a ^ b);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(s.count(60), 0);
    assert!(s.by_id.len() <= max && s.by_id.len() >= max - 8, "{}", s.by_id.len());
    assert_eq!(s.by_key.len(), s.by_id.len());
}
