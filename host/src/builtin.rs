//! The first-party plugins, compiled from `plugins/` by the build script and embedded here so
//! that a fresh install has them with no setup.

/// One embedded plugin.
pub struct Builtin {
    /// Its folder under `plugins/`.
    pub dir: &'static str,
    /// Its `plugin.toml`.
    pub manifest: &'static str,
    /// Its component.
    pub component: &'static [u8],
    /// The component's sha256, lowercase hex, computed by the build script.
    pub sha256: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));

/// The sha256 of `component`, lowercase hex: recorded at build time when `component` is one of
/// the embedded components itself (the same bytes at the same address, which no copy or edit
/// of them has), so that a start does not read and hash ~23 MiB; else computed.
pub fn sha256(component: &[u8]) -> String {
    BUILTIN
        .iter()
        .find(|b| std::ptr::eq(b.component, component))
        .map_or_else(
            || crate::runtime::pins::sha256(component),
            |b| b.sha256.to_owned(),
        )
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_recorded_sha256_is_the_embedded_components() {
        assert!(!super::BUILTIN.is_empty());
        for b in super::BUILTIN {
            assert_eq!(
                b.sha256,
                crate::runtime::pins::sha256(b.component),
                "{}: the build script's sha256 is not the embedded component's",
                b.dir
            );
            assert_eq!(super::sha256(b.component), b.sha256);
            // A copy, or an edited copy, is hashed: only the embedded bytes use the record.
            let mut copy = b.component.to_vec();
            assert_eq!(super::sha256(&copy), b.sha256);
            copy[8] ^= 1;
            assert_ne!(super::sha256(&copy), b.sha256);
        }
    }
}
