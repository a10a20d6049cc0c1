//! `doctor`'s DNS-AID lookup: the reader of a resolver's answer (untrusted bytes from the
//! network), and the query builder for any host name a URL can carry.
#![no_main]

use dossier::doctor::dns::{answer, query, Lookup};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((id, message)) = data.split_first_chunk::<2>() else {
        return;
    };
    let id = u16::from_be_bytes(*id);
    if let Ok(Lookup::Records(_) | Lookup::NoSuchName) = answer(message, id) {
        assert!(message.len() >= 12);
        assert_eq!(&message[..2], &id.to_be_bytes());
    }
    let name = String::from_utf8_lossy(message);
    let built = query(id, &name);
    // A question our own reader accepts as a message for this id (it is not a response).
    assert!(answer(&built, id).is_err());
    assert!(built.len() >= 17);
});
