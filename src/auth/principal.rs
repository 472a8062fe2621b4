//! The principal a statement runs as: `auth` makes one of a token, `Principal::role` one of a
//! role name, and `authz` judges what it may do.
/// Who a statement runs as, after the prefix was verified. Serialised (JSON) where a rewrite must
/// name it to something DuckDB calls back later: a metadata listing, a view's guard.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Principal {
    /// Lower-case role names.
    pub roles: Vec<String>,
    /// How refusals name the principal, e.g. `role "analyst"`.
    pub label: String,
    /// Claims from the token (`CLAIM MAP`); each replaces the roles' default of that name, and
    /// `None` (the token holds the claim in a form that is no text: null, an array, an object)
    /// replaces it with NULL, so a claim the token supplies never falls back to the default.
    pub claims: std::collections::BTreeMap<String, Option<String>>,
}

impl Principal {
    /// This principal as a JSON text (`from_json` reads it back).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A principal `to_json` wrote; `None` for anything else.
    pub fn from_json(text: &str) -> Option<Principal> {
        serde_json::from_str(text).ok()
    }

    pub fn role(name: &str) -> Principal {
        Principal {
            roles: vec![crate::policy::norm(name)],
            label: format!("role \"{name}\""),
            claims: Default::default(),
        }
    }
}
