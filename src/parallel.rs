//! The compile pipeline's parallel steps (reading pages, rendering pages and their JSON
//! documents, compressing artifacts): an order-preserving map over all cores ([`map`]), and
//! one with more threads for reading files ([`map_reading`]). A site may have tens of
//! thousands of pages, and the machine has few cores; plain scoped threads are enough.
//!
//! Reading files ([`map_reading`]) uses more threads than cores, so that while one waits
//! for the disk the cores still parse, and each thread tells the file system which items it
//! will read next (its `announce` hook), so that reads it would otherwise wait for one at a
//! time are queued together. With every one of 100,000 page files out of the page cache (as
//! after a reboot), reading the content took 2.1–2.2 s on eight threads, and 0.92–1.0 s
//! with the reads announced ahead (32 or 128 at a time); with every file cached it takes
//! 0.57–0.66 s either way. More threads alone helped less: 1.5 s with 32, 1.3–1.6 s with
//! 128. (Handing out work in small batches instead of one share per thread was tried:
//! starts became 0.6 s slower at 100,000 pages, with more memory resident.)

/// Threads per core for [`map_reading`].
const READING_THREADS_PER_CORE: usize = 4;

/// How many of its next items a [`map_reading`] thread announces at once: enough for the
/// disk to have work queued while the thread parses, few enough that what is announced is
/// still in the page cache when it is read. A thread announces the next batch when half of
/// the last is left, so between half and one and a half batches are announced and not yet
/// mapped: the disk never runs out of work while the thread catches up.
const READ_AHEAD: usize = 128;

/// Applies `f` to every item on up to `available_parallelism` threads, keeping the order.
/// Small inputs run on the calling thread. A panic in `f` is re-raised, never swallowed.
pub(crate) fn map<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    map_on(cores(), items, f)
}

/// [`map`] for work that waits on the file system: several threads per core, and each calls
/// `announce` with the next items of its share ([`READ_AHEAD`] at a time) before it maps
/// them, for the caller to ask the file system to fetch them meanwhile.
pub(crate) fn map_reading<T, R, F, A>(items: Vec<T>, announce: A, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
    A: Fn(&[T]) + Sync,
{
    let threads = cores() * READING_THREADS_PER_CORE;
    map_shares(threads, items, |share| map_announcing(share, &announce, &f))
}

/// One thread's share of [`map_reading`].
fn map_announcing<T, R>(share: Vec<T>, announce: impl Fn(&[T]), f: impl Fn(T) -> R) -> Vec<R> {
    let mut rest = share.into_iter();
    let mut mapped = Vec::with_capacity(rest.len());
    // How many of the items left in `rest` were announced already.
    let mut announced = 0;
    loop {
        if announced < READ_AHEAD / 2 {
            let left = rest.as_slice();
            let upto = (announced + READ_AHEAD).min(left.len());
            if upto > announced {
                announce(&left[announced..upto]);
                announced = upto;
            }
        }
        let Some(item) = rest.next() else { break };
        announced = announced.saturating_sub(1);
        mapped.push(f(item));
    }
    mapped
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn map_on<T, R, F>(threads: usize, items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    map_shares(threads, items, |share| share.into_iter().map(&f).collect())
}

/// Splits `items` into one share per thread (up to `threads`), maps each share with
/// `map_share` on a thread of its own and joins the results in order. Small inputs run on
/// the calling thread.
fn map_shares<T, R, M>(threads: usize, items: Vec<T>, map_share: M) -> Vec<R>
where
    T: Send,
    R: Send,
    M: Fn(Vec<T>) -> Vec<R> + Sync,
{
    if threads < 2 || items.len() < 64 {
        return map_share(items);
    }
    let chunk = items.len().div_ceil(threads);
    let mut chunks: Vec<Vec<T>> = Vec::with_capacity(threads);
    let mut rest = items;
    while !rest.is_empty() {
        let tail = rest.split_off(chunk.min(rest.len()));
        chunks.push(std::mem::replace(&mut rest, tail));
    }
    let map_share = &map_share;
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| scope.spawn(move || map_share(chunk)))
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order() {
        let items: Vec<u32> = (0..1000).collect();
        let doubled: Vec<u32> = items.iter().map(|n| n * 2).collect();
        assert_eq!(super::map(items.clone(), |n| n * 2), doubled);
        assert_eq!(
            super::map_reading(items.clone(), |_| {}, |n| n * 2),
            doubled
        );
        for threads in [2, 3, 7, 64] {
            assert_eq!(super::map_on(threads, items.clone(), |n| n * 2), doubled);
        }
        assert_eq!(super::map(vec![1, 2, 3], |n| n + 1), vec![2, 3, 4]);
        assert!(super::map(Vec::<u8>::new(), |n| n).is_empty());
    }

    #[test]
    fn reading_announces_each_item_once_before_mapping_it() {
        use std::sync::Mutex;

        let items: Vec<u32> = (0..5000).collect();
        let announced = Mutex::new(vec![0u32; items.len()]);
        let mapped = super::map_reading(
            items.clone(),
            |next| {
                let mut announced = announced.lock().unwrap();
                for &n in next {
                    announced[n as usize] += 1;
                }
            },
            |n| {
                assert_eq!(
                    announced.lock().unwrap()[n as usize],
                    1,
                    "item {n} mapped unannounced"
                );
                n * 2
            },
        );
        assert_eq!(mapped, items.iter().map(|n| n * 2).collect::<Vec<_>>());
        assert!(announced
            .into_inner()
            .unwrap()
            .iter()
            .all(|&times| times == 1));
    }

    /// Announcing is ahead of mapping: when an item is mapped, about half a batch after it
    /// is announced already (so the disk has work queued), never more than one and a half
    /// batches, and in batches, not one call per item.
    #[test]
    fn a_share_is_announced_ahead_in_batches() {
        use super::READ_AHEAD;
        use std::cell::Cell;

        let share: Vec<usize> = (0..1000).collect();
        let (announced_upto, calls) = (Cell::new(0), Cell::new(0));
        let mapped = super::map_announcing(
            share,
            |next: &[usize]| {
                assert_eq!(
                    next.first(),
                    Some(&announced_upto.get()),
                    "announced out of order"
                );
                announced_upto.set(next[next.len() - 1] + 1);
                calls.set(calls.get() + 1);
            },
            |n| {
                let ahead = announced_upto.get() - (n + 1);
                let left = 1000 - (n + 1);
                assert!(
                    ahead >= (READ_AHEAD / 2 - 1).min(left),
                    "item {n}: only {ahead} announced ahead"
                );
                assert!(
                    ahead <= READ_AHEAD * 3 / 2,
                    "item {n}: {ahead} announced ahead"
                );
                n
            },
        );
        assert_eq!(mapped.len(), 1000);
        assert!(
            calls.get() <= 1000 / (READ_AHEAD / 2) + 1,
            "{} calls",
            calls.get()
        );
    }

    #[test]
    fn a_panic_is_raised_again() {
        let items: Vec<u32> = (0..1000).collect();
        let raised = std::panic::catch_unwind(|| {
            super::map_on(4, items, |n| if n == 777 { panic!("item 777") } else { n })
        });
        let payload = raised.expect_err("the panic was swallowed");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"item 777"));
    }
}
