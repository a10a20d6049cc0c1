//! The access token opener: PASETO parsing, the footer's key id (JSON), decryption and the
//! claims, against a keyring with a retired and a current generation. Inputs that start
//! with `!` are first encrypted with the current key, so the claims parser behind the
//! authentication check is reached too.
#![no_main]

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use dossier::auth::access;
use dossier::auth::keys::Keyring;
use dossier::config::AuthPolicy;
use libfuzzer_sys::fuzz_target;

const NOW: u64 = 1_800_000_000;

fn keyring() -> &'static Keyring {
    static KEYS: OnceLock<Keyring> = OnceLock::new();
    KEYS.get_or_init(|| {
        let policy = AuthPolicy::default();
        Keyring::generate(NOW)
            .and_then(|keys| keys.rotate(&policy, NOW))
            .expect("keys")
    })
}

fuzz_target!(|data: &[u8]| {
    let policy = AuthPolicy::default();
    let keys = keyring();
    let token = match data.split_first() {
        Some((b'!', claims)) => {
            let Ok(claims) = serde_json::from_slice::<access::AccessClaims>(claims) else {
                return;
            };
            access::mint(&keys.current().access, &claims).expect("minting")
        }
        _ => String::from_utf8_lossy(data).into_owned(),
    };
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(NOW);
    let usable = keys.access_keys(&policy, NOW);
    if let Ok(claims) = access::verify(usable, &token, "https://x.example/", now, policy.clock_skew)
    {
        assert_eq!(claims.aud, "https://x.example/");
    }
});
