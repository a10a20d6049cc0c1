//! The identity assertion verifier. Half the inputs are taken as a whole token; the other
//! half as claims that get a valid ES256 signature first, so the fuzzer also reaches the
//! claim and time checks behind the signature (times near 2^64 included).
#![no_main]

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use dossier::auth::assertion::{self, Expectations};
use libfuzzer_sys::fuzz_target;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};

const ISSUER: &str = "https://info.example.com";

fn key() -> &'static (EcdsaKeyPair, SystemRandom) {
    static KEY: OnceLock<(EcdsaKeyPair, SystemRandom)> = OnceLock::new();
    KEY.get_or_init(|| {
        let random = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random)
            .expect("key generation");
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random)
                .expect("key");
        (pair, random)
    })
}

fuzz_target!(|data: &[u8]| {
    let (pair, random) = key();
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let token = if mode % 2 == 0 {
        String::from_utf8_lossy(rest).into_owned()
    } else {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"ES256","typ":"oauth-id-jag+jwt"}"#);
        let input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(rest));
        let Ok(signature) = pair.sign(random, input.as_bytes()) else {
            return;
        };
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    };
    for check_time in [true, false] {
        let expect = Expectations {
            issuer: ISSUER,
            now: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
            skew: Duration::from_secs(60),
            max_lifetime: Duration::from_secs(3600),
            check_time,
        };
        if let Ok(claims) = assertion::verify(&token, |_| Some(pair.public_key().as_ref()), &expect)
        {
            assert_eq!(claims.iss, ISSUER);
            // What revocation does with an accepted assertion must not panic either.
            let _ = claims.expires_at() + Duration::from_secs(60);
        }
    }
});
