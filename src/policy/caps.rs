//! Capabilities: five data capabilities held by default, explicit-only ones, and presets.
use crate::error::{Invalid, Result};
use std::fmt;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Caps(u16);

impl Caps {
    pub const NONE: Caps = Caps(0);
    pub const SELECT: Caps = Caps(1 << 0);
    pub const INSERT: Caps = Caps(1 << 1);
    pub const UPDATE: Caps = Caps(1 << 2);
    pub const DELETE: Caps = Caps(1 << 3);
    pub const MERGE: Caps = Caps(1 << 4);
    pub const CREATE: Caps = Caps(1 << 5);
    pub const DROP: Caps = Caps(1 << 6);
    pub const TEMP: Caps = Caps(1 << 7);
    pub const EXPLAIN: Caps = Caps(1 << 8);
    pub const SECRETS: Caps = Caps(1 << 9);
    pub const LINEAGE: Caps = Caps(1 << 10);
    pub const MANAGE: Caps = Caps(1 << 11);
    /// What a grant that names no capability holds.
    pub const DATA: Caps = Caps(0b1_1111);

    const NAMES: [(&'static str, Caps); 12] = [
        ("select", Caps::SELECT),
        ("insert", Caps::INSERT),
        ("update", Caps::UPDATE),
        ("delete", Caps::DELETE),
        ("merge", Caps::MERGE),
        ("create", Caps::CREATE),
        ("drop", Caps::DROP),
        ("temp", Caps::TEMP),
        ("explain", Caps::EXPLAIN),
        ("secrets", Caps::SECRETS),
        ("lineage", Caps::LINEAGE),
        ("manage", Caps::MANAGE),
    ];

    pub fn contains(self, other: Caps) -> bool {
        self.0 & other.0 == other.0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn union(self, other: Caps) -> Caps {
        Caps(self.0 | other.0)
    }
    pub fn intersect(self, other: Caps) -> Caps {
        Caps(self.0 & other.0)
    }
    /// What `self` holds that `other` does not.
    pub fn minus(self, other: Caps) -> Caps {
        Caps(self.0 & !other.0)
    }
    /// Only the data capabilities: what an object grant may inherit.
    pub fn data(self) -> Caps {
        self.intersect(Caps::DATA)
    }

    /// One capability or preset name, case-insensitive.
    pub fn parse_one(word: &str) -> Result<Caps> {
        let w = word.to_ascii_lowercase();
        match w.as_str() {
            "reader" => return Ok(Caps::SELECT),
            "writer" => return Ok(Caps::DATA),
            "admin" => return Ok(Caps::DATA.union(Caps::CREATE).union(Caps::DROP).union(Caps::MANAGE)),
            _ => {}
        }
        Caps::NAMES
            .iter()
            .find(|(n, _)| *n == w)
            .map(|(_, c)| *c)
            .ok_or_else(|| Invalid::UnknownCapability { word: word.to_string() }.into())
    }

    /// The capability's name, for messages; a set prints as a comma-separated list.
    pub fn names(self) -> Vec<&'static str> {
        Caps::NAMES.iter().filter(|(_, c)| self.contains(*c)).map(|(n, _)| *n).collect()
    }
}

impl fmt::Display for Caps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(", "))
    }
}

impl fmt::Debug for Caps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Caps({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_expand() {
        assert_eq!(Caps::parse_one("reader").unwrap(), Caps::SELECT);
        assert_eq!(Caps::parse_one("WRITER").unwrap(), Caps::DATA);
        let admin = Caps::parse_one("admin").unwrap();
        assert!(admin.contains(Caps::DATA.union(Caps::MANAGE).union(Caps::CREATE).union(Caps::DROP)));
        assert!(!admin.contains(Caps::TEMP));
    }

    #[test]
    fn unknown_is_refused() {
        assert!(Caps::parse_one("selec").is_err());
    }
}
